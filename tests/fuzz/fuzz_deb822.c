/*
 * Fuzz the deb822 reader (Packages, Release, control files) and the first-stanza control parser
 * of deb.c: every input ends in a stanza count or a specific error, and what comes out is
 * well-formed (NUL-terminated values of the stated length, no field without a name).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "debian/deb.h"
#include "debian/deb822.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

static void check_stanza(const struct deb822 *d)
{
	size_t i;

	if (!d->n_fields || d->n_fields > runlimits_get(NULL, LIMIT_FIELDS))
		abort(); /* a stanza has at least one field and at most the limit */
	for (i = 0; i < d->n_fields; i++) {
		const struct deb822_field *f = &d->fields[i];

		if (!f->name[0] || strlen(f->value) != f->value_len)
			abort();
		if (deb822_get(d, f->name) == NULL)
			abort(); /* every field can be looked up by its own name */
	}
	(void)deb822_get(d, "Package");
	(void)deb822_get(d, "SHA256");
}

static void fuzz_reader(const uint8_t *data, size_t size)
{
	struct deb822 d;
	int ret;

	if (deb822_open_mem(&d, "fuzz", data, size))
		abort();
	while ((ret = deb822_next(&d)) == 1)
		check_stanza(&d);
	if (ret != 0 && ret != -MKI_E_PARSE && ret != -MKI_E_LIMIT_REPO)
		abort();
	/* Re-reading from the last stanza start gives the same verdict (the index uses seek). */
	if (ret == 0 && d.stanza_line > 0) {
		off_t off = d.stanza_offset;
		unsigned long line = d.stanza_line;

		if (deb822_seek(&d, off, line) == 0 && deb822_next(&d) < 0)
			abort();
	}
	deb822_close(&d);
}

static void fuzz_control(const uint8_t *data, size_t size)
{
	struct deb_control c = { 0 };
	const char *why = NULL;
	char *text = xmalloc(size + 1);
	int ret;

	memcpy(text, data, size);
	text[size] = 0;
	ret = deb_control_parse(&c, text, NULL, &why);
	if (ret != 0 && ((ret != -MKI_E_PACKAGE && ret != -MKI_E_LIMIT_PKG) || !why))
		abort();
	(void)deb_control_get(&c, "Package");
	deb_control_release(&c);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_set_level(LOG_QUIET);
	fuzz_reader(data, size);
	fuzz_control(data, size);
	return 0;
}
