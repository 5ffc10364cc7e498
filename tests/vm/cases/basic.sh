# Basic life cycle of scx_loehle. Sourced by tests/vm/run-cases.sh; each
# case_NAME runs in a subshell and ends with `fail REASON` or success.

case_before() {
	[ -e "$STATE" ] || fail "no $STATE: the kernel has no sched_ext"
	s=$(cat "$STATE")
	[ "$s" = disabled ] || fail "state is '$s' before anything ran, not disabled"
}

case_attach() {
	start_sched
	ops=$(cat "$SCX/root/ops" 2>/dev/null)
	[ "$ops" = loehle ] || fail "root/ops reads '$ops', not loehle"
	stop_sched
}

case_load() {
	start_sched
	stress-ng --fork 4 -t 5 --quiet || fail "stress-ng --fork 4 -t 5 failed under the scheduler"
	hackbench -g 4 -f 10 -l 100 || fail "hackbench failed under the scheduler"
	sched_alive || fail "the scheduler died under load"
	[ "$(cat "$STATE")" = enabled ] || fail "state is '$(cat "$STATE")' after the load, not enabled (ejected?)"
	stop_sched
}

case_sigint() {
	start_sched
	stop_sched
	wait_state disabled 5 || fail "state stays '$(cat "$STATE")' 5 s after the loader exited"
}

case_kill9() {
	start_sched
	stress-ng --fork 2 -t 4 --quiet &
	load=$!
	sleep 1
	t0=$(cut -d' ' -f1 /proc/uptime)
	kill -9 "$SCHED_PID"
	wait "$SCHED_PID" 2>/dev/null
	rm -f "$SCHED_PID_FILE"
	SCHED_PID=
	wait_state disabled 2 || fail "state stays '$(cat "$STATE")' 2 s after kill -9 of the loader"
	t1=$(cut -d' ' -f1 /proc/uptime)
	wait "$load" || fail "stress-ng --fork 2 -t 4 failed across the kill -9 (status $?)"
	# The killed daemon left its socket file: the next start replaces it.
	[ -S /run/scx_loehle.sock ] || fail "no stale socket left to reuse"
	start_sched
	"$SCHED" ctl get >/dev/null || fail "the next start does not answer on the reused socket"
	stop_sched
	echo "state disabled $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s after kill -9 (bound 2 s); the next start reused the stale socket"
}

# Expected topology: LOEHLE_EXPECT_TOPO=cpus:smt:nodes[:llcs] (llcs defaults
# to nodes), else what scripts/vm was asked for.
case_topology() {
	exp=${LOEHLE_EXPECT_TOPO:-}
	if [ -z "$exp" ] && [ -n "${LOEHLE_VM_CPUS:-}" ]; then
		exp=$LOEHLE_VM_CPUS:$LOEHLE_VM_SMT:$LOEHLE_VM_NODES
	fi
	[ -n "$exp" ] || fail "no expected topology (set LOEHLE_EXPECT_TOPO=cpus:smt:nodes[:llcs])"
	IFS=: read -r e_cpus e_smt e_nodes e_llcs <<EOT
$exp
EOT
	e_llcs=${e_llcs:-$e_nodes}
	sys=/sys/devices/system
	cpus=$(cpulist_count "$(cat $sys/cpu/online)")
	smt=$(cpulist_count "$(cat $sys/cpu/cpu0/topology/thread_siblings_list)")
	nodes=$(ls -d $sys/node/node[0-9]* 2>/dev/null | wc -l)
	[ "$nodes" -ge 1 ] || nodes=1
	llcs=$(cat $sys/cpu/cpu[0-9]*/cache/index3/shared_cpu_list 2>/dev/null | sort -u | wc -l)
	echo "seen cpus=$cpus smt=$smt nodes=$nodes llcs=$llcs; expected $e_cpus:$e_smt:$e_nodes:$e_llcs"
	[ "$cpus" = "$e_cpus" ] || fail "$cpus CPUs online, expected $e_cpus"
	[ "$smt" = "$e_smt" ] || fail "$smt threads per core, expected $e_smt"
	[ "$nodes" = "$e_nodes" ] || fail "$nodes NUMA nodes, expected $e_nodes"
	[ "$llcs" = "$e_llcs" ] || fail "$llcs LLCs, expected $e_llcs"
	for c in $sys/cpu/cpu[0-9]*; do
		n=$(cpulist_count "$(cat "$c/topology/thread_siblings_list")")
		[ "$n" = "$e_smt" ] || fail "${c##*/} has $n threads, expected $e_smt"
	done
}

