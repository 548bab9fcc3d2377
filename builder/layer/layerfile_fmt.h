/*
 * Inside a layer file (layerfile.h), shared by its writer and checker (layerfile.c) and its
 * restorer (layerfile_restore.c): the trailer and the bounded reader over the records.
 */
#ifndef MKI_LAYERFMT_H
#define MKI_LAYERFMT_H

#include <stdint.h>

#include "debian/dep5.h"
#include "lib/manifest.h"

#define LAYER_COPY_CHUNK (1u << 20) /* bytes read or copied at a time */

struct layer_trailer {
	char magic[8];
	uint32_t version;
	uint32_t order;    /* the byte-order mark as this machine writes it: native throughout */
	uint64_t data_len; /* the data region: bytes 0..data_len */
	uint64_t meta_len; /* the records: bytes data_len..data_len + meta_len */
	uint8_t digest[32];/* SHA-256 of both */
};

/* A bounded reader over the records; any overrun sets `bad` and yields zeros or "". */
struct rd {
	const uint8_t *p, *end;
	int bad;
};

uint32_t layerfile_rd_u32(struct rd *r);
uint64_t layerfile_rd_u64(struct rd *r);
/** A string record's bytes, borrowed from the reader; `*n` its length. */
const uint8_t *layerfile_rd_mem(struct rd *r, size_t *n);
/** A string record as a new C string; one holding a NUL byte sets `bad`. */
char *layerfile_rd_str(struct rd *r);
/** An entry's xattr records, added to `e`. */
void layerfile_rd_xattrs(struct rd *r, struct manifest_entry *e);
/** The stage manifest's records, added to `m`. */
void layerfile_rd_manifest(struct rd *r, struct manifest *m);
/** The copyright texts' records into the empty `t` (dep5_texts_init'ed here). */
void layerfile_rd_texts(struct rd *r, struct dep5_texts *t);

/**
 * The trailer of the layer file `fd` (named `name`), checked against the file's size `*size`.
 * 0, or -EBADMSG / -EPROTO (logged as warnings) or a negative errno.
 */
int layerfile_read_trailer(int fd, const char *name, struct layer_trailer *tr, uint64_t *size);

#endif
