/*
 * The boot selection of an update-ready A/B disk (recipe_update_boots(): an update group on a
 * disk booted by extlinux). RAUC installs a bundle into the slot not running and asks its boot
 * loader backend to boot it next; U-Boot must then try the new slot a bounded number of times
 * and fall back to the other when no boot marks it good. Debian's U-Boot builds have no
 * bootcount and, booted as firmware, often no writable environment, so the state lives in a
 * file both sides can write:
 *
 * - /boot/select (a FAT partition: Debian's U-Boot builds write FAT, not ext4) holds boot.scr,
 *   which U-Boot's distro boot runs, and rauc.env, the state in RAUC's U-Boot variables
 *   (BOOT_ORDER, BOOT_A_LEFT, BOOT_B_LEFT). boot.scr imports only those three names, picks the
 *   first slot in the order with attempts left, takes one, writes the file back and boots the
 *   slot's own /boot/extlinux/extlinux.conf with sysboot.
 * - Each slot carries its own kernel and extlinux.conf (written as u-boot-menu writes it), whose
 *   append names the root through U-Boot variables boot.scr sets: the same root image boots
 *   from either slot, and a kernel upgrade on the device keeps working.
 * - The tree gets RAUC's system.conf (slots by PARTUUID, bootnames A and B), the keyring, the
 *   custom backend that edits rauc.env as boot.scr reads it, and a unit that marks the booted
 *   slot good once boot-complete.target is reached.
 */
#include "bootcfg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "envfile.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "recipe/fstype.h"
#include "recipe/partuuid.h"

#define SELECT "boot/select"
#define BACKEND "usr/lib/mkimage/rauc-ab-boot"
#define KEYRING "etc/rauc/keyring.pem"
#define KEYRING_MAX (1u << 20)

/* U-Boot's legacy image header (include/image.h): a script is type 6, uncompressed. */
#define UIMAGE_MAGIC 0x27051956u
#define UIMAGE_HEADER 64
enum { IH_OS_LINUX = 5, IH_TYPE_SCRIPT = 6, IH_COMP_NONE = 0 };

void bootcfg_ab_root(struct buf *out)
{
	buf_adds(out, "PARTUUID=${mkimage_slot_partuuid}");
}

void bootcfg_ab_parameters(const struct recipe *r, struct buf *params)
{
	const char *cmdline = r->disk.cmdline ? r->disk.cmdline : "";

	buf_addf(params, "%srauc.slot=${mkimage_slot}", params->len ? " " : "");
	/* a kernel or initramfs panic reboots, so that U-Boot counts the attempt */
	if (!strstr(cmdline, "panic="))
		buf_adds(params, " panic=10");
}

/* U-Boot's number of a partition: its place among those in the table, from 1. */
static unsigned table_number(const struct recipe *r, size_t idx)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i <= idx; i++)
		n += r->disk.partitions[i].table_entry != 0;
	return n;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static unsigned char uimage_arch(const char *arch)
{
	if (!strcmp(arch, "arm64"))
		return 22;
	if (!strcmp(arch, "riscv64"))
		return 26;
	return 2; /* armhf, armel: the only others U-Boot's extlinux boots in mkimage's recipes */
}

/*
 * `text` as U-Boot's `source` reads a legacy script image (what `mkimage -T script` writes):
 * the header, then the one component's length and a 0 ending the list, then the text. The
 * time is SOURCE_DATE_EPOCH's, so the bytes are the recipe's.
 */
void bootcfg_ab_script_image(const char *text, const char *arch, int64_t sde, struct buf *out)
{
	size_t len = strlen(text);
	unsigned char h[UIMAGE_HEADER] = { 0 }, lens[8] = { 0 };
	uLong dcrc = crc32(0L, Z_NULL, 0);

	put_be32(lens, (uint32_t)len);
	dcrc = crc32(dcrc, lens, sizeof(lens));
	dcrc = crc32(dcrc, (const Bytef *)text, (uInt)len);
	put_be32(h, UIMAGE_MAGIC);
	put_be32(h + 8, (uint32_t)(sde < 0 ? 0 : sde));
	put_be32(h + 12, (uint32_t)(sizeof(lens) + len));
	put_be32(h + 24, (uint32_t)dcrc);
	h[28] = IH_OS_LINUX;
	h[29] = uimage_arch(arch);
	h[30] = IH_TYPE_SCRIPT;
	h[31] = IH_COMP_NONE;
	memcpy(h + 32, "mkimage A/B boot selection", 26);
	put_be32(h + 4, (uint32_t)crc32(crc32(0L, Z_NULL, 0), h, sizeof(h)));
	buf_add(out, h, sizeof(h));
	buf_add(out, lens, sizeof(lens));
	buf_add(out, text, len);
}

