# The SDK's tests (140, 141), sourced after lib.sh and before tests/flagship.sh: their mirrors,
# and the program they build: a small C program using zlib and libcrypto, with its CMake and
# Meson projects, and the two ways to build it with an unpacked SDK (mkimage(7), "Cross-building").

# sdk_serve TOOL...: skips without the tools (and those every SDK test needs) or off amd64;
# serves flagship.sh's sdk_mirrors on loopback as SRC_IMG (the image's) and SRC_SDK (the
# SDK's cross toolchains and -dev packages), --source arguments; SOURCE_DATE_EPOCH is fixed.
sdk_serve() {
	local tool
	[ "$(dpkg --print-architecture)" = amd64 ] || skip "the SDK's test mirror is amd64's"
	for tool in cmake meson ninja debugfs readelf zstd "$@"; do
		command -v "$tool" >/dev/null || skip "$tool missing (make test-deps)"
	done
	export SOURCE_DATE_EPOCH=1700000000
	sdk_mirrors
	serve "$SDK_MIRROR_IMG/repo"
	SRC_IMG="$SERVER_URL bookworm main signed-by=$SDK_MIRROR_IMG/key.gpg"
	serve "$SDK_MIRROR_HOST/repo"
	SRC_SDK="$SERVER_URL bookworm main signed-by=$SDK_MIRROR_HOST/key.gpg"
}

# sdk_sources DIR: hello.c, CMakeLists.txt and meson.build in DIR. The program prints
# "sdk-hello zlib VERSION sha256 PREFIX": zlib's version and the first bytes of sha256("mkimage").
sdk_sources() {
	mkdir -p "$1"
	cat >"$1/hello.c" <<'C'
#include <stdio.h>
#include <zlib.h>
#include <openssl/sha.h>

int main(void)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	int i;

	SHA256((const unsigned char *)"mkimage", 7, md);
	printf("sdk-hello zlib %s sha256 ", zlibVersion());
	for (i = 0; i < 4; i++)
		printf("%02x", md[i]);
	printf("\n");
	return 0;
}
C
	cat >"$1/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(sdkhello C)
find_package(ZLIB REQUIRED)
find_package(OpenSSL REQUIRED)
add_executable(sdkhello hello.c)
target_link_libraries(sdkhello ZLIB::ZLIB OpenSSL::Crypto)
CMAKE
	cat >"$1/meson.build" <<'MESON'
project('sdkhello', 'c')
executable('sdkhello', 'hello.c', dependencies : [dependency('zlib'), dependency('libcrypto')])
MESON
}

# sdk_expected LOCK: the line the program prints when linked against the zlib of the image
# whose lock is LOCK (armhf's; armel's is the same source version).
sdk_expected() {
	local zver
	zver=$(sed -n 's/^package: zlib1g:armhf=\([^ ]*\) .*/\1/p' "$1" | sed 's/^[0-9]*://; s/[.-]dfsg.*//; s/-.*//')
	echo "sdk-hello zlib $zver sha256 $(printf mkimage | sha256sum | cut -c1-8)"
}

# sdk_cmake SDK SRC BUILD TRIPLET: build SRC in BUILD with the SDK's CMake toolchain file for
# TRIPLET (BUILD/sdkhello); BUILD.log keeps the output.
sdk_cmake() {
	(cmake -S "$2" -B "$3" -DCMAKE_TOOLCHAIN_FILE="$1/sdk/cmake/$4.cmake" && cmake --build "$3") \
		>"$3.log" 2>&1 || { cat "$3.log" >&2; fail "CMake could not build for $4 with the SDK"; }
}

# sdk_meson SDK SRC BUILD TRIPLET: the same with the SDK's environment-setup script and Meson
# cross file, in an environment holding nothing of the caller's.
sdk_meson() {
	(env -i HOME="$T" PATH=/usr/bin:/bin bash -c ". '$1/environment-setup-$4' &&
		meson setup --cross-file \"\$MESON_CROSS_FILE\" '$3' '$2' && ninja -C '$3'") \
		>"$3.log" 2>&1 || { cat "$3.log" >&2; fail "Meson could not build for $4 with the SDK"; }
}
