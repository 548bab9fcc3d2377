/*
 * The exec profile of a configuration (execprof.h): the record mkimage-exec appended, summed per
 * program and logged, most expensive first.
 */
#include "execprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/str.h"

/* A decimal number of at most 19 digits followed by one space; advances *q. */
static int parse_u64(const char **q, const char *end, uint64_t *out)
{
	const char *s = *q;
	uint64_t v = 0;
	size_t n = 0;

	while (s < end && *s >= '0' && *s <= '9' && n < 19) {
		v = v * 10 + (uint64_t)(*s++ - '0');
		n++;
	}
	if (!n || s >= end || *s != ' ')
		return -1;
	*q = s + 1;
	*out = v;
	return 0;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Printable ASCII without spaces, '\\' only in \xHH: what mkimage-exec writes. */
static int valid_path(const char *s, const char *end)
{
	if (s == end)
		return 0;
	for (; s < end; s++) {
		if (*s <= ' ' || *s >= 0x7f)
			return 0;
		if (*s == '\\' && (end - s < 4 || s[1] != 'x' || !is_hex(s[2]) || !is_hex(s[3])))
			return 0;
	}
	return 1;
}

static struct execprof_entry *entry_for(struct execprof *p, const char *path, size_t n,
					int native)
{
	struct execprof_entry *e;

	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].native == native && strlen(p->v[i].path) == n &&
		    !memcmp(p->v[i].path, path, n))
			return &p->v[i];
	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->path = xstrndup(path, n);
	e->native = native;
	return e;
}

static int parse_line(struct execprof *p, const char *s, const char *end)
{
	uint64_t wall, cpu;
	struct execprof_entry *e;
	int native;

	if (end - s > 7 && !memcmp(s, "native ", 7)) {
		native = 1;
		s += 7;
	} else if (end - s > 9 && !memcmp(s, "emulated ", 9)) {
		native = 0;
		s += 9;
	} else {
		return -1;
	}
	if (parse_u64(&s, end, &wall) || parse_u64(&s, end, &cpu) ||
	    (size_t)(end - s) > 4 * EXECPROF_MAX_PATH || !valid_path(s, end))
		return -1;
	e = entry_for(p, s, (size_t)(end - s), native);
	e->count++;
	e->wall_us += wall;
	e->cpu_us += cpu;
	p->execs++;
	p->native_execs += (uint64_t)native;
	p->wall_us += wall;
	p->cpu_us += cpu;
	return 0;
}

void execprof_parse(struct execprof *p, const char *text, size_t len)
{
	const char *s = text, *end = text + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));

		/* A line without its newline was cut short (the record's bound): not counted. The
		 * py_compile guard's "python PATH" lines are accel_python.c's. */
		if (nl && nl - s > 7 && !memcmp(s, "python ", 7))
			;
		else if (!nl || parse_line(p, s, nl) < 0)
			p->malformed++;
		s = nl ? nl + 1 : end;
	}
}

static int by_cost(const void *a, const void *b)
{
	const struct execprof_entry *x = a, *y = b;

	if (x->cpu_us != y->cpu_us)
		return x->cpu_us < y->cpu_us ? 1 : -1;
	if (x->wall_us != y->wall_us)
		return x->wall_us < y->wall_us ? 1 : -1;
	if (x->native != y->native)
		return x->native - y->native;
	return strcmp(x->path, y->path);
}

void execprof_sort(struct execprof *p)
{
	if (p->n)
		qsort(p->v, p->n, sizeof(*p->v), by_cost);
}

int execprof_create(const char *path, uid_t uid, gid_t gid)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), ret = 0;

	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid) < 0 || fchmod(fd, 0666) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

void execprof_release(struct execprof *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static double sec(uint64_t us)
{
	return (double)us / 1e6;
}

/* Entries [from, to) of the sorted profile, one line each. */
static void add_rows(struct buf *out, const struct execprof *p, size_t from, size_t to)
{
	for (size_t i = from; i < p->n && i < to; i++)
		buf_addf(out, "\n  %9llu %9.1f %9.1f  %-8s  %s", (unsigned long long)p->v[i].count,
			 sec(p->v[i].cpu_us), sec(p->v[i].wall_us),
			 p->v[i].native ? "native" : "emulated", p->v[i].path);
}

void execprof_log(const char *path, size_t top)
{
	struct execprof p = { 0 };
	struct buf text = { 0 }, out = { 0 };
	const char *kind = NULL;
	/* mkimage-exec's last line may end a little past the bound. */
	int r = readfile_read(path, EXECPROF_MAX_BYTES + 4096, &text, &kind);

	if (r < 0) {
		log_warn("exec profile: cannot read '%s': %s", path, readfile_why(r, kind));
		goto out;
	}
	execprof_parse(&p, text.p ? text.p : "", text.len);
	execprof_sort(&p);
	/* one log line per row (log.h: a message is one line) */
	buf_adds(&out, "      count     cpu s    wall s  how       program");
	add_rows(&out, &p, 0, top);
	if (p.malformed)
		buf_addf(&out, "\n  (%zu malformed lines of the record skipped)", p.malformed);
	log_block(LOG_INFO, out.p, out.len,
		  "exec profile: %llu programs started by the scripts (%llu native), %.1f s CPU in "
		  "their own processes; by CPU time (wall time includes what each ran):",
		  (unsigned long long)p.execs, (unsigned long long)p.native_execs, sec(p.cpu_us));
	if (p.n > top) {
		buf_release(&out);
		add_rows(&out, &p, top, p.n);
		log_block(LOG_DEBUG, out.p + 1, out.len - 1, "exec profile, the other programs:");
	}
out:
	execprof_release(&p);
	buf_release(&text);
	buf_release(&out);
}
