# cgroup v2 cpu.idle (issue 15): the three --sched-idle-scope values on seed
# 004's kubepods tree, observed in the kernel. Sourced by
# tests/vm/run-cases.sh; each case_NAME runs in a subshell. The rule itself,
# over many more trees, is the unit tier's (tests/unit/cgroup_idle_test.cc).

CG=/sys/fs/cgroup
WAKELAT=${LOEHLE_BUILD_DIR:-build}/loehle-wakelat

# root -> {kubepods -> {guaranteed, besteffort (cpu.idle=1)},
#          system.slice -> containerd}, with the cpu controller on the way.
kubepods_setup() {
	echo +cpu >"$CG/cgroup.subtree_control" || fail "cannot enable the cpu controller in $CG"
	mkdir -p "$CG/kubepods" "$CG/system.slice" || fail "cannot create cgroups in $CG"
	for _g in kubepods system.slice; do
		echo +cpu >"$CG/$_g/cgroup.subtree_control" || fail "cannot enable the cpu controller in $_g"
	done
	mkdir -p "$CG/kubepods/guaranteed" "$CG/kubepods/besteffort" "$CG/system.slice/containerd" ||
		fail "cannot create the kubepods groups"
	echo 1 >"$CG/kubepods/besteffort/cpu.idle" || fail "cannot set cpu.idle=1 on kubepods/besteffort"
}

# Kill what is left in the tree and remove it, leaves first.
kubepods_teardown() {
	for _g in kubepods/guaranteed kubepods/besteffort system.slice/containerd kubepods system.slice; do
		[ -d "$CG/$_g" ] || continue
		echo 1 >"$CG/$_g/cgroup.kill" 2>/dev/null
		_n=0
		while ! rmdir "$CG/$_g" 2>/dev/null && [ "$_n" -lt 50 ]; do
			_n=$((_n + 1))
			sleep 0.1
		done
	done
}

# Run a command inside cgroup $1 (the subshell moves itself, then execs).
in_group() {
	_grp=$1
	shift
	(echo 0 >"$CG/$_grp/cgroup.procs" && exec "$@")
}

# Start a new generation with scope $1 and print its number.
new_scope_generation() {
	_out=$("$SCHED" ctl set --sched-idle-scope="$1") || fail "ctl set --sched-idle-scope=$1 failed: $_out"
	echo "$_out" | sed -n 's/^generation \([0-9]*\):.*/\1/p'
}

# One phase: a new generation with scope $1, 100 wakeups of a 2 ms sleeper
# in group $2; prints "SCHED_IDLE_PICKS REFUSED" and a line of figures on
# stderr.
scope_phase() {
	_gen=$(new_scope_generation "$1") || exit 1
	[ -n "$_gen" ] || fail "no generation number from ctl set"
	_lat=$(in_group "$2" timeout 60 "$WAKELAT" 2000 100) || fail "the $2 sleeper failed or hung under $1"
	# One stats request per phase: under the hogs each costs seconds.
	_block=$(gen_block "$_gen")
	_si=$(block_value "$_block" sched_idle)
	_ref=$(block_value "$_block" "sched-idle refused")
	_pre=$(block_value "$_block" "sched-idle preempt")
	echo "$1 $2 (gen $_gen): sched-idle picks ${_si:-0}, refused ${_ref:-0}, preempt ${_pre:-0}; sleeper avg/p99/max us: $_lat" >&2
	echo "${_si:-0} ${_ref:-0}"
}

# Every CPU runs a besteffort hog (normal policy: idle only by cpu.idle).
# Under hierarchy a guaranteed sleeper takes (and preempts) those CPUs and a
# containerd sleeper never does; under cgroup both do; under task neither.
# Then, still under hierarchy, besteffort's cpu.idle goes to 0 and back to 1
# with the same daemon running: the guaranteed sleeper stops and resumes
# taking the besteffort CPUs.
case_cgroup_idle_scopes() {
	[ -x "$WAKELAT" ] || fail "$WAKELAT is missing (built with the project)"
	trap kubepods_teardown EXIT
	kubepods_setup
	start_sched
	pid=$SCHED_PID
	in_group kubepods/besteffort stress-ng --cpu "$(nproc)" --cpu-method int64 -t 300 --quiet &
	hogs=$!
	sleep 1
	for scope in hierarchy cgroup task; do
		for grp in kubepods/guaranteed system.slice/containerd; do
			r=$(scope_phase "$scope" "$grp") || exit 1
			set -- $r
			eval "si_${scope}_${grp##*/}=$1 refused_${scope}_${grp##*/}=$2"
		done
	done
	echo 0 >"$CG/kubepods/besteffort/cpu.idle" || fail "cannot clear cpu.idle"
	r=$(scope_phase hierarchy kubepods/guaranteed) || exit 1
	set -- $r
	si_cleared=$1
	echo 1 >"$CG/kubepods/besteffort/cpu.idle" || fail "cannot set cpu.idle again"
	r=$(scope_phase hierarchy kubepods/guaranteed) || exit 1
	set -- $r
	si_set_again=$1
	expect_enabled "the cpu.idle phases"
	kill "$hogs"
	wait "$hogs" 2>/dev/null
	[ "$SCHED_PID" = "$pid" ] || fail "the scheduler was restarted"
	[ "$si_hierarchy_guaranteed" -gt 0 ] ||
		fail "hierarchy: a guaranteed wakee never took a besteffort CPU"
	[ "$si_hierarchy_containerd" -eq 0 ] ||
		fail "hierarchy: containerd wakees took besteffort CPUs $si_hierarchy_containerd times"
	[ "$refused_hierarchy_containerd" -gt 0 ] ||
		fail "hierarchy: no besteffort CPU was refused to containerd wakees"
	[ "$si_cgroup_guaranteed" -gt 0 ] && [ "$si_cgroup_containerd" -gt 0 ] ||
		fail "cgroup: sched-idle picks guaranteed $si_cgroup_guaranteed, containerd $si_cgroup_containerd (want both > 0)"
	[ "$refused_cgroup_guaranteed" -eq 0 ] && [ "$refused_cgroup_containerd" -eq 0 ] ||
		fail "cgroup: refusals $refused_cgroup_guaranteed / $refused_cgroup_containerd (want none)"
	[ "$si_task_guaranteed" -eq 0 ] && [ "$si_task_containerd" -eq 0 ] ||
		fail "task: sched-idle picks $si_task_guaranteed / $si_task_containerd (want none: the hogs are not SCHED_IDLE)"
	[ "$si_cleared" -eq 0 ] ||
		fail "besteffort cpu.idle=0: a guaranteed wakee still took its CPUs $si_cleared times"
	[ "$si_set_again" -gt 0 ] ||
		fail "besteffort cpu.idle=1 again: the guaranteed wakee no longer takes its CPUs"
	stop_sched
}
