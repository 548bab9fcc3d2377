#include "disklayout.h"

#include <inttypes.h>

#include "lib/err.h"
#include "recipe/board.h"
#include "lib/log.h"

#define MIB DISKLAYOUT_MIB
#define GPT_ARRAY_START (2 * DISKLAYOUT_SECTOR) /* after the protective MBR and the header */

uint64_t disklayout_align(uint64_t bytes)
{
	return (bytes + MIB - 1) / MIB * MIB;
}

uint64_t disklayout_usable_end(const struct recipe_disk *d)
{
	if (!d->size)
		return 0;
	return d->table == DISK_GPT ? d->size - MIB : d->size;
}

static uint64_t auto_size(const struct recipe_partition *p, uint64_t need)
{
	uint64_t size;

	if (!p->table_entry)
		return need;
	size = disklayout_align(need);
	if (size < p->min_size)
		size = p->min_size;
	return size < MIB ? MIB : size;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / MIB;
}

int disklayout_place(const struct recipe_disk *d, size_t i, uint64_t cursor, uint64_t need,
		     struct disklayout_part *out)
{
	const struct recipe_partition *p = &d->partitions[i];
	uint64_t end = disklayout_usable_end(d);

	out->offset = p->offset ? p->offset : disklayout_align(cursor < MIB ? MIB : cursor);
	if (p->grow)
		out->size = end > out->offset ? end - out->offset : 0;
	else
		out->size = p->size ? p->size : auto_size(p, need);
	if (p->grow && out->size < need) {
		log_error("partition '%s' grows to the %.1f MiB left on the disk, but its contents need "
			  "%.1f MiB (%" PRIu64 " bytes): raise disk.size", p->name, mib(out->size),
			  mib(need), need);
		return -MKI_E_NOSPACE;
	}
	if (need > out->size) {
		log_error("partition '%s' is %.1f MiB, but its contents need %.1f MiB (%" PRIu64
			  " bytes): raise its size or use \"auto\"", p->name, mib(out->size),
			  mib(need), need);
		return -MKI_E_NOSPACE;
	}
	if (end && (!out->size || out->offset + out->size > (p->table_entry ? end : d->size))) {
		log_error("partition '%s' (%.1f MiB at %.1f MiB) ends past the disk's %.1f MiB%s: "
			  "raise disk.size or use \"auto\"", p->name, mib(out->size),
			  mib(out->offset), mib(d->size),
			  d->table == DISK_GPT ? " less the backup GPT's last MiB" : "");
		return -MKI_E_NOSPACE;
	}
	return 0;
}

uint32_t disklayout_gpt_entries(const struct recipe_disk *d, const struct disklayout_part *v)
{
	uint64_t full = GPT_ARRAY_START + DISKLAYOUT_GPT_ENTRIES * DISKLAYOUT_GPT_ENTRY_SIZE;
	uint64_t first = full;
	size_t i, used = 0;

	for (i = 0; i < d->n_partitions; i++) {
		used += d->partitions[i].table_entry;
		if (!d->partitions[i].table_entry && v[i].offset < first)
			first = v[i].offset;
	}
	if (first == full)
		return DISKLAYOUT_GPT_ENTRIES;
	if (first < GPT_ARRAY_START || (first - GPT_ARRAY_START) / DISKLAYOUT_GPT_ENTRY_SIZE < used)
		return 0;
	return (uint32_t)((first - GPT_ARRAY_START) / DISKLAYOUT_GPT_ENTRY_SIZE);
}

/* The bytes the table takes at the start of the disk, and at its end (the backup GPT). */
static void table_bounds(const struct recipe_disk *d, const struct disklayout_part *v,
			 uint64_t *head, uint64_t *tail)
{
	uint32_t n = disklayout_gpt_entries(d, v);
	uint64_t array = (uint64_t)n * DISKLAYOUT_GPT_ENTRY_SIZE;

	if (d->table == DISK_MBR) {
		*head = DISKLAYOUT_SECTOR;
		*tail = 0;
		return;
	}
	array = (array + DISKLAYOUT_SECTOR - 1) / DISKLAYOUT_SECTOR * DISKLAYOUT_SECTOR;
	*head = GPT_ARRAY_START + array;
	*tail = DISKLAYOUT_SECTOR + array;
}

static int check_table(const struct recipe_disk *d, const struct disklayout_part *v,
		       uint64_t size)
{
	uint64_t head, tail;
	size_t i;

	table_bounds(d, v, &head, &tail);
	for (i = 0; i < d->n_partitions; i++) {
		const struct recipe_partition *p = &d->partitions[i];

		if (d->table == DISK_GPT && !disklayout_gpt_entries(d, v) && !p->table_entry) {
			log_error("partition '%s' at byte %" PRIu64 " leaves no room for the GPT's "
				  "entries before it (they start at byte %u, %u bytes each): move it "
				  "or use table = \"mbr\"", p->name, v[i].offset, GPT_ARRAY_START,
				  DISKLAYOUT_GPT_ENTRY_SIZE);
			return -MKI_E_IMAGE;
		}
		if (v[i].offset < head || v[i].offset + v[i].size > size - tail) {
			log_error("partition '%s' (bytes %" PRIu64 " to %" PRIu64 ") overlaps the "
				  "partition table (the first %" PRIu64 " bytes and the last %" PRIu64
				  " of the %" PRIu64 "-byte disk)", p->name, v[i].offset,
				  v[i].offset + v[i].size, head, tail, size);
			return -MKI_E_IMAGE;
		}
	}
	return 0;
}

static int check_overlaps(const struct recipe_disk *d, const struct disklayout_part *v)
{
	size_t i, j;

	for (i = 0; i < d->n_partitions; i++) {
		for (j = 0; j < i; j++) {
			if (v[i].offset < v[j].offset + v[j].size &&
			    v[j].offset < v[i].offset + v[i].size) {
				log_error("partition '%s' (bytes %" PRIu64 " to %" PRIu64 ") overlaps "
					  "'%s' (bytes %" PRIu64 " to %" PRIu64 "): move one with "
					  "'offset'", d->partitions[i].name, v[i].offset,
					  v[i].offset + v[i].size, d->partitions[j].name, v[j].offset,
					  v[j].offset + v[j].size);
				return -MKI_E_IMAGE;
			}
		}
	}
	return 0;
}

int disklayout_finish(const struct recipe_disk *d, const struct disklayout_part *v,
		      const struct limits *lim, uint64_t *disk_size)
{
	uint64_t end = 0, max = runlimits_get(lim, LIMIT_DISK_SIZE);
	size_t i;
	int ret;

	for (i = 0; i < d->n_partitions; i++)
		if (v[i].offset + v[i].size > end)
			end = v[i].offset + v[i].size;
	*disk_size = d->size ? d->size :
		     board_round_size(d->size_round, disklayout_align(end) +
							(d->table == DISK_GPT ? MIB : 0));
	if (*disk_size > max) {
		log_error("the disk would be %.1f MiB, more than the %s disk-size limit (%s)",
			  mib(*disk_size), runlimits_format(LIMIT_DISK_SIZE, max).s,
			  runlimits_hint(lim, LIMIT_DISK_SIZE).s);
		return -MKI_E_HOOK;
	}
	ret = check_overlaps(d, v);
	return ret ? ret : check_table(d, v, *disk_size);
}
