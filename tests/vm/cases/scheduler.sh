# The scheduler itself (issue 4): every policy and SCHED_IDLE mode, live
# switching, and the seeds' rules observed in the kernel. Sourced by
# tests/vm/run-cases.sh; each case_NAME runs in a subshell. These cases
# expect the default VM topology of the vm tier: 8 CPUs, SMT 2, 2 nodes.

# The block of `ctl stats` text for generation $1.
gen_block() {
	"$SCHED" ctl stats | awk -v g="$1" '/^gen / { on = ($2 == g) } on'
}

# A number that follows a label in generation $1's block, e.g. "packing".
gen_value() {
	block_value "$(gen_block "$1")" "$2"
}

# The number after label $2 in a generation's block $1 (already fetched).
block_value() {
	echo "$1" | tr ',;:' '\n\n\n' | awk -v k="$2" '
		{ sub(/^ +/, "") }
		index($0, k " ") == 1 { print $(split(k, a, " ") + 1); exit }'
}

# Fork picks per CPU of generation $1, space separated.
gen_fork_picks() {
	gen_block "$1" | sed -n 's/.*fork picks per CPU \[\([0-9 ]*\)\].*/\1/p'
}

# Chi-square of the counts on stdin (one line) against a uniform spread,
# restricted to the CPUs listed in $1 (e.g. "0 1 2 3").
chi_square() {
	awk -v cpus="$1" '{
		n = split(cpus, c, " "); total = 0
		for (i = 1; i <= n; i++) total += $(c[i] + 1)
		if (total == 0) { print -1; exit }
		e = total / n; x = 0
		for (i = 1; i <= n; i++) { d = $(c[i] + 1) - e; x += d * d / e }
		printf "%.1f %d\n", x, total
	}'
}

expect_enabled() {
	[ "$(cat "$STATE")" = enabled ] || fail "state is '$(cat "$STATE")' after $1, not enabled (ejected? $(dmesg | grep -i sched_ext | tail -n 2 | tr '\n' '|'))"
	sched_alive || fail "the scheduler died during $1"
}

case_policy_matrix() {
	for policy in builtin recency first reservoir; do
		for mode in mainline wakee-aware idle-first ignore; do
			start_sched --policy="$policy" --sched-idle="$mode"
			stress-ng --fork 4 -t 1 --quiet || fail "stress-ng --fork failed under $policy/$mode"
			hackbench -g 2 -f 5 -l 20 >/dev/null || fail "hackbench failed under $policy/$mode"
			expect_enabled "$policy/$mode"
			grep -q 'disabled the scheduler' /tmp/sched.log && fail "$policy/$mode: $(grep 'disabled the scheduler' /tmp/sched.log)"
			stop_sched
			echo "$policy/$mode ok"
		done
	done
}

case_live_switch() {
	start_sched --policy=reservoir
	# Record every state seen while we switch: it must stay enabled.
	( while [ -f /tmp/watch.on ]; do cat "$STATE"; sleep 0.05; done ) >/tmp/states.log &
	touch /tmp/watch.on
	watcher=$!
	stress-ng --fork 4 -t 6 --quiet &
	load=$!
	sleep 2
	out=$("$SCHED" ctl set --policy=first) || fail "ctl set failed: $out"
	echo "$out"
	case $out in "generation 2: policy=first "*) ;; *) fail "ctl set did not start generation 2 with policy first: $out" ;; esac
	get=$("$SCHED" ctl get) || fail "ctl get failed"
	case $get in "generation 2: policy=first "*) ;; *) fail "ctl get says: $get" ;; esac
	sleep 2
	wait "$load" || fail "stress-ng failed across the switch"
	rm -f /tmp/watch.on
	wait "$watcher"
	bad=$(grep -vc '^enabled$' /tmp/states.log)
	[ "$bad" -eq 0 ] || fail "state left 'enabled' $bad times during the switch: $(sort /tmp/states.log | uniq -c | tr '\n' ' ')"
	for g in 1 2; do
		forks=$(gen_value $g "select fork")
		echo "generation $g: select fork $forks"
		[ "${forks:-0}" -gt 0 ] || fail "generation $g has no fork selects counted"
	done
	stop_sched
}

# Seed 003: SCHED_IDLE hogs on six CPUs, SCHED_IDLE wakees forking and
# sleeping. A CPU running only SCHED_IDLE work must never take a SCHED_IDLE
# wakee under wakee-aware while an idle CPU exists; mainline packs them.
case_seed003_packing() {
	start_sched --sched-idle=mainline
	taskset -c 0-5 chrt --idle 0 stress-ng --cpu 6 -t 30 --quiet &
	hogs=$!
	sleep 1
	run_wakees() {
		chrt --idle 0 sh -c 'i=0; while [ $i -lt 150 ]; do /bin/true; sleep 0.01; i=$((i + 1)); done'
	}
	run_wakees
	"$SCHED" ctl set --sched-idle=wakee-aware >/dev/null || fail "ctl set --sched-idle=wakee-aware failed"
	run_wakees
	kill "$hogs"; wait "$hogs" 2>/dev/null
	expect_enabled "the SCHED_IDLE load"
	mainline=$(gen_value 1 packing)
	aware=$(gen_value 2 packing)
	echo "packing: mainline $mainline, wakee-aware $aware"
	[ -n "$mainline" ] && [ -n "$aware" ] || fail "no packing counters in ctl stats"
	[ "$aware" -eq 0 ] || fail "wakee-aware packed $aware SCHED_IDLE wakees onto sched-idle CPUs"
	[ "$mainline" -gt 0 ] || fail "mainline packed nothing: the test load did not exercise sched-idle CPUs"
	stop_sched
}

