# Each seed's rule observed in the kernel in the DEFAULT configuration
# (reservoir, wakee-aware, idle-core), beside the alternative it must differ
# from, in one boot. Sourced by tests/vm/run-cases.sh after scheduler.sh,
# whose helpers (gen_value, gen_fork_picks, chi_square, expect_enabled,
# children_of) these cases use. flat_* cases need the one-node layout
# (LOEHLE_VM_NODES=1: 8 CPUs, one node, one LLC, SMT pairs {0,1}..{6,7});
# the others the vm tier's 2-node layout.
#
# Statistical checks, their false-failure rates and their power
# (tests/vm/uniformity_rates.py computes the figures):
# - "uniform" (uniform_over CPUS PICKS MIN D): at least MIN picks on the
#   tied CPUS, a chi-square statistic below D times its p = 0.001 critical
#   value (13.82 for 3 tied CPUs, 16.27 for 4) and the busiest tied CPU at
#   most twice the idlest (implied by the chi-square bound at these sizes;
#   it names the CPU). No effect-size escape: [130 100 70] over 3 CPUs is
#   not uniform (chi-square 18).
#   * Default configuration (idle-core): all fork picks, at least 810 of
#     FORKS = 900 on the tied CPUs, D = 1. Eight runs read chi-square
#     0.8-8.0 (mean 3.1, uniform draws give 3). False-failure rate 0.10%;
#     power 100% against `first`'s concentration (all ties to the first
#     CPU in scan order; the mildest concentration seen, before the seed-002
#     fix, was [0 289 0 130 0 15 0 5]), 100% against one tied CPU drawing
#     twice the share of each other one, 94% against 1.5 times.
#   * --smt=off: the counts are overdispersed, for reasons not found yet.
#     Eight flat runs read chi-square 2.2-17.3 over the tied CPUs (mean
#     8.6, about three times uniform draws'), seed000_spread 1.6-8.3 on 2
#     degrees of freedom, so a D = 1 bound would fail about a run in ten.
#     (Traced tie groups: 41-88% of forks, depending on the host's load,
#     saw every tied CPU, the rest one fewer: the CPU of the last child
#     not idle again yet; the picks of full ties were overdispersed too.)
#     The check takes all picks, at least 810 of 900, with D = 3: for
#     counts three times as dispersed as uniform draws it fails 0.1% of
#     runs (uniform draws: < 0.001%); power 100% against `first`, 99.6%
#     (4 CPUs) and 99.97% (3) against one CPU drawing twice the others'
#     share, 10-28% against 1.5 times. Finding the dispersion's cause (a
#     tie position in the trace event would test the draw alone) is open
#     in issue 30.
# - "concentrated" needs an effect size (chi-square per pick, all fork
#   picks) above 0.1 and 4x the uniform run's: `first` reads about 2, the
#   uniform run 0.002-0.02, so it fails only when first stops concentrating.

FORKS=900

# uniform_over CPUS PICKS MIN D: exit 0 when PICKS (8 counts, one per CPU)
# are uniform over CPUS in the sense above; prints why not otherwise.
uniform_over() {
	echo "$2" | awk -v cpus="$1" -v need="$3" -v d="$4" '{
		k = split(cpus, c, " "); n = 0
		for (i = 1; i <= k; i++) n += $(c[i] + 1)
		if (n < need) { printf "only %d picks on the tied CPUs %s, fewer than %d\n", n, cpus, need; exit 1 }
		e = n / k; x = 0; lo = n; hi = 0
		for (i = 1; i <= k; i++) {
			v = $(c[i] + 1); dv = v - e; x += dv * dv / e
			if (v < lo) lo = v
			if (v > hi) hi = v
		}
		crit = (k == 3 ? 13.82 : (k == 4 ? 16.27 : -1))
		if (crit < 0) { printf "no critical value for %d tied CPUs\n", k; exit 1 }
		if (x >= d * crit) { printf "chi-square %.1f over %s is at or past %.2f (%s x the p = 0.001 value)\n", x, cpus, d * crit, d; exit 1 }
		if (hi > 2 * lo) { printf "the busiest tied CPU has %d picks, more than twice the idlest (%d)\n", hi, lo; exit 1 }
	}'
}

# Starts `stress-ng --cpu 1` pinned to each CPU in $1; the pids in $HOGS
# (and in the runner's $HOGS_PID_FILE, whose cleanup kills what a failed
# case left). They run until stop_hogs: with a 120-s limit the hogs of
# flat_seed000_default_config ended during its third 300 forks (now 900) in a slow
# CI guest (6.18, 146 s), and `first` then put 152 forks on their CPUs.
start_pinned_hogs() {
	HOGS=
	for cpu in $1; do
		taskset -c "$cpu" stress-ng --cpu 1 --cpu-method int64 -t 3600 --quiet &
		HOGS="$HOGS $!"
		echo "$!" >>"$HOGS_PID_FILE"
	done
	sleep 1
}

