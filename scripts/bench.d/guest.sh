#!/bin/sh
# Guest side of scripts/bench (busybox sh; also runs on a sched_ext host with
# scripts/bench --native). Runs the seeds' experiments against one
# scx_loehle process and leaves raw outputs in $BENCH_OUT; the host turns
# them into results.json, report.md and plots (scripts/bench.d/report.py).
#
# Environment (scripts/bench sets it):
#   BENCH_OUT     where the raw outputs go (default /out)
#   BENCH_SCHED   the scheduler binary (default <repo>/build/scx_loehle)
#   BENCH_QUICK   1: one repetition at small sizes
#   BENCH_SMOKE   1 (with BENCH_QUICK): smaller still, no warm-up runs
#   BENCH_REPS    repetitions per configuration (default 5; 1 when quick)
#   BENCH_ONLY    experiments to run, comma-separated: fork, schedidle,
#                 latency, smt, overhead, foreground, wakeup, scope
#   BENCH_FORK_SIZES  the fork experiment's "N,M ..." pairs
#   BENCH_FLOOR   the floor's loader (default: loehle-floor beside the
#                 scheduler binary)
#
# Layout of $BENCH_OUT:
#   meta/            uname, versions, topology, settings of this run
#   runs.tsv         one line per run: exp rep config params warmup status dir
#   runs/<exp>/<n>/  one run: run.env, stdout, stderr, outputs of the
#                    benchmark, ctl-set.txt, stats-before.json, stats-after.json
#   sched/           the scheduler's logs, one per start
#   errors           one line per failure (the host fails when it is non-empty)
#   done             written last: the guest script reached its end
#
# Configurations: "kernel" is the kernel's own scheduler (scx_loehle stopped);
# "floor" is tests/bench/floor.bpf.c (loehle-floor), the least a sched_ext
# scheduler does; every other configuration is a `ctl set` on the running
# scheduler, i.e. a new generation whose counters belong to that run alone.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${BENCH_OUT:-/out}
SCHED=${BENCH_SCHED:-$ROOT/build/scx_loehle}
QUICK=${BENCH_QUICK:-0}
SMOKE=${BENCH_SMOKE:-0}
if [ "$QUICK" = 1 ]; then REPS=${BENCH_REPS:-1}; else REPS=${BENCH_REPS:-5}; fi
ONLY=${BENCH_ONLY:-}
STATE=${BENCH_STATE:-/sys/kernel/sched_ext/state}  # overridable for tests with a mock
SOCK=/run/scx_loehle.sock
TMPD=${TMPDIR:-/tmp}/loehle-bench.$$
NCPUS=$(grep -c '^processor' /proc/cpuinfo)
CG=${BENCH_CGROUP:-/sys/fs/cgroup}

mkdir -p "$OUT/meta" "$OUT/runs" "$OUT/sched" "$TMPD" /run 2>/dev/null
: >"$OUT/errors"
: >"$OUT/runs.tsv"
rm -f "$OUT/done"

