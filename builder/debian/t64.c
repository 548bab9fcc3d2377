/*
 * The 64-bit time_t transition's naming rule (t64.h). Debian's renames kept the name and put
 * "t64" after the soname, before a "-flavour" (libcurl3t64-gnutls), dropping a one-letter ABI
 * suffix where there was one (libqt5core5a -> libqt5core5t64).
 */
#include "t64.h"

#include <ctype.h>
#include <string.h>

#define SUFFIX_MAX 2 /* an old name's ABI suffix that "t64" took the place of: "a", "v5" */

/* Is `s` (n bytes) a short ABI suffix: lower-case letters and digits, at most SUFFIX_MAX? */
static int abi_suffix(const char *s, size_t n)
{
	size_t i;

	if (n > SUFFIX_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* `new_name` = head "t64" tail, with `old` = head [suffix] tail. */
static int renamed_at(const char *old, const char *new_name, const char *t)
{
	size_t head = (size_t)(t - new_name), tail = strlen(t + 3), n = strlen(old);

	if (!head || n < head + tail || strncmp(old, new_name, head) ||
	    strcmp(old + n - tail, t + 3))
		return 0;
	return abi_suffix(old + head, n - head - tail);
}

int t64_renamed(const char *old, const char *new_name)
{
	const char *t;

	if (!old || !new_name || !*old)
		return 0;
	for (t = strstr(new_name, "t64"); t; t = strstr(t + 1, "t64"))
		if (renamed_at(old, new_name, t))
			return 1;
	return 0;
}
