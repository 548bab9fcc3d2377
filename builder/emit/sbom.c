#include "sbom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "debian/dep5.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/readfile.h"

/*
 * SPDX ids allow letters, digits, '.' and '-' only. An id is the package's name, architecture and
 * version, nothing positional, so the same package keeps its id from one image or release to
 * the next. Debian names hold [a-z0-9.+-]: '+' becomes "plus" (two names never meet); a version
 * is unique per name and architecture in a plan, so its other characters become '-'.
 */
static void spdx_id(struct buf *b, const struct plan_entry *e)
{
	const char *s;

	buf_adds(b, "\"SPDXRef-Package-");
	for (s = e->name; *s; s++)
		buf_addf(b, *s == '+' ? "plus" : "%c", *s == '_' ? '-' : *s);
	buf_addf(b, "-%s-", e->arch);
	for (s = e->version; *s; s++)
		buf_addf(b, "%c", (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				  (*s >= '0' && *s <= '9') || *s == '.' ? *s : '-');
	buf_adds(b, "\"");
}

/*
 * purl: pkg:deb/debian/NAME@VERSION?arch=ARCH&distro=SUITE, with ':' and '+' percent-encoded.
 * The purl spec's deb examples name the release by codename (distro=bookworm), which is what
 * scanners match their advisories against; the recipe's suite is that codename.
 */
static void purl(struct buf *b, const struct plan_entry *e, const char *suite)
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
	if (suite && *suite) {
		buf_adds(&v, "&distro=");
		for (s = suite; *s; s++)
			buf_addf(&v, *s == '+' ? "%%2B" : "%c", *s);
	}
	json_str(b, v.p);
	buf_release(&v);
}

/* Words that make a Maintainer a team rather than a person (Debian's teams and companies). */
static const char *const org_words[] = {
	"team", "group", "maintainers", "developers", "project", "packagers", "debian", "ubuntu",
	"foundation", "inc", "inc.", "ltd", "ltd.", "llc", "gmbh", "corp", "corporation", "company",
	"ag", "bv", NULL,
};

/* Whether the name part of a Maintainer field names an organization (a word of org_words). */
static int is_organization(const char *name, size_t n, const char *mail, size_t mail_n)
{
	size_t i, w;

	if (mail && (memmem(mail, mail_n, "@lists.", 7) || memmem(mail, mail_n, "-devel@", 7)))
		return 1;
	for (i = 0; i < n; i += w ? w : 1) {
		const char *const *o;

		w = strcspn(name + i, " ,()/&");
		if (w > n - i)
			w = n - i;
		for (o = org_words; w && *o; o++)
			if (strlen(*o) == w && !strncasecmp(name + i, *o, w))
				return 1;
	}
	return 0;
}

/*
 * "Name <mail>" -> "Person: Name (mail)" or "Organization: Name (mail)", SPDX's two supplier
 * forms: an organization when the name holds a team's or company's word (org_words) or the
 * mail is a list's, a person otherwise.
 */
static void supplier(struct buf *b, const char *maint)
{
	struct buf s = { 0 };
	const char *lt = maint ? strchr(maint, '<') : NULL, *gt = lt ? strchr(lt, '>') : NULL;
	size_t n = lt && gt ? (size_t)(lt - maint) : maint ? strlen(maint) : 0;

	while (n && maint[n - 1] == ' ')
		n--;
	if (!n) {
		json_str(b, "NOASSERTION");
		return;
	}
	buf_adds(&s, is_organization(maint, n, lt && gt ? lt + 1 : NULL,
				     lt && gt ? (size_t)(gt - lt - 1) : 0) ?
			     "Organization: " : "Person: ");
	if (lt && gt)
		buf_addf(&s, "%.*s (%.*s)", (int)n, maint, (int)(gt - lt - 1), lt + 1);
	else
		buf_addf(&s, "%.*s", (int)n, maint);
	json_str(b, s.p);
	buf_release(&s);
}

/* The Section without its archive area: "non-free-firmware/kernel" -> "kernel". */
static const char *section_of(const struct plan_entry *e)
{
	const char *slash = e->section ? strrchr(e->section, '/') : NULL;

	return slash ? slash + 1 : e->section ? e->section : "";
}