log() { echo "bench: $*" >&2; }
err() { echo "$*" >>"$OUT/errors"; log "error: $*"; }
uptime_s() { read -r _u _rest </proc/uptime; echo "$_u"; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# ---- the scheduler ---------------------------------------------------------------
SCHED_PID=
SCHED_STARTS=0
LATFILE=$TMPD/idle-latency
# Equal exit latencies everywhere: the seed-000 ties are what is measured.
echo '* 0=0 1=10 2=100' >"$LATFILE"

# shellcheck source=tests/vm/lib/guest.sh
. "$ROOT/tests/vm/lib/guest.sh"

sched_alive() { pid_alive "$SCHED_PID"; }

ATTACH_FAILS=0
sched_start() {
	sched_alive && [ "$(cat "$STATE" 2>/dev/null)" = enabled ] && return 0
	# Twice unable to attach: say so once and stop trying (every later scx
	# run is recorded as not-run).
	[ "$ATTACH_FAILS" -ge 2 ] && return 1
	ATTACH_FAILS=$((ATTACH_FAILS + 1))
	[ -e "$STATE" ] || { err "no $STATE: this kernel has no sched_ext"; return 1; }
	[ -x "$SCHED" ] || { err "$SCHED is missing or not executable"; return 1; }
	wait_state disabled 10 || { err "sched_ext state is '$(cat "$STATE")' before starting scx_loehle"; return 1; }
	SCHED_STARTS=$((SCHED_STARTS + 1))
	# No --stats (periodic summaries are off by default); no events.
	if ! launch_ready 60 "$OUT/sched/sched-$SCHED_STARTS.log" "$SCHED ctl get" -- \
		"$SCHED" --sample-every 0 --idle-latency-file "$LATFILE"; then
		err "scx_loehle did not attach: $LAUNCH_ERROR"
		return 1
	fi
	SCHED_PID=$LAUNCHED_PID
	ATTACH_FAILS=0
	log "scx_loehle attached (start $SCHED_STARTS)"
}

sched_stop() {
	# The floor running instead: nothing of ours to stop.
	! sched_alive && floor_alive && return 0
	if sched_alive; then
		stop_launched "$SCHED_PID"
		_rc=$?
		[ "$_rc" -eq 0 ] || err "scx_loehle exited with status $_rc after SIGINT ($(tail -n 3 "$OUT/sched/sched-$SCHED_STARTS.log" | tr '\n' ' '))"
	fi
	SCHED_PID=
	wait_state disabled 10 || { err "sched_ext state stays '$(cat "$STATE")' after stopping scx_loehle"; return 1; }
}

# ---- the floor: tests/bench/floor.bpf.c, the least a sched_ext scheduler does ----
FLOOR=${BENCH_FLOOR:-$(dirname "$SCHED")/loehle-floor}
FLOOR_PID=
FLOOR_STATS=$TMPD/floor-stats.json
floor_alive() { pid_alive "$FLOOR_PID"; }

FLOOR_SPEC=
floor_start() { # SPEC: floor, or floor-nostats (no BPF run-time statistics)
	local _args
	if floor_alive && [ "$(cat "$STATE" 2>/dev/null)" = enabled ]; then
		[ "$FLOOR_SPEC" = "$1" ] && return 0
		floor_stop || return 1
	fi
	_args=
	[ "$1" = floor-nostats ] && _args=--run-time-stats=off
	[ -x "$FLOOR" ] || { err "$FLOOR is missing or not executable"; return 1; }
	wait_state disabled 10 || { err "sched_ext state is '$(cat "$STATE")' before starting the floor"; return 1; }
	SCHED_STARTS=$((SCHED_STARTS + 1))
	# shellcheck disable=SC2086
	if ! launch_ready 60 "$OUT/sched/floor-$SCHED_STARTS.log" true -- \
		"$FLOOR" --stats-file "$FLOOR_STATS" $_args; then
		err "the floor did not attach: $LAUNCH_ERROR"
		return 1
	fi
	FLOOR_PID=$LAUNCHED_PID FLOOR_SPEC=$1
	log "floor attached (start $SCHED_STARTS)"
}

floor_stop() {
	[ -n "$FLOOR_PID" ] || return 0
	if floor_alive; then
		stop_launched "$FLOOR_PID" || err "the floor exited with status $? ($(tail -n 2 "$OUT/sched/floor-$SCHED_STARTS.log" | tr '\n' ' '))"
	fi
	FLOOR_PID=
	wait_state disabled 10 || { err "sched_ext state stays '$(cat "$STATE")' after stopping the floor"; return 1; }
}

# The floor's BPF run-time statistics, in the shape of `ctl stats --json`.
floor_stats_save() { # FILE
	local _n
	rm -f "$FLOOR_STATS"
	kill -USR1 "$FLOOR_PID" 2>/dev/null
	_n=50
	while [ ! -s "$FLOOR_STATS" ]; do
		[ "$_n" -le 0 ] && { err "the floor wrote no statistics within 5 s"; return 1; }
		_n=$((_n - 1))
		sleep 0.1
	done
	cp "$FLOOR_STATS" "$1"
}

# Apply a configuration: "kernel" stops every scheduler; "floor" runs the
# floor alone; anything else is "policy/sched-idle/smt[/scope][/sampled]"
# and becomes a new generation of scx_loehle (scope: --sched-idle-scope,
# hierarchy when not given; "sampled": every pick an event, and a
# `top --interval=1` client for the run). Writes ctl-set.txt.
apply_config() { # SPEC DIR
	local _p _r _si _smt _every _scope
	if [ "$1" = kernel ]; then
		sched_stop && floor_stop
		return
	fi
	case $1 in
	floor | floor-nostats)
		sched_stop && floor_start "$1"
		return ;;
	esac
	floor_stop || return 1
	sched_start || return 1
	_p=${1%%/*} _r=${1#*/}
	_si=${_r%%/*} _smt=${_r#*/}
	_every=0 _scope=hierarchy
	case $_smt in */sampled) _smt=${_smt%/sampled} _every=1 ;; esac
	case $_smt in */*) _scope=${_smt#*/} _smt=${_smt%%/*} ;; esac
	"$SCHED" ctl set --policy="$_p" --sched-idle="$_si" --smt="$_smt" --sched-idle-scope="$_scope" \
		--sample-every="$_every" >"$2/ctl-set.txt" 2>&1 ||
		{ err "ctl set $1 failed: $(cat "$2/ctl-set.txt")"; return 1; }
}

# CPU time of every thread of the daemon so far, in ns (schedstat's first field).
daemon_ns() {
	cat /proc/"$SCHED_PID"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR) printf "%.0f", s }'
}

stats_save() { # FILE
	floor_alive && { floor_stats_save "$1"; return; }
	"$SCHED" ctl stats --json >"$1" 2>"$1.err" || { err "ctl stats --json failed: $(cat "$1.err")"; return 1; }
	rm -f "$1.err"
}

# ---- runs -------------------------------------------------------------------------
RUN_N=0
# run EXP REP LABEL SPEC PARAMS WARMUP WORKLOAD [ARGS...]
# WORKLOAD is a shell function called with DIR followed by ARGS; it writes its
# outputs into DIR and returns non-zero when the benchmark failed.
run() {
	local _exp _rep _label _spec _params _warm _wl _dir _status _t0 _t1 _top _d0 _d1 _w0 _s0
	_exp=$1 _rep=$2 _label=$3 _spec=$4 _params=$5 _warm=$6 _wl=$7
	shift 7
	RUN_N=$((RUN_N + 1))
	_dir=$OUT/runs/$_exp/$(printf '%04d' "$RUN_N")
	mkdir -p "$_dir"
	{
		echo "exp=$_exp"
		echo "rep=$_rep"
		echo "config=$_label"
		echo "spec=$_spec"
		echo "params=$_params"
		echo "warmup=$_warm"
	} >"$_dir/run.env"
	_status=ok
	_t0=$(uptime_s)
	if [ "$_spec" != kernel ] && [ "${_spec%-nostats}" != floor ] && [ "$ATTACH_FAILS" -ge 2 ]; then
		_status=not-run
	elif ! apply_config "$_spec" "$_dir"; then
		_status=config-failed
	else
		[ "$_spec" != kernel ] && { stats_save "$_dir/stats-before.json" || _status=stats-failed; }
		_s0=$(uptime_s)
		_top= _d0=
		case $_spec in
		*/sampled)
			"$SCHED" top --interval=1 >"$_dir/top.txt" 2>&1 </dev/null &
			_top=$! ;;
		esac
		sched_alive && _d0=$(daemon_ns) _w0=$(uptime_s)
		"$_wl" "$_dir" "$@" >"$_dir/stdout" 2>"$_dir/stderr" || _status=workload-failed
		# The window the BPF run-time statistics cover, for per-second rates.
		echo "stats_window_s=$(fsub "$_s0" "$(uptime_s)")" >>"$_dir/run.env"
		_d1=
		sched_alive && _d1=$(daemon_ns)
		if [ -n "$_d0" ] && [ -n "$_d1" ]; then
			echo "daemon_ns=$((_d1 - _d0))" >"$_dir/daemon.env"
			echo "window_s=$(fsub "$_w0" "$(uptime_s)")" >>"$_dir/daemon.env"
		fi
		[ -n "$_top" ] && { kill "$_top" 2>/dev/null; wait "$_top" 2>/dev/null; }
		_t1=$(uptime_s)
		echo "elapsed_s=$(fsub "$_t0" "$_t1")" >>"$_dir/run.env"
		if [ "${_spec%-nostats}" = floor ]; then
			if ! floor_alive || [ "$(cat "$STATE")" != enabled ]; then
				_status=scheduler-died
				err "$_exp floor $_params: the floor is gone after the run (state $(cat "$STATE"); $(tail -n 2 "$OUT/sched/floor-$SCHED_STARTS.log" | tr '\n' ' '))"
				FLOOR_PID=
			else
				stats_save "$_dir/stats-after.json" || _status=stats-failed
			fi
		elif [ "$_spec" != kernel ]; then
			if ! sched_alive || [ "$(cat "$STATE")" != enabled ]; then
				_status=scheduler-died
				err "$_exp $_label $_params: scx_loehle is gone after the run (state $(cat "$STATE"); $(tail -n 3 "$OUT/sched/sched-$SCHED_STARTS.log" | tr '\n' ' '))"
				wait "$SCHED_PID" 2>/dev/null
				SCHED_PID=
			else
				stats_save "$_dir/stats-after.json" || _status=stats-failed
			fi
		fi
	fi
	echo "status=$_status" >>"$_dir/run.env"
	[ "$_status" = ok ] || [ "$_status" = scheduler-died ] || [ "$_status" = not-run ] || err "$_exp rep $_rep $_label $_params: $_status ($(tail -n 2 "$_dir/stderr" 2>/dev/null | tr '\n' ' '))"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$_exp" "$_rep" "$_label" "$_params" "$_warm" "$_status" "${_dir#"$OUT"/}" >>"$OUT/runs.tsv"
	log "$_exp rep $_rep $_label $_params: $_status ($(fsub "$_t0" "$(uptime_s)") s)"
}

