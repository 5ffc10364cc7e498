# Stall paths (issue 29): a runnable task must never wait beside an idle
# CPU, nor behind idle work, for longer than the rules in
# Documentation/policies.md ("Who runs a task next, and by when") allow.
# Each case here failed on the code before its fix (the note of issue 29
# has the figures) and has a mutant in scripts/mutate.d/mutants.txt.
# Sourced by tests/vm/run-cases.sh; 8 CPUs, SMT 2, 2 nodes.

EXITBIG=${LOEHLE_BUILD_DIR:-build}/loehle-exitbig
PERCPU_WORK=${LOEHLE_BUILD_DIR:-build}/loehle-percpu-work

# The kernel's count of exiting tasks it put into a local DSQ without
# ops.enqueue (SCX_EV_ENQ_SKIP_EXITING, /sys/kernel/sched_ext/root/events).
skip_exiting() {
	awk '$1 == "SCX_EV_ENQ_SKIP_EXITING" { print $2 }' "$SCX/root/events"
}

# median, sum: of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
sum() { awk '{ s += $1 } END { print s + 0 }'; }

# exit_runs: 7 exits of a 768-MiB process on CPU 0 beside a hog on its
# sibling CPU 1 under each of --smt=off and idle-core, alternating by live
# switch in one scheduler run at 1-ms slices (about 20 slice ends per
# exit), so that a guest slowing down or speeding up (a neighbour guest on
# the host) weighs on both alike: two runs one after the other once read
# 40 ms, then 128 ms. Everything else is on CPU 7, so that cores 2-3 and
# 4-5 stay wholly idle (what makes seed 002's move wanted at each of the
# exit's slice ends). Prints "off_median_us off_skipped dfl_median_us
# dfl_skipped"; `skipped`: exiting tasks the kernel put into a local DSQ
# meanwhile.
exit_runs() {
	start_sched --smt=off --slice-us=1000
	start_pinned_hogs 1
	[ -n "$(skip_exiting)" ] || fail "no SCX_EV_ENQ_SKIP_EXITING in $SCX/root/events"
	for smt in off idle-core; do : >/tmp/exit.$smt; : >/tmp/skipped.$smt; done
	i=0
	while [ $i -lt 7 ]; do
		i=$((i + 1))
		for smt in off idle-core; do
			"$SCHED" ctl set --smt=$smt >/dev/null || fail "ctl set --smt=$smt failed"
			_e0=$(skip_exiting)
			_r=$(taskset -c 7 "$EXITBIG" 0 768 1) || fail "--smt=$smt: loehle-exitbig failed: $_r"
			_e1=$(skip_exiting)
			echo "${_r%% *}" >>/tmp/exit.$smt
			echo $((_e1 - _e0)) >>/tmp/skipped.$smt
		done
	done
	hogs_alive "the exits"
	stop_hogs
	expect_enabled "the exits"
	stop_sched
	echo "$(median </tmp/exit.off) $(sum </tmp/skipped.off)" \
		"$(median </tmp/exit.idle-core) $(sum </tmp/skipped.idle-core)"
}

# Stall path 1: an exiting task's slice ends beside a busy sibling while a
# whole core is idle. Seed 002's move must not apply to it: the kernel
# never calls ops.enqueue for an exiting task, so dispatch not keeping it
# puts it into the local DSQ of a CPU about to go idle, with nothing of
# the scheduler's to run it (loehle_smt_movable; the idle CPU's self-kick,
# loehle_idle_kicks_itself, is the backstop). It keeps its CPU instead.
# Checked by the kernel's own count of exiting tasks it put into a local
# DSQ, over 7 exits per setting alternating in one scheduler run
# (exit_runs): under idle-core (the default) at most one per exit more
# than under --smt=off, where the exiting task keeps its CPU by design and the count
# comes only from kworkers queued beside it (18-22 in 7 exits on both
# kernels, alternating). Before the fix the move made it about 8 per exit (38 in 5
# exits, 7.3.4), so the margin is wide both ways. The count is the rule's
# check; the exit times only guard against a stall (an exiting task left
# until the watchdog, seconds): under TCG the CPU's next tick ended each
# wait, so the times differed little before the fix (a median of 23.7
# against 23.9 ms). They must stay within 2x of --smt=off's plus 60 ms:
# alternating keeps the comparison fair against a slow host on average
# (with the two settings in runs one after the other, host load on one
# run alone once made them 128 against 40 ms), yet with two guests and a
# build on the 2-core host the medians read 123 against 64 ms, past an
# earlier bound of 1.2x plus 30 ms (107 ms) that this case failed there.
case_exiting_task_keeps_its_cpu() {
	pin_everything_to 7
	trap 'pin_everything_to 0-7' EXIT
	set -- $(exit_runs) || exit 1
	off=$1 off_skipped=$2 dfl=$3 dfl_skipped=$4
	[ -n "$dfl" ] && [ -n "$off" ] || exit 1
	echo "exit of a 768-MiB process beside a busy sibling: median $dfl us, exiting tasks put into a local DSQ by the kernel $dfl_skipped (idle-core, the default); $off us, $off_skipped (off)"
	[ "$dfl_skipped" -le $((off_skipped + 7)) ] ||
		fail "seed 002's move left exiting tasks to the kernel's local DSQ $dfl_skipped times in 7 exits ($off_skipped under --smt=off)"
	awk -v d="$dfl" -v o="$off" 'BEGIN { exit !(d <= 2 * o + 60000) }' ||
		fail "the exit took $dfl us under idle-core against $off us under --smt=off"
}

