# test-cost: slow (trixie's A/B appliance; its boots in make check-boots)
# Test 129 on Debian 13 "trixie" (RAUC 1.13): the update-ready disk and its bundle checked from
# outside in CI; with MKIMAGE_TEST_BOOT_SUITES naming trixie (make check-boots), the machine
# updated A -> B, refusing the forged and tampered bundles, and falling back from version 3.
FLAGSHIP_SUITE=trixie exec bash "$(dirname "$0")/129-rauc-update-boot.sh"
