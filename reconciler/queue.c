/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/queue.c - see queue.h. A kt_htab of per-key entries, a FIFO of ready
 * entries and a binary min-heap of delayed ones, all behind one mutex. */
#include "queue.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/hash.h"
#include "common/base/mem.h"

struct entry {
    char *key;
    struct kt_hnode hn;  /* in q->entries */
    struct entry *fnext; /* FIFO link */
    bool dirty;          /* wanted: queued, or to be queued again at done */
    bool processing;     /* held by a worker */
    unsigned failures;
    long heap_idx; /* index in the delay heap, -1 when not delayed */
    double due;
};

struct kt_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct kt_queue_clock clock;
    double base_s, max_s;
    struct kt_htab entries; /* struct entry by key */
    struct entry *fhead, *ftail;
    size_t flen, nprocessing;
    struct entry **heap;
    size_t hlen, hcap;
    bool shutdown;
};

static double mono_now(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_of(const struct kt_queue *q)
{
    return q->clock.now(q->clock.ctx);
}

double kt_queue_backoff(double base_s, double max_s, unsigned n)
{
    if (n == 0) {
        return 0;
    }
    double d = base_s * ldexp(1.0, n > 60 ? 60 : (int)n - 1);
    return d > max_s ? max_s : d;
}

static uint64_t entry_hash(const struct kt_hnode *n)
{
    return kt_fnv64_str(KT_FNV64_BASIS, KT_HNODE_CENTRY(n, struct entry, hn)->key);
}

static bool entry_eq(const struct kt_hnode *n, const void *key)
{
    return strcmp(KT_HNODE_CENTRY(n, struct entry, hn)->key, key) == 0;
}

struct kt_queue *kt_queue_new(double base_s, double max_s, const struct kt_queue_clock *clock)
{
    struct kt_queue *q = kt_xcalloc(1, sizeof(*q));
    pthread_condattr_t ca;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    q->clock.now = clock && clock->now ? clock->now : mono_now;
    q->clock.ctx = clock && clock->now ? clock->ctx : NULL;
    q->base_s = base_s;
    q->max_s = max_s;
    kt_htab_init(&q->entries, entry_hash, 256);
    return q;
}

void kt_queue_free(struct kt_queue *q)
{
    if (!q) {
        return;
    }
    struct kt_hiter it;
    for (struct kt_hnode *n = kt_hiter_first(&it, &q->entries); n; n = kt_hiter_next(&it)) {
        struct entry *e = KT_HNODE_ENTRY(n, struct entry, hn);
        free(e->key);
        free(e);
    }
    kt_htab_fini(&q->entries);
    free(q->heap);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* Whether find adds an entry for a key it does not hold. */
enum find_mode { FIND_ONLY, FIND_OR_ADD };

static struct entry *find(struct kt_queue *q, const char *key, enum find_mode mode)
{
    uint64_t h = kt_fnv64_str(KT_FNV64_BASIS, key);
    struct kt_hnode *n = kt_htab_find(&q->entries, h, entry_eq, key);
    if (n || mode == FIND_ONLY) {
        return n ? KT_HNODE_ENTRY(n, struct entry, hn) : NULL;
    }
    struct entry *e = kt_xcalloc(1, sizeof(*e));
    e->key = kt_xstrdup(key);
    e->heap_idx = -1;
    kt_htab_add(&q->entries, &e->hn, h);
    return e;
}

/* Drop e when nothing refers to it any more. */
static void maybe_drop(struct kt_queue *q, struct entry *e)
{
    if (e->dirty || e->processing || e->heap_idx >= 0 || e->failures > 0) {
        return;
    }
    kt_htab_unlink(&q->entries, &e->hn, kt_fnv64_str(KT_FNV64_BASIS, e->key));
    free(e->key);
    free(e);
}

/* ---- delay heap ---- */

static void heap_swap(struct kt_queue *q, size_t a, size_t b)
{
    struct entry *t = q->heap[a];
    q->heap[a] = q->heap[b];
    q->heap[b] = t;
    q->heap[a]->heap_idx = (long)a;
    q->heap[b]->heap_idx = (long)b;
}

static void heap_up(struct kt_queue *q, size_t i)
{
    while (i > 0 && q->heap[(i - 1) / 2]->due > q->heap[i]->due) {
        heap_swap(q, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(struct kt_queue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->hlen && q->heap[l]->due < q->heap[m]->due) {
            m = l;
        }
        if (r < q->hlen && q->heap[r]->due < q->heap[m]->due) {
            m = r;
        }
        if (m == i) {
            return;
        }
        heap_swap(q, i, m);
        i = m;
    }
}

static void heap_push(struct kt_queue *q, struct entry *e)
{
    if (q->hlen == q->hcap) {
        q->hcap = q->hcap ? q->hcap * 2 : 16;
        q->heap = kt_xrealloc(q->heap, q->hcap * sizeof(*q->heap));
    }
    q->heap[q->hlen] = e;
    e->heap_idx = (long)q->hlen++;
    heap_up(q, q->hlen - 1);
}

static struct entry *heap_pop(struct kt_queue *q)
{
    struct entry *top = q->heap[0];
    heap_swap(q, 0, q->hlen - 1);
    q->hlen--;
    top->heap_idx = -1;
    if (q->hlen > 0) {
        heap_down(q, 0);
    }
    return top;
}

/* ---- adds ---- */

static void fifo_push(struct kt_queue *q, struct entry *e)
{
    e->fnext = NULL;
    if (q->ftail) {
        q->ftail->fnext = e;
    } else {
        q->fhead = e;
    }
    q->ftail = e;
    q->flen++;
    pthread_cond_signal(&q->cv);
}

static void add_locked(struct kt_queue *q, struct entry *e)
{
    if (e->dirty) {
        return;
    }
    e->dirty = true;
    if (!e->processing) {
        fifo_push(q, e);
    }
}

void kt_queue_add(struct kt_queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    if (!q->shutdown) {
        add_locked(q, find(q, key, FIND_OR_ADD));
    }
    pthread_mutex_unlock(&q->mu);
}

static void add_after_locked(struct kt_queue *q, struct entry *e, double delay_s)
{
    if (delay_s <= 0) {
        add_locked(q, e);
        return;
    }
    double due = now_of(q) + delay_s;
    if (e->heap_idx >= 0) {
        if (e->due <= due) {
            return;
        }
        e->due = due;
        heap_up(q, (size_t)e->heap_idx);
    } else {
        e->due = due;
        heap_push(q, e);
    }
    pthread_cond_broadcast(&q->cv); /* a waiter may have to wake earlier */
}

void kt_queue_add_after(struct kt_queue *q, const char *key, double delay_s)
{
    pthread_mutex_lock(&q->mu);
    if (!q->shutdown) {
        add_after_locked(q, find(q, key, FIND_OR_ADD), delay_s);
    }
    pthread_mutex_unlock(&q->mu);
}

double kt_queue_add_rate_limited(struct kt_queue *q, const char *key)
{
    double d = 0;
    pthread_mutex_lock(&q->mu);
    if (!q->shutdown) {
        struct entry *e = find(q, key, FIND_OR_ADD);
        e->failures++;
        d = kt_queue_backoff(q->base_s, q->max_s, e->failures);
        add_after_locked(q, e, d);
    }
    pthread_mutex_unlock(&q->mu);
    return d;
}

void kt_queue_forget(struct kt_queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    struct entry *e = find(q, key, FIND_ONLY);
    if (e) {
        e->failures = 0;
        maybe_drop(q, e);
    }
    pthread_mutex_unlock(&q->mu);
}

unsigned kt_queue_failures(struct kt_queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    struct entry *e = find(q, key, FIND_ONLY);
    unsigned n = e ? e->failures : 0;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* ---- gets ---- */

/* Move every due delayed entry to the FIFO; returns the next due time or INFINITY. */
static double promote_due(struct kt_queue *q)
{
    double now = now_of(q);
    while (q->hlen > 0 && q->heap[0]->due <= now) {
        struct entry *e = heap_pop(q);
        add_locked(q, e);
        maybe_drop(q, e);
    }
    return q->hlen > 0 ? q->heap[0]->due : INFINITY;
}

static char *take_locked(struct kt_queue *q)
{
    struct entry *e = q->fhead;
    q->fhead = e->fnext;
    if (!q->fhead) {
        q->ftail = NULL;
    }
    q->flen--;
    e->dirty = false;
    e->processing = true;
    q->nprocessing++;
    return kt_xstrdup(e->key);
}

static void wait_until(struct kt_queue *q, double due)
{
    if (isinf(due)) {
        pthread_cond_wait(&q->cv, &q->mu);
        return;
    }
    /* The heap uses the injected clock; waits use the real one, bounded so a fake clock that
     * moves is noticed within 100 ms. */
    double d = due - now_of(q);
    d = d < 0 ? 0 : (d > 0.1 && q->clock.now != mono_now ? 0.1 : d);
    double t = mono_now(NULL) + d;
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};
    pthread_cond_timedwait(&q->cv, &q->mu, &ts);
}

char *kt_queue_get(struct kt_queue *q)
{
    char *key = NULL;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (q->shutdown) {
            break;
        }
        double due = promote_due(q);
        if (q->fhead) {
            key = take_locked(q);
            break;
        }
        wait_until(q, due);
    }
    pthread_mutex_unlock(&q->mu);
    return key;
}

char *kt_queue_try_get(struct kt_queue *q)
{
    char *key = NULL;
    pthread_mutex_lock(&q->mu);
    if (!q->shutdown) {
        promote_due(q);
        if (q->fhead) {
            key = take_locked(q);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return key;
}

void kt_queue_done(struct kt_queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    struct entry *e = find(q, key, FIND_ONLY);
    if (e && e->processing) {
        e->processing = false;
        q->nprocessing--;
        if (e->dirty && !q->shutdown) {
            fifo_push(q, e);
        }
        maybe_drop(q, e);
    }
    pthread_mutex_unlock(&q->mu);
}

size_t kt_queue_len(struct kt_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->flen;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t kt_queue_delayed(struct kt_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->hlen;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t kt_queue_processing(struct kt_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->nprocessing;
    pthread_mutex_unlock(&q->mu);
    return n;
}

bool kt_queue_idle(struct kt_queue *q)
{
    pthread_mutex_lock(&q->mu);
    bool idle = q->flen == 0 && q->hlen == 0 && q->nprocessing == 0;
    pthread_mutex_unlock(&q->mu);
    return idle;
}

void kt_queue_shutdown(struct kt_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}
