/*
 * pkg.c, one .deb decoded for the unpacker: its control file checked against the plan entry,
 * its conffiles, its entries with contents spooled or held, large files read lazily, and the
 * refusals, on .debs built at test time (dpkg-deb, or unpack_mkdeb.py for what it refuses).
 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "unpack/pkg.h"

struct fx {
	char dir[64];
	struct plan_entry pe;
	struct pathfilter filter; /* no rules */
	struct pkg k;
};

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;

	va_start(ap, fmt);
	cmd = xvasprintf(fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	free(cmd);
}

static void fx_init(struct fx *f, const char *name, const char *version)
{
	memset(f, 0, sizeof(*f));
	log_set_level(LOG_QUIET);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-pkg.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	sh("mkdir '%s/spool'", f->dir);
	f->pe.name = xstrdup(name);
	f->pe.version = xstrdup(version);
	f->pe.arch = xstrdup("armhf");
	f->pe.path = xasprintf("%s/p.deb", f->dir);
	f->k.pe = &f->pe;
	f->k.dpkg_name = xstrdup(name);
	f->k.spool_fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(f->k.spool_fd, 0);
	f->k.id = 7;
	f->k.filter = &f->filter;
}

static void fx_release(struct fx *f)
{
	pkg_release(&f->k);
	close(f->k.spool_fd);
	sh("rm -rf '%s'", f->dir);
	free(f->pe.name);
	free(f->pe.version);
	free(f->pe.arch);
	free(f->pe.path);
}

/* The package "hello" 1.0 armhf: a conffile, a small file, a big one, a link, a directory. */
static void build_hello(struct fx *f)
{
	sh("cd '%s' && mkdir -p src/DEBIAN src/etc src/usr/bin src/usr/share/hello && "
	   "printf 'Package: hello\\nVersion: 1.0\\nArchitecture: armhf\\nMaintainer: t <t@t>\\n"
	   "Description: d\\n' >src/DEBIAN/control && echo /etc/hello.conf >src/DEBIAN/conffiles && "
	   "echo conf >src/etc/hello.conf && printf hi >src/usr/bin/hello && "
	   "head -c 300000 /dev/zero | tr '\\0' x >src/usr/share/hello/big && "
	   "ln -s hello src/usr/bin/hi && "
	   "dpkg-deb --root-owner-group -Zxz -b src p.deb >/dev/null", f->dir);
}

static const struct pfile *file_named(const struct pkg *k, const char *path)
{
	size_t i;

	for (i = 0; i < k->n_files; i++)
		if (!strcmp(k->files[i].e.path, path))
			return &k->files[i];
	return NULL;
}

START_TEST(decodes_into_the_spool)
{
	const struct pfile *p;
	struct fx f;
	char hex[65], name[PKG_SPOOL_NAME], *spooled;
	struct stat st;

	fx_init(&f, "hello", "1.0");
	build_hello(&f);
	ck_assert_int_eq(pkg_decode(&f.k, 1u << 30), 0);
	ck_assert_int_eq(f.k.stream, 0);
	ck_assert_str_eq(deb_control_get(&f.k.ctl, "Package"), "hello");
	ck_assert_uint_eq(f.k.conffiles.n, 1);
	ck_assert_str_eq(f.k.conffiles.v[0], "/etc/hello.conf");
	ck_assert_str_eq(f.k.md5s.v[0], "newconffile");
	ck_assert_ptr_nonnull(p = file_named(&f.k, "./usr/bin/hello"));
	ck_assert_int_eq(p->e.type, MF_REG);
	ck_assert_int_eq(p->spooled, 1);
	pkg_spool_name(&f.k, p, name);
	spooled = xasprintf("%s/%s", f.dir, name);
	ck_assert_int_eq(stat(spooled, &st), 0);
	ck_assert_int_eq(st.st_size, 2);
	free(spooled);
	ck_assert_ptr_nonnull(p = file_named(&f.k, "./etc/hello.conf"));
	ck_assert_int_eq(pkg_file_md5(p, hex), 0); /* a conffile is hashed for the database */
	ck_assert_str_eq(hex, "b9a771b420047cfaa3543e66c78f44f6"); /* "conf\n" */
	ck_assert_ptr_nonnull(p = file_named(&f.k, "./usr/bin/hi"));
	ck_assert_int_eq(p->e.type, MF_SYMLINK);
	ck_assert_str_eq(p->e.target, "hello");
	ck_assert_ptr_nonnull(file_named(&f.k, "./usr/share/hello/"));
	fx_release(&f);
}
END_TEST

