/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/applied.c - see applied.h. A kt_htab whose bucket is chosen by the owner's hash,
 * so that forgetting an owner walks one chain. */
#include "applied.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/hash.h"
#include "common/base/json.h"
#include "common/base/mem.h"

struct node {
    struct kt_hnode hn; /* in the table by owner */
    uint64_t owner, key, content, rv;
    double at; /* when applied (caller's monotonic clock), < 0 = unknown */
};

struct kt_applied {
    pthread_mutex_t mu;
    struct kt_htab t; /* struct node, hashed by owner */
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

static uint64_t node_hash(const struct kt_hnode *n)
{
    return KT_HNODE_CENTRY(n, struct node, hn)->owner;
}

struct node_key {
    uint64_t owner, key;
};

static bool node_eq(const struct kt_hnode *n, const void *key)
{
    const struct node *x = KT_HNODE_CENTRY(n, struct node, hn);
    const struct node_key *k = key;
    return x->owner == k->owner && x->key == k->key;
}

static bool owner_eq(const struct kt_hnode *n, const void *owner)
{
    return KT_HNODE_CENTRY(n, struct node, hn)->owner == *(const uint64_t *)owner;
}

static void node_free(struct kt_hnode *n, void *ctx)
{
    (void)ctx;
    free(KT_HNODE_ENTRY(n, struct node, hn));
}

struct kt_applied *kt_applied_new(void)
{
    struct kt_applied *a = kt_xcalloc(1, sizeof(*a));
    pthread_mutex_init(&a->mu, NULL);
    kt_htab_init(&a->t, node_hash, 64);
    return a;
}

void kt_applied_free(struct kt_applied *a)
{
    struct kt_hiter it;

    if (!a) {
        return;
    }
    for (struct kt_hnode *n = kt_hiter_first(&it, &a->t); n; n = kt_hiter_next(&it)) {
        node_free(n, NULL);
    }
    kt_htab_fini(&a->t);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

/* The node of (owner, key), or NULL. Locked. */
static struct node *find(const struct kt_applied *a, uint64_t owner, uint64_t key)
{
    struct node_key k = {.owner = owner, .key = key};
    struct kt_hnode *n = kt_htab_find(&a->t, owner, node_eq, &k);
    return n ? KT_HNODE_ENTRY(n, struct node, hn) : NULL;
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

bool kt_applied_recent(struct kt_applied *a, const char *owner, const char *obj_key,
                       uint64_t content, double now, double within, double *left)
{
    uint64_t o = kt_applied_hash_str(owner), k = kt_applied_hash_str(obj_key);
    pthread_mutex_lock(&a->mu);
    const struct node *x = find(a, o, k);
    double l = x && x->content == content && x->at >= 0 ? x->at + within - now : 0;
    pthread_mutex_unlock(&a->mu);
    *left = l > 0 ? l : 0;
    return l > 0;
}

void kt_applied_put(struct kt_applied *a, const char *owner, const char *obj_key, uint64_t content,
                    const char *rv)
{
    kt_applied_put_at(a, owner, obj_key, content, rv, -1);
}

void kt_applied_put_at(struct kt_applied *a, const char *owner, const char *obj_key,
                       uint64_t content, const char *rv, double at)
{
    uint64_t o = kt_applied_hash_str(owner), k = kt_applied_hash_str(obj_key);
    uint64_t r = kt_applied_hash_str(rv);
    pthread_mutex_lock(&a->mu);
    struct node *x = find(a, o, k);
    if (!x) {
        x = kt_xmalloc(sizeof(*x));
        x->owner = o;
        x->key = k;
        kt_htab_add(&a->t, &x->hn, o);
    }
    x->content = content;
    x->rv = r;
    x->at = at;
    pthread_mutex_unlock(&a->mu);
}

void kt_applied_forget(struct kt_applied *a, const char *owner)
{
    uint64_t o = kt_applied_hash_str(owner);
    pthread_mutex_lock(&a->mu);
    kt_htab_del_all(&a->t, o, owner_eq, &o, node_free, NULL);
    pthread_mutex_unlock(&a->mu);
}

size_t kt_applied_len(struct kt_applied *a)
{
    pthread_mutex_lock(&a->mu);
    size_t n = a->t.n;
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
