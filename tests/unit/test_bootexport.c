#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/manifest.h"
#include "emit/bootexport.h"
#include "emit/bootexport_internal.h"

static char top[64], tree[96], out[128];
static struct staging st;

/* A tree file or directory (text NULL), recorded in the manifest as unpack would. */
static void add(const char *rel, const char *text)
{
	char path[256];
	struct manifest_entry *e = manifest_add(&st.manifest, rel);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	e->type = text ? MF_REG : MF_DIR;
	if (!text) {
		ck_assert_int_eq(mkdir(path, 0755), 0);
		return;
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/mki-bootexport-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(tree, sizeof(tree), "%s/root", top);
	snprintf(out, sizeof(out), "%s/b.ext4", top);
	ck_assert_int_eq(mkdir(tree, 0755), 0);
	memset(&st, 0, sizeof(st));
	st.root = tree;
	manifest_init(&st.manifest);
	add("boot", NULL);
	add("boot/vmlinuz-6.1.0-2-x", "kernel 2");
	add("boot/initrd.img-6.1.0-2-x", "initrd 2");
	add("usr", NULL);
	add("usr/lib", NULL);
	add("usr/lib/linux-image-6.1.0-2-x", NULL);
	add("usr/lib/linux-image-6.1.0-2-x/v", NULL);
	add("usr/lib/linux-image-6.1.0-2-x/v/b.dtb", "dtb");
	manifest_sort(&st.manifest);
}

static void teardown(void)
{
	char cmd[128];

	manifest_release(&st.manifest);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

static char *at(const char *name)
{
	static char path[160];

	snprintf(path, sizeof(path), "%s/%s", top, name);
	return path;
}

/* bootexport_prepare() with its log in a file: its result, and whether the log holds `text`. */
static int prepare_says(struct bootexport *be, const struct recipe *r, const char *text,
			int *said)
{
	static char log[4096];
	int fd = open(at("log"), O_RDWR | O_CREAT | O_TRUNC, 0644), saved = dup(2), ret;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	fflush(stderr);
	dup2(fd, 2);
	ret = bootexport_prepare(be, &st, r, out, 0, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, log, sizeof(log) - 1, 0);
	log[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(at("log"));
	*said = strstr(log, text) != NULL;
	return ret;
}

START_TEST(one_kernel)
{
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	struct stat sb;

	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 1000, NULL), 0);
	ck_assert_ptr_null(slurp(at("b.vmlinuz"))); /* nothing final before the commit */
	ck_assert_int_eq(bootexport_commit(&be), 0);
	ck_assert_str_eq(slurp(at("b.vmlinuz")), "kernel 2");
	ck_assert_str_eq(slurp(at("b.initrd.img")), "initrd 2");
	ck_assert_str_eq(slurp(at("b.dtbs/v/b.dtb")), "dtb");
	ck_assert_int_eq(stat(at("b.vmlinuz"), &sb), 0);
	ck_assert_int_eq(sb.st_mtime, 1000);
	ck_assert_int_eq(be.n_dtbs, 1);
	bootexport_release(&be);
}
END_TEST

/* Several kernels need image.kernel; the one picked here has no initrd: the old one goes. */
START_TEST(several)
{
	char kernel[] = "6.1.0-1-x", other[] = "5.0";
	struct recipe r = { 0 };
	struct bootexport be = { 0 };

	add("boot/vmlinuz-6.1.0-1-x", "kernel 1");
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), -MKI_E_IMAGE);
	bootexport_release(&be);
	r.image.kernel = other;
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), -MKI_E_IMAGE);
	bootexport_release(&be);
	r.image.kernel = NULL;
	manifest_remove(&st.manifest, "boot/vmlinuz-6.1.0-1-x");
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), 0);
	ck_assert_int_eq(bootexport_commit(&be), 0);
	bootexport_release(&be);
	add("boot/vmlinuz-6.1.0-1-x", "kernel 1");
	r.image.kernel = kernel;
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), 0);
	bootexport_release(&be); /* not committed: the temporary files go, the old ones stay */
	ck_assert_str_eq(slurp(at("b.vmlinuz")), "kernel 2");
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), 0);
	ck_assert_int_eq(bootexport_commit(&be), 0);
	ck_assert_str_eq(slurp(at("b.vmlinuz")), "kernel 1");
	ck_assert_ptr_null(slurp(at("b.initrd.img")));
	ck_assert_int_eq(access(at("b.dtbs"), F_OK), -1);
	bootexport_release(&be);
}
END_TEST

