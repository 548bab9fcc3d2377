/* URL joining as apt does it (url.h). */
#include "url.h"

#include <string.h>

#include "str.h"

char *url_join(const char *base, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = { 0 };
	size_t n = strlen(base);

	while (n && base[n - 1] == '/')
		n--;
	buf_add(&b, base, n);
	buf_add(&b, "/", 1);
	for (; *path; path++) {
		unsigned char c = (unsigned char)*path;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c)) {
			buf_add(&b, path, 1);
		} else {
			char esc[3] = { '%', hex[c >> 4], hex[c & 15] };

			buf_add(&b, esc, 3);
		}
	}
	return buf_detach(&b);
}

/*
 * Only the authority's host and port ever reach a message or a record: a path may carry a token
 * and the userinfo a password.
 */
int url_host(const char *url, char *out, size_t n)
{
	const char *p = strstr(url, "://"), *end, *at;
	size_t len;

	if (!p || !n)
		return -1;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	while (at) { /* the last '@' ends the userinfo */
		const char *next = memchr(at + 1, '@', (size_t)(end - at - 1));

		p = at + 1;
		at = next;
	}
	len = (size_t)(end - p);
	if (!len || len >= n)
		return -1;
	memcpy(out, p, len);
	out[len] = 0;
	return 0;
}

char *url_redact(const char *url)
{
	const char *p = strstr(url, "://"), *end, *at = NULL, *q;
	struct buf b = { 0 };

	if (!p)
		return xstrdup(url);
	p += 3;
	end = p + strcspn(p, "/?#");
	for (q = p; q < end; q++)
		if (*q == '@')
			at = q;
	if (!at)
		return xstrdup(url);
	buf_add(&b, url, (size_t)(p - url));
	buf_adds(&b, "***");
	buf_adds(&b, at);
	return buf_detach(&b);
}
