/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_thread_queue.c - reconciler/queue.c: de-duplication, the
 * processing/dirty rule, delays and per-key backoff on an injected clock, shutdown, and many
 * producers and workers at once (run under TSan too, hence "thread" in the name): no key is
 * held by two workers at once and no add is lost. The queue is compiled in directly because
 * reconciler/ is not part of libkt.a. */
#include "tests/test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/base/mem.h"
#include "reconciler/queue.c"

struct fake_clock {
    double t;
};

static double fake_now(void *ctx)
{
    return ((struct fake_clock *)ctx)->t;
}

static void check_get(struct kt_queue *q, const char *want)
{
    char *k = kt_queue_try_get(q);
    if (want) {
        CHECK_EQ_STR(k, want);
        if (k) {
            kt_queue_done(q, k);
        }
    } else {
        CHECK(k == NULL);
    }
    free(k);
}

static void test_dedup(void)
{
    struct kt_queue *q = kt_queue_new(1, 100, NULL);
    kt_queue_add(q, "ns/a");
    kt_queue_add(q, "ns/a");
    kt_queue_add(q, "ns/b");
    kt_queue_add(q, "ns/a");
    CHECK_EQ_INT(kt_queue_len(q), 2);
    check_get(q, "ns/a");
    check_get(q, "ns/b");
    check_get(q, NULL);
    CHECK_EQ_INT(kt_queue_len(q), 0);
    kt_queue_free(q);
}

static void test_processing(void)
{
    struct kt_queue *q = kt_queue_new(1, 100, NULL);
    kt_queue_add(q, "k");
    char *k = kt_queue_try_get(q);
    CHECK_EQ_STR(k, "k");
    kt_queue_add(q, "k"); /* while processing: not handed out again */
    kt_queue_add(q, "k");
    CHECK_EQ_INT(kt_queue_len(q), 0);
    CHECK_EQ_INT(kt_queue_processing(q), 1);
    check_get(q, NULL);
    kt_queue_done(q, k);
    free(k);
    CHECK_EQ_INT(kt_queue_len(q), 1); /* the add made meanwhile is not lost */
    check_get(q, "k");
    check_get(q, NULL);
    kt_queue_done(q, "never-taken"); /* harmless */
    CHECK_EQ_INT(kt_queue_processing(q), 0);
    kt_queue_free(q);
}

static void test_delays(void)
{
    struct fake_clock fc = {1000};
    struct kt_queue_clock clk = {fake_now, &fc};
    struct kt_queue *q = kt_queue_new(1, 100, &clk);
    kt_queue_add_after(q, "x", 10);
    CHECK_EQ_INT(kt_queue_len(q), 0);
    CHECK_EQ_INT(kt_queue_delayed(q), 1);
    fc.t = 1009.5;
    check_get(q, NULL);
    fc.t = 1010;
    check_get(q, "x");
    /* an earlier due time wins, a later one does not postpone */
    kt_queue_add_after(q, "y", 10);
    kt_queue_add_after(q, "y", 5);
    kt_queue_add_after(q, "z", 5);
    kt_queue_add_after(q, "z", 10);
    CHECK_EQ_INT(kt_queue_delayed(q), 2);
    fc.t = 1015;
    CHECK_EQ_INT(kt_queue_len(q), 0);
    check_get(q, "y");
    check_get(q, "z");
    check_get(q, NULL);
    CHECK_EQ_INT(kt_queue_delayed(q), 0);
    /* zero and negative delays are immediate */
    kt_queue_add_after(q, "now", 0);
    kt_queue_add_after(q, "neg", -3);
    CHECK_EQ_INT(kt_queue_len(q), 2);
    check_get(q, "now");
    check_get(q, "neg");
    kt_queue_free(q);
}

static void test_backoff(void)
{
    struct fake_clock fc = {0};
    struct kt_queue_clock clk = {fake_now, &fc};
    struct kt_queue *q = kt_queue_new(1, 8, &clk);
    CHECK(kt_queue_backoff(0.005, 1000, 1) == 0.005);
    CHECK(kt_queue_backoff(0.005, 1000, 3) == 0.02);
    CHECK(kt_queue_backoff(0.005, 1000, 40) == 1000);
    CHECK(kt_queue_backoff(1, 8, 0) == 0);
    CHECK(kt_queue_add_rate_limited(q, "f") == 1);
    fc.t = 1;
    check_get(q, "f");
    CHECK(kt_queue_add_rate_limited(q, "f") == 2);
    CHECK(kt_queue_add_rate_limited(q, "f") == 4); /* pending due (t=3) kept: earlier */
    CHECK_EQ_INT(kt_queue_failures(q, "f"), 3);
    fc.t = 2.9;
    check_get(q, NULL);
    fc.t = 3;
    check_get(q, "f");
    CHECK(kt_queue_add_rate_limited(q, "f") == 8);
    CHECK(kt_queue_add_rate_limited(q, "f") == 8); /* capped */
    kt_queue_forget(q, "f");
    CHECK_EQ_INT(kt_queue_failures(q, "f"), 0);
    CHECK_EQ_INT(kt_queue_failures(q, "unknown"), 0);
    CHECK(kt_queue_add_rate_limited(q, "f") == 1);
    kt_queue_free(q);
}