# Seed 002: four CPU-bound tasks on 4 cores x 2 threads land on four
# different cores under idle-core, in at least 4 of 8 samples (count_spread_windows
# below). A sample misses only when a per-CPU kernel thread or this shell
# shares a core with a task at that moment. With the preference gone a
# placement spreads by chance with probability 0.23 and then stays, so this
# case alone passes about a quarter of runs with the rule broken; the case
# with the power is seed002_default_vs_off (seeds.sh), five placements.
#
# count_spread_windows LABEL N PIDS: of N samples of the 4 tasks PIDS, at
# least 1.5 s apart, those with the tasks on 4 distinct cores. Where each
# task is (its /proc/PID/stat CPU), not which CPUs look busy: under
# single-threaded TCG a busy CPU's share of a 1.5-s window fell under a
# 0.6 threshold now and then (3 busy CPUs seen with 4 tasks on 4 cores). A
# sample with two tasks on one CPU shows a task queued, not placed (its
# CPU is the one it last ran on; seen once: [2 2 2 1], then spread again
# 1.5 s later), so it is not counted and another is taken, at most 3N in
# all; samples not taken count as not spread. Such a sample means tasks
# shared a CPU for a moment while others were idle. loehle-stallwatch
# reports only a task that gains no CPU time for 1 s, so tasks taking
# turns on one CPU beside an idle one are outside what it sees; how long
# that lasted is open (issue 29's note).
count_spread_windows() {
	good=0 w=0 taken=0
	while [ $w -lt "$2" ] && [ $taken -lt $((3 * $2)) ]; do
		taken=$((taken + 1))
		sleep 1.5
		cpus="" cores=""
		for pid in $3; do
			cpu=$(awk '{ print $39 }' "/proc/$pid/stat" 2>/dev/null)
			[ -n "$cpu" ] || continue
			cpus="$cpus $cpu"
			cores="$cores $(cut -d, -f1 /sys/devices/system/cpu/cpu$cpu/topology/thread_siblings_list | cut -d- -f1)"
		done
		distinct=$(echo $cores | tr ' ' '\n' | sort -u | grep -c .)
		if [ "$(echo $cpus | tr ' ' '\n' | sort -u | grep -c .)" -ne 4 ]; then
			echo "$1 try $taken: tasks on CPUs [$cpus ]: not 4 distinct CPUs, a task was queued; not counted" >&2
			continue
		fi
		w=$((w + 1))
		echo "$1 sample $w: tasks on CPUs [$cpus ] on cores [$cores ] ($distinct distinct)" >&2
		[ "$distinct" -eq 4 ] && good=$((good + 1))
	done
	echo "$good"
}

# Seed 002 under idle-core: four CPU-bound tasks on four cores, sampled in
# 8 windows, at least half with the tasks on 4 distinct cores. A window is
# short when two tasks shared a core as it was sampled (seen: CPUs
# [1 5 0 4], two pairs of siblings). Three runs on a loaded host (three
# guests on two cores) gave 2 short windows of 12 (q = 0.17), and a CI run
# 2 of 4 (the first two, then spread), which failed the old bound of 3 of
# 4. False-failure rate: at q = 0.17, 5 or more short windows of 8 come in
# 0.5% of runs (binomial; short windows cluster, so this is a floor rather
# than a bound). Power: without the preference one placement of 4 tasks
# on the 8 CPUs hits 4 distinct cores with probability 0.23 and tends to
# stay, so a broken rule fails at least 77% of runs;
# seed002_default_vs_off, with five fresh placements, is the decisive case
# for the rule.
case_seed002_idle_core() {
	start_sched --smt=idle-core
	# Stopped once its samples are taken (a fixed -t ran out before the
	# last windows of a slow first boot in seed002_default_vs_off).
	stress-ng --cpu 4 --cpu-method int64 -t 300 --quiet &
	load=$!
	workers=$(children_of "$load" 4 150)
	[ "$(echo $workers | wc -w)" -eq 4 ] || fail "expected 4 stress-ng workers, got [$workers]"
	sleep 2
	good=$(count_spread_windows idle-core 8 "$workers")
	kill "$load"; wait "$load" 2>/dev/null
	echo "4 tasks on 4 distinct cores in $good of 8 samples"
	[ "$good" -ge 4 ] || fail "4 CPU-bound tasks were on 4 distinct cores in only $good of 8 samples"
	expect_enabled "the CPU-bound load"
	stop_sched
}

