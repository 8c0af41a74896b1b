/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/hash.c - see hash.h: the chained, intrusive table. */
#include "hash.h"

#include <stdlib.h>

#include "mem.h"

void kt_htab_init(struct kt_htab *t, kt_hnode_hash_fn hash, size_t min_nb)
{
    *t = (struct kt_htab){.min_nb = min_nb ? min_nb : 16, .hash = hash};
}

void kt_htab_fini(struct kt_htab *t)
{
    free(t->b);
    t->b = NULL;
    t->nb = 0;
    t->n = 0;
}

static size_t bucket(const struct kt_htab *t, uint64_t h)
{
    return (size_t)(h & (t->nb - 1));
}

/* The link that points at the node equal to key (or the NULL link ending its chain); NULL
 * when t has no buckets yet. */
static struct kt_hnode **slot(const struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq,
                              const void *key)
{
    struct kt_hnode **p;

    if (t->nb == 0) {
        return NULL;
    }
    for (p = &t->b[bucket(t, h)]; *p; p = &(*p)->next) {
        if (eq(*p, key)) {
            break;
        }
    }
    return p;
}

static void grow(struct kt_htab *t)
{
    size_t nb = t->nb ? t->nb * 2 : t->min_nb;
    struct kt_hnode **b = kt_xcalloc(nb, sizeof(*b));

    for (size_t i = 0; i < t->nb; i++) {
        struct kt_hnode *x = t->b[i], *next;
        for (; x; x = next) {
            size_t j = (size_t)(t->hash(x) & (nb - 1));
            next = x->next;
            x->next = b[j];
            b[j] = x;
        }
    }
    free(t->b);
    t->b = b;
    t->nb = nb;
}

struct kt_hnode *kt_htab_find(const struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq,
                              const void *key)
{
    struct kt_hnode **p = slot(t, h, eq, key);
    return p ? *p : NULL;
}

void kt_htab_add(struct kt_htab *t, struct kt_hnode *n, uint64_t h)
{
    if (t->n >= t->nb) {
        grow(t);
    }
    n->next = t->b[bucket(t, h)];
    t->b[bucket(t, h)] = n;
    t->n++;
}

struct kt_hnode *kt_htab_put(struct kt_htab *t, struct kt_hnode *n, uint64_t h, kt_hnode_eq_fn eq,
                             const void *key)
{
    struct kt_hnode **p, *old;

    if (t->n >= t->nb) {
        grow(t);
    }
    p = slot(t, h, eq, key);
    old = *p;
    n->next = old ? old->next : NULL;
    *p = n;
    if (!old) {
        t->n++;
    }
    return old;
}

struct kt_hnode *kt_htab_del(struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq, const void *key)
{
    struct kt_hnode **p = slot(t, h, eq, key), *old = p ? *p : NULL;

    if (old) {
        *p = old->next;
        t->n--;
    }
    return old;
}

void kt_htab_unlink(struct kt_htab *t, struct kt_hnode *n, uint64_t h)
{
    struct kt_hnode **p = &t->b[bucket(t, h)];

    while (*p != n) {
        p = &(*p)->next;
    }
    *p = n->next;
    n->next = NULL;
    t->n--;
}

size_t kt_htab_del_all(struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq, const void *key,
                       void (*done)(struct kt_hnode *n, void *ctx), void *ctx)
{
    size_t count = 0;

    if (t->nb == 0) {
        return 0;
    }
    for (struct kt_hnode **p = &t->b[bucket(t, h)]; *p;) {
        struct kt_hnode *x = *p;
        if (!eq(x, key)) {
            p = &x->next;
            continue;
        }
        *p = x->next;
        t->n--;
        count++;
        if (done) {
            done(x, ctx);
        }
    }
    return count;
}

/* The first node at or after bucket it->i, or NULL. */
static struct kt_hnode *scan(struct kt_hiter *it)
{
    for (; it->i < it->t->nb; it->i++) {
        if (it->t->b[it->i]) {
            return it->t->b[it->i];
        }
    }
    return NULL;
}

struct kt_hnode *kt_hiter_first(struct kt_hiter *it, const struct kt_htab *t)
{
    it->t = t;
    it->i = 0;
    it->next = scan(it);
    return kt_hiter_next(it);
}

struct kt_hnode *kt_hiter_next(struct kt_hiter *it)
{
    struct kt_hnode *n = it->next;

    if (!n) {
        return NULL;
    }
    if (n->next) {
        it->next = n->next;
    } else {
        it->i++;
        it->next = scan(it);
    }
    return n;
}
