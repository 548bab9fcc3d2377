# Files a recipe names must be regular files, read with a bound: a keyring that is /dev/zero, a
# hook script or local .deb that is a FIFO, a directory as keyring, an @include of a FIFO, the
# recipe itself a FIFO - each is a FILE:LINE error with exit 2 at once, even with --check, where
# they used to hang the build (issue 13, R3). SIGTERM while a recipe input is read ends the build.
. "$(dirname "$0")/lib.sh"

mkfifo "$T/fifo"
mkdir -p "$T/hooks" "$T/adir"
# check_err PATTERN: `mkimage --check` on $T/r.cfg exits 2 with PATTERN, within seconds.
check_err() { expect_fail 2 "$1" timeout 20 "$MKIMAGE" --check "$T/r.cfg"; }
base='name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };'

printf '%s\nsources = ( { uri = "http://127.0.0.1:1/d"; keyring = "/dev/zero"; } );\n' "$base" >"$T/r.cfg"
check_err "r.cfg:4: keyring '/dev/zero' is a character device, not a regular file"

printf '%s\nsources = ( { uri = "http://127.0.0.1:1/d"; keyring = "adir"; } );\n' "$base" >"$T/r.cfg"
check_err "r.cfg:4: keyring 'adir' is a directory, not a regular file"

printf '%s\nhooks = ( { name = "h"; script = "fifo"; where = "inside"; } );\n' "$base" >"$T/r.cfg"
check_err "r.cfg:4: hook script 'fifo' is a FIFO, not a regular file|r.cfg:4: .*'fifo' is a FIFO, not a regular file"

printf 'name = "t";\narchitecture = "armhf";\npackages = { local = [ "fifo" ]; };\n' >"$T/r.cfg"
check_err "r.cfg:3: .*'fifo' is a FIFO, not a regular file"

printf '%s\n@include "fifo"\n' "$base" >"$T/r.cfg"
check_err "r.cfg:4: @include 'fifo' is a FIFO, not a regular file"

# An include of itself never ends either: refused at the depth limit.
printf '%s\n@include "r.cfg"\n' "$base" >"$T/r.cfg"
check_err "@include 'r.cfg' nests more than 8 deep"

# A regular include works, relative to the recipe's directory wherever mkimage runs.
printf 'packages = { install = [ "hello" ]; };\n' >"$T/pk.cfg"
printf 'name = "t";\narchitecture = "armhf";\n@include "pk.cfg"\n' >"$T/r.cfg"
(cd / && expect_ok timeout 20 "$MKIMAGE" --check "$T/r.cfg")
grep -q '"hello"' "$T/out" || fail "the included packages are not in the normalized recipe"

expect_fail 2 "recipe '$T/fifo' is a FIFO, not a regular file" timeout 20 "$MKIMAGE" --check "$T/fifo"
expect_fail 2 "recipe '/dev/zero' is a character device" timeout 20 "$MKIMAGE" --check /dev/zero

# SIGTERM while hashing a large recipe input (a 20 GiB sparse local .deb: about a minute to read)
# ends the build promptly with 130 - the hash loop honours it.
truncate -s 20G "$T/big.deb"
printf 'name = "t";\narchitecture = "armhf";\npackages = { local = [ "big.deb" ]; };\n' >"$T/r.cfg"
"$MKIMAGE" --check "$T/r.cfg" >"$T/out" 2>"$T/err" &
pid=$!
# Signal it once it is reading the file (not on a clock: a loaded machine starts it slowly).
for _ in $(seq 1 200); do
	ls -l /proc/$pid/fd 2>/dev/null | grep -q 'big\.deb$' && break
	sleep 0.05
done
kill -TERM $pid
rc=0
timeout 10 tail --pid=$pid -f /dev/null || fail "mkimage did not end within 10 s of SIGTERM"
wait $pid || rc=$?
[ "$rc" = 130 ] || fail "SIGTERM during hashing: exit $rc, expected 130"
grep -q "interrupted by signal 15" "$T/err" || fail "the interruption is not said: $(cat "$T/err")"
