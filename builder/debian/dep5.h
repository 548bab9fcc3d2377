/*
 * DEP-5: the licences a package declares in its machine-readable copyright file
 * (/usr/share/doc/PKG/copyright in Debian's copyright-format 1.0), as an SPDX licence expression
 * for the SBOM. The License short names of every Files paragraph are combined with AND
 * (duplicates removed); DEP-5's `or`, `and`, `with ... exception` and comma become SPDX OR, AND,
 * WITH and parentheses. The standard short names of copyright-format 1.0 (GPL-2+, LGPL-2.1+,
 * Expat, BSD-3-clause, Apache-2.0, public-domain...) map to SPDX identifiers; any other name is
 * only defined by the file itself, so it becomes a `LicenseRef-` whose text (the file's stand-alone
 * License paragraph, or a note that it has none) the document carries. A file that is not
 * copyright-format 1.0, or that cannot be parsed in full, declares nothing: never a guess.
 *
 * The copyright file comes from the staging tree, which packages and scripts have had their way
 * with: it is read through beneath.h, bounded, and only when it is a regular file.
 */
#ifndef MKI_DEP5_H
#define MKI_DEP5_H

#include <stddef.h>

#include "lib/str.h"

/** The largest copyright file read (Debian's largest are a few hundred KiB). */
#define DEP5_MAX_SIZE (4u << 20)

/** A licence the document defines itself: one entry of SPDX's hasExtractedLicensingInfos. */
struct dep5_ref {
	char *id;     /* "LicenseRef-..." (letters, digits, '.', '-'; unique in the set) */
	char *name;   /* the short name as the copyright file writes it */
	char *text;   /* the licence text the file gives, or a note saying it gives none */
	char *origin; /* the copyright file where it was first seen */
};

/** The LicenseRefs of one document, shared by its packages (same name and text: one entry). */
struct dep5_refs {
	struct dep5_ref *v;
	size_t n, alloc;
};

/**
 * Read `/usr/share/doc/PACKAGE/copyright` of the tree at `rootfd` into `out` (replaced). Links
 * are followed inside the tree only (a doc directory that links to another package's, as
 * Multi-Arch packages ship, is fine). Returns 0, -ENOENT, -EINVAL (not a regular file: a FIFO
 * never blocks; `*kind`, when not NULL, says what it is), -EFBIG (beyond DEP5_MAX_SIZE) or
 * another negative errno; nothing is logged.
 */
int dep5_read(int rootfd, const char *package, struct buf *out, const char **kind);

/**
 * The SPDX licence expression declared by copyright text `data` (`len` bytes; `origin` names it
 * in messages and in new `refs` entries): a new string, or NULL for NOASSERTION when the text is
 * not copyright-format 1.0 or is not entirely parseable (the reason is logged at debug level).
 * LicenseRefs it uses are added to `refs` only when an expression is returned.
 */
char *dep5_expression(const char *data, size_t len, const char *origin, struct dep5_refs *refs);

/** Free the entries of `refs`. */
void dep5_refs_release(struct dep5_refs *refs);

/*
 * The copyright files of a plan's packages as they were unpacked, before any maintainer script
 * ran: what the SBOM declares, since a script may rewrite another package's file (mkimage(7),
 * "Output integrity"). One per plan entry; err[i] is 0 or why there is none (dep5_read()). Read
 * by sbom_capture(), kept with a layer of the layer cache and restored with it.
 */
struct dep5_texts {
	struct buf *v;
	int *err;
	size_t n;
};

/** Make `t` hold `n` empty texts (err 0). */
void dep5_texts_init(struct dep5_texts *t, size_t n);
/** Free the texts of `t` and empty it. */
void dep5_texts_release(struct dep5_texts *t);

#endif
