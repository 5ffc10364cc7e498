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
	kill -9 "$SCHED_PID"
	wait "$SCHED_PID" 2>/dev/null
	rm -f "$SCHED_PID_FILE"
	SCHED_PID=
	wait_state disabled 2 || fail "state stays '$(cat "$STATE")' 2 s after kill -9 of the loader"
	wait "$load" || fail "stress-ng --fork 2 -t 4 failed across the kill -9 (status $?)"
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
