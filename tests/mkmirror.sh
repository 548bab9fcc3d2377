#!/bin/bash
# mkmirror.sh DIR PRIMARY[,AUX...] PACKAGE...
#
# Build (or reuse) a local signed apt repository of REAL Debian packages for tests and benchmarks:
# the closure of Essential + Priority: required of PRIMARY plus PACKAGE... (name, name:arch), as apt
# resolves it for the given architectures, downloaded through the host's apt configuration (so no
# mirror is named here), indexed with apt-ftparchive and signed with a throwaway key.
#
# Output: DIR/repo (serve it: dists/bookworm/main/binary-ARCH/Packages{,.xz}, InRelease),
# DIR/key.gpg (the keyring), DIR/packages.txt (name:arch=version, one a line).
# When the host's arch is not among them, the mirror also carries the host-arch builds of the
# same versions ("twins", which mkimage runs natively while configuring: builder/configure/accel.h), as
# Debian's archive does; TWINS=0 leaves them out.
# A second run with the same arguments reuses DIR. SUITE (default bookworm) picks the suite: the
# host's sources of its own release name the archive, and the suite replaces theirs (so a
# bookworm host makes a trixie mirror).
# COMPONENTS (default "main") names the archive's components the mirror carries, each in its own
# pool/COMPONENT and dists/SUITE/COMPONENT (such as "main non-free-firmware": the same archive
# serves them, whatever components the host's sources name).
# Where the archive lacks the newest .deb of a package for one architecture (a mirror that has
# not caught up, seen for trixie's armel), the mirror carries that source package's newest
# version the archive serves for every architecture of the set, found by stepping back through
# its stable updates (+debNNuK) and their binary-only rebuilds (+bN); each such fallback is printed and listed in DIR/fallbacks.txt,
# and a package with none is an error.
set -euo pipefail
dir=$1 archs=$2
shift 2
suite=${SUITE:-bookworm}
primary=${archs%%,*}
host=$(dpkg --print-architecture)
twins=${TWINS:-1}
case ",$archs," in *",$host,"*) twins=0 ;; esac
stamp="v4 $archs $suite twins=$twins $*"
# A release other than bookworm may need the fallback below, which also fetches its twins.
[ "$suite" = bookworm ] || stamp="v5 $archs $suite twins=$twins $*"
components=${COMPONENTS:-main}
[ "$components" = main ] || stamp="$stamp components=$components"
# Tests running at once (tests/integration/run.sh -j) build one mirror once: the others wait here.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] && [ -f "$dir/repo/dists/$suite/InRelease" ]; then
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/apt/state/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/etc/apt.conf.d" \
	"$dir/apt/etc/preferences.d" "$dir/repo/pool/main"
touch "$dir/apt/state/status"
{
	echo "Dir \"$dir/apt/\";"
	echo "Dir::State \"$dir/apt/state/\";"
	echo "Dir::State::status \"$dir/apt/state/status\";"
	echo "Dir::Cache \"$dir/apt/cache/\";"
	echo "Dir::Etc \"$dir/apt/etc/\";"
	echo "Dir::Etc::SourceList \"$dir/apt/etc/sources.list\";"
	echo "Dir::Etc::SourceParts \"$dir/apt/etc/sources.list.d\";"
	echo "Dir::Etc::Trusted \"/etc/apt/trusted.gpg\";"
	echo "Dir::Etc::TrustedParts \"/etc/apt/trusted.gpg.d\";"
	echo "APT::Architecture \"$primary\";"
	echo "APT::Architectures { $(echo "$archs" | tr ',' '\n' | sed 's/.*/"&";/' | tr '\n' ' ')};"
	echo "APT::Install-Recommends \"false\";"
	echo "Acquire::Languages \"none\";"
	echo "Debug::NoLocking \"true\";"
} >"$dir/apt/apt.conf"
touch "$dir/apt/etc/sources.list"
mkdir -p "$dir/apt/etc/sources.list.d"
# The host's archive sources (not -updates, -security or third parties' suites) with SUITE as
# their suite and COMPONENTS as their components: the archive is named by the host's
# configuration only.
python3 - "$suite" "$components" >"$dir/apt/etc/sources.list.d/mkmirror.sources" <<'PY'
import glob, re, sys
suite, components = sys.argv[1:3]
out = []
def add(uris, suites, signed):
    if any(re.fullmatch(r"[a-z]+", s) for s in suites):
        out.append(f"Types: deb\nURIs: {' '.join(uris)}\nSuites: {suite}\nComponents: {components}\n" +
                   (f"Signed-By: {signed}\n" if signed else ""))