# An error exit end to end: the kernel's watchdog ejects the scheduler, the
# loader prints the reason and the kernel's debug dump and exits 1, and the
# system goes back to the fair class. The stall is made on purpose: a
# SCHED_FIFO hog and a normal task pinned to CPU 1, with RT throttling off
# and (on 7.x) CPU 1's sched_ext deadline server off, so that the normal
# task cannot run until the watchdog (30 s) fires.
case_error_exit() {
	rt=/proc/sys/kernel/sched_rt_runtime_us
	srv=/sys/kernel/debug/sched/ext_server/cpu1/runtime
	old_rt=$(cat "$rt")
	old_srv=
	[ -e "$srv" ] && old_srv=$(cat "$srv")
	rt_hog= victim=
	trap 'kill $rt_hog $victim 2>/dev/null; echo "$old_rt" >"$rt"; [ -n "$old_srv" ] && echo "$old_srv" >"$srv"' EXIT
	start_sched
	# The ejection this case provokes, and the kernel's report of it.
	expect_kernel_log 'disabled \(runnable task stall\)|failed to run for'
	echo -1 >"$rt" || fail "cannot turn RT throttling off ($rt)"
	if [ -n "$old_srv" ]; then
		echo 0 >"$srv" || fail "cannot turn CPU 1's sched_ext deadline server off ($srv)"
	fi
	taskset -c 1 chrt --fifo 50 sh -c 'while :; do :; done' &
	rt_hog=$!
	sleep 0.2
	taskset -c 1 sh -c 'while :; do :; done' &
	victim=$!
	n=0
	while sched_alive; do
		n=$((n + 1))
		[ "$n" -lt 600 ] || fail "the scheduler still runs 60 s after a task was starved: no stall detected"
		sleep 0.1
	done
	wait "$SCHED_PID"
	rc=$?
	rm -f "$SCHED_PID_FILE"
	SCHED_PID=
	head -n 3 /tmp/sched.log
	[ "$rc" -eq 1 ] || fail "the loader exited with status $rc after the stall, not 1"
	grep -q 'disabled the scheduler: runnable task stall' /tmp/sched.log ||
		fail "no 'runnable task stall' line (log: $(head -n 3 /tmp/sched.log | tr '\n' '|'))"
	grep -q "the kernel's debug dump" /tmp/sched.log && grep -q 'CPU states' /tmp/sched.log ||
		fail "no debug dump with 'CPU states' in the log"
	wait_state disabled 5 || fail "state stays '$(cat "$STATE")' after the error exit"
}

# The Debian package's files (tests/vm/ctest-vm.sh unpacks the package into
# BUILD/vm-installed/root), started the way the unit's ExecStart does: the
# unit's command line with $SCX_LOEHLE_FLAGS from its EnvironmentFile, here
# the packaged settings file plus one line as an administrator would add.
case_installed_layout() {
	inst=${LOEHLE_BUILD_DIR:-build}/vm-installed/root
	unit=$inst/lib/systemd/system/scx_loehle.service
	[ -f "$unit" ] || fail "no unpacked package in $inst (tests/vm/ctest-vm.sh builds it with scripts/package; see $inst/../package.log)"
	exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
	env_file=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
	binary=${exec_start%% *}
	[ -x "$inst$binary" ] || fail "the unit starts $binary, which the package does not hold"
	[ -f "$inst$env_file" ] || fail "the unit reads $env_file, which the package does not hold"
	case $exec_start in *'$SCX_LOEHLE_FLAGS'*) ;; *) fail "ExecStart ($exec_start) does not pass \$SCX_LOEHLE_FLAGS" ;; esac
	cp "$inst$env_file" /tmp/scx_loehle.default
	echo 'SCX_LOEHLE_FLAGS="--policy=first --sched-idle-scope=cgroup --slice-us=4000"' >>/tmp/scx_loehle.default
	# EnvironmentFile's KEY="value" lines read as the shell reads them.
	. /tmp/scx_loehle.default
	SCHED=$inst$binary
	# shellcheck disable=SC2086
	start_sched $SCX_LOEHLE_FLAGS
	get=$("$SCHED" ctl get) || fail "ctl get from the installed binary failed"
	echo "$get"
	case $get in *"policy=first "*"sched-idle-scope=cgroup "*"slice-us=4000 "*) ;;
	*) fail "the settings file's flags are not in force: $get" ;; esac
	want=$("$SCHED" --version | sed -n 's/^scx_loehle \([^ ]*\) (git \([^)]*\))$/\1 git \2/p')
	case $get in *"scx_loehle $want)"*) ;; *) fail "ctl get does not report the installed build ($want): $get" ;; esac
	stop_sched
}
