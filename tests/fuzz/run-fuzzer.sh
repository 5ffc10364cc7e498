#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS (or, with RUNS > 0, for RUNS
# executions however long they take) from the seeds in SEEDS, with its
# working corpus and any crash input under WORK (never in the tree).
#
#   run-fuzzer.sh FUZZER SEEDS WORK SECONDS [RUNS]
#
# Exits non-zero, naming the input that broke a property, when the fuzzer
# found one; the input can be replayed with `FUZZER INPUT`.
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4 runs=${5:-0}
[[ $seconds =~ ^[1-9][0-9]*$ && $runs =~ ^(0|[1-9][0-9]*)$ ]] ||
	{ echo "run-fuzzer: SECONDS must be positive and RUNS a number, not '$seconds' and '$runs'" >&2; exit 2; }
limit=(-max_total_time="$seconds")
[[ $runs -gt 0 ]] && limit=(-runs="$runs")
[[ -x $fuzzer ]] || { echo "run-fuzzer: no $fuzzer: configure the sanitized build (scripts/fuzz --build-only)" >&2; exit 1; }
[[ -d $seeds ]] || { echo "run-fuzzer: no seed folder $seeds" >&2; exit 1; }
mkdir -p "$work/corpus" "$work/crashes"
set +e
"$fuzzer" "${limit[@]}" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$work/crashes/" "$work/corpus" "$seeds" 2>"$work/log.txt"
rc=$?
set -e
grep -E '^(stat::number_of_executed_units|stat::new_units_added|cov:|#[0-9]+.*DONE)' "$work/log.txt" | tail -n 3 || true
if [[ $rc != 0 ]]; then
	tail -n 30 "$work/log.txt" >&2
	crash=$(ls -t "$work/crashes" 2>/dev/null | head -n 1)
	echo "run-fuzzer: $(basename "$fuzzer") failed (status $rc)${crash:+; input $work/crashes/$crash}" >&2
	exit 1
fi
