/* What the stages give each other (build.h): the image's path and its release. */
#include "build.h"

#include <stdlib.h>
#include <string.h>

#include "configure/overlay.h"
#include "lib/x.h"

int build_output_stem(const char *output)
{
	const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');

	return (int)(dot && (!slash || dot > slash + 1) ? dot - output : (long)strlen(output));
}

char *build_parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return slash == path ? xstrdup("/") : xasprintf("%.*s", (int)(slash - path), path);
}

void build_release(struct build *b)
{
	buf_release(&b->disk);
	sparsehash_release(&b->digests);
	free(b->root_image);
	free(b->bmap);
	free(b->compressed);
	free(b->update_dir);
	free(b->bundle);
	free(b->bundle_manifest);
	bootexport_release(&b->boot);
	staging_release(&b->staging);
	overlay_report_free(b->overlays);
	layer_free(b->layer);
	dep5_texts_release(&b->shipped);
	plan_release(&b->plan);
	plan_release(&b->twins);
	strv_release(&b->python_emulated);
	indexes_release(&b->indexes);
	sources_release(&b->sources);
}
