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
