/*
 * The A/B selection with systemd-boot (bootcfg_ab_sdboot.c): each slot's kernel command line,
 * and the RAUC backend run by /bin/sh over an ESP as systemd-boot and the booted system leave
 * it: set-primary copying the slot's newest kernel, the counter systemd-boot takes tries from,
 * set-state good dropping it, an entry out of tries bad. Test 123 boots all of it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "configure/bootcfg.h"
#include "lib/fsutil.h"
#include "lib/str.h"
#include "recipe/partuuid.h"

static char n_esp[] = "esp", n_a[] = "root-a", n_b[] = "root-b", t_esp[] = "esp",
	    t_root[] = "root", p_esp[] = "boot/efi", name[] = "pc", arch[] = "amd64",
	    compat[] = "acme-pc", version[] = "7", console[] = "ttyS0", cmdline[] = "ro quiet";
static struct recipe_partition parts[3];
static struct recipe rec;
static char work[64];

/* esp (/boot/efi), root-a (the root), root-b */
static void setup(void)
{
	memset(parts, 0, sizeof(parts));
	memset(&rec, 0, sizeof(rec));
	parts[0] = (struct recipe_partition){ .name = n_esp, .type = t_esp, .path = p_esp,
		.contents = PART_SUBTREE, .format = PART_FS_VFAT, .table_entry = 1 };
	parts[1] = (struct recipe_partition){ .name = n_a, .type = t_root, .contents = PART_ROOT,
		.format = PART_FS_EXT4, .table_entry = 1 };
	parts[2] = (struct recipe_partition){ .name = n_b, .type = t_root, .contents = PART_EMPTY,
		.format = PART_FS_EXT4, .table_entry = 1 };
	rec.name = name;
	rec.arch = arch;
	rec.disk.set = 1;
	rec.disk.bootloader = DISK_BOOT_SYSTEMD_BOOT;
	rec.disk.partitions = parts;
	rec.disk.n_partitions = 3;
	rec.update.set = 1;
	rec.update.compatible = compat;
	rec.update.version = version;
	rec.update.root = 1;
	rec.update.select = 0;
	rec.update.boot_attempts = 2;
	strv_push(&rec.update.slots, n_a);
	strv_push(&rec.update.slots, n_b);
}

static void teardown(void)
{
	strv_release(&rec.update.slots);
}

/* Each slot's root by its PARTUUID, its bootname, the recipe's console and cmdline kept. */
START_TEST(options)
{
	struct buf b = { 0 }, want = { 0 };
	char id[37];
	size_t k;

	setup();
	rec.disk.console = console;
	rec.disk.cmdline = cmdline;
	for (k = 0; k < 2; k++) {
		partuuid_partition(&rec, 0, k + 1, id);
		buf_addf(&want, "root=PARTUUID=%s console=ttyS0 ro quiet rauc.slot=%c panic=10", id,
			 (char)('A' + k));
		bootcfg_ab_sdboot_options(&rec, 0, k, &b);
		ck_assert_str_eq(b.p, want.p);
		buf_release(&b);
		buf_release(&want);
	}
	rec.disk.cmdline = NULL;
	rec.disk.console = NULL;
	bootcfg_ab_sdboot_options(&rec, 0, 1, &b);
	ck_assert_ptr_nonnull(strstr(b.p, " rauc.slot=B panic=10"));
	buf_release(&b);
	teardown();
}
END_TEST

/*
 * systemd-boot's backend (bootcfg_ab_sdboot.c) over work/esp, with work/cmdline as the kernel's
 * command line and work/root as the slot set-primary reads (the booted one: never mounted).
 */
static int sdboot(const char *args, char *out, size_t size)
{
	struct buf text = { 0 }, t2 = { 0 };
	char *script = xasprintf("%s/backend", work), *cmd;
	const char *from[] = { "esp=/boot/efi\n", "/proc/cmdline", "\troot=/\n" };
	char *to[3];
	FILE *f;
	size_t n, i;
	int st;

	to[0] = xasprintf("esp=%s/esp\n", work);
	to[1] = xasprintf("%s/cmdline", work);
	to[2] = xasprintf("\troot=%s/root\n", work);
	bootcfg_ab_sdboot_backend(&rec, 0, "boot/efi", "debian", &text);
	for (i = 0; i < 3; i++) {
		char *at = strstr(text.p, from[i]);

		ck_assert_ptr_nonnull(at);
		buf_add(&t2, text.p, (size_t)(at - text.p));
		buf_adds(&t2, to[i]);
		buf_adds(&t2, at + strlen(from[i]));
		buf_release(&text);
		text = t2;
		memset(&t2, 0, sizeof(t2));
		free(to[i]);
	}
	f = fopen(script, "w");
	fputs(text.p, f);
	fclose(f);
	cmd = xasprintf("/bin/sh %s %s 2>/dev/null", script, args);
	f = popen(cmd, "r");
	n = fread(out, 1, size - 1, f);
	out[n] = 0;
	st = pclose(f);
	free(cmd);
	free(script);
	buf_release(&text);
	return WEXITSTATUS(st);
}