/*
 * One slot's branch of boot.scr: take an attempt, name the partition U-Boot boots from and the
 * root's PARTUUID (a verified root's slot: its boot partition, and its hash partition too).
 */
static void script_slot(const struct recipe *r, int64_t sde, size_t idx, char name,
			struct buf *out)
{
	int boot = recipe_update_child(r, idx, UPDATE_PART_BOOT);
	char id[37];

	partuuid_partition(r, sde, idx, id);
	buf_addf(out,
		 "if test \"${mkimage_slot}\" = \"%c\"; then\n"
		 "\tsetexpr BOOT_%c_LEFT ${BOOT_%c_LEFT} - 1\n"
		 "\tsetenv mkimage_slot_part %u\n"
		 "\tsetenv mkimage_slot_partuuid %s\n",
		 name, name, name, table_number(r, boot < 0 ? idx : (size_t)boot), id);
	if (boot >= 0)
		bootcfg_abv_script_slot(r, sde, idx, out);
	buf_adds(out, "fi\n");
}

/*
 * boot.scr's text. U-Boot's hush has no functions and its `for` does not split a quoted
 * variable everywhere alike, so the two slots are written out. `env import` names the three
 * variables: whatever else rauc.env holds is never imported into U-Boot's environment.
 */
void bootcfg_ab_script(const struct recipe *r, int64_t sde, struct buf *out)
{
	/* a verified root's slot boots from its own boot partition, which U-Boot reads at / */
	const char *conf = r->update.verity ? "/extlinux/extlinux.conf"
					    : "/boot/extlinux/extlinux.conf";
	size_t slot[2];
	unsigned n = r->update.boot_attempts;

	recipe_update_slots(r, slot, 2);
	buf_addf(out,
		 "# mkimage's A/B boot selection (mkimage(7), Updates): RAUC's boot order and\n"
		 "# attempts, kept in rauc.env on this partition, which RAUC's custom backend edits.\n"
		 "setenv BOOT_ORDER \"A B\"\n"
		 "setenv BOOT_A_LEFT %u\n"
		 "setenv BOOT_B_LEFT %u\n"
		 "setenv mkimage_slot\n"
		 "if load ${devtype} ${devnum}:${distro_bootpart} ${ramdisk_addr_r} rauc.env; then\n"
		 "\tenv import -t ${ramdisk_addr_r} ${filesize} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT\n"
		 "fi\n"
		 "if test \"${BOOT_ORDER}\" = \"B A\"; then\n"
		 "\tif test 0x${BOOT_B_LEFT} -gt 0; then setenv mkimage_slot B\n"
		 "\telif test 0x${BOOT_A_LEFT} -gt 0; then setenv mkimage_slot A; fi\n"
		 "else\n"
		 "\tif test 0x${BOOT_A_LEFT} -gt 0; then setenv mkimage_slot A\n"
		 "\telif test 0x${BOOT_B_LEFT} -gt 0; then setenv mkimage_slot B; fi\n"
		 "fi\n"
		 "if test -z \"${mkimage_slot}\"; then\n"
		 "\techo \"mkimage-ab: no slot has attempts left: %u each again, resetting\"\n"
		 "\tsetenv BOOT_A_LEFT %u\n"
		 "\tsetenv BOOT_B_LEFT %u\n"
		 "\tenv export -t ${ramdisk_addr_r} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT\n"
		 "\tfatwrite ${devtype} ${devnum}:${distro_bootpart} ${ramdisk_addr_r} rauc.env "
		 "${filesize}\n"
		 "\treset\n"
		 "fi\n",
		 n, n, n, n, n);
	script_slot(r, sde, slot[0], 'A', out);
	script_slot(r, sde, slot[1], 'B', out);
	buf_addf(out,
		 "env export -t ${ramdisk_addr_r} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT\n"
		 "fatwrite ${devtype} ${devnum}:${distro_bootpart} ${ramdisk_addr_r} rauc.env "
		 "${filesize}\n"
		 "echo \"mkimage-ab: booting slot ${mkimage_slot} (partition ${mkimage_slot_part}); "
		 "attempts left: A ${BOOT_A_LEFT}, B ${BOOT_B_LEFT}\"\n"
		 "sysboot ${devtype} ${devnum}:${mkimage_slot_part} any ${pxefile_addr_r} "
		 "%s\n"
		 "echo \"mkimage-ab: slot ${mkimage_slot} did not boot (no kernel or "
		 "%s): resetting\"\n"
		 "reset\n", conf, conf);
}