# Stall path 3: a per-CPU kthread (kworker/3) waking on a CPU that runs
# idle work preempts it at once, as under the fair class, instead of
# waiting for the idle task's slice. A SCHED_IDLE hog pinned to CPU 3 and
# a 100-ms slice (--slice-us=100000) make a wait for the slice 100 ms
# long; 40 writes to /proc/sys/vm/stat_refresh each wait for every CPU's
# kworker. Bounds: median under 30 ms and p80 (the 33rd of the 40 writes)
# under 90 ms, a slice-long wait being at least 100 ms. Before the fix:
# median 104 ms, p99 108 ms (7.3.4), every write a slice long, so both
# bounds fail on the broken rule (power: any break that makes more than 8
# of 40 writes wait a slice). After: median 3.9 ms, p99 27.8 ms beside a
# second guest; with two guests and a build on the 2-core host, median
# 14.8 ms and one write of the 40 at 105 ms, which failed the earlier
# bound on the max. False failures: the p80 bound needs 8 or more such
# hiccups in 40 writes; at the 1 in 40 seen, taken as independent, that
# is about 1 run in 100,000 (Poisson, mean 1), and 1 in 20 only at a
# hiccup every 10th write. The median keeps a margin of 2x or more both
# ways. The reference run (CPU 3 running the same hog as normal work,
# which a kworker does not preempt: median 104 ms) shows the slice is
# felt.
# percpu_work_beside WHAT COUNT CMD...: "median p80 max" (us) of COUNT
# stat_refresh writes while CMD, a hog on CPU 3, runs.
percpu_work_beside() {
	_what=$1 _count=$2
	shift 2
	"$@" >/dev/null 2>&1 &
	echo "$!" >>"$HOGS_PID_FILE"
	_hog=$!
	first_child_or_fail "$_hog" "$_what" >/dev/null || exit 1
	sleep 1
	_r=$("$PERCPU_WORK" "$_count") || fail "loehle-percpu-work failed beside $_what: $_r"
	kill "$_hog"; wait "$_hog" 2>/dev/null
	echo "$_r"
}

case_kthread_preempts_idle_work() {
	start_sched --slice-us=100000
	idle=$(percpu_work_beside "the SCHED_IDLE hog" 40 taskset -c 3 chrt --idle 0 \
		stress-ng --cpu 1 --cpu-method int64 -t 600 --quiet) || exit 1
	normal=$(percpu_work_beside "the normal hog" 10 taskset -c 3 \
		stress-ng --cpu 1 --cpu-method int64 -t 600 --quiet) || exit 1
	expect_enabled "per-CPU work beside a pinned hog"
	stop_sched
	echo "stat_refresh (median p80 max, us) beside a SCHED_IDLE hog on CPU 3: $idle; beside a normal one: $normal"
	set -- $idle
	[ "$1" -lt 30000 ] && [ "$2" -lt 90000 ] ||
		fail "kworker/3 waited behind idle work: stat_refresh median $1 us, p80 $2 us at a 100-ms slice"
}

