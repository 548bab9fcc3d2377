# test-cost: slow (builds the lean recipe emulated and native: run.sh starts it first)
# Native tools' twins from the host's own apt sources (builder/repo/twinsrc.h): the recipe's mirror
# carries only armhf + armel, a second signed repository on 127.0.0.1, declared in a private apt
# root (MKIMAGE_APT_ROOT), carries the amd64 builds of the same versions. The image and lock
# built with those twins are byte-identical to the ones built with every program emulated; host
# sources signed by an unknown key, unreachable, without the plan's versions or turned off give
# one warning (or info line) and no twins, and the build goes on.
# MKI_TEST_TWINS_RECIPE=arm64-armhf runs the same proof for that flagship recipe.
. "$(dirname "$0")/lib.sh"

[ "$(dpkg --print-architecture)" = amd64 ] || skip "needs an amd64 host (the mirrors' twins)"
NAME=${MKI_TEST_TWINS_RECIPE:-arm-board}
. "$TOP/tests/flagship.sh"
flagship_mirror "$NAME"
archs=$(sed -En 's/^v[0-9]+ ([^ ]+) .*/\1/p' "$MIRROR/stamp" | tr ',' ' ')

# split_repo DIR ARCH...: DIR serves the flagship mirror's pool and its Packages files for
# ARCH... only (signed with sign_repo).
split_repo() {
	local dir=$1 a
	shift
	mkdir -p "$dir/dists/bookworm/main"
	ln -sfn "$MIRROR/repo/pool" "$dir/pool"
	for a in "$@"; do
		cp -r "$MIRROR/repo/dists/bookworm/main/binary-$a" "$dir/dists/bookworm/main/"
	done
}

# sign_repo DIR KEY ARCH...: DIR's Release for ARCH..., signed by the throwaway key KEY
# ($T/keys/KEY.gpg, made on first use).
sign_repo() {
	local dir=$1 key=$2
	shift 2
	(cd "$dir/dists/bookworm" && apt-ftparchive -o APT::FTPArchive::Release::Suite=bookworm \
		-o APT::FTPArchive::Release::Codename=bookworm \
		-o APT::FTPArchive::Release::Architectures="$*" \
		-o APT::FTPArchive::Release::Components=main release .) >"$T/Release.tmp"
	mv "$T/Release.tmp" "$dir/dists/bookworm/Release"
	[ -s "$T/keys/$key.gpg" ] || gpg_key "$key"
	export GNUPGHOME=$T/gnupg-$key
	repo_sign "$dir" bookworm
}

# apt_root DIR URL KEYRING: a host apt configuration with the one source URL signed by KEYRING.
apt_root() {
	mkdir -p "$1"
	echo "deb [signed-by=$3] $2 bookworm main" >"$1/sources.list"
}

# shellcheck disable=SC2086
split_repo "$T/target" $archs
# shellcheck disable=SC2086
sign_repo "$T/target" repo $archs
serve "$T/target"
SRC="$SERVER_URL bookworm main signed-by=$T/keys/repo.gpg"
split_repo "$T/host" amd64
sign_repo "$T/host" host amd64
serve "$T/host"
HOST_URL=$SERVER_URL
gpg_key stranger
apt_root "$T/apt" "$HOST_URL" "$T/keys/host.gpg"
export SOURCE_DATE_EPOCH=1700000000
flagship_lean "$NAME" "$T/r"
RECIPE=$T/r/recipes/$NAME.cfg

# build ROOT OUT ARGS...: the lean recipe from the armhf + armel mirror, host apt root ROOT.
# Every build configures (--no-layer-cache): whether the twins ran is only seen while configuring.
build() {
	local root=$1 out=$2
	shift 2
	MKIMAGE_APT_ROOT=$root expect_ok "$MKIMAGE" --cache-dir "$T/cache" --source "$SRC" \
		--no-layer-cache --output "$T/$out.ext4" "$@" "$RECIPE"
}

build "$T/apt" native -v
grep -Eq "native tools: [0-9]+ twin packages .* from the host's apt sources" "$T/err" ||
	{ grep "native tools" "$T/err" >&2; fail "no twins from the host's apt sources"; }
n=$(sed -En 's/.*native tools: ([0-9]+) target programs run as.*/\1/p' "$T/err")
[ "${n:-0}" -ge 50 ] || { grep "native tools" "$T/err" >&2; fail "only ${n:-0} programs ran natively"; }
grep -q "mkimage: warning:" "$T/err" && { grep "mkimage: warning:" "$T/err" >&2; fail "warnings with good host sources"; }

build "$T/apt" emulated --no-native-tools
grep -q "native tools" "$T/err" && fail "--no-native-tools still looked for twins"
grep -q "^twins: host hosts=${HOST_URL#http://} packages=" "$T/native.lock" ||
	fail "$NAME: the lock does not record the twins from the host's apt sources"
