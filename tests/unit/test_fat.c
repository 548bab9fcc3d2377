/*
 * The FAT format end to end: a subtree of a staging tree written as FAT12, FAT16 and FAT32,
 * each clean for fsck.vfat and read back with mtools (bytes, long names, the label and id);
 * the same bytes twice; a disk's region written without a byte outside it; and every input
 * FAT cannot hold refused with a message naming the path.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>

#include "image/fat.h"
#include "image/sink.h"
#include "image_fixture.h"
#include "lib/err.h"

#define MIB (1ull << 20)

static struct fixture fx;
static char ext4[] = "ext4";
static char *img;

/*
 * The image fixture plus boot/efi: nested directories, long and non-ASCII names, an empty and
 * a sparse file, a hard link to a file outside the subtree, and "longna~1.txt" beside
 * "longname_1.txt", whose short name would be LONGNA~1.TXT if nothing reserved it.
 */
static void fat_setup(void)
{
	fx_setup(&fx, "fat", ext4);
	img = xasprintf("%s/fat.img", fx.top);
	fx_mkdir(&fx, "boot");
	fx_mkdir(&fx, "boot/efi");
	fx_mkdir(&fx, "boot/efi/EFI");
	fx_mkdir(&fx, "boot/efi/EFI/BOOT");
	fx_mkdir(&fx, "boot/efi/loader");
	fx_mkdir(&fx, "boot/efi/many");
	fx_put(&fx, "boot/efi/EFI/BOOT/BOOTX64.EFI", 0, 300000, 'x');
	fx_put(&fx, "boot/efi/Long File Name.txt", 0, 1000, 'l');
	fx_put(&fx, "boot/efi/gr\xc3\xbc\xc3\x9f" "e.txt", 0, 10, 'g');
	fx_put(&fx, "boot/efi/empty", 0, 0, 'e');
	fx_put(&fx, "boot/efi/sparse", 0, 100, 'a');
	fx_put(&fx, "boot/efi/sparse", MIB, 100, 'b');
	fx_put(&fx, "boot/efi/loader/loader.conf", 0, 50, 'c');
	fx_put(&fx, "boot/efi/longname_1.txt", 0, 5, '1');
	fx_put(&fx, "boot/efi/longna~1.txt", 0, 6, '2');
	fx_add(&fx, "boot/efi/longname_1.txt", MF_REG, 0644, 5);
	fx_add(&fx, "boot/efi/longna~1.txt", MF_REG, 0644, 6);
	fx_add(&fx, "boot", MF_DIR, 0755, 0);
	fx_add(&fx, "boot/efi", MF_DIR, 0700, 0);
	fx_add(&fx, "boot/efi/EFI", MF_DIR, 0755, 0);
	fx_add(&fx, "boot/efi/EFI/BOOT", MF_DIR, 0755, 0);
	fx_add(&fx, "boot/efi/EFI/BOOT/BOOTX64.EFI", MF_REG, 0644, 300000)->mtime = 1700000001;
	fx_add(&fx, "boot/efi/Long File Name.txt", MF_REG, 0644, 1000);
	fx_add(&fx, "boot/efi/gr\xc3\xbc\xc3\x9f" "e.txt", MF_REG, 0644, 10);
	fx_add(&fx, "boot/efi/empty", MF_REG, 0644, 0);
	fx_add(&fx, "boot/efi/sparse", MF_REG, 0644, MIB + 100);
	fx_add(&fx, "boot/efi/data-copy", MF_HARDLINK, 0644, 0)->target = xstrdup("etc/data");
	fx_add(&fx, "boot/efi/loader", MF_DIR, 0755, 0);
	fx_add(&fx, "boot/efi/loader/loader.conf", MF_REG, 0644, 50);
	fx_add(&fx, "boot/efi/many", MF_DIR, 0755, 0);
	manifest_sort(&fx.st.manifest);
}

/* 40 names whose short names share the basis LONGNAME.CON. */
static void fat_many(void)
{
	char name[64];
	int i;

	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "boot/efi/many/longname_file_%d.conf", i);
		fx_put(&fx, name, 0, (size_t)i + 1, (char)('A' + i % 26));
		fx_add(&fx, name, MF_REG, 0644, (uint64_t)i + 1);
	}
	manifest_sort(&fx.st.manifest);
}

