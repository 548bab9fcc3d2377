/* The build report's JSON, written to a temp file and read back byte for byte. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "emit/report.h"

struct fixture {
	char dir[64];
	char *file;
	struct plan_entry e[3];
	struct plan p;
	struct recipe r;
	struct report rep;
};

static void setup(struct fixture *f)
{
	static const char *const names[] = { "fetch", "resolve", NULL, "unpack", "configure",
					     "image", "outputs" };
	static const char *const arch[] = { "armhf", "all", "armhf" };

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-report.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	f->file = xasprintf("%s/report.json", f->dir);
	for (int i = 0; i < 3; i++)
		f->e[i].arch = (char *)(uintptr_t)arch[i];
	f->p.v = f->e;
	f->p.n = 3;
	f->r.name = (char *)(uintptr_t)"board";
	memset(f->r.digest, 'a', 64);
	for (int i = 0; i < REPORT_STAGES; i++) {
		f->rep.stage_names[i] = names[i];
		f->rep.stage_secs[i] = i == 4 ? -1 : 0.5 * i; /* configure not run */
	}
	f->rep.total_secs = 12.3456;
	f->rep.bytes_downloaded = 1u << 20;
	f->rep.files_downloaded = 3;
	f->rep.files_cached = 2;
	f->rep.filtered = (struct pathfilter_count){ 10, 2, 4096 };
	f->rep.image_bytes = 1 << 30;
	memset(f->rep.image_sha256, 'b', 64);
	f->rep.image = "/out/board.img";
	f->rep.lock = "/out/board.lock";
	f->rep.sbom = "/out/board.spdx.json";
	f->rep.warnings = 1;
}

static char *written(const struct fixture *f)
{
	struct buf b = { 0 };

	ck_assert_int_eq(readfile_read(f->file, 1 << 20, &b, NULL), 0);
	return buf_detach(&b);
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(f->file);
}

#define A64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B64 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* Stages not run or unnamed are left out; packages counted per architecture in plan order. */
START_TEST(report_json)
{
	struct fixture f;
	char *got;

	setup(&f);
	f.rep.version = "1.2+git3.abc";
	f.rep.source_date_epoch = 1700000000;
	snprintf(f.rep.fs_uuid, sizeof(f.rep.fs_uuid), "0a1b2c3d-0000-4000-8000-00112233aabb");
	f.rep.network = "  \"network\": []";
	f.rep.native_tools = "  \"native_tools\": {}";
	strv_push(&f.p.archs, "armhf");
	strv_push(&f.p.archs, "armel");
	log_set_level(LOG_ERROR);
	log_warn("disk \"space\"\nlow"); /* kept although not printed */
	log_warn_instead("the entry token 'debian' (os-release's ID)",
			 "cannot read '%s': it is a FIFO", "/etc/kernel/entry-token");
	ck_assert_int_eq(report_write(&f.rep, &f.p, &f.r, f.file), 0);
	strv_release(&f.p.archs);
	got = written(&f);
	ck_assert_str_eq(got,
		"{\n  \"status\": \"ok\",\n  \"recipe\": \"board\",\n  \"recipe_sha256\": \"" A64 "\",\n"
		"  \"stages\": { \"fetch\": 0.000, \"resolve\": 0.500, \"unpack\": 1.500, "
		"\"image\": 2.500, \"outputs\": 3.000 },\n"
		"  \"total_seconds\": 12.346,\n"
		"  \"download\": { \"bytes\": 1048576, \"files\": 3, \"cached\": 2 },\n"
		"  \"packages\": { \"armhf\": 2, \"all\": 1, \"total\": 3 },\n"
		"  \"left_out\": { \"files\": 10, \"directories\": 2, \"bytes\": 4096 },\n"
		"  \"image\": { \"path\": \"/out/board.img\", \"bytes\": 1073741824, \"sha256\": \""
		B64 "\" },\n"
		"  \"lock\": \"/out/board.lock\",\n  \"sbom\": \"/out/board.spdx.json\",\n"
		"  \"warnings\": 1,\n"
		"  \"mkimage_version\": \"1.2+git3.abc\",\n  \"source_date_epoch\": 1700000000,\n"
		"  \"architectures\": [\"armhf\", \"armel\"],\n"
		"  \"filesystem_uuid\": \"0a1b2c3d-0000-4000-8000-00112233aabb\",\n"
		"  \"warning_texts\": [\n    \"disk \\\"space\\\"\\nlow\",\n"
		"    \"cannot read '/etc/kernel/entry-token': it is a FIFO; used the entry token "
		"'debian' (os-release's ID) instead\"\n  ],\n"
		"  \"worked_around\": [\n    { \"what\": \"cannot read '/etc/kernel/entry-token': "
		"it is a FIFO\", \"used_instead\": \"the entry token 'debian' (os-release's ID)\" }"
		"\n  ],\n"
		"  \"network\": [],\n  \"native_tools\": {}\n}\n");
	free(got);
	teardown(&f);
}
END_TEST