# Seed 000: with equal exit latencies, fork picks within an LLC spread
# uniformly under reservoir and pile up in scan order under first. The
# forking parent is build/loehle-forker pinned to CPU 0 with everything else
# that may move (seeds.sh: a stress-ng parent left one tied CPU busy at each
# fork, which failed this case once in CI with reservoir's picks
# [63 108 70 127] over CPUs 0-3), so CPUs 1-3 of its LLC tie.
case_seed000_spread() {
	[ -x "$FORKER" ] || fail "$FORKER is missing (built with the project)"
	# SMT preference off: its ranking and sibling pruning would mask the
	# tie-break this case is about.
	start_sched --policy=first --smt=off --idle-latency-file=tests/vm/data/latency-equal.txt
	pin_everything_to 0
	trap 'pin_everything_to 0-7' EXIT
	fork_picks_of 1 "first"; p_first=$PICKS
	"$SCHED" ctl set --policy=reservoir >/dev/null || fail "ctl set --policy=reservoir failed"
	fork_picks_of 2 "reservoir"; p_res=$PICKS
	first=$(echo "$p_first" | chi_square "1 2 3")
	reservoir=$(echo "$p_res" | chi_square "1 2 3")
	echo "fork picks first: [$p_first] chi-square/total over CPUs 1-3 $first"
	echo "fork picks reservoir: [$p_res] chi-square/total over CPUs 1-3 $reservoir"
	set -- $first; x_first=$1 n_first=$2
	set -- $reservoir; x_res=$1 n_res=$2
	[ $((10 * n_first)) -ge $((9 * FORKS)) ] && [ $((10 * n_res)) -ge $((9 * FORKS)) ] ||
		fail "fewer than 90% of $FORKS forks on the idle CPUs 1-3 of the forker's LLC (first $n_first, reservoir $n_res)"
	why=$(uniform_over "1 2 3" "$p_res" 810 3) || fail "reservoir (--smt=off): fork picks [$p_res] not uniform over CPUs 1-3: $why"
	# first concentrates: a large effect size (chi-square per pick), 4x
	# reservoir's ("concentrated" in seeds.sh).
	awk -v a="$x_first" -v na="$n_first" -v b="$x_res" -v nb="$n_res" 'BEGIN {
		ea = a / na; eb = b / nb
		printf "chi-square per pick: first %.3f, reservoir %.3f\n", ea, eb
		exit !(ea > 0.1 && ea > 4 * eb) }' ||
		fail "first did not concentrate fork picks: [$p_first]"
	expect_enabled "the pinned forker"
	stop_sched
}

# Seed 000: the strictly shallowest idle CPU wins before any tie-break.
# The forking parent is build/loehle-forker pinned to CPU 0 with everything
# else that may move, so CPUs 1-3 of its node are idle at each fork and
# CPU 2, the only shallow one, loses only while it has not gone idle again
# since the last child ran there (then its state is unpublished: the
# deepest). With two stress-ng --fork parents free to run on CPUs 0-3
# instead, a parent sitting on CPU 2 kept it busy for whole stretches:
# under a loaded host it took 44 of 149 picks, fewer than CPU 0's 50.
# Checked: CPU 2 takes at least two thirds of the 300 picks on CPUs 1-3 and
# four times as many as either other. Two runs read 289 and 287 of 300
# (next best 7): a correct scheduler falls to 200 only if CPU 2 missed a
# third of the forks, which no run came near. Equal latencies give each of
# the three a third, so a rule that ignores the exit latency fails it
# (the mutant shallowest-state-ignored).
case_seed000_shallowest_wins() {
	[ -x "$FORKER" ] || fail "$FORKER is missing (built with the project)"
	start_sched --policy=reservoir --smt=off --idle-latency-file=tests/vm/data/latency-one-shallow.txt
	pin_everything_to 0
	trap 'pin_everything_to 0-7' EXIT
	before=$(gen_fork_picks 1)
	"$FORKER" 0 300 || fail "loehle-forker failed"
	after=$(gen_fork_picks 1)
	picks=$(echo "$before $after" | awk 'NF == 16 { for (i = 1; i <= 8; i++) printf "%s%d", (i > 1 ? " " : ""), $(8 + i) - $i; print "" }')
	echo "fork picks: [$picks]"
	echo "$picks" | awk '{
		t = $2 + $3 + $4; other = ($2 > $4 ? $2 : $4)
		printf "CPU 2 took %d of %d fork picks on CPUs 1-3 (next best %d)\n", $3, t, other
		exit !(t >= 270 && 3 * $3 >= 2 * t && $3 >= 4 * other) }' ||
		fail "CPU 2 (the only shallow one) did not win most fork picks: [$picks]"
	stop_sched
}

