# Test 65-native-tools' comparison on Debian 13 "trixie": the lean arm-board built with native
# tools, dpkg 1.22's programs among them made to name armhf, is byte-identical to the one built
# with every target program emulated, and dpkg's answers and database are the same.
FLAGSHIP_SUITE=trixie exec bash "$(dirname "$0")/65-native-tools.sh"
