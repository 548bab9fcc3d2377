/*
 * An ordered work-ahead pool: worker threads run a job for items 0..n-1, each item once, in
 * increasing order of start, at most a window of items (and a budget of bytes the finished ones
 * hold) ahead of the one consumer, which takes the results strictly in item order. The item the
 * consumer waits for is always allowed to start, so the pool never stalls on its own bounds.
 * What the consumer does with a result therefore never depends on thread timing.
 */
#ifndef MKI_WORKPOOL_H
#define MKI_WORKPOOL_H

#include <stddef.h>
#include <stdint.h>

struct workpool;

struct workpool_spec {
	size_t n;         /* items */
	unsigned threads; /* workers to start (see workpool_threads()) */
	size_t window;    /* items started beyond the last one consumed */
	uint64_t budget;  /* bytes held by finished items not yet consumed, beyond the next one */
	/* Run on a worker: do item `i`, return the bytes its result holds until consumed. */
	uint64_t (*job)(void *arg, size_t i);
	void *arg;
};

/** Workers for `jobs` requested (0: one) and `n` items: at most one per usable CPU, at least 1. */
unsigned workpool_threads(unsigned jobs, size_t n);
/**
 * Start the pool (spec is copied). Returns the number of workers started (> 0) with `*out` set,
 * or -EAGAIN when no thread could be started. Nothing is logged.
 */
int workpool_start(struct workpool **out, const struct workpool_spec *spec);
/** Block until item `i` (the next to consume) is done; its result is then visible to the caller. */
void workpool_wait(struct workpool *p, size_t i);
/** Item `i` is consumed: its bytes leave the budget and later items may start. */
void workpool_done(struct workpool *p, size_t i);
/** Stop starting items, wait for the running ones, join the workers and free the pool. */
void workpool_finish(struct workpool *p);

#endif
