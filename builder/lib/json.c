#include "json.h"

/*
 * Length of the well-formed UTF-8 sequence at `s` (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF), or 0.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

void json_str(struct buf *b, const char *s)
{
	buf_adds(b, "\"");
	while (s && *s) {
		unsigned char c = (unsigned char)*s;
		int n = 1;

		if (c == '"' || c == '\\')
			buf_addf(b, "\\%c", c);
		else if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\t')
			buf_adds(b, "\\t");
		else if (c < 0x20)
			buf_addf(b, "\\u%04x", c);
		else if (c < 0x80)
			buf_add(b, s, 1);
		else if ((n = utf8_len((const unsigned char *)s)) > 0)
			buf_add(b, s, (size_t)n);
		else { /* Latin-1 or broken text from a package: JSON text must be UTF-8 */
			buf_adds(b, "\\ufffd");
			n = 1;
		}
		s += n;
	}
	buf_adds(b, "\"");
}

void json_key(struct buf *b, const char *key)
{
	json_str(b, key);
	buf_adds(b, ": ");
}
