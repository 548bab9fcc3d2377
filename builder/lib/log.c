#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "x.h"

static enum log_level threshold = LOG_INFO;
static enum log_level cap = LOG_ERROR; /* log_cap_severity() */
static unsigned warnings;
/*
 * Error-level messages: a page shared with the processes forked after log_file_start(), so that
 * an error a child printed (the sandbox's, a worker's) counts for the build as well.
 */
static unsigned own_errors, *errors_seen = &own_errors;
static int bar_visible; /* a progress bar occupies the current stderr line */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define PENDING_MAX (1 << 20) /* what is kept for the log before its file is known */
#define ERRORS_MAX 16         /* error messages kept for the report */
#define ERROR_TEXT_MAX 4096

/* The build log (log_file_open): every line at debug level, timestamped; see log.h. */
static struct {
	int fd;              /* the temp file; -1: none (yet) */
	int dirfd;           /* the directory of the log's path */
	char *tmp, *base;    /* NAME.log.tmp-PID, renamed to NAME.log by log_file_commit() */
	int unnamed;         /* fd is an O_TMPFILE, linked to tmp only when committed */
	uint64_t written, limit;
	int full;            /* the limit was hit: said once, nothing more written */
	struct buf pending;  /* lines from before the file was opened */
	struct buf partial;  /* a command's unfinished output line */
	struct strv errors;  /* the first ERRORS_MAX error messages, for the report */
	int started;
} lf = { .fd = -1, .dirfd = -1 };

#define WORKAROUNDS_MAX 64
static struct log_workaround workarounds[WORKAROUNDS_MAX];
static size_t n_workarounds;

void log_set_level(enum log_level level)
{
	threshold = level;
}

enum log_level log_get_level(void)
{
	return threshold;
}

enum log_level log_cap_severity(enum log_level level)
{
	enum log_level old = cap;

	cap = level;
	return old;
}

unsigned log_warning_count(void)
{
	return warnings;
}

/* The lock held: the first `max` messages of a level, each cut at ERROR_TEXT_MAX, for the report. */
static void keep(struct strv *v, size_t max, const char *msg)
{
	if (v->n < max)
		strv_push_take(v, xasprintf("%.*s", ERROR_TEXT_MAX, msg));
}

#define WARNINGS_MAX 64 /* warnings' texts kept for the report */
static struct strv warning_texts;

size_t log_warning_texts(const char *const **texts)
{
	*texts = (const char *const *)warning_texts.v;
	return warning_texts.n;
}

static int use_color(void)
{
	const char *nc = getenv("NO_COLOR");

	return isatty(2) && !(nc && *nc) && getenv("TERM") && getenv("TERM")[0];
}

static int is_tty(void)
{
	return isatty(2);
}

static void clear_bar(void)
{
	if (bar_visible) {
		fputs("\r\033[K", stderr);
		bar_visible = 0;
	}
}

static const char *const tags[] = { "error", "warning", "info", "debug" };

/* "2026-12-05T04:30:12.345Z ": wall time in UTC, to the millisecond. */
static void add_timestamp(struct buf *b)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	buf_addf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* Append `line` (escaped already, a newline at its end) to the log file, or keep it for it. */
static void file_put(const char *line, size_t len)
{
	static const char full[] = "-- the log stops here: it reached its limit 'log-size' "
				   "(raise it with --limit log-size=SIZE)\n";

	if (lf.full)
		return;
	if (lf.fd < 0) {
		if (lf.started && lf.pending.len + len <= PENDING_MAX)
			buf_add(&lf.pending, line, len);
		return;
	}
	if (lf.written + len + sizeof(full) - 1 > lf.limit) { /* the last line fits the limit too */
		lf.full = 1;
		line = full;
		len = sizeof(full) - 1;
	}
	/* O_APPEND, no stdio buffer: a forked child that logs adds whole lines, never a copy */
	if (write(lf.fd, line, len) == (ssize_t)len)
		lf.written += len;
}

