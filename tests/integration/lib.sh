# Shared helpers for integration tests. Source it first thing: it makes a temp dir that is removed
# (with any servers started here) when the test exits, and stops the test on the first failure.
#
# Real parts only: .debs are built with dpkg-deb, repositories are indexed with apt-ftparchive and
# signed with a throwaway gpg key, and served over HTTP on 127.0.0.1.

set -eu
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MKIMAGE=${MKIMAGE:-$TOP/mkimage}
TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/mki-$TEST_NAME.XXXXXX")
# mkimage's work directories (TMPDIR, default /var/tmp) in one of the test's own, open to the
# throwaway users' builds as /var/tmp is: tests running at once (run.sh -j) never share one.
TMPDIR=$(mktemp -d "/var/tmp/mki-$TEST_NAME.XXXXXX")
chmod 1777 "$TMPDIR"
export TMPDIR
export XDG_CACHE_HOME=$T/xdg-cache
# A directory of the test's own on tmpfs, for tests that look into an emulated armhf or armel
# build's work directory: mkimage moves such a build off a filesystem whose directory offsets a
# 32-bit guest cannot read (builder/sandbox/workroot.h), which the test's TMPDIR is; with
# TMPDIR=$SHM it stays where the test looks.
SHM=$(mktemp -d "/dev/shm/mki-$TEST_NAME.XXXXXX" 2>/dev/null) || SHM=$(mktemp -d "$TMPDIR/shm.XXXXXX")
chmod 1777 "$SHM"
# No test reads the host's apt sources (for "host" entries, or for native tools' twins when its
# repository lacks the host's architecture: builder/repo/twinsrc.h) unless it names its own root.
export MKIMAGE_APT_ROOT=${MKIMAGE_APT_ROOT:-$T/no-apt}
# An index that does not match its Release is fetched again 3 times (a mirror mid-sync,
# builder/repo/indexes.h), after waits of 10, 20 and 30 s by default: at once in the tests that
# break indexes on purpose (37-index-midsync.sh sets its own).
export MKIMAGE_MIDSYNC_WAIT=${MKIMAGE_MIDSYNC_WAIT:-0}
_PIDS=""

_cleanup() {
	local pid
	for pid in $_PIDS; do kill "$pid" 2>/dev/null || true; done
	for pid in $_PIDS; do wait "$pid" 2>/dev/null || true; done
	[ -n "${KEEP_TMP:-}" ] && { echo "kept $T" >&2; return; }
	chmod -R u+rwX "$T" "$TMPDIR" "$SHM" 2>/dev/null || true
	rm -rf "$T" "$TMPDIR" "$SHM"
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
note() { echo "  $TEST_NAME: $*" >&2; }
# skip REASON: the whole test cannot run here; run.sh counts it as skipped (exit 77), never passed.
skip() { echo "SKIP: $TEST_NAME: $*" >&2; exit 77; }
# skip_part REASON: one part of the test cannot run here; run.sh lists it beside the pass.
skip_part() { echo "SKIP-PART: $TEST_NAME: $*" >&2; }

# sbom_validate FILE: FILE is valid against the official SPDX 2.3 JSON schema (tests/data/spdx)
# and its licence expressions are valid SPDX. Debian's python3, where `make test-deps` installs
# python3-jsonschema and python3-license-expression.
sbom_validate() {
	/usr/bin/python3 "$TOP/tests/integration/spdx_validate.py" \
		"$TOP/tests/data/spdx/spdx-schema-2.3.json" "$1" ||
		fail "the SBOM '$1' is not valid SPDX 2.3"
}

# expect_fail CODE PATTERN CMD...: CMD must exit with CODE and print PATTERN (grep -E) on stderr.
expect_fail() {
	local code=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$code" ] || { cat "$T/err" >&2; fail "'$*' exited $rc, expected $code"; }
	grep -Eq -- "$pattern" "$T/err" || { cat "$T/err" >&2; fail "'$*': stderr lacks /$pattern/"; }
}

# expect_ok CMD...: CMD must succeed; its stdout is left in $T/out, stderr in $T/err.
expect_ok() {
	local rc=0
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "'$*' exited $rc"; }
}

# left_beside DIR: what DIR holds but build reports and logs (NAME.report.json, NAME.log), which
# a build that fails or is interrupted leaves beside its image (mkimage(1), FILES).
left_beside() {
	ls -A "$1" | grep -Ev '\.(report\.json|log)$' || true
}

