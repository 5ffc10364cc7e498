#!/usr/bin/env bash
# `cmake --install` into throwaway DESTDIRs for two prefixes (/usr, as the
# package installs, and /opt/loehle), checked as a packager would: every file
# where the prefix puts it; the unit's ExecStart binary and
# EnvironmentFile exist where the unit says; the unit passes
# `systemd-analyze verify` without a warning (on a copy whose ExecStart
# points into DESTDIR, since verify insists the binary exists); the man page
# renders; the completion is what the binary prints; the settings file's
# examples are flags the scheduler takes; --help and --version run from the
# installed binary.
#
#   tests/install/install_test.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: install_test.sh BUILD_DIR}
fail() { echo "FAIL: $*"; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

# check_prefix PREFIX UNITDIR SYSCONFDIR: install for PREFIX, check it.
check_prefix() {
	local prefix=$1 unitdir=$2 sysconf=$3 dest=$root/${1//\//_}
	local unit exec_start env_file verify_dir out man_out flags err f
	DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$dest.log" 2>&1 ||
		fail "cmake --install --prefix $prefix: $(tail -n 3 "$dest.log")"
	unit=$dest$unitdir/scx_loehle.service
	for f in "$prefix/sbin/scx_loehle" "$prefix/share/man/man8/scx_loehle.8" \
		"$unitdir/scx_loehle.service" "$sysconf/default/scx_loehle" \
		"$prefix/share/bash-completion/completions/scx_loehle" \
		"$prefix/share/doc/scx_loehle/README.md" "$prefix/share/doc/scx_loehle/policies.md"; do
		[[ -f $dest$f ]] || fail "prefix $prefix: not installed: $f"
	done
	[[ -x $dest$prefix/sbin/scx_loehle ]] || fail "$prefix/sbin/scx_loehle is not executable"

	exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
	env_file=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
	[[ $exec_start == "$prefix/sbin/scx_loehle" ]] || fail "prefix $prefix: the unit starts $exec_start"
	[[ $env_file == "$sysconf/default/scx_loehle" ]] || fail "prefix $prefix: the unit reads $env_file"
	grep -q '^SCX_LOEHLE_FLAGS=' "$dest$env_file" || fail "$env_file sets no SCX_LOEHLE_FLAGS"
	grep -q '^ExecStart=.*\$SCX_LOEHLE_FLAGS' "$unit" || fail "ExecStart does not pass \$SCX_LOEHLE_FLAGS"

	verify_dir=$dest/verify
	mkdir -p "$verify_dir"
	sed "s|^ExecStart=$exec_start|ExecStart=$dest$exec_start|" "$unit" >"$verify_dir/scx_loehle.service"
	out=$(systemd-analyze verify --man=no "$verify_dir/scx_loehle.service" 2>&1) ||
		fail "systemd-analyze verify: $out"
	[[ -z $out ]] || fail "systemd-analyze verify warns: $out"

	man_out=$(MANWIDTH=80 man -l "$dest$prefix/share/man/man8/scx_loehle.8" 2>&1) || fail "man -l failed: $man_out"
	grep -q 'sched-idle-scope' <<<"$man_out" || fail "the man page does not render its options"

	cmp -s <("$dest$exec_start" completion bash) "$dest$prefix/share/bash-completion/completions/scx_loehle" ||
		fail "the installed completion is not what the installed binary prints"

	# Each example of the settings file is a command line the scheduler
	# takes (--version last: every flag before it is parsed and checked).
	while read -r flags; do
		# shellcheck disable=SC2086
		err=$("$dest$exec_start" $flags --version 2>&1 >/dev/null) ||
			fail "$env_file's example \"$flags\" is refused: $err"
	done < <(sed -n 's/^#   SCX_LOEHLE_FLAGS="\(.*\)"$/\1/p' "$dest$env_file")

	"$dest$exec_start" --help >/dev/null || fail "the installed binary's --help failed"
	out=$("$dest$exec_start" --version) || fail "the installed binary's --version failed"
	[[ $out == "scx_loehle "[0-9]* ]] || fail "the installed binary's --version says '$out'"
	echo "prefix $prefix: every file in place, the unit verified"
}

# Debian's layout (the package's), and any other prefix.
check_prefix /usr /lib/systemd/system /etc
check_prefix /opt/loehle /opt/loehle/lib/systemd/system /opt/loehle/etc
