# The SBOM as a compliance team reads it (issue 27, deliverable 8): a vendor's local .deb has its
# own provenance (its Maintainer as supplier, no Debian purl, no Debian source package), every
# package a purpose by one rule (LIBRARY, APPLICATION; the image OPERATING_SYSTEM), the document
# namespace under the recipe's sbom_namespace, SPDX ids from name, architecture and version (no
# ordinal); valid SPDX 2.3; a rebuild from the lock writes the same bytes, also as an ordinary
# user. A bad sbom_namespace is a recipe error.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

native_repo
d=$(deb_new acme-agent 2.1+acme1 amd64 "Depends: libc6")
sed -i 's/^Maintainer: .*/Maintainer: ACME Devices Ltd <support@acme.test>/' "$d/DEBIAN/control"
deb_file "$d" usr/bin/acme-agent "#!/bin/sh
" 0755
mkdir -p "$T/r/vendor"
deb_build "$d" "$T/r/vendor" >/dev/null
native_recipe "$T/r/t.cfg" t ', "acme-agent"'
sed -i 's|install = \[|local = [ "vendor/acme-agent_2.1+acme1_amd64.deb" ]; install = [|' "$T/r/t.cfg"
echo 'sbom_namespace = "https://sbom.acme.test/fleet/";' >>"$T/r/t.cfg"
mkdir -p "$T/img"
expect_ok "$MKIMAGE" --no-layer-cache -o "$T/img/t.ext4" "$T/r/t.cfg"
sbom_validate "$T/img/t.spdx.json"
python3 - "$T/img/t.spdx.json" "$("$MKIMAGE" --version)" <<'PY' || fail "SBOM check failed"
import json, re, sys
doc = json.load(open(sys.argv[1]))
# one version string: the creator is what --version says
assert doc["creationInfo"]["creators"] == ["Tool: " + sys.argv[2].replace(" ", "-")], \
    (doc["creationInfo"]["creators"], sys.argv[2])
assert re.fullmatch(r"https://sbom\.acme\.test/fleet/t-[0-9a-f]{64}", doc["documentNamespace"]), \
    doc["documentNamespace"]
pk = {p["name"]: p for p in doc["packages"] if p["SPDXID"] != "SPDXRef-Image"}
image = [p for p in doc["packages"] if p["SPDXID"] == "SPDXRef-Image"][0]
assert image["primaryPackagePurpose"] == "OPERATING_SYSTEM"
v = pk["acme-agent"]
assert v["SPDXID"] == "SPDXRef-Package-acme-agent-amd64-2.1-acme1", v["SPDXID"]
assert v["supplier"] == "Organization: ACME Devices Ltd (support@acme.test)", v["supplier"]
assert "externalRefs" not in v, v
assert v["downloadLocation"] == "NOASSERTION"
assert "Debian" not in v["sourceInfo"] and "acme-agent_2.1+acme1_amd64.deb" in v["sourceInfo"], v
assert v["primaryPackagePurpose"] == "APPLICATION"
for name, p in pk.items():
    arch = p["comment"].split()[-1]
    want = "SPDXRef-Package-" + name.replace("+", "plus") + "-" + arch + "-" + \
        re.sub(r"[^A-Za-z0-9.]", "-", p["versionInfo"])
    assert p["SPDXID"] == want, (p["SPDXID"], want)
    if name != "acme-agent":
        assert p["externalRefs"][0]["referenceLocator"].startswith("pkg:deb/debian/" + name)
        assert p["sourceInfo"].startswith("built from Debian source package")
assert pk["libc6"]["primaryPackagePurpose"] == "LIBRARY"
assert pk["dash"]["primaryPackagePurpose"] == "APPLICATION"
assert pk["coreutils"]["primaryPackagePurpose"] == "APPLICATION"
dep = {(r["spdxElementId"], r["relatedSpdxElement"]) for r in doc["relationships"]
       if r["relationshipType"] == "DEPENDS_ON"}
assert (v["SPDXID"], pk["libc6"]["SPDXID"]) in dep
PY

# The same lock, built again: the same SBOM, byte for byte.
cp "$T/img/t.spdx.json" "$T/first.spdx.json"
expect_ok "$MKIMAGE" --no-layer-cache --locked="$T/img/t.lock" -o "$T/img/t.ext4" "$T/r/t.cfg"
cmp "$T/first.spdx.json" "$T/img/t.spdx.json" || fail "the SBOM differs between two builds of one lock"
if [ "$(id -u)" = 0 ]; then
	test_user mkisbom102
	mkdir -p "$T/u/tmp" "$T/u/img" "$T/u/cache"
	cp "$T/img/t.lock" "$T/u/t.lock"
	chown -R mkisbom102 "$T/u"
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	TMPDIR=$T/u/tmp expect_ok as_user mkisbom102 "$MKIMAGE" --no-layer-cache --cache-dir "$T/u/cache" \
		--locked="$T/u/t.lock" -o "$T/u/img/t.ext4" "$T/r/t.cfg"
	cmp "$T/first.spdx.json" "$T/u/img/t.spdx.json" ||
		fail "the SBOM an ordinary user's build of the lock writes differs from root's"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi

# --check shows the namespace; it is not part of the recipe's digest (the lock and image keep theirs).
expect_ok "$MKIMAGE" --check "$T/r/t.cfg"
grep -q '^sbom_namespace = "https://sbom.acme.test/fleet/";' "$T/out" ||
	fail "--check does not show sbom_namespace"
sed "s|^sbom_namespace = .*|sbom_namespace = \"urn:acme:fleet\";|" "$T/r/t.cfg" >"$T/r/other.cfg"
expect_ok "$MKIMAGE" --no-layer-cache --locked="$T/img/t.lock" -o "$T/img/o.ext4" "$T/r/other.cfg"
cmp "$T/img/t.ext4" "$T/img/o.ext4" || fail "another sbom_namespace changed the image"
grep -q '"documentNamespace": "urn:acme:fleet/t-' "$T/img/o.spdx.json" || fail "urn: namespace not used"
sbom_validate "$T/img/o.spdx.json"

# A namespace that is no URI is a recipe error, before any work.
for bad in 'sbom.acme.test/fleet' 'https://sbom.acme.test/a b' 'https://sbom.acme.test/#x' ''; do
	sed "s|^sbom_namespace = .*|sbom_namespace = \"$bad\";|" "$T/r/t.cfg" >"$T/r/bad.cfg"
	expect_fail 2 "bad.cfg:[0-9]+: 'sbom_namespace' must be a URI" "$MKIMAGE" --check "$T/r/bad.cfg"
done