/* Slot B is empty until the first update: no attempts, so U-Boot never tries it before. */
void bootcfg_ab_state(const struct recipe *r, struct buf *out)
{
	buf_addf(out, "BOOT_ORDER=A B\nBOOT_A_LEFT=%u\nBOOT_B_LEFT=0\n", r->update.boot_attempts);
}

void bootcfg_ab_system_conf(const struct recipe *r, int64_t sde, struct buf *out)
{
	const char *fs = fstype_get(r->disk.partitions[r->update.root].format)->name;
	size_t slot[2], i;
	char id[37];

	recipe_update_slots(r, slot, 2);
	buf_addf(out,
		 "# RAUC's system configuration, written by mkimage from the recipe's disk and\n"
		 "# update groups (mkimage(7), Updates).\n"
		 "[system]\n"
		 "compatible=%s\n"
		 "bootloader=custom\n"
		 "bundle-formats=-plain\n"
		 "\n"
		 "[keyring]\n"
		 "path=/" KEYRING "\n"
		 "\n"
		 "[handlers]\n"
		 "bootloader-custom-backend=/" BACKEND "\n",
		 r->update.compatible);
	for (i = 0; i < 2; i++) {
		if (r->update.verity) {
			bootcfg_abv_system_slot(r, sde, i, slot[i], out);
			continue;
		}
		partuuid_partition(r, sde, slot[i], id);
		buf_addf(out, "\n[slot.rootfs.%zu]\ndevice=/dev/disk/by-partuuid/%s\ntype=%s\n"
			      "bootname=%c\n", i, id, fs, (char)('A' + i));
	}
}

/*
 * RAUC's custom backend (integration.rst, "Custom"): get-primary, set-primary, get-state,
 * set-state and get-current over rauc.env, with the meaning RAUC's own U-Boot backend gives
 * those variables: good is the attempts given back, bad is none left, the primary is the
 * first slot in the order with attempts left.
 */
