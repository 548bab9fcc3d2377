# The cost of one native exec through mkimage-exec (issue 28): a bootable build's scripts start
# some 28 000 programs, each through the dispatcher. Side by side, N execs each (default 1000,
# REPS rounds, alternating), CPU time (the children's user + sys) and page faults per exec of:
#   host       `realpath /` as the host runs it (its loader from PT_INTERP, ld.so.cache);
#   loader     the same through the host's loader as mkimage-exec runs a twin
#              (`ld.so --inhibit-cache --argv0 realpath /usr/bin/realpath /`): the twin's floor;
#   exec-only  a static program that only execve()s that loader line: the floor of any dispatcher
#              that execs, i.e. the price of the second exec itself;
#   musl, glibc  mkimage-exec built from builder/ with each C library (the Makefile's EXEC_CC),
#              reading a table of 300 native programs;
#   before     with BEFORE=REV (a git revision), mkimage-exec from that revision, built the same.
# The dispatchers are built here with the table's path pointed into a temporary directory.
# Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-1000}
REPS=${REPS:-3}
W=$(mktemp -d /var/tmp/mkimage-bench-dispatch.XXXXXX)
trap 'rm -rf "$W"' EXIT
loader=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
[ -x "$loader" ] || loader=$(ldd /usr/bin/realpath | sed -n 's|.*\(/[^ ]*ld-linux[^ ]*\) .*|\1|p' | head -1)

# mkimage-exec reads "/usr/lib/<triplet>/mkimage-accel/table": a triplet that climbs to $W.
fake=$(realpath --relative-to=/usr/lib "$W")
mkdir -p "$W/mkimage-accel"
python3 - "$W/mkimage-accel/table" "$loader" <<'PY'
import os, sys
st = os.stat("/usr/bin/realpath")
ident = lambda ino: f"{st.st_dev} {ino} {st.st_size} {st.st_mtime_ns // 10**9} {st.st_mtime_ns % 10**9}"
with open(sys.argv[1], "w") as f:
    f.write(f"loader {sys.argv[2]}\n")
    for i in range(299):
        f.write(f"native {ident(10**7 + i)} any /usr/lib/x86_64-linux-gnu/mkimage-accel/{i}\n")
    f.write(f"native {ident(st.st_ino)} any /usr/bin/realpath\n")
    f.write("qemu 40 1 /usr/bin/qemu-arm-static\n")
PY
srcs=("$TOP"/builder/configure/{mkimage-exec,execshim,execprof_run}.c)
flags=(-std=gnu11 -O2 -static -iquote "$TOP/builder" "-DMKI_HOST_MULTIARCH=\"$fake\"")
cc "${flags[@]}" -o "$W/glibc" "${srcs[@]}"
static_cc=cc
if command -v musl-gcc >/dev/null; then
	static_cc=musl-gcc
	musl-gcc "${flags[@]}" -o "$W/musl" "${srcs[@]}"
fi
if [ -n "${BEFORE:-}" ]; then
	mkdir "$W/before-src"
	git -C "$TOP" archive "$BEFORE" builder | tar -x -C "$W/before-src"
	"$static_cc" "${flags[@]/#$TOP\/builder/$W/before-src/builder}" -o "$W/before" \
		"$W"/before-src/builder/configure/{mkimage-exec,execshim,execprof_run}.c
fi
cat >"$W/exec-only.c" <<C
#include <unistd.h>
extern char **environ;
int main(void)
{
	char *a[] = { "$loader", "--inhibit-cache", "--argv0", "realpath", "/usr/bin/realpath", "/", 0 };

	execve(a[0], a, environ);
	return 126;
}
C
"$static_cc" -O2 -static -o "$W/exec-only" "$W/exec-only.c"
cat >"$W/loop.c" <<'C'
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
extern char **environ;
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), st;
	struct rusage ru;
	pid_t p;

	for (int i = 0; i < n; i++) {
		if (posix_spawn(&p, argv[2], NULL, NULL, argv + 2, environ) || waitpid(p, &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("%.3f %.1f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 / n +
			 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3 / n, (double)ru.ru_minflt / n);
	return 0;
}
C
cc -O2 -o "$W/loop" "$W/loop.c"
"$W/glibc" /usr/bin/realpath realpath / | grep -qx / || { echo "52-dispatch: the dispatcher did not run realpath" >&2; exit 1; }

echo "$N execs of 'realpath /' per run, $REPS runs alternating; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
ways="host loader exec-only"
[ ! -x "$W/musl" ] || ways="$ways musl"
ways="$ways glibc"
[ ! -x "$W/before" ] || ways="$ways before"
for _ in $(seq 1 "$REPS"); do
	for w in $ways; do
		case $w in
		host) "$W/loop" "$N" /usr/bin/realpath / ;;
		loader) "$W/loop" "$N" "$loader" --inhibit-cache --argv0 realpath /usr/bin/realpath / ;;
		exec-only) "$W/loop" "$N" "$W/exec-only" ;;
		*) "$W/loop" "$N" "$W/$w" /usr/bin/realpath realpath / ;;
		esac | tail -n 1 >>"$W/$w.ms"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W" $ways <<'PY'
import statistics, sys
w, ways = sys.argv[1], sys.argv[2:]
runs = {k: [line.split() for line in open(f"{w}/{k}.ms")] for k in ways}
cpu = {k: statistics.median(float(r[0]) for r in runs[k]) for k in ways}
flt = {k: statistics.median(float(r[1]) for r in runs[k]) for k in ways}
name = {"host": "plain host exec (ld.so.cache)", "loader": "the loader alone (a twin's floor)",
        "exec-only": "execve() only (any dispatcher's floor)"}
for k in ways:
    extra = ""
    if k not in ("host", "loader"):
        extra = f"  (+{cpu[k] - cpu['loader']:.2f} ms over the loader)"
    label = name.get(k, f"through mkimage-exec, {k}")
    print(f"{label:40} {cpu[k]:6.2f} ms CPU {flt[k]:6.1f} page faults per exec{extra}")
PY
