/*
 * The SDK's own steps (stage.h), which run only for mkimage --sdk: its request completed from
 * the verified indexes before resolving, and its wrappers and toolchain files written into the
 * configured tree before the image writer makes the tar (sdk.h, configure/sdkfiles.h).
 */
#include "stage.h"
#include "stage_ctx.h"
#include "sdk.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "configure/sdkfiles.h"
#include "debian/arch.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/x.h"

int stage_sdk_request(struct build_opts *o, const struct recipe *r, struct build *b)
{
	return b->sdk ? sdk_request(b->sdk, &b->indexes) : 0;
}

/* The SDK's C library as its environment script checks it: "2.36" of libc6 2.36-9+deb12u4. */
static char *libc_version(const struct plan *p, const char *host)
{
	const char *v, *colon;
	size_t i, n;

	for (i = 0; i < p->n; i++) {
		if (strcmp(p->v[i].name, "libc6") || strcmp(p->v[i].arch, host))
			continue;
		v = p->v[i].version;
		colon = strchr(v, ':');
		v = colon ? colon + 1 : v;
		for (n = 0; isdigit((unsigned char)v[n]) || v[n] == '.'; n++)
			;
		return n ? xstrndup(v, n) : NULL;
	}
	return NULL;
}

int stage_sdk_tree(const struct build_opts *o, const struct recipe *r, const struct build *b,
		   struct staging *s)
{
	char *glibc;
	int ret;

	if (!b->sdk)
		return 0;
	glibc = libc_version(&b->plan, r->arch);
	if (!glibc)
		return log_errno(-MKI_E_RESOLVE, "the SDK's plan has no libc6:%s of a version "
				 "such as 2.36: its programs would not run", r->arch);
	ret = sdkfiles_write(s, &b->sdk->targets, glibc, o->st.source_date_epoch);
	free(glibc);
	return ret;
}

int stage_sdk_files(struct build_opts *o, const struct recipe *r, struct build *b)
{
	return stage_sdk_tree(o, r, b, &b->staging);
}