static const char backend_text[] =
	"#!/bin/sh\n"
	"# RAUC's custom boot loader backend, written by mkimage (mkimage(7), Updates): the boot\n"
	"# order and attempts that U-Boot's boot.scr reads, in rauc.env on /boot/select.\n"
	"set -eu\n"
	"env=/boot/select/rauc.env\n"
	"attempts=@ATTEMPTS@\n"
	"BOOT_ORDER=\"A B\" BOOT_A_LEFT=$attempts BOOT_B_LEFT=$attempts\n"
	"die() { echo \"rauc-ab-boot: $*\" >&2; exit 1; }\n"
	"# Only the three names, each only with a value boot.scr could have written.\n"
	"if [ -f \"$env\" ]; then\n"
	"\twhile IFS='=' read -r k v; do\n"
	"\t\tcase $k=$v in\n"
	"\t\tBOOT_ORDER='A B' | BOOT_ORDER='B A') BOOT_ORDER=$v ;;\n"
	"\t\tBOOT_A_LEFT=[0-9]) BOOT_A_LEFT=$v ;;\n"
	"\t\tBOOT_B_LEFT=[0-9]) BOOT_B_LEFT=$v ;;\n"
	"\t\tesac\n"
	"\tdone <<EOF\n"
	"$(tr -d '\\000\\r' <\"$env\")\n"
	"EOF\n"
	"fi\n"
	"left() { if [ \"$1\" = A ]; then echo \"$BOOT_A_LEFT\"; else echo \"$BOOT_B_LEFT\"; fi; }\n"
	"slot() {\n"
	"\tcase ${1:-} in A | B) ;; *) die \"no slot '${1:-}': the bootnames are A and B\" ;; esac\n"
	"}\n"
	"save() {\n"
	"\tprintf 'BOOT_ORDER=%s\\nBOOT_A_LEFT=%s\\nBOOT_B_LEFT=%s\\n' \\\n"
	"\t\t\"$BOOT_ORDER\" \"$BOOT_A_LEFT\" \"$BOOT_B_LEFT\" >\"$env.new\"\n"
	"\tsync \"$env.new\"\n"
	"\tmv -f \"$env.new\" \"$env\"\n"
	"\tsync \"$env\"\n"
	"}\n"
	"set_left() { if [ \"$1\" = A ]; then BOOT_A_LEFT=$2; else BOOT_B_LEFT=$2; fi; }\n"
	"case ${1:-} in\n"
	"get-primary)\n"
	"\tfor s in $BOOT_ORDER; do\n"
	"\t\tif [ \"$(left \"$s\")\" -gt 0 ]; then echo \"$s\"; exit 0; fi\n"
	"\tdone\n"
	"\tdie \"no slot has boot attempts left\" ;;\n"
	"set-primary)\n"
	"\tslot \"${2:-}\"\n"
	"\tif [ \"$2\" = A ]; then BOOT_ORDER=\"A B\"; else BOOT_ORDER=\"B A\"; fi\n"
	"\tset_left \"$2\" \"$attempts\"\n"
	"\tsave ;;\n"
	"get-state)\n"
	"\tslot \"${2:-}\"\n"
	"\tif [ \"$(left \"$2\")\" -gt 0 ]; then echo good; else echo bad; fi ;;\n"
	"set-state)\n"
	"\tslot \"${2:-}\"\n"
	"\tcase ${3:-} in\n"
	"\tgood) set_left \"$2\" \"$attempts\" ;;\n"
	"\tbad) set_left \"$2\" 0 ;;\n"
	"\t*) die \"no state '${3:-}': good or bad\" ;;\n"
	"\tesac\n"
	"\tsave ;;\n"
	"get-current)\n"
	"\tfor w in $(cat /proc/cmdline); do\n"
	"\t\tcase $w in rauc.slot=A | rauc.slot=B) echo \"${w#rauc.slot=}\"; exit 0 ;; esac\n"
	"\tdone\n"
	"\tdie \"the kernel command line names no rauc.slot\" ;;\n"
	"*) die \"usage: rauc-ab-boot get-primary | set-primary S | get-state S |\" \\\n"
	"\t\"set-state S good|bad | get-current\" ;;\n"
	"esac\n";

void bootcfg_ab_backend(const struct recipe *r, struct buf *out)
{
	const char *at = strstr(backend_text, "@ATTEMPTS@");

	buf_add(out, backend_text, (size_t)(at - backend_text));
	buf_addf(out, "%u", r->update.boot_attempts);
	buf_adds(out, at + strlen("@ATTEMPTS@"));
}

/* boot-complete.target is where systemd puts health checks (units Before= it). */
static const char mark_good_unit[] =
	"# Written by mkimage (mkimage(7), Updates): once the boot is complete, the booted slot\n"
	"# gets its attempts back. Health checks go Before=boot-complete.target.\n"
	"[Unit]\n"
	"Description=Mark the booted update slot good\n"
	"Requires=boot-complete.target\n"
	"After=boot-complete.target\n"
	"ConditionKernelCommandLine=rauc.slot\n"
	"\n"
	"[Service]\n"
	"Type=oneshot\n"
	"ExecStart=/usr/bin/rauc status mark-good\n";

static const char mark_good_wants[] =
	"# Written by mkimage: the booted slot is marked good on every boot (mkimage(7), Updates).\n"
	"[Unit]\n"
	"Wants=mkimage-mark-good.service\n";

/* os-release's IMAGE_ID and IMAGE_VERSION (os-release(5)): what runs on the device. */
static void os_release(const struct buf *old, const struct recipe *r, struct buf *out)
{
	const char *p = old->p ? old->p : "", *end;
	size_t n;

	for (; *p; p = end) {
		end = p + strcspn(p, "\n");
		end += *end == '\n';
		n = (size_t)(end - p);
		if (strncmp(p, "IMAGE_ID=", 9) && strncmp(p, "IMAGE_VERSION=", 14))
			buf_add(out, p, n);
	}
	if (out->len && out->p[out->len - 1] != '\n')
		buf_adds(out, "\n");
	buf_adds(out, "IMAGE_ID=");
	envfile_quote(r->name, out);
	buf_adds(out, "\nIMAGE_VERSION=");
	envfile_quote(r->update.version, out);
	buf_adds(out, "\n");
}

