#include "json.h"

void json_str(struct buf *b, const char *s)
{
	buf_adds(b, "\"");
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_addf(b, "\\%c", c);
		else if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\t')
			buf_adds(b, "\\t");
		else if (c < 0x20)
			buf_addf(b, "\\u%04x", c);
		else
			buf_add(b, s, 1);
	}
	buf_adds(b, "\"");
}

void json_key(struct buf *b, const char *key)
{
	json_str(b, key);
	buf_adds(b, ": ");
}
