# Build time against the number of packages (issue 43): sets of SIZES packages (default "70 100
# 200 400 700"; 70 is the smallest set a Debian system has, the Essential closure with hello),
# armhf, from one local signed mirror of real bookworm packages (tests/mkmirror.sh: the closure
# of GROWTH_SEEDS, which carries the amd64 twins as Debian's archive does). The set for size N is
# base = "essential" plus the shortest prefix of GROWTH_SEEDS whose plan has at least N packages
# (mkimage --until resolve). Each set is built by mkimage (median of REPS, default 3; warm download
# cache, no layer reuse) and by the peer, mmdebstrap --variant=essential with the same packages and
# path filters followed by `mke2fs -d` (PEER_REPS runs, default 1; PEER_SIZES, default SIZES,
# names the sizes the peer builds: at 700 packages one peer run takes about an hour here).
# Prints a table (packages each side, seconds, ms per package, ratio) and, where gnuplot is
# installed, draws it as PLOT (default tests/bench/growth.png). The load is printed at every
# build: the ratio is the side-by-side one, taken from the same run.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SIZES=${SIZES:-70 100 200 400 700}
PEER_SIZES=${PEER_SIZES:-$SIZES}
REPS=${REPS:-3}
PEER_REPS=${PEER_REPS:-1}
PLOT=${PLOT:-$TOP/tests/bench/growth.png}
# Ordered from small programs to large stacks, so that the prefixes grow in even steps.
GROWTH_SEEDS=${GROWTH_SEEDS:-hello sudo rsync curl ca-certificates openssh-server iptables rsyslog
	vim git python3 perl zsh tmux htop strace gdb nginx postfix redis-server avahi-daemon bluez
	wpasupplicant network-manager python3-yaml python3-requests python3-pip python3-numpy
	build-essential samba cups bind9 squid apache2 php-fpm postgresql mariadb-server emacs-nox ruby
	libmoose-perl python3-django gstreamer1.0-plugins-good weston ffmpeg ruby-rails}
MIRROR=${MKIMAGE_TEST_MIRRORS:-/var/tmp/mkimage-mirror}/growth-disk
# shellcheck disable=SC2086
"$TOP/tests/mkmirror.sh" "$MIRROR" armhf $GROWTH_SEEDS
W=$(mktemp -d /var/tmp/mkimage-bench-growth.XXXXXX)
. "$TOP/tests/bench/lib-peer.sh"
peer_serve "$MIRROR"
SRC="$URL bookworm main signed-by=$MIRROR/key.gpg"
export SOURCE_DATE_EPOCH=1700000000

recipe() { # recipe FILE SEED...: the set's recipe
	local list
	list=$(printf '"%s", ' "${@:2}")
	cat >"$1" <<CFG
name = "growth";
architecture = "armhf";
suite = "bookworm";
merged_usr = true;
packages = {
  base = "essential";
  install = [ ${list%, } ];
  recommends = false;
  minimize = true;
};
image = { format = "ext4"; };
CFG
}

planned() { # planned SEED...: how many packages mkimage's plan for those seeds has
	recipe "$W/count.cfg" "$@"
	"$TOP/mkimage" --cache-dir "$W/cache" --source "$SRC" --until resolve -o "$W/count.ext4" \
		"$W/count.cfg" 2>&1 | sed -n 's/.*resolved \([0-9]*\) packages.*/\1/p'
}

# The seeds of each size: the shortest prefix reaching it.
read -r -a all <<<"$(echo $GROWTH_SEEDS)"
k=1
for n in $SIZES; do
	while c=$(planned "${all[@]:0:$k}") && [ "${c:-0}" -lt "$n" ] && [ "$k" -lt "${#all[@]}" ]; do
		k=$((k + 1))
	done
	[ "${c:-0}" -ge "$n" ] || { echo "64-growth: GROWTH_SEEDS reach only $c packages, not $n" >&2; exit 1; }
	echo "${all[*]:0:$k}" >"$W/seeds.$n"
	echo "size $n: $c packages, seeds: ${all[*]:0:$k}"
done

