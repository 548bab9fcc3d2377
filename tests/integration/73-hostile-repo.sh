# A hostile repository, properly signed (so only the limits can refuse it): a Packages file the
# Release declares as gigabytes, a Packages.xz decompression bomb, xz streams asking for a 768 MiB
# dictionary, a stanza with 100 000 dependencies, a .deb whose data.tar is a bomb, .debs with
# 20 000 and 1 000 000 files.
# Each is refused by its --limit with the limit's name and how to raise it, the exit status of
# its class (3 index, 6 package), a bounded peak RSS, no work dir and nothing refused in the
# cache; raising the limit lets the same input through (so the limit was the cause).
# Fixtures are made here by hostile_gen.py in a few seconds; nothing binary is committed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

GEN=$TOP/tests/integration/hostile_gen.py
RSS_MAX_KB=204800 # 200 MB: what any refusal below may cost, whatever the input claims
mkdir -p "$T/tmp" "$T/www"
gpg_key repo
fault_serve "$T/www"

# sign_release REPO: Release from the index files present (as apt-ftparchive lists them), signed.
sign_release() {
	(cd "$1/dists/bookworm" && apt-ftparchive -o APT::FTPArchive::Release::Suite=bookworm \
		-o APT::FTPArchive::Release::Codename=bookworm \
		-o APT::FTPArchive::Release::Architectures=amd64 \
		-o APT::FTPArchive::Release::Components=main release .) >"$T/Release.tmp"
	mv "$T/Release.tmp" "$1/dists/bookworm/Release"
	repo_sign "$1" bookworm
}

# recipe CASE PACKAGE: $T/CASE.cfg, amd64, from $T/www/CASE.
recipe() {
	cat >"$T/$1.cfg" <<R
name = "$1";
architecture = "amd64";
sources = ( { uri = "$SERVER_URL/$1"; keyring = "$KEYRING"; } );
packages = { install = [ "$2" ]; };
R
}

# mki CODE PATTERN CASE ARGS...: mkimage ARGS on $T/CASE.cfg (private cache $T/cache-CASE) must
# exit CODE with PATTERN on stderr; $T/usage holds "seconds peak-RSS-KiB" of the run.
mki() {
	local code=$1 pattern=$2 case=$3
	shift 3
	TMPDIR=$T/tmp expect_fail "$code" "$pattern" /usr/bin/time -f "%e %M" -o "$T/usage" \
		"$MKIMAGE" --cache-dir "$T/cache-$case" "$@" "$T/$case.cfg"
}

# refused WHAT: after a refusal, memory stayed bounded, no work dir is left, no temp file is in
# the cache; reports the figures.
refused() {
	local secs kb
	read -r secs kb < <(tail -n 1 "$T/usage")
	[ "$kb" -lt "$RSS_MAX_KB" ] || fail "$1: peak RSS ${kb} KiB, more than $RSS_MAX_KB KiB"
	[ -z "$(ls -A "$T/tmp")" ] || fail "$1: work dir left behind: $(ls -A "$T/tmp")"
	for c in "$T"/cache-*; do no_temp_files "$c"; done
	note "$1: refused in ${secs} s, peak RSS $((kb / 1024)) MiB"
}

# not_cached CASE FILE: the cache of CASE holds no object with FILE's SHA-256.
not_cached() {
	local sha
	sha=$(sha256sum "$2" | cut -d' ' -f1)
	[ -z "$(find "$T/cache-$1/objects" -name "$sha*" -type f)" ] || fail "$1: the refused '$2' is in the cache"
}

# A small real package for the index cases.
d=$(deb_new plain-test 1.0 amd64)
deb_file "$d" usr/share/plain-test/README "plain"
for c in big bomb lying dict claims deps; do
	deb_build "$d" "$T/www/$c/pool/main" >/dev/null
	repo_index "$T/www/$c" bookworm main amd64
done
bin=dists/bookworm/main/binary-amd64