# Order within a repetition: the kernel baseline first, the floor next, then
# every scx configuration of the list, rotated by the repetition number.
# configs: "label=spec label=spec ..."
for_configs() { # REP CONFIGS -> prints "label spec" lines in run order
	local _i _n _c _k _scx _off _j
	_i=0 _n=0
	for _c in $2; do _n=$((_n + 1)); done
	for _c in $2; do
		case $_c in kernel=*) echo "kernel kernel" ;; esac
	done
	for _c in $2; do
		case $_c in floor=* | floor-nostats=*) echo "${_c%%=*} ${_c#*=}" ;; esac
	done
	_k=0
	_scx=
	for _c in $2; do
		case $_c in kernel=* | floor=* | floor-nostats=*) continue ;; esac
		_scx="$_scx $_c"
		_k=$((_k + 1))
	done
	[ "$_k" -gt 0 ] || return 0
	_off=$(($1 % _k))
	_j=0
	for _c in $_scx $_scx; do
		if [ "$_j" -ge "$_off" ] && [ "$_j" -lt $((_off + _k)) ]; then
			echo "${_c%%=*} ${_c#*=}"
		fi
		_j=$((_j + 1))
	done
}

# Run "$@" in cgroup $1 (a path under $CG, or "" for none).
in_cgroup() {
	local _cgp
	_cgp=$1
	shift
	if [ -n "$_cgp" ]; then
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$_cgp" "$@"
	else
		"$@"
	fi
}

