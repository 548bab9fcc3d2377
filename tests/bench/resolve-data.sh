#!/bin/bash
# Real bookworm indexes for a primary + auxiliary arch pair (default armhf armel), fetched
# through the host's own apt sources (never a host name written here) into a reusable directory;
# prints that directory. Used by the real-data resolver tests (24, 29) and the resolver
# benchmarks (20, 21).
#
#   resolve-data.sh [PRIMARY AUX]
#   DIR/apt.conf     an apt configuration: APT::Architecture PRIMARY, Architectures PRIMARY AUX,
#                    empty dpkg status, the host's sources
#   DIR/lists/       the Packages files apt downloaded (and verified with the host's keyrings)
# Reuses DIR when its lists are younger than a day. DIR: $MKI_RESOLVE_DATA or
# /var/tmp/mkimage-resolve-data-UID (armhf armel) or /var/tmp/mkimage-resolve-data-UID-PRIMARY-AUX.
set -eu
P=${1:-armhf} A=${2:-armel}
if [ "$P $A" = "armhf armel" ]; then
	D=${MKI_RESOLVE_DATA:-/var/tmp/mkimage-resolve-data-$(id -u)}
else
	D=/var/tmp/mkimage-resolve-data-$(id -u)-$P-$A
fi
mkdir -p "$(dirname "$D")"
exec 9>"$D.lock"   # tests running at once (run.sh -j) fetch the indexes once
flock 9
mkdir -p "$D/etc/apt.conf.d" "$D/etc/preferences.d" "$D/etc/sources.list.d" "$D/lists/partial" \
	"$D/cache/archives/partial" "$D/log"
: >"$D/status"
cp /etc/apt/sources.list "$D/etc/" 2>/dev/null || : >"$D/etc/sources.list"
cp /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources "$D/etc/sources.list.d/" \
	2>/dev/null || true
cat >"$D/apt.conf" <<EOC
Dir "$D/";
Dir::State "$D/";
Dir::State::status "$D/status";
Dir::State::Lists "$D/lists/";
Dir::Cache "$D/cache/";
Dir::Etc "$D/etc/";
Dir::Etc::Trusted "/etc/apt/trusted.gpg";
Dir::Etc::TrustedParts "/etc/apt/trusted.gpg.d/";
Dir::Log "$D/log/";
APT::Architecture "$P";
APT::Architectures { "$P"; "$A"; };
APT::Install-Recommends "0";
APT::Sandbox::User "root";
Debug::NoLocking "1";
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
EOC
if [ -z "$(find "$D/lists" -name "*_binary-${P}_Packages" -mmin -1440 2>/dev/null)" ]; then
	# A mirror mid-sync fails one suite's index (security's, seen here); apt goes on with the
	# others and so do the comparisons, which read the same lists on both sides.
	if ! APT_CONFIG=$D/apt.conf apt-get -q update >"$D/update.log" 2>&1; then
		find "$D/lists" -name "*_main_binary-${P}_Packages" | grep -q . ||
			{ cat "$D/update.log" >&2; echo "resolve-data: apt-get update failed" >&2; exit 1; }
		echo "resolve-data: $(grep -m1 '^E: ' "$D/update.log"); went on without it, as apt does" >&2
	fi
fi
ls "$D"/lists/*_binary-"$P"_Packages >/dev/null 2>&1 ||
	{ echo "resolve-data: no $P Packages in $D/lists" >&2; exit 1; }
echo "$D"
