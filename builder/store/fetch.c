/*
 * Parallel verified downloads over libcurl's multi interface (the only module that uses libcurl).
 * Bytes are hashed while they stream into a temp file beside the final name; only a file whose
 * size and SHA-256 match is renamed into the cache.
 */
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "cachegc.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "lib/str.h"
#include "lib/url.h"

#define MAX_ATTEMPTS 4
#define BACKOFF_FIRST 0.5   /* seconds; doubled on each retry */
#define BACKOFF_MAX 8.0
#define CONNECT_TIMEOUT 30L

enum xstate { X_DONE, X_WAIT_LOCK, X_QUEUED, X_RUNNING, X_SYNCING };

/*
 * fsync costs ~10-30 ms a file on a busy disk, more than a .deb takes to arrive from a near
 * mirror: verified files are synced by a few threads while the downloads go on, then renamed.
 */
#define SYNC_THREADS 8

struct fetcher;

struct xfer {
	struct fetcher *f;
	struct fetch_item *it;
	enum xstate state;
	CURL *h;
	char *final, *tmp;
	int fd, lock_fd;
	struct hash hash;
	int hashing, checked, err, no_range, sync_err;
	uint64_t got;
	unsigned attempts;
	double not_before;
	char errbuf[CURL_ERROR_SIZE];
};

struct syncer {
	pthread_t th[SYNC_THREADS];
	unsigned n_threads;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct xfer **todo, **done; /* both sized for every transfer */
	size_t n_todo, n_done;
	int stop, started;
	CURLM *multi;               /* woken when a sync finishes */
};

