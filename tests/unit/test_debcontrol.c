/*
 * debcontrol.c, the control file of a local .deb (a recipe's own packages): read from .debs built
 * at test time with every compressor dpkg-deb offers, and the refusals with their codes.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debian/debcontrol.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/x.h"

static char dir[64];

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

static void setup(void)
{
	log_set_level(LOG_QUIET);
	snprintf(dir, sizeof(dir), "/tmp/mki-unit-debcontrol.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	sh("mkdir -p '%s/src/DEBIAN' && printf 'Package: x\\nVersion: 1\\nArchitecture: all\\n"
	   "Maintainer: t <t@t>\\nDescription: d\\n' >'%s/src/DEBIAN/control'", dir, dir);
}

static void teardown(void)
{
	sh("rm -rf '%s'", dir);
}

START_TEST(every_compressor)
{
	static const char *const z[] = { "xz", "gzip", "zstd", "none" };
	size_t i, len;
	char *text;

	for (i = 0; i < sizeof(z) / sizeof(z[0]); i++) {
		char *deb = xasprintf("%s/x-%s.deb", dir, z[i]);

		sh("dpkg-deb --root-owner-group -Z%s -b '%s/src' '%s' >/dev/null", z[i], dir, deb);
		text = NULL;
		ck_assert_int_eq(debcontrol_read(deb, &text, &len), 0);
		ck_assert_str_eq(text, "Package: x\nVersion: 1\nArchitecture: all\n"
				       "Maintainer: t <t@t>\nDescription: d\n");
		ck_assert_uint_eq(len, strlen(text));
		free(text);
		free(deb);
	}
}
END_TEST

/* Each refusal has its code: a missing file, not a .deb, no control file, an oversized one. */
START_TEST(refusals)
{
	static const struct {
		const char *spec; /* unpack_mkdeb.py's JSON, or a command writing the file */
		int json, ret;
	} t[] = {
		{ "echo 'just text' >", 0, -MKI_E_PACKAGE },
		{ "printf '!<arch>\\n' >", 0, -MKI_E_PACKAGE },
		{ "\"control_name\": \"control.tar.xz\", \"control\": \"\", "
		  "\"control_members\": [], \"members\": []", 1, 0 },
		{ "\"control_name\": \"notcontrol.tar\", \"control\": \"P: x\\n\", "
		  "\"members\": []", 1, -MKI_E_PACKAGE },
	};
	char *deb = xasprintf("%s/t.deb", dir), *text;
	size_t i, len;

	ck_assert_int_eq(debcontrol_read("/nonexistent/x.deb", &text, &len), -ENOENT);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].json)
			sh("printf '%%s' '{\"out\": \"%s\", %s}' | "
			   "python3 tests/integration/unpack_mkdeb.py", deb, t[i].spec);
		else
			sh("%s '%s'", t[i].spec, deb);
		text = NULL;
		ck_assert_msg(debcontrol_read(deb, &text, &len) == t[i].ret, "case %zu", i);
		free(text);
	}
	/* a control file beyond DEBCONTROL_MAX: the package's limit */
	sh("python3 -c 'import json; print(json.dumps({\"out\": \"%s\", \"control_name\": "
	   "\"control.tar\", \"control\": \"P: \" + \"x\" * %u, \"members\": []}))' | "
	   "python3 tests/integration/unpack_mkdeb.py", deb, DEBCONTROL_MAX);
	ck_assert_int_eq(debcontrol_read(deb, &text, &len), -MKI_E_LIMIT_PKG);
	free(deb);
}
END_TEST

Suite *debcontrol_suite(void)
{
	Suite *s = suite_create("debcontrol");
	TCase *tc = tcase_create("debcontrol");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, every_compressor);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}
