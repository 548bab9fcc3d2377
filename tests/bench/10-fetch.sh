#!/bin/bash
# Cold download of a real package set: mkimage's fetch (tests/tools/fetchdebs -> fetch_plan:
# parallel, keep-alive, SHA-256 checked while streaming, cache fsync + rename) against
# `apt-get download` of the same packages from the same local signed mirror on 127.0.0.1.
# The mirror is built from ~35 real bookworm armhf .debs fetched once with `apt-get download`
# (kept in $BENCH_DEBS between runs). Prints each run, the medians and the ratio apt/mkimage.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${RUNS:-3}
FETCHDEBS=$TOP/build/tools/fetchdebs
BENCH_DEBS=${BENCH_DEBS:-${XDG_CACHE_HOME:-$HOME/.cache}/mkimage-bench/armhf-debs}
PKGS="base-files bash busybox coreutils dash debianutils diffutils findutils grep gzip hello
hostname init-system-helpers libacl1 libattr1 libaudit1 libblkid1 libbz2-1.0 libc-bin libc6
libcap2 libcrypt1 libgcc-s1 libgmp10 liblzma5 libmd0 libpcre2-8-0 libselinux1 libsmartcols1
libtinfo6 libzstd1 login mawk ncurses-base sed tar util-linux zlib1g"

[ -x "$FETCHDEBS" ] || make -C "$TOP" tools >/dev/null
# shellcheck source=../integration/lib.sh
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/faultlib.sh"
unset http_proxy https_proxy no_proxy

# apt_cfg DIR SOURCE-LINE: a private apt configuration (armhf, own lists and cache) in DIR.
apt_cfg() {
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial" "$1/etc/sources.list.d" "$1/etc/preferences.d"
	echo "$2" >"$1/etc/sources.list"
	cat >"$1/apt.conf" <<C
APT::Architecture "armhf";
APT::Architectures { "armhf"; };
Dir::State::Lists "$1/lists";
Dir::State::status "/dev/null";
Dir::Cache "$1/cache";
Dir::Etc::SourceList "$1/etc/sources.list";
Dir::Etc::SourceParts "$1/etc/sources.list.d";
Dir::Etc::Preferences "$1/etc/preferences";
Dir::Etc::PreferencesParts "$1/etc/preferences.d";
APT::Sandbox::User "root";
Acquire::Languages "none";
C
}

# 1. Real packages, once: through the host's apt sources, for armhf.
if [ "$(ls "$BENCH_DEBS"/*.deb 2>/dev/null | wc -l)" -lt 30 ]; then
	echo "fetching the package set once into $BENCH_DEBS"
	mkdir -p "$BENCH_DEBS"
	host_src=$(mktemp -d "$T/host.XXXXXX")
	apt_cfg "$host_src" ""
	cp /etc/apt/sources.list "$host_src/etc/sources.list" 2>/dev/null || true
	cp /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
		"$host_src/etc/sources.list.d/" 2>/dev/null || true
	APT_CONFIG=$host_src/apt.conf apt-get -q update >/dev/null
	# shellcheck disable=SC2086
	(cd "$BENCH_DEBS" && APT_CONFIG=$host_src/apt.conf apt-get -q download $PKGS >/dev/null)
fi

# 2. The local signed mirror.
mkdir -p "$T/repo/pool/main"
cp "$BENCH_DEBS"/*.deb "$T/repo/pool/main/"
gpg_key bench
repo_index "$T/repo" bookworm main armhf
repo_sign "$T/repo" bookworm
fault_serve "$T/repo"
n=$(ls "$T/repo/pool/main" | wc -l)
bytes=$(du -cb "$T/repo/pool/main"/*.deb | tail -n 1 | cut -f1)
awk '/^Filename:/ {f=$2} /^Size:/ {s=$2} /^SHA256:/ {h=$2}
	/^$/ && f {print f, s, h; f=""}' "$T/repo/dists/bookworm/main/binary-armhf/Packages" >"$T/list"
apt_cfg "$T/apt" "deb [signed-by=$KEYRING] $SERVER_URL bookworm main"
APT_CONFIG=$T/apt/apt.conf apt-get -q update >/dev/null
echo "package set: $n real bookworm armhf .debs, $((bytes / 1024)) KiB, served on 127.0.0.1"

# 3. Cold downloads, alternating, each into an empty directory.
timed() { /usr/bin/time -f %e -o "$T/time" "$@" >/dev/null 2>"$T/stderr" ||
	{ cat "$T/stderr" >&2; exit 1; }; cat "$T/time"; }
mk=() ap=()
for i in $(seq 1 "$RUNS"); do
	rm -rf "$T/c" "$T/dl"
	mkdir -p "$T/dl"
	mk+=("$(timed "$FETCHDEBS" --cache-dir "$T/c" --base "$SERVER_URL" <"$T/list")")
	[ "$(find "$T/c/objects" -type f | wc -l)" = "$n" ] || { echo "mkimage fetched too little"; exit 1; }
	ap+=("$(cd "$T/dl" && APT_CONFIG=$T/apt/apt.conf timed apt-get -q download $(awk '/^Package:/ {print $2}' "$T/repo/dists/bookworm/main/binary-armhf/Packages"))")
	[ "$(ls "$T/dl" | wc -l)" = "$n" ] || { echo "apt fetched too little"; exit 1; }
	echo "run $i: mkimage fetch ${mk[-1]} s, apt-get download ${ap[-1]} s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m=$(median "${mk[@]}") a=$(median "${ap[@]}")
echo "median: mkimage fetch $m s, apt-get download $a s"
awk -v m="$m" -v a="$a" 'BEGIN { if (m > 0) printf "ratio apt-get/mkimage: %.2fx (above 1: mkimage is faster)\n", a / m }'
