#!/bin/sh
# Guest side of scripts/demo (busybox sh, or any POSIX sh on a sched_ext
# host): run from the repository folder with the load length in seconds.
SECONDS_PER_LOAD=${1:-6}
SCHED=${LOEHLE_SCHED:-build/scx_loehle}
STATE=/sys/kernel/sched_ext/state
SOCK=/tmp/scx_loehle-demo.sock

say() { printf '\n=== %s\n' "$*"; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }

[ -e "$STATE" ] || die "this kernel has no sched_ext"
say "$(uname -r), $(nproc) CPUs, sched_ext $(cat "$STATE")"
cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | sort -u | tr '\n' ' ' | sed 's/^/SMT cores: /'
echo

# Equal exit latencies: every idle CPU with a published state ties, so the
# tie-break policy alone decides where forks go.
"$SCHED" --stats 1 --socket "$SOCK" --idle-latency-file tests/vm/data/latency-equal.txt &
pid=$!
i=0
while [ "$(cat "$STATE")" != enabled ]; do
	kill -0 "$pid" 2>/dev/null || die "scx_loehle did not attach"
	i=$((i + 1)); [ $i -lt 300 ] || die "scx_loehle did not attach within 30 s"
	sleep 0.1
done
say "attached: $(cat /sys/kernel/sched_ext/root/ops)"

load() {
	say "$("$SCHED" ctl get --socket "$SOCK")"
	# Three forkers on eight CPUs: idle CPUs remain, so the tie-break decides
	# where children go (a saturated machine only shows least-loaded picks).
	stress-ng --fork 3 --fork-max 4 -t "$SECONDS_PER_LOAD" --metrics-brief 2>&1 |
		grep -E 'fork +[0-9]|successful|fail' || die "stress-ng failed"
}
load
"$SCHED" ctl set --socket "$SOCK" --policy first >/dev/null || die "ctl set --policy first failed"
load
"$SCHED" ctl set --socket "$SOCK" --policy reservoir >/dev/null || die "ctl set --policy reservoir failed"
load
[ "$(cat "$STATE")" = enabled ] || die "sched_ext state is $(cat "$STATE") after the loads"

say "the dashboard (scx_loehle top, one plain-text frame)"
"$SCHED" top --once --socket "$SOCK" || die "top --once failed"

say "per-generation summary"
"$SCHED" ctl stats --socket "$SOCK" || die "ctl stats failed"

kill -INT "$pid"
wait "$pid" || die "scx_loehle exited with status $? on SIGINT"
say "detached; sched_ext $(cat "$STATE")"