# offline_within SECONDS CPU: take CPU offline, failing when the write has
# not returned after SECONDS (it then returns once the hogs end, at most
# 60 s later). Prints the time it took, in seconds.
offline_within() {
	_t0=$(cut -d' ' -f1 /proc/uptime)
	( echo 0 >"/sys/devices/system/cpu/cpu$2/online" ) &
	_w=$!
	_n=$(($1 * 10))
	while kill -0 "$_w" 2>/dev/null; do
		[ "$_n" -le 0 ] && fail "taking CPU $2 offline did not return within $1 s (state $(cat "$STATE"))"
		_n=$((_n - 1))
		sleep 0.1
	done
	wait "$_w" || fail "cannot take CPU $2 offline"
	awk -v a="$_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }'
}

# Stall path 4: an LLC loses its last online CPU while work waits in its
# queues, normal work saturating the rest. Tasks queued there are counted
# on their CPU's runqueue, and the kernel's hotplug of that CPU waits for
# them to leave; the dying CPU stops dispatching once inactive, and other
# LLCs' CPUs look at remote queues only when their own is empty, which
# under this load they never are (cpu_offline hands the dying CPU's tasks
# to the global DSQ, loehle_offline_takes; before that, in the CPU's
# synchronize_rcu(), the remote overdue turn serves them,
# loehle_remote_overdue). In LLC 1: 4
# SCHED_IDLE hogs, and 8 normal hogs for its 4 CPUs, so that 4 of them
# wait in its normal queue at any time; half of each kind then allowed
# everywhere, the other half kept on CPUs 4-7 (every CPU of their mask
# goes: the kernel breaks their affinity). Beside them 8 normal hogs
# anywhere. CPUs 5, 6, 7, then 4 go offline: each write returns within
# 5 s (measured below). In the soak, without either rule, the last write
# waited 23 s for a reader preempted in its LLC's queue, and the kernel
# ejected the scheduler for the RCU stall; this case did not reproduce it
# (a mutant that left the dying CPU's tasks in LLC 1's queues survived it
# on 7.3.4), so it checks the bound, and the soak's whole-node offline is
# the reproducer. Nor does it show cpu_offline handing tasks on: in a run
# of 2026-12-07 on 7.3.4 it found none to hand on (0 rehomed, the rule
# intact; why none is open), so whether it takes the right ones is the
# unit tier's (QueueOfflineTakes.*). On 6.18 each change reloads
# the scheduler (its hotplug mode): the same bound holds across reloads.
case_offline_whole_llc_with_idle_work() {
	start_sched
	expect_hotplug_reloads
	stress-ng --cpu 8 --cpu-method int64 -t 60 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	normal=$!
	taskset -c 4-7 stress-ng --cpu 8 --cpu-method int64 -t 60 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	llc1_normal=$!
	taskset -c 4-7 chrt --idle 0 stress-ng --cpu 4 --cpu-method int64 -t 60 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	idle=$!
	idle_workers=$(children_of "$idle" 4 100)
	normal_workers=$(children_of "$llc1_normal" 8 100)
	[ "$(echo $idle_workers | wc -w)" -eq 4 ] || fail "expected 4 SCHED_IDLE hogs, got [$idle_workers]"
	[ "$(echo $normal_workers | wc -w)" -eq 8 ] || fail "expected 8 normal hogs in LLC 1, got [$normal_workers]"
	for pid in $idle $llc1_normal $(echo $idle_workers | cut -d' ' -f1-2) $(echo $normal_workers | cut -d' ' -f1-4); do
		taskset -p -c 0-7 "$pid" >/dev/null || fail "cannot widen $pid's mask"
	done
	sleep 2
	took=
	for cpu in 5 6 7 4; do
		t=$(offline_within 5 $cpu) || exit 1
		took="$took cpu$cpu=${t}s"
		sleep 0.5
	done
	for cpu in 4 5 6 7; do
		echo 1 >/sys/devices/system/cpu/cpu$cpu/online || fail "cannot bring CPU $cpu back"
	done
	kill "$normal" "$llc1_normal" "$idle" 2>/dev/null
	wait "$normal" "$llc1_normal" "$idle" 2>/dev/null
	stats=$("$SCHED" ctl stats --json 2>/dev/null)
	rehomed=$(echo "$stats" | grep -o '"offline_rehomed":[0-9]*' | awk -F: '{ n += $2 } END { print n + 0 }')
	refused=$(echo "$stats" | grep -o '"kick_from_offline":[0-9]*' | awk -F: '{ n += $2 } END { print n + 0 }')
	echo "offline writes:$took; tasks rehomed from offline CPUs: $rehomed; kicks refused on an offline CPU: $refused"
	wait_state enabled 30 || fail "state is '$(cat "$STATE")' after the hotplug"
	expect_enabled "LLC 1 going offline beside idle work"
	stop_sched
}