# Bad input never takes the scheduler down.
case_bad_input() {
	start_sched
	for args in "--policy=fastest" "--sched-idle=sometimes" "--smt=maybe" \
	    "--slice-us=abc" "--claim-retries=999" "--turbo" "--policy"; do
		"$SCHED" $args >/tmp/bad.out 2>&1
		rc=$?
		[ "$rc" -eq 2 ] || fail "scx_loehle $args exited $rc, expected 2"
		[ "$(wc -l </tmp/bad.out)" -eq 1 ] || fail "scx_loehle $args printed more than one line: $(cat /tmp/bad.out)"
		echo "$args -> $(cat /tmp/bad.out)"
	done
	for args in "ctl set --policy=fastest" "ctl set" "ctl frobnicate"; do
		"$SCHED" $args >/tmp/bad.out 2>&1 && fail "scx_loehle $args succeeded"
		echo "$args -> $(cat /tmp/bad.out)"
	done
	# Malformed control-socket requests each get an error reply (a blank
	# line too: every line is answered).
	big=$(head -c 70000 /dev/zero | tr '\0' x)
	for line in 'garbage' '[1,2]' '{"nocmd":1}' '{"cmd":"reboot"}' '{"cmd":"set"}' \
	    '{"cmd":"set","args":{"policy":"fastest"}}' '{"cmd":"set","args":{"slice_us":1}}' \
	    '{"cmd":"set","args":{"turbo":true}}' ' ' "$big"; do
		out=$("$SCHED" ctl send "$line" 2>/dev/null)
		rc=$?
		[ "$rc" -eq 1 ] || fail "ctl send $(echo "$line" | cut -c1-40) exited $rc, expected 1"
		case $out in *'"error":'*'"ok":false'*) ;; *) fail "no error reply to $(echo "$line" | cut -c1-40): $out" ;; esac
		echo "$(echo "$line" | cut -c1-40) -> $out" | cut -c1-160
	done
	"$SCHED" ctl get | grep -q '^generation 1: ' || fail "a malformed request changed the generation"
	# A second scheduler is refused with the name of the running one.
	"$SCHED" --socket=/tmp/second.sock >/tmp/bad.out 2>&1 && fail "a second scheduler attached"
	grep -q 'already loaded: loehle' /tmp/bad.out || fail "second scheduler: $(cat /tmp/bad.out)"
	echo "second scheduler -> $(cat /tmp/bad.out)"
	expect_enabled "the bad input"
	"$SCHED" ctl get >/dev/null || fail "ctl get fails after the bad input"
	stop_sched
}

# CPU hotplug is followed, not reloaded (scx/loehle.bpf.c, "Hotplug"): CPU 3
# flaps offline and online six times under a CPU load. Throughout: no
# restart, generation 1, one "enabled" in the kernel log, state enabled;
# while CPU 3 is offline a fork load gives it no picks and the stats
# topology shows it offline; once back it shows online and takes fork
# picks again; hotplug_events counts all twelve changes. On a kernel where
# the scheduler reloads instead (KernelFollowsHotplug, loader/bpf/
# scheduler.h: 6.18), each change reloads it under the next generation.
hotplug_reloads() {
	cpu=$1
	echo 0 >/sys/devices/system/cpu/cpu$cpu/online || fail "cannot take CPU $cpu offline"
	n=0
	until grep -q 'restarted' /tmp/sched.log; do
		n=$((n + 1)); [ $n -lt 300 ] || fail "no reload within 30 s after CPU $cpu went offline (log: $(log_tail /tmp/sched.log 3))"
		sleep 0.1
	done
	wait_state enabled 30 || fail "state is '$(cat "$STATE")' after the reload"
	echo 1 >/sys/devices/system/cpu/cpu$cpu/online || fail "cannot bring CPU $cpu back"
	n=0
	until [ "$(grep -c restarted /tmp/sched.log)" -ge 2 ]; do
		n=$((n + 1)); [ $n -lt 300 ] || fail "no reload within 30 s after CPU $cpu came back"
		sleep 0.1
	done
	wait_state enabled 30 || fail "state is '$(cat "$STATE")' after the second reload"
	get=$("$SCHED" ctl get) || fail "ctl get failed after the reloads"
	case $get in "generation 3: "*) ;; *) fail "expected generation 3 after two reloads: $get" ;; esac
	echo "this kernel reloads on hotplug: two reloads, now $(echo "$get" | head -n 1 | cut -c1-40)"
	stress-ng --fork 2 -t 2 --quiet || fail "stress-ng failed after the reloads"
	stop_sched
}
cpu_online_in_stats() {
	"$SCHED" ctl stats --json | tr '{' '\n' |
		sed -n "s/^\"core\":[0-9]*,\"cpu\":$1,.*\"online\":\([a-z]*\).*/\1/p"
}

cpu_fork_picks() { gen_fork_picks 1 | awk -v c="$1" '{ print $(c + 1) }'; }

