# Sourced by tests and benches: the local test mirror of a flagship recipe (recipes/NAME.cfg).
# flagship_mirror NAME builds or reuses it with tests/mkmirror.sh and sets MIRROR to its directory
# and MIRROR_COMPONENTS to its components ("main", or "main non-free-firmware").
# FLAGSHIP_SUITE (bookworm, the default, or trixie) picks the release: the mirror's suite, and
# flagship_recipe NAME's file (recipes/NAME.cfg, or recipes/NAME-trixie.cfg).
# The package lists name what the recipe installs besides Essential + required; the directory is
# named after the set, so a branch still building an older set never rebuilds it. arm-board-ab
# and arm-board-verity share arm-board's, which holds cryptsetup-bin for the verified root and
# RAUC for the updates.
# What the large set adds to the bootable arm-board (60-build.sh SET=large, fixed here so that
# the bench and its mirror agree): 523 packages in all. samba is in since configure runs
# the essential set first (mkimage(7), "The essential set first"): samba-common's postinst runs
# ucf, which calls awk without depending on mawk, and one dpkg --configure -a could reach it
# before mawk's postinst made the awk alternative.
LARGE_EXTRA="python3 perl network-manager openssh-server curl ca-certificates iptables build-essential git
	python3-pip python3-numpy samba cups rsyslog sudo vim avahi-daemon bluez wpasupplicant nginx
	postgresql gstreamer1.0-plugins-good weston php-fpm"
flagship_mirror() {
	local archs pkgs set=$1 comps=main
	case $1 in
	arm-board | arm-board-ab | arm-board-verity)
		set=arm-board-rauc
		archs=armhf,armel pkgs="linux-image-armmp u-boot-menu cryptsetup-bin rauc rauc-service hello:armel libc6:armel libstdc++6:armel zlib1g:armel" ;;
	# The board profiles' recipes (recipes/orangepi-pc.cfg, tests 130-139): arm-board's system
	# and Debian's U-Boot builds for the boards of builder/recipe/board.c.
	orangepi-pc | boards)
		set=boards
		archs=armhf,armel pkgs="linux-image-armmp u-boot-menu u-boot-sunxi u-boot-omap u-boot-rockchip hello:armel libc6:armel libstdc++6:armel zlib1g:armel" ;;
	# The Raspberry Pi's (recipes/raspberry-pi.cfg, test 132): its firmware is in
	# non-free-firmware.
	raspberry-pi)
		comps="main non-free-firmware"
		archs=arm64,armhf pkgs="linux-image-arm64 raspi-firmware hello:armhf libc6:armhf libstdc++6:armhf zlib1g:armhf" ;;
	# The bench's large appliance (60-build.sh SET=large): arm-board plus an interpreter stack
	# and a network manager, some 500-700 packages.
	arm-board-large)
		archs=armhf,armel pkgs="linux-image-armmp u-boot-menu hello:armel libc6:armel libstdc++6:armel zlib1g:armel $LARGE_EXTRA" ;;
	pc-legacy) archs=amd64,i386 pkgs="linux-image-amd64 systemd-boot-efi hello:i386 libc6:i386 libstdc++6:i386 zlib1g:i386" ;;
	# pc-legacy with an update group (tests 123-125): RAUC besides.
	pc-legacy-ab)
		set=pc-legacy-rauc
		archs=amd64,i386 pkgs="linux-image-amd64 systemd-boot-efi rauc rauc-service hello:i386 libc6:i386 libstdc++6:i386 zlib1g:i386" ;;
	arm64-armhf) archs=arm64,armhf pkgs="linux-image-arm64 u-boot-menu hello:armhf libc6:armhf libstdc++6:armhf zlib1g:armhf" ;;
	# A release architecture since trixie only (FLAGSHIP_SUITE=trixie); no auxiliary one (the
	# recipe says why).
	riscv64)
		[ "$FLAGSHIP_SUITE" = trixie ] || { echo "flagship_mirror: riscv64 is trixie's (FLAGSHIP_SUITE)" >&2; return 2; }
		archs=riscv64 pkgs="linux-image-riscv64 u-boot-menu hello" ;;
	*) echo "flagship_mirror: no recipe '$1'" >&2; return 2 ;;
	esac
	MIRROR=${MKIMAGE_TEST_MIRRORS:-/var/tmp/mkimage-mirror}/$set-disk MIRROR_COMPONENTS=$comps
	[ "$FLAGSHIP_SUITE" = bookworm ] || MIRROR=$MIRROR-$FLAGSHIP_SUITE
	# TWINS=0 (tests/mkmirror.sh): a mirror of the recipe's architectures only, as a company keeps
	[ "${TWINS:-1}" = 1 ] || MIRROR=$MIRROR-notwins
	# shellcheck disable=SC2086
	SUITE=$FLAGSHIP_SUITE COMPONENTS=$comps "$TOP/tests/mkmirror.sh" "$MIRROR" "$archs" systemd-sysv busybox $pkgs
	# Where the archive lacked a newest file, the mirror holds an older version: say which.
	[ ! -s "$MIRROR/fallbacks.txt" ] || sed 's/^/flagship: /' "$MIRROR/fallbacks.txt" >&2
}

