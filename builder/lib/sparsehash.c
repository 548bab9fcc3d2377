#include "sparsehash.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "hash.h"
#include "x.h"

#define BS ((uint64_t)SPARSEHASH_BLOCK)
#define CHUNK (1u << 20)        /* a read */
#define NBUF 4                  /* read buffers: one filled while the whole digest hashes others */
#define QCAP 64                 /* pieces queued for the whole digest */
#define ZPIECE (64ull << 20)    /* a hole is queued in pieces: an abort waits for one at most */
#define FIEMAP_BATCH 256

/* Never written: what a hole reads as, fed to the digests (bss, no page until read). */
static uint8_t sparsehash_zero[1u << 16];

/* Bytes [from, to) of the file. */
struct span {
	uint64_t from, to;
};

/* The file's written data in order: SEEK_DATA/SEEK_HOLE less the unwritten extents. */
struct datawalk {
	int fd;
	uint64_t size;
	struct span *u; /* unwritten extents, in order */
	size_t n_u, j;
};

/*
 * A run of the file for a digest thread: bytes at p, or n zeros when p is NULL; or, with `close`,
 * the end of one of the map's ranges (its digest finished, the next one begun).
 */
struct piece {
	const uint8_t *p;
	uint64_t n;
	int close;
};

/*
 * A digest on a thread of its own fed through a queue (inline without one): the whole file's,
 * and the map's ranges one after the other (their digests in `hex`, in order). The map has a
 * thread of its own since the range sums are a third SHA-256 stream over the data: beside the
 * spans' on the pass's thread it made that one the longest by as much again as the data is
 * (a bootable disk: 570 MB of partition and 393 MB of data against the whole digest's 572 MB).
 */
struct whole {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct piece q[QCAP];
	uint64_t head, tail; /* pieces the thread has hashed / was given */
	int on, threaded, stop, abort, h_on;
	struct hash h;
	char (*hex)[65];     /* the ranges' digests, written by the thread alone */
	size_t n_hex, alloc_hex;
};

struct pass {
	int fd;
	uint64_t size;
	struct sparsehash *sh;
	struct whole w, m;      /* the whole file's digest, the map's */
	uint8_t *buf[NBUF];
	uint64_t buf_seq[NBUF], buf_mseq[NBUF]; /* the buffer is free once w and m took this many */
	unsigned next_buf;
	size_t span;            /* the first span not finished */
	int span_on, range_on;
	struct hash span_h;
	struct sparsehash_range cur; /* the map's open range */
	uint64_t range_fed, range_end;
	size_t map_alloc;
};

/*
 * The extents of `fd` allocated but never written, in bytes, after its dirty pages are written
 * out (FIEMAP_FLAG_SYNC) so that written data is no longer reported as such. They read as zeros,
 * and SEEK_DATA calls them data only once something has read them into the page cache: left out
 * always, nothing depends on who read the file before (and tmpfs, where the same zeroing punches
 * holes, agrees). Where FIEMAP is not supported there are none.
 */
static int unwritten(int fd, uint64_t size, struct span **v, size_t *n)
{
	struct fiemap *fm = xcalloc(1, sizeof(*fm) + FIEMAP_BATCH * sizeof(struct fiemap_extent));
	uint64_t start = 0, end = 0;
	size_t alloc = 0, i;
	int ret = 0, last = 0;

	while (!last && start < size) {
		fm->fm_start = start;
		fm->fm_length = size - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			ret = errno == EOPNOTSUPP || errno == ENOTTY ? 0 : -errno;
			break;
		}
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			end = e->fe_logical + e->fe_length;
			last |= !!(e->fe_flags & FIEMAP_EXTENT_LAST);
			if (!(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN))
				continue;
			if (*n == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				*v = xrealloc(*v, alloc * sizeof(**v));
			}
			(*v)[(*n)++] = (struct span){ e->fe_logical, end };
		}
		if (!fm->fm_mapped_extents || end <= start)
			break;
		start = end;
	}
	free(fm);
	return ret;
}

