/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/queue.h - the de-duplicating, rate-limited work queue
 * (docs/internals/architecture.md#informers-and-the-work-queue).
 *
 * Keys are strings ("ns/name"). Like client-go's workqueue:
 *  - a key waiting in the queue is stored once, however often it is added;
 *  - a key handed to a worker (kt_queue_get) is "processing" until kt_queue_done; adding it
 *    meanwhile marks it dirty and it is queued again at done, so no key is ever held by two
 *    workers at once and no add is lost;
 *  - kt_queue_add_after delays an add (the earliest pending due time wins);
 *  - kt_queue_add_rate_limited delays by a per-key exponential backoff
 *    (base * 2^(failures-1), capped), reset by kt_queue_forget.
 * Thread-safe: one mutex; kt_queue_get blocks on a condition variable. */
#ifndef KT_RECONCILER_QUEUE_H
#define KT_RECONCILER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct kt_queue;

/* A clock in seconds (monotonic). NULL fn = CLOCK_MONOTONIC. */
struct kt_queue_clock {
    double (*now)(void *ctx);
    void *ctx;
};

/* base_s: first backoff delay (upstream 5 ms); max_s: cap (upstream 1000 s). clock may be
 * NULL (real monotonic clock); it is copied. Caller owns the result; free with
 * kt_queue_free(). */
struct kt_queue *kt_queue_new(double base_s, double max_s, const struct kt_queue_clock *clock);
/* Free the queue and every key in it. No thread may be using it. Accepts NULL. */
void kt_queue_free(struct kt_queue *q);

/* Queue key now (copied). Ignored after shutdown. */
void kt_queue_add(struct kt_queue *q, const char *key);
/* Queue key once delay_s has passed (<= 0: now). An earlier pending due time is kept. */
void kt_queue_add_after(struct kt_queue *q, const char *key, double delay_s);
/* Count one failure of key and queue it after its backoff delay. Returns the delay. */
double kt_queue_add_rate_limited(struct kt_queue *q, const char *key);
/* Reset key's failure count. */
void kt_queue_forget(struct kt_queue *q, const char *key);
/* key's failure count. */
unsigned kt_queue_failures(struct kt_queue *q, const char *key);

/* Block until a key is ready (or shutdown); the key is then processing. Returns NULL after
 * kt_queue_shutdown (keys still queued are dropped). Caller owns the result; free with free()
 * after kt_queue_done(q, key). */
char *kt_queue_get(struct kt_queue *q);
/* Like kt_queue_get but returns NULL at once when no key is ready now. */
char *kt_queue_try_get(struct kt_queue *q);
/* The worker finished key; a key added meanwhile is queued again. */
void kt_queue_done(struct kt_queue *q, const char *key);

/* Keys ready to be handed out (the queue depth metric). */
size_t kt_queue_len(struct kt_queue *q);
/* Keys waiting for their delay. */
size_t kt_queue_delayed(struct kt_queue *q);
/* Keys being processed. */
size_t kt_queue_processing(struct kt_queue *q);

/* True when nothing is ready, delayed or processing (read atomically). */
bool kt_queue_idle(struct kt_queue *q);

/* Wake every kt_queue_get (they return NULL); later adds are ignored. Idempotent. */
void kt_queue_shutdown(struct kt_queue *q);

/* The backoff of the n-th failure (n >= 1): min(base * 2^(n-1), max). Pure. */
double kt_queue_backoff(double base_s, double max_s, unsigned n);

#endif
