# test-cost: slow (builds a whole recipe: run.sh starts it first)
# Test 94-arm-board-verity on Debian 13 "trixie": the same checks of recipes/arm-board-verity-trixie.cfg, built from a
# signed trixie mirror (tests/flagship.sh, FLAGSHIP_SUITE), booted through firmware in CI.
FLAGSHIP_SUITE=trixie exec bash "$(dirname "$0")/94-arm-board-verity.sh"