struct fetcher {
	struct syncer sync;
	CURLM *multi;
	const struct settings *st;
	struct fetch_stats *stats;
	struct progress prog;
	struct xfer *x;
	size_t n;
	unsigned running, syncing;
	long stall;
	int progress_on;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static const char *what(const struct xfer *x)
{
	return x->it->what ? x->it->what : x->it->url;
}

static void hash_restart(struct xfer *x)
{
	if (x->hashing)
		hash_release(&x->hash);
	x->hashing = x->it->sha256 && !hash_init(&x->hash, HASH_SHA256);
}

/* The server ignored our Range request and sent the whole file again: start over. */
static int restart_file(struct xfer *x)
{
	if (ftruncate(x->fd, 0) || lseek(x->fd, 0, SEEK_SET))
		return -errno;
	x->got = 0;
	hash_restart(x);
	return 0;
}

static int check_first_bytes(struct xfer *x)
{
	long code = 0;

	x->checked = 1;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	if (x->got && code == 200) {
		log_debug("'%s': server ignored the range request, downloading from the start", what(x));
		return restart_file(x);
	}
	return 0;
}

/* Say why the bytes are not the promised ones: logged, or left to a mismatch_ok caller. */
static int mismatch(struct xfer *x, const char *state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int mismatch(struct xfer *x, const char *state, const char *fmt, ...)
{
	struct fetch_item *it = x->it;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(it->mismatch, sizeof(it->mismatch), fmt, ap);
	va_end(ap);
	if (it->mismatch_ok)
		log_debug("'%s' from '%s' %s", what(x), it->url, it->mismatch);
	else
		log_error("'%s' from '%s' %s: the mirror is %s or the file was tampered with; "
			  "nothing was cached", what(x), it->url, it->mismatch, state);
	return -MKI_E_INTEGRITY;
}

static int over_limit(struct xfer *x, size_t n)
{
	const struct limits *lim = &x->f->st->limits;
	uint64_t limit = x->it->size ? x->it->size : runlimits_get(lim, LIMIT_RELEASE_SIZE);

	if (x->got + n <= limit)
		return 0;
	if (x->it->size)
		return mismatch(x, "inconsistent", "is larger than the %llu bytes the index promises",
				(unsigned long long)x->it->size);
	log_error("'%s' is larger than %s, the limit for a file of unknown size: refused, nothing "
		  "was cached (%s)", x->it->url, runlimits_format(LIMIT_RELEASE_SIZE, limit).s,
		  runlimits_hint(lim, LIMIT_RELEASE_SIZE).s);
	return -MKI_E_LIMIT_REPO;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *data)
{
	struct xfer *x = data;
	struct fetcher *f = x->f;
	size_t n = size * nmemb;
	int ret = 0;

	if (!x->checked)
		ret = check_first_bytes(x);
	if (!ret)
		ret = over_limit(x, n);
	if (!ret)
		ret = fsutil_write_all(x->fd, p, n);
	if (ret) {
		if (ret != -MKI_E_INTEGRITY && ret != -MKI_E_LIMIT_REPO)
			log_error("cannot write '%s': %s", x->tmp, err_text(ret));
		x->err = ret;
		return 0;
	}
	if (x->hashing)
		hash_update(&x->hash, p, n);
	x->got += n;
	f->stats->bytes_downloaded += n;
	if (f->progress_on)
		log_progress_add(&f->prog, n);
	return n;
}

/* The server of a transfer about to start, for the caller's record of who was contacted. */
static void note_host(struct fetch_stats *st, const char *url)
{
	char host[sizeof(st->hosts[0])];
	unsigned i;

	if (url_host(url, host, sizeof(host)))
		return;
	for (i = 0; i < st->n_hosts; i++)
		if (!strcmp(st->hosts[i], host))
			return;
	if (st->n_hosts == FETCH_MAX_HOSTS) {
		st->hosts_left_out++;
		return;
	}
	memcpy(st->hosts[st->n_hosts++], host, sizeof(host));
}

static int start(struct fetcher *f, struct xfer *x)
{
	const struct fetch_item *it = x->it;
	CURL *h;

	if (x->fd < 0) {
		if (x->lock_fd >= 0)
			cache_sweep_tmp(x->final);
		x->fd = cache_tmp_open(x->final, &x->tmp);
		if (x->fd < 0) {
			log_error("cannot create a temp file for '%s': %s", x->final, strerror(-x->fd));
			return x->fd;
		}
		hash_restart(x);
	}
	if (x->got && x->no_range) {
		int ret = restart_file(x);

		if (ret)
			return ret;
	}
	h = x->h = curl_easy_init();
	if (!h)
		return -ENOMEM;
	note_host(f->stats, it->url);
	x->checked = 0;
	x->errbuf[0] = 0;
	curl_easy_setopt(h, CURLOPT_URL, it->url);
	curl_easy_setopt(h, CURLOPT_PRIVATE, x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https,file");
	/* Never follow a redirect from https to plain http, nor to a local file. */
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR,
			 str_starts_with(it->url, "https:") ? "https" : "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, f->stall);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "mkimage/" MKI_VERSION);
	curl_easy_setopt(h, CURLOPT_FILETIME, 1L);
	if (x->got)
		curl_easy_setopt(h, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)x->got);
	if (!it->sha256 && it->if_modified > 0) {
		curl_easy_setopt(h, CURLOPT_TIMECONDITION, (long)CURL_TIMECOND_IFMODSINCE);
		curl_easy_setopt(h, CURLOPT_TIMEVALUE_LARGE, (curl_off_t)it->if_modified);
	}
	if (curl_multi_add_handle(f->multi, h) != CURLM_OK) {
		curl_easy_cleanup(h);
		x->h = NULL;
		return -ENOMEM;
	}
	x->state = X_RUNNING;
	f->running++;
	return 0;
}

/*
 * An object's lock is held only while this process is fetching it: released as soon as the object
 * is stored or given up, so a process waiting for it goes on at once and, holding no lock while it
 * waits, can never be part of a wait cycle.
 */
static void drop_lock(struct xfer *x)
{
	cache_unlock(x->lock_fd);
	x->lock_fd = -1;
}

static void finish_fail(struct xfer *x, int err)
{
	drop_lock(x);
	cache_discard(x->fd, x->tmp);
	x->fd = -1;
	free(x->tmp);
	x->tmp = NULL;
	if (x->hashing)
		hash_release(&x->hash);
	x->hashing = 0;
	x->it->result = err;
	x->state = X_DONE;
}

static int verify(struct xfer *x)
{
	const struct fetch_item *it = x->it;
	char hex[65];

	if (it->size && x->got != it->size)
		return mismatch(x, "inconsistent", "has %llu bytes, the index says %llu",
				(unsigned long long)x->got, (unsigned long long)it->size);
	if (!it->sha256)
		return 0;
	if (!x->hashing)
		return -ENOMEM;
	hash_final_hex(&x->hash, hex);
	x->hashing = 0;
	if (strcmp(hex, it->sha256))
		return mismatch(x, "corrupt", "has SHA-256 %s, the index says %s", hex,
				it->sha256);
	return 0;
}

static void *sync_worker(void *arg)
{
	struct syncer *s = arg;
	struct xfer *x;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->n_todo && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		if (!s->n_todo)
			break;
		x = s->todo[--s->n_todo];
		pthread_mutex_unlock(&s->mu);
		x->sync_err = fdatasync(x->fd) ? -errno : 0;
		pthread_mutex_lock(&s->mu);
		s->done[s->n_done++] = x;
		curl_multi_wakeup(s->multi);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void syncer_init(struct syncer *s, CURLM *multi, size_t n)
{
	s->multi = multi;
	s->todo = xcalloc(n + 1, sizeof(*s->todo));
	s->done = xcalloc(n + 1, sizeof(*s->done));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
}

/* Threads start with the first file to sync; without any, files are synced inline. */
static void syncer_start_threads(struct syncer *s)
{
	s->started = 1;
	while (s->n_threads < SYNC_THREADS &&
	       !pthread_create(&s->th[s->n_threads], NULL, sync_worker, s))
		s->n_threads++;
}

static void syncer_stop(struct syncer *s)
{
	unsigned i;

	if (!s->todo)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (i = 0; i < s->n_threads; i++)
		pthread_join(s->th[i], NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->todo);
	free(s->done);
	s->todo = s->done = NULL;
}

/* Hand a verified temp file to the sync threads (or sync it here if there are none). */
static void sync_later(struct fetcher *f, struct xfer *x)
{
	struct syncer *s = &f->sync;

	x->state = X_SYNCING;
	f->syncing++;
	if (!s->started)
		syncer_start_threads(s);
	pthread_mutex_lock(&s->mu);
	if (s->n_threads) {
		s->todo[s->n_todo++] = x;
		pthread_cond_signal(&s->cv);
	} else {
		x->sync_err = fdatasync(x->fd) ? -errno : 0;
		s->done[s->n_done++] = x;
	}
	pthread_mutex_unlock(&s->mu);
}

static void finish_ok(struct fetcher *f, struct xfer *x, long unmet, curl_off_t filetime)
{
	struct fetch_item *it = x->it;
	int ret;

	if (unmet) {
		it->not_modified = 1;
		finish_fail(x, 0);
		return;
	}
	ret = verify(x);
	if (ret) {
		finish_fail(x, ret);
		return;
	}
	if (filetime > 0) {
		struct timespec ts[2] = { { filetime, 0 }, { filetime, 0 } };

		it->filetime = (time_t)filetime;
		futimens(x->fd, ts);
	}
	f->stats->files_downloaded++;
	log_debug("downloaded '%s' (%llu bytes)", it->url, (unsigned long long)x->got);
	sync_later(f, x);
}

/* Rename the files whose sync finished into place. */
static void publish(struct fetcher *f, struct xfer *x)
{
	int ret = x->sync_err;

	if (close(x->fd) && !ret)
		ret = -errno;
	x->fd = -1;
	if (!ret)
		ret = cache_publish(x->tmp, x->final);
	f->syncing--;
	if (ret) {
		log_error("cannot store '%s' as '%s': %s", what(x), x->final, strerror(-ret));
		finish_fail(x, ret);
		return;
	}
	x->it->path = x->it->sha256 ? xstrdup(x->final) : NULL;
	free(x->tmp);
	x->tmp = NULL;
	x->it->result = 0;
	x->state = X_DONE;
	drop_lock(x);
}

static void publish_synced(struct fetcher *f)
{
	struct syncer *s = &f->sync;
	struct xfer **done;
	size_t i, n;

	pthread_mutex_lock(&s->mu);
	n = s->n_done;
	done = xmalloc((n + 1) * sizeof(*done));
	memcpy(done, s->done, n * sizeof(*done));
	s->n_done = 0;
	pthread_mutex_unlock(&s->mu);
	for (i = 0; i < n; i++)
		publish(f, done[i]);
	free(done);
}
/* Whether a failed attempt is worth another try: 5xx, 408, 429, resets, timeouts, stalls. */
static int transient(CURLcode code, long http)
{
	switch (code) {
	case CURLE_HTTP_RETURNED_ERROR:
		return http >= 500 || http == 408 || http == 429;
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

static void describe(char *buf, size_t n, const struct xfer *x, CURLcode code, long http)
{
	if (code == CURLE_HTTP_RETURNED_ERROR)
		snprintf(buf, n, "HTTP %ld", http);
	else if (code == CURLE_OPERATION_TIMEDOUT)
		snprintf(buf, n, "stalled or timed out (%s)", x->errbuf[0] ? x->errbuf
								: curl_easy_strerror(code));
	else
		snprintf(buf, n, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(code));
}

static double backoff(unsigned attempts)
{
	double d = BACKOFF_FIRST;

	while (--attempts && d < BACKOFF_MAX)
		d *= 2;
	return d < BACKOFF_MAX ? d : BACKOFF_MAX;
}

static void finish_error(struct xfer *x, CURLcode code, long http)
{
	char why[CURL_ERROR_SIZE + 64];
	int notfound = (code == CURLE_HTTP_RETURNED_ERROR && (http == 404 || http == 410)) ||
		       code == CURLE_FILE_COULDNT_READ_FILE;

	describe(why, sizeof(why), x, code, http);
	if ((code == CURLE_RANGE_ERROR || (code == CURLE_HTTP_RETURNED_ERROR && http == 416)) &&
	    x->got && !x->no_range) {
		/* The server cannot resume: start this file again from its first byte. */
		log_debug("'%s': no range support; downloading it again from the start", what(x));
		x->no_range = 1;
		x->state = X_QUEUED;
		return;
	}
	if (notfound) {
		if (!x->it->missing_ok)
			log_error("'%s' is not on the server (%s at '%s'): the index is out of date or "
				  "the source is wrong", what(x), why, x->it->url);
		finish_fail(x, -MKI_E_NOTFOUND);
		return;
	}
	if (transient(code, http) && ++x->attempts < MAX_ATTEMPTS) {
		double wait = backoff(x->attempts);

		log_warn("'%s': %s; retrying in %.1fs (attempt %u of %u)", x->it->url, why, wait,
			 x->attempts + 1, MAX_ATTEMPTS);
		x->not_before = log_now() + wait;
		x->state = X_QUEUED;
		return;
	}
	log_error("cannot download '%s': %s%s (check the network, the proxy settings or the "
		  "mirror)", x->it->url, why, transient(code, http) ? ", giving up after "
		  "4 attempts" : "");
	finish_fail(x, -MKI_E_NETWORK);
}

static void finish(struct fetcher *f, struct xfer *x, CURLcode code)
{
	long http = 0, unmet = 0;
	curl_off_t filetime = -1;

	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_getinfo(x->h, CURLINFO_CONDITION_UNMET, &unmet);
	curl_easy_getinfo(x->h, CURLINFO_FILETIME_T, &filetime);
	curl_multi_remove_handle(f->multi, x->h);
	curl_easy_cleanup(x->h);
	x->h = NULL;
	f->running--;
	if (x->err)
		finish_fail(x, x->err);
	else if (code == CURLE_OK)
		finish_ok(f, x, unmet, filetime);
	else
		finish_error(x, code, http);
}

/* Start queued transfers that are due; returns seconds until the next one is due (or 1). */
static double start_due(struct fetcher *f)
{
	double now = log_now(), next = 1.0;
	size_t i;
	int ret;

	for (i = 0; i < f->n && f->running < f->st->jobs; i++) {
		struct xfer *x = &f->x[i];

		if (x->state != X_QUEUED)
			continue;
		if (x->not_before > now) {
			if (x->not_before - now < next)
				next = x->not_before - now;
			continue;
		}
		ret = start(f, x);
		if (ret)
			finish_fail(x, ret);
	}
	return next;
}

static int any_pending(const struct fetcher *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->x[i].state == X_QUEUED || f->x[i].state == X_RUNNING ||
		    f->x[i].state == X_SYNCING)
			return 1;
	return 0;
}

static void abort_all(struct fetcher *f, int err)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct xfer *x = &f->x[i];

		if (x->state == X_RUNNING) {
			curl_multi_remove_handle(f->multi, x->h);
			curl_easy_cleanup(x->h);
			x->h = NULL;
			f->running--;
		}
		if (x->state == X_RUNNING || x->state == X_QUEUED)
			finish_fail(x, err);
	}
	/* Files being synced: let the threads finish with them, then drop them too. */
	syncer_stop(&f->sync);
	for (i = 0; i < f->n; i++)
		if (f->x[i].state == X_SYNCING)
			finish_fail(&f->x[i], err);
	f->syncing = 0;
}

static void run(struct fetcher *f)
{
	CURLMsg *m;
	int left, still;

	while (any_pending(f)) {
		double wait;

		if (err_interrupted()) {
			abort_all(f, -MKI_E_INTERRUPTED);
			return;
		}
		wait = start_due(f);
		if (!f->running && !f->syncing) {
			/* Only transfers waiting for their backoff: sleep until the first is due. */
			usleep((useconds_t)(wait * 1e6) + 1000);
			continue;
		}
		curl_multi_poll(f->multi, NULL, 0, (int)(wait * 1000) + 1, NULL);
		curl_multi_perform(f->multi, &still);
		while ((m = curl_multi_info_read(f->multi, &left))) {
			struct xfer *x = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			finish(f, x, m->data.result);
		}
		publish_synced(f);
	}
}

/* Cached already? Otherwise take the object's writer lock, or note that another process has it. */
static int prepare(struct fetcher *f, struct xfer *x, int wait)
{
	struct fetch_item *it = x->it;
	int ret;

	if (!it->sha256) {
		x->final = xstrdup(it->dest);
		x->state = X_QUEUED;
		return 0;
	}
	ret = cachegc_claim(f->st->cache_user, it->sha256);
	if (!ret)
		ret = cache_lookup(f->st->cache_dir, it->sha256, it->size, &it->path);
	if (ret == 1) {
		it->from_cache = 1;
		f->stats->files_cached++;
		x->state = X_DONE;
		drop_lock(x);
		return 0;
	}
	if (ret < 0)
		return ret;
	if (x->lock_fd < 0) {
		x->lock_fd = cache_lock(f->st->cache_dir, it->sha256, wait);
		if (x->lock_fd == -EWOULDBLOCK) {
			x->state = X_WAIT_LOCK;
			return 0;
		}
		if (x->lock_fd < 0)
			return x->lock_fd;
		/* The other holder may have finished between our lookup and our lock. */
		return prepare(f, x, wait);
	}
	x->final = cache_object_path(f->st->cache_dir, it->sha256);
	x->state = X_QUEUED;
	return 0;
}

static int offline_miss(struct xfer *x)
{
	log_error("'%s' is not in the cache '%s' and --offline forbids downloading it from '%s' "
		  "(run once without --offline to fill the cache)", what(x), x->f->st->cache_dir,
		  x->it->url);
	return -MKI_E_OFFLINE;
}

static void prepare_one(struct fetcher *f, struct xfer *x, int wait)
{
	int ret = f->st->offline && !x->it->sha256 ? offline_miss(x) : prepare(f, x, wait);

	if (!ret && f->st->offline && x->state != X_DONE)
		ret = offline_miss(x);
	if (ret) {
		if (ret != -MKI_E_OFFLINE && ret != -MKI_E_INTERRUPTED)
			log_error("cannot use the cache for '%s': %s", what(x), err_text(ret));
		drop_lock(x);
		x->it->result = ret;
		x->state = X_DONE;
	}
}

static int cmp_sha(const void *a, const void *b)
{
	const struct xfer *x = *(const struct xfer *const *)a, *y = *(const struct xfer *const *)b;

	return strcmp(x->it->sha256, y->it->sha256);
}

/*
 * The objects another process is downloading: wait for each lock in SHA-256 order (every process
 * waits in the same order, so two waiters never hold what the other waits for), and download the
 * object only if the other process did not store it. Of several items with one SHA-256 (identical
 * indexes of two components), only the first is taken in a round: the others would wait on the
 * lock this process holds. Returns how many items are left for another round.
 */
static size_t prepare_waiting(struct fetcher *f, int first_round)
{
	struct xfer **w = xcalloc(f->n + 1, sizeof(*w));
	size_t i, n = 0, left = 0;

	for (i = 0; i < f->n; i++)
		if (f->x[i].state == X_WAIT_LOCK)
			w[n++] = &f->x[i];
	if (n) {
		qsort(w, n, sizeof(*w), cmp_sha);
		if (first_round)
			log_info("waiting for another mkimage process to finish downloading %zu "
				 "file(s) ('%s'%s)", n, what(w[0]), n > 1 ? ", ..." : "");
	}
	for (i = 0; i < n && !err_interrupted(); i++) {
		if (i && !strcmp(w[i]->it->sha256, w[i - 1]->it->sha256))
			left++;
		else
			prepare_one(f, w[i], 1);
	}
	free(w);
	return left;
}

static void begin_progress(struct fetcher *f, const char *step)
{
	uint64_t total = 0;
	size_t i, count = 0;

	for (i = 0; i < f->n; i++)
		if (f->x[i].state == X_QUEUED) {
			total += f->x[i].it->size;
			count++;
		}
	if (!count || f->progress_on)
		return;
	log_progress_begin(&f->prog, step, total, 1);
	f->progress_on = 1;
}

static int fetcher_init(struct fetcher *f, struct fetch_item *items, size_t n,
			const struct settings *st, struct fetch_stats *stats)
{
	size_t i;

	pthread_once(&curl_once, curl_init);
	if (curl_init_result != CURLE_OK) {
		log_error("cannot initialise libcurl: %s", curl_easy_strerror(curl_init_result));
		return -MKI_E_NETWORK;
	}
	f->multi = curl_multi_init();
	if (!f->multi)
		return -ENOMEM;
	f->st = st;
	f->stats = stats;
	f->stall = st->stall_timeout;
	f->n = n;
	f->x = xcalloc(n ? n : 1, sizeof(*f->x));
	for (i = 0; i < n; i++) {
		f->x[i] = (struct xfer){ .f = f, .it = &items[i], .fd = -1, .lock_fd = -1,
					 .state = X_QUEUED };
		items[i].result = 0;
		items[i].path = NULL;
		items[i].not_modified = items[i].from_cache = 0;
	}
	curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)st->jobs);
	curl_multi_setopt(f->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)st->jobs);
	curl_multi_setopt(f->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	syncer_init(&f->sync, f->multi, n);
	return 0;
}