/* The layer cache's outcome when it was reached; names escaped; an empty plan counts nothing. */
START_TEST(layer_cache_and_escaping)
{
	struct fixture f;
	char *got;

	setup(&f);
	f.p.n = 0;
	f.r.name = (char *)(uintptr_t)"bo\"ard\n";
	f.rep.layer_outcome = "restored";
	f.rep.layer_key = A64;
	ck_assert_int_eq(report_write(&f.rep, &f.p, &f.r, f.file), 0);
	got = written(&f);
	ck_assert_ptr_nonnull(strstr(got, "\"recipe\": \"bo\\\"ard\\n\",\n"));
	ck_assert_ptr_nonnull(strstr(got, "  \"packages\": { \"total\": 0 },\n"));
	ck_assert_ptr_nonnull(strstr(got, "\" },\n  \"layer_cache\": { \"outcome\": \"restored\", "
					  "\"key\": \"" A64 "\" },\n  \"lock\": "));
	free(got);
	teardown(&f);
}
END_TEST

/* A directory that is not there: the errno, and no file or temp file anywhere. */
START_TEST(unwritable)
{
	struct fixture f;
	DIR *d;
	struct dirent *de;

	setup(&f);
	free(f.file);
	f.file = xasprintf("%s/missing/report.json", f.dir);
	ck_assert_int_eq(report_write(&f.rep, &f.p, &f.r, f.file), -ENOENT);
	d = opendir(f.dir);
	while ((de = readdir(d)))
		ck_assert_msg(de->d_name[0] == '.', "'%s' left behind", de->d_name);
	closedir(d);
	teardown(&f);
}
END_TEST

/* A failure: status, stage, exit code, every error escaped, the stages that ran, the log. */
START_TEST(failure_json)
{
	struct fixture f;
	struct strv errors = { 0 };
	struct report_failure fl = { "failed", "hooks", 7, &errors, "/out/board.log" };
	char *got;

	setup(&f);
	f.rep.version = "1.2+git3.abc";
	strv_push(&errors, "hook 'x' failed with exit status 2; last lines of its output:");
	strv_push(&errors, "a \"quoted\"\nname");
	ck_assert_int_eq(report_write_failure(&fl, &f.rep, &f.r, f.file), 0);
	got = written(&f);
	ck_assert_str_eq(got,
		"{\n  \"status\": \"failed\",\n  \"recipe\": \"board\",\n  \"recipe_sha256\": \""
		A64 "\",\n  \"mkimage_version\": \"1.2+git3.abc\",\n  \"stage\": \"hooks\",\n  \"exit_code\": 7,\n  \"errors\": [\n"
		"    \"hook 'x' failed with exit status 2; last lines of its output:\",\n"
		"    \"a \\\"quoted\\\"\\nname\"\n  ],\n"
		"  \"stages\": { \"fetch\": 0.000, \"resolve\": 0.500, \"unpack\": 1.500, "
		"\"image\": 2.500, \"outputs\": 3.000 },\n"
		"  \"total_seconds\": 12.346,\n  \"log\": \"/out/board.log\",\n"
		"  \"warnings\": 1,\n  \"worked_around\": []\n}\n");
	free(got);
	fl = (struct report_failure){ "interrupted", NULL, 130, NULL, NULL };
	ck_assert_int_eq(report_write_failure(&fl, &f.rep, &f.r, f.file), 0);
	got = written(&f);
	ck_assert_ptr_nonnull(strstr(got, "\"status\": \"interrupted\""));
	ck_assert_ptr_nonnull(strstr(got, "\"stage\": null,\n  \"exit_code\": 130,\n  \"errors\": [],"));
	ck_assert_ptr_nonnull(strstr(got, "\"log\": null,"));
	free(got);
	strv_release(&errors);
	teardown(&f);
}
END_TEST

