#!/usr/bin/env bash
# The Debian package end to end, on this machine, as root: scripts/package
# (debhelper, lintian without errors or warnings), then `apt-get install
# ./scx-loehle_*.deb`; scx_loehle --help, --version and `man scx_loehle` from
# the installed files; the unit enabled the Debian way and not started; then
# `apt-get remove` leaves only the conffile (/etc/default/scx_loehle, as
# Debian keeps conffiles until a purge) and `apt-get purge` leaves nothing.
#
#   tests/install/package_test.sh BUILD_DIR
#
# Refuses to run where scx-loehle is already installed (it would remove it).
set -uo pipefail
build=${1:?usage: package_test.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root: it installs and purges the package (run the test tier as root, as CI does)"
installed() { [[ $(dpkg-query -W -f='${db:Status-Status}' scx-loehle 2>/dev/null) == installed ]]; }
known() { dpkg-query -W scx-loehle >/dev/null 2>&1; }
known && fail "scx-loehle is already installed (or its conffiles remain): this test would remove it; purge it first"

out=$(mktemp -d)
cleanup() {
	known && DEBIAN_FRONTEND=noninteractive apt-get purge -y -q scx-loehle >/dev/null 2>&1
	rm -rf "$out"
}
trap cleanup EXIT

deb=$("$root/scripts/package" --build "$build" --out "$out") || fail "scripts/package failed"
[[ $deb == */scx-loehle_*_amd64.deb && -f $deb ]] || fail "scripts/package printed '$deb', not a scx-loehle_*_amd64.deb"
files=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\.||' | grep -v '/$')
for f in /usr/sbin/scx_loehle /lib/systemd/system/scx_loehle.service /etc/default/scx_loehle \
	/usr/share/man/man8/scx_loehle.8.gz /usr/share/bash-completion/completions/scx_loehle \
	/usr/share/doc/scx-loehle/copyright /usr/share/doc/scx-loehle/README.md.gz; do
	grep -qx "$f" <<<"$files" || fail "the package lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libc6* ]] || fail "no shared-library dependencies in Depends: $depends"

log=$out/apt.log
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$log" 2>&1 || fail "apt-get install: $(tail -n 5 "$log")"
installed || fail "apt-get install ran, but dpkg does not list scx-loehle as installed"
# Outputs are captured before grep: `grep -q` leaves a pipe early, and the
# writer's SIGPIPE would fail the pipeline under pipefail.
help=$(/usr/sbin/scx_loehle --help) || fail "the installed scx_loehle --help failed"
grep -q -- '--sched-idle-scope' <<<"$help" || fail "the installed scx_loehle --help lacks --sched-idle-scope"
version=$(/usr/sbin/scx_loehle --version) || fail "the installed scx_loehle --version failed"
[[ $version == "scx_loehle $(dpkg-deb -f "$deb" Version) (git "* ]] ||
	fail "the installed --version says '$version', the package $(dpkg-deb -f "$deb" Version)"
page=$(MANWIDTH=80 man -P cat scx_loehle 2>/dev/null) || fail "man scx_loehle failed"
grep -q 'sched-idle-scope' <<<"$page" || fail "man scx_loehle does not show the installed page"
[[ -L /etc/systemd/system/multi-user.target.wants/scx_loehle.service ]] ||
	fail "the unit is not enabled (no multi-user.target.wants link)"
if [[ -d /run/systemd/system ]]; then
	state=$(systemctl is-active scx_loehle 2>/dev/null)
	[[ $state == inactive ]] || fail "the install started the unit (systemctl is-active: $state)"
fi

DEBIAN_FRONTEND=noninteractive apt-get remove -y -q scx-loehle >"$log" 2>&1 || fail "apt-get remove: $(tail -n 5 "$log")"
left=()
while read -r f; do
	[[ -e $f && $f != /etc/default/scx_loehle && $f != /usr/share/doc/* ]] && left+=("$f")
	[[ -e $f && $f == /usr/share/doc/scx-loehle/* ]] && left+=("$f")
done <<<"$files"
((${#left[@]} == 0)) || fail "apt-get remove left ${left[*]}"
[[ -f /etc/default/scx_loehle ]] || fail "apt-get remove took the conffile /etc/default/scx_loehle (Debian keeps it until a purge)"

DEBIAN_FRONTEND=noninteractive apt-get purge -y -q scx-loehle >"$log" 2>&1 || fail "apt-get purge: $(tail -n 5 "$log")"
for f in /etc/default/scx_loehle /etc/systemd/system/multi-user.target.wants/scx_loehle.service; do
	[[ -e $f || -L $f ]] && fail "apt-get purge left $f"
done
known && fail "dpkg still knows scx-loehle after the purge"
echo "package: $(basename "$deb") built lintian-clean, installed, removed and purged without leftovers"
