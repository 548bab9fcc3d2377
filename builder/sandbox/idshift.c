/*
 * Which ids a command's nested user namespace gets, and how they are stored on disk. A user build
 * maps the build namespace's ids 0..N onto themselves, so the tree holds the ids the packages ask
 * for. A root build keeps its own namespace the identity (it writes root-owned caches and
 * outputs), but every command in the tree gets 0..65535 shifted onto an unprivileged range
 * (root's /etc/subuid entry, else SANDBOX_ROOT_RANGE), so the tree is owned on disk by base + id;
 * these helpers are the only place that shift is done and undone. Ids below the base can only
 * have been set by host root (mkimage, an outside hook): they are read back unchanged.
 */
#include "idshift.h"
#include "idshift_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/str.h"

/* Set by sandbox_enter(): what sandbox_get() returns from then on. */
static const struct sandbox_info *ns;

void idshift_set_namespace(const struct sandbox_info *si)
{
	ns = si;
}

/* Shifted: only root builds store base + id; everything else is the identity. */
static int shifted(const struct sandbox_info *si)
{
	return si && si->ids == SANDBOX_IDS_ROOT;
}

unsigned long idshift_shift_to_tree(const struct sandbox_info *si, unsigned long id, int gid)
{
	return shifted(si) ? id + (gid ? si->sub_gid : si->sub_uid) : id;
}

long idshift_shift_to_inside(const struct sandbox_info *si, unsigned long id, int gid)
{
	unsigned long base = gid ? si->sub_gid : si->sub_uid;

	if (!shifted(si) || id < base)
		return (long)id; /* written as host root: by mkimage itself or a trusted outside hook */
	return id - base < si->sub_count ? (long)(id - base) : -1;
}

char *idshift_nested_map(const struct sandbox_info *si, int gid, int host)
{
	switch (si->ids) {
	case SANDBOX_IDS_ROOT:
		/* An outside hook is trusted and reads root's files: it stays host root. */
		if (host)
			return xstrdup("0 0 4294967295\n");
		return xasprintf("0 %lu %u\n", (unsigned long)(gid ? si->sub_gid : si->sub_uid),
				 si->sub_count);
	case SANDBOX_IDS_FULL:
		/*
		 * The build namespace has 0 (the user) and 1..N (its subordinate range), as two
		 * extents: each line must lie within one extent of the parent's map.
		 */
		return xasprintf("0 0 1\n1 1 %u\n", si->sub_count);
	default:
		return xstrdup("0 0 1\n");
	}
}

uid_t idshift_tree_uid(uid_t inside)
{
	return (uid_t)idshift_shift_to_tree(ns, inside, 0);
}

gid_t idshift_tree_gid(gid_t inside)
{
	return (gid_t)idshift_shift_to_tree(ns, inside, 1);
}

long idshift_inside_uid(uid_t tree)
{
	return ns ? idshift_shift_to_inside(ns, tree, 0) : (long)tree;
}

long idshift_inside_gid(gid_t tree)
{
	return ns ? idshift_shift_to_inside(ns, tree, 1) : (long)tree;
}

/* <linux/capability.h> on-disk layout: le32 magic_etc, 2 x {le32 permitted, le32 inheritable}, v3: le32 rootid */
#define CAP_REV_MASK 0xFF000000u
#define CAP_REV_2 0x02000000u
#define CAP_REV_3 0x03000000u
#define CAP_V2_SIZE 20
#define CAP_V3_SIZE 24

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t idshift_caps_to_inside(const struct sandbox_info *si, unsigned char *val, size_t len)
{
	uint32_t magic;

	if (!shifted(si) || len != CAP_V3_SIZE)
		return len;
	magic = le32(val);
	if ((magic & CAP_REV_MASK) != CAP_REV_3 || le32(val + CAP_V2_SIZE) != si->sub_uid)
		return len;
	magic = (magic & ~CAP_REV_MASK) | CAP_REV_2;
	val[0] = (unsigned char)magic;
	val[1] = (unsigned char)(magic >> 8);
	val[2] = (unsigned char)(magic >> 16);
	val[3] = (unsigned char)(magic >> 24);
	return CAP_V2_SIZE;
}
