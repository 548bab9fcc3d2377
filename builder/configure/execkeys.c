/*
 * ssh-keygen and openssl as twins (execkeys.h). openssh-server's postinst makes the host keys
 * with ssh-keygen, ssl-cert's the snakeoil certificate with openssl, and under QEMU the RSA keys
 * alone take seconds each. Their output is random on every machine; the same version built for
 * the host writes the same formats and draws from the same generator, so a native run is another
 * draw, not another result (test 165 checks the files). What could still differ is code loaded
 * from the tree: a PKCS#11 or FIDO module, an OpenSSL engine or provider built for the target,
 * which the native process cannot load where the emulated one can. So a native run takes no
 * option that loads one, no configuration that names one and no environment that moves them;
 * everything else stays emulated.
 */
#include "execkeys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A larger configuration is nobody's default: emulated, rather than read in part */
#define CONF_MAX (256 * 1024)

/* Where OpenSSL looks for its configuration, modules and engines instead of its defaults. */
static const char *const openssl_env[] = { "OPENSSL_CONF", "OPENSSL_CONF_INCLUDE",
	"OPENSSL_MODULES", "OPENSSL_ENGINES", NULL };

static int in_list(const char *const *list, const char *s, size_t n)
{
	for (; *list; list++)
		if (strlen(*list) == n && !strncmp(*list, s, n))
			return 1;
	return 0;
}

/* One line of an OpenSSL configuration: a section's name, or a key and its value; n 0: none. */
struct conf_line {
	const char *key, *value;
	size_t nkey, nvalue;
	int section;
};

static size_t span_not(const char *p, size_t n, const char *stop)
{
	size_t i = 0;

	while (i < n && !strchr(stop, p[i]))
		i++;
	return i;
}

/* OpenSSL's syntax: "[ name ]", "key = value # comment"; blanks around each part. */
static void conf_split(const char *p, size_t n, struct conf_line *l)
{
	memset(l, 0, sizeof(*l));
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (!n || *p == '#')
		return;
	l->section = *p == '[';
	if (l->section) {
		p++;
		n--;
		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		l->key = p;
		l->nkey = span_not(p, n, " \t]");
		return;
	}
	l->key = p;
	l->nkey = span_not(p, n, " \t=");
	p += l->nkey;
	n -= l->nkey;
	while (n && (*p == ' ' || *p == '\t' || *p == '=')) {
		p++;
		n--;
	}
	l->value = p;
	l->nvalue = span_not(p, n, "#");
	while (l->nvalue && (p[l->nvalue - 1] == ' ' || p[l->nvalue - 1] == '\t'))
		l->nvalue--;
}

static int is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !strncmp(s, word, n);
}

/*
 * Whether one line may load code, whatever section it is in: an .include (of anything), an
 * "engines" key (engines are modules), a provider's "module" or "identity" (a file, or a name
 * other than its own), a key of another section ("sect::key"), or a line continued on the next,
 * which could join a key this scan does not see.
 */
static int conf_line_loads(const char *p, size_t n, const struct conf_line *l)
{
	static const char *const keys[] = { "engines", "module", "identity", NULL };

	if (n && p[n - 1] == '\\')
		return 1;
	if (!l->nkey || l->section)
		return 0;
	if (l->nkey >= strlen(".include") && !strncmp(l->key, ".include", strlen(".include")))
		return 1;
	for (size_t i = 0; i + 1 < l->nkey; i++)
		if (l->key[i] == ':' && l->key[i + 1] == ':')
			return 1;
	return in_list(keys, l->key, l->nkey);
}

/*
 * Whether the configuration file `path` loads no module: a missing file loads nothing (OpenSSL
 * goes on without one), an unreadable or oversized one is not known not to. Providers may be
 * named (trixie's default names "default"), but only those built into libcrypto, "default",
 * "base" and "null", each in the one section "providers" names. A static buffer: mkimage-exec
 * is one thread, and its allocator is not set up for one read.
 */