# --- (a) the Release declares a Packages.xz of 5 GiB: refused before any download --------------
python3 - "$T/www/big/dists/bookworm/Release" <<'P'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
out = []
for l in lines:
    f = l.split()
    if len(f) == 3 and f[2] == "main/binary-amd64/Packages.xz":
        l = " %s %d %s" % (f[0], 5 << 30, f[2])
    out.append(l)
open(p, "w").write("\n".join(out))
P
repo_sign "$T/www/big" bookworm
recipe big plain-test
mki 3 "declares 'main/binary-amd64/Packages.xz' as 5368709120 bytes, more than 1G: refused before downloading it \(limit 'index-size' is 1G; raise it with --limit index-size=SIZE" \
	big --until indexes
refused "Release declaring a 5 GiB Packages.xz"
[ "$(requests "/big/$bin/Packages")" = 0 ] || fail "a Packages file was downloaded: $(cat "$SRVLOG")"
# Raised, the download starts and the file is what the Release really is checked against.
mki 5 "has [0-9]+ bytes, the index says 5368709120" big --until indexes --limit index-size=8G

# InRelease has no declared size: 'release-size' bounds it as downloaded and as cached.
mki 3 "cache-big/releases/[0-9a-f]+/InRelease' is larger than 1K: refused \(limit 'release-size' is 1K" \
	big --until indexes --limit release-size=1K
rm -rf "$T/cache-big"
mki 3 "'$SERVER_URL/big/dists/bookworm/InRelease' is larger than 1K, the limit for a file of unknown size: refused, nothing was cached \(limit 'release-size' is 1K" \
	big --until indexes --limit release-size=1K
refused "InRelease over --limit release-size=1K"

# --- (b) a Packages.xz that decompresses to 1.25 GiB (7 MB on the wire) --------------------------
python3 "$GEN" xzbomb "$T/www/bomb/$bin/Packages.xz" $((1280 << 20))
rm "$T/www/bomb/$bin/Packages" "$T/www/bomb/$bin/Packages.gz"
sign_release "$T/www/bomb"
recipe bomb plain-test
mki 3 "'$SERVER_URL/bomb/$bin/Packages.xz' decompresses to more than 1G \(a decompression bomb\?\): stopped there, nothing was cached \(limit 'index-unpacked' is 1G; raise it with --limit index-unpacked=SIZE" \
	bomb --until indexes
refused "Packages.xz bomb (1.25 GiB)"
[ -z "$(find "$T/cache-bomb" \( -path '*/indexes/*' -o -path '*/objects/*' \) -type f)" ] ||
	fail "the bomb left something in the cache: $(find "$T/cache-bomb" -type f)"
# Raised above it, the same file is decompressed (on disk, memory still bounded) and accepted.
mki 0 "stopped after stage 'indexes'" bomb --until indexes --limit index-unpacked=2G
read -r secs kb < <(tail -n 1 "$T/usage")
[ "$kb" -lt "$RSS_MAX_KB" ] || fail "bomb accepted with a raised limit: peak RSS $kb KiB"
note "Packages.xz bomb with --limit index-unpacked=2G: accepted in $secs s, peak RSS $((kb / 1024)) MiB"
rm -rf "$T/cache-bomb"

# A Release that lists the plain Packages as small while Packages.xz is the bomb: decompression
# stops at the declared size (integrity, not a limit), long before the limit.
printf 'Package: plain-test\nVersion: 1.0\nArchitecture: amd64\n\n' >"$T/www/lying/$bin/Packages"
python3 "$GEN" xzbomb "$T/www/lying/$bin/Packages.xz" $((1280 << 20))
rm "$T/www/lying/$bin/Packages.gz"
sign_release "$T/www/lying"
recipe lying plain-test
mki 5 "decompresses to more than the $(stat -c %s "$T/www/lying/$bin/Packages") bytes the Release declares for 'main/binary-amd64/Packages': the mirror is inconsistent or hostile; stopped there" \
	lying --until indexes
