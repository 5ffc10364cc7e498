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
#   expect_kernel_log ERE     lines of the kernel log matching ERE are this
#                             case's to provoke (see below)
#   expect_hotplug_reloads    after start_sched in a case that takes CPUs
#                             offline: the kernel's unload lines are
#                             expected where the scheduler reloads on
#                             hotplug (6.18)
#   expect_stalls             the case makes tasks wait beside idle CPUs
# Files a case leaves in /out come back with scripts/vm --out.
#
# Every case also fails, whatever it checked itself, when after it:
#   - the kernel log it produced has a line of a kernel warning, bug or
#     oops, a runnable task stall, or a sched_ext ejection (a "disabled"
#     line for any reason but a stop from user space), unless the case
#     declared that line expected with expect_kernel_log;
#   - /sys/kernel/sched_ext/state does not return to `disabled` within
#     10 s once its scheduler and hogs are stopped.
#   - build/loehle-stallwatch, running beside it, saw a task stay runnable
#     for more than 1 s without CPU time while a CPU it may run on was idle
#     at least half of that time (tests/vm/tools/stallwatch.c); a case
#     that provokes such a wait on purpose says expect_stalls.
# The kernel log of the whole boot lands in /out/dmesg.txt.

cd "$(dirname "$0")/../.." || exit 2
VM_DIR=tests/vm
SCHED=${LOEHLE_SCHED:-build/scx_loehle}
SCX=/sys/kernel/sched_ext
STATE=$SCX/state
REASON=/tmp/case.reason
# Extended regular expressions of kernel log lines the running case
# provokes on purpose, one a line (expect_kernel_log).
KLOG_EXPECTED=/tmp/case.klog-expected
# Kernel log lines that fail a case (unless expected): warnings, bugs,
# oopses, stalls, ejections; a stop from user space is not one.
KLOG_BAD='WARNING:|BUG:|Oops|Kernel panic|runnable task stall|sched_ext: .*(disabled \(|error)'
KLOG_STOP='disabled \(unregistered from user space\)'
STALLWATCH=${LOEHLE_BUILD_DIR:-build}/loehle-stallwatch
STALLS=/tmp/case.stalls
# Its report-only output (-S): tasks taking turns on a busy CPU beside an
# idle one, which the stall rule (no CPU time at all) does not see.
SHARED=/tmp/case.shared
STALLS_EXPECTED=/tmp/case.stalls-expected
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

expect_kernel_log() { printf '%s\n' "$1" >>"$KLOG_EXPECTED"; }
expect_stalls() { touch "$STALLS_EXPECTED"; }

# A case that takes CPUs offline calls this after start_sched: where the
# scheduler reloads on hotplug (6.18's mode, which its log names), the
# kernel's unload line of each change is expected.
expect_hotplug_reloads() {
	grep -q 'CPU hotplug: reloads' /tmp/sched.log &&
		expect_kernel_log 'disabled \(unregistered from the main kernel\)'
	return 0
}

# The stall watcher beside a case: start_watch, stop_watch (in the
# runner's shell, which waits for it), then stall_lines prints what it
# reported, unless the case expected stalls.
start_watch() {
	rm -f "$STALLS" "$STALLS_EXPECTED"
	: >"$STALLS"; : >"$SHARED"
	"$STALLWATCH" -S "$SHARED" "$STALLS" </dev/null >/dev/null 2>&1 &
	WATCH_PID=$!
}
stop_watch() {
	kill -TERM "$WATCH_PID" 2>/dev/null
	wait "$WATCH_PID" 2>/dev/null
}
stall_lines() { [ -f "$STALLS_EXPECTED" ] || cat "$STALLS"; }
# One comment line with the count and the first report of SHARED, if any.
shared_note() {
	[ -s "$SHARED" ] || return 0
	echo "#   report only: $(wc -l <"$SHARED") window(s) of a task sharing a CPU beside an idle one; first: $(head -n 1 "$SHARED")"
	[ -d /out ] && cp "$SHARED" "/out/$1.shared.txt"
	return 0
}

# The lines of the kernel log since the case began that fail it.
kernel_log_failures() {
	dmesg | grep -E "$KLOG_BAD" | grep -Ev "$KLOG_STOP" |
		if [ -s "$KLOG_EXPECTED" ]; then grep -Evf "$KLOG_EXPECTED"; else cat; fi
}

