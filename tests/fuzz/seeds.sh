#!/bin/bash
# seeds.sh CORPUS: seed each harness's corpus from real inputs made at run time (no binaries are
# committed): the project's recipes, real .deb control data and Packages stanzas where available.
set -euo pipefail
c=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$c/fuzz_recipe"
cp "$top"/recipes/*.cfg "$c/fuzz_recipe/" 2>/dev/null || true