static void fetcher_release(struct fetcher *f)
{
	size_t i;

	syncer_stop(&f->sync);
	for (i = 0; i < f->n; i++) {
		cache_unlock(f->x[i].lock_fd);
		free(f->x[i].final);
	}
	free(f->x);
	if (f->multi)
		curl_multi_cleanup(f->multi);
}

int fetch_items(struct fetch_item *items, size_t n, const struct settings *st, const char *step,
		struct fetch_stats *stats)
{
	struct fetch_stats dummy = { 0 };
	struct fetcher f = { 0 };
	size_t i, left = 0;
	int ret, round;

	ret = fetcher_init(&f, items, n, st, stats ? stats : &dummy);
	if (ret)
		goto out;
	for (i = 0; i < n; i++)
		if (f.x[i].state == X_QUEUED)
			prepare_one(&f, &f.x[i], 0);
	begin_progress(&f, step);
	run(&f);
	/* Objects another process was downloading: wait for it, then take over only if it failed. */
	for (round = 0; !err_interrupted() && (!round || left); round++) {
		left = prepare_waiting(&f, !round);
		begin_progress(&f, step);
		run(&f);
	}
	if (f.progress_on && f.prog.done)
		log_progress_end(&f.prog);
	for (i = 0; i < n; i++)
		if (f.x[i].state != X_DONE) /* left waiting by a signal: not fetched */
			items[i].result = -MKI_E_INTERRUPTED;
	for (i = 0; i < n && !ret; i++)
		if (items[i].result && !(items[i].missing_ok && items[i].result == -MKI_E_NOTFOUND))
			ret = items[i].result;
out:
	fetcher_release(&f);
	return ret;
}

