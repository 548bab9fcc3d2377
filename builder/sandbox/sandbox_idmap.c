/*
 * The id maps of the build namespace: which one this user can have (its /etc/subuid and
 * /etc/subgid range, root's fixed range, or a single id), and writing it from the helper that
 * stays outside (directly, or through the setuid newuidmap/newgidmap).
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "sandbox_int.h"

#define MAX_SUBIDS 65536u

int sandbox_find_subid(const char *file, const char *name, unsigned long id,
		       unsigned long *start, unsigned long *count)
{
	char line[512], idstr[32];
	FILE *f = fopen(file, "re");
	int found = 0;

	if (!f)
		return 0;
	snprintf(idstr, sizeof(idstr), "%lu", id);
	while (!found && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *end;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c1 = 0;
		if (strcmp(line, name ? name : "") && strcmp(line, idstr))
			continue;
		errno = 0;
		*start = strtoul(c1 + 1, &end, 10);
		if (errno || end != c2)
			continue;
		*count = strtoul(c2 + 1, &end, 10);
		found = !errno && *count > 0;
	}
	fclose(f);
	return found;
}

char *sandbox_idmap_text(const struct sandbox_info *si, int gid)
{
	unsigned long outer = gid ? si->outer_gid : si->outer_uid, sub = gid ? si->sub_gid : si->sub_uid;

	switch (si->ids) {
	case SANDBOX_IDS_ROOT:
		return xstrdup("0 0 4294967295\n");
	case SANDBOX_IDS_FULL:
		return xasprintf("0 %lu 1\n1 %lu %u\n", outer, sub, si->sub_count);
	default:
		return xasprintf("0 %lu 1\n", outer);
	}
}

/* newuidmap/newgidmap PID, then the map's numbers: the setuid tools check them against subuid. */
static int run_idmap_tool(const char *tool, pid_t pid, const char *map)
{
	char pidstr[24], *copy = xstrdup(map), *tok, *save = NULL;
	const char *argv[9] = { tool, pidstr };
	struct buf err = { 0 };
	struct proc_opts po = { .stdin_fd = -1, .err = &err, .limit = 4096 };
	int status = 0, ret, n = 2;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	for (tok = strtok_r(copy, " \n", &save); tok && n < 8; tok = strtok_r(NULL, " \n", &save))
		argv[n++] = tok;
	ret = proc_run(argv, &po, &status);
	if (ret || status)
		log_error("'%s' could not map ids for the build namespace: %s", tool,
			  ret ? strerror(-ret) : err.p ? err.p : "failed");
	buf_release(&err);
	free(copy);
	return ret || status ? -1 : 0;
}

static int write_map(pid_t pid, int gid, const char *map)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, gid ? "gid_map" : "uid_map");
	return sandbox_write_file(path, map) ? -1 : 0;
}

int sandbox_idmap_write(const struct sandbox_info *info, pid_t pid)
{
	char path[64], *map;
	int gid, ret = 0;

	if (info->ids == SANDBOX_IDS_SINGLE) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		if (sandbox_write_file(path, "deny"))
			return -1;
	}
	for (gid = 0; gid < 2 && !ret; gid++) {
		map = sandbox_idmap_text(info, gid);
		ret = info->ids == SANDBOX_IDS_FULL
			? run_idmap_tool(gid ? "newgidmap" : "newuidmap", pid, map)
			: write_map(pid, gid, map);
		free(map);
	}
	return ret;
}

/*
 * Root keeps the identity map for itself, but its commands run as root's subordinate range, or
 * the documented fixed one: never as host root.
 */
static void choose_root_range(struct sandbox_info *info, const char *name)
{
	unsigned long us = 0, uc = 0, gs = 0, gc = 0;

	info->ids = SANDBOX_IDS_ROOT;
	info->sub_uid = info->sub_gid = SANDBOX_ROOT_RANGE;
	info->sub_count = SANDBOX_ROOT_COUNT;
	if (sandbox_find_subid("/etc/subuid", name, 0, &us, &uc) &&
	    sandbox_find_subid("/etc/subgid", name, 0, &gs, &gc) && us && gs) {
		info->sub_uid = (uid_t)us;
		info->sub_gid = (gid_t)gs;
		info->sub_count = (unsigned)(uc < gc ? uc : gc);
		if (info->sub_count > MAX_SUBIDS)
			info->sub_count = MAX_SUBIDS;
	}
}

int sandbox_idmap_choose(struct sandbox_info *info, const struct sandbox_opts *o)
{
	struct passwd *pw = getpwuid(getuid());
	const char *name = pw ? pw->pw_name : NULL;
	unsigned long us = 0, uc = 0, gs = 0, gc = 0;
	char *tool = NULL;

	info->outer_uid = getuid();
	info->outer_gid = getgid();
	if (info->outer_uid == 0) {
		choose_root_range(info, name);
		return 0;
	}
	if (sandbox_find_subid("/etc/subuid", name, info->outer_uid, &us, &uc) &&
	    sandbox_find_subid("/etc/subgid", name, info->outer_uid, &gs, &gc)) {
		if (!(tool = proc_which("newuidmap")) || (free(tool), !(tool = proc_which("newgidmap")))) {
			log_error("newuidmap/newgidmap not found: install the 'uidmap' package");
			return -MKI_E_SANDBOX;
		}
		free(tool);
		info->ids = SANDBOX_IDS_FULL;
		info->sub_uid = (uid_t)us;
		info->sub_gid = (gid_t)gs;
		info->sub_count = (unsigned)(uc < gc ? uc : gc);
		if (info->sub_count > MAX_SUBIDS)
			info->sub_count = MAX_SUBIDS;
		if (info->sub_count < 65535)
			log_warn("only %u subordinate ids for '%s': ids above %u (e.g. nobody, 65534) "
				 "cannot be used inside the build", info->sub_count, name ? name : "?",
				 info->sub_count);
		return 0;
	}
	if (!o->allow_single_id) {
		log_error("user '%s' has no subordinate id range in /etc/subuid and /etc/subgid, so "
			  "packages cannot be configured with their real owners (chown root:shadow "
			  "fails); add one as root: usermod --add-subuids 100000-165535 "
			  "--add-subgids 100000-165535 %s (or accept a single-id build with "
			  "--single-id)", name ? name : "?", name ? name : "USER");
		return -MKI_E_SANDBOX;
	}
	log_warn("no subordinate ids for '%s': building with a single id; files keep the owners "
		 "the packages give them, but maintainer scripts cannot chown", name ? name : "?");
	info->ids = SANDBOX_IDS_SINGLE;
	return 0;
}
