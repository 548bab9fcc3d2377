# test-cost: slow (six native builds, two as an ordinary user)
# Memory is bounded per step by --limit memory: a postinst writing into the step's /dev/shm, /tmp,
# /run and /dev (each mount counted: without any one of them the sum stays under the bound), one
# allocating past it, and a preinst filling a SysV segment and /tmp are each stopped with exit 7
# naming the step and the limit; the host's Shmem is back where it was and nothing is left
# running. A preinst that leaves a SysV segment behind cannot hand it to configure: each step has
# its own IPC namespace (the postinst sees 0 segments). As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v cc >/dev/null || skip "no C compiler (make deps)"
cc -static -O1 -o "$T/hog" "$TOP/tests/integration/hog.c" || skip "cannot link statically (make deps)"

# hostile NAME PREINST POSTINST: a package shipping hog with these scripts ("" for none).
hostile() {
	local d
	d=$(deb_new "$1" 1.0 amd64)
	mkdir -p "$d/usr/libexec/mki84"
	cp "$T/hog" "$d/usr/libexec/mki84/hog"
	[ -z "$2" ] || deb_file "$d" DEBIAN/preinst "#!/bin/sh
$2
" 0755
	[ -z "$3" ] || deb_file "$d" DEBIAN/postinst "#!/bin/sh
$3
" 0755
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}
# 70 MiB in each of three mounts stays under 256M; the 100 MiB in the fourth passes it.
hostile fill-all "" 'for m in /dev/shm /tmp /run; do head -c 70M /dev/zero >$m/mki84-fill; done
head -c 100M /dev/zero >/dev/mki84-fill
sleep 30'
hostile fill-tmp-last "" 'for m in /dev/shm /dev /run; do head -c 70M /dev/zero >$m/mki84-fill; done
head -c 100M /dev/zero >/tmp/mki84-fill
sleep 30'
hostile alloc "" '/usr/libexec/mki84/hog alloc 400'
hostile shm-big '/usr/libexec/mki84/hog shm 200
head -c 100M /dev/zero >/tmp/mki84-fill
sleep 8402' ""
hostile shm-left '/usr/libexec/mki84/hog shm 64' '/usr/libexec/mki84/hog shmcount /etc/mki84-shm'
native_repo

mkdir -p "$T/r" "$T/tmp" "$T/img"
for p in fill-all fill-tmp-last alloc shm-big shm-left; do
	native_recipe "$T/r/$p.cfg" t ", \"$p\""
done

# The host's shared memory in MiB, but for the files in /dev/shm: other tests' emulated armhf
# builds keep their trees there (builder/sandbox/workroot.h), which is no leak of this one's.
shmem() {
	echo $(($(awk '/^Shmem:/ { print int($2 / 1024) }' /proc/meminfo) - \
		$(df -m --output=used /dev/shm 2>/dev/null | tail -n 1 || echo 0)))
}

# build RECIPE TMP CACHE IMG [RUNNER...]: build with --limit memory=256M, then check that
# nothing of it is left running or on disk and that the host's Shmem is back; sets RC.
build() {
	local recipe=$1 tmp=$2 cache=$3 img=$4 before after
	shift 4
	before=$(shmem)
	RC=0
	TMPDIR=$tmp "$@" timeout 600 "$MKIMAGE" --cache-dir "$cache" -o "$img/t.ext4" \
		--limit memory=256M "$T/r/$recipe.cfg" >"$T/out" 2>"$T/err" || RC=$?
	[ "$RC" != 124 ] || fail "$recipe: the build did not end within 600 s"
	after=$(shmem)
	no_process 'hog alloc' "after $recipe"
	no_process 'sleep 840[12]' "after $recipe"
	no_process_under "$tmp" "after $recipe"
	[ -z "$(ls -A "$tmp")" ] || fail "$recipe: work dir left: $(ls -A "$tmp")"
	# other builds on the machine may hold some: 64 MiB of slack, far below what was written
	[ "$after" -le $((before + 64)) ] || fail "$recipe: host Shmem $before MiB before, $after MiB after"
}

# over RECIPE WHO WHAT [BUILD ARGS...]: the build fails with exit 7 naming WHAT and the memory limit
over() {
	local recipe=$1 who=$2 what=$3
	shift 3
	build "$recipe" "$@"
	[ "$RC" = 7 ] || { cat "$T/err" >&2; fail "$who $recipe: exit $RC, expected 7"; }
	grep -Eq "$what held more memory than its limit: [0-9.]+ MiB .*limit 'memory' is 256M; raise it with --limit memory=SIZE" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who $recipe: the memory bound is not named"; }
	[ "$(grep -c 'more memory than its limit' "$T/err")" = 1 ] || fail "$who $recipe: not said once"
	note "$who $recipe: exit 7, $(grep -o "held more memory than its limit: [0-9.]* MiB" "$T/err")"
}

# left RECIPE WHO ARGS...: a preinst's 64 MiB segment is gone when the postinst runs
left() {
	local recipe=$1 who=$2 img=$5 seen
	shift 2
	build "$recipe" "$@"
	[ "$RC" = 0 ] || { cat "$T/err" >&2; fail "$who $recipe: exit $RC"; }
	seen=$(debugfs -R "cat /etc/mki84-shm" "$img/t.ext4" 2>/dev/null)
	[ "$seen" = "0 segments, 0 pages" ] || fail "$who $recipe: configure saw the preinst's segment: $seen"
	note "$who $recipe: exit 0; the postinst saw $seen"
	rm -f "$img"/*
}

postinst="'dpkg --configure -a' \(the postinst of package '[a-z-]+'\)"
over fill-all root "$postinst" "$T/tmp" "$T/cache" "$T/img"
over fill-tmp-last root "$postinst" "$T/tmp" "$T/cache" "$T/img"
over alloc root "$postinst" "$T/tmp" "$T/cache" "$T/img"
over shm-big root "the preinst of 'shm-big' \(1.0\)( \(the preinst of package 'shm-big'\))?" \
	"$T/tmp" "$T/cache" "$T/img"
[ -z "$(left_beside "$T/img")" ] || fail "output left: $(left_beside "$T/img")"
left shm-left root "$T/tmp" "$T/cache" "$T/img"

# Under emulation RLIMIT_AS leaves qemu-user its reservation (4.4 GiB for qemu-arm): an armhf
# tree (dpkg, the scripts, the libc probe all run by qemu-arm-static) configures under the same
# 256M limit.
if [ -x /usr/bin/qemu-arm-static ]; then
	fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils \
		sed grep busybox hello:armel libc6:armel debianutils findutils diffutils
	fixture_repo "$T/arm" arm armhf
	RECIPE_ARCH=armhf native_recipe "$T/r/arm.cfg" t ""
	build arm "$T/tmp" "$T/cache" "$T/img"
	[ "$RC" = 0 ] || { cat "$T/err" >&2; fail "armhf under qemu with --limit memory=256M: exit $RC"; }
	note "armhf under qemu, --limit memory=256M: exit 0, $(grep -o 'dpkg --configure -a: [0-9.]* s' "$T/err")"
	rm -f "$T/img"/*
else
	skip_part "no qemu-arm-static: the emulated build under the memory limit"
fi

if [ "$(id -u)" = 0 ]; then
	test_user mkiwatch84
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mkiwatch84 "$T/u"
	over fill-all user "$postinst" "$T/u/tmp" "$T/u/cache" "$T/u/img" as_user mkiwatch84
	left shm-left user "$T/u/tmp" "$T/u/cache" "$T/u/img" as_user mkiwatch84
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
