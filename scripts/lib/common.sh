# shellcheck shell=bash
# Shared helpers for scx_loehle's scripts. Source it; do not run it.
#
# Contract:
#   LOEHLE_ROOT   the repository's top folder
#   LOEHLE_CACHE  downloads that outlive a checkout (kernels, .debs, apt lists);
#                 default /var/cache/scx_loehle, or ~/.cache/scx_loehle when
#                 that is not writable
#   LOEHLE_DEPS   the git-ignored local prefix for tools built or unpacked
#                 from Debian packages (libbpf, bpftool): $LOEHLE_ROOT/.deps
#   copy_worktree DEST  the working tree's files into DEST (below)
#   die MSG       one-line error on stderr, exit 1
#   usage_die MSG one-line command-line error on stderr, exit 2
#   log MSG       progress line on stderr
#   opt_value WHAT "$@"
#                 the value of the long option in $1, given as `--name VALUE`
#                 or `--name=VALUE`: sets OPT_VALUE and OPT_SHIFT (the
#                 arguments it used, 1 or 2); a missing or empty value is a
#                 usage_die ("--name needs WHAT")
#   papt ARGS     apt-get through a private configuration that knows the
#                 suites the project needs (bookworm-backports, trixie,
#                 trixie-backports, sid) without touching the machine's own
#                 apt sources; run `papt_update` once before it.

LOEHLE_ROOT=${LOEHLE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
if [[ -z ${LOEHLE_CACHE:-} ]]; then
	if mkdir -p /var/cache/scx_loehle 2>/dev/null && [[ -w /var/cache/scx_loehle ]]; then
		LOEHLE_CACHE=/var/cache/scx_loehle
	else
		LOEHLE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/scx_loehle
	fi
fi
LOEHLE_DEPS=${LOEHLE_DEPS:-$LOEHLE_ROOT/.deps}
export LOEHLE_ROOT LOEHLE_CACHE LOEHLE_DEPS

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# copy_worktree DEST: the working tree's files as they are now (tracked and
# untracked, not ignored; outside a git checkout every file but the build
# folders, .deps and results) into the existing folder DEST.
copy_worktree() {
	if git -C "$LOEHLE_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$LOEHLE_ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
			tar -xf - -C "$1"
	else
		tar -C "$LOEHLE_ROOT" --exclude='./build*' --exclude=./.deps --exclude=./results -cf - . |
			tar -xf - -C "$1"
	fi
}
die() { printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# build_locked DIR [ARGS...]: `cmake --build DIR ARGS...`, one at a time per
# build folder. ctest runs guests side by side, and the scripts they call
# (the vm tier's package, the benchmark's binaries) build the same folder;
# the layering test takes the same lock (tests/layering/CMakeLists.txt).
build_locked() {
	local dir=$1
	shift
	flock "$dir/.loehle-build.lock" cmake --build "$dir" "$@"
}
usage_die() { printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2; exit 2; }

# A parser loop takes one option per turn and shifts by OPT_SHIFT:
#   OPT_SHIFT=1
#   case $1 in
#   --build | --build=*) opt_value 'a folder' "$@"; build=$OPT_VALUE ;;
#   ...
#   esac
#   shift "$OPT_SHIFT"
# In the two-word form a next word that starts with a dash is taken for the
# following option, not for this one's value (`--kernel --cpus 8` reports the
# missing kernel rather than booting one named --cpus); a value that starts
# with a dash is given as --name=VALUE.
# shellcheck disable=SC2034  # OPT_VALUE and OPT_SHIFT are the caller's
opt_value() {
	local what=$1
	shift
	if [[ $1 == --*=* ]]; then
		OPT_VALUE=${1#*=} OPT_SHIFT=1
		[[ -n $OPT_VALUE ]] || usage_die "${1%%=*} needs $what"
	else
		[[ $# -ge 2 && -n $2 ]] || usage_die "$1 needs $what"
		[[ $2 != -?* ]] || usage_die "$1 needs $what, not the option '$2' (a value that starts with a dash goes as $1=VALUE)"
		OPT_VALUE=$2 OPT_SHIFT=2
	fi
}

# The Debian archive URI the machine already uses; the private configuration
# points at the same mirror rather than a hard-coded host.
debian_archive_uri() {
	local uri
	uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
	if [[ -z $uri ]]; then
		uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1)
	fi
	[[ -n $uri ]] || die "cannot find the Debian archive URI in /etc/apt/sources.list{,.d}"
	printf '%s\n' "$uri"
}

PAPT_DIR=$LOEHLE_CACHE/apt
papt_opts() {
	printf '%s\n' \
		-o "Dir::Etc::SourceList=$PAPT_DIR/sources.list" \
		-o "Dir::Etc::SourceParts=$PAPT_DIR/sources.list.d" \
		-o "Dir::State::Lists=$PAPT_DIR/lists" \
		-o "Dir::Cache=$PAPT_DIR/cache" \
		-o "APT::Get::List-Cleanup=0" \
		-o "Debug::NoLocking=1"
}

papt_update() {
	local uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg suite
	uri=$(debian_archive_uri)
	mkdir -p "$PAPT_DIR/sources.list.d" "$PAPT_DIR/lists/partial" "$PAPT_DIR/cache/archives/partial"
	: >"$PAPT_DIR/sources.list"
	for suite in bookworm-backports trixie trixie-backports sid; do
		printf 'deb [signed-by=%s] %s %s main\ndeb-src [signed-by=%s] %s %s main\n' \
			"$keyring" "$uri" "$suite" "$keyring" "$uri" "$suite" >>"$PAPT_DIR/sources.list"
	done
	local -a opts
	mapfile -t opts < <(papt_opts)
	apt-get "${opts[@]}" -qq update >&2 || die "apt-get update through the private configuration failed (is the Debian archive reachable?)"
}

papt() {
	local -a opts
	mapfile -t opts < <(papt_opts)
	apt-get "${opts[@]}" "$@"
}

papt_cache() {
	local -a opts
	mapfile -t opts < <(papt_opts)
	apt-cache "${opts[@]}" "$@"
}
