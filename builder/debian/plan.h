/* The plan: the exact, ordered package set the resolver chose; read by every later stage. */
#ifndef MKI_PLAN_H
#define MKI_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/str.h"

struct plan_entry {
	char *name;
	char *arch;       /* the package's Architecture: field ("all" possible) */
	char *version;
	char *multi_arch; /* "no", "same", "foreign" or "allowed" */
	int essential;
	char *priority, *section, *maintainer, *installed_size;
	char *source, *source_version; /* source package (defaults: name, version) */
	char *url;        /* absolute URL to fetch; NULL for a local .deb */
	uint64_t size;
	char sha256[65];
	char *path;       /* local file: the verified cache object (fetch) or the local .deb */
	size_t *depends;  /* indices of the entries this one Pre-Depends on (the first
			     n_pre_depends), then Depends on; all earlier except inside a cycle */
	size_t n_depends, n_pre_depends;
	int pre_depended; /* another entry Pre-Depends on this one: configure it before that */
};

/*
 * A library Debian renamed for the 64-bit time_t ABI (libssl3 -> libssl3t64, debian/t64.h) whose
 * new name is in the plan for `arch`, where it does not provide the old one: there the ABI
 * changed. `users` ("name:arch" of plan entries) depend on the old name, and the plan meets that
 * dependency only through it (a package providing the old name, no other alternative): built
 * against the old ABI, they would run with the new library.
 */
struct plan_abi_rename {
	char *arch, *old_name, *new_name;
	struct strv users;
};

struct plan {
	struct plan_entry *v; /* in unpack/configure order */
	size_t n, alloc;
	char *primary;        /* primary architecture */
	struct strv archs;    /* primary first */
	struct plan_abi_rename *abi_renames; /* the resolver's, from the indexes */
	size_t n_abi_renames;
};

/** Free the contents of a plan. */
void plan_release(struct plan *p);
/** Record that `old_name` is `new_name` on `arch` (copied; a pair already there is kept once). */
void plan_add_abi_rename(struct plan *p, const char *arch, const char *old_name,
			 const char *new_name);
/** Add `user` ("name:arch", copied; once) to the rename of `old_name` on `arch`, if there is one. */
void plan_add_abi_user(struct plan *p, const char *arch, const char *old_name, const char *user);
/** The rename of `old_name` on `arch`, or NULL. Borrowed from `p`. */
const struct plan_abi_rename *plan_abi_rename_find(const struct plan *p, const char *arch,
						   const char *old_name);
/** "name:arch" for M-A same packages, else "name" (dpkg's info file and owner naming). */
char *plan_entry_dpkg_name(const struct plan_entry *e);
/**
 * The essential set, which configure runs before the rest as apt and mmdebstrap do: the entries
 * of the primary architecture (every one when `p->primary` is NULL) or "all" that are Essential:
 * yes or Priority: required, and everything they Pre-Depend or Depend on in the plan, at any
 * depth (a dependency cycle is closed like any other edge). Sets `in[i]` (p->n bytes, the
 * caller's) to 1 for each member and 0 for the rest; returns the number of members.
 */
size_t plan_essential_set(const struct plan *p, unsigned char *in);
/**
 * The plan as --plan prints it, appended to `out`: "name:arch=version size sha256" a line, or
 * with `json` the JSON form of mkimage(1), "JSON OUTPUT".
 */
void plan_format(const struct plan *p, int json, struct buf *out);
/**
 * The seed of the image's UUID and hash (64 hex digits and a NUL into `seed`): the SHA-256 of
 * `digest` (the recipe's) and every package's sha256, what the lock pins; `digest` itself when
 * no hash can be made.
 */
void plan_seed(const struct plan *p, const char *digest, char *seed);
/** The packages' Installed-Size in bytes (each counted at most 1 TiB, so the sum cannot wrap). */
uint64_t plan_installed_bytes(const struct plan *p);

#endif
