# Nothing a package does reaches the terminal or a file raw (issue 30, rows O1-O4). O1: a daemon a
# postinst leaves, named by an escape sequence: the warning shows its name escaped. O2: a postinst
# that hangs with DPKG_MAINTSCRIPT_PACKAGE holding escapes and a forged "image written" line: the
# timeout error shows it escaped, on its own line. O3: an index whose Source field holds ESC and a
# second line: refused as a malformed index, no lock, SBOM or report written. O4: a postinst
# rewrites another package's copyright file to "License: MIT": the SBOM declares the licence the
# package shipped. Native amd64 builds, as root and as an ordinary user; stderr is checked byte for
# byte for ESC, BEL and forged lines.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

ESC=$(printf '\033')
BEL=$(printf '\007')

# victim: ships a DEP-5 copyright file declaring Apache-2.0.
d=$(deb_new victim 1.0 all)
deb_file "$d" usr/share/doc/victim/copyright "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: victim

Files: *
Copyright: 2024 The Victim Authors
License: Apache-2.0
"
deb_build "$d" "$T/repo/pool/main" >/dev/null

# rewriter (O1, O4): rewrites victim's licence, then leaves a daemon named by an escape sequence
# (a process's name is its program's file name: ESC[2J, then ESC]0;PW BEL, a window title).
d=$(deb_new rewriter 1.0 all "Depends: victim")
deb_file "$d" DEBIAN/postinst '#!/bin/sh
printf "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: none\nLicense: MIT\n" >/usr/share/doc/victim/copyright
n=$(printf "\033[2J\033]0;PW\007")
cp /bin/sleep "/tmp/$n"
"/tmp/$n" 7861 </dev/null >/dev/null 2>&1 &
exit 0
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null

# forger (O2): becomes a sleep whose environment names a package made of escapes and a log line.
d=$(deb_new forger 1.0 all)
deb_file "$d" DEBIAN/postinst '#!/bin/sh
exec env DPKG_MAINTSCRIPT_PACKAGE="$(printf "x \033[2J\033[3J\033[H\nmkimage: info: image written to images/ok.ext4")" sleep 7862
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null

# evil-src (O3): its index stanza's Source holds ESC and a continuation line.
d=$(deb_new evil-src 1.0 all "Source: evil${ESC}[2J
 mkimage: info: image written to images/ok.ext4")
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo
grep -q "^Source: evil${ESC}" "$T/repo/dists/bookworm/main/binary-amd64/Packages" ||
	fail "the index does not carry the hostile Source field"

mkdir -p "$T/r"
native_recipe "$T/r/licence.cfg" t ', "rewriter"'
native_recipe "$T/r/timeout.cfg" t ', "forger"'
echo 'script_timeout = 5;' >>"$T/r/timeout.cfg"
native_recipe "$T/r/source.cfg" t ', "evil-src"'

# clean_stderr WHAT: stderr holds no ESC or BEL byte and no forged "image written" line.
clean_stderr() {
	! grep -q "[$ESC$BEL]" "$T/err" || { cat -v "$T/err" >&2; fail "$1: a raw ESC or BEL reached stderr"; }
	! grep -q '^mkimage: info: image written to images/ok' "$T/err" ||
		{ cat -v "$T/err" >&2; fail "$1: a forged 'image written' line"; }
}

# run_all WHO DIR [as_user NAME]: the three builds in DIR (work, cache and images under it).
run_all() {
	local who=$1 dir=$2 lic
	shift 2
	mkdir -p "$dir/tmp" "$dir/cache" "$dir/img"
	[ -z "${1:-}" ] || chown -R "$2" "$dir"

	# O1, O4: the build succeeds, warns about the daemon (escaped), declares Apache-2.0
	TMPDIR=$dir/tmp expect_ok "$@" "$MKIMAGE" --cache-dir "$dir/cache" --no-layer-cache \
		-o "$dir/img/t.ext4" "$T/r/licence.cfg"
	clean_stderr "$who: O1"
	grep -Fq "'\\x1b[2J\\x1b]0;PW\\x07'" "$T/err" ||
		{ cat -v "$T/err" >&2; fail "$who: O1: the daemon's name is not shown escaped"; }
	grep -q "left .* running when it ended" "$T/err" || fail "$who: O1: no leftover warning"
	no_process 'sleep 7861|/tmp/.* 7861' "$who: O1"
	debugfs -R "cat /usr/share/doc/victim/copyright" "$dir/img/t.ext4" 2>/dev/null |
		grep -q '^License: MIT' || fail "$who: O4: the postinst did not rewrite the licence"
	sbom_validate "$dir/img/t.spdx.json"
	lic=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(*[p.get("licenseDeclared") for p in d["packages"] if p.get("name") == "victim"])' \
		"$dir/img/t.spdx.json")
	[ "$lic" = Apache-2.0 ] || fail "$who: O4: the SBOM declares '$lic' for victim, not Apache-2.0"
	python3 -m json.tool "$dir/img/t.report.json" >/dev/null ||
		fail "$who: the build report is not valid JSON"
	note "$who: O1 daemon named $(grep -o "'\\\\x1b\[2J[^']*'" "$T/err" | head -1), O4 licence $lic"
	rm -f "$dir/img/"*

	# O2: the timeout error names the hostile package escaped, one line, nothing forged
	TMPDIR=$dir/tmp expect_fail 7 "ran longer than script_timeout \(5 s\)" \
		"$@" timeout 120 "$MKIMAGE" --cache-dir "$dir/cache" --no-layer-cache \
		-o "$dir/img/t.ext4" "$T/r/timeout.cfg"
	clean_stderr "$who: O2"
	grep -Fq "'x \\x1b[2J\\x1b[3J\\x1b[H\\nmkimage: info: image written to images/ok.ext4'" \
		"$T/err" || { cat -v "$T/err" >&2; fail "$who: O2: the package is not shown escaped"; }
	no_process 'sleep 7862' "$who: O2"
	no_process_under "$dir/tmp" "$who: O2"
	[ -z "$(left_beside "$dir/img")" ] || fail "$who: O2: output left: $(left_beside "$dir/img")"

	# O3: the Source field is refused where it is read, before anything is written
	TMPDIR=$dir/tmp expect_fail 3 "the Source field of 'evil-src' holds 'evil\\\\x1b\[2J\\\\n.*the index is malformed" \
		"$@" "$MKIMAGE" --cache-dir "$dir/cache" -o "$dir/img/t.ext4" "$T/r/source.cfg"
	clean_stderr "$who: O3"
	TMPDIR=$dir/tmp expect_fail 3 "the Source field of 'evil-src'" \
		"$@" "$MKIMAGE" --cache-dir "$dir/cache" --lock -o "$dir/img/t.ext4" "$T/r/source.cfg"
	clean_stderr "$who: O3 --lock"
	[ -z "$(left_beside "$dir/img")" ] || fail "$who: O3: lock or output left: $(left_beside "$dir/img")"
	[ -z "$(ls -A "$dir/tmp")" ] || fail "$who: work dir left: $(ls -A "$dir/tmp")"
	note "$who: O2 timeout and O3 Source shown escaped, nothing forged, nothing left"
}

run_all root "$T/root"
if [ "$(id -u)" = 0 ]; then
	test_user mkiraw86
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	run_all user "$T/u" as_user mkiraw86
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