int bootcfg_ab_put(struct staging_writer *w, const char *rel, const struct buf *b, uint32_t mode)
{
	char *dir = xstrndup(rel, (size_t)(strrchr(rel, '/') - rel));
	int ret = staging_mkdirs(w, dir);

	free(dir);
	if (!ret)
		ret = staging_write_file(w, rel, b->p, b->len, mode);
	return ret ? -MKI_E_IMAGE : 0;
}

static int put_text(struct staging_writer *w, const char *rel, const char *text, uint32_t mode)
{
	struct buf b = { 0 };
	int ret;

	buf_adds(&b, text);
	ret = bootcfg_ab_put(w, rel, &b, mode);
	buf_release(&b);
	return ret;
}

static int write_keyring(struct staging_writer *w, const struct recipe *r)
{
	struct buf b = { 0 };
	const char *kind = NULL;
	int ret = readfile_read(r->update.keyring, KEYRING_MAX, &b, &kind);

	if (ret < 0) {
		log_error("%s: cannot read update.keyring '%s'%s%s: %s", r->file, r->update.keyring,
			  kind ? ": " : "", kind ? kind : "", strerror(-ret));
		buf_release(&b);
		return -MKI_E_IMAGE;
	}
	ret = bootcfg_ab_put(w, KEYRING, &b, 0644);
	buf_release(&b);
	return ret;
}

static int write_select(struct staging_writer *w, const struct recipe *r, int64_t sde)
{
	struct buf text = { 0 }, img = { 0 };
	int ret;

	bootcfg_ab_script(r, sde, &text);
	bootcfg_ab_script_image(text.p, r->arch, sde, &img);
	ret = bootcfg_ab_put(w, SELECT "/boot.scr", &img, 0644);
	buf_release(&text);
	bootcfg_ab_state(r, &text);
	if (!ret)
		ret = bootcfg_ab_put(w, SELECT "/rauc.env", &text, 0644);
	buf_release(&text);
	buf_release(&img);
	return ret;
}

static int write_rauc(struct staging_writer *w, const struct recipe *r, int64_t sde)
{
	struct buf b = { 0 };
	int ret;

	bootcfg_ab_system_conf(r, sde, &b);
	ret = bootcfg_ab_put(w, "etc/rauc/system.conf", &b, 0644);
	buf_release(&b);
	if (!ret)
		ret = write_keyring(w, r);
	/* systemd-boot's backend knows the ESP and the entry token: bootcfg_ab_sdboot_write() */
	if (r->disk.bootloader == DISK_BOOT_EXTLINUX)
		bootcfg_ab_backend(r, &b);
	if (!ret && b.len)
		ret = bootcfg_ab_put(w, BACKEND, &b, 0755);
	buf_release(&b);
	if (!ret && r->update.verity) {
		bootcfg_abv_udev_rule(r, sde, &b);
		ret = bootcfg_ab_put(w, "etc/udev/rules.d/61-mkimage-slot-boot.rules", &b, 0644);
		buf_release(&b);
	}
	if (!ret)
		ret = put_text(w, "etc/systemd/system/mkimage-mark-good.service", mark_good_unit, 0644);
	if (!ret)
		ret = put_text(w, "etc/systemd/system/multi-user.target.d/mkimage-mark-good.conf",
			       mark_good_wants, 0644);
	return ret;
}

int bootcfg_ab_write(struct staging_writer *w, const struct recipe *r, int64_t sde,
		     const struct buf *os_release_text, const char *os_release_path)
{
	struct buf b = { 0 };
	int sdboot = r->disk.bootloader == DISK_BOOT_SYSTEMD_BOOT;
	int ret = sdboot ? 0 : write_select(w, r, sde);

	if (!ret)
		ret = write_rauc(w, r, sde);
	os_release(os_release_text, r, &b);
	if (!ret && os_release_path)
		ret = bootcfg_ab_put(w, os_release_path, &b, 0644);
	buf_release(&b);
	if (!ret && sdboot)
		log_info("boot: A/B selection by systemd-boot's entries on the ESP, RAUC's "
			 "system.conf with slots A and B, %u boot attempts for a new slot",
			 r->update.boot_attempts);
	else if (!ret)
		log_info("boot: A/B selection on '/" SELECT "' (boot.scr, rauc.env), RAUC's "
			 "system.conf with slots A and B, %u boot attempts for a new slot",
			 r->update.boot_attempts);
	return ret;
}
