# test-cost: slow (a dozen native builds with real u-boot-menu and systemd-boot-efi, two disks)
# Boot configuration a package's postinst made hostile (issue 38, deliverables 3, 4 and 7): a
# FIFO, a symbolic link to a host file, a directory or a huge file where mkimage reads the entry
# token, /etc/default/u-boot, /etc/kernel/cmdline, os-release, fstab, hosts and hostname. Each
# either builds a valid image with one warning that says what was used instead (and the report's
# "worked_around" lists it), or fails with a clear error: never an error line with exit 0, never
# a hang. A multi-line, quoted U_BOOT_PARAMETERS with ESC bytes is replaced whole: sh sourcing the
# written /etc/default/u-boot reads exactly what extlinux.conf got. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

export SOURCE_DATE_EPOCH=1700000000
for t in python3 sfdisk e2fsck fsck.vfat mtype debugfs; do
	command -v "$t" >/dev/null || skip "$t missing (make deps)"
done

fixture_debs bootcfg amd64 amd64 u-boot-menu systemd-boot-efi perl-base
mkdir -p "$T/repo/pool/main"
ln -sf "$MKI_TEST_DEBS/bootcfg/debs/"*.deb "$T/repo/pool/main/"
d=$(deb_new linux-image-6.1.0-99-test 1.0 amd64)
deb_file "$d" boot/vmlinuz-6.1.0-99-test "not really a kernel"
deb_file "$d" boot/initrd.img-6.1.0-99-test "not really an initrd"
deb_build "$d" "$T/repo/pool/main" >/dev/null

# hostile CASE LOADER SCRIPT [DATA]: package hostile-CASE, configured after LOADER, runs SCRIPT;
# it ships DATA (a file) as /usr/share/hostile/data.
hostile() {
	local d
	d=$(deb_new "hostile-$1" 1.0 amd64 "Depends: $2, linux-image-6.1.0-99-test")
	deb_file "$d" DEBIAN/postinst "$(printf '#!/bin/sh\nset -e\n%s\n' "$3")" 0755
	[ -z "${4:-}" ] || { mkdir -p "$d/usr/share/hostile"; cp "$4" "$d/usr/share/hostile/data"; }
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}
ESC=$(printf '\033')
# The red team's /etc/default/u-boot: a quoted U_BOOT_PARAMETERS over three lines with ESC bytes
# and a backslash, another key continued over two lines, and a second U_BOOT_PARAMETERS (the one
# sh would keep).
printf '%s\n' '## kept' '#U_BOOT_ROOT=""' "U_BOOT_PARAMETERS=\"quiet" "${ESC}[2Jforged \\\\" \
	"more\" # the red team's" "U_BOOT_MENU_LABEL='x'\\" "'y'" "U_BOOT_PARAMETERS='again'" \
	>"$T/u-boot.multi"
hostile token-fifo systemd-boot-efi 'mkdir -p /etc/kernel; rm -f /etc/kernel/entry-token; mkfifo /etc/kernel/entry-token'
hostile token-dir systemd-boot-efi 'mkdir -p /etc/kernel/entry-token/x'
hostile token-link systemd-boot-efi 'mkdir -p /etc/kernel; ln -sf /etc/shadow /etc/kernel/entry-token'
hostile token-huge systemd-boot-efi 'mkdir -p /etc/kernel; head -c 3000000 /dev/zero | tr "\0" a >/etc/kernel/entry-token'
hostile cmdline-fifo systemd-boot-efi 'mkdir -p /etc/kernel; mkfifo /etc/kernel/cmdline'
hostile osrel-fifo u-boot-menu 'rm -f /etc/os-release; mkfifo /etc/os-release'
hostile uboot-fifo u-boot-menu 'rm -f /etc/default/u-boot; mkfifo /etc/default/u-boot'
hostile uboot-link u-boot-menu 'rm -f /etc/default/u-boot; ln -s /etc/shadow /etc/default/u-boot'
hostile uboot-huge u-boot-menu 'head -c 2000000 /dev/zero | tr "\0" "#" >/etc/default/u-boot'
hostile uboot-quote u-boot-menu 'printf "U_BOOT_TIMEOUT=5\nU_BOOT_PARAMETERS=\"ro\nquiet\n" >/etc/default/u-boot'
hostile uboot-multi u-boot-menu 'cp /usr/share/hostile/data /etc/default/u-boot' "$T/u-boot.multi"
hostile fstab-fifo u-boot-menu 'rm -f /etc/fstab; mkfifo /etc/fstab'
hostile hosts-fifo u-boot-menu 'rm -f /etc/hosts; mkfifo /etc/hosts'
hostile hostname-dir u-boot-menu 'rm -f /etc/hostname; mkdir -p /etc/hostname/x'
native_repo

