#!/bin/bash
# Configure time of the hooks stage for the arm-board package set (about 100 real bookworm
# packages, armhf + armel: preinsts, `dpkg --configure -a` with triggers, audit, manifest
# reconciliation) against the naive way on the same unpacked tree: one emulated shell running
# every preinst (base-passwd first), then the target's `dpkg --configure -a`, all under QEMU in
# the same sandbox; and the small amd64 + i386 fixture configured natively for reference.
# BENCH_RUNS runs each (default 1: one arm-board configuration takes about a minute on 2 cores),
# median reported; /usr/bin/time; no assertions.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/mki-bench-50.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "bench 50: $*" >&2; exit 1; }
. "$TOP/tests/integration/lib-hooks.sh"
[ "$(id -u)" = 0 ] || fail "needs root to build the fixture trees"
make -C "$TOP" -s tools >/dev/null

fixture_arm_board
fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	hello:i386 libc6:i386 debianutils diffutils findutils
fixture_tree arm-board "$T/arm0"
fixture_tree x86 "$T/x860"

# run NAME TREE0 ARGS...: time one configuration of a fresh copy of TREE0; prints seconds
run() {
	local tree0=$1
	shift
	rm -rf "$T/tree" && cp -a "$tree0" "$T/tree"
	cat >"$T/tree/naive.sh" <<'S'
cd /var/lib/dpkg/info
for p in base-passwd $(sed -n 's/^Package: //p' ../status | grep -vx base-passwd); do
	for f in "$p.preinst" "$p":*.preinst; do
		[ -x "$f" ] && DPKG_MAINTSCRIPT_PACKAGE=$p DPKG_MAINTSCRIPT_NAME=preinst "./$f" install
	done
done
dpkg --configure -a
S
	/usr/bin/time -f %e -o "$T/time" "$CONFIGURE" "$@" "$T/tree" >/dev/null 2>"$T/log" ||
		{ cat "$T/log" >&2; fail "configure $* failed"; }
	cat "$T/time"
}
RUNS=${BENCH_RUNS:-1}
median() { sort -n | sed -n "$(((RUNS + 1) / 2))p"; }

ours=$(for i in $(seq "$RUNS"); do run "$T/arm0"; done | median)
plain=$(for i in $(seq "$RUNS"); do run "$T/arm0" --exec-only --exec '/bin/sh /naive.sh'; done | median)
native=$(for i in $(seq "$RUNS"); do run "$T/x860"; done | median)
n=$(grep -c '^Package:' "$T/arm0/var/lib/dpkg/status")
echo "arm-board packages (armhf+armel): $n"
echo "mkimage hooks stage, armhf+armel:           ${ours} s"
echo "preinsts + dpkg --configure -a, all qemu:   ${plain} s"
echo "ratio mkimage / naive:                      $(echo "scale=2; $ours / $plain" | bc)"
echo "mkimage hooks stage, amd64+i386 (native):   ${native} s"
