# Observability: the top dashboard, /metrics, pick-event traces under
# overload. Sourced by tests/vm/run-cases.sh (see there for the helpers).
# Files left in /out (top screen, a metrics scrape with the stats reply of
# the same moment) are checked again on the host by
# tests/vm/check-metrics.py.

SOCK=/run/scx_loehle.sock

ctl_generation() {
	"$SCHED" ctl get | sed -n 's/^generation \([0-9]*\):.*/\1/p'
}

# `top` in a tmux pane of 80x24: header and per-CPU rows on screen; `p`
# starts a new generation; `q` ends it.
case_top_tmux() {
	command -v tmux >/dev/null || fail "no tmux in the guest (install tmux on the host)"
	start_sched
	export TERM=screen
	tmux new-session -d -s top -x 80 -y 24 "$SCHED top --interval 0.5" ||
		fail "tmux cannot start top"
	sleep 3
	tmux capture-pane -p -t top >/out/top-screen.txt
	grep -q '^scx_loehle top  up .* sched_ext enabled (loehle)' /out/top-screen.txt || fail "no header on screen: $(head -n 3 /out/top-screen.txt | tr '\n' '|')"
	grep -q '^gen 1  policy reservoir' /out/top-screen.txt || fail "no generation line: $(sed -n 2p /out/top-screen.txt)"
	grep -q '^n0 L0 *fork ' /out/top-screen.txt || fail "no per-CPU row for n0 L0"
	grep -q '^n1 L1 *fork ' /out/top-screen.txt || fail "no per-CPU row for n1 L1"
	grep -q '^q quit' /out/top-screen.txt || fail "no help line"
	before=$(ctl_generation)
	tmux send-keys -t top p
	n=50
	while [ "$(ctl_generation)" = "$before" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	after=$(ctl_generation)
	[ "$after" = $((before + 1)) ] || fail "generation $before -> $after after pressing p"
	"$SCHED" ctl get | grep -q 'policy=builtin' || fail "p did not switch reservoir -> builtin: $("$SCHED" ctl get)"
	sleep 1.5
	tmux capture-pane -p -t top >/out/top-screen-after-p.txt
	grep -q "^gen $after  policy builtin" /out/top-screen-after-p.txt || fail "screen does not show generation $after"
	tmux send-keys -t top q
	n=30
	while tmux has-session -t top 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	tmux has-session -t top 2>/dev/null && { tmux kill-server; fail "top did not quit on q"; }
	stop_sched
}

# When the scheduler goes away, top (plain mode) says so and fails.
case_top_scheduler_gone() {
	start_sched
	"$SCHED" top --count 100 --interval 0.3 >/tmp/top.out 2>/tmp/top.err &
	top_pid=$!
	sleep 1.5
	stop_sched
	wait "$top_pid"
	rc=$?
	[ "$rc" -ne 0 ] || fail "top exited 0 after the scheduler went away"
	grep -q 'went away' /tmp/top.err || fail "top did not say why: $(cat /tmp/top.err)"
	grep -q '^scx_loehle top' /tmp/top.out || fail "no frame printed before"
}

# /metrics: Prometheus text, counters agree with `ctl stats --json`.
case_metrics() {
	start_sched --metrics-addr=127.0.0.1:9464
	stress-ng --fork 2 -t 3 --quiet || fail "stress-ng failed"
	# Freeze generation 1: its counters stop once generation 2 is active.
	"$SCHED" ctl set --policy first >/dev/null || fail "ctl set failed"
	sleep 0.5
	wget -q -O /out/metrics.txt http://127.0.0.1:9464/metrics || fail "wget /metrics failed"
	"$SCHED" ctl stats --json >/out/metrics-stats.json || fail "ctl stats --json failed"
	wget -q -O /tmp/nope http://127.0.0.1:9464/nope 2>/tmp/wget.err && fail "/nope did not fail"
	grep -q 404 /tmp/wget.err || fail "/nope is not a 404: $(cat /tmp/wget.err)"
	# Format: TYPE before every family's samples, sample lines well formed.
	awk '
		/^# TYPE / { typed[$3] = 1; next }
		/^# HELP / { next }
		/^#/ { print "stray comment: " $0; bad = 1; next }
		{
			name = $1; sub(/\{.*/, "", name)
			if (!(name in typed)) { print "sample before its TYPE: " $0; bad = 1 }
			if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eE]+$/) {
				print "malformed: " $0; bad = 1
			}
			n++
		}
		END { if (n < 50) { print "only " n " samples"; bad = 1 } exit bad }
	' /out/metrics.txt >/tmp/awk.out || fail "metrics format: $(head -n 3 /tmp/awk.out | tr '\n' '|')"
	grep -q '^scx_loehle_generation 2$' /out/metrics.txt || fail "generation gauge is not 2"
	fork=$(sed -n 's/^scx_loehle_selects_total{generation="1",policy="reservoir",[^}]*path="fork"} \([0-9]*\)$/\1/p' /out/metrics.txt)
	[ "${fork:-0}" -gt 0 ] || fail "no fork selects for generation 1 in the metrics"
	grep -q "\"select_fork\":$fork[,}]" /out/metrics-stats.json ||
		fail "generation 1 select_fork: metrics $fork, not in ctl stats --json"
	stop_sched
}