# Fails unless every hog of start_pinned_hogs still runs ($1: after what).
hogs_alive() {
	for pid in $HOGS; do
		kill -0 "$pid" 2>/dev/null || fail "hog $pid ended before $1 did"
	done
}

# Pins every task that may move to the CPUs in $1 (kernel threads bound
# to a CPU refuse, which is fine); `pin_everything_to 0-7` undoes it.
pin_everything_to() {
	for pid in $(ls /proc | grep '^[0-9][0-9]*$'); do
		taskset -a -p -c "$1" "$pid" >/dev/null 2>&1
	done
}

stop_hogs() {
	kill $HOGS 2>/dev/null
	wait $HOGS 2>/dev/null
	HOGS=
	rm -f "$HOGS_PID_FILE"
}

# The issue-10 layout: one busy thread on every core, so no core is idle
# and the idle odd CPUs all tie. Measured before the fix, default config:
# fork picks [0 289 0 130 0 15 0 5] (seed 002's pruning dropped ties).
# The busy thread of core {0,1} is the forking parent itself
# (build/loehle-forker, pinned to CPU 0, its children allowed everywhere);
# everything else that may move is pinned to CPU 0 too.
FORKER=${LOEHLE_BUILD_DIR:-build}/loehle-forker

# fork_picks_of GEN WHAT: $FORKS forks from CPU 0 in generation GEN; sets
# PICKS to the fork picks per CPU they added (the setup's own forks, before
# everything was pinned, are not among them).
fork_picks_of() {
	before=$(gen_fork_picks "$1")
	"$FORKER" 0 "$FORKS" || fail "loehle-forker failed ($2)"
	after=$(gen_fork_picks "$1")
	PICKS=$(echo "$before $after" | awk 'NF != 16 { exit 1 }
		{ for (i = 1; i <= 8; i++) printf "%s%d", (i > 1 ? " " : ""), $(8 + i) - $i; print "" }') ||
		fail "generation $1's fork picks per CPU, before [$before] and after [$after], are not 8 counts each ($2)"
}

# on_tied PICKS: exit 0 when at least 90% of the $FORKS forks went to the
# idle CPUs 1 3 5 7 (a busy CPU takes a fork only when a claim was lost and
# given up).
on_tied() {
	echo "$1" | awk -v forks="$FORKS" '{ exit !(10 * ($2 + $4 + $6 + $8) >= 9 * forks) }'
}

case_flat_seed000_default_config() {
	[ -x "$FORKER" ] || fail "$FORKER is missing (built with the project)"
	start_sched --idle-latency-file=tests/vm/data/latency-equal.txt
	pin_everything_to 0
	trap 'pin_everything_to 0-7' EXIT
	start_pinned_hogs "2 4 6"
	fork_picks_of 1 "default configuration"; p1=$PICKS
	"$SCHED" ctl set --smt=off >/dev/null || fail "ctl set --smt=off failed"
	fork_picks_of 2 "--smt=off"; p2=$PICKS
	"$SCHED" ctl set --smt=idle-core --policy=first >/dev/null || fail "ctl set --policy=first failed"
	fork_picks_of 3 "first"; p3=$PICKS
	hogs_alive "the forks"
	stop_hogs
	for g in 1 2 3; do
		eval "picks=\$p$g"
		eval "x$g=\"\$(echo \"\$picks\" | chi_square '1 3 5 7')\""
		echo "generation $g: $FORKS forks, picks [$picks], chi-square/total over 1 3 5 7: $(eval echo \$x$g)"
		on_tied "$picks" || fail "generation $g put more than a tenth of $FORKS forks on busy CPUs: [$picks]"
	done
	why=$(uniform_over "1 3 5 7" "$p1" 810 1) || fail "default config (reservoir, idle-core): fork picks [$p1] not uniform over the tied CPUs: $why"
	why=$(uniform_over "1 3 5 7" "$p2" 810 3) || fail "reservoir, smt off: fork picks [$p2] not uniform over the tied CPUs: $why"
	set -- $x1; e1=$(awk -v a="$1" -v n="$2" 'BEGIN { print a / n }')
	set -- $x3
	awk -v a="$1" -v n="$2" -v e1="$e1" -v forks="$FORKS" 'BEGIN { e = a / n; exit !(10 * n >= 9 * forks && e > 0.1 && e > 4 * e1) }' ||
		fail "first with idle-core did not concentrate fork picks: [$p3]"
	expect_enabled "the pinned-hog fork load"
	stop_sched
}

# Seed 002 in the default configuration against --smt=off, in one boot:
# four CPU-bound tasks on 4 cores x 2 threads. Under idle-core they sit on
# four distinct cores (4 of 8 samples of one placement, the bound and
# false-failure rate of seed002_idle_core; 3 of 4 failed 14% of runs at
# its loaded host's 17% short windows, and did so in a mutation run's
# baseline with two other guests running). With the
# preference off, where they land is chance: a fresh placement of 4 tasks
# on the 8 CPUs hits 4 distinct cores with probability
# 8*6*4*2 / (8*7*6*5) = 0.23 (seen: [1 3 5 6] in every window of one load
# on 6.18), so --smt=off gets five fresh placements, and fails the case only
# if all five spread: by chance 0.23^5 < 0.1% of runs. The samples are
# count_spread_windows' (scheduler.sh).
case_seed002_default_vs_off() {
	start_sched
	# Each load runs until its windows are taken, then is stopped
	# (SIGTERM stops stress-ng's workers too): a fixed -t ran out before
	# the last windows of a slow first boot.
	stress-ng --cpu 4 --cpu-method int64 -t 300 --quiet &
	load=$!
	workers=$(children_of "$load" 4 150)
	[ "$(echo $workers | wc -w)" -eq 4 ] || fail "expected 4 stress-ng workers, got [$workers]"
	# Seed 002's move carries a task off a busy sibling at its slice end:
	# time for it before the first sample.
	sleep 2
	default_good=$(count_spread_windows default 8 "$workers")
	kill "$load"; wait "$load" 2>/dev/null
	"$SCHED" ctl set --smt=off >/dev/null || fail "ctl set --smt=off failed"
	off_good=0 run=0
	while [ $run -lt 5 ]; do
		run=$((run + 1))
		stress-ng --cpu 4 --cpu-method int64 -t 300 --quiet &
		load=$!
		workers=$(children_of "$load" 4 150)
		[ "$(echo $workers | wc -w)" -eq 4 ] || fail "expected 4 stress-ng workers, got [$workers] (off, placement $run)"
		off_good=$((off_good + $(count_spread_windows "off, placement $run" 1 "$workers")))
		kill "$load"; wait "$load" 2>/dev/null
		sleep 0.5
	done
	echo "4 tasks on 4 distinct cores: default in $default_good of 8 samples, smt off in $off_good of 5 placements"
	[ "$default_good" -ge 4 ] || fail "default config: 4 CPU-bound tasks were on 4 distinct cores in only $default_good of 8 samples"
	[ "$off_good" -lt 5 ] || fail "--smt=off spread 4 tasks on 4 distinct cores in all 5 placements, as idle-core does: the preference made no difference"
	expect_enabled "the CPU-bound load"
	stop_sched
}

# Seed 003's premise, default configuration: a normal wakee placed on a CPU
# that runs only SCHED_IDLE work preempts it at once, instead of waiting for
# its slice (100 ms here, so that waiting shows as ~50 ms on average). A
# timer sleeper (build/loehle-wakelat, 4 ms period) measures the delay from
# its deadline to running, in one boot:
# - alone, allowed on CPUs 2 and 3, nothing else busy;
# - "placed": allowed on CPUs 2 and 3, a normal hog on CPU 2 and a
#   SCHED_IDLE hog on CPU 3: its wakeups go through select_cpu, which
#   places it on CPU 3 with SCX_ENQ_PREEMPT;
# - "queued": pinned to CPU 3 beside the same two hogs: the kernel skips
#   select_cpu for a one-CPU task, so the wakeup is queued and enqueue kicks
#   the idle work (SCX_KICK_PREEMPT);
# - the reference, "behind normal work": pinned to CPU 2, behind the normal
#   hog, which nothing preempts.
# Under single-threaded TCG a vCPU waits its turn behind every other busy
# vCPU, so with two hogs running every figure grows by a few ms whatever the
# scheduler does (measured: ~0.2 ms alone, 2-4 ms placed or queued); the
# three are therefore compared in the same two-hog layout: placed and queued
# must each stay under a quarter of the reference (measured ~50 ms; without
# the preemption either one reads like the reference).
WAKELAT=${LOEHLE_BUILD_DIR:-build}/loehle-wakelat

# wakelat_avg_us CPUS COUNT: the average delay in us of COUNT 4 ms sleeps.
wakelat_avg_us() {
	taskset -c "$1" "$WAKELAT" 4000 "$2" | awk '{ print $1 }'
}

case_seed003_normal_wakee_preempts() {
	[ -x "$WAKELAT" ] || fail "$WAKELAT is missing (built with the project)"
	start_sched --slice-us=100000
	alone=$(wakelat_avg_us 2,3 200)
	taskset -c 3 chrt --idle 0 stress-ng --cpu 1 --cpu-method int64 -t 60 --quiet &
	idle_hog=$!
	start_pinned_hogs 2
	sleep 1
	placed=$(wakelat_avg_us 2,3 200)
	queued=$(wakelat_avg_us 3 200)
	reference=$(wakelat_avg_us 2 40)
	stop_hogs
	kill "$idle_hog"; wait "$idle_hog" 2>/dev/null
	preempts=$(gen_value 1 "sched-idle preempt")
	si_picks=$(gen_block 1 | sed -n 's/.*picks: .*sched_idle \([0-9]*\).*/\1/p')
	echo "avg wakeup latency alone ${alone} us; beside a SCHED_IDLE hog: placed by select_cpu ${placed} us, queued on its CPU ${queued} us; behind normal work ${reference} us; sched-idle preemptions ${preempts:-0}, sched-idle picks ${si_picks:-0}"
	[ -n "$alone" ] && [ -n "$placed" ] && [ -n "$queued" ] && [ -n "$reference" ] ||
		fail "no latency figures ($WAKELAT printed nothing)"
	# The placed phase must really be placed (200 wakeups through
	# select_cpu), or enqueue's kick would stand in for the placement.
	[ "${si_picks:-0}" -ge 100 ] ||
		fail "only ${si_picks:-0} wakeups were placed on the sched-idle CPU by select_cpu"
	[ "$reference" -ge 10000 ] ||
		fail "the reference behind normal work waited only ${reference} us: the hog on CPU 2 did not hold its slice"
	[ $((placed * 4)) -le "$reference" ] ||
		fail "a normal wakee placed on a SCHED_IDLE CPU waited ${placed} us on average (behind normal work ${reference} us): not run at once"
	[ $((queued * 4)) -le "$reference" ] ||
		fail "a normal wakee queued behind a SCHED_IDLE hog waited ${queued} us on average (behind normal work ${reference} us): not run at once"
	expect_enabled "the SCHED_IDLE hog"
	stop_sched
}

# Seed 003/004: SCHED_IDLE forks packed onto sched-idle CPUs (mainline)
# must not use the CPUs up: each claim ends when its claimant runs there.
# Every other task is pinned to CPU 0 meanwhile, since a normal task
# running on a claimed CPU also ends the claim. Per-CPU kernel threads
# still run now and then on CPUs 1-7 and end claims too, so in the kernel
# this case shows the packing working end to end rather than catching a
# claim that sticks; the claim rules themselves are the unit tier's
# (SchedIdleClaim.*, and the claims-stick mutant). Hence the name: what it
# shows is that SCHED_IDLE forks under mainline keep finding sched-idle
# CPUs. False-failure rate: 195 and 196 of 196 forks found one in runs
# on a loaded host (three guests on two cores), against a bound of half;
# falling to half would take claims held for most of the run, which only a
# defect does, so the rate is below anything measurable here.
case_seed003_idle_forks_pack_end_to_end() {
	start_sched --sched-idle=mainline --sample-every=1
	pin_everything_to 0
	trap 'pin_everything_to 0-7' EXIT
	taskset -c 1-7 chrt --idle 0 stress-ng --cpu 7 --cpu-method int64 -t 60 --quiet &
	hogs=$!
	sleep 1
	"$SCHED" trace --out=/tmp/claims.jsonl 2>/tmp/trace.err &
	tracer=$!
	sleep 0.5
	taskset -c 1-7 chrt --idle 0 sh -c 'i=0; while [ $i -lt 200 ]; do chrt -p $$ >/dev/null; i=$((i + 1)); done'
	sleep 0.3
	kill -INT "$tracer"; wait "$tracer"
	kill "$hogs"; wait "$hogs" 2>/dev/null
	forks=$(grep -c '"path":"fork"' /tmp/claims.jsonl)
	si=$(grep '"path":"fork"' /tmp/claims.jsonl | grep -c '"reason":"sched_idle"')
	echo "SCHED_IDLE forks traced $forks, of them placed on a sched-idle CPU $si ($(tail -n 1 /tmp/trace.err))"
	[ "$forks" -ge 150 ] || fail "too few forks traced ($forks): $(cat /tmp/trace.err)"
	[ "$si" -ge $((forks / 2)) ] || fail "only $si of $forks forks found a sched-idle CPU: claims piled up"
	expect_enabled "the packing load"
	stop_sched
}

# A CPU whose SCHED_IDLE task was preempted by a SCHED_FIFO thread is busy,
# not sched-idle, and no fork's "least loaded" choice either (its load of
# ours reads 0). Layout: CPU 3 runs a SCHED_IDLE hog, then a FIFO thread
# until the wakees and forks are done (at most 90 s), with RT throttling
# off and (on 7.x) CPU 3's sched_ext deadline server off, so that no SCX
# task runs there meanwhile; CPU 2 runs a normal hog. Normal wakees
# allowed on CPUs 2 and 3 must never be handed CPU 3 as sched-idle: they
# run on CPU 2 and finish while the FIFO thread still holds CPU 3 (a stale
# flag parked them behind it until it ended).
uptime_s() { cut -d' ' -f1 /proc/uptime; }

case_sched_idle_behind_fifo() {
	srv=/sys/kernel/debug/sched/ext_server/cpu3/runtime
	old_srv=
	[ -e "$srv" ] && old_srv=$(cat "$srv")
	start_sched
	rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
	start_pinned_hogs 2
	taskset -c 3 chrt --idle 0 stress-ng --cpu 1 --cpu-method int64 -t 60 --quiet &
	idle_hog=$!
	sleep 1
	echo -1 >/proc/sys/kernel/sched_rt_runtime_us
	if [ -n "$old_srv" ]; then
		echo 0 >"$srv" || fail "cannot turn CPU 3's sched_ext deadline server off ($srv)"
	fi
	# FIFO spinning until the case is done with it (a stop file), timed by
	# builtins only, 90 s at most: a fixed 15 s ran out on a host loaded
	# by two other guests (a mutation run), as 6 s had once in CI.
	fifo_stop=/tmp/fifo.stop
	rm -f "$fifo_stop"
	trap 'touch "$fifo_stop"' EXIT
	taskset -c 3 chrt -f 10 sh -c 'read up _ </proc/uptime; end=$((${up%.*} + 90))
		while [ "${up%.*}" -lt "$end" ] && [ ! -e '"$fifo_stop"' ]; do read up _ </proc/uptime; done' &
	fifo=$!
	sleep 0.5
	"$SCHED" ctl set --sample-every=1 >/dev/null || fail "ctl set failed"
	t0=$(uptime_s)
	taskset -c 2,3 sh -c 'i=0; while [ $i -lt 10 ]; do sleep 0.05; i=$((i + 1)); done' ||
		fail "the wakees failed"
	t1=$(uptime_s)
	fifo_running=0
	kill -0 "$fifo" 2>/dev/null && fifo_running=1
	picks=$(gen_value 2 "sched_idle")
	forks3=$(gen_fork_picks 2 | awk '{ print $4 }')
	stress-ng --fork 2 -t 1 --quiet
	forks3_load=$(gen_fork_picks 2 | awk '{ print $4 }')
	kill -0 "$fifo" 2>/dev/null || fifo_running=0
	touch "$fifo_stop"
	wait "$fifo"
	echo "$rt" >/proc/sys/kernel/sched_rt_runtime_us
	[ -n "$old_srv" ] && echo "$old_srv" >"$srv"
	kill "$idle_hog"; wait "$idle_hog" 2>/dev/null
	stop_hogs
	echo "wakees took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s; FIFO thread still running: $fifo_running; sched-idle picks meanwhile: ${picks:-0}; forks placed on CPU 3: ${forks3:-0}, after a fork load ${forks3_load:-0}"
	[ "$fifo_running" -eq 1 ] || fail "the FIFO thread ended before the wakees and forks: the layout did not hold (slow host?)"
	[ "${picks:-0}" -eq 0 ] || fail "CPU 3 was offered as sched-idle $picks times behind a SCHED_FIFO thread"
	[ "${forks3_load:-1}" -eq 0 ] || fail "$forks3_load forks were placed on CPU 3 behind a SCHED_FIFO thread"
	expect_enabled "the FIFO thread"
	stop_sched
}

# Seed 004: idle-first and ignore decide differently from wakee-aware in
# one layout. SCHED_IDLE hogs fill node 0 (CPUs 0-3), node 1 is idle, and a
# normal shell on CPU 1 forks children that may run anywhere: wakee-aware
# takes node 0's sched-idle CPUs at once; idle-first prefers node 1's idle
# CPUs (the kernel's find_idlest_group counts only truly idle ones); ignore
# treats node 0 as busy and goes to node 1 as well. The shell is put back
# on CPU 1 before each fork (a wakeup may carry it to node 1): of every
# three forks, the pinned `taskset` child never reaches select_cpu, the other
# two decide. SMT preference is off here, and only here: under idle-core,
# seed 002 rightly carries the shell (beside a busy SCHED_IDLE sibling) to
# a whole idle core in node 1, and its forks then start from there.
node1_share() {
	echo "$1" | awk '{ a = $1 + $2 + $3 + $4; b = $5 + $6 + $7 + $8
		if (a + b == 0) { print -1, 0; exit } printf "%.2f %d\n", b / (a + b), a + b }'
}