case_hotplug_without_reload() {
	cpu=3
	enabled_before=$(dmesg | grep -c 'BPF scheduler "loehle" enabled')
	start_sched
	expect_hotplug_reloads
	# Which mode each series must be in, so that a wrong probe cannot turn
	# this into the other check.
	case $(uname -r) in
	6.*) want=reloads ;;
	*) want='followed in place' ;;
	esac
	grep -q "CPU hotplug: $want" /tmp/sched.log ||
		fail "on $(uname -r) expected 'CPU hotplug: $want' (log: $(grep 'CPU hotplug' /tmp/sched.log))"
	if [ "$want" = reloads ]; then
		hotplug_reloads $cpu
		return
	fi
	stress-ng --cpu 8 --cpu-method int64 -t 45 --quiet &
	load=$!
	round=0
	while [ $round -lt 6 ]; do
		round=$((round + 1))
		echo 0 >/sys/devices/system/cpu/cpu$cpu/online || fail "round $round: cannot take CPU $cpu offline"
		sleep 0.5
		[ "$(cpu_online_in_stats $cpu)" = false ] || fail "round $round: stats show CPU $cpu online: $(cpu_online_in_stats $cpu)"
		before=$(cpu_fork_picks $cpu)
		taskset -c 0-3 stress-ng --fork 2 -t 1 --quiet || fail "round $round: stress-ng --fork failed with CPU $cpu offline"
		after=$(cpu_fork_picks $cpu)
		[ "$after" = "$before" ] || fail "round $round: offline CPU $cpu got fork picks ($before -> $after)"
		echo 1 >/sys/devices/system/cpu/cpu$cpu/online || fail "round $round: cannot bring CPU $cpu back"
		sleep 0.5
		[ "$(cpu_online_in_stats $cpu)" = true ] || fail "round $round: stats show CPU $cpu offline after it came back"
		expect_enabled "round $round"
	done
	wait "$load" || fail "the CPU load exited with status $? across the hotplug"
	before=$(cpu_fork_picks $cpu)
	taskset -c 0-3 stress-ng --fork 2 -t 2 --quiet || fail "stress-ng --fork failed after the hotplug"
	after=$(cpu_fork_picks $cpu)
	echo "fork picks of CPU $cpu: unchanged in 6 offline windows, $before -> $after once back"
	[ "$after" -gt "$before" ] || fail "CPU $cpu took no fork picks after it came back ($before -> $after)"
	! grep -q restarted /tmp/sched.log || fail "the scheduler restarted: $(log_tail /tmp/sched.log 3)"
	"$SCHED" ctl get | grep -q '^generation 1: ' || fail "not generation 1: $("$SCHED" ctl get)"
	enabled_after=$(dmesg | grep -c 'BPF scheduler "loehle" enabled')
	[ $((enabled_after - enabled_before)) -eq 1 ] || fail "enabled $((enabled_after - enabled_before)) times"
	events=$("$SCHED" ctl stats --json | sed -n 's/.*"hotplug_events":\([0-9]*\).*/\1/p')
	[ "${events:-x}" = 12 ] || fail "hotplug_events is ${events:-missing}, not 12"
	grep "CPU $cpu" /tmp/sched.log | head -n 2
	stop_sched
}

# A task whose every allowed CPU goes offline while it may wait in our
# queues: three CPU hogs allowed on CPUs 2 and 3 only, so that one always
# waits; CPU 2, then CPU 3, taken offline for 6 s. The tasks of each CPU
# go to the global DSQ when it goes (loehle_offline_takes); before that
# rule only tasks pinned to one CPU did, and these, allowed on two, were
# moved on by the kernel itself when their last CPU died (a cpu_offline
# that also handed them over made no difference; the mutant keeping the
# one-CPU rule survived this case).
# Checked: every hog gets CPU time while both CPUs are offline, all exit
# with status 0, the state stays enabled. (On 6.18 each change reloads the
# scheduler; the same must hold across the reloads.) The name says what it
# shows: tasks outlive the loss of every CPU they may use. Whether our
# cpu_offline hands them over is the unit tier's
# (QueueOfflineTakes.*, offline-takes-pinned-only), since the kernel
# moves them when their last CPU dies either way.
case_hogs_run_while_all_their_cpus_are_offline() {
	start_sched
	expect_hotplug_reloads
	taskset -c 2,3 stress-ng --cpu 3 --cpu-method int64 -t 25 --quiet &
	hogs=$!
	workers=$(children_of "$hogs" 3 50)
	[ "$(echo $workers | wc -w)" -eq 3 ] || fail "expected 3 hogs, got [$workers]"
	sleep 1
	echo 0 >/sys/devices/system/cpu/cpu2/online || fail "cannot take CPU 2 offline"
	sleep 1
	echo 0 >/sys/devices/system/cpu/cpu3/online || fail "cannot take CPU 3 offline"
	sleep 1
	for pid in $workers; do eval "t_$pid=$(cpu_ticks $pid)"; done
	sleep 6
	stuck=0
	for pid in $workers; do
		now=$(cpu_ticks $pid)
		eval "before=\$t_$pid"
		echo "hog $pid: $before -> $now ticks with CPUs 2 and 3 offline"
		[ -n "$now" ] && [ "$now" -gt "$before" ] || stuck=$((stuck + 1))
	done
	echo 1 >/sys/devices/system/cpu/cpu2/online || fail "cannot bring CPU 2 back"
	echo 1 >/sys/devices/system/cpu/cpu3/online || fail "cannot bring CPU 3 back"
	[ "$stuck" -eq 0 ] || fail "$stuck of 3 hogs allowed only on CPUs 2-3 got no CPU time while both were offline"
	wait "$hogs" || fail "the hogs exited with status $?"
	wait_state enabled 30 || fail "state is '$(cat "$STATE")' after the hotplug"
	expect_enabled "after every CPU of three hogs' mask went offline"
	stop_sched
}