/* One line of the log file, the lock held: timestamp, level, the escaped message. */
static void file_line(const char *tag, const char *prefix, const char *msg, size_t len)
{
	struct buf b = { 0 };

	if (lf.fd < 0 && !lf.started)
		return;
	add_timestamp(&b);
	buf_addf(&b, "%s: %s", tag, prefix);
	buf_add_printable(&b, msg, len);
	buf_adds(&b, "\n");
	file_put(b.p, b.len);
	buf_release(&b);
}

/* One line, the lock held: the tag, then `msg` with every byte a terminal acts on escaped. */
static void emit(enum log_level level, const char *msg, size_t len)
{
	static const char *const colors[] = { "\033[1;31m", "\033[1;33m", "\033[1;34m", "\033[2m" };
	struct buf esc = { 0 };

	/* The one place every message passes: whatever a package put in a name, a field, a process
	 * name or its output arrives here as \x1b and \n, never as a terminal command or a line. */
	buf_add_printable(&esc, msg, len);
	if (use_color())
		fprintf(stderr, "mkimage: %s%s\033[0m: %s\n", colors[level], tags[level], esc.p);
	else
		fprintf(stderr, "mkimage: %s: %s\n", tags[level], esc.p);
	buf_release(&esc);
}

/* The level of a message after the cap (counting warnings). */
static enum log_level capped(enum log_level level)
{
	if (level < cap)
		level = cap;
	if (level == LOG_WARN)
		__atomic_add_fetch(&warnings, 1, __ATOMIC_RELAXED);
	if (level == LOG_ERROR)
		__atomic_add_fetch(errors_seen, 1, __ATOMIC_RELAXED);
	return level;
}

/* Whether a message at `lv` goes anywhere: the terminal, or the log (which takes every level). */
static int wanted(enum log_level lv)
{
	return lv <= threshold || lf.fd >= 0 || lf.started || lv == LOG_ERROR;
}


/* errno is the caller's while `fmt` is formatted (for %m) and when this returns. */
static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	/* Callers log and then return -errno: isatty() and stdio must not change it (ENOTTY). */
	int saved = errno;
	enum log_level lv = capped(level);
	char *msg;

	if (!wanted(lv) && lv != LOG_WARN) /* warnings are kept for the report even under -q */
		return;
	msg = xvasprintf(fmt, ap);
	pthread_mutex_lock(&lock);
	if (lv == LOG_WARN)
		keep(&warning_texts, WARNINGS_MAX, msg);
	file_line(tags[lv], "", msg, strlen(msg));
	if (lv == LOG_ERROR)
		keep(&lf.errors, ERRORS_MAX, msg);
	if (lv <= threshold) {
		clear_bar();
		emit(lv, msg, strlen(msg));
	}
	pthread_mutex_unlock(&lock);
	free(msg);
	errno = saved;
}

/* log_block(); `file`: into the log too (else on the terminal only). */
static void vblock(enum log_level level, int file, const char *text, size_t len, const char *fmt,
		   va_list ap)
{
	int saved = errno;
	enum log_level lv = capped(level);
	const char *p = text, *end = text ? text + len : text, *nl; /* text may be NULL, len 0 */
	struct buf line = { 0 };
	int tty = lv <= threshold;
	char *head;

	if (!(file && wanted(lv)) && !tty)
		return;
	head = xvasprintf(fmt, ap);
	pthread_mutex_lock(&lock);
	if (tty)
		clear_bar();
	if (file)
		file_line(tags[lv], "", head, strlen(head));
	if (tty)
		emit(lv, head, strlen(head));
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl : end;
		line.len = 0;
		buf_adds(&line, "  | ");
		buf_add(&line, p, (size_t)(nl - p));
		if (file)
			file_line(tags[lv], "", line.p, line.len);
		if (tty)
			emit(lv, line.p, line.len);
	}
	if (file && lv == LOG_ERROR)
		keep(&lf.errors, ERRORS_MAX, head);
	pthread_mutex_unlock(&lock);
	buf_release(&line);
	free(head);
	errno = saved;
}

void log_block(enum log_level level, const char *text, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vblock(level, 1, text, len, fmt, ap);
	va_end(ap);
}