# False-failure rate and power: three runs on a loaded host (three guests
# on two cores) read node-1 shares 0.07, 0.00 and 0.13 of 95 picks under
# wakee-aware and 0.99-1.00 of 87 under idle-first and ignore. Taking the
# highest wakee-aware share as the true one, reaching 0.3 (29 of 95) is a
# binomial tail at z = 4.9 (< 1e-5), and the other two modes would need to
# fall from 0.99 to 0.7: a correct scheduler fails this case well below
# 0.1% of runs. Power: a rule that ignores which wakee may preempt gives
# wakee-aware the other modes' shares (about 1.0) and fails at once.
case_seed004_modes_differ() {
	start_sched --smt=off
	taskset -c 0-3 chrt --idle 0 stress-ng --cpu 4 --cpu-method int64 -t 120 --quiet &
	hogs=$!
	sleep 1
	g=1
	for mode in wakee-aware idle-first ignore; do
		if [ "$mode" != wakee-aware ]; then
			"$SCHED" ctl set --sched-idle=$mode >/dev/null || fail "ctl set --sched-idle=$mode failed"
			g=$((g + 1))
		fi
		sh -c 'i=0; while [ $i -lt 40 ]; do
			taskset -p -c 1 $$ >/dev/null; taskset -p -c 0-7 $$ >/dev/null; chrt -p $$ >/dev/null
			i=$((i + 1)); done'
		set -- $(node1_share "$(gen_fork_picks $g)")
		eval "share_$g=$1"
		echo "$mode: fork picks [$(gen_fork_picks $g)], node-1 share $1 of $2"
	done
	kill "$hogs"; wait "$hogs" 2>/dev/null
	awk -v a="$share_1" -v b="$share_2" -v c="$share_3" 'BEGIN { exit !(a >= 0 && a < 0.3 && b > 0.7 && c > 0.7) }' ||
		fail "node-1 share of fork picks: wakee-aware $share_1 (want < 0.3), idle-first $share_2, ignore $share_3 (want > 0.7)"
	expect_enabled "the node-0 SCHED_IDLE hogs"
	stop_sched
}

