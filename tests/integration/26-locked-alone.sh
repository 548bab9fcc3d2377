# A lock rebuilds alone: made with --source, rebuilt with --locked=FILE --offline and no --source,
# from the sources the lock records (components, keyring found by fingerprint); a lock naming a
# key no keyring holds is refused naming it; --source still overrides the lock's sources.
. "$(dirname "$0")/lib.sh"

. "$TOP/tests/flagship.sh"
flagship_mirror arm-board
serve "$MIRROR/repo"
export SOURCE_DATE_EPOCH=1700000000
cp "$MIRROR/key.gpg" "$T/mirror.gpg"
mkdir -p "$T/a" "$T/b" "$T/c" "$T/d"
# The flagship recipe naming a source that does not answer and the mirror's keyring, as a release
# recipe whose archive moved would: only the lock knows where the packages came from. Without
# kernel and systemd (flagship.sh): the lock is what matters here, not the initramfs.
flagship_lean arm-board "$T/lean"
R=$T/lean/recipes/moved.cfg
sed -e "s|{ host = true; components = \[ \"main\" \]; }|{ uri = \"http://127.0.0.1:1/moved\"; keyring = \"$T/mirror.gpg\"; }|" \
	-e "s|\"\.\./images/|\"$T/|" "$T/lean/recipes/arm-board.cfg" >"$R"
grep -q "127.0.0.1:1/moved" "$R" || fail "the recipe edit did not apply"

expect_ok "$MKIMAGE" --cache-dir "$T/cache" --source "$SERVER_URL bookworm main signed-by=$T/mirror.gpg" \
	--output "$T/a/img.ext4" "$R"
lock=$T/a/img.lock
fpr=$(gpg --batch --with-colons --show-keys "$T/mirror.gpg" 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
grep -q "^source: $SERVER_URL bookworm sha256=[0-9a-f]* components=main keys=$fpr date=" "$lock" ||
	{ cat "$lock" >&2; fail "the lock does not record the source's components and key"; }

# Alone: no --source; the keyring holding the lock's key is found among the recipe's.
srvlog=$T/http-${SERVER_URL##*:}.log
n=$(grep -c '"GET ' "$srvlog")
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --locked="$lock" --offline --output "$T/b/img.ext4" "$R"
grep -q -- "--locked: source '$SERVER_URL' 'bookworm' from the lock, keyring '$T/mirror.gpg'" "$T/err" ||
	{ cat "$T/err" >&2; fail "the rebuild did not use the lock's source"; }
[ "$(grep -c '"GET ' "$srvlog")" = "$n" ] || fail "--offline contacted the server"
cmp -s "$T/a/img.ext4" "$T/b/img.ext4" || fail "the image rebuilt from the lock alone differs"

# A key no keyring holds: refused, naming the fingerprint.
sed "s/keys=$fpr/keys=0123456789ABCDEF0123456789ABCDEF01234567/" "$lock" >"$T/other.lock"
expect_fail 3 "no keyring holds the key 0123456789ABCDEF0123456789ABCDEF01234567 that the lock records for '$SERVER_URL' 'bookworm'" \
	"$MKIMAGE" --cache-dir "$T/cache" --locked="$T/other.lock" --offline --output "$T/c/img.ext4" "$R"
# --source overrides the lock's sources (and its keys): the same packages again.
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --locked="$T/other.lock" --offline --until fetch \
	--source "$SERVER_URL bookworm main signed-by=$T/mirror.gpg" --output "$T/d/img.ext4" "$R"
! grep -q -- "--locked: source" "$T/err" || fail "--source did not override the lock's sources"