for f in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(f).read()):
        fields = {}
        for line in stanza.splitlines():
            if line and not line[0].isspace() and not line.startswith("#") and ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
        if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes") != "no":
            add(fields.get("uris", "").split(), fields.get("suites", "").split(), fields.get("signed-by"))
for f in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(f).read().splitlines()
    except OSError:
        continue
    for line in lines:
        m = re.match(r"\s*deb\s+(\[[^]]*\]\s+)?(\S+)\s+(\S+)", line)
        if m:
            sb = re.search(r"signed-by=(\S+?)\s*\]?$", m.group(1) or "")
            add([m.group(2)], [m.group(3)], sb.group(1).rstrip("]") if sb else None)
print("\n".join(out), end="")
PY
[ -s "$dir/apt/etc/sources.list.d/mkmirror.sources" ] ||
	{ echo "mkmirror: the host's apt sources name no Debian archive suite to take '$suite' from" >&2; exit 1; }
export APT_CONFIG=$dir/apt/apt.conf
apt-get update -qq >/dev/null
# Only the one suite: the host may carry -updates/-security for fewer architectures, and a
# Multi-Arch: same library must have one version across all of them.
find "$dir/apt/state/lists" -maxdepth 1 -type f ! -name "*_dists_${suite}_*" -delete
rm -f "$dir/apt/cache/"*.bin
# Essential and required of the primary architecture, as debootstrap's minbase chooses them.
base=$(python3 - "$dir/apt/state/lists" "$primary" "$suite" <<'PY'
import glob, sys
lists, arch, suite = sys.argv[1:4]
names = set()
for f in glob.glob(f"{lists}/*_dists_{suite}_main_binary-{arch}_Packages"):
    for stanza in open(f, encoding="utf-8", errors="replace").read().split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if line and not line[0].isspace() and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.strip()
        if fields.get("Essential") == "yes" or fields.get("Priority") == "required":
            names.add(fields["Package"])
print(" ".join(sorted(names)))
PY
)
# fallback_older: for each package of packages.txt the archive did not serve, its source
# package's newest +debNNuK version that the archive serves for every package and architecture
# of the set built from it; packages.txt is rewritten to name what the pool holds.
fallback_older() {
	python3 - "$dir" "$twins" "$host" <<'PY' || exit 1
import os, re, subprocess, sys
d, twins, host = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
pool = os.path.join(d, "repo/pool/main")
entries = [l.strip() for l in open(os.path.join(d, "packages.txt")) if l.strip()]
def fname(name, arch, ver):  # as apt-get download names it
    return f"{name}_{ver.replace(':', '%3a')}_{arch}.deb"
def poolname(name, arch, ver):  # as the archive's pool names it
    return f"{name}_{re.sub(r'^[0-9]+:', '', ver)}_{arch}.deb"
have = set(os.listdir(pool))
missing = [e for e in entries if fname(*re.match(r"([^:]+):([^=]+)=(.*)", e).groups()[0:3]) not in have]
def uri(spec):
    r = subprocess.run(["apt-get", "download", "--print-uris", "-qq", spec], capture_output=True, text=True)
    m = re.match(r"'([^']+)'", r.stdout)
    return m.group(1) if m else None
def source(name, arch, ver):
    r = subprocess.run(["apt-cache", "show", f"{name}:{arch}={ver}"], capture_output=True, text=True)
    m = re.search(r"^Source: (\S+)", r.stdout, re.M)
    return m.group(1) if m else name
def fetch(url, dest):
    return subprocess.run(["/usr/lib/apt/apt-helper", "download-file", url, dest],
                          capture_output=True).returncode == 0
groups = {}
for e in missing:
    name, arch, ver = re.match(r"([^:]+):([^=]+)=(.*)", e).groups()
    groups.setdefault((source(name, arch, ver), ver), set())
for e in entries:
    name, arch, ver = re.match(r"([^:]+):([^=]+)=(.*)", e).groups()
    for (src, v) in groups:
        if v == ver and source(name, arch, ver) == src:
            groups[(src, v)].add(e)
log = open(os.path.join(d, "fallbacks.txt"), "a")
rewrite = {}
for (src, ver), members in sorted(groups.items()):
    m = re.match(r"(.*\+deb\d+u)(\d+)$", ver)
    bases = [f"{m.group(1)}{k}" for k in range(int(m.group(2)) - 1, 0, -1)] if m else []
    bases += [m.group(1)[:m.group(1).rindex("+")]] if m else []
    # Each with its binary-only rebuilds first (+bN sorts below +debNNuK, above nothing).
    older = [f"{b}+b{n}" if n else b for b in bases for n in (3, 2, 1, 0)]
    chosen = None
    for o in older:
        urls = {}
        for e in members:
            name, arch, _ = re.match(r"([^:]+):([^=]+)=(.*)", e).groups()
            u = uri(e)
            if not u:
                break
            urls[e] = (u.rsplit("/", 1)[0] + "/" + poolname(name, arch, o), fname(name, arch, o))
        else:
            tmp = os.path.join(d, "fallback.part")
            ok = True
            for e, (u, f) in urls.items():
                if f in have:
                    continue
                if not fetch(u, tmp):
                    ok = False
                    break
                os.rename(tmp, os.path.join(pool, f))
                have.add(f)
            if ok:
                chosen = (o, urls)
                break
    if not chosen:
        sys.exit(f"mkmirror: the archive serves no file of '{src}' {ver} for " +
                 ", ".join(sorted(members)) + ", nor an older stable update of it for them all")
    for e, (u, f) in chosen[1].items():
        name, arch, _ = re.match(r"([^:]+):([^=]+)=(.*)", e).groups()
        newest = os.path.join(pool, fname(*re.match(r"([^:]+):([^=]+)=(.*)", e).groups()))
        if os.path.exists(newest):
            os.unlink(newest)
        rewrite[e] = e.rsplit("=", 1)[0] + "=" + chosen[0]
        # The host's build of the older version too, where served: the twin of what the
        # mirror now carries (the host's lists name only the newest).
        twin = fname(name, host, chosen[0])
        if twins and arch != "all" and twin not in have and fetch(
                u.rsplit("/", 1)[0] + "/" + poolname(name, host, chosen[0]), os.path.join(d, "fallback.part")):
            os.rename(os.path.join(d, "fallback.part"), os.path.join(pool, twin))
            have.add(twin)
    msg = (f"mkmirror: the archive lacks some files of '{src}' {ver}; the mirror carries {chosen[0]}, "
           f"the newest served for all of: {' '.join(sorted(members))}")
    print(msg, file=sys.stderr)
    print(msg, file=log)
with open(os.path.join(d, "packages.txt"), "w") as f:
    for e in entries:
        f.write(rewrite.get(e, e) + "\n")
PY
}
apt-get -s install -qq $base "$@" >"$dir/sim.txt"
sed -En 's/^Inst ([^ ]+) \(([^ ]+) [^[]*\[([^]]+)\].*/\1 \2 \3/p' "$dir/sim.txt" |
	while read -r name version arch; do
		name=${name%%:*}
		echo "$name:$arch=$version"
	done | sort >"$dir/packages.txt"
