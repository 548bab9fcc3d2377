#!/bin/bash
# Resolver benchmark: the full bookworm main indexes for armhf + armel (+all, + updates and
# security as the host's sources list them), request = base 'required' + hello:armel + busybox.
# mkimage's resolver (build/tools/resolve) vs apt-get -s on the same lists, same request, empty
# status; /usr/bin/time wall seconds and peak RSS, median of 3 runs each, and the ratios.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RESOLVE=$TOP/build/tools/resolve
[ -x "$RESOLVE" ] || make -C "$TOP" -s tools
D=$("$TOP/tests/bench/resolve-data.sh")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PK=()
for f in "$D"/lists/*_binary-armhf_Packages "$D"/lists/*_binary-armel_Packages; do
	a=${f%_Packages}
	a=${a##*binary-}
	PK+=(--release "$(basename "${f%%_main_binary-*}")" --packages "$a=$f")
done
BASE=$(awk -v RS= '/\nArchitecture: (armhf|all)\n/ && (/\nEssential: yes\n/ || /\nPriority: required\n/) {
	sub(/^Package: /, ""); sub(/\n.*/, ""); print }' "$D"/lists/*_binary-armhf_Packages | sort -u)

# run NAME CMD...: 3 timed runs; prints "wall rss_kb" medians
run() {
	local name=$1 i
	shift
	for i in 1 2 3; do
		/usr/bin/time -f '%e %M' -o "$T/$name.$i" "$@" >"$T/$name.out" 2>/dev/null
	done
	cat "$T/$name".[123] | sort -n | sed -n 2p
}
ours=$(run ours "$RESOLVE" --primary armhf --arch armel "${PK[@]}" --base required \
	--install hello:armel --install busybox)
apt=$(run apt env APT_CONFIG="$D/apt.conf" apt-get -s -o APT::Install-Recommends=0 install \
	$BASE hello:armel busybox)
n_ours=$(wc -l <"$T/ours.out")
n_apt=$(grep -c '^Inst ' "$T/apt.out")
read -r ow orss <<<"$ours"
read -r aw arss <<<"$apt"
printf 'resolve, bookworm armhf+armel full indexes, %s packages (apt: %s)\n' "$n_ours" "$n_apt"
printf '  mkimage resolver : %6.2f s  %6d MB peak RSS\n' "$ow" $((orss / 1024))
printf '  apt-get -s       : %6.2f s  %6d MB peak RSS\n' "$aw" $((arss / 1024))
awk -v a="$aw" -v o="$ow" -v ar="$arss" -v or="$orss" \
	'BEGIN { printf "  ratio            : %.1fx faster, %.2fx the memory\n", a / o, or / ar }'
