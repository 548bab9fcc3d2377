/* Where a registry's credentials may go: the token realm against the registry (regrealm.h). */
#include "regrealm.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_MAX 255

/* Where a URL points: its scheme, host (lower case; an IPv6 address keeps its brackets), port. */
struct origin {
	int https;
	char host[HOST_MAX + 1];
	unsigned port;
};

static int host_char(char c, int bracketed)
{
	if (isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_')
		return 1;
	return bracketed && c == ':';
}

/*
 * The authority at `s` (HOST[:PORT], [V6][:PORT]), which ends at '/', '?', '#' or the end of
 * the string, into `o`; a missing port is the default of o->https. 0 or -EINVAL: user
 * information ('@'), an empty or overlong host, a port that is not 1-65535.
 */
static int authority_parse(const char *s, struct origin *o)
{
	size_t n = strcspn(s, "/?#"), h;
	const char *colon;
	char *end;
	long port = o->https ? 443 : 80;
	int bracketed = s[0] == '[';

	if (bracketed) {
		const char *close = memchr(s, ']', n);

		colon = close && close + 1 < s + n ? close + 1 : NULL;
		h = close ? (size_t)(close - s) + 1 : 0;
		if (!close || (colon && *colon != ':'))
			return -EINVAL;
	} else {
		colon = memchr(s, ':', n);
		h = colon ? (size_t)(colon - s) : n;
	}
	if (colon) {
		port = strtol(colon + 1, &end, 10);
		if (end != s + n || end == colon + 1 || !isdigit((unsigned char)colon[1]) ||
		    port < 1 || port > 65535)
			return -EINVAL;
	}
	if (!h || h > HOST_MAX)
		return -EINVAL;
	for (size_t i = bracketed; i < h - bracketed; i++)
		if (!host_char(s[i], bracketed))
			return -EINVAL;
	for (size_t i = 0; i < h; i++)
		o->host[i] = (char)tolower((unsigned char)s[i]);
	o->host[h] = '\0';
	o->port = (unsigned)port;
	return 0;
}

/* "http(s)://AUTHORITY..." into `o`. 0 or -EINVAL. */
static int origin_parse(const char *url, struct origin *o)
{
	memset(o, 0, sizeof(*o));
	if (str_starts_with(url, "https://"))
		o->https = 1;
	else if (!str_starts_with(url, "http://"))
		return -EINVAL;
	return authority_parse(url + (o->https ? 8 : 7), o);
}

static int same_place(const struct origin *a, const struct origin *b)
{
	return !strcmp(a->host, b->host) && a->port == b->port;
}

/* Does the entry `e` (`n` bytes: [http(s)://]HOST[:PORT]) allow `to`, in the clear if `clear`? */
static int entry_allows(const char *e, size_t n, const struct origin *to, int clear)
{
	struct origin o = { .https = to->https };
	char *text = xstrndup(e, n);
	const char *a = text;
	int plain = 0, ok;

	if (str_starts_with(a, "http://")) {
		plain = 1;
		a += 7;
	} else if (str_starts_with(a, "https://")) {
		a += 8;
	}
	ok = !authority_parse(a, &o) && same_place(&o, to) && (!clear || plain);
	free(text);
	return ok;
}

static int listed(const char *allowed, const struct origin *to, int clear)
{
	const char *p = allowed;
	size_t n;

	while (p && *p) {
		p += strspn(p, ", \t\n");
		n = strcspn(p, ", \t\n");
		if (n && entry_allows(p, n, to, clear))
			return 1;
		p += n;
	}
	return 0;
}

/* The realm's place as an entry of MKIMAGE_REGISTRY_TOKEN_HOSTS writes it. */
static void entry_for(const struct origin *to, int clear, struct buf *out)
{
	buf_addf(out, "%s%s", clear ? "http://" : "", to->host);
	if (to->port != (to->https ? 443u : 80u))
		buf_addf(out, ":%u", to->port);
}

int regrealm_check(const char *registry, const char *realm, const char *allowed, struct buf *why)
{
	struct origin reg, to;
	struct buf entry = { 0 };
	int clear;

	if (origin_parse(registry, &reg)) {
		buf_addf(why, "the registry '%s' names no host a token service can be compared "
			      "with: its credentials go to none", registry);
		return -EINVAL;
	}
	if (origin_parse(realm, &to)) {
		buf_addf(why, "the registry's token service '%s' is no http(s) URL of a host",
			 realm);
		return -EINVAL;
	}
	clear = reg.https && !to.https;
	if ((same_place(&reg, &to) && !clear) || listed(allowed, &to, clear))
		return 0;
	entry_for(&to, clear, &entry);
	buf_addf(why, "the %s registry sends its token requests%s to '%s'",
		 reg.https ? "https" : "http", clear ? " in the clear" : "", realm);
	if (!same_place(&reg, &to))
		buf_addf(why, ", not to its own host '%s:%u'", reg.host, reg.port);
	buf_addf(why, ": its credentials are not sent there (MKIMAGE_REGISTRY_TOKEN_HOSTS=%s sends "
		      "them, if that service is the farm's)", entry.p);
	buf_release(&entry);
	return -EACCES;
}
