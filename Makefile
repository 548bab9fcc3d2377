# mkimage - build a multi-architecture Debian ext4 root filesystem image without root.
# `make deps` installs what a fresh Debian 12 machine lacks; `make`, `make check`, `make bench`.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=
CC ?= cc
PKG_CONFIG ?= pkg-config
DATADIR ?= $(PREFIX)/share
# One version string, computed here alone, for --version, the .deb (mkdeb.sh asks `make -s
# version`), the report, the SBOM's creator, the download User-Agent and the layer key: a valid
# Debian version. A tag v1.2 is 1.2, three commits after it 1.2+git3.abc1234; without a tag
# 0.0~gitCOUNT.HASH (sorts before any release); +dirty with uncommitted changes. Outside git: the
# VERSION file of a release tarball, else 0.0. `make VERSION=...` overrides it.
GIT_HASH := $(shell git rev-parse --short HEAD 2>/dev/null)
GIT_DESC := $(subst -, ,$(patsubst v%,%,$(shell git describe --tags --match 'v[0-9]*' 2>/dev/null)))
VERSION := $(strip $(if $(GIT_DESC),\
	$(word 1,$(GIT_DESC))$(if $(word 3,$(GIT_DESC)),+git$(word 2,$(GIT_DESC)).$(patsubst g%,%,$(word 3,$(GIT_DESC)))),\
	$(if $(GIT_HASH),0.0~git$(shell git rev-list --count HEAD).$(GIT_HASH),\
	$(or $(shell cat VERSION 2>/dev/null),0.0)))$(if $(GIT_HASH),$(shell git diff --quiet HEAD -- 2>/dev/null || echo +dirty)))

LIBS_PC := libconfig libcurl libarchive liblzma libzstd zlib ext2fs fdisk com_err libsolv libsolvext libcrypto \
	libsquashfs1
WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wpointer-arith -Wcast-qual -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -Wvla -Wundef -Wwrite-strings
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -D_FILE_OFFSET_BITS=64 -D_GNU_SOURCE $(WARN) -MMD -MP \
	-DMKI_VERSION='"$(VERSION)"' $(shell $(PKG_CONFIG) --cflags $(LIBS_PC))
# The host's multiarch directory: where native tools are mounted inside the sandbox (accel.h).
HOST_MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch)
CFLAGS += -DMKI_HOST_MULTIARCH='"$(HOST_MULTIARCH)"'
LDLIBS += $(shell $(PKG_CONFIG) --libs $(LIBS_PC)) -lpthread
ifeq ($(WERROR),1)
CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# libFuzzer flavour (`make fuzz`): clang, every module instrumented, harnesses in tests/fuzz/.
ifeq ($(FUZZ),1)
CC := clang
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
endif

