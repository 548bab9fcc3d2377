/*
 * Foreign binaries through binfmt_misc: qemu-user (static, flags FP) registered in the build
 * namespace's private binfmt_misc instance, or a host registration with flag F accepted when the
 * kernel has no private instance. Architectures sharing an ELF machine share one entry.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/arch.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "sandbox_int.h"

#define MAX_EMULATED 16

static const struct arch *emulated[MAX_EMULATED];
static size_t n_emulated;

static void add_hex(struct buf *b, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_addf(b, "\\x%02x", p[i]);
}

/*
 * ":NAME:M::MAGIC:MASK:INTERP:FP" for the first 20 bytes of the ELF header: ident (class, data,
 * version; OS ABI ignored), e_type EXEC or DYN, e_machine.
 */
char *sandbox_binfmt_line(const struct arch *a, const char *interp)
{
	uint8_t magic[20] = { 0x7f, 'E', 'L', 'F', a->elf_class, a->elf_data, 1 };
	uint8_t mask[20] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff,
			     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff };
	struct buf b = { 0 };
	int le = a->elf_data == 1;

	magic[le ? 16 : 17] = 2;
	if (!le) {
		mask[16] = 0xff;
		mask[17] = 0xfe;
	}
	magic[le ? 18 : 19] = (uint8_t)(a->elf_machine & 0xff);
	magic[le ? 19 : 18] = (uint8_t)(a->elf_machine >> 8);
	buf_addf(&b, ":mkimage-%s:M::", a->qemu);
	add_hex(&b, magic, sizeof(magic));
	buf_adds(&b, ":");
	add_hex(&b, mask, sizeof(mask));
	buf_addf(&b, ":%s:FP", interp);
	return buf_detach(&b);
}

/* A host registration for `a` that is enabled and has flag F (works after chroot). */
static int host_registration_ok(const struct arch *a)
{
	char *path = xasprintf("%s/%s", BINFMT_DIR, a->qemu), line[256];
	FILE *f = fopen(path, "re");
	int enabled = 0, fixed = 0;

	free(path);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "enabled\n"))
			enabled = 1;
		if (str_starts_with(line, "flags:") && strchr(line + 6, 'F'))
			fixed = 1;
	}
	fclose(f);
	return enabled && fixed;
}

static const struct arch *emulated_same_elf(const struct arch *a)
{
	size_t i;

	for (i = 0; i < n_emulated; i++)
		if (emulated[i]->elf_machine == a->elf_machine &&
		    emulated[i]->elf_class == a->elf_class && emulated[i]->elf_data == a->elf_data)
			return emulated[i];
	return NULL;
}

static int register_private(const struct arch *a)
{
	char *name = xasprintf("%s-static", a->qemu), *interp = proc_which(name), *line = NULL;
	int ret = 0;

	if (!interp) {
		log_error("cannot run %s binaries: '%s' not found; install the 'qemu-user-static' "
			  "package", a->name, name);
		ret = -MKI_E_SANDBOX;
		goto out;
	}
	line = sandbox_binfmt_line(a, interp);
	ret = sandbox_write_file(BINFMT_DIR "/register", line);
	if (ret)
		log_error("cannot register '%s' for %s binaries in the private binfmt_misc: %s",
			  interp, a->name, strerror(-ret));
	else
		log_debug("binfmt: %s", line);
	ret = ret ? -MKI_E_SANDBOX : 0;
out:
	free(name);
	free(interp);
	free(line);
	return ret;
}

/* Replace the private registration of `a` by one run by `interp` (NULL: its qemu again). */
static int reregister(const struct arch *a, const char *interp)
{
	char *entry = xasprintf("%s/mkimage-%s", BINFMT_DIR, a->qemu);
	char *name = xasprintf("%s-static", a->qemu), *qemu = interp ? NULL : proc_which(name);
	char *line = NULL;
	int ret = sandbox_write_file(entry, "-1");

	if (ret && ret != -ENOENT) {
		log_error("cannot remove binfmt_misc entry '%s': %s", entry, strerror(-ret));
		goto out;
	}
	line = interp || qemu ? sandbox_binfmt_line(a, interp ? interp : qemu) : NULL;
	ret = line ? sandbox_write_file(BINFMT_DIR "/register", line) : -ENOENT;
	if (ret)
		log_error("cannot register '%s' for %s binaries: %s", interp ? interp : name, a->name,
			  strerror(-ret));
	else
		log_debug("binfmt: %s", line);
out:
	free(entry);
	free(name);
	free(qemu);
	free(line);
	return ret ? -MKI_E_SANDBOX : 0;
}

int sandbox_set_interpreter(const char *interp)
{
	const struct sandbox_info *si = sandbox_get();
	size_t i;
	int ret = 0;

	if (!si || !si->binfmt_private) {
		log_error("internal: changing binfmt_misc interpreters needs the private instance");
		return -MKI_E_SANDBOX;
	}
	for (i = 0; !ret && i < n_emulated; i++)
		ret = reregister(emulated[i], interp);
	return ret;
}

int sandbox_add_arch(const char *arch)
{
	const struct arch *a = arch_find(arch);
	const struct sandbox_info *si = sandbox_get();
	int ret;

	if (!a) {
		log_error("unknown architecture '%s'", arch);
		return -MKI_E_SANDBOX;
	}
	if (arch_runs_natively(a) || emulated_same_elf(a))
		return 0;
	if (!si || !a->qemu) {
		log_error(!si ? "internal: sandbox_add_arch before sandbox_enter"
				   : "no qemu-user emulator exists for architecture '%s'", arch);
		return -MKI_E_SANDBOX;
	}
	if (n_emulated == MAX_EMULATED)
		return -MKI_E_LIMIT;
	if (si->binfmt_private)
		ret = register_private(a);
	else if (host_registration_ok(a))
		ret = 0;
	else {
		log_error("cannot run %s binaries: this kernel has no private binfmt_misc (Linux >= "
			  "6.7) and the host has no '%s' registration with flag F; as root install "
			  "'qemu-user-static' and 'binfmt-support', or use a newer kernel", arch,
			  a->qemu);
		ret = -MKI_E_SANDBOX;
	}
	if (!ret)
		emulated[n_emulated++] = a;
	return ret;
}

int sandbox_binfmt_emulates(void)
{
	return n_emulated > 0;
}

/* By the same ELF identity as registration: ppc64el and ppc64 differ only in byte order. */
int sandbox_arch_emulated(const char *arch)
{
	const struct arch *a = arch_find(arch);

	return a && emulated_same_elf(a) ? 1 : 0;
}
