/* The staging tree's description (stage.h). */
#include "stage.h"

#include <stdlib.h>
#include <string.h>

void stage_release(struct stage *s)
{
	free(s->root);
	free(s->manifest_file);
	free(s->lint_file);
	manifest_release(&s->manifest);
	memset(s, 0, sizeof(*s));
}