# run_ns PID: nanoseconds PID has run (/proc/PID/schedstat, exact where
# /proc/PID/stat counts ticks; a 5-ms turn may fall between two ticks).
run_ns() { awk '{ print $1 }' "/proc/$1/schedstat" 2>/dev/null; }

# Stall path 2: an idle task pinned to a CPU whose normal hog keeps it,
# while other idle work of its LLC keeps starting (six SCHED_IDLE hogs on
# CPUs 0, 1 and 3, three more than their CPUs, so one starts at every
# slice end), so the LLC's allowance, decided by when idle work last
# started in the LLC, never comes due on CPU 2. The pinned task is a
# SCHED_IDLE hog too; it must run in each of four 15-s windows (the
# per-task bound is 5 s plus a slice; loehle_idle_overdue), and the
# scheduler stays enabled for the 60 s (a task starved for 30 s would have
# the watchdog eject it). Without the overdue turn it ran 0 ms in the
# first window on both kernels.
case_pinned_idle_work_runs() {
	start_sched
	taskset -c 2 stress-ng --cpu 1 --cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	first_child_or_fail "$!" "the normal hog on CPU 2" >/dev/null || exit 1
	taskset -c 0,1,3 chrt --idle 0 stress-ng --cpu 6 --cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	sleep 1
	# Started normal, made SCHED_IDLE once its worker runs: every wakeup
	# of an idle task beside the hog may wait the bound, and stress-ng's
	# start has many.
	taskset -c 2 stress-ng --cpu 1 --cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	pinned=$(first_child_or_fail "$!" "the pinned hog") || exit 1
	chrt --idle -p 0 "$pinned" || fail "cannot make the pinned hog SCHED_IDLE"
	w=0 last=$(run_ns "$pinned") per=
	while [ $w -lt 4 ]; do
		w=$((w + 1))
		sleep 15
		now=$(run_ns "$pinned")
		per="$per $(((now - last) / 1000000))"
		[ "$now" -gt "$last" ] || fail "the pinned SCHED_IDLE hog did not run in window $w of 15 s (ms run per window:$per; idle overdue turns $(gen_value 1 "idle overdue"))"
		last=$now
		expect_enabled "window $w of the pinned SCHED_IDLE hog"
	done
	overdue=$(gen_value 1 "idle overdue")
	echo "pinned SCHED_IDLE hog's ms run per 15-s window:$per; idle overdue turns $overdue"
	stop_sched
}

# Stall path 5: the longest slice (--slice-us=1000000), a normal CPU hog on
# every CPU and 10 SCHED_IDLE hogs per LLC (20). With the allowance alone,
# whose floor is 4 slices, the 10 tasks of an LLC took 40 s for one turn
# each, past the watchdog's 30 s. Overdue idle tasks get short turns after
# 5 s: after 90 s the scheduler is still enabled and every SCHED_IDLE hog
# has run in the last 45 s (a bound of 9x the design's 5 s, for TCG).
# Without the overdue turn the kernel ejected the scheduler within the 90 s
# (an RCU CPU stall: a starved SCHED_IDLE task) on both kernels.
case_overdue_bound_at_longest_slice() {
	start_sched --slice-us=1000000
	# The idle hogs first, on free CPUs: stress-ng's start, beside
	# saturating normal work, would wait the bound at each of its wakeups.
	chrt --idle 0 stress-ng --cpu 20 --cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	idle=$!
	workers=$(children_of "$idle" 20 300)
	[ "$(echo $workers | wc -w)" -eq 20 ] || fail "expected 20 SCHED_IDLE hogs, got [$workers]"
	stress-ng --cpu 8 --cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	first_child_or_fail "$!" "the normal hogs" >/dev/null || exit 1
	sleep 45
	for pid in $workers; do eval "t_$pid=$(run_ns $pid)"; done
	sleep 45
	expect_enabled "90 s of 1-s slices beside 20 SCHED_IDLE hogs"
	stuck=0
	for pid in $workers; do
		now=$(run_ns $pid)
		eval "before=\$t_$pid"
		[ -n "$now" ] && [ "$now" -gt "$before" ] || stuck=$((stuck + 1))
	done
	overdue=$(gen_value 1 "idle overdue")
	echo "SCHED_IDLE hogs without CPU time in the last 45 s: $stuck of 20; idle overdue turns $overdue"
	[ "$stuck" -eq 0 ] || fail "$stuck of 20 SCHED_IDLE hogs got no CPU time in 45 s at 1-s slices"
	stop_sched
}