R=$T/r
mkdir -p "$R"
EXT='bootloader = "extlinux"; console = "ttyS0,115200"; cmdline = "ro rootwait";'
SDB='bootloader = "systemd-boot"; cmdline = "ro rootwait quiet";'
EXT_PARTS='{ name = "root"; type = "root"; contents = "root"; }'
SDB_PARTS='{ name = "esp"; type = "esp"; contents = "/boot/efi"; size = "64M"; },
    { name = "root"; type = "root"; contents = "root"; }'
# recipe CASE: $R/CASE.cfg installing hostile-CASE with its loader's disk.
recipe() {
	local loader=u-boot-menu keys=$EXT parts=$EXT_PARTS
	case $1 in token-* | cmdline-*) loader=systemd-boot-efi keys=$SDB parts=$SDB_PARTS ;; esac
	native_recipe "$R/$1.cfg" "$1" ", \"perl-base\", \"$loader\", \"linux-image-6.1.0-99-test\", \"hostile-$1\""
	printf 'hostname = "board";\ndisk = {\n  %s\n  partitions = (\n    %s\n  );\n};\n' \
		"$keys" "$parts" >>"$R/$1.cfg"
}

# configure WHO CASE [as_user USER]: --until configure --keep-staging; the kept tree in $TREE.
configure() {
	local who=$1 c=$2
	shift 2
	recipe "$c"
	rm -rf "$T/keep" && mkdir -p "$T/keep" "$T/out-$who" && chmod 777 "$T/keep" "$T/out-$who"
	TMPDIR=$T/keep expect_ok "$@" timeout 600 "$MKIMAGE" --cache-dir "$CACHE" -o "$T/out-$who/$c.img" \
		--until configure --keep-staging "$R/$c.cfg"
	TREE=$(find "$T/keep" -mindepth 2 -maxdepth 2 -name root -type d | head -1)
	[ -d "$TREE" ] || fail "$who $c: no staging tree kept"
}

# refused WHO CASE CODE PATTERN [as_user USER]: the build fails with CODE and PATTERN, in time.
refused() {
	local who=$1 c=$2 code=$3 pattern=$4
	shift 4
	recipe "$c"
	mkdir -p "$T/out-$who" && chmod 777 "$T/out-$who"
	expect_fail "$code" "$pattern" "$@" timeout 600 "$MKIMAGE" --cache-dir "$CACHE" \
		-o "$T/out-$who/$c.img" --until configure "$R/$c.cfg"
	[ ! -f "$T/out-$who/$c.report.json" ] || grep -q '"status": "failed"' "$T/out-$who/$c.report.json" ||
		fail "$who $c: the report does not say failed"
}

# one_warning WHO WHAT USED [REPORT]: exactly one warning, naming WHAT and USED; REPORT (a whole
# build's: --until writes none) has status ok and lists it in "worked_around".
one_warning() {
	local who=$1 what=$2 used=$3 rep=${4:-}
	[ "$(grep -c '^mkimage: warning:' "$T/err")" = 1 ] ||
		{ cat "$T/err" >&2; fail "$who: not exactly one warning"; }
	grep -Eq "^mkimage: warning: .*$what.*; used $used.* instead$" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who: the warning does not say '$what' and '$used'"; }
	[ -n "$rep" ] || return 0
	python3 - "$rep" "$what" "$used" <<'PY' || fail "$who: the report's worked_around"
import json, re, sys
r = json.load(open(sys.argv[1]))
w = r["worked_around"]
assert r["status"] == "ok" and r["warnings"] == 1 and len(w) == 1, r
assert re.search(sys.argv[2], w[0]["what"]) and re.search(sys.argv[3], w[0]["used_instead"]), w
PY
}

# The red team's case, a whole disk: an entry token a postinst made a FIFO is worked around
# (os-release's ID), the build ends ok with one warning, and the disk is valid.
disk_token_fifo() {
	local who=$1 out=$T/disk-$1 start size
	shift
	recipe token-fifo
	mkdir -p "$out" && chmod 777 "$out"
	expect_ok "$@" timeout 900 "$MKIMAGE" --cache-dir "$CACHE" -o "$out/token-fifo.img" \
		"$R/token-fifo.cfg"
	one_warning "$who" "cannot read '/etc/kernel/entry-token' of the tree: it is a FIFO" \
		"the entry token 'debian' \\(os-release's ID\\)" "$out/token-fifo.report.json"
	sfdisk --json "$out/token-fifo.img" >"$T/pt.json"
	for p in esp root; do
		read -r start size < <(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["partitiontable"]["partitions"]:
    if p.get("name") == sys.argv[2]: print(p["start"], p["size"])' "$T/pt.json" "$p")
		dd if="$out/token-fifo.img" of="$T/$p.img" bs=512 skip="$start" count="$size" \
			status=none conv=sparse
	done
	fsck.vfat -n "$T/esp.img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: fsck.vfat"; }
	e2fsck -fn "$T/root.img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: e2fsck"; }
	MTOOLS_SKIP_CHECK=1 mtype -i "$T/esp.img" ::/loader/entries/debian-6.1.0-99-test.conf \
		>"$T/entry" 2>/dev/null || fail "$who: no BLS entry under the token 'debian'"
	[ "$(debugfs -R 'cat /etc/kernel/entry-token' "$T/root.img" 2>/dev/null)" = debian ] ||
		fail "$who: /etc/kernel/entry-token is not the token used"
}

