/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/snapcache.c - see snapcache.h. A fixed array of slots, replaced round-robin, found
 * through a kt_htab by the text's hash. */
#include "snapcache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/hash.h"
#include "common/base/mem.h"
#include "common/framework/snapshot.h"

struct slot {
    struct kt_hnode hn; /* in c->by_text while text is set */
    uint64_t hash;
    size_t len;
    char *text;   /* owned; NULL = empty slot */
    json_t *root; /* owned; never changed after it is stored, only copied */
};

struct kt_snapcache {
    pthread_mutex_t mu;
    struct slot s[KT_SNAPCACHE_MAX];
    struct kt_htab by_text; /* the slots that hold a text */
    size_t next;            /* the slot the next new text takes */
    size_t hits, misses;
};

static uint64_t slot_hash(const struct kt_hnode *n)
{
    return KT_HNODE_CENTRY(n, struct slot, hn)->hash;
}

struct text_key {
    const char *text;
    size_t len;
    uint64_t hash;
};

static bool slot_eq(const struct kt_hnode *n, const void *key)
{
    const struct slot *s = KT_HNODE_CENTRY(n, struct slot, hn);
    const struct text_key *k = key;
    return s->hash == k->hash && s->len == k->len && memcmp(s->text, k->text, k->len) == 0;
}

struct kt_snapcache *kt_snapcache_new(void)
{
    struct kt_snapcache *c = kt_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    kt_htab_init(&c->by_text, slot_hash, KT_SNAPCACHE_MAX);
    return c;
}

void kt_snapcache_free(struct kt_snapcache *c)
{
    if (!c) {
        return;
    }
    for (size_t i = 0; i < KT_SNAPCACHE_MAX; i++) {
        free(c->s[i].text);
        json_decref(c->s[i].root);
    }
    kt_htab_fini(&c->by_text);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* The slot holding text, or NULL. Under c->mu. */
static struct slot *find(struct kt_snapcache *c, const struct text_key *k)
{
    struct kt_hnode *n = kt_htab_find(&c->by_text, k->hash, slot_eq, k);
    return n ? KT_HNODE_ENTRY(n, struct slot, hn) : NULL;
}

json_t *kt_snapcache_parse(struct kt_snapcache *c, const char *text, struct kt_err *err)
{
    size_t len = strlen(text);
    struct text_key k = {.text = text, .len = len, .hash = kt_fnv64_mem(KT_FNV64_BASIS, text, len)};
    json_t *root;

    pthread_mutex_lock(&c->mu);
    struct slot *s = find(c, &k);
    root = s ? json_deep_copy(s->root) : NULL;
    c->hits += s ? 1 : 0;
    c->misses += s ? 0 : 1;
    pthread_mutex_unlock(&c->mu);
    if (root) {
        return root;
    }
    /* Parsed outside the lock; two workers missing the same text at once both parse it, and
     * the second finds it stored. */
    root = kt_snapshot_parse(text, err);
    if (!root) {
        return NULL;
    }
    json_t *keep = json_deep_copy(root);
    pthread_mutex_lock(&c->mu);
    if (!find(c, &k)) {
        s = &c->s[c->next];
        c->next = (c->next + 1) % KT_SNAPCACHE_MAX;
        if (s->text) {
            kt_htab_unlink(&c->by_text, &s->hn, s->hash);
        }
        free(s->text);
        json_decref(s->root);
        s->hash = k.hash;
        s->len = len;
        s->text = kt_xstrdup(text);
        s->root = keep;
        keep = NULL;
        kt_htab_add(&c->by_text, &s->hn, s->hash);
    }
    pthread_mutex_unlock(&c->mu);
    json_decref(keep);
    return root;
}

void kt_snapcache_stats(struct kt_snapcache *c, size_t *hits, size_t *misses)
{
    pthread_mutex_lock(&c->mu);
    *hits = c->hits;
    *misses = c->misses;
    pthread_mutex_unlock(&c->mu);
}
