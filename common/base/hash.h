/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/hash.h - FNV-1a, the one string hash of kt's in-memory tables: the informer's
 * entries and shared strings, the work queue, the applied and snapshot caches, the event
 * de-duplication. In-memory only: nothing stores or sends a value, so the seed may change
 * between releases. The FNV functions are pure, header-only and thread-safe.
 *
 * And kt's one hash table, kt_htab: chained and intrusive. The user embeds a struct kt_hnode
 * in its own struct (no allocation per entry beyond the user's own), keeps or computes each
 * node's hash, and passes the hash and an equality function with its key to each lookup. The
 * table owns only its bucket array; nodes stay the caller's (the table never frees one). Not
 * thread-safe: the caller locks. */
#ifndef KT_HASH_H
#define KT_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KT_FNV64_BASIS 14695981039346656037ull
#define KT_FNV64_PRIME 1099511628211ull
#define KT_FNV32_BASIS 2166136261u
#define KT_FNV32_PRIME 16777619u

/* h continued over n bytes of p (start with KT_FNV64_BASIS). */
static inline uint64_t kt_fnv64_mem(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ s[i]) * KT_FNV64_PRIME;
    }
    return h;
}

/* h continued over the NUL-terminated s. */
static inline uint64_t kt_fnv64_str(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * KT_FNV64_PRIME;
    }
    return h;
}

/* h continued over one byte that no UTF-8 string contains (0xff): a separator between
 * strings hashed one after the other, so ("ab","c") and ("a","bc") differ. */
static inline uint64_t kt_fnv64_sep(uint64_t h)
{
    return (h ^ 0xffu) * KT_FNV64_PRIME;
}

/* The 32-bit hash of n bytes of p, for tables that keep 32-bit hashes per entry. */
static inline uint32_t kt_fnv32_mem(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint32_t h = KT_FNV32_BASIS;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ s[i]) * KT_FNV32_PRIME;
    }
    return h;
}

/* The 32-bit hash of the NUL-terminated s. */
static inline uint32_t kt_fnv32_str(const char *s)
{
    uint32_t h = KT_FNV32_BASIS;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * KT_FNV32_PRIME;
    }
    return h;
}

/* ---- the table ---------------------------------------------------------------------------- */

/* Embedded in the user's struct; KT_HNODE_ENTRY gets the struct back (KT_HNODE_CENTRY from a
 * const node, as a const struct). */
struct kt_hnode {
    struct kt_hnode *next; /* bucket chain */
};

#define KT_HNODE_ENTRY(node, type, member) ((type *)(void *)((char *)(node)-offsetof(type, member)))
#define KT_HNODE_CENTRY(node, type, member)                                                        \
    ((const type *)(const void *)((const char *)(node)-offsetof(type, member)))

/* A node's hash, the one it was inserted with (the table calls it when it grows). */
typedef uint64_t (*kt_hnode_hash_fn)(const struct kt_hnode *n);
/* Whether node n has the lookup key key (the caller's type). */
typedef bool (*kt_hnode_eq_fn)(const struct kt_hnode *n, const void *key);

struct kt_htab {
    struct kt_hnode **b;   /* nb buckets, a power of two; NULL until the first insert */
    size_t nb, n;          /* buckets, nodes */
    size_t min_nb;         /* buckets at the first insert, a power of two */
    kt_hnode_hash_fn hash; /* for rehashing */
};

/* An empty table; no memory until the first insert, which makes min_nb buckets (a power of
 * two; 0 means 16). The table doubles its buckets when it holds as many nodes as buckets. */
void kt_htab_init(struct kt_htab *t, kt_hnode_hash_fn hash, size_t min_nb);
/* Free the bucket array (not the nodes: iterate first to free them); t is empty again. */
void kt_htab_fini(struct kt_htab *t);

/* The node with hash h that eq finds equal to key, or NULL. */
struct kt_hnode *kt_htab_find(const struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq,
                              const void *key);
/* Insert n with hash h; the caller knows no equal node is present. */
void kt_htab_add(struct kt_htab *t, struct kt_hnode *n, uint64_t h);
/* Put n (hash h, equal to key) in place of the node equal to key; returns that node (unlinked,
 * the caller's) or NULL when n is new. */
struct kt_hnode *kt_htab_put(struct kt_htab *t, struct kt_hnode *n, uint64_t h, kt_hnode_eq_fn eq,
                             const void *key);
/* Unlink and return the node with hash h equal to key, or NULL. */
struct kt_hnode *kt_htab_del(struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq, const void *key);
/* Unlink n, which is in t with hash h. */
void kt_htab_unlink(struct kt_htab *t, struct kt_hnode *n, uint64_t h);
/* Unlink every node with hash h that eq finds equal to key, calling done(node, ctx) on each
 * after it is unlinked (done may free it); returns how many. */
size_t kt_htab_del_all(struct kt_htab *t, uint64_t h, kt_hnode_eq_fn eq, const void *key,
                       void (*done)(struct kt_hnode *n, void *ctx), void *ctx);

/* Iteration in no particular order: for (n = kt_hiter_first(&it, t); n; n = kt_hiter_next(&it)).
 * The node returned may be unlinked or freed before the next call; no other change to t. */
struct kt_hiter {
    const struct kt_htab *t;
    size_t i;              /* the bucket of next */
    struct kt_hnode *next; /* the node the next call returns */
};
struct kt_hnode *kt_hiter_first(struct kt_hiter *it, const struct kt_htab *t);
struct kt_hnode *kt_hiter_next(struct kt_hiter *it);

#endif
