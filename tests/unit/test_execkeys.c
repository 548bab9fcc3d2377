/*
 * Which ssh-keygen and openssl invocations run natively (execkeys.c): the postinsts' own calls
 * do, anything that could load a module built for the target does not, be it an option, a
 * configuration file (the default one or -config's) or the environment.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/execkeys.h"

static char dir[] = "/tmp/mki-execkeys.XXXXXX";
static char plain[128], loads[128], missing[128];

static void write_file(const char *path, const char *body)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(body, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Configuration files: Debian's default (trimmed), one that loads a provider, none. */
static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(plain, sizeof(plain), "%s/plain.cnf", dir);
	snprintf(loads, sizeof(loads), "%s/loads.cnf", dir);
	snprintf(missing, sizeof(missing), "%s/missing.cnf", dir);
	write_file(plain, "HOME = .\nopenssl_conf = openssl_init\nconfig_diagnostics = 1\n"
			  "#.include filename\n[openssl_init]\n# providers = provider_sect\n"
			  "[ req ]\ndefault_bits = 2048 # the default\n\tdistinguished_name = dn\n");
	write_file(loads, "openssl_conf = openssl_init\n[openssl_init]\n  providers=provider_sect\n"
			  "[provider_sect]\npkcs11 = pkcs11_sect\n[pkcs11_sect]\nactivate = 1\n");
}