grep -q "^twin" "$T/emulated.lock" && fail "$NAME: twins recorded without native tools"
a=$(sha256sum <"$T/native.ext4") b=$(sha256sum <"$T/emulated.ext4")
[ "$a" = "$b" ] || fail "$NAME: twins from the host's sources changed the image: $a vs $b"
# the lock is the same but for the record of the twins
a=$(grep -v "^twin" "$T/native.lock" | sha256sum) b=$(sha256sum <"$T/emulated.lock")
[ "$a" = "$b" ] || fail "$NAME: twins from the host's sources changed the lock: $a vs $b"
note "$NAME: image (sha256 $(sha256sum <"$T/native.ext4" | cut -c1-16)...) and lock identical with $n programs run natively"
[ "$NAME" = arm-board ] || exit 0

# The failure cases with a small recipe of the same mirror: what matters is which twins are
# selected (the fetch stage) and that configuring still works (--until configure).
cat >"$T/small.cfg" <<R
name = "small";
architecture = "armhf";
packages = { base = "none"; install = [ "dpkg", "base-passwd", "base-files", "dash", "coreutils",
  "sed", "grep", "diffutils", "findutils", "debianutils", "libc-bin" ]; };
R
RECIPE=$T/small.cfg
build "$T/no-such-apt" small-emulated --no-native-tools

# The twins are recorded in the lock, not pinned: --locked and --offline pick them again from the host's
# verified indexes, now in the cache.
build "$T/apt" small
grep -Eq "twin packages .* from the host's apt sources" "$T/err" || { cat "$T/err" >&2; fail "small: no twins"; }
build "$T/apt" x --locked="$T/small.lock" --offline --until configure
grep -Eq "twin packages .* from the host's apt sources" "$T/err" &&
	grep -Eq "native tools: [0-9]+ target programs run as" "$T/err" ||
	{ cat "$T/err" >&2; fail "--locked --offline: the cached host twins were not used"; }
grep -q "mkimage: warning:" "$T/err" && { cat "$T/err" >&2; fail "--locked --offline: warnings"; }

# no_twins WHAT PATTERN: the build went on emulating, saying PATTERN, with at most one warning.
no_twins() {
	grep -q "twin packages" "$T/err" && { cat "$T/err" >&2; fail "$1: twins were selected"; }
	grep -q "native tools: none" "$T/err" || { cat "$T/err" >&2; fail "$1: native tools were used"; }
	grep -Eq "$2" "$T/err" || { cat "$T/err" >&2; fail "$1: no word of why"; }
	[ "$(grep -c "mkimage: warning:" "$T/err")" -le 1 ] || { cat "$T/err" >&2; fail "$1: more than one warning"; }
	if grep -q "mkimage: error:" "$T/err"; then cat "$T/err" >&2; fail "$1: errors logged"; fi
}
WARN="mkimage: warning: native tools: the host's apt sources in '.*'"

# A host source signed by a key its entry does not name: refused as any index; the image is
# the emulated one.
apt_root "$T/apt-stranger" "$HOST_URL" "$T/keys/stranger.gpg"
build "$T/apt-stranger" stranger
no_twins "unknown key" "$WARN cannot be used for 'amd64' twins \(signature"
a=$(sha256sum <"$T/stranger.ext4") b=$(sha256sum <"$T/small-emulated.ext4")
[ "$a" = "$b" ] || fail "the build after a refused host source differs: $a vs $b"

# Unreachable (nothing listens on port 1), with a fresh cache so nothing is reused.
apt_root "$T/apt-down" "http://127.0.0.1:1/debian" "$T/keys/host.gpg"
MKIMAGE_APT_ROOT=$T/apt-down expect_ok "$MKIMAGE" --cache-dir "$T/cache-down" --source "$SRC" \
	--no-layer-cache --output "$T/x.ext4" --until configure "$RECIPE"
no_twins "unreachable" "$WARN cannot be used for 'amd64' twins \(download failed"

# amd64 builds of other versions: signed and verified, but not twins.
split_repo "$T/other"
d=$T/other/dists/bookworm/main/binary-amd64
mkdir -p "$d"
sed 's/^Version: /Version: 99:/' "$MIRROR/repo/dists/bookworm/main/binary-amd64/Packages" >"$d/Packages"
xz -k "$d/Packages"
sign_repo "$T/other" host amd64
serve "$T/other"
apt_root "$T/apt-other" "$SERVER_URL" "$T/keys/host.gpg"
build "$T/apt-other" x --until configure
no_twins "other versions" "$WARN have no 'amd64' build of the plan's versions"

# Turned off, and an apt root without any source: an info line, no warning.
build "$T/apt" x --until configure --no-host-twins
no_twins "--no-host-twins" "info: native tools: .*--no-host-twins"
grep -q "mkimage: warning:" "$T/err" && fail "--no-host-twins: a warning"
build "$T/no-such-apt" x --until configure
no_twins "no host source" "info: native tools: .* offer none"
grep -q "mkimage: warning:" "$T/err" && fail "no host source: a warning"
exit 0