# Idle work yields, and still never starves (Documentation/policies.md,
# "Idle work"). Normal CPU hogs saturate all 8 CPUs; 4 SCHED_IDLE hogs run
# beside them. Idle work then runs only by its allowance: one slice per LLC
# every 64 slices (320 ms), so each SCHED_IDLE hog runs at least about
# every 1.3 s (all four in one LLC) and, by design, within 5 s whatever the
# count. Checked, per policy, over three 6-s windows: every SCHED_IDLE hog
# got CPU time in every window, and the SCHED_IDLE hogs together got less
# than 25% of the CPU time the two groups used, where a plain round robin
# among the twelve hogs gives SCHED_IDLE a third. The allowance is about
# 0.4% on real hardware; under single-threaded TCG the share is far higher
# and noisy, for reasons not established (earlier versions measured 2.7% to
# 7.7%; since the cgroup reads of issue 15 lengthened every context switch,
# 10% to 20%). The allowance does not account for it: a CI run of
# 2026-12-07 counted 94 allowance turns in the 18 s (about 0.5 s of idle
# work at 5-ms slices) against 1,485 ticks of idle work (about 15 s), so
# idle work runs by another path too; the case prints each path's count to
# find which. 20 runs of this case on 2026-12-02, 10 per kernel, gave
# builtin 0.099-0.131 and reservoir 0.134-0.188 (mean 0.160, sd 0.018), and
# CI runs 0.119-0.205. Under a normal fit the 0.25 bound fails a correct
# scheduler in about 0.1% of runs even with a pessimistic sd of 0.03 (z =
# 3); the mutant that runs idle work before normal work fails it
# (scripts/mutate --only idle-work-before-normal).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

# sum_ticks PID...: their ticks together; fails (status 1) when one is gone.
sum_ticks() {
	_sum=0
	for _pid in "$@"; do
		_t=$(cpu_ticks "$_pid")
		[ -n "$_t" ] || return 1
		_sum=$((_sum + _t))
	done
	echo "$_sum"
}

# children_of PID N TRIES: PID's children once there are N (polled every
# 0.2 s, at most TRIES times), else those there are.
children_of() {
	_n=0
	while [ $_n -lt "$3" ]; do
		_kids=$(cat "/proc/$1/task/$1/children" 2>/dev/null)
		[ "$(echo $_kids | wc -w)" -ge "$2" ] && break
		_n=$((_n + 1))
		sleep 0.2
	done
	echo $_kids
}

case_sched_idle_progress() {
	for policy in builtin reservoir; do
		start_sched --policy="$policy"
		# Stopped at the end: a fixed -t 40 ran out under a loaded host
		# (the SCHED_IDLE parent's forks alone may take 20 s).
		stress-ng --cpu 8 --cpu-method int64 -t 300 --quiet &
		normal=$!
		chrt --idle 0 stress-ng --cpu 4 --cpu-method int64 -t 300 --quiet &
		idle=$!
		# The SCHED_IDLE parent forks its workers on idle work's
		# allowance only: give it time.
		workers=$(children_of "$idle" 4 100)
		sleep 1
		fg=$(cat /proc/$normal/task/$normal/children 2>/dev/null)
		[ "$(echo $workers | wc -w)" -eq 4 ] || fail "$policy: expected 4 SCHED_IDLE workers, got [$workers]"
		[ "$(echo $fg | wc -w)" -eq 8 ] || fail "$policy: expected 8 normal workers, got [$fg]"
		stuck=0 w=0
		for pid in $workers; do eval "t_$pid=$(cpu_ticks $pid)"; done
		idle0=$(sum_ticks $workers) || fail "$policy: a SCHED_IDLE hog is gone"
		fg0=$(sum_ticks $fg) || fail "$policy: a normal hog is gone"
		while [ $w -lt 3 ]; do
			w=$((w + 1))
			sleep 6
			for pid in $workers; do
				now=$(cpu_ticks $pid)
				eval "before=\$t_$pid"
				if [ -n "$now" ] && [ "$now" -le "$before" ]; then
					stuck=$((stuck + 1))
					echo "$policy: SCHED_IDLE hog $pid got no CPU in window $w ($before -> $now ticks)"
				fi
				eval "t_$pid=$now"
			done
		done
		idle1=$(sum_ticks $workers) || fail "$policy: a SCHED_IDLE hog ended before the windows did"
		fg1=$(sum_ticks $fg) || fail "$policy: a normal hog ended before the windows did"
		share=$(awk -v i=$((idle1 - idle0)) -v f=$((fg1 - fg0)) 'BEGIN { printf "%.4f", i + f ? i / (i + f) : 1 }')
		kill "$normal" "$idle" 2>/dev/null; wait "$normal" "$idle" 2>/dev/null
		# Which path ran the idle work (the open question above): the
		# allowance's turns, dispatches of idle work with nothing else
		# queued, overdue turns, and the higher-class releases.
		block=$(gen_block 1)
		paths=""
		for label in "idle turns" "idle dispatches" "idle overdue" "cpu releases" "idle wakes late" "idle wakes released"; do
			paths="$paths, $label $(block_value "$block" "$label")"
		done
		expect_enabled "SCHED_IDLE hogs beside saturating normal work under $policy"
		stop_sched
		echo "$policy: SCHED_IDLE share of the CPU time $share over 18 s ($((idle1 - idle0)) vs $((fg1 - fg0)) ticks)$paths; windows without progress $stuck"
		[ "$stuck" -eq 0 ] || fail "$policy: SCHED_IDLE hogs went $stuck windows of 6 s without CPU"
		awk -v s="$share" 'BEGIN { exit !(s < 0.25) }' || fail "$policy: SCHED_IDLE hogs took $share of the CPU time beside saturating normal work"
	done
}

# cpu_of PID: the CPU PID last ran on.
cpu_of() { awk '{ print $39 }' "/proc/$1/stat"; }