refused "Packages.xz bomb, Release declaring the plain size"

# A Packages.xz whose streams declare a 768 MiB dictionary (libarchive would allow it and touch
# as much as it decompresses): refused from its first header by 'xz-memory'.
python3 "$GEN" xzbomb "$T/www/dict/$bin/Packages.xz" $((32 << 20)) big
rm "$T/www/dict/$bin/Packages" "$T/www/dict/$bin/Packages.gz"
sign_release "$T/www/dict"
recipe dict plain-test
mki 3 "'$SERVER_URL/dict/$bin/Packages.xz' needs 768 MiB of memory to decompress \(its xz dictionary\), more than 128M: refused before decompressing \(limit 'xz-memory' is 128M; raise it with --limit xz-memory=SIZE" \
	dict --until indexes
refused "Packages.xz declaring a 768 MiB dictionary"
mki 0 "stopped after stage 'indexes'" dict --until indexes --limit xz-memory=1G

# A Packages stanza claiming a 10 GiB .deb: refused before any package download.
bin_dir=$T/www/claims/$bin
sed -i 's/^Size: .*/Size: 10737418240/' "$bin_dir/Packages"
rm "$bin_dir/Packages.gz" && xz -f "$bin_dir/Packages"
sign_release "$T/www/claims"
recipe claims plain-test
mki 6 "package 'plain-test:amd64' \(1.0\): its index declares the .deb '[^']*' as 10737418240 bytes, more than 8G: refused before downloading anything \(limit 'deb-size' is 8G" \
	claims --until fetch
refused "Packages claiming a 10 GiB .deb"
[ "$(requests "/claims/pool/")" = 0 ] || fail "a .deb was downloaded: $(cat "$SRVLOG")"
mki 5 "has [0-9]+ bytes, the index says 10737418240" claims --until fetch --limit deb-size=16G

# --- (c) a stanza with 100 000 dependencies ------------------------------------------------------
# Refused as the index's error: bookworm's largest field has 1 603 entries. The dependencies are
# all provided by one package, so that with the limit raised the same index resolves.
names=$(seq -f 'd%g' 0 99999 | paste -sd, | sed 's/,/, /g')
rm -rf "$T/www/deps/pool" && mkdir -p "$T/www/deps/pool/main"
deb_build "$(deb_new many-deps 1.0 amd64 "Depends: $names")" "$T/www/deps/pool/main" >/dev/null
deb_build "$(deb_new dep-hub 1.0 amd64 "Provides: $names")" "$T/www/deps/pool/main" >/dev/null
repo_index "$T/www/deps" bookworm main amd64
repo_sign "$T/www/deps" bookworm
recipe deps many-deps
mki 3 "/deps/$bin/Packages\.xz:[0-9]+: the (Depends|Provides) of '(many-deps|dep-hub)' has more than 10000 entries: refused \(limit 'relations' is 10000; raise it with --limit relations=COUNT" \
	deps --until resolve
refused "100 000 dependencies"
mki 0 "resolved 2 packages" deps --until resolve --limit relations=100000
read -r secs kb < <(tail -n 1 "$T/usage")
note "100 000 dependencies with --limit relations=100000: resolved in $secs s, peak RSS $((kb / 1024)) MiB"
# The same lines (700 KB each) against a lowered line limit.
mki 3 "Packages\.xz:[0-9]+: line longer than 65536 bytes: refused \(limit 'line' is 64K" \
	deps --until resolve --limit relations=100000 --limit line=64K

# --- the package cases share one repository --------------------------------------------------
pool=$T/www/pkgs/pool/main
mkdir -p "$pool"
python3 "$GEN" zerobomb "$pool/zero-bomb_1.0_amd64.deb" zero-bomb amd64 $((64 << 30))
python3 "$GEN" zerobomb "$pool/zero-small_1.0_amd64.deb" zero-small amd64 $((64 << 20))
python3 "$GEN" manyfiles "$pool/many-files_1.0_amd64.deb" many-files amd64 20000
python3 "$GEN" manyfiles "$pool/million-files_1.0_amd64.deb" million-files amd64 1000000
python3 "$GEN" xzdeb "$pool/xz-dict_1.0_amd64.deb" xz-dict amd64
repo_index "$T/www/pkgs" bookworm main amd64
repo_sign "$T/www/pkgs" bookworm

