# The lock file: stable text, every package with its sha256, the source's InRelease digest and
# Date; --locked rebuilds exactly that set and refuses a changed recipe or changed package.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

for a in armhf armel; do
	pkg libc 2.0 $a "Multi-Arch: same"
	pkg hello 1.0 $a "Depends: libc"
done
pkg tool 1.0 armhf "Depends: hello"
repo_make armhf armel
printf 'Origin: test\nDate: Sat, 10 Jun 2023 08:56:02 UTC\n' >"$T/InRelease"
mapfile -t PK < <(our_args)
R=("$RESOLVE" --primary armhf --arch armel "${PK[@]}" --inrelease "$T/InRelease")
DIGEST=$(printf x | sha256sum | cut -d' ' -f1)

expect_ok "${R[@]}" --recipe-digest "$DIGEST" --install tool --install libc:armel --lock "$T/a.lock"
cp "$T/out" "$T/plan1"
grep -qx "format: 1" "$T/a.lock" || fail "no format line"
grep -qx "recipe: $DIGEST" "$T/a.lock" || fail "no recipe digest"
grep -qx "architectures: armhf armel" "$T/a.lock" || fail "no architectures"
grep -qx "source: file:///nonexistent test sha256=$(sha256sum <"$T/InRelease" | cut -d' ' -f1) date=Sat, 10 Jun 2023 08:56:02 UTC" \
	"$T/a.lock" || { cat "$T/a.lock" >&2; fail "no source line"; }
sha=$(printf '%s' "libc 2.0 armel" | sha256sum | cut -d' ' -f1)
grep -qx "package: libc:armel=2.0 sha256=$sha size=1000" "$T/a.lock" || fail "no libc:armel line"
[ "$(grep -c '^package: ' "$T/a.lock")" = 4 ] || fail "expected 4 packages in the lock"
grep '^package: ' "$T/a.lock" | sort -c || fail "packages are not sorted"
ls "$T"/a.lock.tmp.* 2>/dev/null && fail "temp file left behind"

# stable: the same request writes a byte-identical lock
expect_ok "${R[@]}" --recipe-digest "$DIGEST" --install libc:armel --install tool --lock "$T/b.lock"
cmp "$T/a.lock" "$T/b.lock" || fail "the lock is not stable"

# --locked: exactly the locked set, even after a newer version appears
pkg tool 2.0 armhf "Depends: hello"
repo_make armhf armel
expect_ok "${R[@]}" --recipe-digest "$DIGEST" --locked "$T/a.lock"
sort "$T/out" >"$T/locked"
sort "$T/plan1" >"$T/plan1.sorted"
same_set "$T/plan1.sorted" "$T/locked" "--locked"
grep -q "tool:armhf=1.0" "$T/locked" || fail "--locked took the newer tool"

# refusals: changed recipe, missing version, changed bytes, malformed lock
expect_fail 4 "the recipe changed since '.*a.lock' was written" "${R[@]}" \
	--recipe-digest "$(printf y | sha256sum | cut -d' ' -f1)" --locked "$T/a.lock"
sed 's/^package: tool:armhf=1.0 /package: tool:armhf=0.5 /' "$T/a.lock" >"$T/old.lock"
expect_fail 4 "the lock names 'tool:armhf=0.5', which no index lists any more" "${R[@]}" \
	--recipe-digest "$DIGEST" --locked "$T/old.lock"
sed "s/^package: libc:armel=2.0 sha256=[0-9a-f]*/package: libc:armel=2.0 sha256=$(printf '%064d' 0)/" \
	"$T/a.lock" >"$T/bad.lock"
expect_fail 4 "'libc:armel=2.0' differs from the lock" "${R[@]}" --recipe-digest "$DIGEST" \
	--locked "$T/bad.lock"
printf 'format: 1\nrecipe: %s\narchitectures: armhf\npackage: nonsense\n' "$DIGEST" >"$T/mal.lock"
expect_fail 4 "mal.lock:4: malformed lock line" "${R[@]}" --recipe-digest "$DIGEST" --locked "$T/mal.lock"
printf 'format: 9\n' >"$T/fmt.lock"
expect_fail 4 "fmt.lock:1: unsupported lock format" "${R[@]}" --locked "$T/fmt.lock"
expect_fail 4 "cannot read the lock file '$T/none.lock'" "${R[@]}" --locked "$T/none.lock"
