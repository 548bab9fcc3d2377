# test-cost: slow (builds a whole recipe: run.sh starts it first)
# Test 60-arm-board on Debian 13 "trixie": the same checks of recipes/arm-board-trixie.cfg, built from a
# signed trixie mirror (tests/flagship.sh, FLAGSHIP_SUITE), booted through firmware in CI.
FLAGSHIP_SUITE=trixie exec bash "$(dirname "$0")/60-arm-board.sh"
