#include "arch.h"

#include <stdio.h>
#include <string.h>

#include "arch_internal.h"
#include "lib/execprobe.h"
#include "lib/str.h"

#define EF_ARM_ABI_FLOAT_SOFT 0x200
#define EF_ARM_ABI_FLOAT_HARD 0x400

/*
 * Triplets are what `dpkg-architecture -aX -qDEB_HOST_MULTIARCH` prints (unit-tested against it).
 * armel and armhf share EM_ARM and a triplet stem; the EABI float flag tells their binaries apart.
 */
static const struct arch table[] = {
	{ "amd64", "x86_64-linux-gnu", "x86_64", "qemu-x86_64", 2, 1, 62, 0, 0, 64 },
	{ "i386", "i386-linux-gnu", "i686", "qemu-i386", 1, 1, 3, 0, 0, 32 },
	{ "x32", "x86_64-linux-gnux32", "x86_64", NULL, 1, 1, 62, 0, 0, 32 },
	{ "arm64", "aarch64-linux-gnu", "aarch64", "qemu-aarch64", 2, 1, 183, 0, 0, 64 },
	{ "armhf", "arm-linux-gnueabihf", "arm", "qemu-arm", 1, 1, 40, EF_ARM_ABI_FLOAT_HARD,
	  EF_ARM_ABI_FLOAT_HARD, 32 },
	{ "armel", "arm-linux-gnueabi", "arm", "qemu-arm", 1, 1, 40, EF_ARM_ABI_FLOAT_HARD, 0, 32 },
	{ "ppc64el", "powerpc64le-linux-gnu", "powerpc64le", "qemu-ppc64le", 2, 1, 21, 0, 0, 64 },
	{ "ppc64", "powerpc64-linux-gnu", "powerpc64", "qemu-ppc64", 2, 2, 21, 0, 0, 64 },
	{ "powerpc", "powerpc-linux-gnu", "powerpc", "qemu-ppc", 1, 2, 20, 0, 0, 32 },
	{ "s390x", "s390x-linux-gnu", "s390x", "qemu-s390x", 2, 2, 22, 0, 0, 64 },
	{ "mips64el", "mips64el-linux-gnuabi64", "mips64el", "qemu-mips64el", 2, 1, 8, 0, 0, 64 },
	{ "mipsel", "mipsel-linux-gnu", "mipsel", "qemu-mipsel", 1, 1, 8, 0, 0, 32 },
	{ "riscv64", "riscv64-linux-gnu", "riscv64", "qemu-riscv64", 2, 1, 243, 0, 0, 64 },
	{ "loong64", "loongarch64-linux-gnu", "loongarch64", "qemu-loongarch64", 2, 1, 258, 0, 0, 64 },
	{ "alpha", "alpha-linux-gnu", "alpha", "qemu-alpha", 2, 1, 0x9026, 0, 0, 64 },
	{ "hppa", "hppa-linux-gnu", "hppa", "qemu-hppa", 1, 2, 15, 0, 0, 32 },
	{ "m68k", "m68k-linux-gnu", "m68k", "qemu-m68k", 1, 2, 4, 0, 0, 32 },
	{ "sh4", "sh4-linux-gnu", "sh4", "qemu-sh4", 1, 1, 42, 0, 0, 32 },
	{ "sparc64", "sparc64-linux-gnu", "sparc64", "qemu-sparc64", 2, 2, 43, 0, 0, 64 },
	{ NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0 },
};

const struct arch *arch_table(void)
{
	return table;
}

