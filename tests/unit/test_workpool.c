#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "lib/workpool.h"

#define N 200

struct probe {
	atomic_size_t consumed; /* raised before workpool_done(): never behind the pool's count */
	atomic_int runs[N];
	atomic_int too_early;   /* a job started beyond the window */
	size_t window;
	unsigned char result[N];
};

static uint64_t job(void *arg, size_t i)
{
	struct probe *p = arg;

	if (i >= atomic_load(&p->consumed) + p->window)
		atomic_store(&p->too_early, 1);
	atomic_fetch_add(&p->runs[i], 1);
	p->result[i] = (unsigned char)(i * 7);
	return 1000;
}

static void run(unsigned threads, size_t window, uint64_t budget)
{
	struct probe *p = calloc(1, sizeof(*p));
	struct workpool_spec spec = { .n = N, .threads = threads, .window = window,
				      .budget = budget, .job = job, .arg = p };
	struct workpool *pool;
	size_t i;

	p->window = window;
	ck_assert_int_eq(workpool_start(&pool, &spec), (int)threads);
	for (i = 0; i < N; i++) {
		workpool_wait(pool, i);
		ck_assert_uint_eq(p->result[i], (unsigned char)(i * 7)); /* visible once waited for */
		atomic_store(&p->consumed, i + 1);
		workpool_done(pool, i);
	}
	workpool_finish(pool);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(atomic_load(&p->runs[i]), 1);
	ck_assert_int_eq(atomic_load(&p->too_early), 0);
	free(p);
}

START_TEST(every_item_once_in_order)
{
	run(1, 1, 1 << 20);
	run(2, 4, 1 << 20);
	run(4, 16, 1 << 20);
}
END_TEST

/* A zero budget still lets the next item start: the pool never waits on its own bounds. */
START_TEST(budget_never_stalls)
{
	run(3, 8, 0);
}
END_TEST

START_TEST(thread_count)
{
	ck_assert_uint_eq(workpool_threads(0, 10), 1);
	ck_assert_uint_eq(workpool_threads(4, 1), 1);
	ck_assert_uint_eq(workpool_threads(1, 0), 1);
	ck_assert_uint_le(workpool_threads(1000, 1000), 1000);
}
END_TEST

/* Stopping early: items not started never run, and finish() returns. */
START_TEST(finish_early)
{
	struct probe *p = calloc(1, sizeof(*p));
	struct workpool_spec spec = { .n = N, .threads = 2, .window = 2, .budget = 1 << 20,
				      .job = job, .arg = p };
	struct workpool *pool;
	size_t i, ran = 0;

	p->window = 2;
	ck_assert_int_eq(workpool_start(&pool, &spec), 2);
	workpool_wait(pool, 0);
	workpool_finish(pool);
	for (i = 0; i < N; i++)
		ran += (size_t)atomic_load(&p->runs[i]);
	ck_assert_uint_le(ran, 2); /* the window: items 0 and 1 */
	free(p);
}
END_TEST

Suite *workpool_suite(void)
{
	Suite *s = suite_create("workpool");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_item_once_in_order);
	tcase_add_test(tc, budget_never_stalls);
	tcase_add_test(tc, thread_count);
	tcase_add_test(tc, finish_early);
	suite_add_tcase(s, tc);
	return s;
}