# ---- experiment 1: fork placement (seed 000) -----------------------------------
# params "N,M": stress-ng --fork N --fork-max M
wl_fork() { # DIR N,M
	local _n _m
	_n=${2%,*} _m=${2#*,}
	cd "$TMPD" && stress-ng --fork "$_n" --fork-max "$_m" -t "$FORK_T" --metrics-brief --yaml "$1/stress.yaml"
}

# ---- experiment 2: SCHED_IDLE batch work (seed 003) ----------------------------
# N SCHED_IDLE workers share SI_JOBS jobs; each job is a fork+exec of a
# CPU-bound busybox shell loop followed by a 10 ms sleep, like a build's
# compiler invocations. SI_HOGS SCHED_IDLE CPU hogs keep some CPUs busy with
# SCHED_IDLE work for the whole run (the CPUs seed 003 is about).
wl_schedidle() { # DIR N
	local _n _per _hog _t0 _t1 _i _pids _fail _p
	_n=$2
	_per=$((SI_JOBS / _n))
	_hog=
	if [ "$SI_HOGS" -gt 0 ]; then
		chrt --idle 0 stress-ng --cpu "$SI_HOGS" --cpu-method int64 -t 600 --quiet &
		_hog=$!
		sleep 0.5
	fi
	_t0=$(uptime_s)
	_i=0
	_pids=
	while [ "$_i" -lt "$_n" ]; do
		chrt --idle 0 sh "$ROOT/scripts/bench.d/si-worker.sh" "$_per" "$SI_LOOP" &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	_fail=0
	for _p in $_pids; do wait "$_p" || _fail=1; done
	_t1=$(uptime_s)
	[ -n "$_hog" ] && { kill "$_hog" 2>/dev/null; wait "$_hog" 2>/dev/null; }
	{
		echo "workers=$_n"
		echo "jobs=$SI_JOBS"
		echo "loop=$SI_LOOP"
		echo "hogs=$SI_HOGS"
		echo "completion_s=$(fsub "$_t0" "$_t1")"
	} >"$1/result.env"
	return $_fail
}

# ---- experiment 3: wakeup latency beside SCHED_IDLE noise (seed 004) ----------
# Layout t1: $CG/bench and $CG/noise (cpu.idle=1) are siblings.
# Layout t2: $CG/bench and $CG/x, with the noise in $CG/x/noise (cpu.idle=1).
cg_setup() {
	{
		echo "+cpu" >"$CG/cgroup.subtree_control" 2>/dev/null && echo "root +cpu ok" || echo "root +cpu failed"
		mkdir -p "$CG/bench" "$CG/noise" "$CG/x"
		echo "+cpu" >"$CG/x/cgroup.subtree_control" 2>/dev/null && echo "x +cpu ok" || echo "x +cpu failed"
		mkdir -p "$CG/x/noise"
		# Seed 004's production tree, for the scope experiment.
		mkdir -p "$CG/kubepods" "$CG/system.slice"
		for _g in kubepods system.slice; do
			echo "+cpu" >"$CG/$_g/cgroup.subtree_control" 2>/dev/null && echo "$_g +cpu ok" || echo "$_g +cpu failed"
		done
		mkdir -p "$CG/kubepods/guaranteed" "$CG/kubepods/besteffort" "$CG/system.slice/containerd"
		for _g in noise x/noise kubepods/besteffort; do
			if echo 1 >"$CG/$_g/cpu.idle" 2>/dev/null; then echo "$_g cpu.idle=1 ok"; else echo "$_g cpu.idle=1 failed"; fi
		done
	} >"$OUT/meta/cgroups.txt" 2>&1
	[ -d "$CG/bench" ] || err "cannot create cgroups under $CG"
}

# Empty cgroup $1: wait up to 2 s for its tasks to exit, then kill the rest
# (cgroup.kill). Fails when it is still not empty 5 s later.
cg_empty() {
	local _n
	_n=0
	while [ -n "$(cat "$CG/$1/cgroup.procs" 2>/dev/null)" ]; do
		[ "$_n" -eq 20 ] && { log "killing what is left in $1: $(tr '\n' ' ' <"$CG/$1/cgroup.procs")"; echo 1 >"$CG/$1/cgroup.kill"; }
		[ "$_n" -ge 70 ] && return 1
		_n=$((_n + 1))
		sleep 0.1
	done
}

# The latency experiments' cyclictest, in cgroup $1, into $2/cyclictest.txt.
# Histogram lines with zero counts carry nothing: only the others are kept.
cyclictest_in() { # CGROUP DIR
	local _rc
	in_cgroup "$1" timeout "$LIMIT" cyclictest -m -q -D "$LAT_D" -t "$LAT_THREADS" -i 1000 -h 100000 \
		--policy=other >"$2/cyclictest.raw" 2>"$2/cyclictest.err"
	_rc=$?
	awk '/^#/ { print; next } { s = 0; for (i = 2; i <= NF; i++) s += $i; if (s > 0) print }' "$2/cyclictest.raw" >"$2/cyclictest.txt"
	rm -f "$2/cyclictest.raw"
	return $_rc
}

wl_latency() { # DIR LAYOUT
	local _ncg _noise _fail
	case $2 in
	t1) _ncg=noise ;;
	t2) _ncg=x/noise ;;
	esac
	# A subshell that execs: $! is stress-ng itself, not a shell around it.
	(echo 0 >"$CG/$_ncg/cgroup.procs" && exec chrt --idle 0 stress-ng --cpu "$LAT_NOISE" --cpu-method int64 -t 600 --quiet) &
	_noise=$!
	sleep 0.5
	_fail=0
	cyclictest_in bench "$1" || _fail=1
	if command -v perf >/dev/null; then
		in_cgroup bench timeout "$LIMIT" perf bench sched pipe -l "$LAT_PIPE" >"$1/perf-pipe.txt" 2>&1 || _fail=1
	fi
	in_cgroup bench timeout "$LIMIT" hackbench -g 2 -f 10 -l "$LAT_HB" >"$1/hackbench.txt" 2>&1 || _fail=1
	kill "$_noise" 2>/dev/null
	wait "$_noise" 2>/dev/null
	# Noise left behind would load every later run: make sure of it.
	cg_empty "$_ncg" || { err "latency $2: cannot stop the SCHED_IDLE noise in $CG/$_ncg"; _fail=1; }
	return $_fail
}

