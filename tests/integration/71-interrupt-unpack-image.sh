# SIGINT and SIGTERM while a package is being unpacked and while the image is being written.
# No timing: the test polls until the stage has visibly started (the first unpacked file, the
# image's temp file), stops the process (SIGSTOP), checks that the stage is still running, sends
# the signal and lets it continue. It must exit 130 with "interrupted", leave no work dir, no
# temp file and no image, and the next run must work.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

MKFS=$TOP/build/tools/mkfs
# A package of 20 000 small files: unpacking it takes long enough to be caught in the middle.
d=$(deb_new big-test 1.0 armhf)
python3 - "$d" <<'P'
import os, sys
for i in range(20):
    top = os.path.join(sys.argv[1], "usr/share/big-test/d%02d" % i)
    os.makedirs(top)
    for j in range(1000):
        with open(os.path.join(top, "f%04d" % j), "w") as f:
            f.write("file %d %d\n" % (i, j))
P
deb_build "$d" "$T/repo/pool/main" >/dev/null
make_repo armhf
cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; } );
packages = { install = [ "big-test" ]; };
R
mkdir -p "$SHM"

# caught PID FILE-GLOB DONE-PATTERN: poll until FILE-GLOB exists, stop PID there, and check that
# the stage has not finished (DONE-PATTERN not yet in $T/err).
caught() {
	local pid=$1 glob=$2 done=$3 i
	for i in $(seq 1 1200); do
		# shellcheck disable=SC2086
		compgen -G "$glob" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || { cat "$T/err" >&2; fail "ended before '$glob' appeared"; }
		sleep 0.05
	done
	kill -STOP "$pid"
	# shellcheck disable=SC2086
	compgen -G "$glob" >/dev/null || fail "'$glob' never appeared"
	[ -z "$done" ] || ! grep -Eq -- "$done" "$T/err" || fail "the stage finished before it could be interrupted"
}

# finish PID SIGNAL WHAT: deliver SIGNAL to the stopped PID, let it run, expect exit 130.
finish() {
	local pid=$1 sig=$2 what=$3 rc=0 i
	kill -"$sig" "$pid"
	kill -CONT "$pid"
	for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; fail "$sig during $what: still running after 30 s"; }
	wait "$pid" || rc=$?
	[ "$rc" = 130 ] || { cat "$T/err" >&2; fail "$sig during $what: exit $rc, expected 130"; }
	grep -q "interrupted" "$T/err" || { cat "$T/err" >&2; fail "$sig during $what: no message"; }
}

for sig in INT TERM; do
	# --- unpack ---
	TMPDIR=$SHM "$MKIMAGE" --until unpack --cache-dir "$T/cache" "$T/r.cfg" >/dev/null \
		2>"$T/err" & pid=$!
	caught $pid "$SHM/*/root/usr/share/big-test/d00/f0000" "unpacked [0-9]+ packages"
	finish $pid "$sig" unpack
	[ -z "$(ls -A "$SHM")" ] || fail "$sig during unpack: work dir left: $(ls -A "$SHM")"
	no_temp_files "$T/cache"

	# --- image write (the image writer alone, on the tree of a kept staging dir) ---
	if [ ! -d "$T/keep" ]; then
		TMPDIR=$SHM expect_ok "$MKIMAGE" --until unpack --keep-staging --cache-dir "$T/cache" \
			"$T/r.cfg"
		mv "$SHM"/* "$T/keep"
		# Bulk data so that writing the image takes a while.
		head -c 64M /dev/urandom >"$T/keep/root/usr/share/big-test/blob"
	fi
	mkdir -p "$T/img"
	"$MKFS" "$T/keep/root" "$T/img/out.ext4" >/dev/null 2>"$T/err" & pid=$!
	caught $pid "$T/img/out.ext4.tmp-*" ""
	finish $pid "$sig" "image write"
	[ -z "$(ls -A "$T/img")" ] || fail "$sig during image write: left $(ls -A "$T/img")"
done
expect_ok "$MKFS" "$T/keep/root" "$T/img/out.ext4"
[ "$(ls "$T/img")" = out.ext4 ] || fail "image not written: $(ls "$T/img")"
e2fsck -fn "$T/img/out.ext4" >/dev/null 2>&1 || fail "the image after the interrupted runs is not clean"
TMPDIR=$SHM expect_ok "$MKIMAGE" --until unpack --cache-dir "$T/cache" "$T/r.cfg"
[ -z "$(ls -A "$SHM")" ] || fail "work dir left after a good build"