# first_child_or_fail PID WHAT: the first child of PID once it has one
# (polled for 30 s: a SCHED_IDLE parent beside a normal hog on its only CPU
# runs by idle work's allowance, one slice in 64, and stress-ng needs a
# few of them to fork; 10 s was seen to be too short under TCG); else the
# case fails, so call it as `x=$(...) || exit 1`.
first_child_or_fail() {
	_kid=$(children_of "$1" 1 150)
	[ -n "$_kid" ] || fail "$2 did not start its worker in 30 s"
	echo "${_kid%% *}"
}

# Idle work yields on a CPU it shares with normal work: a normal hog and a
# SCHED_IDLE hog pinned to CPU 3 (everything else pinned to CPU 0), 6 s.
# The SCHED_IDLE hog runs only by its allowance there, one slice in 64
# (1.6%); it must get under 10% of the two hogs' CPU time (sharing the CPU
# round robin would give it half). One busy vCPU keeps TCG's own
# round-robin out of the measurement.
case_idle_work_yields_on_one_cpu() {
	start_sched
	pin_everything_to 0
	trap 'pin_everything_to 0-7' EXIT
	# The hogs are shells spinning in place, each its own PID: a stress-ng
	# worker found as its parent's first child was once a process that
	# had already exited (0 ticks read for the normal hog, a share of 1.0),
	# and once exited between the two readings (a negative count).
	taskset -c 3 sh -c 'while :; do :; done' &
	nw=$!
	taskset -c 3 chrt --idle 0 sh -c 'while :; do :; done' &
	iw=$!
	echo "$nw $iw" >>"$HOGS_PID_FILE"
	sleep 1
	i0=$(cpu_ticks "$iw") n0=$(cpu_ticks "$nw")
	sleep 6
	i1=$(cpu_ticks "$iw") n1=$(cpu_ticks "$nw")
	kill "$nw" "$iw" 2>/dev/null; wait "$nw" "$iw" 2>/dev/null
	[ -n "$i0" ] && [ -n "$i1" ] && [ -n "$n0" ] && [ -n "$n1" ] ||
		fail "a hog was gone before its CPU time was read (normal $n0 -> $n1, SCHED_IDLE $i0 -> $i1 ticks)"
	share=$(awk -v i=$((i1 - i0)) -v n=$((n1 - n0)) 'BEGIN { printf "%.3f", i + n ? i / (i + n) : 1 }')
	echo "on one CPU: SCHED_IDLE hog $((i1 - i0)) ticks, normal hog $((n1 - n0)) ticks, SCHED_IDLE share $share"
	[ $((n1 - n0)) -gt 0 ] || fail "the normal hog got no CPU in 6 s"
	[ $((i1 - i0)) -gt 0 ] || fail "the SCHED_IDLE hog got no CPU in 6 s"
	awk -v s="$share" 'BEGIN { exit !(s < 0.10) }' || fail "a SCHED_IDLE hog took $share of a CPU it shares with a normal hog"
	expect_enabled "the shared CPU"
	stop_sched
}

# Displaced idle work (loehle/queue.h): a SCHED_IDLE hog allowed on CPUs 2
# and 3 runs on one of them, then a normal hog running on CPU 1 is moved to
# that very CPU (everything else on CPU 0). The idle hog loses its CPU without an
# idle CPU being woken for it (idle wakes deferred >= 1); the normal hog
# keeps that CPU, so the deferred wake must move the idle hog to the other
# one, idle all along, at a tick (idle wakes late >= 1; a CPU taken by a
# higher class also wakes one, counted apart as released: that alone
# moved the hog after 0.3 s to seconds), within 1 s (the rule: 1 ms and
# the next tick; 0-1 polls of 50 ms measured); over 6 s it then gets at least half
# the normal hog's CPU time. Without the late wake it would run only by its
# allowance there, about 1.6% (the case above).
case_idle_work_displaced_moves_late() {
	start_sched
	pin_everything_to 0
	trap 'pin_everything_to 0-7' EXIT
	taskset -c 2,3 chrt --idle 0 stress-ng --cpu 1 --cpu-method int64 -t 30 --quiet &
	idle=$!
	iw=$(first_child_or_fail "$idle" "the SCHED_IDLE hog") || exit 1
	sleep 0.5
	cpu=$(cpu_of "$iw")
	taskset -c 1 stress-ng --cpu 1 --cpu-method int64 -t 30 --quiet &
	normal=$!
	nw=$(first_child_or_fail "$normal" "the normal hog") || exit 1
	sleep 0.5
	# Moved there while it runs: the kernel's stopper does that on CPU 1,
	# so no higher class takes $cpu (whose release would wake a CPU for
	# the idle hog at once and hide a missing tick-time wake).
	taskset -p -c "$cpu" "$nw" >/dev/null || fail "could not move the normal hog to CPU $cpu"
	polls=0
	while [ "$(cpu_of "$iw")" = "$cpu" ] && [ $polls -lt 20 ]; do
		polls=$((polls + 1))
		sleep 0.05
	done
	sleep 1
	i0=$(cpu_ticks "$iw") n0=$(cpu_ticks "$nw")
	sleep 6
	i1=$(cpu_ticks "$iw") n1=$(cpu_ticks "$nw")
	where=$(cpu_of "$iw")
	kill "$normal" "$idle" 2>/dev/null; wait "$normal" "$idle" 2>/dev/null
	deferred=$(gen_value 1 "idle wakes deferred")
	late=$(gen_value 1 "idle wakes late")
	released=$(gen_value 1 "idle wakes released")
	ratio=$(awk -v i=$((i1 - i0)) -v n=$((n1 - n0)) 'BEGIN { printf "%.3f", n ? i / n : 0 }')
	echo "normal hog on CPU $cpu: the SCHED_IDLE hog left it after $polls polls of 50 ms; then SCHED_IDLE hog $((i1 - i0)) ticks (now on CPU $where), normal hog $((n1 - n0)) ticks, ratio $ratio; idle wakes deferred $deferred, late $late, released $released"
	[ "${deferred:-0}" -ge 1 ] || fail "no displaced idle work had its wake deferred"
	[ "${late:-0}" -ge 1 ] || fail "no deferred wake came at a tick (released by a higher class: ${released:-0}): the idle hog waited beside an idle CPU"
	[ $polls -lt 20 ] || fail "the displaced SCHED_IDLE hog still waited on CPU $cpu 1 s after the normal hog came there, the other CPU idle"
	awk -v r="$ratio" 'BEGIN { exit !(r >= 0.5) }' || fail "the displaced SCHED_IDLE hog got only $ratio of the normal hog's CPU time with CPU 2 or 3 idle"
	expect_enabled "displaced idle work"
	stop_sched
}