# The kfuncs the kernel gave: the new ones on 7.x, the old ones on 6.18.
case_kfunc_variants() {
	start_sched
	get=$("$SCHED" ctl send '{"cmd":"get"}') || fail "ctl send get failed"
	echo "$get" | tr ',' '\n' | grep scx_bpf
	case $(uname -r) in
	6.18.*) want="scx_bpf_dsq_insert\"" ;;
	*) want="scx_bpf_dsq_insert___v2\"" ;;
	esac
	case $get in *"$want"*) ;; *) fail "kernel $(uname -r): expected $want among the kfuncs in: $get" ;; esac
	grep -q "kfuncs: " /tmp/sched.log || fail "no kfuncs line in the startup log"
	stop_sched
}

# A CPU offline when the scheduler loads has no place in its topology, so
# its return reloads the scheduler (loehle_cpu_online_needs_reload; the
# mutant cpu-unknown-at-load-not-reloaded-in-the-kernel fails here). On the
# way it also checks, as a smoke test that cannot fail on its rule, that
# with every online CPU busy no fork goes to the offline CPU: an offline
# CPU runs nothing of ours, so it reads as heavily loaded and never wins
# "least loaded" even if a scan looked at it; that rule (loehle_cpu_usable)
# is the unit tier's (offline-cpu-offered).
case_cpu_offline_at_load_reloads_on_return() {
	cpu=7
	echo 0 >/sys/devices/system/cpu/cpu$cpu/online || fail "cannot take CPU $cpu offline"
	start_sched
	expect_hotplug_reloads
	stress-ng --cpu 7 --cpu-method int64 -t 30 --quiet &
	hogs=$!
	sleep 1
	stress-ng --fork 2 -t 4 --quiet
	rc=$?
	kill "$hogs"; wait "$hogs" 2>/dev/null
	picks=$(gen_fork_picks 1)
	least_loaded=$(gen_value 1 least_loaded)
	# Its return is a restart the scheduler asks for (scx_bpf_exit): the
	# kernel logs that unload.
	expect_kernel_log 'disabled \(unregistered from BPF\)'
	echo 1 >/sys/devices/system/cpu/cpu$cpu/online || fail "cannot bring CPU $cpu back"
	[ "$rc" -eq 0 ] || fail "stress-ng --fork failed"
	echo "fork picks with CPU $cpu offline: [$picks]; least-loaded picks $least_loaded"
	n=$(echo "$picks" | awk -v c="$cpu" '{ print $(c + 1) }')
	[ "${n:-1}" -eq 0 ] || fail "offline CPU $cpu got $n fork picks"
	# Its place in the topology was unknown at load: its return reloads
	# the scheduler (loehle_cpu_online_needs_reload).
	n=0
	until grep -q restarted /tmp/sched.log; do
		n=$((n + 1)); [ $n -lt 100 ] || fail "no restart after CPU $cpu came back"
		sleep 0.1
	done
	wait_state enabled 10 || fail "state is '$(cat "$STATE")' after the restart"
	stop_sched
}