# The multi-line U_BOOT_PARAMETERS: what sh reads from the written file is what extlinux.conf got.
check_multi() {
	local who=$1 conf=$TREE/boot/extlinux/extlinux.conf root params append
	root=$(cd "$TREE" && sh -c '. ./etc/default/u-boot; printf %s "$U_BOOT_ROOT"')
	params=$(cd "$TREE" && sh -c '. ./etc/default/u-boot; printf %s "$U_BOOT_PARAMETERS"')
	append=$(grep -m1 '^	append ' "$conf" | sed 's/^	append //')
	[ "$append" = "$root $params" ] ||
		fail "$who: sh reads '$root $params' from /etc/default/u-boot, extlinux.conf has '$append'"
	[ "$params" = "console=ttyS0,115200 ro rootwait" ] || fail "$who: U_BOOT_PARAMETERS '$params'"
	! grep -q "$ESC" "$TREE/etc/default/u-boot" || fail "$who: an ESC byte is left"
	grep -qx '## kept' "$TREE/etc/default/u-boot" || fail "$who: the package's comment is gone"
	[ "$(cd "$TREE" && sh -c '. ./etc/default/u-boot; printf %s "$U_BOOT_MENU_LABEL"')" = xy ] ||
		fail "$who: another key's continuation line was not kept"
	[ "$(grep -c U_BOOT_PARAMETERS "$TREE/etc/default/u-boot")" = 1 ] ||
		fail "$who: a second U_BOOT_PARAMETERS is left: $(cat "$TREE/etc/default/u-boot")"
}

run_cases() { # WHO [as_user USER]
	local who=$1
	shift
	configure "$who" uboot-multi "$@"
	check_multi "$who"
	note "$who: a multi-line U_BOOT_PARAMETERS with ESC bytes: replaced whole, sh reads extlinux.conf's"

	configure "$who" cmdline-fifo "$@"
	[ -f "$TREE/etc/kernel/cmdline" ] && ! grep -q '^mkimage: warning' "$T/err" ||
		fail "$who: a FIFO /etc/kernel/cmdline was not replaced whole"
	configure "$who" hosts-fifo "$@"
	one_warning "$who hosts" "cannot read '/etc/hosts' of the tree: it is a FIFO" \
		"Debian's default '/etc/hosts'"
	grep -q '^127.0.1.1	board$' "$TREE/etc/hosts" || fail "$who: hosts"
	configure "$who" fstab-fifo "$@"
	one_warning "$who fstab" "'/etc/fstab' of the tree is a FIFO" "mkimage's own '/etc/fstab'"
	grep -q '^PARTUUID=.*	/	ext4' "$TREE/etc/fstab" || fail "$who: fstab"
	configure "$who" token-link "$@"
	[ "$(cat "$TREE/etc/kernel/entry-token")" = debian ] && [ ! -L "$TREE/etc/kernel/entry-token" ] ||
		fail "$who: a link to a host file as the entry token"
	configure "$who" token-huge "$@"
	one_warning "$who token" "cannot read '/etc/kernel/entry-token' of the tree: .*larger than" \
		"the entry token 'debian'"
	[ "$(cat "$TREE/etc/kernel/entry-token")" = debian ] || fail "$who: a huge entry token"
	note "$who: FIFOs as cmdline, hosts and fstab, a link as the entry token: replaced, one warning each"

	refused "$who" uboot-fifo 8 "cannot read '/etc/default/u-boot' of the tree: it is a FIFO" "$@"
	refused "$who" uboot-link 8 "cannot read '/etc/default/u-boot' of the tree: a symbolic link is in its way" "$@"
	refused "$who" uboot-huge 8 "cannot read '/etc/default/u-boot' of the tree: .*larger than" "$@"
	refused "$who" uboot-quote 8 "/etc/default/u-boot:2: a double quote opened here is never closed" "$@"
	refused "$who" osrel-fifo 8 "cannot read '/etc/os-release' of the tree: it is a FIFO" "$@"
	refused "$who" token-dir 8 "'/etc/kernel/entry-token'.*(directory|Is a directory)" "$@"
	refused "$who" hostname-dir 7 "cannot write '/etc/hostname' into the tree" "$@"
	note "$who: unreadable /etc/default/u-boot, os-release, entry token, hostname: clear errors"

	disk_token_fifo "$who" "$@"
	note "$who: a FIFO entry token: one warning (the token used), report lists it, disk valid"
}

CACHE=$T/cache
run_cases root
if [ "$(id -u)" = 0 ]; then
	test_user mki104user
	chmod 755 "$T"
	chmod -R a+rX "$T/keys" "$R"
	mkdir -p "$T/u" "$T/out-user"
	chown mki104user "$T/u" "$T/out-user"
	CACHE=$T/u/cache
	run_cases user as_user mki104user
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
