#!/bin/sh
# Every global symbol a module defines starts with its module's name: the file's stem, or the part
# of it before the first '_' (sandbox_idmap.o may export sandbox_idmap_* or sandbox_*).
# Usage: tests/lint/exports.sh [OBJDIR]   (default build; the objects must be built)
set -eu
obj=${1:-build}
cd "$(dirname "$0")/../.."

bad=0
found=0
for src in builder/*/*.c; do
	o=$obj/${src#builder/}
	o=${o%.c}.o
	# mkimage-exec's sources are built into the static interpreter, not into OBJDIR.
	[ -f "$o" ] || continue
	found=1
	stem=${o##*/}
	stem=${stem%.o}
	mod=${stem%%_*}
	for sym in $(nm -g --defined-only "$o" | awk '{ print $NF }'); do
		case $sym in
		"$stem"* | "$mod"*) ;;
		*)
			echo "$src: exports '$sym', outside its module's prefix '${mod}'; rename it" \
				"or make it static"
			bad=$((bad + 1))
			;;
		esac
	done
done
if [ "$found" = 0 ]; then
	echo "exports: no objects under $obj/; build first (make mkimage)"
	exit 1
fi
echo "exports: $bad exported names outside their module's prefix"
[ "$bad" = 0 ]