# Wakeup scans walk prev's LLC only (the loader's per-LLC CPU lists), and a
# wakeup whose LLC has nothing to offer is not scanned at all (K Prateek
# Nayak's overload cut-off, seed 003). Phase 1: normal hogs on CPUs 1-5, so
# CPU 0 is LLC 0's only idle CPU and the whole core {6, 7} of LLC 1 is
# idle; six short sleepers contend for those three CPUs. Every idle pick of
# a wakeup must stay in prev's LLC (a machine-wide walk from a busy CPU 2
# would find CPU 6 first). Phase 2: a hog on CPU 0 too; wakeups whose prev
# is in LLC 0 skip the scan.
run_sleepers() {
	sleepers=
	for k in 1 2 3 4 5 6; do
		sh -c 'i=0; while [ $i -lt 30 ]; do sleep 0.02; i=$((i + 1)); done' &
		sleepers="$sleepers $!"
	done
	wait $sleepers
}

# wakeup_idle_picks FILE: "cpu prev_cpu" of each traced wakeup that took an
# idle CPU other than by prev being idle.
wakeup_idle_picks() {
	sed -n 's/.*"cpu":\([0-9]*\),"prev_cpu":\([0-9]*\),"path":"\(wakeup\|sync\)","reason":"\(idle_cpu\|smt_sibling\|idle_core\|sched_idle\)".*/\1 \2/p' "$1"
}