[ -s "$dir/packages.txt" ] || { echo "mkmirror: apt chose no packages" >&2; exit 1; }
(cd "$dir/repo/pool/main" && xargs -a "$dir/packages.txt" apt-get download -qq -o APT::Sandbox::User=root >/dev/null 2>&1) ||
	fallback_older
if [ "$twins" = 1 ]; then
	# A second apt state for the host's arch only, so the choice above never sees it.
	mkdir -p "$dir/apt-host/state/lists/partial" "$dir/apt-host/cache/archives/partial"
	touch "$dir/apt-host/state/status"
	sed -e "s|$dir/apt/state|$dir/apt-host/state|g; s|$dir/apt/cache|$dir/apt-host/cache|g" \
		-e "s|^APT::Architecture .*|APT::Architecture \"$host\";|" \
		-e "s|^APT::Architectures .*|APT::Architectures { \"$host\"; };|" \
		"$dir/apt/apt.conf" >"$dir/apt-host/apt.conf"
	APT_CONFIG=$dir/apt-host/apt.conf apt-get update -qq >/dev/null
	find "$dir/apt-host/state/lists" -maxdepth 1 -type f ! -name "*_dists_${suite}_*" -delete
	rm -f "$dir/apt-host/cache/"*.bin
	python3 - "$dir/apt-host/state/lists" "$host" "$dir/packages.txt" >"$dir/twins.txt" <<'PY'
import glob, sys
lists, host, wanted = sys.argv[1:4]
want = {}
for line in open(wanted):
    name, rest = line.strip().split(":", 1)
    arch, version = rest.split("=", 1)
    if arch != "all":
        want[name] = version
