# Hooks that fill the disk: the work dir (TMPDIR, so the staging tree) is a small tmpfs in a
# private mount namespace (needs root, else skipped with a note). An inside or an outside hook
# whose write fails on the full disk fails the build with exit 7, naming the hook and showing
# "No space left on device"; a hook that fills the disk and exits 0 leaves no room for the next
# (64 KiB) hook's copy, which fails naming that hook; a hook that fills it as the last step lets the build
# finish (the tree is only read afterwards). Every failure leaves no work dir, no image, no process.
if [ -z "${MKI_IN_NS:-}" ]; then
	if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
		echo "SKIP: $(basename "$0" .sh): needs root and unshare -m for a private tmpfs" >&2
		exit 77
	fi
	MKI_IN_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

trap 'rc=$(_exit_status $?); umount -l "$T/tmp" 2>/dev/null || true; _cleanup; exit $rc' EXIT
native_repo
mkdir -p "$T/r/hooks" "$T/tmp" "$T/img"
# The unpacked and configured tree takes about 55 MiB: 80 MiB leaves room for a build, not more.
mount -t tmpfs -o size=80M tmpfs "$T/tmp"
printf '#!/bin/sh\nset -e\ndd if=/dev/zero of=/var/tmp/fill bs=1M\necho unreachable\n' >"$T/r/hooks/fill-in.sh"
printf '#!/bin/sh\nset -e\ndd if=/dev/zero of="$MKIMAGE_ROOT/fill" bs=1M\n' >"$T/r/hooks/fill-out.sh"
printf '#!/bin/sh\ndd if=/dev/zero of=/var/tmp/fill bs=1M 2>/dev/null\nexit 0\n' >"$T/r/hooks/fill-quiet.sh"
# 64 KiB of comments: more than the page the filler's own copy frees when it is removed.
{ printf '#!/bin/sh\n'; for i in $(seq 1 1024); do printf '# %061d\n' "$i"; done; echo 'exit 0'; } \
	>"$T/r/hooks/ok.sh"
chmod +x "$T/r/hooks/"*.sh
hook() { echo "{ name = \"$1\"; script = \"hooks/$2.sh\"; where = \"$3\"; }"; }
native_recipe "$T/r/in.cfg" t "" "$(hook filler fill-in inside)"
native_recipe "$T/r/out.cfg" t "" "$(hook filler fill-out outside)"
native_recipe "$T/r/next.cfg" t "" "$(hook filler fill-quiet inside), $(hook next ok inside)"
native_recipe "$T/r/last.cfg" t "" "$(hook filler fill-quiet inside)"

# full RECIPE CODE PATTERN: the build fails with CODE and PATTERN; nothing is left.
full() {
	TMPDIR=$T/tmp expect_fail "$2" "$3" "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" \
		"$T/r/$1.cfg"
	[ -z "$(ls -A "$T/tmp")" ] || fail "$1: work dir left: $(ls -A "$T/tmp")"
	[ -z "$(left_beside "$T/img")" ] || fail "$1: output left: $(left_beside "$T/img")"
	no_process_under "$T/tmp" "$1"
	note "$1: exit $2, $(grep -m1 "error:" "$T/err" | sed 's/;.*//')"
}

full in 7 "hook 'filler' \(inside, .*\) failed with exit status 1"
grep -q "No space left on device" "$T/err" || fail "in: the hook's 'No space left' is not shown"
full out 7 "hook 'filler' \(outside, .*\) failed with exit status 1"
grep -q "No space left on device" "$T/err" || fail "out: the hook's 'No space left' is not shown"
full next 7 "cannot copy hook 'next' into '[^']*': No space left on device"

TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/last.cfg"
e2fsck -fn "$T/img/t.ext4" >/dev/null 2>&1 || fail "last: the image is not clean"
[ -z "$(ls -A "$T/tmp")" ] || fail "last: work dir left: $(ls -A "$T/tmp")"
size=$(debugfs -R "stat /var/tmp/fill" "$T/img/t.ext4" 2>/dev/null | sed -n 's/.*[^a-zA-Z]Size: \([0-9]*\).*/\1/p' | head -n 1)
[ "${size:-0}" -gt 1000000 ] || fail "last: the hook's file is not in the image"
note "last: exit 0, the hook's $((size / 1048576)) MiB file is in the image"