/*
 * What a package is, by one rule (mkimage(7), "Outputs"): FIRMWARE for firmware-* and
 * Section firmware, LIBRARY for Section libs, oldlibs or libdevel (or, without a Section, a
 * lib* name), OPERATING_SYSTEM for a kernel image (linux-image-*), APPLICATION otherwise.
 * The image itself is OPERATING_SYSTEM.
 */
const char *sbom_purpose(const struct plan_entry *e)
{
	const char *sec = section_of(e);

	if (!strncmp(e->name, "firmware-", 9) || !strcmp(sec, "firmware"))
		return "FIRMWARE";
	if (!strcmp(sec, "libs") || !strcmp(sec, "oldlibs") || !strcmp(sec, "libdevel") ||
	    (!*sec && !strncmp(e->name, "lib", 3)))
		return "LIBRARY";
	if (!strncmp(e->name, "linux-image-", 12))
		return "OPERATING_SYSTEM";
	return "APPLICATION";
}

/* Where a package came from: Debian's source package, or a local .deb the recipe names. */
static void provenance(struct buf *b, const struct plan_entry *e, const char *suite)
{
	const char *base = e->path ? strrchr(e->path, '/') : NULL;
	char *src;

	if (e->url)
		src = xasprintf("built from Debian source package %s %s",
				e->source ? e->source : e->name,
				e->source_version ? e->source_version : e->version);
	else
		src = xasprintf("local package file '%s' named by the recipe (packages.local), "
				"source package %s %s", base ? base + 1 : e->path ? e->path : e->name,
				e->source ? e->source : e->name,
				e->source_version ? e->source_version : e->version);
	buf_adds(b, ",\n      \"sourceInfo\": ");
	json_str(b, src);
	free(src);
	buf_addf(b, ",\n      \"primaryPackagePurpose\": \"%s\"", sbom_purpose(e));
	if (!e->url)
		return; /* a vendor's .deb is no Debian package: no Debian purl */
	buf_adds(b, ",\n      \"externalRefs\": [ { \"referenceCategory\": \"PACKAGE-MANAGER\", "
		    "\"referenceType\": \"purl\", \"referenceLocator\": ");
	purl(b, e, suite);
	buf_adds(b, " } ]");
}

static void package(struct buf *b, const struct plan_entry *e, const char *suite,
		    const char *license)
{
	char *c;

	buf_adds(b, "    {\n      \"SPDXID\": ");
	spdx_id(b, e);
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
	buf_adds(b, " } ]");
	provenance(b, e, suite);
	buf_adds(b, ",\n      \"comment\": ");
	c = xasprintf("architecture %s", e->arch);
	json_str(b, c);
	free(c);
	buf_adds(b, ",\n      \"licenseConcluded\": \"NOASSERTION\",\n      \"licenseDeclared\": ");
	json_str(b, license ? license : "NOASSERTION");
	buf_adds(b, ",\n      \"copyrightText\": \"NOASSERTION\"\n    }");
}

static void header(struct buf *b, const struct recipe *r, const char *image_name,
		   const char *image_sha256, int64_t sde)
{
	const char *base = r->sbom_namespace ? r->sbom_namespace : RECIPE_SBOM_NAMESPACE;
	time_t t = (time_t)(sde < 0 ? 0 : sde);
	struct tm tm;
	char when[32], *ns;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	buf_adds(b, "{\n  \"spdxVersion\": \"SPDX-2.3\",\n  \"dataLicense\": \"CC0-1.0\",\n"
		    "  \"SPDXID\": \"SPDXRef-DOCUMENT\",\n  \"name\": ");
	json_str(b, r->name);
	buf_adds(b, ",\n  \"documentNamespace\": ");
	ns = xasprintf("%.*s/%s-%s", (int)(strlen(base) - (base[strlen(base) - 1] == '/')), base,
		       r->name, image_sha256);
	json_str(b, ns);
	free(ns);
	buf_adds(b, ",\n");
	buf_addf(b, "  \"creationInfo\": { \"created\": \"%s\", \"creators\": [ \"Tool: mkimage-%s\" ] },\n",
		 when, MKI_VERSION);
	buf_adds(b, "  \"documentDescribes\": [ \"SPDXRef-Image\" ],\n  \"packages\": [\n"
		    "    {\n      \"SPDXID\": \"SPDXRef-Image\",\n      \"name\": ");
	json_str(b, image_name);
	buf_adds(b, ",\n      \"downloadLocation\": \"NOASSERTION\",\n      \"filesAnalyzed\": false,\n"
		    "      \"checksums\": [ { \"algorithm\": \"SHA256\", \"checksumValue\": ");
	json_str(b, image_sha256);
	buf_adds(b, " } ],\n      \"primaryPackagePurpose\": \"OPERATING_SYSTEM\",\n"
		    "      \"licenseConcluded\": \"NOASSERTION\",\n      \"licenseDeclared\": \"NOASSERTION\",\n"
		    "      \"copyrightText\": \"NOASSERTION\"\n    }");
}