void log_block_terminal(enum log_level level, const char *text, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vblock(level, 0, text, len, fmt, ap);
	va_end(ap);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

int log_errno(int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (code < 0 && code > -MKI_E_BASE)
		errno = -code;
	va_start(ap, fmt);
	log_vmsg(LOG_ERROR, fmt, ap);
	va_end(ap);
	errno = saved;
	return code;
}

double log_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void human(char *buf, size_t n, double v, int bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	if (!bytes) {
		snprintf(buf, n, "%.0f", v);
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* Columns of the terminal on stderr, read at each repaint so that a resize is followed at once. */
static unsigned term_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	long v;

	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	v = env ? strtol(env, NULL, 10) : 0;
	return v > 0 && v < 10000 ? (unsigned)v : 80;
}

/*
 * The bar, repainted in place: it must stay on one line (a wrapped line cannot be taken back by
 * \r), so it is cut to the terminal's width less one column; the bar itself shrinks first.
 */
static void paint_bar(const struct progress *p, const char *counts)
{
	int width = (int)term_width();
	unsigned pct = p->total ? (unsigned)(p->done * 100 / p->total) : 0;
	struct buf line = { 0 }, rest = { 0 };
	int bar_w, room;

	if (p->total)
		buf_addf(&rest, " %3u%%", pct);
	buf_addf(&rest, " %s", counts);
	buf_addf(&line, "%-9s", p->step);
	/* what is left for " [bar]", keeping some room for the item so that the bar stays put */
	room = width - 1 - (int)line.len - (int)rest.len - 3;
	bar_w = room - (p->item[0] ? (room / 2 < 16 ? room / 2 : 16) : 0);
	bar_w = bar_w > 30 ? 30 : bar_w;
	if (p->total && bar_w >= 5) {
		buf_adds(&line, " [");
		for (int i = 0; i < bar_w; i++)
			buf_adds(&line, (unsigned)i < pct * (unsigned)bar_w / 100 ? "#" : ".");
		buf_adds(&line, "]");
	}
	buf_add(&line, rest.p, rest.len);
	if (p->item[0])
		buf_addf(&line, " %s", p->item);
	if ((int)line.len > width - 1 && width > 1)
		line.len = (size_t)width - 1; /* ASCII only (set_item), so bytes are columns */
	fprintf(stderr, "\r\033[K%.*s", (int)line.len, line.p);
	bar_visible = 1;
	buf_release(&line);
	buf_release(&rest);
}

static void print_progress(struct progress *p, int final, double now)
{
	char done[32], total[32], rate[32], counts[160];
	double el = now - p->started;

	human(done, sizeof(done), (double)p->done, p->bytes);
	human(total, sizeof(total), (double)p->total, p->bytes);
	human(rate, sizeof(rate), el > 0 ? p->done / el : 0, p->bytes);
	if (is_tty() && !final) {
		double eta = (p->done && p->total > p->done) ? el * (p->total - p->done) / p->done : 0;

		if (p->bytes)
			snprintf(counts, sizeof(counts), "%s/%s %s/s eta %.0fs", done, total, rate, eta);
		else if (p->total)
			snprintf(counts, sizeof(counts), "%s/%s %.0fs", done, total, el);
		else
			snprintf(counts, sizeof(counts), "%.0fs", el);
		paint_bar(p, counts);
		return;
	}
	clear_bar();
	if (p->item[0] && !final)
		fprintf(stderr, "mkimage: %s: %s%s%s %s (%.1fs)\n", p->step, p->total ? done : "",
			p->total ? "/" : "", p->total ? total : "", p->item, el);
	else
		fprintf(stderr, "mkimage: %s: %s%s%s (%s/s) in %.1fs%s\n", p->step, done,
			p->total ? " of " : "", p->total ? total : "", rate, el, final ? ", done" : "");
}

void log_progress_begin(struct progress *p, const char *step, uint64_t total, int bytes)
{
	p->step = step;
	p->total = total;
	p->done = 0;
	p->bytes = bytes;
	p->item[0] = 0;
	p->started = p->last_print = log_now();
	p->last_line = p->started;
}

void log_progress_add(struct progress *p, uint64_t delta)
{
	double now, gap;

	pthread_mutex_lock(&lock);
	p->done += delta;
	if (threshold >= LOG_INFO) {
		now = log_now();
		gap = is_tty() ? 0.1 : 5.0;
		if (now - p->last_print >= gap) {
			p->last_print = now;
			print_progress(p, 0, now);
		}
	}
	pthread_mutex_unlock(&lock);
}

/* The item's name as the bar shows it: printable ASCII only, so bytes are columns. */
static void set_item(struct progress *p, const char *item)
{
	size_t i;

	for (i = 0; item[i] && i < sizeof(p->item) - 1; i++)
		p->item[i] = item[i] > 0x20 && item[i] < 0x7f ? item[i] : item[i] == ' ' ? ' ' : '?';
	p->item[i] = 0;
}

void log_progress_set(struct progress *p, uint64_t done, const char *item)
{
	double now;
	int changed;

	pthread_mutex_lock(&lock);
	p->done = done > p->total && p->total ? p->total : done;
	changed = strncmp(p->item, item, sizeof(p->item) - 1) != 0;
	set_item(p, item);
	now = log_now();
	/* one line per item without a terminal: the caller bounds how many items there are */
	if (threshold >= LOG_INFO && (is_tty() ? now - p->last_print >= 0.1 : changed)) {
		p->last_print = p->last_line = now;
		print_progress(p, 0, now);
	}
	pthread_mutex_unlock(&lock);
}

void log_progress_tick(struct progress *p)
{
	double now = log_now();

	pthread_mutex_lock(&lock);
	if (threshold >= LOG_INFO && is_tty() && now - p->last_print >= 0.5) {
		p->last_print = now;
		print_progress(p, 0, now);
	} else if (threshold >= LOG_INFO && !is_tty() && now - p->last_line >= LOG_HEARTBEAT) {
		p->last_print = p->last_line = now;
		clear_bar();
		fprintf(stderr, "mkimage: %s: still running%s%s after %.0f s\n", p->step,
			p->item[0] ? ": " : "", p->item, now - p->started);
	}
	pthread_mutex_unlock(&lock);
}

void log_progress_end(struct progress *p)
{
	pthread_mutex_lock(&lock);
	if (threshold >= LOG_INFO)
		print_progress(p, 1, log_now());
	pthread_mutex_unlock(&lock);
}

void log_progress_clear(struct progress *p)
{
	pthread_mutex_lock(&lock);
	clear_bar();
	pthread_mutex_unlock(&lock);
}

/* --- the build log ------------------------------------------------------------------------- */

/* Count errors in a page the processes forked from now on share (errors_seen). */
static void share_error_count(void)
{
	unsigned *page;

	if (errors_seen != &own_errors)
		return;
	page = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return; /* then a child's errors count in the child only: its failure still fails */
	*page = own_errors;
	errors_seen = page;
}

unsigned log_error_count(void)
{
	return __atomic_load_n(errors_seen, __ATOMIC_RELAXED);
}

int log_fail_on_errors(int ret, const char *step)
{
	const struct strv *e = log_errors();

	if (ret || !log_error_count())
		return ret;
	log_error("internal error: %u message%s at error level %s printed during step '%s' (the "
		  "first: '%s'), yet the build would have succeeded: an error must fail the "
		  "build, so it fails here; please report this as a bug in mkimage",
		  log_error_count(), log_error_count() == 1 ? "" : "s",
		  log_error_count() == 1 ? "was" : "were", step,
		  e->n ? e->v[0] : "not kept: it was printed by another process");
	return -MKI_E_INTERNAL;
}

void log_warn_instead(const char *instead, const char *fmt, ...)
{
	va_list ap;
	char *what;

	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	log_warn("%s; used %s instead", what, instead);
	pthread_mutex_lock(&lock);
	if (n_workarounds < WORKAROUNDS_MAX) {
		workarounds[n_workarounds].what = xasprintf("%.*s", ERROR_TEXT_MAX, what);
		workarounds[n_workarounds++].instead = xasprintf("%.*s", ERROR_TEXT_MAX, instead);
	}
	pthread_mutex_unlock(&lock);
	free(what);
}

size_t log_workarounds(const struct log_workaround **v)
{
	*v = workarounds;
	return n_workarounds;
}

void log_file_start(void)
{
	share_error_count();
	pthread_mutex_lock(&lock);
	lf.started = 1;
	pthread_mutex_unlock(&lock);
}

/*
 * The log's file, unnamed (O_TMPFILE) in the directory of `path` where the filesystem allows: a
 * build killed with SIGKILL then leaves nothing beside its image. Else `path`.tmp-PID. Names are
 * given relative to lf.dirfd: after the build enters its mount namespace, a path names another
 * mount of the same filesystem, and linkat() across mounts fails (EXDEV).
 */
static int open_file(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xasprintf("%.*s", slash == path ? 1 : (int)(slash - path), path)
			  : xstrdup(".");
	int fd = -1;

	lf.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (lf.dirfd < 0)
		return -1;
	lf.base = xstrdup(slash ? slash + 1 : path);
	lf.tmp = xasprintf("%s.tmp-%d", lf.base, (int)getpid());
	fd = openat(lf.dirfd, ".", O_TMPFILE | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
	lf.unnamed = fd >= 0;
	if (fd < 0)
		fd = openat(lf.dirfd, lf.tmp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
			    0644);
	return fd;
}

/* The lock held: forget the file's names. */
static void drop_names(void)
{
	if (lf.dirfd >= 0)
		close(lf.dirfd);
	lf.dirfd = -1;
	free(lf.tmp);
	free(lf.base);
	lf.tmp = lf.base = NULL;
}

int log_file_open(const char *path, uint64_t limit)
{
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (lf.fd >= 0)
		goto out;
	lf.fd = open_file(path);
	if (lf.fd < 0) {
		ret = -errno;
		drop_names();
		goto out;
	}
	lf.limit = limit;
	file_put(lf.pending.p ? lf.pending.p : "", lf.pending.len);
	buf_release(&lf.pending);
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The lock held: the command's finished lines into the file, "output: WHAT | LINE". */
static void output_lines(const char *what, int flush)
{
	char *nl, *p = lf.partial.p;
	size_t left = lf.partial.len;

	while (left && ((nl = memchr(p, '\n', left)) || flush || left >= LOG_LINE_MAX)) {
		size_t n = nl ? (size_t)(nl - p) : left < LOG_LINE_MAX ? left : LOG_LINE_MAX;
		char *head = xasprintf("%s | ", what);

		file_line("output", head, p, n);
		free(head);
		n += nl != NULL;
		p += n;
		left -= n;
	}
	memmove(lf.partial.p, p, left);
	lf.partial.len = left;
	if (lf.partial.p)
		lf.partial.p[left] = 0;
}

void log_output(const char *what, const char *text, size_t len)
{
	pthread_mutex_lock(&lock);
	if (lf.fd >= 0 && !lf.full) {
		buf_add(&lf.partial, text ? text : "", text ? len : 0);
		output_lines(what, !text);
	}
	if (!text)
		lf.partial.len = 0;
	pthread_mutex_unlock(&lock);
}

/* The lock held: give the unnamed file its temp name (linkat cannot replace a file). */
static int name_file(void)
{
	char proc[64];

	if (!lf.unnamed)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", lf.fd);
	return linkat(AT_FDCWD, proc, lf.dirfd, lf.tmp, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

int log_file_commit(void)
{
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (lf.fd < 0)
		goto out;
	if (fsync(lf.fd) < 0 && errno != EINVAL)
		ret = -errno;
	if (!ret)
		ret = name_file();
	if (close(lf.fd) < 0 && !ret)
		ret = -errno;
	lf.fd = -1;
	if (!ret && renameat(lf.dirfd, lf.tmp, lf.dirfd, lf.base) < 0)
		ret = -errno;
	if (ret)
		unlinkat(lf.dirfd, lf.tmp, 0);
	drop_names();
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

void log_file_forget(void)
{
	lf.fd = -1;
}

void log_file_discard(void)
{
	pthread_mutex_lock(&lock);
	if (lf.fd >= 0) {
		close(lf.fd);
		if (!lf.unnamed)
			unlinkat(lf.dirfd, lf.tmp, 0);
	}
	lf.fd = -1;
	drop_names();
	lf.started = 0;
	buf_release(&lf.pending);
	buf_release(&lf.partial);
	pthread_mutex_unlock(&lock);
}

const struct strv *log_errors(void)
{
	return &lf.errors;
}