# Issue 12: the cpu_idle tracepoint runs only where publishing an idle state
# can change a pick: with an exit-latency table and a policy of ours. Not
# under builtin (attached and detached live with the policy), and not
# without a table (this guest has no cpuidle driver: every idle CPU stays
# unpublished, as in the kernel).
stats_json_value() { # KEY-REGEX: the first value after "KEY":
	"$SCHED" ctl stats --json | sed -n "s/.*\"$1\":\([a-z0-9]*\).*/\1/p"
}
cpu_idle_runs() {
	"$SCHED" ctl stats --json | sed -n 's/.*"name":"cpu_idle","run_count":\([0-9]*\).*/\1/p'
}
expect_tracking() { # true|false LABEL
	t=$(stats_json_value idle_state_tracking)
	[ "$t" = "$1" ] || fail "$2: idle_state_tracking is '$t', not $1"
	a=$(cpu_idle_runs)
	sleep 1
	b=$(cpu_idle_runs)
	echo "$2: tracking $t, cpu_idle ran $((b - a)) times in 1 s"
	if [ "$1" = true ]; then
		[ "$b" -gt "$a" ] || fail "$2: the cpu_idle tracepoint did not run ($a -> $b)"
	else
		[ "$b" -eq "$a" ] || fail "$2: the cpu_idle tracepoint ran while detached ($a -> $b)"
	fi
}
case_idle_state_tracking_follows_policy() {
	start_sched --idle-latency-file=tests/vm/data/latency-equal.txt
	expect_tracking true "reservoir with a table"
	"$SCHED" ctl set --policy=builtin >/dev/null || fail "ctl set --policy=builtin failed"
	expect_tracking false "builtin"
	"$SCHED" ctl set --policy=first >/dev/null || fail "ctl set --policy=first failed"
	expect_tracking true "first after builtin"
	stop_sched
	start_sched
	src=$("$SCHED" ctl stats --json | sed -n 's/.*"latency_source":"\([^"]*\)".*/\1/p')
	if [ "$src" = none ]; then
		expect_tracking false "reservoir without a table"
	else
		expect_tracking true "reservoir with exit latencies from $src"
	fi
	expect_enabled "the switches"
	stop_sched
}

# Live switching does not wear the daemon out: with --keep-generations=8,
# 200 switches leave 8 generations in the reply and the other 192 (and
# generation 1) summed under older_generations; every client still gets its
# reply, and the counts add up.
case_switches_keep_the_reply_bounded() {
	start_sched --keep-generations=8
	rss_before=$(awk '/^VmRSS/ { print $2 }' "/proc/$SCHED_PID/status")
	n=0
	while [ "$n" -lt 200 ]; do
		case $((n % 2)) in
		0) p=first ;;
		*) p=reservoir ;;
		esac
		"$SCHED" ctl set --policy=$p >/dev/null || fail "ctl set $n failed"
		n=$((n + 1))
	done
	"$SCHED" ctl stats --json >/tmp/stats.json || fail "ctl stats --json failed after 200 switches"
	gens=$(grep -o '"generation":[0-9]*,"settings"' /tmp/stats.json | wc -l)
	[ "$gens" -eq 8 ] || fail "the reply lists $gens generations, not 8"
	older=$(sed -n 's/.*"older_generations":{[^}]*"count":\([0-9]*\).*/\1/p' /tmp/stats.json)
	[ "${older:-x}" = 193 ] || fail "older_generations count is ${older:-missing}, not 193"
	bytes=$(wc -c </tmp/stats.json)
	[ "$bytes" -lt 200000 ] || fail "the reply has $bytes bytes"
	"$SCHED" top --once >/dev/null || fail "top --once failed after 200 switches"
	"$SCHED" ctl get | grep -q '^generation 201: ' || fail "not at generation 201: $("$SCHED" ctl get)"
	rss_after=$(awk '/^VmRSS/ { print $2 }' "/proc/$SCHED_PID/status")
	echo "after 200 switches: $gens generations listed, $older folded, reply $bytes bytes, daemon RSS $rss_before -> $rss_after kB"
	stop_sched
}