# Overload: every pick sampled, the reader stopped under fork and wakeup
# load: the BPF ring buffer fills, drops are counted and shown, and the
# scheduler stays enabled throughout.
case_overload() {
	start_sched --sample-every=1
	"$SCHED" trace --out=/tmp/trace.jsonl --duration=2 2>/tmp/trace.err || fail "trace failed: $(cat /tmp/trace.err)"
	grep -q '"path":"' /tmp/trace.jsonl || fail "trace wrote no events: $(cat /tmp/trace.err)"
	kill -STOP "$SCHED_PID"
	# Context switches through pipes: the most picks per second in a guest.
	stress-ng --switch 8 --fork 2 -t 8 --quiet &
	load=$!
	wait "$load" || { kill -CONT "$SCHED_PID"; fail "stress-ng failed under overload"; }
	[ "$(cat "$STATE")" = enabled ] || { kill -CONT "$SCHED_PID"; fail "state is $(cat "$STATE") while the reader was stopped"; }
	kill -CONT "$SCHED_PID"
	sleep 0.5
	"$SCHED" ctl stats --json >/tmp/stats.json
	# drops_total: event_drops over every generation, in one place (the
	# counters also appear under older_generations).
	drops=$(sed -n 's/.*"drops_total":\([0-9]*\).*/\1/p' /tmp/stats.json)
	[ "${drops:-0}" -gt 0 ] || fail "no event drops counted (stats: $(head -c 300 /tmp/stats.json))"
	"$SCHED" top --once --interval 0.5 >/out/overload-top.txt || fail "top --once failed"
	grep -q "drops/s [0-9.kM]* ([1-9]" /out/overload-top.txt || fail "top does not show the drops: $(grep drops /out/overload-top.txt)"
	sched_alive || fail "the scheduler died"
	[ "$(cat "$STATE")" = enabled ] || fail "state is $(cat "$STATE") after the overload"
	stop_sched
}

# The scx_stats protocol of sched_ext's own schedulers on its usual socket,
# beside the control socket, with the same mode; the reply counts what the
# control socket's stats reply counts.
case_scx_stats_socket() {
	stats_sock=/var/run/scx/root/stats
	start_sched
	[ -S "$stats_sock" ] || fail "no socket at $stats_sock (log: $(tail -n 3 /tmp/sched.log | tr '\n' '|'))"
	mode=$(stat -c %a "$stats_sock")
	[ "$mode" = 600 ] || fail "$stats_sock has mode $mode, not 600"
	stress-ng --fork 2 -t 2 --quiet || fail "stress-ng failed"
	"$SCHED" ctl send --socket="$stats_sock" '{"req":"stats_meta"}' >/tmp/meta.json ||
		fail "stats_meta failed: $(head -c 200 /tmp/meta.json)"
	grep -q '"Stats":{' /tmp/meta.json || fail "stats_meta has no Stats struct: $(head -c 200 /tmp/meta.json)"
	grep -q '"claim_failures":{"datum":"u64","desc":"' /tmp/meta.json ||
		fail "stats_meta does not describe claim_failures"
	"$SCHED" ctl send --socket="$stats_sock" '{"req":"stats","args":{"target":"top"}}' >/tmp/top.json ||
		fail "stats top failed: $(head -c 200 /tmp/top.json)"
	grep -q '^{"args":{"resp":{' /tmp/top.json || fail "stats top reply is not {args:{resp:...}}: $(head -c 200 /tmp/top.json)"
	grep -q '"errno":0}$' /tmp/top.json || fail "stats top errno is not 0"
	forks=$(sed -n 's/.*"select_fork":\([0-9]*\).*/\1/p' /tmp/top.json)
	[ "${forks:-0}" -gt 0 ] || fail "no select_fork in the top target: $(head -c 300 /tmp/top.json)"
	"$SCHED" ctl send --socket="$stats_sock" '{"req":"restart"}' >/tmp/bad.json &&
		fail "an unknown req was not refused"
	grep -q '"errno":22' /tmp/bad.json || fail "unknown req: not EINVAL: $(cat /tmp/bad.json)"
	# The control socket still answers beside it.
	"$SCHED" ctl get >/dev/null || fail "the control socket stopped answering"
	stop_sched
	[ -e "$stats_sock" ] && fail "$stats_sock is left behind after the scheduler stopped"
	# The scx schedulers' client spelling, against our control socket.
	start_sched --scx-stats-socket=
	[ -e "$stats_sock" ] && fail "--scx-stats-socket= still served $stats_sock"
	timeout 5 "$SCHED" --monitor=1 >/tmp/monitor.txt 2>&1 &
	mon=$!
	sleep 2.5
	kill "$mon" 2>/dev/null
	wait "$mon"
	[ "$(grep -c '^kernel ' /tmp/monitor.txt)" -ge 2 ] || fail "--monitor=1 printed fewer than 2 reports: $(head -c 200 /tmp/monitor.txt)"
	stop_sched
}

