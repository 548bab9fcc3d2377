#include "partuuid.h"

#include <stdio.h>
#include <string.h>

#include "lib/hash.h"

/*
 * sha256("mkimage disk id\0NAME\0SDE\0WHAT"): a seed per recipe and epoch, a value per use. An
 * update-ready disk's ids leave the epoch out (sha256("...\0NAME\0update\0COMPATIBLE\0WHAT")):
 * each later version's root names the slots by the ids the factory disk has.
 */
static void derive(const struct recipe *r, int64_t sde, const char *what, uint8_t out[32])
{
	static const char tag[] = "mkimage disk id";
	struct hash h;
	char epoch[24];

	snprintf(epoch, sizeof(epoch), "%lld", (long long)sde);
	hash_init(&h, HASH_SHA256);
	hash_update(&h, tag, sizeof(tag));
	hash_update(&h, r->name, strlen(r->name) + 1);
	if (r->update.set && r->update.compatible) {
		hash_update(&h, "update", 7);
		hash_update(&h, r->update.compatible, strlen(r->update.compatible) + 1);
	} else {
		hash_update(&h, epoch, strlen(epoch) + 1);
	}
	hash_update(&h, what, strlen(what));
	hash_final(&h, out);
}

/* The first 16 bytes of `u` made a version 4 UUID. */
static void uuid_bits(uint8_t *u)
{
	u[6] = (u[6] & 0x0f) | 0x40; /* version 4 */
	u[8] = (u[8] & 0x3f) | 0x80; /* RFC 4122 variant */
}

void partuuid_derive(const struct recipe *r, int64_t sde, const char *what, char out[37])
{
	uint8_t u[32];

	derive(r, sde, what, u);
	uuid_bits(u);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

uint32_t partuuid_u32(const struct recipe *r, int64_t sde, const char *what)
{
	uint8_t u[32];

	derive(r, sde, what, u);
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

void partuuid_disk(const struct recipe *r, int64_t sde, char out[37])
{
	if (r->disk.table == DISK_MBR)
		snprintf(out, 37, "%08x", partuuid_u32(r, sde, "mbr"));
	else
		partuuid_derive(r, sde, "disk", out);
}

void partuuid_partition(const struct recipe *r, int64_t sde, size_t i, char out[37])
{
	char what[64 + 4 * 36];
	size_t j, n = 0;

	if (r->disk.table == DISK_MBR) {
		for (j = 0; j <= i; j++)
			n += r->disk.partitions[j].table_entry;
		snprintf(out, 37, "%08x-%02zx", partuuid_u32(r, sde, "mbr"), n);
		return;
	}
	snprintf(what, sizeof(what), "partition:%s", r->disk.partitions[i].name);
	partuuid_derive(r, sde, what, out);
}

void partuuid_verity(const struct recipe *r, int64_t sde, const char *name, uint8_t salt[32],
		     uint8_t uuid[16])
{
	char what[64 + 4 * 36];
	uint8_t u[32];

	snprintf(what, sizeof(what), "verity-salt:%s", name);
	derive(r, sde, what, salt);
	snprintf(what, sizeof(what), "verity-uuid:%s", name);
	derive(r, sde, what, u);
	uuid_bits(u);
	memcpy(uuid, u, 16);
}
