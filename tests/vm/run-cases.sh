#!/bin/sh
# Guest-side runner of the vm test tier (busybox sh). Runs end-to-end cases in
# one boot and prints TAP.
#
#   sh tests/vm/run-cases.sh [-l] [CASE...]
#
# CASE names a shell function case_CASE defined in tests/vm/cases/*.sh; with
# no CASE every case runs, in file order. -l lists the cases. Exits non-zero
# when any case failed. Run from the repository folder (scripts/vm makes it
# the working folder), e.g.
#   scripts/vm -- sh tests/vm/run-cases.sh attach sigint
#
# Environment:
#   LOEHLE_SCHED        the scheduler binary (default build/scx_loehle)
#   LOEHLE_EXPECT_TOPO  cpus:smt:nodes[:llcs] for case_topology (default from
#                       the LOEHLE_VM_CPUS/SMT/NODES that scripts/vm exports)
#
# Helpers for cases (each case runs in its own subshell):
#   fail MSG                  end the case as failed with MSG as the reason
#   wait_state STATE SECONDS  poll /sys/kernel/sched_ext/state until STATE
#   start_sched [ARGS]        start $LOEHLE_SCHED ARGS in the background
#                             (log /tmp/sched.log), wait for `enabled` and for
#                             the control socket to answer (the daemon's
#                             readiness), or fail with the log's tail
#   stop_sched                SIGINT it, wait, fail unless it exits 0
#   sched_alive               the started scheduler is still running
#   cpulist_count LIST        number of CPUs in a sysfs list like 0-3,8
# Files a case leaves in /out come back with scripts/vm --out.

cd "$(dirname "$0")/../.." || exit 2
VM_DIR=tests/vm
SCHED=${LOEHLE_SCHED:-build/scx_loehle}
SCX=/sys/kernel/sched_ext
STATE=$SCX/state
REASON=/tmp/case.reason
SCHED_PID_FILE=/tmp/sched.pid
# Pinned CPU hogs a case started (seeds.sh: start_pinned_hogs), one pid a
# line: they run until stopped, so a failed case's are killed here.
HOGS_PID_FILE=/tmp/hogs.pids

fail() {
	printf '%s\n' "$*" >"$REASON"
	exit 1
}

# shellcheck source=tests/vm/lib/guest.sh
. "$VM_DIR/lib/guest.sh"

sched_alive() { pid_alive "${SCHED_PID:-}"; }

start_sched() {
	[ -e "$STATE" ] || fail "no $STATE: the kernel has no sched_ext"
	[ -x "$SCHED" ] || fail "$SCHED is missing or not executable (cwd $(pwd))"
	wait_state disabled 10 || fail "state is '$(cat "$STATE")' before start, not disabled"
	# Ready means answering: the daemon listens only once it is attached.
	_sock=
	for _a in "$@"; do
		case $_a in --socket=*) _sock=$_a ;; esac
	done
	LAUNCH_PID_FILE=$SCHED_PID_FILE launch_ready "${LOEHLE_ATTACH_TIMEOUT:-30}" \
		/tmp/sched.log "$SCHED ctl get $_sock" -- "$SCHED" "$@" ||
		fail "scheduler did not attach: $LAUNCH_ERROR"
	SCHED_PID=$LAUNCHED_PID
}

stop_sched() {
	sched_alive || fail "scheduler is not running (log: $(log_tail /tmp/sched.log 5))"
	stop_launched "$SCHED_PID"
	_rc=$?
	rm -f "$SCHED_PID_FILE"
	SCHED_PID=
	[ "$_rc" -eq 0 ] || fail "scheduler exited with status $_rc after SIGINT (log: $(log_tail /tmp/sched.log 5))"
}

cpulist_count() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF == 2 { n += $2 - $1 + 1; next } NF == 1 && $1 != "" { n++ } END { print n + 0 }'
}

# A case's leftovers must not leak into the next one.
cleanup_case() {
	if [ -f "$SCHED_PID_FILE" ]; then
		_p=$(cat "$SCHED_PID_FILE")
		kill -9 "$_p" 2>/dev/null
		rm -f "$SCHED_PID_FILE"
	fi
	if [ -f "$HOGS_PID_FILE" ]; then
		# SIGTERM: stress-ng then stops its workers too.
		kill $(cat "$HOGS_PID_FILE") 2>/dev/null
		rm -f "$HOGS_PID_FILE"
	fi
	[ -e "$STATE" ] && ! wait_state disabled 10 && echo "# warning: state stays '$(cat "$STATE")' after the case"
	for _f in /sys/devices/system/cpu/cpu*/online; do
		[ "$(cat "$_f")" = 1 ] || echo 1 >"$_f" 2>/dev/null || echo "# warning: cannot bring $_f back"
	done
}

for f in "$VM_DIR"/cases/*.sh; do
	[ -f "$f" ] && . "$f"
done
all=$(cat "$VM_DIR"/cases/*.sh 2>/dev/null | sed -n 's/^case_\([A-Za-z0-9_]*\)[ ]*().*/\1/p')

if [ "${1:-}" = -l ]; then
	echo "$all"
	exit 0
fi
[ $# -gt 0 ] && sel="$*" || sel=$all

n=0
for c in $sel; do n=$((n + 1)); done
echo "1..$n"
echo "# kernel $(uname -r), $(nproc) CPUs, sched_ext state $(cat "$STATE" 2>/dev/null || echo absent)"
i=0 failed=0
for c in $sel; do
	i=$((i + 1))
	rm -f "$REASON" /tmp/sched.log
	if ! type "case_$c" >/dev/null 2>&1; then
		echo "not ok $i - $c # no such case (known: $(echo $all))"
		failed=$((failed + 1))
		continue
	fi
	t0=$(cut -d' ' -f1 /proc/uptime)
	( "case_$c" ) >/tmp/case.out 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ "$rc" -eq 0 ]; then
		echo "ok $i - $c # ${secs} s"
		# A passing case's last lines carry its figures.
		tail -n "${LOEHLE_CASE_LINES:-6}" /tmp/case.out | sed 's/^/#   /'
	else
		reason=$(cat "$REASON" 2>/dev/null)
		echo "not ok $i - $c # ${reason:-exit status $rc}"
		failed=$((failed + 1))
		sed 's/^/#   /' /tmp/case.out | tail -n 20
		if [ -s /tmp/sched.log ]; then
			echo "#   --- scheduler log (tail)"
			tail -n 20 /tmp/sched.log | sed 's/^/#   /'
			[ -d /out ] && cp /tmp/sched.log "/out/$c.sched.log"
		fi
		dmesg | grep -i 'sched_ext\|scx' | tail -n 10 | sed 's/^/#   dmesg: /'
	fi
	cleanup_case
done
[ "$failed" -eq 0 ] || echo "# $failed of $n cases failed"
[ "$failed" -eq 0 ]
