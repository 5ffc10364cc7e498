# shellcheck shell=sh disable=SC2034  # LAUNCH_ERROR and LAUNCHED_PID are for the caller
# Shell helpers shared by the guest scripts that start and stop sched_ext
# schedulers: the vm tier's runner (tests/vm/run-cases.sh) and the
# benchmarks' guest (scripts/bench.d/guest.sh). busybox sh; sourced, with
# STATE set to /sys/kernel/sched_ext/state (or a stand-in).
#
#   wait_state STATE SECONDS   poll $STATE until it reads STATE (tenths of a
#                              second allowed); 1 on timeout
#   pid_alive PID              the process still runs
#   launch_ready SECONDS LOG READY -- CMD...
#                              start CMD in the background (output to LOG),
#                              wait until sched_ext is enabled and the
#                              command READY succeeds (e.g. "build/scx_loehle
#                              ctl get": ready is answering), then 0 with
#                              LAUNCHED_PID set; else kill it, 1, and
#                              LAUNCH_ERROR says why in one line; with
#                              LAUNCH_PID_FILE set, the PID goes there at
#                              once (for a cleanup that may come first)
#   stop_launched PID          SIGINT, wait; returns the exit status

wait_state() {
	_ws_want=$1
	_ws_n=$(awk -v s="${2:-10}" 'BEGIN { printf "%d", s * 10 + 0.5 }')
	while [ "$(cat "$STATE" 2>/dev/null)" != "$_ws_want" ]; do
		[ "$_ws_n" -le 0 ] && return 1
		_ws_n=$((_ws_n - 1))
		sleep 0.1
	done
}

pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

log_tail() { tail -n "${2:-3}" "$1" 2>/dev/null | tr '\n' '|'; }

launch_ready() {
	_lr_secs=$1 _lr_log=$2 _lr_ready=$3
	shift 4  # SECONDS LOG READY --
	LAUNCH_ERROR='' LAUNCHED_PID=''
	"$@" >"$_lr_log" 2>&1 &
	LAUNCHED_PID=$!
	[ -n "${LAUNCH_PID_FILE:-}" ] && echo "$LAUNCHED_PID" >"$LAUNCH_PID_FILE"
	_lr_n=$((_lr_secs * 10))
	while [ "$(cat "$STATE" 2>/dev/null)" != enabled ] || ! $_lr_ready >/dev/null 2>&1; do
		if ! pid_alive "$LAUNCHED_PID"; then
			wait "$LAUNCHED_PID"
			LAUNCH_ERROR="it exited with status $? before it was ready (log: $(log_tail "$_lr_log" 5))"
			LAUNCHED_PID=
			return 1
		fi
		if [ "$_lr_n" -le 0 ]; then
			LAUNCH_ERROR="not ready within $_lr_secs s; state $(cat "$STATE" 2>/dev/null) (log: $(log_tail "$_lr_log" 5))"
			kill -9 "$LAUNCHED_PID" 2>/dev/null
			wait "$LAUNCHED_PID" 2>/dev/null
			LAUNCHED_PID=
			return 1
		fi
		_lr_n=$((_lr_n - 1))
		sleep 0.1
	done
}

stop_launched() {
	kill -INT "$1"
	wait "$1"
}
