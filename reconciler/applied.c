/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/applied.c - see applied.h. A chained hash table whose bucket is chosen by the
 * owner's hash, so that forgetting an owner walks one chain. */
#include "applied.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/hash.h"
#include "common/base/json.h"
#include "common/base/mem.h"

struct node {
    struct node *next;
    uint64_t owner, key, content, rv;
};

struct kt_applied {
    pthread_mutex_t mu;
    struct node **b; /* nb buckets, a power of two */
    size_t nb, n;
};

uint64_t kt_applied_hash_str(const char *s)
{
    return kt_fnv64_str(KT_FNV64_BASIS, s);
}

uint64_t kt_applied_hash_obj(const json_t *obj)
{
    char *text = kt_json_dump(obj);
    uint64_t h = kt_applied_hash_str(text);
    free(text);
    return h;
}

struct kt_applied *kt_applied_new(void)
{
    struct kt_applied *a = kt_xcalloc(1, sizeof(*a));
    pthread_mutex_init(&a->mu, NULL);
    return a;
}

void kt_applied_free(struct kt_applied *a)
{
    if (!a) {
        return;
    }
    for (size_t i = 0; i < a->nb; i++) {
        struct node *x = a->b[i], *next;
        for (; x; x = next) {
            next = x->next;
            free(x);
        }
    }
    free(a->b);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

static void grow(struct kt_applied *a)
{
    size_t nb = a->nb ? a->nb * 2 : 64;
    struct node **b = kt_xcalloc(nb, sizeof(*b));
    for (size_t i = 0; i < a->nb; i++) {
        struct node *x = a->b[i], *next;
        for (; x; x = next) {
            next = x->next;
            x->next = b[x->owner & (nb - 1)];
            b[x->owner & (nb - 1)] = x;
        }
    }
    free(a->b);
    a->b = b;
    a->nb = nb;
}

/* The node of (owner, key), or NULL. Locked. */
static struct node *find(const struct kt_applied *a, uint64_t owner, uint64_t key)
{
    if (a->nb == 0) {
        return NULL;
    }
    for (struct node *x = a->b[owner & (a->nb - 1)]; x; x = x->next) {
        if (x->owner == owner && x->key == key) {
            return x;
        }
    }
    return NULL;
}

bool kt_applied_same(struct kt_applied *a, const char *owner, const char *obj_key, uint64_t content,
                     const char *rv)
{
    uint64_t o = kt_applied_hash_str(owner), k = kt_applied_hash_str(obj_key);
    uint64_t r = kt_applied_hash_str(rv);
    pthread_mutex_lock(&a->mu);
    const struct node *x = find(a, o, k);
    bool same = x && *rv && x->content == content && x->rv == r;
    pthread_mutex_unlock(&a->mu);
    return same;
}

void kt_applied_put(struct kt_applied *a, const char *owner, const char *obj_key, uint64_t content,
                    const char *rv)
{
    uint64_t o = kt_applied_hash_str(owner), k = kt_applied_hash_str(obj_key);
    uint64_t r = kt_applied_hash_str(rv);
    pthread_mutex_lock(&a->mu);
    struct node *x = find(a, o, k);
    if (!x) {
        if (a->n >= a->nb) {
            grow(a);
        }
        x = kt_xmalloc(sizeof(*x));
        x->owner = o;
        x->key = k;
        x->next = a->b[o & (a->nb - 1)];
        a->b[o & (a->nb - 1)] = x;
        a->n++;
    }
    x->content = content;
    x->rv = r;
    pthread_mutex_unlock(&a->mu);
}

void kt_applied_forget(struct kt_applied *a, const char *owner)
{
    uint64_t o = kt_applied_hash_str(owner);
    pthread_mutex_lock(&a->mu);
    if (a->nb > 0) {
        struct node **p = &a->b[o & (a->nb - 1)];
        while (*p) {
            struct node *x = *p;
            if (x->owner == o) {
                *p = x->next;
                free(x);
                a->n--;
            } else {
                p = &x->next;
            }
        }
    }
    pthread_mutex_unlock(&a->mu);
}

size_t kt_applied_len(struct kt_applied *a)
{
    pthread_mutex_lock(&a->mu);
    size_t n = a->n;
    pthread_mutex_unlock(&a->mu);
    return n;
}

/* A reserved object key no applied object has ("|" never starts an apiVersion). */
static char *finished_key(const char *uid)
{
    return kt_xasprintf("|finished|%s", uid);
}

void kt_applied_mark_finished(struct kt_applied *a, const char *owner, const char *uid)
{
    char *k = finished_key(uid);
    kt_applied_put(a, owner, k, 0, "finished");
    free(k);
}

bool kt_applied_finished(struct kt_applied *a, const char *owner, const char *uid)
{
    char *k = finished_key(uid);
    bool seen = kt_applied_same(a, owner, k, 0, "finished");
    free(k);
    return seen;
}