# The control socket under abuse (loader/net/json_lines.h has the limits),
# driven by build/loehle-hammer. 64 clients at once, each sending 300 gets
# one at a time: the 32 the server takes get every answer, the others one
# "too many busy clients" line, and nothing goes unanswered; 2000 stats
# requests from a client that never reads: it is dropped once 1 MiB of
# replies waits; 1000 connections that send half a line and hang up. After
# each, a fresh client's get is answered at once and the scheduler is still
# enabled. An unprivileged uid cannot connect (the socket is 0600) and says
# so in one line; a symlink at the socket path is refused, not replaced.
case_socket_abuse() {
	start_sched
	sock=/run/scx_loehle.sock
	out=$(build/loehle-hammer "$sock" clients 300 64 300) || fail "64 clients: $out"
	clients_out=$out
	ok=$(echo "$out" | awk '{ print $4 }')
	refused=$(echo "$out" | awk '{ print $8 }')
	[ "$ok" -ge 9600 ] || fail "64 clients: fewer than 32 x 300 answers: $out"
	[ "$refused" -eq 32 ] || fail "64 clients: $refused turned away with a reason, not 32: $out"
	out=$(build/loehle-hammer "$sock" no-read 3 2000) || fail "a client that never reads: $out"
	noread_out=$out
	out=$(build/loehle-hammer "$sock" connect-drop 120 1000) || fail "1000 connect/drop: $out"
	echo "1000 connect/drop: $out"
	expect_enabled "the socket abuse"
	# util-linux's setpriv (busybox's has no --reuid).
	[ -x /usr/bin/setpriv ] || fail "no util-linux setpriv in the guest (scripts/vm stages it)"
	/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$SCHED" ctl get >/tmp/nobody.out 2>&1 &&
		fail "uid 65534 got an answer: $(cat /tmp/nobody.out)"
	[ "$(wc -l </tmp/nobody.out)" -eq 1 ] || fail "uid 65534: not one line: $(cat /tmp/nobody.out)"
	echo "uid 65534 -> $(cat /tmp/nobody.out)"
	grep -qx 'scx_loehle: cannot connect to /run/scx_loehle.sock: Permission denied' /tmp/nobody.out ||
		fail "uid 65534: $(cat /tmp/nobody.out)"
	stop_sched
	echo keep >/tmp/target.txt
	ln -sf /tmp/target.txt /tmp/abuse.sock
	"$SCHED" --socket=/tmp/abuse.sock --scx-stats-socket= >/tmp/symlink.out 2>&1 &&
		fail "the scheduler started on a symlinked socket path"
	echo "symlink -> $(cat /tmp/symlink.out)"
	grep -q 'not a socket; not replacing it' /tmp/symlink.out || fail "symlink: $(cat /tmp/symlink.out)"
	[ -L /tmp/abuse.sock ] && [ "$(cat /tmp/target.txt)" = keep ] || fail "the symlink or its target changed"
	rm -f /tmp/abuse.sock /tmp/target.txt
	echo "64 clients x 300 gets: $clients_out; 2000 unread stats: $noread_out"
}