/*
 * One DEPENDS_ON per resolved Depends/Pre-Depends edge: the plan records which entry satisfied
 * each relation, so the graph is the resolver's, not a re-guess by name. Entry order and the
 * recorded edge order are deterministic, and a package depending twice on the same entry (say
 * Pre-Depends and Depends) gets one relationship.
 */
static void depends_on(struct buf *b, const struct plan *p)
{
	size_t i, k, j;

	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		for (k = 0; k < e->n_depends; k++) {
			size_t d = e->depends[k];

			for (j = 0; j < k && e->depends[j] != d; j++)
				;
			if (j < k || d == i || d >= p->n)
				continue;
			buf_adds(b, ",\n    { \"spdxElementId\": ");
			spdx_id(b, e);
			buf_adds(b, ", \"relationshipType\": \"DEPENDS_ON\", \"relatedSpdxElement\": ");
			spdx_id(b, &p->v[d]);
			buf_adds(b, " }");
		}
	}
}

int sbom_capture(struct dep5_texts *t, const struct plan *p, const char *root)
{
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t i;

	memset(t, 0, sizeof(*t));
	if (rootfd < 0)
		return log_errno(-errno, "cannot open the staging tree '%s' to read the packages' "
				 "copyright files: %m", root);
	dep5_texts_init(t, p->n);
	for (i = 0; i < p->n; i++) {
		const char *kind = NULL;

		if (err_interrupted()) {
			close(rootfd);
			dep5_texts_release(t);
			return -MKI_E_INTERRUPTED;
		}
		t->err[i] = dep5_read(rootfd, p->v[i].name, &t->v[i], &kind);
		/* a package's own odd file: said once here, not at every SBOM */
		if (t->err[i] == -EINVAL && kind)
			log_warn("'/usr/share/doc/%s/copyright' of package '%s' is %s, not a regular "
				 "file: its licence is NOASSERTION in the SBOM", p->v[i].name,
				 p->v[i].name, kind);
	}
	close(rootfd);
	return 0;
}

/*
 * licenseDeclared of every entry (NULL: NOASSERTION) from the DEP-5 copyright files `shipped`
 * holds or, without it, the tree at `root` holds. A missing, unreadable or free-form file
 * declares nothing, which is no error: only an interruption is.
 */
