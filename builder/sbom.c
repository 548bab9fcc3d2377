#include "sbom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "json.h"

/* SPDX ids allow letters, digits, '.' and '-' only. */
static void spdx_id(struct buf *b, const struct plan_entry *e, size_t i)
{
	const char *s;

	buf_adds(b, "\"SPDXRef-Package-");
	for (s = e->name; *s; s++)
		buf_addf(b, "%c", (*s == '+' || *s == '_') ? '-' : *s);
	buf_addf(b, "-%s-%zu\"", e->arch, i);
}

/* purl: pkg:deb/debian/NAME@VERSION?arch=ARCH, with ':' and '+' percent-encoded. */
static void purl(struct buf *b, const struct plan_entry *e)
{
	struct buf v = { 0 };
	const char *s;

	buf_adds(&v, "pkg:deb/debian/");
	for (s = e->name; *s; s++)
		buf_addf(&v, *s == '+' ? "%%2B" : "%c", *s);
	buf_adds(&v, "@");
	for (s = e->version; *s; s++)
		buf_addf(&v, *s == ':' ? "%%3A" : *s == '+' ? "%%2B" : "%c", *s);
	buf_addf(&v, "?arch=%s", e->arch);
	json_str(b, v.p);
	buf_release(&v);
}

/* "Name <mail>" -> "Organization: Name (mail)" as SPDX wants a supplier. */
static void supplier(struct buf *b, const char *maint)
{
	struct buf s = { 0 };
	const char *lt = maint ? strchr(maint, '<') : NULL, *gt = lt ? strchr(lt, '>') : NULL;

	if (!maint || !*maint) {
		json_str(b, "NOASSERTION");
		return;
	}
	if (lt && gt) {
		size_t n = (size_t)(lt - maint);

		while (n && maint[n - 1] == ' ')
			n--;
		buf_addf(&s, "Organization: %.*s (%.*s)", (int)n, maint, (int)(gt - lt - 1), lt + 1);
	} else {
		buf_addf(&s, "Organization: %s", maint);
	}
	json_str(b, s.p);
	buf_release(&s);
}

static void package(struct buf *b, const struct plan_entry *e, size_t i)
{
	buf_adds(b, "    {\n      \"SPDXID\": ");
	spdx_id(b, e, i);
	buf_adds(b, ",\n      \"name\": ");
	json_str(b, e->name);
	buf_adds(b, ",\n      \"versionInfo\": ");
	json_str(b, e->version);
	buf_adds(b, ",\n      \"supplier\": ");
	supplier(b, e->maintainer);
	buf_adds(b, ",\n      \"downloadLocation\": ");
	json_str(b, e->url ? e->url : "NOASSERTION");
	buf_adds(b, ",\n      \"filesAnalyzed\": false,\n      \"checksums\": [ { \"algorithm\": "
		    "\"SHA256\", \"checksumValue\": ");
	json_str(b, e->sha256);
	buf_adds(b, " } ],\n      \"sourceInfo\": ");
	{
		char *src = xasprintf("built from Debian source package %s %s",
				      e->source ? e->source : e->name,
				      e->source_version ? e->source_version : e->version);
		json_str(b, src);
		free(src);
	}
	buf_adds(b, ",\n      \"primaryPackagePurpose\": \"LIBRARY\",\n      \"externalRefs\": [ { "
		    "\"referenceCategory\": \"PACKAGE-MANAGER\", \"referenceType\": \"purl\", "
		    "\"referenceLocator\": ");
	purl(b, e);
	buf_adds(b, " } ],\n      \"comment\": ");
	{
		char *c = xasprintf("architecture %s", e->arch);
		json_str(b, c);
		free(c);
	}
	buf_adds(b, ",\n      \"licenseConcluded\": \"NOASSERTION\",\n      \"licenseDeclared\": "
		    "\"NOASSERTION\",\n      \"copyrightText\": \"NOASSERTION\"\n    }");
}

static void header(struct buf *b, const struct recipe *r, const char *image_name,
		   const char *image_sha256, int64_t sde)
{
	time_t t = (time_t)(sde < 0 ? 0 : sde);
	struct tm tm;
	char when[32];

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	buf_adds(b, "{\n  \"spdxVersion\": \"SPDX-2.3\",\n  \"dataLicense\": \"CC0-1.0\",\n"
		    "  \"SPDXID\": \"SPDXRef-DOCUMENT\",\n  \"name\": ");
	json_str(b, r->name);
	buf_addf(b, ",\n  \"documentNamespace\": \"https://example.org/spdx/mkimage/%s-%s\",\n",
		 r->name, image_sha256);
	buf_addf(b, "  \"creationInfo\": { \"created\": \"%s\", \"creators\": [ \"Tool: mkimage-%s\" ] },\n",
		 when, MKI_VERSION);
	buf_adds(b, "  \"documentDescribes\": [ \"SPDXRef-Image\" ],\n  \"packages\": [\n"
		    "    {\n      \"SPDXID\": \"SPDXRef-Image\",\n      \"name\": ");
	json_str(b, image_name);
	buf_adds(b, ",\n      \"downloadLocation\": \"NOASSERTION\",\n      \"filesAnalyzed\": false,\n"
		    "      \"checksums\": [ { \"algorithm\": \"SHA256\", \"checksumValue\": ");
	json_str(b, image_sha256);
	buf_adds(b, " } ],\n      \"primaryPackagePurpose\": \"OPERATING-SYSTEM\",\n"
		    "      \"licenseConcluded\": \"NOASSERTION\",\n      \"licenseDeclared\": \"NOASSERTION\",\n"
		    "      \"copyrightText\": \"NOASSERTION\"\n    }");
}

int sbom_write(const struct plan *p, const struct recipe *r, const char *image_name,
	       const char *image_sha256, int64_t sde, const char *file)
{
	struct buf b = { 0 };
	size_t i;
	int ret;

	header(&b, r, image_name, image_sha256, sde);
	for (i = 0; i < p->n; i++) {
		buf_adds(&b, ",\n");
		package(&b, &p->v[i], i);
	}
	buf_adds(&b, "\n  ],\n  \"relationships\": [\n    { \"spdxElementId\": \"SPDXRef-DOCUMENT\", "
		     "\"relationshipType\": \"DESCRIBES\", \"relatedSpdxElement\": \"SPDXRef-Image\" }");
	for (i = 0; i < p->n; i++) {
		buf_adds(&b, ",\n    { \"spdxElementId\": \"SPDXRef-Image\", \"relationshipType\": "
			     "\"CONTAINS\", \"relatedSpdxElement\": ");
		spdx_id(&b, &p->v[i], i);
		buf_adds(&b, " }");
	}
	buf_adds(&b, "\n  ]\n}\n");
	ret = write_file_atomic(file, b.p, b.len);
	buf_release(&b);
	return ret;
}
