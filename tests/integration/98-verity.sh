# test-cost: slow (native builds writing disks)
# dm-verity hash trees (issue 26): a disk whose data partition is a file of the tree written raw
# and whose root-verity partition after it holds the data's hash tree. Extracted, the two pass
# `veritysetup verify` with the root hash of NAME.roothash and of the report, and the tree is
# byte for byte what `veritysetup format` writes with the same salt and UUID; one byte flipped in
# the data fails the check; two builds, as root and as an ordinary user, are sha256-identical.
# Each recipe error is refused by --check (exit 2, FILE:LINE) and a fixed hash partition too
# small for its tree fails the build (exit 8) with nothing left at the output path.
. "$(dirname "$0")/lib.sh"

for t in sfdisk veritysetup; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
export SOURCE_DATE_EPOCH=1700000000

# ---- recipe errors: --check, before anything is fetched -------------------------------------
# vcase 'PARTITIONS' 'expected message (ERE)': the root on line 6, each partition given on a
# line of its own from line 7.
vcase() {
	local parts
	parts=$(printf '%s' "$1" | sed 's/}, {/},\n    {/g')
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "amd64";
packages = { install = [ "hello" ]; };
disk = {
  partitions = (
    { name = "root"; type = "root"; contents = "root"; },
    $parts
  );
};
R
	expect_fail 2 "$2" "$MKIMAGE" --check "$T/r.cfg"
}
DATA='{ name = "d"; type = "raw"; contents = "file:/srv/d.img"; }'
vcase "$DATA, { name = \"h\"; type = \"root-verity\"; contents = \"verity:e\"; }" \
	"r.cfg:8: partition 'h' holds the hash tree of 'e', which is not a partition of the disk"
vcase "{ name = \"d\"; type = \"raw\"; contents = \"verity:root\"; }, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }" \
	"r.cfg:7: partition 'd' holds the hash tree of 'root', which is ext4: verity needs a read-only filesystem: format = \"squashfs\""
vcase "$DATA, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }, { name = \"h2\"; type = \"raw\"; contents = \"verity:h\"; }" \
	"r.cfg:9: partition 'h2' holds the hash tree of 'h', which holds a hash tree itself"
vcase "$DATA, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }, { name = \"h2\"; type = \"raw\"; contents = \"verity:d\"; }" \
	"r.cfg:9: partitions 'h' \(line 8\) and 'h2' both hold the hash tree of 'd': one is enough"
vcase "{ name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }, $DATA" \
	"r.cfg:7: partition 'h' holds the hash tree of 'd', which comes after it \(line 8\): place the hash partition after its data partition"
vcase "{ name = \"d\"; type = \"linux\"; contents = \"/srv\"; }, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }" \
	"r.cfg:8: partition 'h' holds the hash tree of 'd', which is ext4: verity needs a read-only filesystem: format = \"squashfs\""
vcase "{ name = \"d\"; type = \"esp\"; contents = \"/boot/efi\"; }, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }" \
	"r.cfg:8: partition 'h' holds the hash tree of 'd', which is vfat: verity needs a read-only filesystem"
vcase "{ name = \"d\"; type = \"raw\"; }, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }" \
	"r.cfg:8: partition 'h' holds the hash tree of 'd', which is empty"
vcase "$DATA, { name = \"h\"; type = \"raw\"; contents = \"verity:d\"; format = \"ext4\"; }" \
	"r.cfg:8: partition 'h' holds a hash tree: it has no filesystem"
vcase "$DATA, { name = \"h\"; type = \"raw\"; contents = \"verity:\"; }" \
	"r.cfg:8: contents = \"verity:NAME\" needs the name of the partition"
# a good one prints back as written, the type resolved for the architecture
cat >"$T/ok.cfg" <<R
name = "t";
architecture = "arm64";
packages = { install = [ "hello" ]; };
disk = { partitions = ( { name = "root"; type = "linux"; contents = "root"; }, $DATA,
  { name = "h"; type = "root-verity"; contents = "verity:d"; } ); };
