/*
 * The A/B boot selection's texts (bootcfg_ab.c): boot.scr as U-Boot's `source` reads a legacy
 * script image, the partitions and PARTUUIDs it boots, RAUC's system.conf, and the custom
 * backend run by /bin/sh over a rauc.env as U-Boot and a hostile root could leave it. Test 129
 * boots all of it.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "configure/bootcfg.h"
#include "lib/fsutil.h"
#include "lib/str.h"
#include "recipe/partuuid.h"

static char n_spl[] = "spl", n_boot[] = "boot", n_a[] = "root-a", n_b[] = "root-b",
	    t_linux[] = "linux", t_root[] = "root", p_select[] = "boot/select", name[] = "board",
	    arch[] = "armhf", compat[] = "acme-board", version[] = "7";
static struct recipe_partition parts[4];
static struct recipe rec;

/* spl (outside the table), boot (/boot/select), root-a (the root), root-b */
static void setup(void)
{
	memset(parts, 0, sizeof(parts));
	memset(&rec, 0, sizeof(rec));
	parts[0] = (struct recipe_partition){ .name = n_spl, .type = t_linux, .table_entry = 0 };
	parts[1] = (struct recipe_partition){ .name = n_boot, .type = t_linux, .path = p_select,
		.contents = PART_SUBTREE, .format = PART_FS_VFAT, .table_entry = 1 };
	parts[2] = (struct recipe_partition){ .name = n_a, .type = t_root, .contents = PART_ROOT,
		.format = PART_FS_EXT4, .table_entry = 1 };
	parts[3] = (struct recipe_partition){ .name = n_b, .type = t_root, .contents = PART_EMPTY,
		.format = PART_FS_EXT4, .table_entry = 1 };
	rec.name = name;
	rec.arch = arch;
	rec.disk.set = 1;
	rec.disk.bootloader = DISK_BOOT_EXTLINUX;
	rec.disk.partitions = parts;
	rec.disk.n_partitions = 4;
	rec.update.set = 1;
	rec.update.compatible = compat;
	rec.update.version = version;
	rec.update.root = 2;
	rec.update.select = 1;
	rec.update.boot_attempts = 3;
	strv_push(&rec.update.slots, n_a);
	strv_push(&rec.update.slots, n_b);
}

static void teardown(void)
{
	strv_release(&rec.update.slots);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

START_TEST(script_image)
{
	static const char text[] = "echo hi\n";
	struct buf b = { 0 };
	unsigned char h[64];
	const unsigned char *d;

	bootcfg_ab_script_image(text, "armhf", 1700000000, &b);
	d = (const unsigned char *)b.p;
	ck_assert_uint_eq(b.len, 64 + 8 + strlen(text));
	ck_assert_uint_eq(be32(d), 0x27051956u);
	ck_assert_uint_eq(be32(d + 8), 1700000000u);
	ck_assert_uint_eq(be32(d + 12), 8 + strlen(text));
	ck_assert_uint_eq(be32(d + 24), crc32(0, d + 64, (uInt)(b.len - 64)));
	ck_assert_uint_eq(d[28], 5);  /* Linux */
	ck_assert_uint_eq(d[29], 2);  /* ARM */
	ck_assert_uint_eq(d[30], 6);  /* script */
	ck_assert_uint_eq(d[31], 0);  /* uncompressed */
	memcpy(h, d, sizeof(h));
	memset(h + 4, 0, 4);
	ck_assert_uint_eq(be32(d + 4), crc32(0, h, sizeof(h)));
	ck_assert_uint_eq(be32(d + 64), strlen(text)); /* the one component, then the 0 */
	ck_assert_uint_eq(be32(d + 68), 0);
	ck_assert_int_eq(memcmp(d + 72, text, strlen(text)), 0);
	buf_release(&b);
	bootcfg_ab_script_image(text, "arm64", -1, &b);
	ck_assert_uint_eq(((const unsigned char *)b.p)[29], 22);
	ck_assert_uint_eq(be32((const unsigned char *)b.p + 8), 0);
	buf_release(&b);
}
END_TEST

/* U-Boot's partition numbers skip what is outside the table; the PARTUUIDs are the disk's. */
START_TEST(script_slots)
{
	struct buf b = { 0 };
	char id[37], *want;

	setup();
	bootcfg_ab_script(&rec, 1700000000, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "setenv BOOT_A_LEFT 3\n"));
	partuuid_partition(&rec, 1700000000, 2, id);
	want = xasprintf("setexpr BOOT_A_LEFT ${BOOT_A_LEFT} - 1\n\tsetenv mkimage_slot_part 2\n"
			 "\tsetenv mkimage_slot_partuuid %s\n", id);
	ck_assert_msg(strstr(b.p, want), "%s", b.p);
	free(want);
	partuuid_partition(&rec, 1700000000, 3, id);
	want = xasprintf("setenv mkimage_slot_part 3\n\tsetenv mkimage_slot_partuuid %s\n", id);
	ck_assert_ptr_nonnull(strstr(b.p, want));
	free(want);
	ck_assert_ptr_nonnull(strstr(b.p, "env import -t ${ramdisk_addr_r} ${filesize} BOOT_ORDER "
				     "BOOT_A_LEFT BOOT_B_LEFT\n"));
	buf_release(&b);
	bootcfg_ab_state(&rec, &b);
	ck_assert_str_eq(b.p, "BOOT_ORDER=A B\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n");
	buf_release(&b);
	teardown();
}
END_TEST

