# test-cost: slow (six native builds, three as an ordinary user)
# A tree restored from the layer cache declares the licences its packages shipped (issue 30, row
# O4 through the layer cache): a postinst rewrites another package's copyright file to "License:
# MIT"; the first build reads the copyright files before configuration and stores them with the
# layer; the second restores the configured tree - holding the rewritten file - and its SBOM still
# declares the shipped Apache-2.0, byte-identical to the first build's. A build without the layer
# cache gives the same SBOM. As root and as an ordinary user, each with its own cache.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

export SOURCE_DATE_EPOCH=1700000000

d=$(deb_new victim 1.0 all)
deb_file "$d" usr/share/doc/victim/copyright "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: victim

Files: *
Copyright: 2024 The Victim Authors
License: Apache-2.0
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new rewriter 1.0 all "Depends: victim")
deb_file "$d" DEBIAN/postinst '#!/bin/sh
printf "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: none\nLicense: MIT\n" >/usr/share/doc/victim/copyright
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo
mkdir -p "$T/r"
native_recipe "$T/r/t.cfg" t ', "rewriter"'
chmod -R a+rX "$T/r"

# licence SBOM: what the SBOM declares for victim.
licence() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(*[p.get("licenseDeclared") for p in d["packages"] if p.get("name") == "victim"])' "$1"
}

# build DIR OUT [RUNNER...]: one build into DIR/img/OUT/t.ext4 (one name: the SBOM names the
# image); stderr in $T/err.
build() {
	local dir=$1 out=$2
	shift 2
	mkdir -p "$dir/img/$out"
	[ -z "${1:-}" ] || chown "$2" "$dir/img/$out"
	TMPDIR=$dir/tmp expect_ok "$@" "$MKIMAGE" --cache-dir "$dir/cache" \
		-o "$dir/img/$out/t.ext4" ${LAYER_ARGS:-} "$T/r/t.cfg"
	[ -z "$(ls -A "$dir/tmp")" ] || fail "$out: work dir left: $(ls -A "$dir/tmp")"
}

# run_all WHO DIR [RUNNER...]
run_all() {
	local who=$1 dir=$2 f
	shift 2
	mkdir -p "$dir/tmp" "$dir/cache" "$dir/img"
	[ -z "${1:-}" ] || chown -R "$2" "$dir"
	build "$dir" first "$@"
	grep -q "layer cache: configured tree stored as layer" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who: the first build stored no layer"; }
	build "$dir" second "$@"
	grep -q "layer cache: configured tree restored from layer" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who: the second build did not restore the layer"; }
	LAYER_ARGS=--no-layer-cache build "$dir" fresh "$@"
	debugfs -R "cat /usr/share/doc/victim/copyright" "$dir/img/second/t.ext4" 2>/dev/null |
		grep -q '^License: MIT' || fail "$who: the restored tree does not hold the rewritten licence: the test tests nothing"
	for f in first second fresh; do
		sbom_validate "$dir/img/$f/t.spdx.json"
		[ "$(licence "$dir/img/$f/t.spdx.json")" = Apache-2.0 ] ||
			fail "$who: the $f build's SBOM declares '$(licence "$dir/img/$f/t.spdx.json")' for victim, not Apache-2.0"
	done
	cmp "$dir/img/first/t.ext4" "$dir/img/second/t.ext4" || fail "$who: the restored build's image differs"
	cmp "$dir/img/first/t.spdx.json" "$dir/img/second/t.spdx.json" ||
		fail "$who: the SBOM of the build from the layer differs from the first build's"
	cmp "$dir/img/first/t.spdx.json" "$dir/img/fresh/t.spdx.json" ||
		fail "$who: the SBOM differs with and without the layer cache"
	note "$who: first, restored and uncached builds declare Apache-2.0; SBOMs byte-identical"
}

run_all root "$T/root"
if [ "$(id -u)" = 0 ]; then
	test_user mkilayer90
	chmod 755 "$T"
	run_all user "$T/user" as_user mkilayer90
else
	skip_part "not root: the ordinary user's builds need a throwaway user"
fi
