# Eight whole builds at once sharing one cache, four recipes (three builds of one, two of two
# others, one of a fourth with a hook): all succeed, builds of one recipe give sha256-identical
# images (SOURCE_DATE_EPOCH), different recipes different ones; the server's log shows every
# object downloaded once (a process that finds another downloading an object waits on the
# object's lock), InRelease asked at most once per build; every cache object matches its name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

# Six packages of 1.5 MiB of random bytes each, shared between the recipes so downloads overlap.
for i in 1 2 3 4 5 6; do
	d=$(deb_new big$i-test 1.0 all)
	mkdir -p "$d/usr/share/big$i-test"
	head -c 1536K /dev/urandom >"$d/usr/share/big$i-test/blob"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
native_repo
# Slow answers make the eight runs overlap (correctness does not depend on it).
echo "/pool/* delay 150" >"$RULES"

mkdir -p "$T/r/hooks"
printf '#!/bin/sh\necho "built by hook" >/etc/mki76-hook\n' >"$T/r/hooks/mark.sh"
chmod +x "$T/r/hooks/mark.sh"
native_recipe "$T/r/a.cfg" a ', "big1-test", "big2-test"'
native_recipe "$T/r/b.cfg" b ', "big2-test", "big3-test", "big4-test"'
native_recipe "$T/r/c.cfg" c ', "big5-test"' '{ name = "mark"; script = "hooks/mark.sh"; where = "inside"; }'
native_recipe "$T/r/d.cfg" d ', "big1-test", "big2-test", "big3-test", "big4-test", "big5-test", "big6-test"'

export SOURCE_DATE_EPOCH=1700000000
runs="a1 a2 a3 b1 b2 c1 d1 d2"
pids=""
for run in $runs; do
	mkdir -p "$T/$run/tmp"
	TMPDIR=$T/$run/tmp "$MKIMAGE" --cache-dir "$T/cache" -o "$T/$run/image.ext4" \
		"$T/r/${run%?}.cfg" >"$T/$run/log" 2>&1 &
	pids="$pids $!"
	_PIDS="$_PIDS $!" # if the test fails, its exit trap stops the builds
done
i=0
for pid in $pids; do
	i=$((i + 1))
	run=$(echo "$runs" | cut -d' ' -f$i)
	wait "$pid" || { cat "$T/$run/log" >&2; fail "build $run failed"; }
	[ -z "$(ls -A "$T/$run/tmp")" ] || fail "build $run left its work dir"
	e2fsck -fn "$T/$run/image.ext4" >/dev/null 2>&1 || fail "image of $run is not clean"
done

sum() { sha256sum <"$T/$1/image.ext4" | cut -d' ' -f1; }
for group in "a1 a2 a3" "b1 b2" "d1 d2"; do
	first=${group%% *}
	for run in $group; do
		[ "$(sum "$run")" = "$(sum "$first")" ] || fail "images of $first and $run differ"
	done
done
[ "$(for r in a1 b1 c1 d1; do sum $r; done | sort -u | wc -l)" = 4 ] ||
	fail "different recipes gave identical images"
debugfs -R "cat /etc/mki76-hook" "$T/c1/image.ext4" 2>/dev/null | grep -q "built by hook" ||
	fail "the hook's file is not in c1's image"

# Downloads per path: each .deb and each index once, InRelease at most once per build.
awk '$1 == "GET" { n[$2]++ } END { for (p in n) print n[p], p }' "$SRVLOG" | sort -rn >"$T/counts"
debs=$(grep -c '\.deb$' "$T/counts" || true)
[ "$debs" = 33 ] || { cat "$T/counts" >&2; fail "expected 33 distinct .debs requested, got $debs"; }
awk '$2 ~ /\.deb$|Packages/ && $1 > 1' "$T/counts" | grep . >&2 &&
	fail "an object was downloaded more than once (count path above)"
inrelease=$(awk '$2 ~ /InRelease$/ { print $1 }' "$T/counts")
[ "${inrelease:-0}" -le 8 ] || fail "InRelease asked $inrelease times by 8 builds"
waited=$(cat "$T"/*/log | grep -c "waiting for another mkimage process" || true)
note "$(awk '{ s += $1 } END { print s }' "$T/counts") requests for $(wc -l <"$T/counts") paths;" \
	"InRelease $inrelease times; every .deb and index once; $waited waits on another process's download"
no_temp_files "$T/cache"
[ "$(verify_cache "$T/cache")" -ge 34 ] || fail "expected every .deb and the index in the cache"

# A build waiting for another process's download: SIGINT ends it at once (exit 130); when the
# downloading process dies (SIGKILL: its lock goes with it), the waiter downloads the file itself
# and removes the dead process's temp file.
rm -rf "$T/cache"
: >"$SRVLOG"
echo "*big6-test* stall 1000 1" >"$RULES"
mkdir -p "$T/w/tmp"
# start_until_fetch NAME: a --until fetch build of recipe d in the background; sets PID.
start_until_fetch() {
	TMPDIR=$T/w/tmp "$MKIMAGE" --until fetch --cache-dir "$T/cache" "$T/r/d.cfg" \
		>/dev/null 2>"$T/w/$1.err" & PID=$!
	_PIDS="$_PIDS $PID"
}
# wait_log FILE PATTERN PID: poll FILE until PATTERN shows up (PID must still be running).
wait_log() {
	local i
	for i in $(seq 1 600); do
		grep -Eq -- "$2" "$1" && return 0
		kill -0 "$3" 2>/dev/null || { cat "$1" >&2; fail "ended before /$2/"; }
		sleep 0.05
	done
	fail "no /$2/ in $1"
}
start_until_fetch holder; holder=$PID
wait_log "$SRVLOG" "GET .*big6-test" $holder
start_until_fetch waiter; waiter=$PID
wait_log "$T/w/waiter.err" "waiting for another mkimage process" $waiter
kill -INT $waiter
for i in $(seq 1 300); do kill -0 $waiter 2>/dev/null || break; sleep 0.1; done
kill -0 $waiter 2>/dev/null && { kill -9 $waiter; fail "a waiting build ignored SIGINT for 30 s"; }
rc=0; wait $waiter || rc=$?
[ "$rc" = 130 ] || { cat "$T/w/waiter.err" >&2; fail "interrupted waiter: exit $rc, expected 130"; }
start_until_fetch taker; taker=$PID
wait_log "$T/w/taker.err" "waiting for another mkimage process" $taker
kill -9 $holder
wait $holder 2>/dev/null || true
rm -rf "$T"/w/tmp/mkimage.* # what the killed holder could not clean up
wait $taker || { cat "$T/w/taker.err" >&2; fail "the build waiting for a killed process failed"; }
[ "$(grep -c 'GET .*big6-test' "$SRVLOG")" = 2 ] || fail "big6 was not downloaded again by the waiter"
no_temp_files "$T/cache"
verify_cache "$T/cache" >/dev/null
[ -z "$(ls -A "$T/w/tmp")" ] || fail "the waiting builds left a work dir"
note "a waiter stops on SIGINT (exit 130) and takes over from a killed downloader"