START_TEST(system_conf)
{
	struct buf b = { 0 };
	char id[37], *want;

	setup();
	bootcfg_ab_system_conf(&rec, 1700000000, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "[system]\ncompatible=acme-board\nbootloader=custom\n"));
	ck_assert_ptr_nonnull(strstr(b.p, "[keyring]\npath=/etc/rauc/keyring.pem\n"));
	ck_assert_ptr_nonnull(strstr(b.p, "bootloader-custom-backend=/usr/lib/mkimage/rauc-ab-boot\n"));
	partuuid_partition(&rec, 1700000000, 3, id);
	want = xasprintf("[slot.rootfs.1]\ndevice=/dev/disk/by-partuuid/%s\ntype=ext4\nbootname=B\n", id);
	ck_assert_msg(strstr(b.p, want), "%s", b.p);
	free(want);
	buf_release(&b);
	teardown();
}
END_TEST

START_TEST(parameters)
{
	struct buf b = { 0 };
	static char own[] = "quiet panic=-1";

	setup();
	buf_adds(&b, "console=ttyAMA0");
	bootcfg_ab_parameters(&rec, &b);
	ck_assert_str_eq(b.p, "console=ttyAMA0 rauc.slot=${mkimage_slot} panic=10");
	buf_release(&b);
	rec.disk.cmdline = own;
	buf_adds(&b, own);
	bootcfg_ab_parameters(&rec, &b);
	ck_assert_str_eq(b.p, "quiet panic=-1 rauc.slot=${mkimage_slot}");
	buf_release(&b);
	teardown();
}
END_TEST

static char work[64];

/*
 * Run the backend with ARGS over work/rauc.env holding `env` as U-Boot's `env export -t` leaves
 * it, a NUL at its end (NULL: the file as it is); its stdout and exit status.
 */
static int backend(const char *env, const char *args, char *out, size_t size)
{
	struct buf text = { 0 };
	char *script = xasprintf("%s/backend", work), *envf = xasprintf("%s/rauc.env", work);
	char *cmd, *at;
	FILE *f;
	size_t n;
	int st;

	bootcfg_ab_backend(&rec, &text);
	at = strstr(text.p, "/boot/select/rauc.env");
	ck_assert_ptr_nonnull(at);
	f = fopen(script, "w");
	fprintf(f, "%.*s%s%s", (int)(at - text.p), text.p, envf, at + strlen("/boot/select/rauc.env"));
	fclose(f);
	if (env)
		ck_assert_int_eq(fsutil_write_atomic(envf, env, strlen(env) + 1), 0);
	cmd = xasprintf("/bin/sh %s %s 2>/dev/null", script, args);
	f = popen(cmd, "r");
	n = fread(out, 1, size - 1, f);
	out[n] = 0;
	st = pclose(f);
	free(cmd);
	free(script);
	free(envf);
	buf_release(&text);
	return WEXITSTATUS(st);
}