# (d) data.tar holds one 64 GiB file of zeros (2 MB as a .deb): refused at its tar header.
recipe pkgs zero-bomb
mki 6 "package 'zero-bomb' \('[^']*'\): data.tar unpacks to more than 32G: refused at './usr/share/zero-bomb/zero', which declares 68719476736 bytes \(limit 'deb-data' is 32G; raise it with --limit deb-data=SIZE" \
	pkgs --until unpack
refused "data.tar bomb (64 GiB)"
not_cached pkgs "$pool/zero-bomb_1.0_amd64.deb"
# The same kind of file, 64 MiB: refused below it, unpacked with the default.
recipe pkgs zero-small
mki 6 "data.tar unpacks to more than 32M: refused at './usr/share/zero-small/zero'.*limit 'deb-data' is 32M" \
	pkgs --until unpack --limit deb-data=32M
refused "data.tar of 64 MiB with --limit deb-data=32M"
not_cached pkgs "$pool/zero-small_1.0_amd64.deb"
mki 0 "unpacked 1 packages" pkgs --until unpack

# data.tar.xz declaring a 768 MiB dictionary: refused at its header, unpacked when allowed.
recipe pkgs xz-dict
mki 6 "package 'xz-dict' \('[^']*'\): member 'data.tar.xz' needs 768 MiB of memory to decompress \(its xz dictionary\), more than 128M: refused before decompressing \(limit 'xz-memory'" \
	pkgs --until unpack
refused "data.tar.xz declaring a 768 MiB dictionary"
not_cached pkgs "$pool/xz-dict_1.0_amd64.deb"
mki 0 "unpacked 1 packages" pkgs --until unpack --limit xz-memory=1G

# (e) 20 000 files: refused at a lowered entry limit before anything is written, fine by default.
recipe pkgs many-files
mki 6 "package 'many-files' \('[^']*'\): data.tar has more than 10000 entries: refused at '[^']*' \(limit 'deb-entries' is 10000; raise it with --limit deb-entries=COUNT" \
	pkgs --until unpack --limit deb-entries=10000
refused "20 000 files with --limit deb-entries=10000"
not_cached pkgs "$pool/many-files_1.0_amd64.deb"
mki 0 "unpacked 1 packages \(20[0-9]{3} paths\)" pkgs --until unpack
mki 6 "the packages together unpack to more than 100 entries: refused at" \
	pkgs --until unpack --limit staging-entries=100
refused "20 000 files with --limit staging-entries=100"

# 1 000 000 files: refused at the default limit (500 000) by counting headers, before writing.
recipe pkgs million-files
mki 6 "package 'million-files' \('[^']*'\): data.tar has more than 500000 entries: refused at '[^']*' \(limit 'deb-entries' is 500000" \
	pkgs --until unpack
refused "1 000 000 files"
not_cached pkgs "$pool/million-files_1.0_amd64.deb"

# Bad --limit values are usage errors, listed in --help.
expect_fail 2 "unknown limit 'deb-dat' \(did you mean 'deb-data'\?\)" "$MKIMAGE" --limit deb-dat=1G "$T/pkgs.cfg"
expect_fail 2 "'lots' is not a count" "$MKIMAGE" --limit deb-entries=lots "$T/pkgs.cfg"
expect_fail 2 "'1.5G' is not a size" "$MKIMAGE" --limit index-unpacked=1.5G "$T/pkgs.cfg"
expect_ok "$MKIMAGE" --help
grep -q "deb-entries *500000" "$T/out" || fail "--help does not list the limits"
