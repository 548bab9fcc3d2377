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
expect_fail 2 "unrecognized option" "$MKIMAGE" --frobnicate "$TOP/recipes/arm-board.cfg"
expect_fail 2 "cannot read recipe 'nope.cfg'" "$MKIMAGE" --check nope.cfg

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
