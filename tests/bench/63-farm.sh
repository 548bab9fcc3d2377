# A farm's machine (issue 28, case f): four different flagship builds (arm-board, pc-legacy,
# arm64-armhf, arm-board-verity; kernels, initramfs and disks included) one after another, then
# all four started at once, each from its local signed mirror with a warm download cache of its
# own and no layer reuse. Prints the serial and the parallel wall time and their ratio (the goal on
# a 2-core machine: at most 0.6), whether every build succeeded both ways with the same bytes, and
# the peak RSS of each build (/usr/bin/time) and their sum (what the four could hold at once).
# First it measures whether this machine runs processes on both cores at once at all: a loop of
# 2000 execs of /bin/true and a loop without execs, each alone and then two at once (a bootable
# build is some 14 000 short processes and keeps about one core busy). Runs as root or as a user;
# never asserts on time. RECIPES picks others.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RECIPES=${RECIPES:-arm-board pc-legacy arm64-armhf arm-board-verity}
W=$(mktemp -d /var/tmp/mkimage-bench-farm.XXXXXX)
. "$TOP/tests/flagship.sh"
servers=()
trap 'kill "${servers[@]}" 2>/dev/null; rm -rf "$W"' EXIT
declare -A src
for r in $RECIPES; do
	flagship_serve "$r" >/dev/null
	servers+=("$SERVER_PID")
	src[$r]=$SRC
done
export SOURCE_DATE_EPOCH=1700000000

build() { # build RECIPE WAY: one build into $W/WAY/RECIPE.img, "wall maxrss_kb user sys" in its .time
	local r=$1 way=$2
	mkdir -p "$W/$way"
	/usr/bin/time -f "%e %M %U %S" -o "$W/$way/$r.time" "$TOP/mkimage" -q --no-layer-cache \
		--cache-dir "$W/cache-$r" --source "${src[$r]}" --output "$W/$way/$r.img" \
		"$TOP/recipes/$r.cfg" >"$W/$way/$r.log" 2>&1
}
now() { date +%s.%N; }

for r in $RECIPES; do # warm download caches: the measured builds fetch nothing
	"$TOP/mkimage" -q --cache-dir "$W/cache-$r" --source "${src[$r]}" --until fetch \
		--output "$W/warm.img" "$TOP/recipes/$r.cfg"
done

# scaling LOOP: "alone" and "two at once" wall seconds of `bash -c LOOP`, and their ratio.
scaling() {
	local t0 one two a b
	t0=$(now)
	bash -c "$1"
	one=$(python3 -c "print($(now) - $t0)")
	t0=$(now)
	bash -c "$1" &
	a=$!
	bash -c "$1" &
	b=$!
	wait "$a" "$b"
	two=$(python3 -c "print($(now) - $t0)")
	python3 -c "print(f'{$one:.2f} {$two:.2f} {$two / $one:.2f}')"
}
read -r e1 e2 exec_scaling < <(scaling 'for i in $(seq 2000); do /bin/true; done')
read -r c1 c2 cpu_scaling < <(scaling 'x=0; for i in $(seq 400000); do x=$((x + 1)); done')
echo "this machine, two at once against one alone (1.00: both cores work; 2.00: one at a time):"
echo "  2000 execs of /bin/true: $e1 s alone, $e2 s two at once: ${exec_scaling}x"
echo "  a shell loop without execs: $c1 s alone, $c2 s two at once: ${cpu_scaling}x"

echo "serial: $RECIPES (load at start: $(cut -d' ' -f1-3 /proc/loadavg))"
t0=$(now)
ok=1
for r in $RECIPES; do
	build "$r" serial || { echo "farm: $r failed serially:"; tail -5 "$W/serial/$r.log"; ok=0; }
done
serial=$(python3 -c "print(f'{$(now) - $t0:.1f}')")

echo "parallel: all at once (load at start: $(cut -d' ' -f1-3 /proc/loadavg))"
t0=$(now)
pids=()
for r in $RECIPES; do
	build "$r" parallel &
	pids+=($!)
done
i=0
for r in $RECIPES; do
	wait "${pids[$i]}" || { echo "farm: $r failed in parallel:"; tail -5 "$W/parallel/$r.log"; ok=0; }
	i=$((i + 1))
done
parallel=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

same=1 rss_sum=0
printf '%-18s %10s %16s %12s %14s  %s\n' recipe "serial s" "its CPU s (cores)" "parallel s" \
	"peak RSS MiB" "same bytes"
for r in $RECIPES; do
	read -r sw _ su ss <"$W/serial/$r.time" || sw=- su=0 ss=0
	read -r pw prss _ <"$W/parallel/$r.time" || pw=- prss=0
	if cmp -s "$W/serial/$r.img" "$W/parallel/$r.img"; then s=yes; else s=NO same=0; fi
	rss_sum=$((rss_sum + prss))
	printf '%-18s %10s %16s %12s %14s  %s\n' "$r" "$sw" \
		"$(python3 -c "print(f'{$su + $ss:.1f} ({($su + $ss) / $sw:.2f})')" 2>/dev/null || echo -)" \
		"$pw" "$((prss / 1024))" "$s"
done
echo "wall: serial $serial s, all at once $parallel s, ratio $(python3 -c "print(f'{$parallel / $serial:.2f}')") (goal: at most 0.6)"
echo "peak RSS of the four at once: at most $((rss_sum / 1024)) MiB (the sum of each build's peak)"
echo "RESULT f serial=$serial parallel=$parallel ratio=$(python3 -c "print(f'{$parallel / $serial:.2f}')") all_ok=$ok identical=$same rss_sum_mib=$((rss_sum / 1024)) exec_scaling=$exec_scaling cpu_scaling=$cpu_scaling"
[ "$ok" = 1 ] && [ "$same" = 1 ]