/* Past `stream_max` nothing is held: the applying thread streams, big files read lazily. */
START_TEST(streams_and_reads_lazily)
{
	const struct pfile *p;
	struct pfile *big = NULL;
	struct fx f;
	char buf[4096], hex[65];
	uint64_t total = 0;
	ssize_t n;
	int r;

	fx_init(&f, "hello", "1.0");
	build_hello(&f);
	ck_assert_int_eq(pkg_decode(&f.k, 1000), 0);
	ck_assert_int_eq(f.k.stream, 1);
	ck_assert_uint_eq(f.k.n_files, 0);
	ck_assert_int_eq(pkg_open(&f.k), 0);
	while ((r = pkg_next_file(&f.k, 1000, 0)) == 1) {
		struct pfile *last = &f.k.files[f.k.n_files - 1];

		if (!strcmp(last->e.path, "./usr/share/hello/big")) {
			big = last;
			break;
		}
	}
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(big->lazy, 1);
	ck_assert_int_ne(pkg_file_md5(big, hex), 0); /* not known before it is read */
	while ((n = pkg_lazy_read(&f.k, big, buf, sizeof(buf))) > 0) {
		ck_assert_int_eq(buf[0], 'x');
		total += (uint64_t)n;
	}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(total, 300000);
	ck_assert_int_eq(big->lazy, 2);
	ck_assert_int_eq(pkg_file_md5(big, hex), 0);
	ck_assert_ptr_nonnull(p = file_named(&f.k, "./usr/bin/hello"));
	ck_assert_int_eq(p->spooled, 0);
	ck_assert_int_eq(memcmp(p->data, "hi", 2), 0); /* held in memory when not spooled */
	fx_release(&f);
}
END_TEST

