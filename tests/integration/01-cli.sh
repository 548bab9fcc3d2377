# The command line: help, version, usage errors, --check on the flagship recipe.
. "$(dirname "$0")/lib.sh"

expect_ok "$MKIMAGE" --help
grep -q -- '--cache-dir' "$T/out" || fail "--help does not document --cache-dir"
grep -q 'Exit status' "$T/out" || fail "--help does not document exit codes"
expect_ok "$MKIMAGE" --version
grep -q '^mkimage ' "$T/out" || fail "--version prints no version"

expect_fail 2 "no recipe given" "$MKIMAGE"
expect_fail 2 "exactly one recipe" "$MKIMAGE" a.cfg b.cfg
expect_fail 2 "--jobs takes a number" "$MKIMAGE" --jobs 0 "$TOP/recipes/arm-board.cfg"
expect_fail 2 "--until takes one of" "$MKIMAGE" --until nowhere "$TOP/recipes/arm-board.cfg"
# --until's stages, and "hooks", the configure stage's old name (mkimage(1))
for s in sources indexes resolve fetch unpack configure hooks image; do
	expect_ok "$MKIMAGE" --until "$s" --check "$TOP/recipes/arm-board.cfg"
done
expect_fail 2 "unrecognized option" "$MKIMAGE" --frobnicate "$TOP/recipes/arm-board.cfg"
expect_fail 2 "cannot read recipe 'nope.cfg'" "$MKIMAGE" --check nope.cfg

# --diff: two lock files -> sorted release-note lines; a bad lock is a usage error (exit 2).
h="format: 1
recipe: $(printf 'a%.0s' $(seq 64))
architectures: armhf armel"
sha=$(printf 'b%.0s' $(seq 64))
printf '%s\npackage: libc6:armhf=2.36-9 sha256=%s size=1 source=glibc\npackage: old:armel=1 sha256=%s size=1\n' \
	"$h" "$sha" "$sha" >"$T/old.lock"
printf '%s\npackage: new:armel=2 sha256=%s size=1\npackage: libc6:armhf=2.36-9+deb12u4 sha256=%s size=1 source=glibc\n' \
	"$h" "$sha" "$sha" >"$T/new.lock"
expect_ok "$MKIMAGE" --diff "$T/old.lock" "$T/new.lock"
[ "$(cat "$T/out")" = "changed libc6:armhf 2.36-9 -> 2.36-9+deb12u4 (source glibc)
added   new:armel 2 (source new)
removed old:armel 1 (source old)" ] || { cat "$T/out" >&2; fail "--diff output is wrong"; }
printf 'format: 1\npackage: broken\n' >"$T/bad.lock"
expect_fail 2 "bad.lock:2: malformed lock line" "$MKIMAGE" --diff "$T/old.lock" "$T/bad.lock"

# Every shipped recipe validates, and its normalized form parses back to itself.
for r in "$TOP"/recipes/*.cfg; do
	expect_ok "$MKIMAGE" --check "$r"
	cp "$T/out" "$T/normalized.cfg"
	expect_ok "$MKIMAGE" --check "$T/normalized.cfg"
	cmp -s "$T/out" "$T/normalized.cfg" || fail "$r: normalized form is not stable"
done
expect_ok "$MKIMAGE" --check "$TOP/recipes/arm-board.cfg"
grep -q 'architecture = "armhf"' "$T/out" || fail "arm-board is not armhf"
grep -q 'auxiliary_architectures = \[ "armel" \]' "$T/out" || fail "arm-board lacks armel"
grep -q 'host = true' "$T/out" || fail "arm-board must use the host's apt sources"

# Bad SOURCE_DATE_EPOCH is a usage error before any work.
SOURCE_DATE_EPOCH=yesterday expect_fail 2 "SOURCE_DATE_EPOCH must be" \
	"$MKIMAGE" "$TOP/recipes/arm-board.cfg"