have = set()
for f in glob.glob(f"{lists}/*_binary-{host}_Packages"):
    for stanza in open(f, encoding="utf-8", errors="replace").read().split("\n\n"):
        fields = dict(l.split(": ", 1) for l in stanza.splitlines() if ": " in l and not l[0].isspace())
        if "Package" in fields and want.get(fields["Package"]) == fields.get("Version"):
            have.add(f"{fields['Package']}:{host}={fields['Version']}")
print("\n".join(sorted(have)))
PY
	(cd "$dir/repo/pool/main" && APT_CONFIG=$dir/apt-host/apt.conf xargs -r -a "$dir/twins.txt" \
		apt-get download -qq -o APT::Sandbox::User=root >/dev/null)
	archs=$archs,$host
fi
# The packages of the other components to their own pools, as the lists that name them say.
for comp in $components; do
	[ "$comp" != main ] || continue
	mkdir -p "$dir/repo/pool/$comp"
	python3 - "$dir" "$suite" "$comp" <<'PY'
import glob, os, sys
d, suite, comp = sys.argv[1:4]
for f in glob.glob(f"{d}/apt*/state/lists/*_dists_{suite}_{comp}_binary-*_Packages"):
    for stanza in open(f, encoding="utf-8", errors="replace").read().split("\n\n"):
        fields = dict(l.split(": ", 1) for l in stanza.splitlines() if ": " in l and not l[0].isspace())
        if "Package" not in fields:
            continue
        name = f"{fields['Package']}_{fields['Version'].replace(':', '%3a')}_{fields['Architecture']}.deb"
        if os.path.exists(f"{d}/repo/pool/main/{name}"):
            os.rename(f"{d}/repo/pool/main/{name}", f"{d}/repo/pool/{comp}/{name}")
PY
done
# Debian's archive sets Priority and Section by override, not from the .deb: keep them as Debian
# has them, so "required" means the same here as there.
python3 - "$dir/apt/state/lists" "$suite" $components >"$dir/override" <<'PY'
import glob, sys
lists, suite, comps = sys.argv[1], sys.argv[2], sys.argv[3:]
seen = {}
for f in [f for c in comps for f in sorted(glob.glob(f"{lists}/*_dists_{suite}_{c}_binary-*_Packages"))]:
    for stanza in open(f, encoding="utf-8", errors="replace").read().split("\n\n"):
        fields = dict(l.split(": ", 1) for l in stanza.splitlines() if ": " in l and not l[0].isspace())
        if "Package" in fields and fields["Package"] not in seen:
            seen[fields["Package"]] = (fields.get("Priority", "optional"), fields.get("Section", "misc"))
for name, (prio, sect) in sorted(seen.items()):
    print(f"{name} {prio} {sect}")
PY
export GNUPGHOME=$dir/gnupg
mkdir -p "$GNUPGHOME" && chmod 700 "$GNUPGHOME"
# gpg starts an agent that outlives this script: it must not inherit the lock, and is stopped.
gpg() { command gpg "$@" 9>&-; }
trap 'gpgconf --kill gpg-agent 9>&- 2>/dev/null || true' EXIT
gpg --batch --quiet --passphrase '' --quick-gen-key "mkimage test mirror <mirror@example.org>" rsa2048 sign 0 2>/dev/null
gpg --batch --quiet --export >"$dir/key.gpg"
for comp in $components; do
	pool=pool
	[ "$components" = main ] || pool=pool/$comp
	for arch in $(echo "$archs" | tr ',' ' '); do
		d=$dir/repo/dists/$suite/$comp/binary-$arch
		mkdir -p "$d"
		(cd "$dir/repo" && apt-ftparchive --arch "$arch" packages "$pool" "$dir/override") >"$d/Packages" 2>/dev/null
		xz -kf "$d/Packages"
		gzip -9nkf "$d/Packages"
	done
done
(cd "$dir/repo/dists/$suite" && apt-ftparchive -o APT::FTPArchive::Release::Suite="$suite" \
	-o APT::FTPArchive::Release::Codename="$suite" \
	-o APT::FTPArchive::Release::Architectures="$(echo "$archs" | tr ',' ' ')" \
	-o APT::FTPArchive::Release::Components="$components" release .) >"$dir/Release.tmp"
mv "$dir/Release.tmp" "$dir/repo/dists/$suite/Release"
gpg --batch --yes --quiet --digest-algo SHA256 --clearsign -o "$dir/repo/dists/$suite/InRelease" "$dir/repo/dists/$suite/Release"
gpg --batch --yes --quiet --digest-algo SHA256 -abs -o "$dir/repo/dists/$suite/Release.gpg" "$dir/repo/dists/$suite/Release"
echo "$stamp" >"$dir/stamp"