# Most sleeper wakeups find prev idle and need no scan: one round of
# sleepers gave 8 scanned picks on 6.18 in CI, 10 or more elsewhere. So
# phase 1 traces rounds until 20 picks are in, at most 6 rounds; the
# tracer of each round runs until its round ends (SIGINT), not for a fixed
# time that a slow guest outlasts.
trace_sleeper_rounds() {
	: >/tmp/trace.jsonl
	round=0
	while [ $round -lt 6 ] && [ "$(wakeup_idle_picks /tmp/trace.jsonl | wc -l)" -lt 20 ]; do
		round=$((round + 1))
		"$SCHED" trace --out=/tmp/trace-round.jsonl 2>/tmp/trace.err &
		tracer=$!
		sleep 0.5
		run_sleepers
		kill -INT "$tracer"
		wait "$tracer" || fail "trace failed in round $round: $(cat /tmp/trace.err)"
		cat /tmp/trace-round.jsonl >>/tmp/trace.jsonl
	done
	echo "sleeper rounds traced: $round"
}

case_wakeup_scan_stays_in_llc() {
	start_sched --sample-every=1
	start_pinned_hogs "1 2 3 4 5"
	trace_sleeper_rounds
	"$SCHED" ctl set --sample-every=64 >/dev/null || fail "ctl set failed"
	taskset -c 0 stress-ng --cpu 1 --cpu-method int64 -t 30 --quiet &
	HOGS="$HOGS $!"
	sleep 0.5
	run_sleepers
	stop_hogs
	wakeup_idle_picks /tmp/trace.jsonl >/tmp/wakeup-picks.txt
	picks=$(wc -l </tmp/wakeup-picks.txt)
	crossed=$(awk '{ if (($1 < 4) != ($2 < 4)) n++ } END { print n + 0 }' /tmp/wakeup-picks.txt)
	skipped1=$(gen_value 1 "scans skipped")
	skipped2=$(gen_value 2 "scans skipped")
	echo "wakeup idle picks traced: $picks, outside prev's LLC: $crossed; scans skipped: $skipped1 with an idle CPU in each LLC, $skipped2 with LLC 0 full"
	[ "$picks" -ge 10 ] || fail "too few wakeup idle picks traced ($picks): $(head -c 300 /tmp/trace.jsonl)"
	[ "$crossed" -eq 0 ] || fail "$crossed wakeup picks left prev's LLC: $(awk '($1 < 4) != ($2 < 4)' /tmp/wakeup-picks.txt | head -n 3 | tr '\n' ';')"
	[ "${skipped2:-0}" -gt 0 ] || fail "no wakeup scan was skipped although LLC 0 had nothing idle"
	expect_enabled "the wakeup load"
	stop_sched
}