# "avg p99" wakeup latency in us of a normal timer sleeper
# (build/loehle-wakelat, 5-ms period) on CPUs $1, over $2 wakeups.
wakelat_avg_p99_us() {
	taskset -c "$1" "$WAKELAT" 5000 "$2" | awk '{ print $1, $2 }'
}

# Stall path 6: under --sched-idle=mainline and idle-first a SCHED_IDLE
# wakee packed onto a sched-idle CPU went into that CPU's local DSQ, where
# it ran ahead of normal work queued in the LLC: the SCX_KICK_PREEMPT
# meant for that normal work ran the packed task instead, until it slept.
# Now it goes to its idle queue (loehle_sched_idle_pick_goes_local).
# Layout (everything else on CPU 4, 100-ms slices): a normal hog on CPU 2,
# a SCHED_IDLE hog on CPU 3, a SCHED_IDLE sleeper on CPUs 2-3 that runs
# 20 ms at a time (CPU 3 is its sched-idle CPU: prev, unclaimed); the
# probe, a normal timer sleeper on CPU 3, is queued at each wakeup and
# preempts the idle hog. Under wakee-aware idle wakees never pack: the
# other modes' p99 must stay within 2x of its, or 5 ms over it, whichever
# is more (TCG timer noise; each packed run ahead costs up to 20 ms). The
# bound is empirical, not a stated false-failure rate: over 12 runs after
# the fix (6 per kernel) the closest p99 came to 0.76 of its bound; before
# it every run passed its bound by 1.8-2.3x (avg 13-24 ms against 2.5-6.4).
case_packed_idle_work_behind_normal() {
	[ -x "$WAKELAT" ] || fail "$WAKELAT is missing (built with the project)"
	start_sched --sched-idle=wakee-aware --slice-us=100000
	pin_everything_to 4
	trap 'pin_everything_to 0-7' EXIT
	start_pinned_hogs 2
	taskset -c 3 chrt --idle 0 stress-ng --cpu 1 --cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	first_child_or_fail "$!" "the SCHED_IDLE hog" >/dev/null || exit 1
	taskset -c 2,3 chrt --idle 0 stress-ng --cpu 1 --cpu-load 70 --cpu-load-slice 20 \
		--cpu-method int64 -t 600 --quiet &
	echo "$!" >>"$HOGS_PID_FILE"
	first_child_or_fail "$!" "the SCHED_IDLE sleeper" >/dev/null || exit 1
	sleep 1
	set -- $(wakelat_avg_p99_us 3 400)
	[ $# -eq 2 ] || fail "no latency figures ($WAKELAT printed nothing)"
	ref=$2 gen=1 out="wakee-aware avg $1 p99 $2 us"
	for mode in idle-first mainline; do
		"$SCHED" ctl set --sched-idle=$mode >/dev/null || fail "ctl set --sched-idle=$mode failed"
		gen=$((gen + 1))
		sleep 0.5
		set -- $(wakelat_avg_p99_us 3 400)
		[ $# -eq 2 ] || fail "no latency figures under $mode"
		out="$out; $mode avg $1 p99 $2 us (sched-idle picks without preemption $(gen_value $gen "sched-idle no-preempt"))"
		eval "p99_$(echo $mode | tr - _)=$2"
	done
	stop_hogs
	echo "normal timer wakee beside packed SCHED_IDLE work: $out"
	bound=$((ref * 2))
	[ "$bound" -ge $((ref + 5000)) ] || bound=$((ref + 5000))
	[ "$p99_idle_first" -le "$bound" ] || fail "under idle-first the normal wakee's p99 was $p99_idle_first us, past $bound us ($out)"
	[ "$p99_mainline" -le "$bound" ] || fail "under mainline the normal wakee's p99 was $p99_mainline us, past $bound us ($out)"
	expect_enabled "the packed SCHED_IDLE work"
	stop_sched
}
