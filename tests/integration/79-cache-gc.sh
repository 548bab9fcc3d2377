# Cache expiry: `mkimage --cache-gc[=SIZE]` removes the least recently used objects down to SIZE,
# never one a running build claimed (a build paused in a hook holds its objects through a
# collection), cleans what killed builds left (registration, temp file, writer locks), and a
# build after a collection downloads again and makes the same image. Native amd64 builds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

d=$(deb_new extra-79 1.0 all)
deb_file "$d" usr/share/extra-79/blob "$(head -c 300000 /dev/urandom | base64)"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo
EXTRA_SHA=$(sha256sum "$T/repo/pool/main/extra-79_1.0_all.deb" | cut -d' ' -f1)

mkdir -p "$T/r/hooks" "$T/tmp" "$T/img"
# The waiting hook marks that it runs, then waits (bounded) for the test to let it go.
printf '#!/bin/sh\ntouch /var/tmp/mki79-waiting\ni=0\nwhile [ ! -e /var/tmp/mki79-go ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i+1)); done\n' \
	>"$T/r/hooks/wait.sh"
chmod +x "$T/r/hooks/wait.sh"
native_recipe "$T/r/base.cfg" t ""
native_recipe "$T/r/extra.cfg" t ', "extra-79"'
native_recipe "$T/r/wait.cfg" t "" '{ name = "waiter"; script = "hooks/wait.sh"; where = "inside"; }'

C=$T/cache
export SOURCE_DATE_EPOCH=1700000000
# Objects only: the builds store no layers (test 69 expires those).
build() { # build RECIPE [mkimage options]
	local r=$1
	shift
	TMPDIR=$T/tmp "$MKIMAGE" --cache-dir "$C" --no-layer-cache -o "$T/img/$r.ext4" "$@" "$T/r/$r.cfg" 2>"$T/err-$r" ||
		{ cat "$T/err-$r" >&2; fail "build of $r failed"; }
}
gc() { "$MKIMAGE" --cache-dir "$C" "$@" 2>"$T/gc.err" || { cat "$T/gc.err" >&2; fail "$* failed"; }; }
obj() { echo "$C/objects/sha256/${1:0:2}/$1"; }
# disk usage of the objects and decompressed indexes, as the collector counts it
usage() { find "$C/objects" "$C/indexes" -type f ! -name '.*' -printf '%b\n' | awk '{s += $1 * 512} END {print s + 0}'; }
nobjects() { find "$C/objects" -type f ! -name '.*' | wc -l; }

# Bad input.
expect_fail 2 "takes a size" "$MKIMAGE" --cache-dir "$C" --cache-gc=12Q
expect_fail 2 "takes no recipe" "$MKIMAGE" --cache-dir "$C" --cache-gc "$T/r/base.cfg"
gc --cache-gc
grep -q "nothing to remove" "$T/gc.err" || fail "a missing cache is not reported: $(cat "$T/gc.err")"

# Least recently used first: extra-79 was last used by the first build only.
build extra
sleep 1
build base
cp "$T/img/base.ext4" "$T/first.ext4"
[ -f "$(obj "$EXTRA_SHA")" ] || fail "extra-79 is not in the cache"
n=$(nobjects)
gc --cache-gc=$(( $(usage) + 4096 ))
grep -q "removed 0 " "$T/gc.err" || fail "a cache under its size lost objects: $(cat "$T/gc.err")"
gc --cache-gc=$(( $(usage) - $(stat -c %b "$(obj "$EXTRA_SHA")") * 512 ))
grep -q "removed 1 " "$T/gc.err" || fail "expected exactly one object removed: $(cat "$T/gc.err")"
[ ! -e "$(obj "$EXTRA_SHA")" ] || fail "the least recently used object (extra-79) was kept"
[ "$(nobjects)" = $((n - 1)) ] || fail "objects other than extra-79 were removed"
[ ! -e "$C/locks/$EXTRA_SHA" ] || fail "the removed object's writer lock was left"

# start_waiting: build wait.cfg in the background ($pid) until its hook waits.
start_waiting() {
	local i
	TMPDIR=$T/tmp "$MKIMAGE" --cache-dir "$C" --no-layer-cache -o "$T/img/wait.ext4" "$T/r/wait.cfg" \
		2>"$T/err-wait" &
	pid=$!
	_PIDS="$_PIDS $pid"
	for i in $(seq 1 1200); do
		compgen -G "$T/tmp/*/root/var/tmp/mki79-waiting" >/dev/null && return 0
		kill -0 $pid 2>/dev/null || { cat "$T/err-wait" >&2; fail "the waiting build ended early"; }
		sleep 0.1
	done
	fail "the hook never ran"
}

# A running build's objects survive a collection to size 0; it then completes.
start_waiting
[ "$(ls "$C/users" | wc -l)" = 1 ] || fail "the running build is not registered: $(ls -la "$C/users")"
gc --cache-gc
grep -q "in use by 1 running builds" "$T/gc.err" || fail "no in-use report: $(cat "$T/gc.err")"
[ "$(nobjects)" = $((n - 1)) ] || fail "objects claimed by the running build were removed"
touch "$(compgen -G "$T/tmp/*/root/var/tmp")/mki79-go"
wait $pid || { cat "$T/err-wait" >&2; fail "the build paused during a collection failed"; }
[ -z "$(ls -A "$C/users")" ] || fail "a finished build left its registration"

# What a killed build leaves: its registration (lock released), a temp file and writer locks.
start_waiting
kill -9 $pid
wait $pid 2>/dev/null || true
for i in $(seq 1 100); do [ -z "$(processes_under "$T/tmp")" ] && break; sleep 0.1; done
left=$(processes_under "$T/tmp" | cut -d: -f1)
[ -z "$left" ] || kill -9 $left
rm -rf "$T/tmp"/*
[ "$(ls "$C/users" | wc -l)" = 1 ] || fail "expected the killed build's registration"
fake=$(printf 'ab%.0s' $(seq 1 32))
mkdir -p "$C/objects/sha256/ab"
echo partial >"$C/objects/sha256/ab/.$fake.Xy12Zq"
: >"$C/locks/$fake"
gc --cache-gc
# The indexes of the last verified Release stay: --allow-stale builds from them (mkimage(7)).
kept=$(cat "$C"/releases/*/verified/indexes | grep -cE '^[0-9a-f]{64}$')
[ "$kept" -ge 1 ] || fail "no last verified Release recorded its indexes"
grep -q "removed $((n - 1 - kept)) least recently used" "$T/gc.err" || fail "not every object removed: $(cat "$T/gc.err")"
grep -q "kept $kept indexes that the last verified Releases name" "$T/gc.err" || fail "the kept indexes not said: $(cat "$T/gc.err")"
grep -Eq "and ([3-9]|[1-9][0-9]+) leftovers" "$T/gc.err" || fail "leftovers not cleaned: $(cat "$T/gc.err")"
left=$(find "$C" -type f ! -path "$C/releases/*" ! -name gc.lock | grep -vFf <(cat "$C"/releases/*/verified/indexes | grep -E '^[0-9a-f]{64}$') || true)
[ -z "$left" ] || fail "files left: $left"
[ -n "$(ls -A "$C/releases")" ] || fail "the repository state (rollback guard) was removed"

# Empty again: offline misses, online downloads and builds the same image.
expect_fail 5 "not in the cache" env TMPDIR="$T/tmp" "$MKIMAGE" --cache-dir "$C" --offline \
	-o "$T/img/base.ext4" "$T/r/base.cfg"
build base
cmp -s "$T/first.ext4" "$T/img/base.ext4" || fail "the image after a collection differs"