# Objects go to their own directory per flavour so a sanitizer build never mixes with a plain one.
OUT := build$(if $(SANITIZE),-san)$(if $(filter 1,$(FUZZ)),-fuzz)
# builder/FAMILY/x.c -> $(OUT)/FAMILY/x.o; builder/README.md says which family may include which.
SRCS := $(wildcard builder/*/*.c)
# mkimage-exec's modules: linked into the static program and the unit tests, never into mkimage.
EXEC_MODS := builder/configure/execshim.c builder/configure/execprof_run.c \
	builder/configure/execbuiltin.c builder/configure/execkeys.c
EXEC_SRCS := builder/configure/mkimage-exec.c $(EXEC_MODS)
EXEC_OBJS := $(patsubst builder/%.c,$(OUT)/%.o,$(EXEC_MODS))
LIB_OBJS := $(patsubst builder/%.c,$(OUT)/%.o,$(filter-out $(EXEC_SRCS),$(SRCS)))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(OUT)/unit/%.o,$(UNIT_SRCS)) $(OUT)/unit/main.o

all: mkimage mkimage-exec

mkimage: $(OUT)/main.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The binfmt_misc interpreter runs inside the target tree, where no host library exists: static.
# It starts once for every program a maintainer script runs (some 28 000 in a bootable build), so
# it is linked with musl where musl-gcc exists: glibc's static start-up (CPU feature probing,
# IRELATIVE relocations, tunables) costs about 1 ms more per exec on a virtual machine, musl's
# almost nothing. EXEC_CC=$(CC) builds it with glibc; both behave the same.
EXEC_CC ?= $(or $(shell command -v musl-gcc 2>/dev/null),$(CC))
EXEC_DEPS := $(EXEC_SRCS) builder/configure/execprof.h builder/configure/execshim.h \
	builder/configure/execbuiltin.h builder/configure/execkeys.h \
	builder/configure/accel.h builder/debian/plan.h builder/lib/str.h
EXEC_BUILD = -std=gnu11 -O2 -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -static -iquote builder \
	-DMKI_HOST_MULTIARCH='"$(HOST_MULTIARCH)"' -o $@ $(filter %.c,$^)
mkimage-exec: $(EXEC_DEPS)
	$(EXEC_CC) $(EXEC_BUILD)

# The same program linked with glibc: test 65 builds an image with each and compares them.
$(OUT)/glibc/mkimage-exec: $(EXEC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(EXEC_BUILD)

$(OUT)/%.o: builder/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -iquote builder -c -o $@ $<

# The files that use MKI_VERSION are compiled again when the version changes (a commit, an edit
# making it +dirty), so a binary never says another version than the package it goes into.
$(OUT)/version: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" >$@
$(patsubst builder/%.c,$(OUT)/%.o,$(shell grep -l MKI_VERSION $(SRCS) builder/main.c)): $(OUT)/version
FORCE:

$(OUT)/unit/%.o: tests/unit/%.c | $(OUT)/unit
	$(CC) $(CFLAGS) -Wno-missing-prototypes -iquote builder -I$(OUT)/unit $(shell $(PKG_CONFIG) --cflags check) -c -o $@ $<

# Each tests/unit/test_X.c defines `Suite *X_suite(void)`; the list is generated so adding a
# module's tests never touches a shared file.
$(OUT)/unit/suites.h: $(UNIT_SRCS) | $(OUT)/unit
	@for f in $(UNIT_SRCS); do b=$${f##*/test_}; echo "SUITE($${b%.c})"; done > $@.tmp && mv $@.tmp $@

$(OUT)/unit/main.o: $(OUT)/unit/suites.h

$(OUT)/unit-tests: $(UNIT_OBJS) $(LIB_OBJS) $(EXEC_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell $(PKG_CONFIG) --libs check)

# Test drivers: each tests/tools/NAME.c links the builder's modules into $(OUT)/tools/NAME, so a
# stage can be driven alone from integration tests.
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOLS := $(patsubst tests/tools/%.c,$(OUT)/tools/%,$(TOOL_SRCS))

$(OUT)/tools/%: tests/tools/%.c $(LIB_OBJS) | $(OUT)/tools
	$(CC) $(CFLAGS) -Wno-missing-prototypes -iquote builder $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

tools: $(TOOLS) $(OUT)/glibc/mkimage-exec

# Fuzz harnesses: tests/fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 60

$(OUT)/fuzz/%: tests/fuzz/%.c $(LIB_OBJS) | $(OUT)/fuzz
	$(CC) $(CFLAGS) -Wno-missing-prototypes -iquote builder -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(LIB_OBJS) $(LDLIBS)

fuzzers: $(FUZZERS)

fuzz:
	$(MAKE) FUZZ=1 fuzzers
	tests/fuzz/run.sh build-fuzz/fuzz $(FUZZ_SECONDS)

$(OUT) $(OUT)/unit $(OUT)/tools $(OUT)/fuzz:
	mkdir -p $@

unit: $(OUT)/unit-tests
	$(OUT)/unit-tests

# Integration tests run TEST_JOBS at a time (tests/integration/run.sh -j): most keep one core busy.
TEST_JOBS ?= 2

integration: mkimage mkimage-exec tools
	tests/integration/run.sh -j $(TEST_JOBS)

