#!/usr/bin/env bash
# Host side of the vm test tier, as ctest runs it: boot the KERNEL series
# with 8 CPUs (2 NUMA nodes x 2 cores x 2 threads), run the guest runner,
# echo its TAP, and fail unless every planned case printed `ok`.
#
#   tests/vm/ctest-vm.sh KERNEL BUILD_DIR [CASE...]
#
# The guest's /out (scheduler logs of failed cases) and the kernel console
# log land in BUILD_DIR/vm-results/KERNEL/. LOEHLE_VM_TIMEOUT (default 600 s)
# bounds the VM; LOEHLE_VM_ARGS adds options to scripts/vm (word-split).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: $0 KERNEL BUILD_DIR [CASE...]" >&2; exit 2; }
kernel=$1 build=$2
shift 2
results=$build/vm-results/${kernel//\//_}
rm -rf "$results"
mkdir -p "$results"
tap=$results/tap.txt

cd "$root" || exit 2
# shellcheck disable=SC2086
scripts/vm --kernel "$kernel" --cpus 8 --smt 2 --nodes 2 --build "$build" \
	--timeout "${LOEHLE_VM_TIMEOUT:-600}" --out "$results" --console "$results/console.log" \
	${LOEHLE_VM_ARGS:-} -- sh tests/vm/run-cases.sh "$@" | tee "$tap"
rc=${PIPESTATUS[0]}

plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap" | head -n1)
oks=$(grep -c '^ok [0-9]' "$tap")
notoks=$(grep -c '^not ok [0-9]' "$tap")
if [[ -z $plan ]]; then
	echo "ctest-vm: no TAP plan from the guest (scripts/vm exit status $rc; console log $results/console.log)" >&2
	exit 1
fi
if [[ $rc -ne 0 || $oks -ne $plan || $notoks -ne 0 ]]; then
	echo "ctest-vm: $oks of $plan cases ok, $notoks not ok, scripts/vm exit status $rc (results in $results)" >&2
	exit 1
fi
echo "ctest-vm: all $plan cases ok on $(sed -n 's/^# kernel \([^,]*\),.*/\1/p' "$tap")"
