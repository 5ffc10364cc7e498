#!/usr/bin/env bash
# The bash completion of scx_loehle, driven the way bash drives it: load the
# script `scx_loehle completion bash` prints, set COMP_WORDS/COMP_CWORD as
# bash would for a command line (bash splits at '='), call the function and
# compare COMPREPLY. Also: every flag --help lists is offered somewhere.
#
#   tests/install/completion_test.sh BINARY
set -uo pipefail
bin=${1:?usage: completion_test.sh BINARY}
script=$("$bin" completion bash) || { echo "FAIL: $bin completion bash failed"; exit 1; }
eval "$script"
# compopt works only inside a real completion; here it is a no-op.
compopt() { :; }

failures=0
# expect "WORDS..." -- "WANTED REPLIES (sorted, space-separated)"
expect() {
	local want=${*: -1} got
	COMP_WORDS=("${@:1:$#-2}")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_scx_loehle
	got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
	if [[ $got != "$want" ]]; then
		echo "FAIL: '${COMP_WORDS[*]}' completes to '$got', want '$want'"
		failures=$((failures + 1))
	fi
}

expect scx_loehle --pol -- "--policy="
expect scx_loehle --sched-idle -- "--sched-idle-scope= --sched-idle="
expect scx_loehle --policy = re -- "recency reservoir"
expect scx_loehle --policy = -- "builtin first recency reservoir"
expect scx_loehle ctl se -- "send set"
expect scx_loehle ctl set --sched-idle-scope = -- "cgroup hierarchy task"
expect scx_loehle ctl set --sl -- "--slice-us="
expect scx_loehle ctl get --j -- ""
expect scx_loehle ctl stats --j -- "--json"
expect scx_loehle top --on -- "--once"
expect scx_loehle tr -- "trace"
expect scx_loehle completion "" -- "bash"
expect scx_loehle --smt = o -- "off"

# File names for a PATH flag.
tmp=$(mktemp -d)
touch "$tmp/latency-table"
expect scx_loehle --idle-latency-file = "$tmp/lat" -- "$tmp/latency-table"
rm -rf "$tmp"

# Every flag of --help, offered for some command.
for flag in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -Eq -- "[ \"]${flag}[= \"]" <<<"$script" ||
		{ echo "FAIL: --help lists $flag, the completion never offers it"; failures=$((failures + 1)); }
done

if ((failures)); then
	echo "$failures failure(s)"
	exit 1
fi
echo "completion: all cases ok"