START_TEST(no_kernel)
{
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	int said;

	manifest_remove(&st.manifest, "boot/vmlinuz-6.1.0-2-x");
	ck_assert_int_eq(prepare_says(&be, &r, "has no kernel (/boot/vmlinuz-* or /boot/vmlinux-*)",
				      &said), -MKI_E_IMAGE);
	ck_assert(said);
	bootexport_release(&be);
}
END_TEST

/*
 * riscv64's kernel is uncompressed, /boot/vmlinux-RELEASE: exported as NAME.vmlinux, which
 * replaces an earlier build's NAME.vmlinuz (and back); a signature beside it is no kernel.
 */
START_TEST(uncompressed)
{
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	struct buf json = { 0 };

	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), 0);
	ck_assert_int_eq(bootexport_commit(&be), 0);
	bootexport_release(&be);
	ck_assert_str_eq(slurp(at("b.vmlinuz")), "kernel 2");
	manifest_remove(&st.manifest, "boot/vmlinuz-6.1.0-2-x");
	add("boot/vmlinux-6.1.0-2-x", "raw kernel");
	add("boot/vmlinux-6.1.0-2-x.sig", "signature");
	manifest_sort(&st.manifest);
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), 0);
	ck_assert_str_eq(be.version, "6.1.0-2-x");
	ck_assert_int_eq(be.uncompressed, 1);
	ck_assert_str_eq(slurp(at("b.vmlinuz")), "kernel 2"); /* the old one until the commit */
	ck_assert_int_eq(bootexport_commit(&be), 0);
	ck_assert_str_eq(slurp(at("b.vmlinux")), "raw kernel");
	ck_assert_ptr_null(slurp(at("b.vmlinuz")));
	ck_assert_str_eq(slurp(at("b.initrd.img")), "initrd 2");
	bootexport_json(&be, &json);
	ck_assert_ptr_nonnull(strstr(json.p, "/b.vmlinux\", \"vmlinuz_sha256\": "));
	buf_release(&json);
	bootexport_release(&be);
	/* back to a compressed kernel: NAME.vmlinux goes */
	manifest_remove(&st.manifest, "boot/vmlinux-6.1.0-2-x");
	add("boot/vmlinuz-6.1.0-2-x", "kernel 2");
	manifest_sort(&st.manifest);
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), 0);
	ck_assert_int_eq(bootexport_commit(&be), 0);
	ck_assert_str_eq(slurp(at("b.vmlinuz")), "kernel 2");
	ck_assert_ptr_null(slurp(at("b.vmlinux")));
	bootexport_release(&be);
}
END_TEST

/* One release both compressed and not: two kernels, also when image.kernel names it. */
START_TEST(both_kinds)
{
	char kernel[] = "6.1.0-2-x";
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	int said;

	add("boot/vmlinux-6.1.0-2-x", "raw kernel");
	manifest_sort(&st.manifest);
	ck_assert_int_eq(prepare_says(&be, &r, "has 2 kernels ('6.1.0-2-x', '6.1.0-2-x')", &said),
			 -MKI_E_IMAGE);
	ck_assert(said);
	bootexport_release(&be);
	r.image.kernel = kernel;
	ck_assert_int_eq(prepare_says(&be, &r, "kernel '6.1.0-2-x' twice, as '/boot/vmlinuz-6.1.0-"
				      "2-x' and '/boot/vmlinux-6.1.0-2-x'", &said), -MKI_E_IMAGE);
	ck_assert(said);
	bootexport_release(&be);
	ck_assert_ptr_null(slurp(at("b.vmlinuz")));
	ck_assert_ptr_null(slurp(at("b.vmlinux")));
}
END_TEST

/* An uncompressed kernel a script replaced by a FIFO is refused as a compressed one is. */
START_TEST(special_vmlinux)
{
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	struct manifest_entry *e;
	char path[256];
	int said;

	manifest_remove(&st.manifest, "boot/vmlinuz-6.1.0-2-x");
	e = manifest_add(&st.manifest, "boot/vmlinux-6.1.0-2-x");
	e->type = MF_FIFO;
	manifest_sort(&st.manifest);
	snprintf(path, sizeof(path), "%s/boot/vmlinux-6.1.0-2-x", tree);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(prepare_says(&be, &r, "'/boot/vmlinux-6.1.0-2-x' is a FIFO, not a regular "
				      "file", &said), -MKI_E_IMAGE);
	ck_assert(said);
	bootexport_release(&be);
	ck_assert_ptr_null(slurp(at("b.vmlinux")));
}
END_TEST