FLAGSHIP_SUITE=${FLAGSHIP_SUITE:-bookworm}
case $FLAGSHIP_SUITE in bookworm | trixie) ;; *)
	echo "flagship: FLAGSHIP_SUITE '$FLAGSHIP_SUITE' is neither bookworm nor trixie" >&2; return 2 ;;
esac

# flagship_recipe NAME: the recipe file of flagship NAME for FLAGSHIP_SUITE: recipes/NAME.cfg on
# bookworm, recipes/NAME-trixie.cfg on trixie where there is one (riscv64.cfg is trixie's alone).
flagship_recipe() {
	local f=$TOP/recipes/$1-$FLAGSHIP_SUITE.cfg
	[ "$FLAGSHIP_SUITE" != bookworm ] && [ -f "$f" ] || f=$TOP/recipes/$1.cfg
	echo "$f"
}

# flagship_lean NAME DIR: recipes/NAME.cfg without what makes it boot (its kernel, systemd and
# boot loader packages, the export of boot files and the disk) as DIR/recipes/NAME.cfg, beside copies of recipes/overlay and
# hooks/, so its relative paths hold. For tests of what booting does not change (locks, the
# build's reproducibility across users and caches, native tools, path filters): generating the
# initramfs under QEMU adds minutes to every build, and the boot tests (60, 62, 63) cover the
# whole recipe.
flagship_lean() {
	mkdir -p "$2/recipes" "$2/hooks"
	cp "$TOP"/hooks/*.sh "$2/hooks/"
	cp -a "$TOP/recipes/overlay" "$2/recipes/"
	grep -Ev '^ *("(linux-image-[a-z0-9]+|systemd-sysv|u-boot-menu|systemd-boot-efi)",|export_boot = true;)' \
		"$(flagship_recipe "$1")" | sed '/^disk = {/,/^};/d' >"$2/recipes/$1.cfg"
}

# flagship_serve NAME: flagship_mirror NAME, served on a free loopback port (benches). Sets SRC
# (a --source argument for the mirror) and SERVER_PID, which the caller kills when done.
flagship_serve() {
	local port
	flagship_mirror "$1"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 -m http.server --bind 127.0.0.1 --directory "$MIRROR/repo" "$port" >/dev/null 2>&1 &
	SERVER_PID=$!
	sleep 0.5
	SRC="http://127.0.0.1:$port $FLAGSHIP_SUITE main signed-by=$MIRROR/key.gpg"
}

# sdk_mirrors: the two mirrors of the cross-building SDK's tests and bench (140, 141, bench
# 84-sdk), built or reused with tests/mkmirror.sh: SDK_MIRROR_IMG, the bootable arm-board's with
# libssl3 for both architectures, and SDK_MIRROR_HOST, amd64's with the cross toolchains and the
# armhf and armel -dev packages (one apt choice cannot hold both Essential sets).
sdk_mirrors() {
	local dir=${MKIMAGE_TEST_MIRRORS:-/var/tmp/mkimage-mirror}
	SDK_MIRROR_IMG=$dir/sdk-image-boot SDK_MIRROR_HOST=$dir/sdk-host
	"$TOP/tests/mkmirror.sh" "$SDK_MIRROR_IMG" armhf,armel systemd-sysv busybox linux-image-armmp \
		u-boot-menu hello:armel libc6:armel libstdc++6:armel zlib1g:armel libssl3 libssl3:armel
	"$TOP/tests/mkmirror.sh" "$SDK_MIRROR_HOST" amd64,armhf,armel crossbuild-essential-armhf \
		crossbuild-essential-armel pkgconf zlib1g-dev:armhf zlib1g-dev:armel libssl-dev:armhf \
		libssl-dev:armel libc6-dev:armhf libc6-dev:armel
}

# sdk_recipe DIR [boot]: flagship_lean arm-board DIR (with "boot", the whole recipe: its kernel
# and disk), its outputs left to -o, with libssl3 for armhf and armel and an sdk group naming
# zlib1g-dev, libssl-dev and libc6-dev (what sdk_mirrors holds).
sdk_recipe() {
	flagship_lean arm-board "$1"
	[ "${2:-}" != boot ] || cp "$(flagship_recipe arm-board)" "$1/recipes/arm-board.cfg"
	sed -i -e 's/^  output = .*//' \
		-e 's/"zlib1g:armel"/"zlib1g:armel", "libssl3", "libssl3:armel"/' "$1/recipes/arm-board.cfg"
	cat >>"$1/recipes/arm-board.cfg" <<'CFG'
sdk = {
  packages = [ "zlib1g-dev", "libssl-dev", "libc6-dev" ];
  image_libraries = false;
};
CFG
}
