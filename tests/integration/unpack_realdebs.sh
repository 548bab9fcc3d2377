#!/bin/bash
# Print a directory holding a small real bookworm armhf + armel package set, downloading it once
# with the host's apt sources and a private APT configuration (the host's dpkg architecture list
# and apt state are never touched). Cached in ${MKI_TEST_DEBS:-/var/tmp/mkimage-test-debs-UID}.
# Prints the .deb paths, one a line, in unpack order.
set -eu
C=${MKI_TEST_DEBS:-/var/tmp/mkimage-test-debs-$(id -u)}
SAME="gcc-12-base libgcc-s1 libc6 zlib1g"   # M-A same: one version for both archs
OTHER="base-files:armhf busybox:armhf hello:armel mount:armhf"
mkdir -p "$(dirname "$C")"
exec 9>"$C.lock"   # tests running at once download the set once
flock 9
mkdir -p "$C/apt/lists/partial" "$C/apt/cache/archives/partial" "$C/debs"
cat >"$C/apt/apt.conf" <<A
APT::Architecture "armhf";
APT::Architectures { "armhf"; "armel"; };
Dir::State::Lists "$C/apt/lists";
Dir::State::status "/dev/null";
Dir::Cache "$C/apt/cache";
A
export APT_CONFIG=$C/apt/apt.conf
if [ ! -f "$C/debs/.complete" ]; then
	if ! ls "$C"/apt/lists/*_Packages >/dev/null 2>&1; then
		# A mirror mid-sync fails one suite's index; apt goes on with the others, and so
		# does this set where the release's main is there.
		apt-get -q update >&2 ||
			ls "$C"/apt/lists/*_dists_"$(. /etc/os-release && echo "$VERSION_CODENAME")"_main_binary-armhf_Packages* >/dev/null
	fi
	cd "$C/debs"
	args=$OTHER
	for n in $SAME; do
		v=$(apt-cache show --no-all-versions "$n:armel" | sed -n 's/^Version: //p')
		args="$args $n:armhf=$v $n:armel=$v"
	done
	apt-get -q download $args >&2 2>/dev/null || apt-get -q download $args >&2
	touch .complete
fi
cd "$C/debs"
order="base-files_*_armhf gcc-12-base_*_armhf gcc-12-base_*_armel libgcc-s1_*_armhf
	libgcc-s1_*_armel libc6_*_armhf libc6_*_armel zlib1g_*_armhf zlib1g_*_armel busybox_*_armhf
	hello_*_armel mount_*_armhf"
for g in $order; do
	f=$(ls $g.deb 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "unpack_realdebs: $g.deb missing in $C/debs" >&2; exit 1; }
	echo "$C/debs/$f"
done
