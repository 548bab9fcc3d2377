# test-cost: slow (builds a whole recipe: run.sh starts it first)
# Test 63-arm64-armhf on Debian 13 "trixie": the same checks of recipes/arm64-armhf-trixie.cfg, built from a
# signed trixie mirror (tests/flagship.sh, FLAGSHIP_SUITE), booted through firmware in CI.
FLAGSHIP_SUITE=trixie exec bash "$(dirname "$0")/63-arm64-armhf.sh"