# Structure checks (tests/lint/*): which family includes which, exported names, unit suites.
# Each runs even when one before it failed, so one run lists every finding.
lint: $(LIB_OBJS)
	@rc=0; for t in tests/lint/*; do [ -x "$$t" ] || continue; "$$t" $(OUT) || rc=1; done; exit $$rc

check: test-deps
	$(MAKE) lint unit integration

# mkimage built with ASan + UBSan (build-san/mkimage) run over a fast subset of the integration
# suite: the paths where bad input meets the parsers and the error handling. A sanitizer report
# exits 86, which no test expects, so it fails the test that triggered it.
# (Not 73: it asserts peak memory, which ASan's shadow memory multiplies.)
SAN_TESTS := 01-cli.sh 02-recipe-errors.sh 04-recipe-inputs.sh 12-signature.sh 13-release.sh \
	14-index-integrity.sh 15-fetch-errors.sh 21-resolve-errors.sh 22-resolve-lock.sh \
	25-release-freshness.sh 30-unpack.sh 31-unpack-hostile.sh 42-image-errors.sh \
	37-index-midsync.sh 95-disk-recipe.sh 98-verity.sh 114-resolve-t64.sh 128-rauc-bundle.sh

$(OUT)/mkimage: $(OUT)/main.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

check-san: mkimage-exec tools
	$(MAKE) SANITIZE=address,undefined build-san/mkimage
	MKIMAGE=$(CURDIR)/build-san/mkimage ASAN_OPTIONS=exitcode=86:detect_leaks=1 \
		UBSAN_OPTIONS=exitcode=86:print_stacktrace=1 tests/integration/run.sh -j $(TEST_JOBS) $(SAN_TESTS)

bench: bench-deps mkimage mkimage-exec
	tests/bench/run.sh

# Boot a built image under qemu-system with its own kernel (tests/bootvm.sh, mkimage(7)
# BOOTING): `make boot RECIPE=arm-board` boots images/arm-board.ext4; IMAGE=path boots another.
# The long tail CI leaves out: every flagship built and booted through firmware on both releases
# (CI boots each on trixie and checks bookworm's image natively). Run it before resolving work
# that touches what boots; an hour or more on two cores.
BOOT_TESTS := 130-orangepi-pc.sh 60-arm-board.sh 62-pc-legacy.sh 63-arm64-armhf.sh 94-arm-board-verity.sh \
	110-trixie-arm-board.sh 111-trixie-pc-legacy.sh 112-trixie-arm64-armhf.sh \
	113-trixie-arm-board-verity.sh 115-trixie-riscv64.sh 116-trixie-rauc-update-boot.sh \
	129-rauc-update-boot.sh 121-rauc-verity-update-boot.sh 132-raspberry-pi.sh \
	123-pc-legacy-update-boot.sh
check-boots: test-deps mkimage mkimage-exec tools
	MKIMAGE_TEST_BOOT_SUITES="bookworm trixie" tests/integration/run.sh -j $(TEST_JOBS) $(BOOT_TESTS)

# A recipe for a board (`board = "NAME";`) boots as that board (tests/bootvm.sh BOOT_MACHINE).
BOOT_MACHINE ?= $(if $(RECIPE),$(shell sed -n 's/^board *= *"\([^"]*\)";.*/\1/p' \
	recipes/$(basename $(notdir $(RECIPE))).cfg 2>/dev/null))
boot:
	@[ -n "$(IMAGE)$(RECIPE)" ] || { echo "make boot: say RECIPE=NAME (images/NAME.img or .ext4) or IMAGE=FILE" >&2; exit 2; }
	BOOT_MACHINE=$(BOOT_MACHINE) tests/bootvm.sh $(or $(IMAGE),$(firstword $(wildcard $(addprefix images/$(basename $(notdir $(RECIPE))),.img .ext4))),images/$(basename $(notdir $(RECIPE))).img)

