# Two builds sharing one cache at the same time: each object is downloaded exactly once (the
# other process waits on its lock and then uses it), both get verified files, no temp files.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

for i in $(seq 1 12); do
	d=$(deb_new pkg$i 1.0 armhf)
	deb_file "$d" usr/share/pkg$i/blob "$(head -c 100000 /dev/urandom | base64)"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
fault_serve "$T/repo"
debs_list "$T/repo" "$SERVER_URL" >"$T/list"
# Slow answers make the two runs overlap (correctness does not depend on it).
echo "/pool/* delay 200" >"$RULES"

run_two() {
	"$FETCHDEBS" --cache-dir "$T/cache" -j 4 <"$T/list" >"$T/out1" 2>"$T/err1" & p1=$!
	"$FETCHDEBS" --cache-dir "$T/cache" -j 4 <"$T/list" >"$T/out2" 2>"$T/err2" & p2=$!
	wait $p1 || { cat "$T/err1" >&2; fail "first fetch failed"; }
	wait $p2 || { cat "$T/err2" >&2; fail "second fetch failed"; }
}

for round in 1 2 3; do
	rm -rf "$T/cache"
	: >"$SRVLOG"
	run_two
	cmp -s "$T/out1" "$T/out2" || fail "the two runs report different cache paths"
	[ "$(wc -l <"$T/out1")" = 12 ] || fail "expected 12 paths"
	paste -d' ' "$T/out1" "$T/list" | while read -r path url size sha; do
		[ "$(sha256sum "$path" | cut -d' ' -f1)" = "$sha" ] || fail "'$path' is corrupt"
		[ "$(grep -c " ${url#$SERVER_URL} " "$SRVLOG")" = 1 ] ||
			fail "'$url' was downloaded more than once: $(cat "$SRVLOG")"
	done
	no_temp_files "$T/cache"
done

# Two mkimage runs fetching the same indexes at once.
make_repo
write_recipe "$SERVER_URL" "$KEYRING"
rm -rf "$T/cache"
until_indexes >/dev/null 2>"$T/err1" & p1=$!
until_indexes >/dev/null 2>"$T/err2" & p2=$!
wait $p1 || { cat "$T/err1" >&2; fail "first mkimage failed"; }
wait $p2 || { cat "$T/err2" >&2; fail "second mkimage failed"; }
grep -q "signature good" "$T/err1" && grep -q "signature good" "$T/err2" || fail "no summary"
no_temp_files "$T/cache"