peer() { # peer SIZE: mmdebstrap + mke2fs -d; prints the peer's package count
	local h steps=()
	for h in /usr/share/doc/'*' /usr/share/man/'*' /usr/share/info/'*' \
		/usr/share/lintian/overrides/'*' /usr/share/locale/'*'; do
		steps+=("--dpkgopt=path-exclude=$h")
	done
	steps+=(--dpkgopt=path-include=/usr/share/doc/'*'/copyright
		--dpkgopt=path-include=/usr/share/locale/locale.alias)
	rm -rf "$W/tree" "$W/peer.ext4"
	mmdebstrap --quiet --mode=root --variant=essential --architectures=armhf \
		--include="$(tr ' ' ',' <"$W/seeds.$1")" --keyring="$MIRROR/key.gpg" "${steps[@]}" \
		bookworm "$W/tree" "deb [signed-by=$MIRROR/key.gpg] $URL bookworm main" >"$W/peer.log" 2>&1 &&
		size=$(du -sm "$W/tree" | cut -f1) &&
		mke2fs -q -t ext4 -d "$W/tree" "$W/peer.ext4" "$((size * 13 / 10 + 64))M" >/dev/null &&
		grep -c '^Package: ' "$W/tree/var/lib/dpkg/status"
}

timed() { # timed NAME SIZE CMD...: appends "size seconds packages load" to $W/NAME.times
	local name=$1 n=$2 t0 t1 pkgs load
	shift 2
	load=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(date +%s.%N)
	pkgs=$("$@") || { echo "64-growth: $name at $n failed" >&2; tail -20 "$W/$name.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$n $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") $pkgs $load" | tee -a "$W/$name.times"
}

ours() { # ours SIZE: prints the plan's package count
	# shellcheck disable=SC2046
	recipe "$W/growth.cfg" $(cat "$W/seeds.$1")
	"$TOP/mkimage" -q --no-layer-cache --cache-dir "$W/cache" --source "$SRC" \
		-o "$W/ours.ext4" "$W/growth.cfg" >"$W/ours.log" 2>&1 &&
		python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['packages']['total'])" \
			"$W/ours.report.json"
}

for n in $SIZES; do
	# shellcheck disable=SC2046
	recipe "$W/growth.cfg" $(cat "$W/seeds.$n")
	"$TOP/mkimage" -q --cache-dir "$W/cache" --source "$SRC" --until fetch -o "$W/ours.ext4" \
		"$W/growth.cfg" >/dev/null 2>&1 # a warm download cache
	for i in $(seq 1 "$REPS"); do
		echo -n "mkimage, $n, run $i: "
		timed ours "$n" ours "$n"
		case " $PEER_SIZES " in *" $n "*) [ "$i" -gt "$PEER_REPS" ] || {
			echo -n "mmdebstrap + mke2fs -d, $n, run $i: "
			timed peer "$n" peer "$n"
		} ;; esac
	done
done

python3 - "$W" >"$W/table" <<'PY'
import os, statistics, sys
w = sys.argv[1]
def rows(name):
    out = {}
    if os.path.exists(f"{w}/{name}.times"):
        for l in open(f"{w}/{name}.times"):
            n, s, p, load = l.split()
            out.setdefault(int(n), []).append((float(s), int(p), load))
    return out
ours, peer = rows("ours"), rows("peer")
print("| size | mkimage: packages, median s, ms/pkg | peer: packages, s, ms/pkg | ratio | loads |")
print("|---|---|---|---|---|")
with open(f"{w}/plot.dat", "w") as dat:
    for n in sorted(ours):
        s = statistics.median(r[0] for r in ours[n]); p = ours[n][0][1]
        loads = [r[2] for r in ours[n]]
        line = f"| {n} | {p}, {s:.1f} s, {s / p * 1000:.0f} ms |"
        if n in peer:
            ps = statistics.median(r[0] for r in peer[n]); pp = peer[n][0][1]
            loads += [r[2] for r in peer[n]]
            line += f" {pp}, {ps:.1f} s, {ps / pp * 1000:.0f} ms | {ps / s:.1f}x |"
            dat.write(f"{p} {s:.2f} {s / p * 1000:.1f} {pp} {ps:.2f} {ps / pp * 1000:.1f}\n")
        else:
            line += " - | - |"
            dat.write(f"{p} {s:.2f} {s / p * 1000:.1f} ? ? ?\n")
        print(line + f" {' '.join(loads)} |")
PY
cat "$W/table"
if command -v gnuplot >/dev/null; then
	gnuplot <<GP
set terminal png size 900,420 font ",10"
set output "$PLOT"
set datafile missing "?"
set multiplot layout 1,2 title "bookworm armhf, warm download cache, no layer reuse"
set xlabel "packages"; set ylabel "build time, s"; set key left top; set grid
plot "$W/plot.dat" using 4:5 with linespoints title "mmdebstrap + mke2fs -d", \
     "$W/plot.dat" using 1:2 with linespoints title "mkimage"
set ylabel "ms per package"; set logscale y
plot "$W/plot.dat" using 4:6 with linespoints title "mmdebstrap + mke2fs -d", \
     "$W/plot.dat" using 1:3 with linespoints title "mkimage"
unset multiplot
GP
	echo "plot: $PLOT"
fi
