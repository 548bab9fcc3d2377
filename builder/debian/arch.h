/* Debian architectures: name <-> multiarch triplet <-> qemu-user binary <-> ELF identity. */
#ifndef MKI_ARCH_H
#define MKI_ARCH_H

#include <stdint.h>

struct arch {
	const char *name;      /* Debian name: "armhf" */
	const char *triplet;   /* DEB_HOST_MULTIARCH: "arm-linux-gnueabihf" */
	const char *gnu_cpu;   /* DEB_HOST_GNU_CPU: "arm" */
	const char *qemu;      /* qemu-user binary name, without -static: "qemu-arm"; NULL if none */
	uint8_t elf_class;     /* 1 = ELFCLASS32, 2 = ELFCLASS64 */
	uint8_t elf_data;      /* 1 = little endian, 2 = big endian */
	uint16_t elf_machine;  /* e_machine */
	/* e_flags bits that must match (armel vs armhf differ only in the float ABI flag) */
	uint32_t eflags_mask, eflags_value;
	uint8_t bits;          /* DEB_HOST_ARCH_BITS */
};

/** Look up a Debian architecture name; NULL if unknown (all is not an architecture here). */
const struct arch *arch_find(const char *name);
/** The table, terminated by an entry with name == NULL. */
const struct arch *arch_table(void);
/** The Debian architecture of this host's userland (from the compiler's target). */
const char *arch_host(void);
/**
 * Whether the host CPU and kernel run `a`'s binaries without emulation (same arch, or i386 on
 * amd64 when the kernel executes it: probed once, see execprobe.h). Never register a binfmt
 * handler for such an arch.
 */
int arch_runs_natively(const struct arch *a);
/**
 * The Debian name another tool gives an architecture ("armv7" and "arm-linux-gnueabihf" are
 * "armhf", "aarch64" is "arm64", "x86_64" is "amd64", "i686" is "i386"): a static string, or
 * NULL when `name` is already Debian's or no known alias. Callers say so, never substitute it.
 */
const char *arch_debian_name(const char *name);
/** Suggest the closest known name for a typo, or NULL. */
const char *arch_suggest(const char *name);

#endif