/*
 * Without a map, unwritten extents need not be told from data: read, they are zeros, as the
 * digests take them. Not asking spares FIEMAP's sync, so hashing does not first wait for the
 * file's writeback (the commit's fsync does, after the digests).
 */
static int datawalk_init(struct datawalk *d, int fd, uint64_t size, int map)
{
	*d = (struct datawalk){ .fd = fd, .size = size };
	return map ? unwritten(fd, size, &d->u, &d->n_u) : 0;
}

/* The first written bytes [*s, *e) at or after `pos`: 0; 1 when there are none; or -errno. */
static int datawalk_next(struct datawalk *d, uint64_t pos, uint64_t *s, uint64_t *e)
{
	uint64_t start, end;
	off_t a, b;

	while (pos < d->size) {
		a = lseek(d->fd, (off_t)pos, SEEK_DATA);
		if (a < 0)
			return errno == ENXIO ? 1 : -errno; /* ENXIO: the rest is a hole */
		if ((uint64_t)a >= d->size)
			return 1;
		if ((b = lseek(d->fd, a, SEEK_HOLE)) < 0)
			return -errno;
		if (b <= a)
			return -ESTALE; /* data that ends where it starts: the file changed */
		start = (uint64_t)a;
		end = (uint64_t)b < d->size ? (uint64_t)b : d->size;
		for (;;) { /* past the unwritten extents it starts in */
			while (d->j < d->n_u && d->u[d->j].to <= start)
				d->j++;
			if (d->j == d->n_u || d->u[d->j].from > start)
				break;
			start = d->u[d->j].to;
		}
		if (d->j < d->n_u && d->u[d->j].from < end)
			end = d->u[d->j].from;
		if (start < end) {
			*s = start;
			*e = end;
			return 0;
		}
		pos = end; /* all of it unwritten */
	}
	return 1;
}

/* Append blocks [first, last] to the map, merged with the previous range when they touch. */
static void add_range(struct sparsehash_range **v, size_t *n, size_t *alloc, uint64_t first,
		      uint64_t last)
{
	if (*n && first <= (*v)[*n - 1].last + 1) {
		if (last > (*v)[*n - 1].last)
			(*v)[*n - 1].last = last;
		return;
	}
	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 64;
		*v = xrealloc(*v, *alloc * sizeof(**v));
	}
	(*v)[*n] = (struct sparsehash_range){ .first = first, .last = last };
	(*n)++;
}

int sparsehash_ranges(int fd, uint64_t size, struct sparsehash_range **v, size_t *n)
{
	struct datawalk d;
	uint64_t pos = 0, s, e;
	size_t alloc = 0;
	int ret = datawalk_init(&d, fd, size, 1);

	*v = NULL;
	*n = 0;
	/* The host's holes may be finer than the map's blocks: any data maps its block. */
	while (!ret && !(ret = datawalk_next(&d, pos, &s, &e))) {
		add_range(v, n, &alloc, s / BS, (e - 1) / BS);
		pos = e;
	}
	free(d.u);
	if (ret < 0) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return ret < 0 ? ret : 0;
}

/* Bytes at p, or n zeros when p is NULL, into h. -MKI_E_INTERRUPTED on SIGINT/SIGTERM. */
static int feed(struct hash *h, const uint8_t *p, uint64_t n)
{
	size_t m;

	if (p) {
		hash_update(h, p, (size_t)n);
		return 0;
	}
	for (; n; n -= m) {
		m = n < sizeof(sparsehash_zero) ? (size_t)n : sizeof(sparsehash_zero);
		hash_update(h, sparsehash_zero, m);
		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
	}
	return 0;
}

/* ---- the whole-file digest's thread ---------------------------------------------------------- */