static void fat_teardown(void)
{
	fx_teardown(&fx);
	memset(&fx, 0, sizeof(fx));
	free(img);
	img = NULL;
}

static int write_to(const char *out, const struct fat_params *fp)
{
	struct sink k;
	int ret;

	sink_init_file(&k, out);
	ret = fat_write(&fx.t, fp, &k);
	if (!ret)
		ret = sink_commit(&k);
	sink_release(&k);
	return ret;
}

/* fsck.vfat -n: exit 0 and nothing but its version and summary lines. */
static int fsck_clean(const char *path)
{
	return fx_sh(xasprintf("out=$(fsck.vfat -n '%s' 2>&1) && test \"$(printf '%%s\\n' "
			       "\"$out\" | wc -l)\" -eq 2 || { printf '%%s\\n' \"$out\"; exit 1; }",
			       path)) == 0;
}

/* `mcopy ::name -` from the image has the bytes of staging file `rel`. */
static int same_file(const char *path, const char *name, const char *rel)
{
	return fx_sh(xasprintf("mcopy -n -i '%s' '::%s' - | cmp -s - '%s/%s'", path, name,
			       fx.st.root, rel)) == 0;
}

static void check_contents(const char *path)
{
	ck_assert(fsck_clean(path));
	ck_assert(same_file(path, "EFI/BOOT/BOOTX64.EFI", "boot/efi/EFI/BOOT/BOOTX64.EFI"));
	ck_assert(same_file(path, "Long File Name.txt", "boot/efi/Long File Name.txt"));
	ck_assert(same_file(path, "sparse", "boot/efi/sparse"));
	ck_assert(same_file(path, "empty", "boot/efi/empty"));
	ck_assert(same_file(path, "data-copy", "etc/data"));
	ck_assert(same_file(path, "loader/loader.conf", "boot/efi/loader/loader.conf"));
	ck_assert(same_file(path, "longna~1.txt", "boot/efi/longna~1.txt"));
	ck_assert(same_file(path, "longname_1.txt", "boot/efi/longname_1.txt"));
	ck_assert(same_file(path, "LONGNA~2.TXT", "boot/efi/longname_1.txt"));
	ck_assert(same_file(path, "many/longname_file_39.conf",
			    "boot/efi/many/longname_file_39.conf"));
	ck_assert(same_file(path, "MANY/LONGNA~9.CON", "boot/efi/many/longname_file_16.conf"));
	ck_assert_int_eq(fx_sh(xasprintf("LC_ALL=C.UTF-8 mdir -i '%s' ::/ | "
					 "grep -q 'gr\xc3\xbc\xc3\x9f" "e.txt'", path)), 0);
	ck_assert_int_eq(fx_sh(xasprintf("mdir -i '%s' ::/ | grep -q 'Volume in drive : is "
					 "EFI-SYS'", path)), 0);
	ck_assert_int_eq(fx_sh(xasprintf("minfo -i '%s' :: | grep -q 'serial number: 1234ABCD'",
					 path)), 0);
	/* 1700000001 is 2023-11-14 22:13:21, clamped to the epoch 1000: 1980-01-01 */
	ck_assert_int_eq(fx_sh(xasprintf("mdir -i '%s' ::/EFI/BOOT | grep BOOTX64 | "
					 "grep -q '1980-01-01   0:00'", path)), 0);
}

