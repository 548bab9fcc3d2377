/*
 * A root verified by dm-verity on a real tree (bootcfg_verity.c and the entry's root hash): the
 * initramfs hook and script written for it alone, the kernels' modules it needs, the entry
 * written again with the root hash and nothing on the root touched.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/bootcfg.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "recipe/partuuid.h"

#include "bootcfg_fixture.h"

/* setup's recipe with its root (the last partition) squashfs, verified by a partition after it. */
static void add_verity(void)
{
	static char n_hash[] = "root-verity", t_hash[] = "root-verity";
	size_t root = rec.disk.n_partitions - 1;

	parts[root].format = PART_FS_SQUASHFS;
	parts[root + 1] = (struct recipe_partition){ .name = n_hash, .type = t_hash,
		.contents = PART_VERITY, .verity_of = root, .table_entry = 1 };
	rec.disk.n_partitions++;
}

static int prepare(struct staging *s)
{
	int rootfd = open(dir, O_PATH | O_DIRECTORY), ret;

	ret = bootcfg_prepare(s, &rec, rootfd, 1700000000);
	close(rootfd);
	return ret;
}

/* The initramfs hook and script: written for a verified root only, executable, recorded. */
START_TEST(verity_prepare)
{
	struct staging s = { 0 };
	char *p = NULL, *text;
	struct stat sb;

	setup(DISK_BOOT_EXTLINUX, 1, 0);
	ck_assert_int_eq(prepare(&s), 0);
	p = xasprintf("%s/etc/initramfs-tools", dir);
	ck_assert_int_ne(access(p, F_OK), 0); /* not verified: nothing */
	add_verity();
	ck_assert_int_eq(prepare(&s), 0);
	text = get("etc/initramfs-tools/hooks/mkimage-verity");
	ck_assert_ptr_nonnull(strstr(text, "manual_add_modules dm-verity squashfs\n"));
	free(text);
	text = get("etc/initramfs-tools/scripts/local-top/mkimage-verity");
	ck_assert_ptr_nonnull(strstr(text, "veritysetup open \"/dev/disk/by-partuuid/$data\" root"));
	free(text);
	free(p);
	p = xasprintf("%s/etc/initramfs-tools/scripts/local-top/mkimage-verity", dir);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0755);
	ck_assert_ptr_nonnull(manifest_get(&s.manifest, "etc/initramfs-tools/hooks/mkimage-verity"));
	free(p);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

static int check_kernels(void)
{
	struct staging s = { 0 };

	s.root = dir;
	return bootcfg_check_kernels(&s, &rec);
}

/* Each kernel needs dm-verity and squashfs, as a module of any compression or built in. */
START_TEST(verity_kernel_modules)
{
	static const char k[] = "usr/lib/modules/6.1.0-13-amd64";
	char *p;

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_EXTLINUX, 1, 0);
	p = xasprintf("%s/kernel/drivers/md/dm-verity.ko.xz", k);
	put(p, "module");
	free(p);
	ck_assert_int_eq(check_kernels(), 0); /* not verified: not checked */
	add_verity();
	ck_assert_int_eq(check_kernels(), -MKI_E_IMAGE); /* no squashfs */
	p = xasprintf("%s/modules.builtin", k);
	put(p, "kernel/fs/squashfs/squashfs.ko.old\nkernel/fs/squashfs/squashfs.ko\n");
	free(p);
	ck_assert_int_eq(check_kernels(), 0);
	p = xasprintf("%s/kernel/drivers/md/dm-verity-fec.ko", k);
	put(p, "not the module");
	free(p);
	p = xasprintf("%s/%s/kernel/drivers/md/dm-verity.ko.xz", dir, k);
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	ck_assert_int_eq(check_kernels(), -MKI_E_IMAGE); /* dm-verity-fec is not dm-verity */
	/* without merged /usr: /lib/modules */
	p = xasprintf("%s/usr", dir);
	ck_assert_int_eq(fsutil_remove_tree(p), 0);
	free(p);
	put("lib/modules/6.1.0-13-amd64/kernel/fs/squashfs/squashfs.ko", "module");
	ck_assert_int_eq(check_kernels(), -MKI_E_IMAGE);
	put("lib/modules/6.1.0-13-amd64/kernel/drivers/md/dm-verity.ko", "module");
	ck_assert_int_eq(check_kernels(), 0);
	teardown();
}
END_TEST

/* Once the root hash is known: the entry carries it, the root's own files are left as they were. */
START_TEST(verity_roothash)
{
	struct settings st = { 0 };
	struct staging s = { 0 };
	char *text, root[37], hash[37];
	int rootfd;

	setup(DISK_BOOT_EXTLINUX, 1, 0);
	add_verity();
	ck_assert_int_eq(run(&s), 0);
	partuuid_partition(&rec, 1700000000, 1, root);
	partuuid_partition(&rec, 1700000000, 2, hash);
	text = get("boot/extlinux/extlinux.conf");
	ck_assert_ptr_null(strstr(text, "mkimage.roothash="));
	free(text);
	st.source_date_epoch = 1700000000;
	rootfd = open(dir, O_PATH | O_DIRECTORY);
	ck_assert_int_eq(bootcfg_write_roothash(&s, &rec, rootfd, &st, "ab12"), 0);
	close(rootfd);
	text = get("boot/extlinux/extlinux.conf");
	ck_assert_ptr_nonnull(strstr(text, "append root=/dev/mapper/root rootfstype=squashfs "
					   "mkimage.verity_data=PARTUUID="));
	ck_assert_ptr_nonnull(strstr(text, root));
	ck_assert_ptr_nonnull(strstr(text, hash));
	ck_assert_ptr_nonnull(strstr(text, " mkimage.roothash=ab12 console=ttyS0,115200"));
	ck_assert_int_eq(manifest_get(&s.manifest, "boot/extlinux/extlinux.conf")->size,
			 strlen(text)); /* the manifest the disk writer reads has the new size */
	free(text);
	text = get("etc/default/u-boot");
	ck_assert_ptr_null(strstr(text, "roothash")); /* on the root, which is hashed already */
	free(text);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

Suite *bootcfg_verity_suite(void)
{
	Suite *s = suite_create("bootcfg_verity");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, verity_prepare);
	tcase_add_test(tc, verity_kernel_modules);
	tcase_add_test(tc, verity_roothash);
	suite_add_tcase(s, tc);
	return s;
}
