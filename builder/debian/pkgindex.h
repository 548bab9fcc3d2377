/*
 * A Packages index on disk and the repository it describes: what a reader of its stanzas needs to
 * turn a Filename field into a URL. Data only, so that the repo family, which fetches and verifies
 * indexes (indexes.h), can hand them to a reader in another family, such as the native tools'
 * choice of twins (accel.h), without either including the other.
 */
#ifndef MKI_PKGINDEX_H
#define MKI_PKGINDEX_H

struct pkgindex {
	const char *path; /* a verified, decompressed Packages file (borrowed) */
	const char *base; /* the repository's URI, which its Filename fields are relative to */
};

#endif