static void write_and_check(uint64_t size, const char *type)
{
	struct fat_params fp = { .subtree = "boot/efi", .label = "efi-sys", .volume_id = 0x1234abcd,
				 .size = size };
	uint64_t bytes = 0;
	struct stat st;

	fat_setup();
	fat_many();
	fx_tree(&fx);
	ck_assert_int_eq(fat_estimate(&fx.t, &fp, &bytes), 0);
	ck_assert_int_eq(write_to(img, &fp), 0);
	ck_assert_int_eq(stat(img, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, bytes);
	ck_assert_uint_lt((uint64_t)st.st_blocks * 512, 4 * MIB); /* sparse */
	check_contents(img);
	ck_assert_int_eq(fx_sh(xasprintf("file '%s' | grep -q '%s'", img, type)), 0);
}

START_TEST(fat12_estimated)
{
	write_and_check(0, "FAT (12 bit)");
	ck_assert_uint_eq(fx_sh(xasprintf("test $(stat -c %%s '%s') = %llu", img, 2 * MIB)), 0);
}
END_TEST

START_TEST(fat16_100mib)
{
	write_and_check(100 * MIB, "FAT (16 bit)");
}
END_TEST

START_TEST(fat32_600mib)
{
	write_and_check(600 * MIB, "FAT (32 bit)");
	/* the backup boot sector is the boot sector */
	ck_assert_int_eq(fx_sh(xasprintf("cmp -s -n 512 -i 0:3072 '%s' '%s'", img, img)), 0);
}
END_TEST

START_TEST(same_tree_same_bytes)
{
	struct fat_params fp = { .subtree = "/boot/efi/", .label = "EFI", .volume_id = 7 };
	char *again;

	fat_setup();
	fat_many();
	fx_tree(&fx);
	again = xasprintf("%s/again.img", fx.top);
	ck_assert_int_eq(write_to(img, &fp), 0);
	ck_assert_int_eq(write_to(again, &fp), 0);
	ck_assert(fx_same(img, again));
	fp.volume_id = 8;
	ck_assert_int_eq(write_to(again, &fp), 0);
	ck_assert(!fx_same(img, again));
	free(again);
}
END_TEST

START_TEST(region_of_a_disk)
{
	struct fat_params fp = { .subtree = "boot/efi", .label = "efi-sys", .volume_id = 0x1234abcd };
	char *part;
	struct sink k;
	uint64_t bytes = 0;
	uint8_t bs[512];
	int fd;

	fat_setup();
	fat_many();
	fx_tree(&fx);
	fd = fx_pattern_file(img, 16 * MIB, 0xaa);
	ck_assert_int_eq(fat_estimate(&fx.t, &fp, &bytes), 0);
	sink_init_region(&k, fd, 4 * MIB, 8 * MIB, "partition 1");
	ck_assert_int_eq(fat_write(&fx.t, &fp, &k), 0);
	sink_release(&k);
	ck_assert(fx_all(fd, 0, 4 * MIB, 0xaa));
	ck_assert(fx_all(fd, 4 * MIB + bytes, 16 * MIB, 0xaa));
	ck_assert_int_eq(pread(fd, bs, sizeof(bs), (off_t)(4 * MIB)), 512);
	ck_assert_uint_eq(bs[28] | bs[29] << 8, 8192); /* hidden sectors: where it starts */
	part = xasprintf("%s/part.img", fx.top);
	fx_extract(fd, 4 * MIB, bytes, part);
	check_contents(part);
	/* too large for its region: nothing written */
	fp.size = 9 * MIB;
	sink_init_region(&k, fd, 4 * MIB, 8 * MIB, "partition 1");
	ck_assert_int_eq(fat_write(&fx.t, &fp, &k), -MKI_E_NOSPACE);
	sink_release(&k);
	ck_assert(fx_all(fd, 0, 4 * MIB, 0xaa));
	ck_assert(fx_all(fd, 4 * MIB + bytes, 16 * MIB, 0xaa));
	close(fd);
	free(part);
}
END_TEST

static char *capture(void)
{
	char *log = xasprintf("%s/stderr", fx.top);
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
	return log;
}

/* fat_write's code for the fixture with `path` of `type` added, and whether it logged `want`. */
static int refused(const char *subtree, const char *path, char type, const char *want)
{
	struct fat_params fp = { .subtree = subtree, .label = "X" };
	char *log, *cmd;
	int ret, said;

	fat_setup();
	if (path) {
		fx_add(&fx, path, type, 0644, 0)->target = type == MF_SYMLINK ? xstrdup("x") : NULL;
		manifest_sort(&fx.st.manifest);
	}
	fx_tree(&fx);
	log = capture();
	ret = write_to(img, &fp);
	fflush(stderr);
	cmd = xasprintf("grep -qF -- \"%s\" '%s'", want, log);
	said = fx_sh(cmd) == 0;
	ck_assert_msg(said, "no message '%s'", want);
	ck_assert_int_eq(access(img, F_OK), -1); /* nothing at the output */
	free(log);
	return ret;
}

START_TEST(refuses_what_fat_cannot_hold)
{
	ck_assert_int_eq(refused("/boot/efi//", "boot/efi/vmlinuz", MF_SYMLINK,
				 "'boot/efi/vmlinuz' is a symbolic link: FAT cannot hold it; leave it "
				 "out of 'boot/efi'"),
			 -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("boot/efi", "boot/efi/null", MF_CHR,
				 "'boot/efi/null' is a character device"), -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("", NULL, 0, "'etc/fifo' is a FIFO: FAT cannot hold it; leave "
				 "it out of '/'"), -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("boot/efi", "boot/efi/a:b", MF_REG, "the name of 'boot/efi/a:b' "
				 "holds a character FAT cannot hold"), -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("boot/efi", "boot/efi/grub.", MF_REG, "'boot/efi/grub.'"),
			 -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("boot/efi", "boot/efi/efi", MF_DIR, "'boot/efi/EFI' and "
				 "'boot/efi/efi' differ only in case"), -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("boot/efi", "boot/efi/Gr\xc3\x9c\xc3\x9f" "e.TXT", MF_DIR,
				 "differ only in case"), -MKI_E_IMAGE);
	fat_teardown();
	{
		char name[300];

		snprintf(name, sizeof(name), "boot/efi/%0256d", 0);
		ck_assert_int_eq(refused("boot/efi", name, MF_DIR, "holds more than 255 UTF-16 "
					 "units"), -MKI_E_IMAGE);
	}
}
END_TEST

START_TEST(refuses_a_file_of_4_gib)
{
	struct fat_params fp = { .subtree = "boot/efi" };
	char *log;

	fat_setup();
	fx_put(&fx, "boot/efi/huge", (4096ll << 20) - 1, 1, 'z');
	fx_add(&fx, "boot/efi/huge", MF_REG, 0644, 4096ull << 20);
	manifest_sort(&fx.st.manifest);
	fx_tree(&fx);
	log = capture();
	ck_assert_int_eq(write_to(img, &fp), -MKI_E_IMAGE);
	fflush(stderr);
	ck_assert_int_eq(fx_sh(xasprintf("grep -q \"'boot/efi/huge' is 4294967296 bytes: a FAT file "
					 "holds at most 4 GiB - 1\" '%s'", log)), 0);
	ck_assert_int_eq(access(img, F_OK), -1);
	free(log);
}
END_TEST

START_TEST(refuses_a_bad_subtree_label_or_size)
{
	ck_assert_int_eq(refused("boot/nope", NULL, 0, "directory 'boot/nope' is not in the "
				 "image tree"), -MKI_E_IMAGE);
	fat_teardown();
	ck_assert_int_eq(refused("etc/data", NULL, 0, "'etc/data' is not a directory"),
			 -MKI_E_IMAGE);
	fat_teardown();
	fat_setup();
	fx_tree(&fx);
	{
		struct fat_params fp = { .subtree = "boot/efi", .label = "a.b" };
		char *log = capture();

		ck_assert_int_eq(write_to(img, &fp), -MKI_E_IMAGE);
		fp.label = "twelve chars";
		ck_assert_int_eq(write_to(img, &fp), -MKI_E_IMAGE);
		fp.label = NULL;
		fp.size = MIB;
		ck_assert_int_eq(write_to(img, &fp), -MKI_E_NOSPACE);
		fflush(stderr);
		ck_assert_int_eq(fx_sh(xasprintf("grep -q \"label 'a.b' is not usable\" '%s' && "
						 "grep -q \"label 'twelve chars'\" '%s' && grep -q "
						 "\"does not fit in 1048576 bytes: it needs 2 MiB\" '%s'",
						 log, log, log)), 0);
		ck_assert_int_eq(access(img, F_OK), -1);
		free(log);
	}
}
END_TEST

START_TEST(estimates)
{
	struct fat_params fp = { .subtree = "boot/efi", .size = 64 * MIB };
	uint64_t bytes = 0;

	fat_setup();
	fx_tree(&fx);
	ck_assert_int_eq(fat_estimate(&fx.t, &fp, &bytes), 0);
	ck_assert_uint_eq(bytes, 64 * MIB);
	fp.size = 0;
	ck_assert_int_eq(fat_estimate(&fx.t, &fp, &bytes), 0);
	ck_assert_uint_eq(bytes, 2 * MIB); /* 1.3 MiB of files and directories, and the margin */
	fp.subtree = "boot/nope";
	ck_assert_int_eq(fat_estimate(&fx.t, &fp, &bytes), -MKI_E_IMAGE);
	ck_assert_uint_eq(bytes, 0);
}
END_TEST

START_TEST(interrupted)
{
	struct fat_params fp = { .subtree = "boot/efi" };

	fat_setup();
	fx_tree(&fx);
	err_set_interrupted(SIGTERM);
	ck_assert_int_eq(write_to(img, &fp), -MKI_E_INTERRUPTED);
	ck_assert_int_eq(access(img, F_OK), -1);
}
END_TEST

/* Another filesystem than the tree's: the kernel will not copy, the writer reads and writes. */
START_TEST(copies_across_filesystems)
{
	struct fat_params fp = { .subtree = "boot/efi", .label = "efi-sys", .volume_id = 0x1234abcd };
	char shm[] = "/dev/shm/mki-unit-fat-XXXXXX", *out;

	fat_setup();
	fat_many();
	fx_tree(&fx);
	if (!mkdtemp(shm))
		return; /* no /dev/shm: nothing to compare with */
	out = xasprintf("%s/fat.img", shm);
	ck_assert_int_eq(write_to(out, &fp), 0);
	ck_assert_int_eq(write_to(img, &fp), 0);
	ck_assert(fx_same(out, img));
	check_contents(out);
	fx_sh(xasprintf("rm -rf '%s'", shm));
	free(out);
}
END_TEST

/* A root that FAT12/16's fixed area cannot hold: auto sizes to FAT32, a fixed size says so. */
START_TEST(a_root_beyond_fat16)
{
	struct fat_params fp = { .subtree = "boot/efi" };
	uint64_t bytes = 0;
	char name[64], *log;
	int i;

	fat_setup();
	for (i = 0; i < 21836; i++) { /* three entries each, 65 508, and the fixture's 21 */
		snprintf(name, sizeof(name), "boot/efi/file_name_%05d", i);
		fx_put(&fx, name, 0, 0, 0);
		fx_add(&fx, name, MF_REG, 0644, 0);
	}
	manifest_sort(&fx.st.manifest);
	fx_tree(&fx);
	ck_assert_int_eq(fat_estimate(&fx.t, &fp, &bytes), 0);
	ck_assert_uint_eq(bytes, 512 * MIB);
	ck_assert_int_eq(write_to(img, &fp), 0);
	ck_assert(fsck_clean(img));
	ck_assert_int_eq(unlink(img), 0);
	fp.size = 64 * MIB;
	log = capture();
	ck_assert_int_eq(write_to(img, &fp), -MKI_E_NOSPACE);
	fflush(stderr);
	ck_assert_int_eq(fx_sh(xasprintf("grep -q \"the root of 'boot/efi' needs 65529 entries.*"
					 "at least 512 MiB (FAT32)\" '%s'", log)), 0);
	free(log);
}
END_TEST

Suite *fat_suite(void)
{
	Suite *s = suite_create("fat");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, fat_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fat12_estimated);
	tcase_add_test(tc, fat16_100mib);
	tcase_add_test(tc, fat32_600mib);
	tcase_add_test(tc, same_tree_same_bytes);
	tcase_add_test(tc, region_of_a_disk);
	tcase_add_test(tc, refuses_what_fat_cannot_hold);
	tcase_add_test(tc, refuses_a_bad_subtree_label_or_size);
	tcase_add_test(tc, refuses_a_file_of_4_gib);
	tcase_add_test(tc, estimates);
	tcase_add_test(tc, interrupted);
	tcase_add_test(tc, copies_across_filesystems);
	tcase_add_test(tc, a_root_beyond_fat16);
	suite_add_tcase(s, tc);
	return s;
}