static int exists_in(const char *rel)
{
	char *p = xasprintf("%s/%s", work, rel);
	int ret = access(p, F_OK) == 0;

	free(p);
	return ret;
}

static void put_file(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", work, rel);

	ck_assert_int_eq(fsutil_write_atomic(p, text, strlen(text)), 0);
	free(p);
}

START_TEST(sdboot_cycle)
{
	char out[256], *cmd;

	setup();
	snprintf(work, sizeof(work), "/tmp/test-sdb-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(work));
	cmd = xasprintf("mkdir -p %s/esp/loader/entries %s/root/boot %s/root/etc", work, work, work);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	/* the factory disk: slot A's entry, good; B none */
	put_file("esp/loader/entries/debian-A.conf", "title x\nsort-key   debian-ab-1\n");
	put_file("cmdline", "root=PARTUUID=x rauc.slot=B quiet\n");
	ck_assert_int_eq(sdboot("get-primary", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "A\n");
	ck_assert_int_eq(sdboot("get-state B", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "bad\n");
	ck_assert_int_eq(sdboot("get-current", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "B\n");
	/* a slot without a kernel cannot be made primary */
	ck_assert_int_eq(sdboot("set-primary B", out, sizeof(out)), 1);
	/* slot B's kernel (the newest) and initrd, its entry first with 2 tries */
	put_file("root/boot/vmlinuz-6.1.0-9-amd64", "old");
	put_file("root/boot/vmlinuz-6.1.0-10-amd64", "kernel");
	put_file("root/boot/initrd.img-6.1.0-10-amd64", "initrd");
	put_file("root/etc/os-release", "PRETTY_NAME=\"Debian $(touch /tmp/test-sdb-owned)\"\n");
	ck_assert_int_eq(sdboot("set-primary B", out, sizeof(out)), 0);
	ck_assert(exists_in("esp/loader/entries/debian-B+2.conf"));
	ck_assert(exists_in("esp/debian/B/linux") && exists_in("esp/debian/B/initrd.img-6.1.0-10-amd64"));
	ck_assert_int_ne(access("/tmp/test-sdb-owned", F_OK), 0);
	cmd = xasprintf("grep -qx 'sort-key   debian-ab-2' %s/esp/loader/entries/debian-A.conf && "
			"grep -qx 'options    root=PARTUUID=%s rauc.slot=B panic=10' "
			"%s/esp/loader/entries/debian-B+2.conf && grep -qx 'linux      /debian/B/linux' "
			"%s/esp/loader/entries/debian-B+2.conf && grep -qx 'initrd     "
			"/debian/B/initrd.img-6.1.0-10-amd64' %s/esp/loader/entries/debian-B+2.conf",
			work, "@B@", work, work, work);
	{
		char id[37], *at = strstr(cmd, "@B@"), *c2;

		partuuid_partition(&rec, 0, 2, id);
		c2 = xasprintf("%.*s%s%s", (int)(at - cmd), cmd, id, at + 3);
		free(cmd);
		cmd = c2;
	}
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	ck_assert_int_eq(sdboot("get-primary", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "B\n");
	/* systemd-boot took a try; the booted system marks B good: the counter goes */
	cmd = xasprintf("mv %s/esp/loader/entries/debian-B+2.conf %s/esp/loader/entries/debian-B+1-1.conf",
			work, work);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	ck_assert_int_eq(sdboot("get-state B", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "good\n");
	ck_assert_int_eq(sdboot("set-state B good", out, sizeof(out)), 0);
	ck_assert(exists_in("esp/loader/entries/debian-B.conf"));
	ck_assert(!exists_in("esp/loader/entries/debian-B+1-1.conf"));
	ck_assert_int_eq(sdboot("set-state B good", out, sizeof(out)), 0); /* blessed already */
	/* A out of tries (as systemd-boot leaves it): bad, and B primary although ranked second */
	cmd = xasprintf("mv %s/esp/loader/entries/debian-A.conf %s/esp/loader/entries/debian-A+0-2.conf",
			work, work);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	ck_assert_int_eq(sdboot("get-state A", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "bad\n");
	ck_assert_int_eq(sdboot("get-primary", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "B\n");
	ck_assert_int_eq(sdboot("set-state B bad", out, sizeof(out)), 0);
	ck_assert(exists_in("esp/loader/entries/debian-B+0.conf"));
	ck_assert_int_eq(sdboot("get-primary", out, sizeof(out)), 1);
	ck_assert_int_eq(sdboot("set-primary C", out, sizeof(out)), 1);
	ck_assert_int_eq(sdboot("set-state A fine", out, sizeof(out)), 1);
	ck_assert_int_eq(sdboot("reboot", out, sizeof(out)), 1);
	ck_assert_int_eq(fsutil_remove_tree(work), 0);
	teardown();
}
END_TEST

Suite *bootcfg_ab_sdboot_suite(void)
{
	Suite *s = suite_create("bootcfg_ab_sdboot");
	TCase *tc = tcase_create("bootcfg_ab_sdboot");

	tcase_add_test(tc, options);
	tcase_add_test(tc, sdboot_cycle);
	suite_add_tcase(s, tc);
	return s;
}