cpulist_count() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF == 2 { n += $2 - $1 + 1; next } NF == 1 && $1 != "" { n++ } END { print n + 0 }'
}

# A case's leftovers must not leak into the next one. Fails (returns 1,
# the reason in $REASON) when the state stays enabled after them.
cleanup_case() {
	_clean=0
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
	# Load a case left running (one that failed before its own kill; a
	# failed seed004_modes_differ once left its SCHED_IDLE hogs to the next
	# case, which then found sched-idle CPUs it did not make).
	_left=0
	for _c in /proc/[0-9]*/comm; do
		case $(cat "$_c" 2>/dev/null) in
		stress-ng*) _p=${_c#/proc/}; kill "${_p%/comm}" 2>/dev/null && _left=1 ;;
		esac
	done
	[ "$_left" -eq 0 ] || sleep 1
	if [ -e "$STATE" ] && ! wait_state disabled 10; then
		echo "state stays '$(cat "$STATE")' 10 s after the case ended" >"$REASON"
		_clean=1
	fi
	for _f in /sys/devices/system/cpu/cpu*/online; do
		[ "$(cat "$_f")" = 1 ] || echo 1 >"$_f" 2>/dev/null || echo "# warning: cannot bring $_f back"
	done
	return "$_clean"
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
i=0 failed=0 failed_names=
for c in $sel; do
	i=$((i + 1))
	rm -f "$REASON" "$KLOG_EXPECTED" /tmp/sched.log
	if ! type "case_$c" >/dev/null 2>&1; then
		echo "not ok $i - $c # no such case (known: $(echo $all))"
		failed=$((failed + 1))
		failed_names="$failed_names $c"
		continue
	fi
	# Each case's kernel log on its own: what came before is kept aside.
	dmesg -c >>/tmp/dmesg.boot 2>/dev/null
	if [ ! -x "$STALLWATCH" ]; then
		echo "not ok $i - $c # no stall watcher: $STALLWATCH is missing"
		failed=$((failed + 1))
		failed_names="$failed_names $c"
		continue
	fi
	start_watch
	t0=$(cut -d' ' -f1 /proc/uptime)
	( "case_$c" ) >/tmp/case.out 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	# The checks every case passes too; the case's own reason comes first.
	if [ "$rc" -eq 0 ]; then
		cleanup_case || rc=1
		stop_watch
		stalls=$(stall_lines)
		klog=$(kernel_log_failures)
		if [ "$rc" -eq 0 ] && [ -n "$stalls" ]; then
			echo "$(echo "$stalls" | wc -l) stall(s): $(echo "$stalls" | head -n 2 | tr '\n' '|')" >"$REASON"
			rc=1
		fi
		if [ "$rc" -eq 0 ] && [ -n "$klog" ]; then
			echo "kernel log: $(echo "$klog" | head -n 3 | tr '\n' '|')" >"$REASON"
			rc=1
		fi
	else
		cleanup_case
		stop_watch
		stall_lines | head -n 5 >>/tmp/case.out
	fi
	if [ "$rc" -eq 0 ]; then
		echo "ok $i - $c # ${secs} s"
		# A passing case's last lines carry its figures.
		tail -n "${LOEHLE_CASE_LINES:-6}" /tmp/case.out | sed 's/^/#   /'
	else
		reason=$(cat "$REASON" 2>/dev/null)
		echo "not ok $i - $c # ${reason:-exit status $rc}"
		failed=$((failed + 1))
		failed_names="$failed_names $c"
		sed 's/^/#   /' /tmp/case.out | tail -n 20
		if [ -s /tmp/sched.log ]; then
			echo "#   --- scheduler log (tail)"
			tail -n 20 /tmp/sched.log | sed 's/^/#   /'
			[ -d /out ] && cp /tmp/sched.log "/out/$c.sched.log"
		fi
		dmesg | grep -iE 'sched_ext|scx|WARNING:|BUG:|stall' | tail -n 10 | sed 's/^/#   dmesg: /'
	fi
	shared_note "$c"
done
dmesg -c >>/tmp/dmesg.boot 2>/dev/null
[ -d /out ] && cp /tmp/dmesg.boot /out/dmesg.txt
[ "$failed" -eq 0 ] || echo "# $failed of $n cases failed:$failed_names"
[ "$failed" -eq 0 ]