static void test_shutdown(void)
{
    struct kt_queue *q = kt_queue_new(1, 100, NULL);
    kt_queue_add(q, "a");
    kt_queue_shutdown(q);
    kt_queue_shutdown(q);
    CHECK(kt_queue_get(q) == NULL);
    kt_queue_add(q, "b");
    kt_queue_add_after(q, "c", 1);
    CHECK(kt_queue_add_rate_limited(q, "d") == 0);
    CHECK(kt_queue_try_get(q) == NULL);
    kt_queue_free(q);
    kt_queue_free(NULL);
}

static void test_many_keys(void)
{
    struct kt_queue *q = kt_queue_new(1, 100, NULL);
    char key[32];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 5000; i++) {
            snprintf(key, sizeof(key), "ns/k%d", i);
            kt_queue_add(q, key);
        }
    }
    CHECK_EQ_INT(kt_queue_len(q), 5000);
    int n = 0;
    char *k;
    while ((k = kt_queue_try_get(q)) != NULL) {
        kt_queue_done(q, k);
        free(k);
        n++;
    }
    CHECK_EQ_INT(n, 5000);
    kt_queue_free(q);
}

/* ---- concurrency ---- */

#define NKEYS 64
#define NPRODUCERS 4
#define NWORKERS 8
#define ROUNDS 300

struct shared {
    struct kt_queue *q;
    atomic_int in_flight[NKEYS];
    atomic_int version[NKEYS]; /* bumped by producers before each add */
    atomic_int seen[NKEYS];    /* the version a worker saw when it started on the key */
    atomic_int overlaps;
    atomic_int processed;
};

static void *producer(void *arg)
{
    struct shared *s = arg;
    char key[16];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < NKEYS; i++) {
            atomic_fetch_add(&s->version[i], 1);
            snprintf(key, sizeof(key), "k%d", i);
            kt_queue_add(s->q, key);
        }
    }
    return NULL;
}

static void *worker(void *arg)
{
    struct shared *s = arg;
    char *k;
    while ((k = kt_queue_get(s->q)) != NULL) {
        int i = (int)strtol(k + 1, NULL, 10);
        if (atomic_fetch_add(&s->in_flight[i], 1) != 0) {
            atomic_fetch_add(&s->overlaps, 1);
        }
        atomic_store(&s->seen[i], atomic_load(&s->version[i]));
        sched_yield();
        atomic_fetch_sub(&s->in_flight[i], 1);
        atomic_fetch_add(&s->processed, 1);
        kt_queue_done(s->q, k);
        free(k);
    }
    return NULL;
}

static void test_concurrent(void)
{
    static struct shared s;
    pthread_t p[NPRODUCERS], w[NWORKERS];
    s.q = kt_queue_new(0.001, 1, NULL);
    for (int i = 0; i < NWORKERS; i++) {
        pthread_create(&w[i], NULL, worker, &s);
    }
    for (int i = 0; i < NPRODUCERS; i++) {
        pthread_create(&p[i], NULL, producer, &s);
    }
    for (int i = 0; i < NPRODUCERS; i++) {
        pthread_join(p[i], NULL);
    }
    /* drain: every add is followed by a processing that started after it */
    while (!kt_queue_idle(s.q)) {
        sched_yield();
    }
    kt_queue_shutdown(s.q);
    for (int i = 0; i < NWORKERS; i++) {
        pthread_join(w[i], NULL);
    }
    CHECK_EQ_INT(atomic_load(&s.overlaps), 0);
    int stale = 0;
    for (int i = 0; i < NKEYS; i++) {
        stale += atomic_load(&s.seen[i]) != NPRODUCERS * ROUNDS;
    }
    CHECK_EQ_INT(stale, 0);
    CHECK(atomic_load(&s.processed) >= NKEYS);
    CHECK(atomic_load(&s.processed) <= NKEYS * ROUNDS * NPRODUCERS);
    kt_queue_free(s.q);
}

int main(void)
{
    kt_mem_init();
    test_dedup();
    test_processing();
    test_delays();
    test_backoff();
    test_shutdown();
    test_many_keys();
    test_concurrent();
    return test_report();
}