static int declared_licenses(const struct plan *p, const struct dep5_texts *shipped,
			     const char *root, char **lic, struct dep5_refs *refs)
{
	struct buf text = { 0 };
	const struct buf *t;
	size_t i, n = 0;
	int rootfd = -1, ret = 0;

	if (shipped && shipped->n != p->n)
		shipped = NULL;
	if (!shipped && root && (rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		log_warn("cannot open the staging tree '%s' to read the packages' licences: %s",
			 root, strerror(errno));
	for (i = 0; (shipped || rootfd >= 0) && i < p->n; i++) {
		char *origin = xasprintf("/usr/share/doc/%s/copyright", p->v[i].name);

		t = shipped ? &shipped->v[i] : &text;
		ret = shipped ? shipped->err[i] : dep5_read(rootfd, p->v[i].name, &text, NULL);
		if (!ret)
			lic[i] = dep5_expression(t->p, t->len, origin, refs);
		else if (ret != -MKI_E_INTERRUPTED)
			log_debug("%s: %s: licence NOASSERTION", origin, readfile_why(ret, NULL));
		free(origin);
		if (ret == -MKI_E_INTERRUPTED)
			break;
		n += lic[i] != NULL;
	}
	if (rootfd >= 0)
		close(rootfd);
	if (shipped || rootfd >= 0)
		log_info("SBOM: licences declared for %zu of %zu packages (DEP-5 copyright files)",
			 n, p->n);
	buf_release(&text);
	return ret == -MKI_E_INTERRUPTED ? ret : 0;
}

/* hasExtractedLicensingInfos: the text of every LicenseRef the packages' licences use. */
static void extracted(struct buf *b, const struct dep5_refs *refs)
{
	char *comment;
	size_t i;

	if (!refs->n)
		return;
	buf_adds(b, "  \"hasExtractedLicensingInfos\": [");
	for (i = 0; i < refs->n; i++) {
		const struct dep5_ref *r = &refs->v[i];

		buf_adds(b, i ? ",\n    { \"licenseId\": " : "\n    { \"licenseId\": ");
		json_str(b, r->id);
		buf_adds(b, ", \"name\": ");
		json_str(b, r->name);
		buf_adds(b, ",\n      \"comment\": ");
		comment = xasprintf("short name '%s' of the machine-readable copyright file %s",
				    r->name, r->origin);
		json_str(b, comment);
		free(comment);
		buf_adds(b, ",\n      \"extractedText\": ");
		json_str(b, r->text);
		buf_adds(b, " }");
	}
	buf_adds(b, "\n  ],\n");
}

/* The update bundle: a package of its own, made from the image. */
static void bundle_package(struct buf *b, const struct sbom_bundle *u)
{
	buf_adds(b, ",\n    {\n      \"SPDXID\": \"SPDXRef-UpdateBundle\",\n      \"name\": ");
	json_str(b, u->name);
	buf_adds(b, ",\n      \"downloadLocation\": \"NOASSERTION\",\n      \"filesAnalyzed\": false,\n"
		    "      \"checksums\": [ { \"algorithm\": \"SHA256\", \"checksumValue\": ");
	json_str(b, u->sha256);
	buf_adds(b, " } ],\n      \"primaryPackagePurpose\": \"INSTALL\",\n      \"comment\": ");
	json_str(b, u->comment);
	buf_adds(b, ",\n      \"licenseConcluded\": \"NOASSERTION\",\n      \"licenseDeclared\": "
		    "\"NOASSERTION\",\n      \"copyrightText\": \"NOASSERTION\"\n    }");
}

int sbom_write(const struct plan *p, const struct recipe *r, const struct dep5_texts *shipped,
	       const struct sbom_bundle *bundle, const char *root, const char *image_name, const char *image_sha256, int64_t sde,
	       const char *file)
{
	struct buf b = { 0 };
	struct dep5_refs refs = { 0 };
	char **lic = xcalloc(p->n + 1, sizeof(*lic));
	size_t i;
	int ret = declared_licenses(p, shipped, root, lic, &refs);

	if (ret)
		goto out;
	header(&b, r, image_name, image_sha256, sde);
	for (i = 0; i < p->n; i++) {
		buf_adds(&b, ",\n");
		package(&b, &p->v[i], r->suite, lic[i]);
	}
	if (bundle)
		bundle_package(&b, bundle);
	buf_adds(&b, "\n  ],\n");
	extracted(&b, &refs);
	buf_adds(&b, "  \"relationships\": [\n    { \"spdxElementId\": \"SPDXRef-DOCUMENT\", "
		     "\"relationshipType\": \"DESCRIBES\", \"relatedSpdxElement\": \"SPDXRef-Image\" }");
	if (bundle)
		buf_adds(&b, ",\n    { \"spdxElementId\": \"SPDXRef-DOCUMENT\", \"relationshipType\": "
			     "\"DESCRIBES\", \"relatedSpdxElement\": \"SPDXRef-UpdateBundle\" },\n"
			     "    { \"spdxElementId\": \"SPDXRef-UpdateBundle\", \"relationshipType\": "
			     "\"GENERATED_FROM\", \"relatedSpdxElement\": \"SPDXRef-Image\" }");
	for (i = 0; i < p->n; i++) {
		buf_adds(&b, ",\n    { \"spdxElementId\": \"SPDXRef-Image\", \"relationshipType\": "
			     "\"CONTAINS\", \"relatedSpdxElement\": ");
		spdx_id(&b, &p->v[i]);
		buf_adds(&b, " }");
	}
	depends_on(&b, p);
	buf_adds(&b, "\n  ]\n}\n");
	ret = fsutil_write_atomic(file, b.p, b.len);
out:
	for (i = 0; i < p->n; i++)
		free(lic[i]);
	free(lic);
	dep5_refs_release(&refs);
	buf_release(&b);
	return ret;
}