static char *state(void)
{
	char *p = xasprintf("%s/rauc.env", work), *s = xcalloc(1, 256);
	FILE *f = fopen(p, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_gt(fread(s, 1, 255, f), 0);
	fclose(f);
	free(p);
	return s;
}

START_TEST(backend_cycle)
{
	char out[256], *s;

	setup();
	snprintf(work, sizeof(work), "/tmp/test-ab-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(work));
	/* no file yet: U-Boot's defaults */
	ck_assert_int_eq(backend(NULL, "get-primary", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "A\n");
	/* RAUC installing into B: B bad, then B primary with its attempts */
	ck_assert_int_eq(backend(NULL, "set-state B bad", out, sizeof(out)), 0);
	ck_assert_int_eq(backend(NULL, "get-state B", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "bad\n");
	ck_assert_int_eq(backend(NULL, "set-primary B", out, sizeof(out)), 0);
	s = state();
	ck_assert_str_eq(s, "BOOT_ORDER=B A\nBOOT_A_LEFT=3\nBOOT_B_LEFT=3\n");
	free(s);
	/* U-Boot took two of B's attempts (env export's text, a NUL at its end) */
	ck_assert_int_eq(backend("BOOT_A_LEFT=3\nBOOT_B_LEFT=1\nBOOT_ORDER=B A\n", "get-state B",
				 out, sizeof(out)), 0);
	ck_assert_str_eq(out, "good\n");
	ck_assert_int_eq(backend(NULL, "set-state B good", out, sizeof(out)), 0);
	s = state();
	ck_assert_str_eq(s, "BOOT_ORDER=B A\nBOOT_A_LEFT=3\nBOOT_B_LEFT=3\n");
	free(s);
	/* B used up: the primary is A, as boot.scr would boot it */
	ck_assert_int_eq(backend("BOOT_ORDER=B A\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n", "get-primary",
				 out, sizeof(out)), 0);
	ck_assert_str_eq(out, "A\n");
	ck_assert_int_eq(backend("BOOT_ORDER=B A\nBOOT_A_LEFT=0\nBOOT_B_LEFT=0\n", "get-primary",
				 out, sizeof(out)), 1);
	/* what boot.scr could not have written is not taken, nor run */
	ck_assert_int_eq(backend("BOOT_ORDER=$(touch /tmp/test-ab-owned)\nBOOT_A_LEFT=0x\n"
				 "BOOT_B_LEFT=12\nBOOT_ORDER=C A\n", "get-primary", out,
				 sizeof(out)), 0);
	ck_assert_str_eq(out, "A\n");
	ck_assert_int_ne(access("/tmp/test-ab-owned", F_OK), 0);
	ck_assert_int_eq(backend(NULL, "set-primary C", out, sizeof(out)), 1);
	ck_assert_int_eq(backend(NULL, "set-state A fine", out, sizeof(out)), 1);
	ck_assert_int_eq(backend(NULL, "reboot", out, sizeof(out)), 1);
	ck_assert_int_eq(fsutil_remove_tree(work), 0);
	teardown();
}
END_TEST

Suite *bootcfg_ab_suite(void)
{
	Suite *s = suite_create("bootcfg_ab");
	TCase *tc = tcase_create("bootcfg_ab");

	tcase_add_test(tc, script_image);
	tcase_add_test(tc, script_slots);
	tcase_add_test(tc, system_conf);
	tcase_add_test(tc, parameters);
	tcase_add_test(tc, backend_cycle);
	suite_add_tcase(s, tc);
	return s;
}
