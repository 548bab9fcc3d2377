/* Minimal JSON writing: escaped strings into a buffer. Output only; we never parse JSON. */
#ifndef MKI_JSON_H
#define MKI_JSON_H

#include "str.h"

/**
 * Append `s` as a JSON string literal (quotes included), escaping per RFC 8259; a byte that is not
 * part of well-formed UTF-8 becomes U+FFFD, so the document stays valid JSON whatever `s` holds.
 */
void json_str(struct buf *b, const char *s);
/** Append `"key": ` */
void json_key(struct buf *b, const char *key);

#endif
