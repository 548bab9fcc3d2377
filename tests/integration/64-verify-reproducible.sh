# --verify-reproducible builds a second time from the same plan: identical images pass; a hook
# that writes the wall clock into the tree fails with exit 8, naming the file and the field.
. "$(dirname "$0")/lib.sh"

. "$TOP/tests/flagship.sh"
flagship_mirror pc-legacy
serve "$MIRROR/repo"
SRC="$SERVER_URL bookworm main signed-by=$MIRROR/key.gpg"
export SOURCE_DATE_EPOCH=1700000000

# The recipe without kernel and systemd (flagship.sh): the whole one, two initramfs runs in each
# of the two builds, took 43 minutes at a load of 20.
flagship_lean pc-legacy "$T/r"
sed 's/^  output = .*//' "$T/r/recipes/pc-legacy.cfg" >"$T/r/recipes/good.cfg"
expect_ok "$MKIMAGE" --verify-reproducible --source "$SRC" --output "$T/good.ext4" "$T/r/recipes/good.cfg"
grep -q "reproducible: a second build gave a byte-identical image" "$T/err" ||
	fail "no reproducibility verdict"
[ ! -e "$T/good.ext4.verify" ] || fail "the second image was left behind"

printf '#!/bin/sh\ndate +%%s.%%N >/etc/build-stamp\n' >"$T/r/hooks/stamp.sh"
sed 's|^hooks = (|hooks = (\n  { name = "stamp"; script = "../hooks/stamp.sh"; where = "inside"; },|' \
	"$T/r/recipes/good.cfg" >"$T/r/recipes/bad.cfg"
expect_fail 8 "not reproducible: '/etc/build-stamp' differs in its contents" \
	"$MKIMAGE" --verify-reproducible --source "$SRC" --output "$T/bad.ext4" "$T/r/recipes/bad.cfg"