R
expect_ok "$MKIMAGE" --check "$T/ok.cfg"
grep -q 'contents = "verity:d"' "$T/out" || fail "--check does not print verity:d back"
grep -q 'type = "root-verity"' "$T/out" || fail "--check does not print the root-verity type back"

# ---- builds ---------------------------------------------------------------------------------
. "$(dirname "$0")/lib-native.sh"
d=$(deb_new verity-data 1.0 all)
mkdir -p "$d/srv"
# 3 MiB and 320 bytes, not all alike: a 4 MiB partition (1024 blocks), a tree of 2 levels
python3 -c 'import hashlib, sys
out = sys.stdout.buffer
for i in range(3 * 1024 * 32 + 10):
    out.write(hashlib.sha256(b"verity %d" % i).digest())' >"$d/srv/d.img"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R"
native_recipe "$R/v.cfg" v ', "verity-data"'
cat >>"$R/v.cfg" <<'R'
disk = { bmap = false; partitions = (
  { name = "root"; type = "linux"; contents = "root"; },
  { name = "usr"; type = "root"; contents = "file:/srv/d.img"; },
  { name = "usr-verity"; type = "root-verity"; contents = "verity:usr"; }
); };
R

# field REPORT PARTITION KEY
field() {
	python3 -c 'import json,sys
p = [p for p in json.load(open(sys.argv[1]))["disk"]["partitions"] if p["name"] == sys.argv[2]][0]
print(p.get(sys.argv[3], ""))' "$@"
}
extract() { # DISK REPORT PARTITION OUT
	dd if="$1" of="$4" bs=1M iflag=skip_bytes,count_bytes skip="$(field "$2" "$3" offset)" \
		count="$(field "$2" "$3" size)" status=none
}

check() { # WHO OUTDIR
	local who=$1 out=$2 rh salt uuid
	sfdisk --verify "$out/v.img" >/dev/null 2>&1 || fail "$who: sfdisk --verify"
	sfdisk --json "$out/v.img" | grep -qi '"type": *"2C7357ED-EBD2-46D9-AEC1-23D437EC2BF5"' ||
		fail "$who: no partition of the amd64 root-verity type"
	extract "$out/v.img" "$out/v.report.json" usr "$T/$who.data"
	extract "$out/v.img" "$out/v.report.json" usr-verity "$T/$who.hash"
	[ "$(stat -c %s "$T/$who.data")" = $((4 << 20)) ] || fail "$who: the data partition is not 4 MiB"
	cmp -s -n "$(stat -c %s "$d/srv/d.img")" "$d/srv/d.img" "$T/$who.data" ||
		fail "$who: the data partition does not hold the file"
	[ -s "$out/v.roothash" ] || fail "$who: no v.roothash beside the disk"
	rh=$(cat "$out/v.roothash")
	[[ "$rh" =~ ^[0-9a-f]{64}$ ]] || fail "$who: v.roothash is not 64 hex digits: $rh"
	[ "$(wc -c <"$out/v.roothash")" = 65 ] || fail "$who: v.roothash is not hex and a newline"
	[ "$(field "$out/v.report.json" usr roothash)" = "$rh" ] ||
		fail "$who: the report's roothash is not v.roothash"
	[ "$(field "$out/v.report.json" usr-verity verity_of)" = usr ] ||
		fail "$who: the report's verity_of is not 'usr'"
	veritysetup verify "$T/$who.data" "$T/$who.hash" "$rh" >"$T/vv" 2>&1 ||
		{ cat "$T/vv" >&2; fail "$who: veritysetup verify refuses the disk's tree"; }
	# byte for byte what veritysetup writes with the same salt and UUID
	veritysetup dump "$T/$who.hash" >"$T/dump"
	salt=$(awk '/^Salt:/ { print $2 }' "$T/dump")
	uuid=$(awk '/^UUID:/ { print $2 }' "$T/dump")
	rm -f "$T/theirs"
	veritysetup format --salt="$salt" --uuid="$uuid" --data-block-size=4096 \
		--hash-block-size=4096 "$T/$who.data" "$T/theirs" >"$T/fmt"
	grep -Eq "^Root hash:[[:space:]]+$rh\$" "$T/fmt" || { cat "$T/fmt" >&2; echo "ours: $rh" >&2; fail "$who: veritysetup format gives another root hash"; }
	cmp -s -n "$(stat -c %s "$T/theirs")" "$T/theirs" "$T/$who.hash" ||
		fail "$who: the hash partition differs from veritysetup's tree"
	cmp -s "$T/$who.hash" <(cat "$T/theirs"; head -c $(( (1 << 20) - $(stat -c %s "$T/theirs") )) /dev/zero) ||
		fail "$who: the hash partition is not zero after the tree"
	# one byte flipped in the data: the tree no longer verifies
	cp "$T/$who.data" "$T/flip"
	printf '\x01' | dd of="$T/flip" bs=1 seek=$((2 * 4096 + 17)) conv=notrunc status=none
	cmp -s "$T/flip" "$T/$who.data" && fail "$who: the flip changed nothing"
	veritysetup verify "$T/flip" "$T/$who.hash" "$rh" >/dev/null 2>&1 &&
		fail "$who: veritysetup verify accepts a flipped byte"
	true
}

