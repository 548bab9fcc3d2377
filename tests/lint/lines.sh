#!/bin/sh
# No C file in builder/ is over 1000 lines: a file is one job (builder/README.md), and one past
# that size holds several; split it by job (x_job.c files sharing an internal x_ctx.h).
# Usage: tests/lint/lines.sh [OBJDIR]   (OBJDIR is unused)
set -eu
cd "$(dirname "$0")/../.."

MAX=1000
over=0
for src in builder/*.c builder/*/*.c; do
	n=$(wc -l <"$src")
	[ "$n" -gt "$MAX" ] || continue
	echo "$src: $n lines, more than $MAX: split it by job into files of its module (x_job.c)"
	over=$((over + 1))
done
echo "lines: $over C files over $MAX lines"
[ "$over" = 0 ]
