/* Fuzz the recipe parser and validator: any bytes must give 0 or -MKI_E_RECIPE, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/format.h"
#include "lib/err.h"
#include "lib/log.h"
#include "recipe/recipe.h"
#include "recipe/recipe_internal.h"

/* libconfig 1.5 leaks a buffer on some syntax errors: its bug, not ours (see .options). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libconfig.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct recipe_checks checks = { NULL, format_recipe_check };
	struct recipe r;
	char *text = malloc(size + 1);
	int ret;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	log_set_level(LOG_QUIET);
	ret = recipe_parse_text(&r, text, "fuzz.cfg", "/nonexistent", &checks);
	free(text);
	if (ret == 0) {
		struct buf b = { 0 };

		recipe_format(&r, &b);
		buf_release(&b);
		recipe_release(&r);
	} else if (ret != -MKI_E_RECIPE) {
		abort();
	}
	return 0;
}
