# Writing a RAUC update bundle (verity format) of one slot image with mkimage's writer
# (build/tools/rauc-bundle: image/rauc.c alone) against `rauc bundle` on the same content
# directory, with the same keys. The slot image is BENCH_IMAGE (arm-board's root partition, say),
# or an ext4 image of BENCH_TREE (default /usr/lib/gcc: a few hundred MiB of programs and
# libraries, as a root holds; written once by tests/tools/mkfs). Medians of REPS runs (default
# 3), the ratio, the bundles' sizes, the load before and after. Never asserts.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
TREE=${BENCH_TREE:-/usr/lib/gcc}
TOOL=$TOP/build/tools/rauc-bundle
command -v rauc >/dev/null || { echo "rauc missing (make test-deps)"; exit 77; }
[ -x "$TOOL" ] || { echo "$TOOL missing (make tools)"; exit 77; }
W=$(mktemp -d /var/tmp/mkimage-bench-rauc.XXXXXX)
trap 'rm -rf "$W"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$W/in" "$W/k"
if [ -n "${BENCH_IMAGE:-}" ]; then
	cp --sparse=always "$BENCH_IMAGE" "$W/in/rootfs.ext4"
else
	"$TOP/build/tools/mkfs" "$TREE" "$W/in/rootfs.ext4" --sde 1700000000 >/dev/null
fi
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/k/ca.key" -out "$W/k/ca.pem" -days 30 \
	-subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$W/k/s.key" -subj "/CN=bench signer" \
	-out "$W/k/s.csr" 2>/dev/null
openssl x509 -req -in "$W/k/s.csr" -CA "$W/k/ca.pem" -CAkey "$W/k/ca.key" -set_serial 1 -days 30 \
	-out "$W/k/s.pem" 2>/dev/null
mkdir -p "$W/peer"
cp --sparse=always "$W/in/rootfs.ext4" "$W/peer/"
printf '[update]\ncompatible=bench\nversion=1\n\n[bundle]\nformat=verity\n\n[image.rootfs]\nfilename=rootfs.ext4\n' \
	>"$W/peer/manifest.raucm"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in $(seq "$REPS"); do
	rm -f "$W/a.raucb" "$W/b.raucb" "$W/in/manifest.raucm"
	SOURCE_DATE_EPOCH=1700000000 /usr/bin/time -f "%e %U" -a -o "$W/mki" "$TOOL" "$W/in" \
		rootfs.ext4 "$W/a.raucb" "$W/k/s.pem" "$W/k/s.key" "$W/k/ca.pem" bench 1 >/dev/null
	/usr/bin/time -f "%e %U" -a -o "$W/rauc" rauc bundle --cert="$W/k/s.pem" --key="$W/k/s.key" \
		--keyring="$W/k/ca.pem" "$W/peer" "$W/b.raucb" >/dev/null 2>&1
done
a=$(cut -d' ' -f1 "$W/mki" | median); b=$(cut -d' ' -f1 "$W/rauc" | median)
ua=$(cut -d' ' -f2 "$W/mki" | median); ub=$(cut -d' ' -f2 "$W/rauc" | median)
echo "slot image: $(stat -c %s "$W/in/rootfs.ext4") bytes ($(du -B1 "$W/in/rootfs.ext4" | cut -f1) allocated)"
echo "mkimage (zstd): ${a} s wall, ${ua} s user CPU, $(stat -c %s "$W/a.raucb") bytes"
echo "rauc bundle (mksquashfs's default, gzip): ${b} s wall, ${ub} s user CPU, $(stat -c %s "$W/b.raucb") bytes"
echo "time ratio mkimage/rauc: $(echo "scale=2; $a / $b" | bc)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
