# test-cost: slow (builds the recipe four times: run.sh starts it first)
# Reproducibility: the same recipe + lock + SOURCE_DATE_EPOCH gives sha256-identical ext4 and tar
# images across builds that differ in cwd, umask, TMPDIR, user, wall-clock time and cache state.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"

. "$(dirname "$0")/lib-e2e.sh"
e2e_serve arm-board
export SOURCE_DATE_EPOCH=1700000000

# A private copy of the recipe (without kernel and systemd: flagship.sh) and hooks that any user
# can read, in ext4 and tar flavours.
chmod 755 "$T"
flagship_lean arm-board "$T/p"
cp "$MKIMAGE" "$T/p/mkimage"
sed -i 's/^  output = .*//' "$T/p/recipes/arm-board.cfg"
sed 's/format = "ext4";/format = "tar";/' "$T/p/recipes/arm-board.cfg" >"$T/p/recipes/arm-board-tar.cfg"
chmod -R a+rX "$T/p"

# build DIR UMASK RECIPE [USER]: a build with its own cwd, TMPDIR, cache and umask.
build() {
	local dir=$1 mask=$2 recipe=$3 user=${4:-}
	mkdir -p "$dir/tmp" "$dir/cwd" "$dir/cache"
	[ -z "$user" ] || chown -R "$user" "$dir"
	(cd "$dir/cwd" && umask "$mask" && TMPDIR=$dir/tmp ${user:+as_user "$user"} "$T/p/mkimage" -q \
		--cache-dir "$dir/cache" --source "$SRC" --output "$dir/image" "$T/p/recipes/$recipe") \
		>"$dir/log" 2>&1 || { cat "$dir/log" >&2; fail "build in $dir failed"; }
	[ -z "$(ls -A "$dir/tmp")" ] || fail "build in $dir left files in its TMPDIR"
}

build "$T/a" 022 arm-board.cfg                      # cold cache
cp -a "$T/a/cache/." "$T/b/cache/" 2>/dev/null || { mkdir -p "$T/b/cache"; cp -a "$T/a/cache/." "$T/b/cache/"; }
build "$T/b" 077 arm-board.cfg                      # warm cache, another umask, later in time
[ "$(sha256sum <"$T/a/image")" = "$(sha256sum <"$T/b/image")" ] ||
	fail "ext4 images differ between a cold and a warm build"
cmp -s "$T/a/image.lock" "$T/b/image.lock" || fail "the locks differ"
cmp -s "$T/a/image.spdx.json" "$T/b/image.spdx.json" || fail "the SBOMs differ"

if [ "$(id -u)" = 0 ]; then
	test_user mkirepro61
	build "$T/c" 027 arm-board-tar.cfg mkirepro61    # an ordinary user, cold cache
	build "$T/d" 002 arm-board-tar.cfg                # root, another umask
	[ "$(sha256sum <"$T/c/image")" = "$(sha256sum <"$T/d/image")" ] ||
		fail "tar images differ between an ordinary user's build and root's"
	tar -tvf "$T/c/image" | grep -q ' root/shadow .*etc/shadow$\| 0/42 .*etc/shadow$' ||
		fail "tar image lacks /etc/shadow owned by root:shadow"
else
	skip_part "not root: the ordinary-user tar comparison needs a throwaway user"
fi
