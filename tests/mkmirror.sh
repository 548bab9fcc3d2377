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
# A second run with the same arguments reuses DIR. SUITE (default bookworm) picks the suite.
set -euo pipefail
dir=$1 archs=$2
shift 2
suite=${SUITE:-bookworm}
primary=${archs%%,*}
host=$(dpkg --print-architecture)
twins=${TWINS:-1}
case ",$archs," in *",$host,"*) twins=0 ;; esac
stamp="v4 $archs $suite twins=$twins $*"
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
	echo "Dir::Etc::SourceList \"/etc/apt/sources.list\";"
	echo "Dir::Etc::SourceParts \"/etc/apt/sources.list.d\";"
	echo "Dir::Etc::Trusted \"/etc/apt/trusted.gpg\";"
	echo "Dir::Etc::TrustedParts \"/etc/apt/trusted.gpg.d\";"
	echo "APT::Architecture \"$primary\";"
	echo "APT::Architectures { $(echo "$archs" | tr ',' '\n' | sed 's/.*/"&";/' | tr '\n' ' ')};"
	echo "APT::Install-Recommends \"false\";"
	echo "Acquire::Languages \"none\";"
	echo "Debug::NoLocking \"true\";"
} >"$dir/apt/apt.conf"
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
apt-get -s install -qq $base "$@" >"$dir/sim.txt"
sed -En 's/^Inst ([^ ]+) \(([^ ]+) [^[]*\[([^]]+)\].*/\1 \2 \3/p' "$dir/sim.txt" |
	while read -r name version arch; do
		name=${name%%:*}
		echo "$name:$arch=$version"
	done | sort >"$dir/packages.txt"
[ -s "$dir/packages.txt" ] || { echo "mkmirror: apt chose no packages" >&2; exit 1; }
(cd "$dir/repo/pool/main" && xargs -a "$dir/packages.txt" apt-get download -qq -o APT::Sandbox::User=root >/dev/null)
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
# Debian's archive sets Priority and Section by override, not from the .deb: keep them as Debian
# has them, so "required" means the same here as there.
python3 - "$dir/apt/state/lists" "$suite" >"$dir/override" <<'PY'
import glob, sys
lists, suite = sys.argv[1:3]
seen = {}
for f in sorted(glob.glob(f"{lists}/*_dists_{suite}_main_binary-*_Packages")):
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
for arch in $(echo "$archs" | tr ',' ' '); do
	d=$dir/repo/dists/$suite/main/binary-$arch
	mkdir -p "$d"
	(cd "$dir/repo" && apt-ftparchive --arch "$arch" packages pool "$dir/override") >"$d/Packages" 2>/dev/null
	xz -kf "$d/Packages"
	gzip -9nkf "$d/Packages"
done
(cd "$dir/repo/dists/$suite" && apt-ftparchive -o APT::FTPArchive::Release::Suite="$suite" \
	-o APT::FTPArchive::Release::Codename="$suite" \
	-o APT::FTPArchive::Release::Architectures="$(echo "$archs" | tr ',' ' ')" \
	-o APT::FTPArchive::Release::Components=main release .) >"$dir/Release.tmp"
mv "$dir/Release.tmp" "$dir/repo/dists/$suite/Release"
gpg --batch --yes --quiet --digest-algo SHA256 --clearsign -o "$dir/repo/dists/$suite/InRelease" "$dir/repo/dists/$suite/Release"
gpg --batch --yes --quiet --digest-algo SHA256 -abs -o "$dir/repo/dists/$suite/Release.gpg" "$dir/repo/dists/$suite/Release"
echo "$stamp" >"$dir/stamp"