# ---- experiment 8: what idle work is (--sched-idle-scope, issue 15) -------------
# CPU hogs marked idle by cpu.idle alone (no chrt --idle) on half the CPUs,
# cyclictest in a normal cgroup; layouts: t1 and t2 as in experiment 3, and
# seed 004's kubepods tree with the wakees in guaranteed (kubepods-g) or in
# containerd (kubepods-c). Records the hogs' bogo ops/s: the idle work's
# throughput.
wl_scope() { # DIR LAYOUT
	local _ncg _wcg _noise _fail
	case $2 in
	t1) _ncg=noise _wcg=bench ;;
	t2) _ncg=x/noise _wcg=bench ;;
	kubepods-g) _ncg=kubepods/besteffort _wcg=kubepods/guaranteed ;;
	kubepods-c) _ncg=kubepods/besteffort _wcg=system.slice/containerd ;;
	esac
	# A timed run that ends by itself: stress-ng reports no metrics when
	# it is interrupted. It outlasts cyclictest by a little.
	(echo 0 >"$CG/$_ncg/cgroup.procs" && exec stress-ng --cpu "$LAT_NOISE" --cpu-method int64 \
		-t $((LAT_D + 2)) --metrics-brief --yaml "$1/stress.yaml") &
	_noise=$!
	sleep 0.5
	_fail=0
	cyclictest_in "$_wcg" "$1" || _fail=1
	wait "$_noise" || _fail=1
	cg_empty "$_ncg" || { err "scope $2: cannot stop the noise in $CG/$_ncg"; _fail=1; }
	return $_fail
}

# ---- experiment 4: SMT, one task per core (seed 002) ---------------------------
# " PID child grandchild ... " (every thread's children, two levels down).
descendants() {
	local _acc _p _t _c _t2 _g
	_acc=" $1 "
	for _p in $1; do
		for _t in /proc/"$_p"/task/*/children; do
			for _c in $(cat "$_t" 2>/dev/null); do
				_acc="$_acc$_c "
				for _t2 in /proc/"$_c"/task/*/children; do
					for _g in $(cat "$_t2" 2>/dev/null); do _acc="$_acc$_g "; done
				done
			done
		done
	done
	echo "$_acc"
}

wl_smt() { # DIR CORES
	local _d _s _w _st _line _l _p _n _all _pass _want
	_d=$1 _want=$2
	cd "$TMPD" || return 1
	stress-ng --cpu "$2" --cpu-method int64 -t "$SMT_T" --metrics-brief --yaml "$_d/stress.yaml" &
	_s=$!
	# The stressors: descendants of stress-ng (it may take a while to fork
	# them under TCG). /proc/PID/task/PID/children names them at once; the
	# fallback, a scan of every /proc/PID/stat for parent pids, takes
	# seconds on a loaded TCG guest, i.e. most of a quick run.
	_w= _n=0
	while [ "$_n" -lt 100 ] && kill -0 "$_s" 2>/dev/null; do
		sleep 0.1
		_n=$((_n + 1))
		if [ -r "/proc/$_s/task/$_s/children" ]; then
			_all=$(descendants "$_s")
		else
			_all=" $_s "
			for _pass in 1 2; do
				for _st in /proc/[0-9]*/stat; do
					read -r _line <"$_st" 2>/dev/null || continue
					# shellcheck disable=SC2086
					set -- $_line
					case $_all in *" $1 "*) continue ;; esac
					case $_all in *" $4 "*) _all="$_all$1 " ;; esac
				done
			done
		fi
		_w=${_all# "$_s" }
		set -- $_w
		[ "$#" -ge "$_want" ] && break
	done
	echo "workers $_w" >"$_d/samples.txt"
	# field 39 of /proc/PID/stat: the CPU the task last ran on
	while kill -0 "$_s" 2>/dev/null; do
		_l=
		for _p in $_w; do
			read -r _line <"/proc/$_p/stat" 2>/dev/null || continue
			# shellcheck disable=SC2086
			set -- $_line
			shift 38
			_l="$_l $1"
		done
		[ -n "$_l" ] && echo "s$_l" >>"$_d/samples.txt"
		sleep 0.02
	done
	wait "$_s"
}

