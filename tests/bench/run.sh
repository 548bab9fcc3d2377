#!/bin/bash
# `make bench`: every tests/bench/NN-*.sh in turn. Each times mkimage against the peer tool in the
# same run with /usr/bin/time and prints medians and ratios. Benchmarks never assert on time.
set -eu
cd "$(dirname "$0")"
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=([0-9][0-9]-*.sh)
[ -e "${benches[0]}" ] || { echo "bench: no benchmarks yet"; exit 0; }
for b in "${benches[@]}"; do
	echo "== $b"
	bash "$b"
done