/* A kernel or initrd a script replaced by a FIFO is refused, never opened; nothing is left. */
START_TEST(special_files)
{
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	const char *files[] = { "boot/initrd.img-6.1.0-2-x", "boot/vmlinuz-6.1.0-2-x" };
	char path[256];
	size_t i;

	for (i = 0; i < 2; i++) {
		struct manifest_entry *e = manifest_get(&st.manifest, files[i]);

		snprintf(path, sizeof(path), "%s/%s", tree, files[i]);
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(mkfifo(path, 0644), 0);
		e->type = MF_FIFO;
		ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, NULL), -MKI_E_IMAGE);
		bootexport_release(&be);
		memset(&be, 0, sizeof(be));
		ck_assert_ptr_null(slurp(at("b.vmlinuz")));
	}
	snprintf(path, sizeof(path), "ls -A %s | grep -v '^root$' | grep -q .", top);
	ck_assert_int_ne(system(path), 0); /* no temporary beside the image */
}
END_TEST

/* SHA-256 of what read() returns from `path`: holes read as zeros. */
static void sha_of(const char *path, char *hex)
{
	static char buf[1 << 16];
	struct hash h;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		hash_update(&h, buf, (size_t)n);
	hash_final_hex(&h, hex);
	close(fd);
}

/* 4 KiB of data, a hole to 8 MiB, 4 KiB of data, a trailing hole to 16 MiB. */
static void sparse_file(const char *path)
{
	char block[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	memset(block, 'A', sizeof(block));
	ck_assert_int_eq(pwrite(fd, block, sizeof(block), 0), sizeof(block));
	memset(block, 'B', sizeof(block));
	ck_assert_int_eq(pwrite(fd, block, sizeof(block), 8 << 20), sizeof(block));
	ck_assert_int_eq(ftruncate(fd, 16 << 20), 0);
	close(fd);
}

/* The copy writes the data only: holes stay holes, the hash is the whole file's. */
START_TEST(hole_copy)
{
	char want[65], got[65], *src = xasprintf("%s/src", top), *dst = xasprintf("%s/dst", top);
	struct hash h;
	struct stat sb;
	uint64_t data = 0;
	int in, o;

	sparse_file(src);
	in = open(src, O_RDONLY);
	o = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(o, 0);
	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	ck_assert_int_eq(bootexport_copy(in, o, 16 << 20, &h, &data, 1 << 20), 0);
	hash_final_hex(&h, got);
	close(o);
	sha_of(src, want);
	ck_assert_str_eq(got, want);
	sha_of(dst, got);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(stat(dst, &sb), 0);
	ck_assert_int_eq(sb.st_size, 16 << 20);
	ck_assert_int_lt(sb.st_blocks * 512, 1 << 20); /* KiB on disk, not 16 MiB */
	ck_assert_uint_ge(data, 8192);
	ck_assert_uint_lt(data, 1 << 20);
	/* past the data bound: stopped */
	unlink(dst);
	o = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
	data = 0;
	ck_assert_int_eq(bootexport_copy(in, o, 16 << 20, NULL, &data, 4096), -EFBIG);
	close(o);
	close(in);
	free(src);
	free(dst);
}
END_TEST

/* The boot files together past boot-size: refused, exit 7, and nothing left beside the image. */
START_TEST(boot_size)
{
	struct recipe r = { 0 };
	struct bootexport be = { 0 };
	struct limits l = { 0 };
	char cmd[256];

	l.v[LIMIT_BOOT_SIZE] = 12; /* the kernel (8 bytes) fits, not the initrd after it */
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, &l), -MKI_E_HOOK);
	bootexport_release(&be);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls %s | grep -v '^root$')\"", top);
	ck_assert_int_eq(system(cmd), 0);
	l.v[LIMIT_BOOT_SIZE] = 19; /* kernel, initrd and the 3-byte dtb */
	ck_assert_int_eq(bootexport_prepare(&be, &st, &r, out, 0, &l), 0);
	bootexport_release(&be);
}
END_TEST

Suite *bootexport_suite(void)
{
	Suite *s = suite_create("bootexport");
	TCase *tc = tcase_create("bootexport");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_kernel);
	tcase_add_test(tc, several);
	tcase_add_test(tc, no_kernel);
	tcase_add_test(tc, uncompressed);
	tcase_add_test(tc, both_kinds);
	tcase_add_test(tc, special_vmlinux);
	tcase_add_test(tc, special_files);
	tcase_add_test(tc, hole_copy);
	tcase_add_test(tc, boot_size);
	suite_add_tcase(s, tc);
	return s;
}