# --- packages -------------------------------------------------------------------------------

# deb_new NAME VERSION ARCH [FIELD: VALUE]...: a package tree in $T/src/NAME_VERSION_ARCH; prints it.
deb_new() {
	local name=$1 version=$2 arch=$3 d
	shift 3
	d=$T/src/${name}_${version}_$arch
	mkdir -p "$d/DEBIAN"
	{
		echo "Package: $name"
		echo "Version: $version"
		echo "Architecture: $arch"
		echo "Maintainer: mkimage tests <tests@example.org>"
		echo "Priority: optional"
		echo "Section: misc"
		for f in "$@"; do echo "$f"; done
		echo "Description: test package $name"
		echo " Built by the mkimage test suite."
	} >"$d/DEBIAN/control"
	echo "$d"
}

# deb_file TREE PATH CONTENT [MODE]: add a file to a package tree.
deb_file() {
	local d=$1 path=$2 content=$3 mode=${4:-0644}
	mkdir -p "$(dirname "$d/$path")"
	printf '%s' "$content" >"$d/$path"
	chmod "$mode" "$d/$path"
}

# deb_build TREE OUTDIR: build the .deb (root-owned entries, xz) into OUTDIR; prints its path.
deb_build() {
	local d=$1 out=$2 f
	mkdir -p "$out"
	f=$out/$(basename "$d").deb
	dpkg-deb --root-owner-group -Zxz --build "$d" "$f" >/dev/null
	echo "$f"
}

# --- repositories ---------------------------------------------------------------------------

# gpg_key NAME: make a throwaway signing key and use it for repo_sign (sets GNUPGHOME); the
# public keyring is $T/keys/NAME.gpg, also left in KEYRING. Call it directly, not in $(...).
gpg_key() {
	local name=$1
	export GNUPGHOME=$T/gnupg-$name
	mkdir -p "$GNUPGHOME" "$T/keys"
	chmod 700 "$GNUPGHOME"
	gpg --batch --quiet --passphrase '' --quick-gen-key "mkimage test $name <$name@example.org>" \
		rsa2048 sign 1d 2>/dev/null
	gpg --batch --quiet --export >"$T/keys/$name.gpg"
	KEYRING=$T/keys/$name.gpg
}

# repo_index REPO SUITE COMPONENT ARCH...: Packages(.gz,.xz) for each arch from REPO/pool, and Release.
# Debs are sorted into arches by their Architecture field ("all" goes into every arch's index).
repo_index() {
	local repo=$1 suite=$2 comp=$3 arch
	shift 3
	for arch in "$@"; do
		local dir=$repo/dists/$suite/$comp/binary-$arch
		mkdir -p "$dir"
		(cd "$repo" && apt-ftparchive --arch "$arch" packages pool) >"$dir/Packages" 2>/dev/null
		gzip -9nkf "$dir/Packages"
		xz -kf "$dir/Packages"
	done
	(cd "$repo/dists/$suite" && apt-ftparchive \
		-o APT::FTPArchive::Release::Suite="$suite" \
		-o APT::FTPArchive::Release::Codename="$suite" \
		-o APT::FTPArchive::Release::Architectures="$*" \
		-o APT::FTPArchive::Release::Components="$comp" \
		${RELEASE_EXTRA:-} release .) >"$T/Release.tmp"
	mv "$T/Release.tmp" "$repo/dists/$suite/Release"
}

# repo_sign REPO SUITE: InRelease and Release.gpg with the key in $GNUPGHOME.
repo_sign() {
	local d=$1/dists/$2
	rm -f "$d/InRelease" "$d/Release.gpg"
	gpg --batch --yes --quiet --digest-algo SHA256 --clearsign -o "$d/InRelease" "$d/Release"
	gpg --batch --yes --quiet --digest-algo SHA256 -abs -o "$d/Release.gpg" "$d/Release"
}

# serve DIR: serve DIR over HTTP on 127.0.0.1 on a free port; sets SERVER_URL.
serve() {
	local dir=$1 port i
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 -m http.server --bind 127.0.0.1 --directory "$dir" "$port" >"$T/http-$port.log" 2>&1 &
	_PIDS="$_PIDS $!"
	SERVER_URL=http://127.0.0.1:$port
	for i in $(seq 1 100); do
		python3 -c "import urllib.request; urllib.request.urlopen('$SERVER_URL/')" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "HTTP server on port $port did not answer"
}