static char *base_name(const char *url)
{
	const char *s = strrchr(url, '/');

	return xstrdup(s && s[1] ? s + 1 : url);
}

/* Sizes come from the signed index: one that claims gigabytes is refused before any download. */
static int check_sizes(const struct plan *p, const struct limits *lim)
{
	uint64_t max = runlimits_get(lim, LIMIT_DEB_SIZE);
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		if (e->path || !e->url || e->size <= max)
			continue;
		log_error("package '%s:%s' (%s): its index declares the .deb '%s' as %llu bytes, "
			  "more than %s: refused before downloading anything (%s)", e->name, e->arch,
			  e->version, e->url, (unsigned long long)e->size,
			  runlimits_format(LIMIT_DEB_SIZE, max).s, runlimits_hint(lim, LIMIT_DEB_SIZE).s);
		return -MKI_E_LIMIT_PKG;
	}
	return 0;
}

int fetch_plan(struct plan *p, const struct settings *st, struct fetch_stats *stats)
{
	struct fetch_item *items = xcalloc(p->n ? p->n : 1, sizeof(*items));
	size_t *idx = xcalloc(p->n ? p->n : 1, sizeof(*idx));
	struct strv names = { 0 };
	size_t i, n = 0;
	int ret = check_sizes(p, &st->limits);

	for (i = 0; i < p->n && !ret; i++) {
		struct plan_entry *e = &p->v[i];

		if (e->path || !e->url)
			continue;
		strv_push_take(&names, base_name(e->url));
		items[n] = (struct fetch_item){ .url = e->url, .what = names.v[names.n - 1],
						.size = e->size, .sha256 = e->sha256 };
		idx[n++] = i;
	}
	if (!ret)
		ret = fetch_items(items, n, st, "download", stats);
	for (i = 0; i < n; i++) {
		if (!ret)
			p->v[idx[i]].path = items[i].path;
		else
			free(items[i].path);
	}
	strv_release(&names);
	if (!ret && stats)
		log_info("packages: %u downloaded (%.1f MiB), %u from the cache", stats->files_downloaded,
			 stats->bytes_downloaded / 1048576.0, stats->files_cached);
	free(items);
	free(idx);
	return ret;
}