# The program is mkimage-debian: Debian's u-boot-tools owns /usr/bin/mkimage and mkimage(1).
# `mkimage` and its manual are links to ours unless MKIMAGE_LINK=0 (the .deb makes them with
# update-alternatives instead, mkimage(1) FILES). Examples (recipes beside their hooks, as the
# recipes name them) and the bash completion go where Debian keeps them.
MKIMAGE_LINK ?= 1
EXAMPLESDIR ?= $(DATADIR)/doc/mkimage/examples
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
install: mkimage mkimage-exec
	install -D -m 0755 mkimage $(DESTDIR)$(BINDIR)/mkimage-debian
	install -D -m 0755 mkimage-exec $(DESTDIR)$(PREFIX)/lib/mkimage/mkimage-exec
	install -D -m 0644 builder/man/mkimage.1 $(DESTDIR)$(MANDIR)/man1/mkimage-debian.1
	install -D -m 0644 builder/man/mkimage.cfg.5 $(DESTDIR)$(MANDIR)/man5/mkimage.cfg.5
	install -D -m 0644 builder/man/mkimage.7 $(DESTDIR)$(MANDIR)/man7/mkimage.7
	install -D -m 0644 builder/packaging/bash-completion $(DESTDIR)$(COMPLETIONDIR)/mkimage-debian
	ln -sfn mkimage-debian $(DESTDIR)$(COMPLETIONDIR)/mkimage
	mkdir -p $(DESTDIR)$(EXAMPLESDIR)
	cp -R recipes hooks $(DESTDIR)$(EXAMPLESDIR)/
ifeq ($(MKIMAGE_LINK),1)
	ln -sfn mkimage-debian $(DESTDIR)$(BINDIR)/mkimage
	ln -sfn mkimage-debian.1 $(DESTDIR)$(MANDIR)/man1/mkimage.1
endif
version:
	@echo $(VERSION)
# mkimage_VERSION_ARCH.deb in the top directory, then lintian on it (builder/packaging/mkdeb.sh).
deb: mkimage mkimage-exec
	deb=$$(builder/packaging/mkdeb.sh .) && lintian --fail-on error,warning "$$deb"

# What building and running mkimage need (`make deps`): the compiler and libraries, apt's and
# dpkg's tools, gpgv for signatures, QEMU user emulation and uidmap for the sandbox, e2fsprogs,
# musl for the small static dispatcher (mkimage-exec) every exec of a target program goes through.
DEB_DEPS := build-essential pkg-config libconfig-dev libcurl4-openssl-dev libarchive-dev \
	libext2fs-dev libsolv-dev libsolvext-dev libssl-dev liblzma-dev libzstd-dev zlib1g-dev libfdisk-dev \
	libsquashfs-dev gpg gpgv dpkg-dev apt apt-utils e2fsprogs qemu-user-static uidmap \
	ca-certificates git musl-tools
# What the tests add (`make check`, `make test-deps`): the unit framework, clang for the fuzzers,
# the independent checkers, the manual page tools, lintian, a proxy, firmware and qemu-system to
# boot the images, and the archivers and filesystem tools the tests compare against.
TEST_DEPS := check clang libclang-rt-14-dev python3 python3-jsonschema python3-license-expression \
	zstd xz-utils bzip2 libcap2-bin file man-db groff-base lintian apt-cacher-ng \
	qemu-system-arm qemu-system-x86 qemu-system-misc bmap-tools fdisk dosfstools mtools u-boot-qemu \
	ovmf qemu-efi-aarch64 opensbi cryptsetup-bin squashfs-tools squashfs-tools-ng \
	docker-registry apache2-utils skopeo initramfs-tools-core rauc openssl openssh-client \
	cmake meson ninja-build
# The peers `make bench` measures against.
BENCH_DEPS := mmdebstrap arch-test time bc cryptsetup-bin squashfs-tools
deps:
	@$(call apt_install,$(DEB_DEPS))
test-deps:
	@$(call apt_install,$(DEB_DEPS) $(TEST_DEPS))
bench-deps:
	@$(call apt_install,$(DEB_DEPS) $(TEST_DEPS) $(BENCH_DEPS))
# Installs only what is missing, so it is idempotent and quiet on a ready machine.
define apt_install
missing=$$(for p in $(1); do dpkg-query -W -f='$${db:Status-Abbrev}' $$p 2>/dev/null | \
	grep -q '^ii' || echo $$p; done); \
if [ -n "$$missing" ]; then \
	sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	echo "installing:" $$missing; \
	$$sudo apt-get update -q && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
fi
endef

clean:
	rm -rf build build-san build-fuzz mkimage mkimage-exec mkimage_*.deb

.PHONY: all lint tools fuzzers fuzz unit integration check check-boots check-san bench bench-deps boot install deb deps \
	test-deps version clean FORCE
-include $(wildcard $(OUT)/*.d $(OUT)/*/*.d)
