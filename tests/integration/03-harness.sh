# The test harness itself: a real .deb, a signed repository on 127.0.0.1, gpgv accepts it.
. "$(dirname "$0")/lib.sh"

d=$(deb_new hello-test 1.0-1 armhf "Multi-Arch: same")
deb_file "$d" usr/share/doc/hello-test/README "hi"
deb=$(deb_build "$d" "$T/repo/pool/main")
dpkg-deb --info "$deb" | grep -q 'Multi-Arch: same' || fail "deb lacks its control field"
gpg_key repo
key=$KEYRING
repo_index "$T/repo" bookworm main armhf armel
repo_sign "$T/repo" bookworm
grep -q '^Package: hello-test' "$T/repo/dists/bookworm/main/binary-armhf/Packages" ||
	fail "armhf index lacks the package"
grep -q 'main/binary-armel/Packages.xz' "$T/repo/dists/bookworm/Release" || fail "Release lacks armel"
serve "$T/repo"
python3 -c "import urllib.request,sys; sys.stdout.buffer.write(urllib.request.urlopen('$SERVER_URL/dists/bookworm/InRelease').read())" >"$T/InRelease"
gpgv --keyring "$key" "$T/InRelease" 2>/dev/null || fail "gpgv rejects the served InRelease"