# Seed 002 kept up over time, nearest first: at slice expiry a task beside a
# busy sibling moves to a whole idle core of its own LLC before any other.
# Layout: a hog on CPU 0, a CPU-bound task on its sibling 1; the whole core
# {2, 3} idle in the same LLC (node 0), the whole core {6, 7} idle in node 1;
# every other task that may move (this shell, the daemon, unbound kernel
# threads such as rcu_preempt) pinned to CPU 4 meanwhile, so that their
# wakeups take neither core. Twenty trials: the task is pinned back to CPU 1,
# then allowed everywhere, and should end up on CPU 2 or 3. Per-CPU kernel
# threads still wake on CPU 2 or 3 now and then and spoil a trial (seen: 1
# of 10); the case fails when more than 5 of 20 trials end in node 1: about
# 1% of runs if a trial is spoilt with probability 0.1, while a move to any
# idle core (node 1 about half the time) passes only about 2% of runs.
case_smt_move_nearest_first() {
	start_sched
	pin_everything_to 4
	trap 'pin_everything_to 0-7' EXIT
	start_pinned_hogs 0
	taskset -c 1 stress-ng --cpu 1 --cpu-method int64 -t 60 --quiet &
	mover=$!
	sleep 1
	worker=$(cat /proc/$mover/task/$mover/children 2>/dev/null | awk '{ print $1 }')
	[ -n "$worker" ] || fail "no stress-ng worker under $mover"
	near=0 far=0 trial=0
	while [ $trial -lt 20 ]; do
		trial=$((trial + 1))
		taskset -p -c 1 "$worker" >/dev/null || fail "cannot pin $worker to CPU 1"
		sleep 0.3
		taskset -p -c 0-7 "$worker" >/dev/null || fail "cannot widen $worker"
		sleep 0.4
		cpu=$(awk '{ print $39 }' /proc/$worker/stat)
		echo "trial $trial: the task runs on CPU $cpu"
		case $cpu in 2 | 3) near=$((near + 1)) ;; 5 | 6 | 7) far=$((far + 1)) ;; esac
	done
	moves=$(gen_value 1 "smt moves")
	kill "$mover"; wait "$mover" 2>/dev/null
	stop_hogs
	echo "moves to the same LLC's idle core: $near of 20, to node 1: $far; smt moves counted: ${moves:-0}"
	[ "$far" -le 5 ] || fail "a task beside a busy sibling moved to another node $far times although its LLC had a whole idle core"
	[ "$near" -ge 12 ] || fail "the task reached its LLC's idle core in only $near of 20 trials"
	expect_enabled "the sibling load"
	stop_sched
}