/* The control file must be the plan's package, with names dpkg accepts. */
START_TEST(control_checked_against_the_plan)
{
	static const struct {
		const char *control, *plan_name, *plan_version, *why;
	} t[] = {
		{ "Package: hello\\nVersion: 1.0\\nArchitecture: armhf\\n", "hello", "2.0",
		  "control says Version '1.0' but the plan expects '2.0'" },
		{ "Package: hello\\nArchitecture: armhf\\n", "hello", "1.0",
		  "control file lacks the 'Version' field" },
		{ "Package: Hello\\nVersion: 1.0\\nArchitecture: armhf\\n", "Hello", "1.0",
		  "invalid package name 'Hello' or architecture 'armhf'" },
		{ "Package: hello\\nVersion: 1.0\\nArchitecture: armhf\\nno colon\\n", "hello", "1.0",
		  "malformed control file: line is neither 'Field: value' nor a continuation" },
		{ "Package: hello\\nVersion: 1.0\\nArchitecture: armhf\\nVersion: 2\\n", "hello",
		  "1.0", "malformed control file: control:4: duplicate field in one stanza" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fx f;

		fx_init(&f, t[i].plan_name, t[i].plan_version);
		sh("printf '%%s' '{\"out\": \"%s\", \"control\": \"%s\", \"members\": []}' | "
		   "python3 tests/integration/unpack_mkdeb.py", f.pe.path, t[i].control);
		ck_assert_int_eq(pkg_decode(&f.k, 1u << 30), -MKI_E_PACKAGE);
		ck_assert_msg(strstr(f.k.errmsg, t[i].why) != NULL, "case %zu: %s", i, f.k.errmsg);
		fx_release(&f);
	}
}
END_TEST

START_TEST(relative_conffile_refused)
{
	struct fx f;

	fx_init(&f, "hello", "1.0");
	sh("printf '%%s' '{\"out\": \"%s\", \"control\": \"Package: hello\\nVersion: 1.0\\n"
	   "Architecture: armhf\\n\", \"control_members\": [{\"name\": \"./conffiles\", "
	   "\"data\": \"etc/x\\n\"}], \"members\": []}' | "
	   "python3 tests/integration/unpack_mkdeb.py", f.pe.path);
	ck_assert_int_eq(pkg_decode(&f.k, 1u << 30), -MKI_E_PACKAGE);
	ck_assert_ptr_nonnull(strstr(f.k.errmsg, "conffile 'etc/x' is not an absolute path"));
	fx_release(&f);
}
END_TEST

/*
 * deb-conffiles(5)'s "remove-on-upgrade PATH" (bookworm's pkgconf) names a file an older version
 * shipped: nothing of a fresh install; another word before a path is still refused.
 */
START_TEST(remove_on_upgrade_conffile_skipped)
{
	struct fx f;

	fx_init(&f, "hello", "1.0");
	sh("printf '%%s' '{\"out\": \"%s\", \"control\": \"Package: hello\\nVersion: 1.0\\n"
	   "Architecture: armhf\\n\", \"control_members\": [{\"name\": \"./conffiles\", "
	   "\"data\": \"remove-on-upgrade /etc/old.conf\\n/etc/x\\n\"}], \"members\": []}' | "
	   "python3 tests/integration/unpack_mkdeb.py", f.pe.path);
	ck_assert_int_eq(pkg_decode(&f.k, 1u << 30), 0);
	ck_assert_uint_eq(f.k.conffiles.n, 1);
	ck_assert_str_eq(f.k.conffiles.v[0], "/etc/x");
	fx_release(&f);
	fx_init(&f, "hello", "1.0");
	sh("printf '%%s' '{\"out\": \"%s\", \"control\": \"Package: hello\\nVersion: 1.0\\n"
	   "Architecture: armhf\\n\", \"control_members\": [{\"name\": \"./conffiles\", "
	   "\"data\": \"remove-on-upgrad /etc/old.conf\\n\"}], \"members\": []}' | "
	   "python3 tests/integration/unpack_mkdeb.py", f.pe.path);
	ck_assert_int_eq(pkg_decode(&f.k, 1u << 30), -MKI_E_PACKAGE);
	fx_release(&f);
}
END_TEST

/* Not a .deb, or a truncated one: refused with the package named. */
START_TEST(broken_files)
{
	struct fx f;

	fx_init(&f, "hello", "1.0");
	sh("echo 'not an archive' >'%s'", f.pe.path);
	ck_assert_int_eq(pkg_decode(&f.k, 1u << 30), -MKI_E_PACKAGE);
	ck_assert_ptr_nonnull(strstr(f.k.errmsg, "package 'hello'"));
	fx_release(&f);

	fx_init(&f, "hello", "1.0");
	build_hello(&f);
	sh("truncate -s -2000 '%s'", f.pe.path);
	ck_assert_int_lt(pkg_decode(&f.k, 1u << 30), 0);
	ck_assert_ptr_nonnull(f.k.errmsg);
	fx_release(&f);
}
END_TEST

Suite *pkg_suite(void)
{
	Suite *s = suite_create("pkg");
	TCase *tc = tcase_create("pkg");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, decodes_into_the_spool);
	tcase_add_test(tc, streams_and_reads_lazily);
	tcase_add_test(tc, control_checked_against_the_plan);
	tcase_add_test(tc, relative_conffile_refused);
	tcase_add_test(tc, remove_on_upgrade_conffile_skipped);
	tcase_add_test(tc, broken_files);
	suite_add_tcase(s, tc);
	return s;
}