/* A piece into the digest: fed, or (close) the digest finished into the next of `hex`. */
static int whole_take(struct whole *w, const struct piece *pc)
{
	if (!w->h_on) {
		if (hash_init(&w->h, HASH_SHA256))
			return -ENOMEM;
		w->h_on = 1;
	}
	if (!pc->close)
		return feed(&w->h, pc->p, pc->n); /* only SIGINT/SIGTERM, which the pass sees too */
	if (w->n_hex == w->alloc_hex) {
		w->alloc_hex = w->alloc_hex ? 2 * w->alloc_hex : 64;
		w->hex = xrealloc(w->hex, w->alloc_hex * sizeof(*w->hex));
	}
	hash_final_hex(&w->h, w->hex[w->n_hex++]);
	w->h_on = 0;
	return 0;
}

static void *whole_main(void *arg)
{
	struct whole *w = arg;
	struct piece pc;
	int ret;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->head == w->tail && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->head == w->tail || w->abort)
			break;
		pc = w->q[w->head % QCAP];
		pthread_mutex_unlock(&w->mu);
		ret = whole_take(w, &pc);
		pthread_mutex_lock(&w->mu);
		w->abort |= ret != 0;
		w->head++;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * Start the digest; on a thread when one can be had, else it is hashed inline (same bytes). The
 * thread blocks every signal: SIGINT and SIGTERM stay the pass's, which stops it.
 */
