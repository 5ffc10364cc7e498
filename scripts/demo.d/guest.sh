#!/bin/sh
# Guest side of scripts/demo (busybox sh, or any POSIX sh on a sched_ext
# host with 8 CPUs as 4 SMT-2 cores): run from the repository folder with
# the load length in seconds. Three layouts where the seeds' rules decide,
# each switched live, each switch summed up in one sentence.
SECONDS_PER_LOAD=${1:-6}
SCHED=${LOEHLE_SCHED:-build/scx_loehle}
STATE=/sys/kernel/sched_ext/state
SOCK=/tmp/scx_loehle-demo.sock
HOGS=

say() { printf '\n=== %s\n' "$*"; }
pid=
# Stops the loads and detaches the scheduler (a --native run leaves the
# machine as it found it). Inside $(...) it ends only that subshell: the
# caller checks what it got.
die() {
	printf 'demo: error: %s\n' "$*" >&2
	kill $HOGS 2>/dev/null
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid"
	exit 1
}
ctl() { "$SCHED" ctl "$@" --socket "$SOCK"; }
switch() { ctl set "$@" >/dev/null || die "ctl set $* failed"; say "$(ctl get)"; }

[ -e "$STATE" ] || die "this kernel has no sched_ext"
[ "$(nproc)" -eq 8 ] || die "the demo's layouts need 8 CPUs, not $(nproc)"
say "$(uname -r), $(nproc) CPUs, sched_ext $(cat "$STATE")"
cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | sort -u | tr '\n' ' ' | sed 's/^/SMT cores: /'
echo

# Equal exit latencies: every idle CPU with a published state ties, so the
# tie-break alone decides between them. The default settings otherwise.
"$SCHED" --stats 0 --socket "$SOCK" --idle-latency-file tests/vm/data/latency-equal.txt &
pid=$!
i=0
until ctl get >/dev/null 2>&1; do
	kill -0 "$pid" 2>/dev/null || die "scx_loehle did not start"
	i=$((i + 1)); [ $i -lt 300 ] || die "scx_loehle did not answer within 30 s"
	sleep 0.1
done
[ "$(cat "$STATE")" = enabled ] || die "sched_ext is $(cat "$STATE")"
say "attached: $(ctl get)"

pin_hogs() {
	for cpu in $1; do
		taskset -c "$cpu" stress-ng --cpu 1 --cpu-method int64 -t 600 --quiet &
		HOGS="$HOGS $!"
	done
	sleep 1
}
stop_hogs() { kill $HOGS 2>/dev/null; wait $HOGS 2>/dev/null; HOGS=; }

# The block of `ctl stats` for generation $1, and one number in it.
gen_block() { ctl stats | awk -v g="$1" '/^gen / { on = ($2 == g) } on'; }
gen_value() {
	gen_block "$1" | tr ',;:' '\n\n\n' | awk -v k="$2" '
		{ sub(/^ +/, "") } index($0, k " ") == 1 { print $(split(k, a, " ") + 1); exit }'
}
gen_fork_picks() { gen_block "$1" | sed -n 's/.*fork picks per CPU \[\([0-9 ]*\)\].*/\1/p'; }

# "share% ... cv" of the counts of CPUs $2 among the picks $1. Plain
# arithmetic only: busybox awk may be built without sqrt() and pow().
spread() {
	echo "$1" | awk -v cpus="$2" '
	function root(v,  r, i) { if (v <= 0) return 0; r = v + 1; for (i = 0; i < 60; i++) r = (r + v / r) / 2; return r }
	{
		n = split(cpus, c, " "); t = 0
		for (i = 1; i <= n; i++) t += $(c[i] + 1)
		if (t == 0) { print "no picks"; exit }
		m = t / n; v = 0; s = ""
		for (i = 1; i <= n; i++) { x = $(c[i] + 1); v += (x - m) * (x - m); s = s sprintf("%d%% ", 100 * x / t) }
		printf "%s(cv %.2f, %d picks)", s, root(v / n) / m, t }'
}
cv_of() { spread "$1" "$2" | sed -n 's/.*cv \([0-9.]*\).*/\1/p'; }

# --- 1. Seed 000, in the default configuration ------------------------------
say "1. seed 000: one busy thread on every core (CPUs 0 2 4 6), forks from an unpinned stress-ng"
echo "   CPUs 1, 3, 5 and 7 are idle and tie; where do the forks go?"
pin_hogs "0 2 4 6"
fork_load() { stress-ng --fork 1 -t "$SECONDS_PER_LOAD" --quiet || die "stress-ng --fork failed"; }
fork_load
g_res=$(ctl get | sed -n 's/^generation \([0-9]*\):.*/\1/p')
switch --policy=first
fork_load
g_first=$((g_res + 1))
switch --policy=reservoir
fork_load
g_back=$((g_res + 2))
stop_hogs
for g in $g_res $g_first $g_back; do
	printf '   generation %s fork picks on CPUs 1 3 5 7: %s\n' "$g" "$(spread "$(gen_fork_picks $g)" "1 3 5 7")"