/* The native tools' member: twins counted once per host; none used is null. */
START_TEST(native_tools_json)
{
	static char n1[] = "a", n2[] = "b", n3[] = "c", u1[] = "http://deb.example:8080/p/a.deb",
		    u2[] = "http://deb.example:8080/p/b.deb", u3[] = "https://other.example/c.deb";
	struct plan_entry e[] = { { .name = n1, .url = u1, .size = 1 },
				  { .name = n2, .url = u2, .size = 2 },
				  { .name = n3, .url = u3, .size = 4 } };
	struct plan twins = { .v = e, .n = 3 }, none = { 0 };
	struct buf b = { 0 };

	struct strv py = { 0 };

	strv_push(&py, "python3-x");
	strv_push(&py, "python3-y");
	report_native_json(&b, 1, &twins, "host", &py);
	ck_assert_str_eq(b.p, "  \"native_tools\": { \"enabled\": true, \"twins_from\": "
			      "\"host apt sources\", \"twin_packages\": 3, \"twin_bytes\": 7, "
			      "\"hosts\": [\"deb.example:8080\", \"other.example\"], "
			      "\"python_emulated\": [\"python3-x\", \"python3-y\"] }");
	buf_release(&b);
	strv_release(&py);
	/* a tree from the layer cache: nobody knows */
	report_native_json(&b, 0, &none, NULL, NULL);
	ck_assert_str_eq(b.p, "  \"native_tools\": { \"enabled\": false, \"twins_from\": null, "
			      "\"twin_packages\": 0, \"twin_bytes\": 0, \"hosts\": [], "
			      "\"python_emulated\": null }");
	buf_release(&b);
	report_native_json(&b, 1, &twins, "recipe", &py);
	ck_assert_ptr_nonnull(strstr(b.p, "\"twins_from\": \"recipe\""));
	buf_release(&b);
}
END_TEST

/* Each server once, each purpose once per server, in the order first contacted. */
START_TEST(network_json)
{
	static struct report_net n;
	struct buf b = { 0 };
	int i;

	report_net_json(&n, &b);
	ck_assert_str_eq(b.p, "  \"network\": []");
	buf_release(&b);
	report_net_note(&n, "a.example", "indexes");
	report_net_note(&n, "b.example:8080", "packages");
	report_net_note(&n, "a.example", "packages");
	report_net_note(&n, "a.example", "indexes");
	for (i = 0; i < REPORT_NET_HOSTS + 3; i++) {
		char host[32];

		snprintf(host, sizeof(host), "h%d", i);
		report_net_note(&n, host, "packages");
	}
	ck_assert_uint_eq(n.n, REPORT_NET_HOSTS);
	report_net_json(&n, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "  \"network\": [\n    { \"host\": \"a.example\", \"for\": "
					  "[\"indexes\", \"packages\"] },\n    { \"host\": "
					  "\"b.example:8080\", \"for\": [\"packages\"] },"));
	ck_assert_ptr_null(strstr(b.p, "\"h30\""));
	buf_release(&b);
}
END_TEST

Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, report_json);
	tcase_add_test(tc, layer_cache_and_escaping);
	tcase_add_test(tc, unwritable);
	tcase_add_test(tc, failure_json);
	tcase_add_test(tc, native_tools_json);
	tcase_add_test(tc, network_json);
	suite_add_tcase(s, tc);
	return s;
}