static void whole_start(struct whole *w, int on)
{
	sigset_t all, old;

	w->on = on;
	if (!on)
		return;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w->threaded = !pthread_create(&w->thread, NULL, whole_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Queue a piece for the digest; returns its number. */
static uint64_t whole_queue(struct whole *w, struct piece pc)
{
	uint64_t seq;

	if (!w->on)
		return 0;
	if (!w->threaded) {
		if (!w->abort && whole_take(w, &pc))
			w->abort = 1;
		return 0;
	}
	pthread_mutex_lock(&w->mu);
	while (w->tail - w->head == QCAP && !w->abort)
		pthread_cond_wait(&w->cv, &w->mu);
	seq = w->tail++;
	w->q[seq % QCAP] = pc;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return seq + 1;
}

/* Bytes (or zeros when p is NULL) for the digest; returns the piece's number. */
static uint64_t whole_push(struct whole *w, const uint8_t *p, uint64_t n)
{
	return whole_queue(w, (struct piece){ .p = p, .n = n });
}

/* Wait until the whole digest has hashed `seq` pieces (or stopped). */
static void whole_wait(struct whole *w, uint64_t seq)
{
	if (!w->threaded)
		return;
	pthread_mutex_lock(&w->mu);
	while (w->head < seq && !w->abort)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/*
 * Stop the thread (after what is queued, or at once when `abort`); the digest into `hex` (NULL:
 * the map's, whose digests are in w->hex).
 */
static void whole_finish(struct whole *w, int abort, char *hex)
{
	if (!w->on)
		return;
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		w->abort |= abort;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
	}
	if (w->h_on && (abort || w->abort || !hex))
		hash_release(&w->h);
	else if (hex && !w->h_on)
		hash_sha256_hex("", 0, hex); /* nothing was fed: an empty file */
	else if (hex)
		hash_final_hex(&w->h, hex);
	w->h_on = 0;
}

/* ---- the spans and the map, on the pass's own thread ----------------------------------------- */

/* The spans that end at or before `at` are finished (an empty one hashes nothing). */
static void spans_to(struct pass *P, uint64_t at)
{
	struct sparsehash *sh = P->sh;

	while (P->span < sh->n_spans && sh->spans[P->span].to <= at) {
		if (!P->span_on)
			hash_init(&P->span_h, HASH_SHA256);
		hash_final_hex(&P->span_h, sh->spans[P->span].sha256);
		P->span_on = 0;
		P->span++;
	}
}

/* Bytes [at, at + n) (p, or zeros when NULL) into the spans they fall in. */
static int feed_spans(struct pass *P, uint64_t at, const uint8_t *p, uint64_t n)
{
	uint64_t end = at + n, a, b;
	int ret = 0;

	spans_to(P, at);
	while (!ret && P->span < P->sh->n_spans) {
		const struct sparsehash_span *s = &P->sh->spans[P->span];

		if (s->from == s->to && s->to < end) { /* empty, inside the piece */
			spans_to(P, s->to);
			continue;
		}
		a = at > s->from ? at : s->from;
		b = end < s->to ? end : s->to;
		if (a >= b)
			break;
		if (!P->span_on && hash_init(&P->span_h, HASH_SHA256))
			return -ENOMEM;
		P->span_on = 1;
		ret = feed(&P->span_h, p ? p + (a - at) : NULL, b - a);
		if (b < s->to)
			break;
		spans_to(P, b);
	}
	return ret;
}

/*
 * The map's open range: its remaining zeros and its end queued for the map's thread, appended to
 * the map (its digest is filled in from that thread's at the end).
 */
static int range_close(struct pass *P)
{
	if (!P->range_on)
		return 0;
	if (P->range_fed < P->range_end)
		whole_push(&P->m, NULL, P->range_end - P->range_fed);
	whole_queue(&P->m, (struct piece){ .close = 1 });
	P->range_on = 0;
	if (P->sh->n_map == P->map_alloc) {
		P->map_alloc = P->map_alloc ? 2 * P->map_alloc : 64;
		P->sh->map = xrealloc(P->sh->map, P->map_alloc * sizeof(*P->sh->map));
	}
	P->sh->map[P->sh->n_map++] = P->cur;
	return P->m.abort ? -MKI_E_INTERRUPTED : 0;
}

/*
 * Data at [s, e) is next: the open range grows over its blocks when they touch it, or is closed
 * and a new one opened. Bytes of those blocks before s are zeros (a hole, or unwritten).
 */
static int range_data(struct pass *P, uint64_t s, uint64_t e)
{
	uint64_t first = s / BS, last = (e - 1) / BS;
	int ret = 0;

	if (!P->range_on || first > P->cur.last + 1) {
		ret = range_close(P);
		if (ret)
			return ret;
		P->range_on = 1;
		P->cur = (struct sparsehash_range){ .first = first, .last = last };
		P->range_fed = first * BS;
	}
	if (last > P->cur.last)
		P->cur.last = last;
	P->range_end = (P->cur.last + 1) * BS < P->size ? (P->cur.last + 1) * BS : P->size;
	if (P->range_fed < s)
		whole_push(&P->m, NULL, s - P->range_fed);
	P->range_fed = s;
	return ret;
}

/* ---- the pass ------------------------------------------------------------------------------- */

/* n zeros at `at` (a hole, or unwritten): into every digest that covers them, nothing read. */
static int pass_zero(struct pass *P, uint64_t at, uint64_t n)
{
	uint64_t end = at + n, a, b, m;
	int ret;

	for (a = at; a < end; a += m) {
		m = end - a < ZPIECE ? end - a : ZPIECE;
		whole_push(&P->w, NULL, m);
	}
	ret = feed_spans(P, at, NULL, n);
	if (ret || !P->range_on)
		return ret;
	a = at > P->range_fed ? at : P->range_fed;
	b = end < P->range_end ? end : P->range_end;
	if (a >= b)
		return 0;
	P->range_fed = b;
	whole_push(&P->m, NULL, b - a);
	return 0;
}

/* A read buffer the digest threads are done with. */
static uint8_t *take_buf(struct pass *P, unsigned *i)
{
	*i = P->next_buf++ % NBUF;
	whole_wait(&P->w, P->buf_seq[*i]);
	whole_wait(&P->m, P->buf_mseq[*i]);
	return P->buf[*i];
}

/* n bytes at `at`, all of them: -ESTALE when the file ends first (it changed). */
static int read_at(int fd, uint8_t *b, size_t n, uint64_t at)
{
	ssize_t got;

	while (n) {
		got = pread(fd, b, n, (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -ESTALE;
		b += got;
		n -= (size_t)got;
		at += (uint64_t)got;
	}
	return 0;
}

/* Data at [s, e): read once, each chunk into every digest that covers it. */
static int pass_data(struct pass *P, uint64_t s, uint64_t e)
{
	unsigned i;
	uint8_t *b;
	size_t n;
	int ret = P->sh->want_map ? range_data(P, s, e) : 0;

	for (; !ret && s < e; s += n) {
		n = e - s < CHUNK ? (size_t)(e - s) : CHUNK;
		b = take_buf(P, &i);
		ret = read_at(P->fd, b, n, s);
		if (ret)
			break;
		P->sh->bytes_read += n;
		P->buf_seq[i] = whole_push(&P->w, b, n);
		ret = feed_spans(P, s, b, n);
		if (!ret && P->range_on) {
			P->buf_mseq[i] = whole_push(&P->m, b, n);
			P->range_fed = s + n;
		}
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	return ret;
}

/* Every byte of the file in order: the data read, the rest fed as zeros. */
static int pass_run(struct pass *P)
{
	struct datawalk d;
	uint64_t pos = 0, s, e;
	int ret = datawalk_init(&d, P->fd, P->size, P->sh->want_map), found;

	while (!ret && pos < P->size) {
		found = datawalk_next(&d, pos, &s, &e);
		if (found < 0) {
			ret = found;
			break;
		}
		if (found)
			s = e = P->size;
		ret = pass_zero(P, pos, s - pos);
		if (!ret && s < e)
			ret = pass_data(P, s, e);
		pos = e;
	}
	free(d.u);
	if (!ret && P->range_on)
		ret = range_close(P);
	if (!ret)
		spans_to(P, P->size);
	return ret;
}

/* The spans in order, inside the file. */
static int spans_valid(const struct sparsehash *sh, uint64_t size)
{
	size_t i;

	for (i = 0; i < sh->n_spans; i++)
		if (sh->spans[i].from > sh->spans[i].to || sh->spans[i].to > size ||
		    (i && sh->spans[i].from < sh->spans[i - 1].to))
			return 0;
	return 1;
}

/* The file is (still) at least `size` bytes long: it did not change under the pass. */
static int long_enough(int fd, uint64_t size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return (uint64_t)st.st_size >= size ? 0 : -ESTALE;
}

/* The map's digests from its thread into the map: one for each range, or the pass failed. */
static int map_digests(struct pass *P)
{
	size_t k;

	if (P->m.abort || P->m.n_hex != P->sh->n_map)
		return -MKI_E_INTERRUPTED; /* SIGINT/SIGTERM, or no memory for a digest */
	for (k = 0; k < P->sh->n_map; k++)
		memcpy(P->sh->map[k].sha256, P->m.hex[k], 65);
	return 0;
}

int sparsehash_file(int fd, uint64_t size, struct sparsehash *sh)
{
	struct pass P = { .fd = fd, .size = size, .sh = sh };
	unsigned i;
	int ret;

	sh->whole[0] = 0;
	sh->map = NULL;
	sh->n_map = 0;
	sh->size = size;
	sh->bytes_read = 0;
	if (!spans_valid(sh, size))
		return -EINVAL;
	ret = long_enough(fd, size);
	if (ret)
		return ret;
	whole_start(&P.w, sh->want_whole);
	whole_start(&P.m, sh->want_map);
	for (i = 0; i < NBUF; i++)
		P.buf[i] = xmalloc(CHUNK);
	ret = pass_run(&P);
	if (!ret)
		ret = long_enough(fd, size);
	whole_finish(&P.w, ret != 0, sh->whole);
	whole_finish(&P.m, ret != 0, NULL);
	if (!ret && P.w.abort)
		ret = -MKI_E_INTERRUPTED;
	if (!ret && sh->want_map)
		ret = map_digests(&P);
	if (P.span_on)
		hash_release(&P.span_h);
	free(P.m.hex);
	for (i = 0; i < NBUF; i++)
		free(P.buf[i]);
	if (ret)
		sparsehash_release(sh);
	return ret;
}

void sparsehash_release(struct sparsehash *sh)
{
	free(sh->map);
	sh->map = NULL;
	sh->n_map = 0;
}
