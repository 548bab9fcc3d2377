/* A layer restored into an empty directory: the same tree, bit for bit, and the stage's record. */
#include "layer_fixture.h"
#include "layer/layerfile_fmt.h"

static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
}

START_TEST(round_trip_is_exact)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	struct staging s = { 0 }, back = { 0 };
	struct manifest_entry *e;
	struct buf lint = { 0 };
	struct dep5_texts texts = { 0 }, want;
	struct stat a, b;
	char *src, *dst, *file, *cmd, val[8];
	int fd, rootfd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	src = xasprintf("%s/src", dir);
	dst = xasprintf("%s/dst", dir);
	file = xasprintf("%s/layer", dir);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_eq(mkdir(dst, 0755), 0);
	make_tree(src);
	manifest_init(&s.manifest);
	e = manifest_add(&s.manifest, "dev/console");
	e->type = MF_CHR;
	e->major = 5;
	e->minor = 1;
	strv_push(&e->owners, "base-files");
	s.filtered.files = 42;
	ck_assert_int_eq(write_layer(src, file, &s), 0);
	ck_assert_int_eq(check_file(file), 0);

	manifest_init(&back.manifest);
	fd = open(file, O_RDONLY);
	rootfd = open(dst, O_PATH | O_DIRECTORY);
	ck_assert_int_eq(layerfile_restore(fd, file, rootfd, &back, &lint, &texts), 0);
	close(fd);
	close(rootfd);
	ck_assert_str_eq(lint.p, "lint line\n");
	/* the copyright texts as captured, byte for byte, with their errors */
	fixture_texts(&want);
	ck_assert_uint_eq(texts.n, want.n);
	for (size_t i = 0; i < want.n; i++) {
		ck_assert_int_eq(texts.err[i], want.err[i]);
		ck_assert_uint_eq(texts.v[i].len, want.v[i].len);
		ck_assert(!want.v[i].len || !memcmp(texts.v[i].p, want.v[i].p, want.v[i].len));
	}
	dep5_texts_release(&want);
	dep5_texts_release(&texts);
	ck_assert_uint_eq(back.filtered.files, 42);
	e = manifest_get(&back.manifest, "dev/console");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->type, MF_CHR);
	ck_assert_uint_eq(e->minor, 1);
	ck_assert_str_eq(e->owners.v[0], "base-files");

	/* Same listing with owners, modes, sizes, link counts and mtimes, same bytes. */
	cmd = xasprintf("cd %s && for t in src dst; do (cd $t && find . -printf "
			"'%%p %%y %%m %%U:%%G %%s %%n %%T@ %%l\\n' && find . -type f -exec sha256sum {} +)"
			" | sort >$t.list; done && cmp src.list dst.list", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	cmd = xasprintf("%s/usr/bin/prog", dst);
	ck_assert_int_eq(stat(cmd, &a), 0);
	free(cmd);
	cmd = xasprintf("%s/usr/bin/prog2", dst);
	ck_assert_int_eq(stat(cmd, &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino);
	free(cmd);
	cmd = xasprintf("%s/var/lib/sparse", dst);
	ck_assert_int_eq(stat(cmd, &a), 0);
	ck_assert_int_lt(a.st_blocks * 512, 1 << 20); /* the hole stayed a hole */
	free(cmd);
	cmd = xasprintf("%s/etc/a", dst);
	ck_assert_int_eq(getxattr(cmd, "user.mki", val, sizeof(val)), 1);
	ck_assert_int_eq(getxattr(dst, "user.root", val, sizeof(val)), 1);
	free(cmd);
	manifest_release(&s.manifest);
	staging_release(&back);
	buf_release(&lint);
	sh(xasprintf("chmod -R u+w %s; rm -rf %s", dir, dir));
	free(src);
	free(dst);
	free(file);
}
END_TEST

/*
 * The restore checks the file beside it: a flipped bit in the data (records intact, digest not),
 * a file cut short or another format version fail the restore.
 */
START_TEST(corrupt_and_truncated_are_refused)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	char *file = make_layer(dir);
	struct layer_trailer tr;
	struct stat sb;
	int fd;

	quiet();
	ck_assert_int_eq(stat(file, &sb), 0);
	flip(file, 100);
	ck_assert_int_eq(restore_into(dir, file, "flipped"), -EBADMSG);
	flip(file, 100);
	ck_assert_int_eq(restore_into(dir, file, "intact"), 0);
	fd = open(file, O_RDWR);
	ck_assert_int_eq(pread(fd, &tr, sizeof(tr), sb.st_size - (off_t)sizeof(tr)),
			 (ssize_t)sizeof(tr));
	tr.version++;
	ck_assert_int_eq(pwrite(fd, &tr, sizeof(tr), sb.st_size - (off_t)sizeof(tr)),
			 (ssize_t)sizeof(tr));
	ck_assert_int_eq(restore_into(dir, file, "version"), -EPROTO);
	ck_assert_int_eq(ftruncate(fd, sb.st_size - 1), 0);
	ck_assert_int_eq(restore_into(dir, file, "short"), -EBADMSG);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(restore_into(dir, file, "empty"), -EBADMSG);
	close(fd);
	remove_dir(dir);
	free(file);
}
END_TEST

Suite *layerfile_restore_suite(void)
{
	Suite *s = suite_create("layerfile_restore");
	TCase *tc = tcase_create("layerfile_restore");

	tcase_add_test(tc, round_trip_is_exact);
	tcase_add_test(tc, corrupt_and_truncated_are_refused);
	suite_add_tcase(s, tc);
	return s;
}
