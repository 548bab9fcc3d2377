/* dpkg's --status-fd lines as the configure step's progress (dpkgprogress.h). */
#include "dpkgprogress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/str.h"

void dpkgprogress_init(struct dpkgprogress *d, const struct plan *p)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->plan = p;
	d->seen = xcalloc(p->n ? p->n : 1, 1);
	for (i = 0; i < p->n; i++)
		d->initramfs |= !strcmp(p->v[i].name, "initramfs-tools");
	log_progress_begin(&d->bar, "configure", p->n, 0);
}

void dpkgprogress_release(struct dpkgprogress *d)
{
	free(d->seen);
	d->seen = NULL;
}

/* A package name as dpkg prints it: [a-z0-9][a-z0-9+.-]*, then maybe ":arch" ([a-z0-9-]+). */
static int name_ok(const char *s, size_t n)
{
	size_t i, colon = 0;

	if (!n || n > DPKGPROGRESS_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == ':' && !colon && i) {
			colon = i;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (!colon && i && (c == '+' || c == '.' || c == '-')) || (colon && c == '-')))
			return 0;
	}
	return colon != n - 1;
}

/* The plan entry dpkg names "NAME" or "NAME:ARCH", or -1. */
static long find(const struct dpkgprogress *d, const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t nl = colon ? (size_t)(colon - s) : n, i;

	for (i = 0; i < d->plan->n; i++) {
		const struct plan_entry *e = &d->plan->v[i];

		if (strlen(e->name) != nl || strncmp(e->name, s, nl))
			continue;
		if (!colon || (strlen(e->arch) == n - nl - 1 && !strncmp(e->arch, colon + 1, n - nl - 1)))
			return (long)i;
	}
	return -1;
}

/* What the bar names for package `e`: a kernel's postinst builds its initramfs, say so. */
static void show(struct dpkgprogress *d, const char *prefix, const struct plan_entry *e)
{
	const char *ver = str_starts_with(e->name, "linux-image-") ? e->name + 12 : NULL;
	char item[DPKGPROGRESS_NAME_MAX + 64];

	if (ver && *ver >= '0' && *ver <= '9' && d->initramfs)
		snprintf(item, sizeof(item), "%s%s: update-initramfs for %s", prefix, e->name, ver);
	else if (!strcmp(e->name, "initramfs-tools") && *prefix)
		snprintf(item, sizeof(item), "%supdate-initramfs", prefix);
	else
		snprintf(item, sizeof(item), "%s%s", prefix, e->name);
	log_progress_set(&d->bar, d->started, item);
}

/* "status: NAME: STATE" */
static int status_line(struct dpkgprogress *d, const char *name, size_t n, const char *state)
{
	long i = find(d, name, n);

	if (i < 0)
		return 0;
	if (!strcmp(state, "half-configured") && !(d->seen[i] & 3)) {
		d->seen[i] |= 1;
		d->started++;
		show(d, "", &d->plan->v[i]);
	} else if (!strcmp(state, "installed") && !(d->seen[i] & 2)) {
		d->started += !(d->seen[i] & 1);
		d->seen[i] |= 3;
		d->configured++;
	} else {
		return 0;
	}
	return 1;
}

int dpkgprogress_line(struct dpkgprogress *d, const char *line)
{
	const char *name, *end;
	long i;

	if (str_starts_with(line, "status: ")) {
		name = line + 8;
		end = strstr(name, ": ");
		if (!end || !name_ok(name, (size_t)(end - name)))
			return 0;
		return status_line(d, name, (size_t)(end - name), end + 2);
	}
	if (!str_starts_with(line, "processing: trigproc: "))
		return 0;
	name = line + 22;
	end = name + strcspn(name, " ");
	if (*end || !name_ok(name, (size_t)(end - name)) || (i = find(d, name, (size_t)(end - name))) < 0)
		return 0;
	if (d->seen[i] & 4)
		return 0; /* each package's triggers named once: the lines stay bounded */
	d->seen[i] |= 4;
	show(d, "triggers: ", &d->plan->v[i]);
	return 1;
}

void dpkgprogress_status(void *ctx, const char *line)
{
	dpkgprogress_line(ctx, line);
}
