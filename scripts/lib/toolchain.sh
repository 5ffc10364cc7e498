# shellcheck shell=bash source-path=SCRIPTDIR
# Locates scx_loehle's BPF toolchain. Source it (after scripts/lib/common.sh,
# or on its own: it sources common.sh when `log` is not defined yet).
#
# What it exports, each found the same way scripts/setup installs it:
#   CLANG          clang-16 (or a clang >= 16 on PATH) for the BPF objects
#   BPFTOOL        bpftool >= 7.5: one on PATH when new enough, otherwise
#                  $LOEHLE_DEPS/bin/bpftool (unpacked from bookworm-backports)
#   LIBBPF_PREFIX  prefix holding include/bpf/*.h and lib/libbpf.a when the
#                  static libbpf >= 1.5 built by setup is used
#                  ($LOEHLE_DEPS/libbpf/usr); empty when the system's libbpf
#                  (pkg-config libbpf) is already >= 1.5
#   PKG_CONFIG_PATH  prefixed with $LIBBPF_PREFIX/lib/pkgconfig when set
# Each is left empty when nothing suitable is found; toolchain_require dies
# with one line naming what is missing (run scripts/setup).
#
# Helper for CMake callers:
#   loehle_cmake_args   prints one -D argument a line (mapfile it into an array):
#                       -DLOEHLE_DEPS=... -DBPF_CLANG=... -DBPFTOOL=...
#                       and -DLIBBPF_PREFIX=... when the local libbpf is used.
#
# Minimum versions, shared with scripts/setup:
LOEHLE_MIN_CLANG=16
LOEHLE_MIN_BPFTOOL=7.5
LOEHLE_MIN_LIBBPF=1.5

if ! declare -F log >/dev/null; then
	# shellcheck source=common.sh
	source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fi

# version_ge A B: true when version A >= version B (Debian ordering).
version_ge() { dpkg --compare-versions "$1" ge "$2"; }

# bpftool_version PATH: prints e.g. 7.5.0, or nothing when PATH does not run.
bpftool_version() {
	"$1" version 2>/dev/null | awk 'NR == 1 { sub(/^v/, "", $2); print $2 }'
}

# clang_version PATH: prints e.g. 16.0.6.
clang_version() {
	"$1" --version 2>/dev/null | sed -n '1s/.*clang version \([0-9][0-9.]*\).*/\1/p'
}

# libbpf_pc_version PCFILE: the Version: field of a libbpf.pc.
libbpf_pc_version() {
	sed -n 's/^Version: *//p' "$1" 2>/dev/null
}

toolchain_find_clang() {
	local c v
	for c in clang-16 clang-17 clang-18 clang-19 clang-20 clang; do
		c=$(command -v "$c" 2>/dev/null) || continue
		v=$(clang_version "$c")
		if [[ -n $v ]] && version_ge "$v" "$LOEHLE_MIN_CLANG"; then
			printf '%s\n' "$c"
			return 0
		fi
	done
	return 1
}

toolchain_find_bpftool() {
	local b v
	for b in "$(command -v bpftool 2>/dev/null || true)" /usr/sbin/bpftool "$LOEHLE_DEPS/bin/bpftool"; do
		[[ -n $b && -x $b ]] || continue
		v=$(bpftool_version "$b")
		if [[ -n $v ]] && version_ge "$v" "$LOEHLE_MIN_BPFTOOL"; then
			printf '%s\n' "$b"
			return 0
		fi
	done
	return 1
}

# Prints the local prefix, or "system", or fails.
toolchain_find_libbpf() {
	local v p d spath=
	# The system's libbpf: pkg-config without our own prefix in its path.
	IFS=: read -r -a d <<<"${PKG_CONFIG_PATH:-}"
	for p in ${d[@]+"${d[@]}"}; do
		[[ -z $p || $p == "$LOEHLE_DEPS"/libbpf/* ]] || spath+=${spath:+:}$p
	done
	v=$(PKG_CONFIG_PATH=$spath pkg-config --modversion libbpf 2>/dev/null || true)
	if [[ -n $v ]] && version_ge "$v" "$LOEHLE_MIN_LIBBPF"; then
		printf 'system\n'
		return 0
	fi
	p=$LOEHLE_DEPS/libbpf/usr
	v=$(libbpf_pc_version "$p/lib/pkgconfig/libbpf.pc")
	if [[ -f $p/lib/libbpf.a && -f $p/include/bpf/libbpf.h && -n $v ]] &&
		version_ge "$v" "$LOEHLE_MIN_LIBBPF"; then
		printf '%s\n' "$p"
		return 0
	fi
	return 1
}

toolchain_detect() {
	CLANG=$(toolchain_find_clang || true)
	BPFTOOL=$(toolchain_find_bpftool || true)
	LIBBPF_PREFIX=$(toolchain_find_libbpf || true)
	LOEHLE_LIBBPF_FOUND=${LIBBPF_PREFIX:+yes}
	[[ $LIBBPF_PREFIX == system ]] && LIBBPF_PREFIX=
	if [[ -n $LIBBPF_PREFIX ]]; then
		case ":${PKG_CONFIG_PATH:-}:" in
		*":$LIBBPF_PREFIX/lib/pkgconfig:"*) ;;
		*) PKG_CONFIG_PATH=$LIBBPF_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} ;;
		esac
		export PKG_CONFIG_PATH
	fi
	export CLANG BPFTOOL LIBBPF_PREFIX
}

toolchain_require() {
	[[ -n $CLANG ]] || die "no clang >= $LOEHLE_MIN_CLANG found (install clang-16: run scripts/setup)"
	[[ -n $BPFTOOL ]] || die "no bpftool >= $LOEHLE_MIN_BPFTOOL found (run scripts/setup)"
	[[ -n ${LOEHLE_LIBBPF_FOUND:-} ]] || die "no libbpf >= $LOEHLE_MIN_LIBBPF found (run scripts/setup)"
}

loehle_cmake_args() {
	printf '%s\n' "-DLOEHLE_DEPS=$LOEHLE_DEPS" "-DBPF_CLANG=$CLANG" "-DBPFTOOL=$BPFTOOL"
	[[ -z $LIBBPF_PREFIX ]] || printf '%s\n' "-DLIBBPF_PREFIX=$LIBBPF_PREFIX"
}

toolchain_detect