# ---- experiment 5: select_cpu overhead ------------------------------------------
wl_overhead() { # DIR LOAD
	cd "$TMPD" && stress-ng --fork 4 -t "$OH_T" --metrics-brief --yaml "$1/stress.yaml" &&
		hackbench -g 4 -f 10 -l "$OH_HB" >"$1/hackbench.txt" 2>&1
}

# ---- experiment 6: the foreground beside SCHED_IDLE noise (idle work yields) -------
# params "SCOPE-NOISE": the foreground (perf bench sched messaging, hackbench,
# cyclictest) on half the CPUs or on all of them, alone or beside SCHED_IDLE
# CPU hogs on every CPU. The noise's work done is the CPU time its workers
# got (clock ticks), per second of the run.
wl_foreground() { # DIR SCOPE-NOISE
	local _scope _noise _cpus _n _fail _np _t0 _ticks _p
	_scope=${2%-*} _noise=${2#*-}
	if [ "$_scope" = half ]; then _n=$((NCPUS / 2)); else _n=$NCPUS; fi
	_cpus=0-$((_n - 1))
	_fail=0 _np=
	if [ "$_noise" = noise ]; then
		(cd "$TMPD" && exec chrt --idle 0 stress-ng --cpu "$NCPUS" --cpu-method int64 -t 600 --quiet) &
		_np=$!
		sleep 0.5
	fi
	_t0=$(uptime_s)
	timeout "$LIMIT" taskset -c "$_cpus" perf bench sched messaging -g "$FG_GROUPS" -l "$FG_LOOPS" \
		>"$1/messaging.txt" 2>&1 || _fail=1
	timeout "$LIMIT" taskset -c "$_cpus" hackbench -g "$FG_GROUPS" -f 10 -l "$FG_HB" \
		>"$1/hackbench.txt" 2>&1 || _fail=1
	timeout "$LIMIT" taskset -c "$_cpus" cyclictest -m -q -D "$FG_D" -t "$_n" -i 1000 -h 100000 \
		--policy=other >"$1/cyclictest.raw" 2>"$1/cyclictest.err" || _fail=1
	awk '/^#/ { print; next } { s = 0; for (i = 2; i <= NF; i++) s += $i; if (s > 0) print }' \
		"$1/cyclictest.raw" >"$1/cyclictest.txt"
	rm -f "$1/cyclictest.raw"
	if [ -n "$_np" ]; then
		_ticks=0
		for _p in $(descendants "$_np"); do
			[ "$_p" = "$_np" ] && continue
			_ticks=$((_ticks + $(awk '{ print $14 + $15 }' "/proc/$_p/stat" 2>/dev/null || echo 0)))
		done
		echo "noise_ticks=$_ticks" >"$1/noise.env"
		echo "noise_s=$(fsub "$_t0" "$(uptime_s)")" >>"$1/noise.env"
		echo "clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)" >>"$1/noise.env"
		kill "$_np" 2>/dev/null
		wait "$_np" 2>/dev/null
	fi
	return $_fail
}

# ---- experiment 7: wakeup latency of sleepers (the hot path's tail) -------------
# params "half-idle": NCPUS/2 unpinned sleepers (loehle-wakelat, 1 ms period),
# nothing else; "half-busy": the same beside NCPUS/2 CPU hogs at normal
# priority, so that each wakeup must find one of the CPUs left idle. Each
# sleeper prints "avg_us p99_us max_us".
wl_wakeup() { # DIR LAYOUT
	local _n _i _pids _hog _fail _p
	_n=$((NCPUS / 2))
	_hog=
	if [ "$2" = half-busy ]; then
		(cd "$TMPD" && exec stress-ng --cpu "$_n" --cpu-method int64 -t 600 --quiet) &
		_hog=$!
		sleep 0.5
	fi
	_i=0 _pids=
	while [ "$_i" -lt "$_n" ]; do
		"$WAKELAT" 1000 "$WK_COUNT" >"$1/wakelat.$_i" 2>&1 &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	_fail=0
	for _p in $_pids; do wait "$_p" || _fail=1; done
	[ -n "$_hog" ] && { kill "$_hog" 2>/dev/null; wait "$_hog" 2>/dev/null; }
	return $_fail
}

# ---- meta ----------------------------------------------------------------------------
write_meta() {
	_m=$OUT/meta
	uname -a >"$_m/uname"
	uname -r >"$_m/kernel"
	echo "$NCPUS" >"$_m/ncpus"
	{
		echo "quick=$QUICK"
		echo "smoke=$SMOKE"
		echo "reps=$REPS"
		echo "only=$ONLY"
		echo "fork_t=$FORK_T"
		echo "fork_sizes=$FORK_SIZES"
		echo "si_sizes=$SI_SIZES"
		echo "si_jobs=$SI_JOBS"
		echo "si_loop=$SI_LOOP"
		echo "si_hogs=$SI_HOGS"
		echo "lat_d=$LAT_D"
		echo "lat_threads=$LAT_THREADS"
		echo "lat_noise=$LAT_NOISE"
		echo "lat_pipe=$LAT_PIPE"
		echo "lat_hb=$LAT_HB"
		echo "smt_t=$SMT_T"
		echo "smt_cores=$SMT_CORES"
		echo "oh_t=$OH_T"
		echo "oh_hb=$OH_HB"
		echo "fg_groups=$FG_GROUPS"
		echo "fg_loops=$FG_LOOPS"
		echo "fg_hb=$FG_HB"
		echo "fg_d=$FG_D"
		echo "wk_count=$WK_COUNT"
		echo "vm=${LOEHLE_VM:-0}"
		echo "vm_cpus=${LOEHLE_VM_CPUS:-}"
		echo "vm_smt=${LOEHLE_VM_SMT:-}"
		echo "vm_nodes=${LOEHLE_VM_NODES:-}"
		echo "vm_mem_mb=${LOEHLE_VM_MEM_MB:-}"
		echo "vm_kernel=${LOEHLE_VM_KERNEL:-}"
		echo "idle_latency_file=$(cat "$LATFILE")"
	} >"$_m/settings.env"
	{
		echo "scx_loehle: $("$SCHED" --version 2>&1 | head -n 1)"
		echo "stress-ng: $(stress-ng --version 2>&1 | head -n 1)"
		echo "cyclictest: $(cyclictest --help 2>&1 | head -n 1)"
		echo "hackbench: $(command -v hackbench)"
		echo "perf: $(perf version 2>&1 | head -n 1)"
		echo "chrt: $(chrt --version 2>&1 | head -n 1)"
		echo "busybox: $(busybox 2>&1 | head -n 1)"
	} >"$_m/versions.txt"
	for _c in /sys/devices/system/cpu/cpu[0-9]*; do
		_id=${_c##*cpu}
		_node=$(ls -d "$_c"/node[0-9]* 2>/dev/null | head -n 1)
		_node=${_node##*node}
		printf '%s\t%s\t%s\t%s\t%s\n' "$_id" \
			"$(cat "$_c/topology/thread_siblings_list" 2>/dev/null)" \
			"$(cat "$_c/topology/physical_package_id" 2>/dev/null)" \
			"${_node:-0}" \
			"$(cat "$_c/cache/index3/shared_cpu_list" 2>/dev/null)"
	done | sort -n >"$_m/topology.tsv"
	grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' >"$_m/cpu_model"
	cat /sys/devices/system/cpu/smt/active >"$_m/smt_active" 2>/dev/null
	cat "$STATE" >"$_m/sched_ext_state_before" 2>/dev/null
}

# ---- main -------------------------------------------------------------------------------
if [ "$QUICK" = 1 ]; then
	FORK_T=2 FORK_SIZES="1,1 4,1 4,4 8,1 8,4 16,1"
	SI_SIZES="2 8" SI_JOBS=16 SI_LOOP=10000
	LAT_D=2 LAT_PIPE=200 LAT_HB=10
	SMT_T=5 OH_T=2 OH_HB=20
	FG_GROUPS=2 FG_LOOPS=50 FG_HB=20 FG_D=2
	WK_COUNT=2000
	# The smoke run: the goal's fork size and one without concurrency,
	# one batch size, a fifth of the foreground's messaging loops and a
	# quarter of its hackbench loops.
	if [ "$SMOKE" = 1 ]; then
		FORK_SIZES="1,1 8,4"
		SI_SIZES="8"
		FG_LOOPS=10 FG_HB=5
	fi
else
	FORK_T=5 FORK_SIZES="1,1 4,1 4,4 8,1 8,4 16,1"
	SI_SIZES="1 2 4 8 16" SI_JOBS=32 SI_LOOP=10000
	LAT_D=10 LAT_PIPE=10000 LAT_HB=100
	SMT_T=10 OH_T=5 OH_HB=100
	FG_GROUPS=4 FG_LOOPS=200 FG_HB=100 FG_D=5
	WK_COUNT=5000
fi
WAKELAT=$(dirname "$SCHED")/loehle-wakelat
[ -n "${BENCH_FORK_SIZES:-}" ] && FORK_SIZES=$BENCH_FORK_SIZES
LAT_THREADS=4
# SCHED_IDLE noise on half the CPUs: the modes differ only when some CPUs are
# idle and others run SCHED_IDLE work.
LAT_NOISE=$((NCPUS / 2))
# Upper bound of one benchmark command (a stuck run fails instead of hanging).
LIMIT=${BENCH_LIMIT:-120}
SI_HOGS=$((NCPUS / 4))
SMT_CORES=$(cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list 2>/dev/null | sort -u | wc -l)
[ "$SMT_CORES" -gt 0 ] || SMT_CORES=$((NCPUS / 2))

write_meta
want() { [ -z "$ONLY" ] || case ",$ONLY," in *",$1,"*) true ;; *) false ;; esac; }

# Settings: policy/sched-idle/smt. The fork and overhead runs use smt=off, as
# seed 000's Altra has no SMT (the tie groups are whole LLCs and nodes); the
# overhead run also measures the default configuration (`default`).
# floor-nostats: the floor without the BPF run-time statistics, i.e. what
# those (which scx_loehle's daemon enables for its per-callback costs) cost.
CFG_fork="kernel=kernel floor=floor floor-nostats=floor-nostats builtin=builtin/wakee-aware/off recency=recency/wakee-aware/off first=first/wakee-aware/off reservoir=reservoir/wakee-aware/off"
PS_fork=$FORK_SIZES
CFG_schedidle="kernel=kernel builtin=builtin/mainline/idle-core mainline=reservoir/mainline/idle-core wakee-aware=reservoir/wakee-aware/idle-core"
PS_schedidle=$SI_SIZES
CFG_latency="kernel=kernel builtin=builtin/mainline/idle-core mainline=reservoir/mainline/idle-core wakee-aware=reservoir/wakee-aware/idle-core idle-first=reservoir/idle-first/idle-core ignore=reservoir/ignore/idle-core"
# The smoke run: the baseline, the old behaviour and the default (a latency
# run costs 30-50 s of a loaded TCG guest, mostly in starting and stopping
# its noise and benchmarks).
[ "$SMOKE" = 1 ] && CFG_latency="kernel=kernel mainline=reservoir/mainline/idle-core wakee-aware=reservoir/wakee-aware/idle-core"
# Quick runs take layout t1 only: under TCG one latency run with its
# SCHED_IDLE noise costs about a minute.
if [ "$QUICK" = 1 ]; then PS_latency="t1"; else PS_latency="t1 t2"; fi
CFG_smt="kernel=kernel builtin=builtin/wakee-aware/off off=reservoir/wakee-aware/off idle-core=reservoir/wakee-aware/idle-core"
PS_smt=$SMT_CORES
# The foreground beside idle work: every SCHED_IDLE mode, in the default
# configuration otherwise; quick runs take the default and the baselines.
if [ "$QUICK" = 1 ]; then
	CFG_foreground="kernel=kernel builtin=builtin/wakee-aware/idle-core wakee-aware=reservoir/wakee-aware/idle-core"
	PS_foreground="all-alone all-noise"
else
	CFG_foreground="kernel=kernel builtin=builtin/wakee-aware/idle-core mainline=reservoir/mainline/idle-core wakee-aware=reservoir/wakee-aware/idle-core idle-first=reservoir/idle-first/idle-core ignore=reservoir/ignore/idle-core"
	PS_foreground="half-alone half-noise all-alone all-noise"
fi
CFG_overhead="floor=floor builtin=builtin/wakee-aware/off recency=recency/wakee-aware/off first=first/wakee-aware/off reservoir=reservoir/wakee-aware/off default=reservoir/wakee-aware/idle-core default-task=reservoir/wakee-aware/idle-core/task sampled=reservoir/wakee-aware/idle-core/sampled"
PS_overhead="fork4+hackbench"
# The three scopes in the default configuration otherwise (issue 15); quick
# runs take the kubepods layouts only.
CFG_scope="task=reservoir/wakee-aware/idle-core/task cgroup=reservoir/wakee-aware/idle-core/cgroup hierarchy=reservoir/wakee-aware/idle-core/hierarchy"
if [ "$QUICK" = 1 ]; then PS_scope="kubepods-g kubepods-c"; else PS_scope="t1 t2 kubepods-g kubepods-c"; fi
# The wakeup path's tail against the floor, in the default configuration.
CFG_wakeup="kernel=kernel floor=floor builtin=builtin/wakee-aware/idle-core reservoir=reservoir/wakee-aware/idle-core"
PS_wakeup="half-idle half-busy"

EXPS=
for e in fork schedidle latency smt overhead foreground wakeup scope; do want "$e" && EXPS="$EXPS $e"; done
{ want latency || want scope; } && cg_setup

# Every start of a sched_ext scheduler flips static keys, i.e. patches kernel
# text, which occasionally oopses under TCG: start scx_loehle once per
# repetition. A repetition runs the kernel baseline of every experiment
# (scheduler stopped), then every scx configuration of every experiment in
# an order rotated by the repetition number. One warm-up run per experiment
# (kernel scheduler, discarded) comes first, but in the smoke run.
for e in $EXPS; do
	[ "$SMOKE" = 1 ] && break
	eval "_ps=\$PS_$e _wl=wl_$e"
	run "$e" 0 warmup kernel "${_ps%% *}" 1 "$_wl" "${_ps%% *}" </dev/null
done
r=1
while [ "$r" -le "$REPS" ]; do
	log "repetition $r of $REPS"
	for phase in kernel floor floor-nostats scx; do
		for e in $EXPS; do
			eval "_cfgs=\$CFG_$e _ps=\$PS_$e _wl=wl_$e"
			for_configs "$r" "$_cfgs" >"$TMPD/order"
			while read -r _lbl _spec; do
				case $phase/$_spec in
				kernel/kernel | floor/floor | floor-nostats/floor-nostats) ;;
				scx/kernel | scx/floor | scx/floor-nostats) continue ;;
				scx/*) ;;
				*) continue ;;
				esac
				for _p in $_ps; do
					run "$e" "$r" "$_lbl" "$_spec" "$_p" 0 "$_wl" "$_p" </dev/null
				done
			done <"$TMPD/order"
		done
	done
	r=$((r + 1))
done

sched_stop
floor_stop
cat "$STATE" >"$OUT/meta/sched_ext_state_after" 2>/dev/null
rm -rf "$TMPD"
echo "runs $RUN_N" >"$OUT/done"
[ ! -s "$OUT/errors" ]
