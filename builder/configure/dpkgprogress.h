/*
 * What `dpkg --configure -a` is doing, from the lines it writes to its --status-fd
 * ("status: PKG: half-configured", "status: PKG: installed", "processing: trigproc: PKG"), as
 * the progress of the step "configure": package N of M, its name, and when a kernel's
 * postinst builds its initramfs, that it does. The lines come from the tree's dpkg, which a
 * package may replace: anything that is not a well-formed line about a package of the plan is
 * ignored, names are checked, and nothing grows with the input.
 */
#ifndef MKI_DPKGPROGRESS_H
#define MKI_DPKGPROGRESS_H

#include <stddef.h>

#include "debian/plan.h"
#include "lib/log.h"

#define DPKGPROGRESS_NAME_MAX 128 /* a package name (with ":arch") longer than this is ignored */

struct dpkgprogress {
	struct progress bar;       /* step "configure", total: the plan's packages */
	const struct plan *plan;   /* borrowed */
	unsigned char *seen;       /* per plan entry: 1 started, 2 configured, 4 triggers shown */
	size_t started, configured;
	int initramfs;             /* the plan has initramfs-tools */
};

/** Start the progress over `p` (borrowed; must outlive `d`). Release with dpkgprogress_release(). */
void dpkgprogress_init(struct dpkgprogress *d, const struct plan *p);
/**
 * One status line (without its newline), e.g. "status: libc6:amd64: half-configured". Updates
 * the progress; returns 1 when the line was taken, 0 when it was ignored.
 */
int dpkgprogress_line(struct dpkgprogress *d, const char *line);
/** The progress's sandbox callback: dpkgprogress_line() on `ctx`. */
void dpkgprogress_status(void *ctx, const char *line);
void dpkgprogress_release(struct dpkgprogress *d);

#endif
