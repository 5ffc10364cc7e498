#!/usr/bin/env bash
# Host side of the vm test tier, as ctest runs it: boot the KERNEL series
# with 8 CPUs (2 NUMA nodes x 2 cores x 2 threads), run the guest runner,
# echo its TAP, and fail unless every planned case printed `ok`.
#
#   tests/vm/ctest-vm.sh KERNEL BUILD_DIR [CASE...]
#
# LOEHLE_VM_NODES=1 boots the same 8 CPUs as one node and one LLC (the flat
# layout of the seeds' single-group experiments). Cases named flat_* need
# it and run only there; every other case runs only on the 2-node layout.
#
# Verdict: every planned case printed `ok` (tests/vm/run-cases.sh also
# fails a case on kernel warnings, stalls and ejections in its kernel log,
# and on a state that stays enabled after it), and scripts/vm exited 0.
# A kernel panic, a guest that stops early or times out, or a non-zero exit
# after the last case fails the tier, with no second boot: a retried panic
# hides a defect. The last line names the failed cases.
#
# Single-threaded TCG (LOEHLE_VM_TCG_THREADS, default single here):
# multi-threaded TCG occasionally executes a stale copy of kernel text
# while the guest patches a static key (an "Oops: int3" in whatever
# function was being patched, seen while sched_ext switches on).
#
# LOEHLE_VM_PROGRESS=FILE appends each case's verdict line to FILE as the
# guest prints it, tagged with the boot (vm-7, vm-6.18-nodes1, ...):
# scripts/test shows that file while the guests run.
#
# The guest's /out (scheduler logs of failed cases) and the kernel console
# logs land in BUILD_DIR/vm-results/KERNEL/. LOEHLE_VM_TIMEOUT (default 1800 s)
# bounds each boot; LOEHLE_VM_ARGS adds options to scripts/vm (word-split).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: $0 KERNEL BUILD_DIR [CASE...]" >&2; exit 2; }
kernel=$1 build=$2
shift 2
nodes=${LOEHLE_VM_NODES:-2}
# LOEHLE_VM_GROUP=stalls: the cases of tests/vm/cases/stalls.sh, in a boot
# of their own (about 6 min); the 2-node tier runs every other case.
group=${LOEHLE_VM_GROUP:-}
[[ -z $group || $group == stalls ]] || { echo "ctest-vm: LOEHLE_VM_GROUP is stalls or empty, not '$group'" >&2; exit 2; }
results=$build/vm-results/${kernel//\//_}
[[ $nodes == 2 ]] || results=$results-nodes$nodes
[[ -z $group ]] || results=$results-$group
rm -rf "$results"
mkdir -p "$results"

cd "$root" || exit 2
export LOEHLE_VM_TCG_THREADS=${LOEHLE_VM_TCG_THREADS:-single}
if [[ $# -gt 0 ]]; then
	cases=("$@")
else
	if [[ $group == stalls ]]; then
		files=(tests/vm/cases/stalls.sh)
	else
		files=()
		for f in tests/vm/cases/*.sh; do
			[[ $nodes == 1 || $f != */stalls.sh ]] && files+=("$f")
		done
	fi
	mapfile -t cases < <(cat "${files[@]}" | sed -n 's/^case_\([A-Za-z0-9_]*\)[ ]*().*/\1/p' |
		if [[ $nodes == 1 ]]; then grep '^flat_'; else grep -v '^flat_'; fi)
fi
[[ ${#cases[@]} -gt 0 ]] || { echo "ctest-vm: no cases found" >&2; exit 1; }

# case_installed_layout runs the Debian package's files: build the package
# from this build folder and unpack it into BUILD/vm-installed/root, unless
# that was done after the binary was built (a stamp: the unpacked files
# carry the package's clamped mtimes). Under a lock: both kernels' entries
# start together.
if [[ " ${cases[*]} " == *" installed_layout "* ]]; then
	inst=$build/vm-installed
	mkdir -p "$inst"
	(
		flock 9
		if [[ ! -x $inst/root/usr/sbin/scx_loehle || ! $inst/stamp -nt $build/scx_loehle ]]; then
			rm -rf "$inst/root" "$inst"/*.deb "$inst/stamp"
			deb=$(scripts/package --no-lintian --build "$build" --out "$inst" 2>"$inst/package.log") &&
				dpkg-deb -x "$deb" "$inst/root" && touch "$inst/stamp"
		fi
	) 9>"$inst/.lock" || echo "ctest-vm: could not build the package for installed_layout ($inst/package.log): the case will say so" >&2
fi

declare -A verdict    # case -> ok | not ok
tap=$results/tap.txt
console=$results/console.log
# shellcheck disable=SC2086
scripts/vm --kernel "$kernel" --cpus 8 --smt 2 --nodes "$nodes" --build "$build" \
	--timeout "${LOEHLE_VM_TIMEOUT:-1800}" --out "$results" --console "$console" \
	${LOEHLE_VM_ARGS:-} -- sh tests/vm/run-cases.sh "${cases[@]}" | tee "$tap" |
	awk -v progress="${LOEHLE_VM_PROGRESS:-}" -v tag="vm-${results##*/}" '
		{ print; fflush() }
		progress != "" && /^(ok|not ok) [0-9]+ - / { print tag ": " $0 >> progress; fflush(progress) }'
rc=${PIPESTATUS[0]}
kernel_seen=$(sed -n 's/^# kernel \([^,]*\),.*/\1/p' "$tap" | head -n1)
while IFS='|' read -r status name; do
	verdict[$name]=$status
done < <(sed -n 's/^\(ok\|not ok\) [0-9]* - \([A-Za-z0-9_]*\).*/\1|\2/p' "$tap")

ok=0 bad=0 missing=() failed=()
for c in "${cases[@]}"; do
	case ${verdict[$c]:-} in
	ok) ok=$((ok + 1)) ;;
	"not ok") bad=$((bad + 1)); failed+=("$c") ;;
	*) missing+=("$c") ;;
	esac
done
# Why the guest stopped, when it did not stop by itself after the last case.
guest_end() {
	local panic
	panic=$(grep -m1 -o 'Oops: [^]]*\|Kernel panic[^]]*\|BUG: [^]]*' "$console" 2>/dev/null)
	case $rc in
	0) ;;
	126) echo "kernel panic during ${missing[0]:-the last case}: ${panic:-see the console log}" ;;
	124) echo "the guest timed out after ${LOEHLE_VM_TIMEOUT:-1800} s during ${missing[0]:-the last case}" ;;
	*) echo "scripts/vm exited with status $rc${panic:+ ($panic)}" ;;
	esac
}
# Status 1 with every case run and some not ok is the runner's own verdict.
end=
if [[ $rc -ne 0 ]] && ! [[ $rc -eq 1 && $bad -gt 0 && ${#missing[@]} -eq 0 ]]; then
	end=$(guest_end)
fi
if [[ $ok -ne ${#cases[@]} || -n $end ]]; then
	[[ -z $end ]] || echo "ctest-vm: $end (console log $console)" >&2
	echo "ctest-vm: $ok of ${#cases[@]} cases ok on ${kernel_seen:-kernel $kernel}; not ok: ${failed[*]:-none}; not run: ${missing[*]:-none} (results in $results)" >&2
	exit 1
fi
echo "ctest-vm: all ${#cases[@]} cases ok on $kernel_seen"
