#include "parttable.h"

#include <errno.h>
#include <inttypes.h>
#include <libfdisk/libfdisk.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"

#define ATTR_LEGACY_BOOT (1ull << 2)
#define ATTR_READ_ONLY (1ull << 60)

static int fail(const char *name, const char *what, const char *part, int err)
{
	log_error("cannot write the partition table of '%s': %s%s%s%s: %s", name, what,
		  part ? " '" : "", part ? part : "", part ? "'" : "",
		  strerror(err < 0 ? -err : err));
	return -MKI_E_IMAGE;
}

static int set_type(struct fdisk_context *cxt, struct fdisk_partition *pa, const struct parttable *t,
		    const struct parttable_entry *e)
{
	struct fdisk_label *lb = fdisk_get_label(cxt, NULL);
	struct fdisk_parttype *type;
	char code[8];
	int ret;

	if (t->mbr)
		snprintf(code, sizeof(code), "%x", e->mbr_type);
	type = fdisk_label_parse_parttype(lb, t->mbr ? code : e->type_guid);
	if (!type)
		return -EINVAL;
	ret = fdisk_partition_set_type(pa, type);
	fdisk_unref_parttype(type);
	return ret;
}

static int add_one(struct fdisk_context *cxt, const struct parttable *t, size_t i)
{
	const struct parttable_entry *e = &t->v[i];
	struct fdisk_partition *pa = fdisk_new_partition();
	int ret;

	if (!pa)
		return -ENOMEM;
	fdisk_partition_partno_follow_default(pa, 0);
	fdisk_partition_start_follow_default(pa, 0);
	ret = fdisk_partition_set_partno(pa, i);
	if (!ret)
		ret = fdisk_partition_set_start(pa, e->offset / 512);
	if (!ret)
		ret = fdisk_partition_set_size(pa, e->size / 512);
	if (!ret)
		ret = set_type(cxt, pa, t, e);
	if (!ret && !t->mbr)
		ret = fdisk_partition_set_name(pa, e->name);
	if (!ret && !t->mbr)
		ret = fdisk_partition_set_uuid(pa, e->uuid);
	if (!ret)
		ret = fdisk_add_partition(cxt, pa, NULL);
	fdisk_unref_partition(pa);
	if (ret)
		return ret;
	if (t->mbr)
		return e->legacy_boot ? fdisk_toggle_partition_flag(cxt, i, DOS_FLAG_ACTIVE) : 0;
	return fdisk_gpt_set_partition_attrs(cxt, i, (e->legacy_boot ? ATTR_LEGACY_BOOT : 0) |
						     (e->read_only ? ATTR_READ_ONLY : 0));
}

/*
 * libfdisk fits a partition it finds too large to the disk instead of refusing it: read each
 * one back, so the table says exactly what the layout decided or nothing is written.
 */
static int check_placed(struct fdisk_context *cxt, const char *name, size_t i,
			const struct parttable_entry *e)
{
	struct fdisk_partition *pa = NULL;
	uint64_t start = 0, size = 0;

	if (!fdisk_get_partition(cxt, i, &pa)) {
		start = fdisk_partition_get_start(pa) * 512;
		size = fdisk_partition_get_size(pa) * 512;
	}
	fdisk_unref_partition(pa);
	if (start == e->offset && size == e->size)
		return 0;
	log_error("cannot write the partition table of '%s': partition '%s' would be %" PRIu64
		  " bytes at %" PRIu64 ", not %" PRIu64 " bytes at %" PRIu64 " (outside the "
		  "table's usable sectors?)", name, e->name, size, start, e->size, e->offset);
	return -MKI_E_IMAGE;
}

/* A new label with our id, before any partition: libfdisk's random one is replaced. */
static int create_label(struct fdisk_context *cxt, const struct parttable *t)
{
	char id[40];
	int ret = fdisk_create_disklabel(cxt, t->mbr ? "dos" : "gpt");

	if (!ret && !t->mbr && t->gpt_entries != 128)
		ret = fdisk_gpt_set_npartitions(cxt, t->gpt_entries);
	snprintf(id, sizeof(id), t->mbr ? "0x%s" : "%s", t->disk_id);
	if (!ret)
		ret = fdisk_set_disklabel_id_from_string(cxt, id);
	return ret;
}

int parttable_write(int fd, const char *name, const struct parttable *t)
{
	struct fdisk_context *cxt = fdisk_new_context();
	int dfd = dup(fd), ret;
	size_t i;

	if (!cxt || dfd < 0) {
		ret = fail(name, "out of resources", NULL, cxt ? errno : ENOMEM);
		goto out;
	}
	fdisk_disable_dialogs(cxt, 1);
	ret = fdisk_assign_device_by_fd(cxt, dfd, name, 0);
	if (ret) {
		ret = fail(name, "libfdisk cannot open it", NULL, ret);
		goto out;
	}
	ret = create_label(cxt, t);
	if (ret) {
		ret = fail(name, "cannot create the label", NULL, ret);
		goto out;
	}
	for (i = 0; i < t->n; i++) {
		ret = add_one(cxt, t, i);
		if (ret) {
			ret = fail(name, "cannot add partition", t->v[i].name, ret);
			goto out;
		}
		ret = check_placed(cxt, name, i, &t->v[i]);
		if (ret)
			goto out;
	}
	ret = fdisk_write_disklabel(cxt);
	if (ret)
		ret = fail(name, "libfdisk cannot write it", NULL, ret);
out:
	if (cxt)
		fdisk_deassign_device(cxt, 1);
	fdisk_unref_context(cxt);
	if (dfd >= 0) /* libfdisk never closes a descriptor it was given */
		close(dfd);
	return ret;
}
