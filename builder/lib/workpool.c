/* The ordered work-ahead pool (workpool.h): one mutex and one condition variable for all. */
#include "workpool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "str.h"

struct workpool {
	struct workpool_spec spec;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t *threads;
	unsigned started;
	size_t next, consumed;
	uint64_t inflight; /* bytes held by finished items not yet consumed */
	uint64_t *held;    /* per item, from its job */
	unsigned char *ready;
	int stop;
};

/* Start item p->next now? Always the next one to consume; others within both bounds. */
static int may_start(const struct workpool *p)
{
	if (p->next == p->consumed)
		return 1;
	return p->next < p->consumed + p->spec.window && p->inflight < p->spec.budget;
}

static void *worker(void *arg)
{
	struct workpool *p = arg;
	uint64_t held;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->stop && p->next < p->spec.n && !may_start(p))
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop || p->next >= p->spec.n) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		held = p->spec.job(p->spec.arg, i);
		pthread_mutex_lock(&p->mu);
		p->held[i] = held;
		p->inflight += held;
		p->ready[i] = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* The CPUs this process may run on (its affinity, as a container or taskset limits it). */
static long cpus_usable(void)
{
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

unsigned workpool_threads(unsigned jobs, size_t n)
{
	long cpus = cpus_usable();
	unsigned w = jobs ? jobs : 1;

	if (cpus > 0 && w > (unsigned long)cpus)
		w = (unsigned)cpus;
	if (w > n)
		w = (unsigned)n;
	return w ? w : 1;
}

int workpool_start(struct workpool **out, const struct workpool_spec *spec)
{
	struct workpool *p = xcalloc(1, sizeof(*p));
	unsigned i;

	p->spec = *spec;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->held = xcalloc(spec->n ? spec->n : 1, sizeof(*p->held));
	p->ready = xcalloc(spec->n ? spec->n : 1, 1);
	p->threads = xcalloc(spec->threads ? spec->threads : 1, sizeof(*p->threads));
	for (i = 0; i < spec->threads; i++)
		if (!pthread_create(&p->threads[p->started], NULL, worker, p))
			p->started++;
	if (!p->started) {
		workpool_finish(p);
		*out = NULL;
		return -EAGAIN;
	}
	*out = p;
	return (int)p->started;
}

void workpool_wait(struct workpool *p, size_t i)
{
	pthread_mutex_lock(&p->mu);
	while (!p->ready[i])
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void workpool_done(struct workpool *p, size_t i)
{
	pthread_mutex_lock(&p->mu);
	p->consumed = i + 1;
	p->inflight -= p->held[i];
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void workpool_finish(struct workpool *p)
{
	unsigned i;

	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->started; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p->held);
	free(p->ready);
	free(p);
}