static void teardown(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

/*
 * Whether `fn` lets the native build run the words of `line` (after argv[0]) with `conf`; the
 * word '' stands for an empty argument.
 */
static int allowed(int (*fn)(int, char **, const char *), const char *line, const char *conf)
{
	static char self[] = "mkimage-exec", file[] = "/usr/bin/x", argv0[] = "x";
	char copy[512], *argv[32] = { self, file, argv0 }, *save = NULL;
	int argc = 3;

	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok_r(copy, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = strcmp(w, "''") ? w : w + 2;
	argv[argc] = NULL;
	return fn(argc, argv, conf);
}

/* The words after argv[0], and whether the native build may run them. */
struct case_line {
	const char *line;
	int native;
};

static const struct case_line keygen_cases[] = {
	/* openssh-server's postinst (create_key) and ssh-keygen -A */
	{ "-q -f /etc/ssh/ssh_host_rsa_key -N '' -t rsa", 1 },
	{ "-q -f /etc/ssh/ssh_host_ed25519_key -N '' -t ed25519", 1 },
	{ "-l -f /etc/ssh/ssh_host_rsa_key.pub", 1 },
	{ "-A", 1 },
	{ "-qtecdsa -b521 -f/k -Nx", 1 },
	{ "-y -f /k", 1 },
	{ "-lvE md5 -f /k.pub", 1 },
	{ "-p -P old -N new -f /k", 1 },
	{ "-e -m PKCS8 -f /k.pub", 1 },
	{ "", 1 },
	/* FIDO, PKCS#11, certificates, signatures, moduli: emulated */
	{ "-t ed25519-sk -f /k", 0 },
	{ "-t ssh-ed25519 -f /k", 0 },
	{ "-D /usr/lib/arm-linux-gnueabihf/opensc-pkcs11.so", 0 },
	{ "-K", 0 },
	{ "-w /usr/lib/x/sk.so -t ecdsa-sk", 0 },
	{ "-s /ca -I id /k.pub", 0 },
	{ "-Y sign -f /k -n file /x", 0 },
	{ "-M generate /moduli", 0 },
	{ "-O application=ssh:x -t rsa", 0 },
	/* operands, "--", a missing value */
	{ "-l /k.pub", 0 },
	{ "-l -- -f", 0 },
	{ "-l -f", 0 },
	{ "-t", 0 },
	{ "--help", 0 },
	{ "-q -f /k -N x -t rsa -D /p.so", 0 },
	{ "-f -D -l", 1 }, /* -D is -f's value here */
};

START_TEST(ssh_keygen_native_for_key_files_only)
{
	for (size_t i = 0; i < sizeof(keygen_cases) / sizeof(keygen_cases[0]); i++)
		ck_assert_msg(allowed(execkeys_ssh_keygen, keygen_cases[i].line, plain) ==
				      keygen_cases[i].native,
			      "ssh-keygen %s: expected %s", keygen_cases[i].line,
			      keygen_cases[i].native ? "native" : "emulated");
	/* A configuration that loads a provider, or none at all */
	ck_assert_int_eq(allowed(execkeys_ssh_keygen, "-q -f /k -N x -t rsa", loads), 0);
	ck_assert_int_eq(allowed(execkeys_ssh_keygen, "-q -f /k -N x -t rsa", missing), 1);
	ck_assert_int_eq(allowed(execkeys_ssh_keygen, "-q -f /k -N x -t rsa", dir), 0);
	setenv("SSH_SK_PROVIDER", "/usr/lib/x/sk.so", 1);
	ck_assert_int_eq(allowed(execkeys_ssh_keygen, "-A", plain), 0);
	unsetenv("SSH_SK_PROVIDER");
	setenv("OPENSSL_MODULES", "/usr/lib/x/ossl-modules", 1);
	ck_assert_int_eq(allowed(execkeys_ssh_keygen, "-A", plain), 0);
	unsetenv("OPENSSL_MODULES");
}
END_TEST

static const struct case_line openssl_cases[] = {
	/* ssl-cert's make-ssl-cert, ca-certificates' update-ca-certificates */
	{ "req -new -x509 -days 3650 -nodes -sha256 -out /c.pem -keyout /k.key", 1 },
	{ "x509 -hash -noout -in /etc/ssl/certs/ssl-cert-snakeoil.pem", 1 },
	{ "rehash .", 1 },
	{ "genrsa -out /k 2048", 1 },
	{ "dhparam -out /dh.pem 2048", 1 },
	{ "req -config PLAIN -new -x509 -out /c", 1 },
	{ "req --config=PLAIN -new", 1 },
	/* options that load code */
	{ "req -engine pkcs11 -new", 0 },
	{ "req --engine=pkcs11 -new", 0 },
	{ "genpkey -provider legacy -algorithm rsa", 0 },
	{ "genpkey -provider-path /x -algorithm rsa", 0 },
	{ "req -new -keygen_engine x", 0 },
	{ "x509 -propquery provider=x -in /c", 0 },
	{ "req -config LOADS -new", 0 },
	{ "req -config=LOADS -new", 0 },
	{ "req -new -config", 0 },
	/* other commands */
	{ "version -a", 0 },
	{ "pkcs12 -export -legacy -in /c", 0 },
	{ "s_client -connect 127.0.0.1:443", 0 },
	{ "", 0 },
};

/* The case's line with PLAIN and LOADS standing for those configuration files. */
static void substitute(const char *line, char *out, size_t n)
{
	const char *p = line;
	size_t len = 0;

	while (*p && len + 1 < n) {
		const char *with = !strncmp(p, "PLAIN", 5) ? plain : !strncmp(p, "LOADS", 5) ? loads
											   : NULL;

		if (with) {
			len += (size_t)snprintf(out + len, n - len, "%s", with);
			p += 5;
		} else
			out[len++] = *p++;
	}
	out[len < n ? len : n - 1] = 0;
}

START_TEST(openssl_native_for_file_commands_only)
{
	char line[512];

	for (size_t i = 0; i < sizeof(openssl_cases) / sizeof(openssl_cases[0]); i++) {
		substitute(openssl_cases[i].line, line, sizeof(line));
		ck_assert_msg(allowed(execkeys_openssl, line, plain) == openssl_cases[i].native,
			      "openssl %s: expected %s", line,
			      openssl_cases[i].native ? "native" : "emulated");
	}
	ck_assert_int_eq(allowed(execkeys_openssl, "rehash .", loads), 0);
	ck_assert_int_eq(allowed(execkeys_openssl, "rehash .", missing), 1);
	setenv("OPENSSL_CONF", plain, 1);
	ck_assert_int_eq(allowed(execkeys_openssl, "rehash .", plain), 0);
	unsetenv("OPENSSL_CONF");
}
END_TEST

/* What could hide a module from a line-by-line scan is refused too. */
START_TEST(configurations_that_could_load_code)
{
	static const char *const bodies[] = { ".include /etc/ssl/openssl.cnf.d\n",
		" .include=/x.cnf\n", "engines = engine_section\n",
		"providers\t= p\n[ p ]\ndefault = d\nlegacy = l\n",
		"providers = p\n[p]\nfips = f\n", "providers = p\n[p]\ndefault = d\n[d]\n"
		"module = /usr/lib/arm-linux-gnueabihf/ossl-modules/pkcs11.so\n",
		"providers = p\n[p]\ndefault = d\n[d]\nidentity = legacy\n",
		"providers = p\n[p]\ndefault = d\n[other]\np::legacy = l\n",
		"providers = $ENV::P\n", "providers = p\nproviders = q\n[p]\n[q]\nlegacy = l\n",
		"x = a\\\nproviders = p\n", "provi\\\nders = p\n" };
	char path[160];

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		snprintf(path, sizeof(path), "%s/c%zu.cnf", dir, i);
		write_file(path, bodies[i]);
		ck_assert_msg(!allowed(execkeys_openssl, "rehash .", path), "'%s' passed", bodies[i]);
	}
	/*
	 * A key that merely ends in the word, a comment, a value naming it; trixie's default: the
	 * default provider named, nothing loaded.
	 */
	snprintf(path, sizeof(path), "%s/ok.cnf", dir);
	write_file(path, "my_providers = x\n# engines = e\nname = providers\n"
		   "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n"
		   "[provider_sect]\ndefault = default_sect\n# fips = fips_sect\n"
		   "[default_sect]\n# activate = 1\n[ req ]\nlegacy = fine here\n");
	ck_assert_int_eq(allowed(execkeys_openssl, "rehash .", path), 1);
}
END_TEST

Suite *execkeys_suite(void)
{
	Suite *s = suite_create("execkeys");
	TCase *tc = tcase_create("execkeys");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ssh_keygen_native_for_key_files_only);
	tcase_add_test(tc, openssl_native_for_file_commands_only);
	tcase_add_test(tc, configurations_that_could_load_code);
	suite_add_tcase(s, tc);
	return s;
}