const struct arch *arch_find(const char *name)
{
	const struct arch *a;

	for (a = table; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

const struct arch *arch_by_triplet(const char *triplet)
{
	const struct arch *a;

	for (a = table; a->name; a++)
		if (!strcmp(a->triplet, triplet))
			return a;
	return NULL;
}

const char *arch_host(void)
{
#if defined(__x86_64__) && defined(__ILP32__)
	return "x32";
#elif defined(__x86_64__)
	return "amd64";
#elif defined(__i386__)
	return "i386";
#elif defined(__aarch64__)
	return "arm64";
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
	return "armhf";
#elif defined(__arm__)
	return "armel";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return "ppc64el";
#elif defined(__s390x__)
	return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
	return "riscv64";
#elif defined(__mips64) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return "mips64el";
#elif defined(__loongarch64)
	return "loong64";
#else
	return "unknown";
#endif
}

int arch_runs_natively(const struct arch *a)
{
	const char *host = arch_host();

	if (!strcmp(a->name, host))
		return 1;
	/* Debian's amd64 kernels have IA32 emulation, but it can be compiled out, disabled at boot
	 * or unsupported by a hypervisor: ask the kernel rather than trust the CPU. */
	if (!strcmp(host, "amd64") && !strcmp(a->name, "i386"))
		return execprobe_ia32();
	if (!strcmp(host, "arm64") && (!strcmp(a->name, "armhf") || !strcmp(a->name, "armel")))
		return 0; /* many arm64 cores lack AArch32: emulate rather than guess */
	return 0;
}

/*
 * Names other tools give Debian's architectures: uname -m, rpm, Android ABIs, GNU triplets. Only
 * unambiguous ones: "arm" could be armel or armhf, so it is not here. Debian's armhf needs ARMv7,
 * so an ARMv6 (Raspberry Pi 1, Zero) runs armel; Debian's i386 needs an i686 since bookworm,
 * older names still mean that architecture.
 */
static const struct { const char *alias, *debian; } aliases[] = {
	{ "armv7", "armhf" },	   { "armv7l", "armhf" },	 { "armv7hl", "armhf" },
	{ "armv7a", "armhf" },	   { "armv7-a", "armhf" },	 { "armv7hf", "armhf" },
	{ "armv8l", "armhf" },	   { "armeabi-v7a", "armhf" },	 { "armhfp", "armhf" },
	{ "armv5", "armel" },	   { "armv5l", "armel" },	 { "armv5te", "armel" },
	{ "armv5tel", "armel" },   { "armv5tejl", "armel" },	 { "armv6", "armel" },
	{ "armv6l", "armel" },	   { "armeabi", "armel" },	 { "aarch64", "arm64" },
	{ "arm64-v8a", "arm64" },  { "armv8", "arm64" },	 { "armv8a", "arm64" },
	{ "armv8-a", "arm64" },	   { "x86_64", "amd64" },	 { "x86-64", "amd64" },
	{ "x64", "amd64" },	   { "i486", "i386" },		 { "i586", "i386" },
	{ "i686", "i386" },	   { "x86", "i386" },		 { "ia32", "i386" },
	{ "ppc64le", "ppc64el" },  { "powerpc64le", "ppc64el" }, { "ppc", "powerpc" },
	{ "loongarch64", "loong64" }, { "i486-linux-gnu", "i386" }, { "i586-linux-gnu", "i386" },
	{ "i686-linux-gnu", "i386" },
};

/* "armv7-unknown-linux-gnueabihf" -> "armv7-linux-gnueabihf": a vendor field dropped. */
static const char *without_vendor(const char *name, char *out, size_t n)
{
	const char *v = strchr(name, '-'), *rest = v ? strchr(v + 1, '-') : NULL;

	if (!rest || strncmp(rest, "-linux-", 7) || (size_t)(v - name) + strlen(rest) >= n)
		return NULL;
	snprintf(out, n, "%.*s%s", (int)(v - name), name, rest);
	return out;
}

static const char *alias_of(const char *name)
{
	const struct arch *a = arch_by_triplet(name);
	size_t i;
	char cpu[64];

	if (a)
		return a->name;
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].alias, name))
			return aliases[i].debian;
	/* A GNU triplet whose CPU field is an alias: "armv7l-linux-gnueabihf"; for ARM the ABI
	 * field, not the CPU, says which float ABI the binaries use. */
	if (strlen(name) >= sizeof(cpu) || !strstr(name, "-linux-"))
		return NULL;
	snprintf(cpu, sizeof(cpu), "%.*s", (int)strcspn(name, "-"), name);
	if (!strncmp(cpu, "arm", 3) && !strncmp(strstr(name, "-linux-"), "-linux-gnueabi", 14))
		return str_ends_with(name, "hf") ? "armhf" : "armel";
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].alias, cpu))
			return aliases[i].debian;
	return NULL;
}

const char *arch_debian_name(const char *name)
{
	char buf[128];
	const char *shorter;

	if (arch_find(name))
		return NULL;
	if (alias_of(name))
		return alias_of(name);
	shorter = without_vendor(name, buf, sizeof(buf));
	return shorter ? alias_of(shorter) : NULL;
}

const char *arch_suggest(const char *name)
{
	const struct arch *a, *best = NULL;
	unsigned d, best_d = 3;

	for (a = table; a->name; a++) {
		d = str_distance(name, a->name);
		if (d < best_d) {
			best_d = d;
			best = a;
		}
	}
	return best ? best->name : NULL;
}