static int conf_plain(const char *path)
{
	static const char *const builtin[] = { "default", "base", "null", NULL };
	static char buf[CONF_MAX];
	const char *providers = NULL, *section = NULL;
	size_t len = 0, nproviders = 0, nsection = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT;
	do
		r = read(fd, buf + len, sizeof(buf) - len);
	while (r > 0 && (len += (size_t)r) < sizeof(buf));
	close(fd);
	if (r) /* an error (a FIFO's EAGAIN among them), or a full buffer */
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t at = 0; at < len;) {
			const char *line = buf + at, *nl = memchr(line, '\n', len - at);
			size_t n = nl ? (size_t)(nl - line) : len - at;
			struct conf_line l;

			at += n + 1;
			conf_split(line, n, &l);
			if (pass == 0) {
				if (conf_line_loads(line, n, &l))
					return 0;
				if (!l.section && is(l.key, l.nkey, "providers")) {
					/* one section, named plainly: no second list, no $variable */
					if (providers || memchr(l.value, '$', l.nvalue))
						return 0;
					providers = l.value;
					nproviders = l.nvalue;
				}
			} else if (l.section) {
				section = l.key;
				nsection = l.nkey;
			} else if (l.nkey && section && nsection == nproviders &&
				   !strncmp(section, providers, nsection) &&
				   !in_list(builtin, l.key, l.nkey))
				return 0;
		}
		if (!providers)
			break;
	}
	return 1;
}

static int env_plain(void)
{
	for (const char *const *e = openssl_env; *e; e++)
		if (getenv(*e))
			return 0;
	return 1;
}

/*
 * ssh-keygen's options (OpenSSH 9.x's getopt string) that run natively, without and with a
 * value: -A (the host keys), key generation (-t -b -C -N -f -q -a -m), fingerprints (-l -E -v),
 * public keys (-y), comment and passphrase changes (-c -p -P), conversions (-e -i). Not: -D
 * (PKCS#11), -K, -w and -O (FIDO), -s (certificates, with -D or an agent), -Y, -M, -k, -Q.
 */
#define KEYGEN_NATIVE_FLAGS "Aceilpqvy"
#define KEYGEN_NATIVE_VALUES "CENPabfmt"

/* Key types made natively: not the "-sk" ones, whose keys live on a FIDO token. */
static int keygen_type(const char *t)
{
	static const char *const types[] = { "rsa", "dsa", "ecdsa", "ed25519", NULL };

	return in_list(types, t, strlen(t));
}

/*
 * Every word must be an option cluster of the native modes or an option's value: no operand
 * (none of those modes reads one, and glibc's getopt would take options after it), no "--".
 */
int execkeys_ssh_keygen(int argc, char **argv, const char *conf)
{
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !a[1] || a[1] == '-')
			return 0;
		for (a++; *a; a++) {
			const char *value;

			if (strchr(KEYGEN_NATIVE_FLAGS, *a))
				continue;
			if (!strchr(KEYGEN_NATIVE_VALUES, *a))
				return 0;
			value = a[1] ? a + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (!value || (*a == 't' && !keygen_type(value)))
				return 0;
			break;
		}
	}
	return env_plain() && !getenv("SSH_SK_PROVIDER") && conf_plain(conf);
}

/*
 * openssl's commands that work on files alone. Not: version (-a names the platform), list,
 * speed, engine, the network clients and servers, pkcs12 (-legacy loads a provider), ca.
 */
static const char *const openssl_commands[] = { "req", "x509", "genrsa", "genpkey", "rsa",
	"pkey", "ec", "ecparam", "dhparam", "rehash", "rand", "dgst", "verify", "crl", NULL };
/* Options that load code or choose among what is loaded */
static const char *const openssl_loaders[] = { "engine", "keygen_engine", "provider",
	"provider-path", "propquery", NULL };

/*
 * Every word is looked at, values included (one that reads "-engine" sends the run to QEMU): an
 * option is "-name", "--name" or either with "=value", as OpenSSL's option parser reads them.
 */
int execkeys_openssl(int argc, char **argv, const char *conf)
{
	if (argc < 4 || !in_list(openssl_commands, argv[3], strlen(argv[3])))
		return 0;
	for (int i = 4; i < argc; i++) {
		const char *name = argv[i] + 1, *eq;
		size_t n;

		if (argv[i][0] != '-')
			continue;
		name += *name == '-';
		eq = strchr(name, '=');
		n = eq ? (size_t)(eq - name) : strlen(name);
		if (in_list(openssl_loaders, name, n))
			return 0;
		if (n == strlen("config") && !strncmp(name, "config", n)) {
			const char *file = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;

			if (!file || !conf_plain(file))
				return 0;
		}
	}
	return env_plain() && conf_plain(conf);
}
