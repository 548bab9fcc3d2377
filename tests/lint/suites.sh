#!/bin/sh
# Every module with logic has a unit suite: builder/FAMILY/x.c -> tests/unit/test_x.c.
# A program's main() (builder/main.c, mkimage-exec.c) cannot be linked into the unit binary: what
# it does beyond wiring belongs in a module, and that module has the suite.
# Usage: tests/lint/suites.sh [OBJDIR]   (OBJDIR is unused)
set -eu
cd "$(dirname "$0")/../.."

missing=0
for src in builder/*/*.c; do
	x=${src##*/}
	x=${x%.c}
	[ -f "tests/unit/test_$x.c" ] && continue
	grep -q '^int main(' "$src" && continue
	echo "$src: no unit suite; write tests/unit/test_$x.c defining 'Suite *${x}_suite(void)'"
	missing=$((missing + 1))
done
echo "suites: $missing modules with logic and no unit suite"
[ "$missing" = 0 ]