done
cv_res=$(cv_of "$(gen_fork_picks $g_res)" "1 3 5 7")
cv_first=$(cv_of "$(gen_fork_picks $g_first)" "1 3 5 7")
cv_back=$(cv_of "$(gen_fork_picks $g_back)" "1 3 5 7")
[ -n "$cv_res" ] && [ -n "$cv_first" ] && [ -n "$cv_back" ] ||
	die "no fork-pick spread for generations $g_res $g_first $g_back"
echo
echo "   reservoir -> first: the spread over the tied CPUs went from cv $cv_res to cv $cv_first:"
echo "   first keeps the first idle CPU in scan order, the bias seed 000's reservoir sampling removes."
echo "   first -> reservoir: back to cv $cv_back, an even share for every tied CPU, with SMT idle-core"
echo "   preference still on (no core is idle, so every idle thread is a candidate)."

# --- 2. Seed 003: SCHED_IDLE wakees ------------------------------------------
say "2. seed 003: SCHED_IDLE hogs on CPUs 0-5, SCHED_IDLE wakees forking and sleeping"
echo "   CPUs 6 and 7 are truly idle. Does a SCHED_IDLE wakee share a CPU with idle work?"
switch --sched-idle=mainline
g_main=$((g_back + 1))
taskset -c 0-5 chrt --idle 0 stress-ng --cpu 6 --cpu-method int64 -t 600 --quiet &
HOGS=$!
sleep 1
wakees() { chrt --idle 0 sh -c 'i=0; while [ $i -lt 100 ]; do /bin/true; sleep 0.01; i=$((i + 1)); done'; }
wakees
switch --sched-idle=wakee-aware
g_aware=$((g_main + 1))
wakees
stop_hogs
pack_main=$(gen_value $g_main packing)
pack_aware=$(gen_value $g_aware packing)
echo
echo "   mainline -> wakee-aware: SCHED_IDLE wakees packed beside idle work while an idle CPU was free:"
echo "   ${pack_main:-0} under mainline, ${pack_aware:-0} under wakee-aware. A CPU running only idle work is"
echo "   idle only for a wakee that may preempt it (seed 003)."

# --- 3. Seed 002: four CPU-bound tasks on four cores -------------------------
say "3. seed 002: four CPU-bound tasks on 4 cores x 2 threads"
busy_cores() {
	grep '^cpu[0-9]' /proc/stat >/tmp/demo.stat.0
	sleep 2
	grep '^cpu[0-9]' /proc/stat >/tmp/demo.stat.1
	awk 'NR == FNR { for (i = 2; i <= NF; i++) t0[$1] += $i; i0[$1] = $5 + $6; next }
	     { t = 0; for (i = 2; i <= NF; i++) t += $i
	       if (1 - ($5 + $6 - i0[$1]) / (t - t0[$1]) > 0.6) { c = substr($1, 4); core[int(c / 2)]++; busy++ } }
	     END { for (k in core) if (core[k] > 1) shared++
	           printf "%d busy CPUs, %d cores with both threads busy", busy, shared + 0 }' \
		/tmp/demo.stat.0 /tmp/demo.stat.1
}
# Prints "<busy CPUs> <cores with both threads busy>" over the load.
cpu_load() {
	stress-ng --cpu 4 --cpu-method int64 -t $((SECONDS_PER_LOAD + 3)) --quiet &
	load=$!
	sleep 2
	cores=$(busy_cores)
	echo "   $1: $cores" >&2
	wait "$load" || die "stress-ng --cpu failed"
	echo "$cores" | awk '{ print $1, $4 }'
}
set -- $(cpu_load "idle-core")
shared_core=$2
[ -n "$shared_core" ] || die "the idle-core load failed"
switch --smt=off
set -- $(cpu_load "smt off")
shared_off=$2
[ -n "$shared_off" ] || die "the smt-off load failed"
switch --smt=idle-core
echo
echo "   idle-core -> off: cores running both threads went from $shared_core to $shared_off of 4;"
if [ "$shared_off" -gt "$shared_core" ]; then
	echo "   without the preference, tasks share cores although whole cores are idle (seed 002)."
else
	echo "   this time the spread put them on separate cores by chance (about half of the runs)."
fi

[ "$(cat "$STATE")" = enabled ] || die "sched_ext state is $(cat "$STATE") after the loads"

say "the dashboard (scx_loehle top, one plain-text frame)"
"$SCHED" top --once --socket "$SOCK" || die "top --once failed"

say "per-generation summary"
ctl stats || die "ctl stats failed"

kill -INT "$pid"
wait "$pid" || die "scx_loehle exited with status $? on SIGINT"
say "detached; sched_ext $(cat "$STATE")"
