#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "x.h"

static enum log_level threshold = LOG_INFO;
static enum log_level cap = LOG_ERROR; /* log_cap_severity() */
static unsigned warnings;
static int bar_visible; /* a progress bar occupies the current stderr line */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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

/* The warnings' texts for the report, the first LOG_KEEP_WARNINGS; `lock` held. */
#define LOG_KEEP_WARNINGS 64
static char *kept[LOG_KEEP_WARNINGS];
static size_t n_kept;

static void keep_warning(const char *msg)
{
	if (n_kept < LOG_KEEP_WARNINGS)
		kept[n_kept++] = xstrdup(msg);
}

size_t log_warning_texts(const char *const **texts)
{
	*texts = (const char *const *)kept;
	return n_kept;
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

/* One line, the lock held: the tag, then `msg` with every byte a terminal acts on escaped. */
static void emit(enum log_level level, const char *msg, size_t len)
{
	static const char *const tags[] = { "error", "warning", "info", "debug" };
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

/* The level a message is printed at after the cap, or -2 when the threshold drops it. */
static int effective_level(enum log_level level)
{
	if (level < cap)
		level = cap;
	if (level == LOG_WARN)
		__atomic_add_fetch(&warnings, 1, __ATOMIC_RELAXED);
	return level > threshold ? -2 : (int)level;
}

/* errno is the caller's while `fmt` is formatted (for %m) and when this returns. */
static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	/* Callers log and then return -errno: isatty() and stdio must not change it (ENOTTY). */
	int saved = errno, lv = effective_level(level);
	int warn = (level < cap ? cap : level) == LOG_WARN; /* kept even under -q */
	char *msg;

	if (lv < -1 && !warn)
		return;
	msg = xvasprintf(fmt, ap);
	pthread_mutex_lock(&lock);
	if (warn)
		keep_warning(msg);
	if (lv >= -1) {
		clear_bar();
		emit((enum log_level)lv, msg, strlen(msg));
	}
	pthread_mutex_unlock(&lock);
	free(msg);
	errno = saved;
}

void log_block(enum log_level level, const char *text, size_t len, const char *fmt, ...)
{
	int saved = errno, lv = effective_level(level);
	const char *p = text, *end = text ? text + len : text, *nl; /* text may be NULL, len 0 */
	struct buf line = { 0 };
	char *head;
	va_list ap;

	if (lv < -1)
		return;
	va_start(ap, fmt);
	head = xvasprintf(fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	clear_bar();
	emit((enum log_level)lv, head, strlen(head));
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl : end;
		line.len = 0;
		buf_adds(&line, "  | ");
		buf_add(&line, p, (size_t)(nl - p));
		emit((enum log_level)lv, line.p, line.len);
	}
	pthread_mutex_unlock(&lock);
	buf_release(&line);
	free(head);
	errno = saved;
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

static void print_progress(struct progress *p, int final, double now)
{
	char done[32], total[32], rate[32];
	double el = now - p->started;

	human(done, sizeof(done), (double)p->done, p->bytes);
	human(total, sizeof(total), (double)p->total, p->bytes);
	human(rate, sizeof(rate), el > 0 ? p->done / el : 0, p->bytes);
	if (is_tty() && !final) {
		unsigned pct = p->total ? (unsigned)(p->done * 100 / p->total) : 0;
		char bar[31];
		unsigned fill = pct * 30 / 100, i;
		double eta = (p->done && p->total > p->done) ? el * (p->total - p->done) / p->done : 0;

		for (i = 0; i < 30; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[30] = 0;
		fprintf(stderr, "\r\033[K%-9s [%s] %3u%% %s/%s %s/s eta %.0fs", p->step, bar, pct, done,
			total, rate, eta);
		bar_visible = 1;
		return;
	}
	clear_bar();
	fprintf(stderr, "mkimage: %s: %s%s%s (%s/s) in %.1fs%s\n", p->step, done, p->total ? " of " : "",
		p->total ? total : "", rate, el, final ? ", done" : "");
}

void log_progress_begin(struct progress *p, const char *step, uint64_t total, int bytes)
{
	p->step = step;
	p->total = total;
	p->done = 0;
	p->bytes = bytes;
	p->started = p->last_print = log_now();
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

void log_progress_end(struct progress *p)
{
	pthread_mutex_lock(&lock);
	if (threshold >= LOG_INFO)
		print_progress(p, 1, log_now());
	pthread_mutex_unlock(&lock);
}