build() { # WHO OUTDIR [as_user USER]
	local who=$1 out=$2
	shift 2
	TMPDIR=$out/tmp expect_ok "$@" "$MKIMAGE" --cache-dir "$out/cache" -o "$out/v.img" "$R/v.cfg"
	grep -q "dm-verity root hash $(cat "$out/v.roothash" 2>/dev/null) written to '.*/v.roothash'" "$T/err" ||
		fail "$who: the build does not say the root hash"
	check "$who" "$out"
}

mkdir -p "$T/a/tmp" "$T/b/tmp"
(cd "$T/a" && build root "$T/a")
(cd "$T/b" && build root2 "$T/b")
[ "$(sha256sum <"$T/a/v.img")" = "$(sha256sum <"$T/b/v.img")" ] || fail "two builds' disks differ"
cmp -s "$T/a/v.roothash" "$T/b/v.roothash" || fail "two builds' root hashes differ"
ls "$T/a" | grep -q tmp- && fail "a temporary was left beside the disk"

# A fixed hash partition too small for its tree: 130 MiB of data need 1.04 MiB of tree.
cat >"$R/small.cfg" <<R
$(native_recipe /dev/stdout small ', "verity-data"')
disk = { partitions = (
  { name = "root"; type = "linux"; contents = "root"; },
  { name = "usr"; type = "root"; contents = "file:/srv/d.img"; size = "130M"; },
  { name = "usr-verity"; type = "root-verity"; contents = "verity:usr"; size = "1M"; }
); };
R
mkdir -p "$T/e/tmp"
TMPDIR=$T/e/tmp expect_fail 8 "partition 'usr-verity' \(1 MiB\) is too small for the hash tree of 'usr' \(1085440 bytes for its 130 MiB\): raise its size or use \"auto\"" \
	"$MKIMAGE" --cache-dir "$T/a/cache" -o "$T/e/small.img" "$R/small.cfg"
[ -z "$(left_beside "$T/e" | grep -v '^tmp$')" ] || fail "small: left $(ls "$T/e")"

# As an ordinary user: the same bytes.
if test_user mki98user 2>/dev/null; then
	mkdir -p "$T/u/tmp"; chmod -R a+rwX "$T/u"; chmod a+rx "$T" "$R"; chmod a+r "$R"/*.cfg
	(cd "$T/u" && build user "$T/u" as_user mki98user)
	cmp "$T/a/v.img" "$T/u/v.img" || fail "the user's disk differs from root's"
	cmp "$T/a/v.roothash" "$T/u/v.roothash" || fail "the user's root hash differs from root's"
else
	skip_part "no throwaway user (not root)"
fi