# Seed 002 on wakeup (the fast path): a task that wakes on a CPU beside a
# busy sibling goes to a whole idle core of its LLC. Layout as above: a hog
# on CPU 0, everything else pinned to CPU 4; a timer sleeper
# (build/loehle-wakelat, 10 ms period) starts on CPU 1 and may then run
# anywhere in LLC 0 (CPUs 0-3). It never runs long enough for its slice
# (100 ms here) to run out, and it never forks, so only its timer wakeups
# can move it: it must be on core {2, 3} in most samples (with the
# idle-core step gone it would stay on CPU 1, whose prev counts as idle).
# A shell loop of `sleep 0.01` is no such sleeper: it wakes when its child
# exits, while the child still runs on the idle core, so the core is never
# whole at the wakeup.
# False-failure rate and power: the sleeper was on the idle core in 30 of
# 30 samples in each of three runs on a loaded host (0 of 90 misses: a
# per-sample miss rate below 3.3% at 95% confidence). At 3.3%, 11 misses
# of 30 have probability below 1e-9, so the 20-of-30 bound fails a
# correct scheduler far below 0.1% of runs. Without the preference the
# sleeper stays beside the busy sibling (prev is idle), 0 of 30 on the
# core, so the case catches that always.
case_wakeup_prefers_idle_core() {
	[ -x "$WAKELAT" ] || fail "$WAKELAT is missing (built with the project)"
	start_sched --slice-us=100000
	pin_everything_to 4
	trap 'pin_everything_to 0-7' EXIT
	start_pinned_hogs 0
	taskset -c 1 "$WAKELAT" 10000 6000 >/dev/null &
	sleeper=$!
	sleep 0.2
	taskset -p -c 0-3 "$sleeper" >/dev/null || fail "could not widen the sleeper's mask"
	sleep 1
	beside=0 core=0 n=0 seen=
	while [ $n -lt 30 ]; do
		n=$((n + 1))
		cpu=$(awk '{ print $39 }' /proc/$sleeper/stat 2>/dev/null)
		seen="$seen${cpu:--}"
		case $cpu in 1) beside=$((beside + 1)) ;; 2 | 3) core=$((core + 1)) ;; esac
		sleep 0.05
	done
	kill "$sleeper" 2>/dev/null; wait "$sleeper" 2>/dev/null
	stop_hogs
	picks=$(gen_block 1 | sed -n 's/.*picks: //p')
	echo "sleeper samples: on the idle core {2,3} $core of 30, beside the busy sibling $beside (CPUs: $seen); picks: $picks"
	[ "$core" -ge 20 ] || fail "the sleeper ran on the whole idle core in only $core of 30 samples (beside the busy sibling: $beside)"
	expect_enabled "the sleeper"
	stop_sched
}

# The event sample rate follows a live switch at once: from one event in a
# million picks to every pick.
case_sampling_follows_generation() {
	start_sched --sample-every=1000000
	stress-ng --fork 2 -t 2 --quiet || fail "stress-ng failed"
	"$SCHED" ctl set --sample-every=1 >/dev/null || fail "ctl set --sample-every=1 failed"
	stress-ng --fork 2 -t 2 --quiet || fail "stress-ng failed"
	events=$(gen_value 2 "events")
	forks=$(gen_value 2 "select fork")
	echo "generation 2 (every pick sampled): $forks fork selects, $events events"
	[ "${events:-0}" -ge "${forks:-1}" ] || fail "only $events events for $forks fork picks after --sample-every=1"
	stop_sched
}
