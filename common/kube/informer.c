/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/informer.c - list+watch stores driven by one thread (curl multi).
 *
 * Each informer is a small state machine: LIST (blocking, paged) -> WATCH (streamed through the
 * loop's multi handle) -> WATCH again from the last resourceVersion, relisting on 410 Gone and
 * backing off with jitter after failures. An informer restricted to listed namespaces runs
 * that state machine once per namespace (a source), all feeding one store. The store is a
 * hash table keyed "ns/name" under a mutex; handlers run outside the lock.
 *
 * Objects are stored as their compact JSON text, not as jansson trees: a parsed object costs
 * five to eight times its text (a node, a hash table and a key copy per member, a value per
 * leaf, malloc's header on each), so 1,000 TrainJobs with their JobSets and snapshots took
 * ~16 MB as trees and ~4 MB as text (tests/bench/bench_reconcile.sh). Readers get a fresh
 * parse, which costs about what the deep copy they got before did. Only the loop thread
 * writes the table, so it reads it without the lock; other threads take the lock. */
#include "common/kube/informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/hash.h"
#include "common/base/json.h"
#include "common/kube/kube_internal.h"
#include "common/base/log.h"
#include "common/base/mem.h"

#define BACKOFF_MIN_S 0.2
#define BACKOFF_MAX_S 30.0

enum state { ST_LIST, ST_WATCH, ST_WATCHING, ST_BACKOFF };

/* One LIST+WATCH stream feeding an informer's store: every namespace (or cluster scope), or
 * one namespace of kt_informer_opts.namespaces. Loop-thread state. */
struct src {
    struct kt_informer *inf; /* the owner */
    char *ns;                /* NULL = all namespaces / cluster scope */
    bool listed;             /* its first LIST has been delivered */
    enum state state;
    bool need_list;   /* after BACKOFF: LIST (true) or WATCH */
    double next_at;   /* BACKOFF end, monotonic seconds */
    double backoff_s; /* next backoff base */
    char *rv;         /* resourceVersion to watch from */
    CURL *easy;       /* the watch connection (kept alive between watches) */
    struct kt__kube_stream stream;
    char *path;    /* the watch path+query while watching */
    char why[256]; /* guarded by inf->lock (as is listed's change): the failure that keeps
                      the first LIST from completing, "" when none */
};

/* A long string value shared by the stored objects that carry it (a runtime snapshot's text
 * is the same in every TrainJob's ConfigMap): objects hold it once, by reference. */
struct blob {
    struct kt_hnode node; /* in inf->blobs */
    uint32_t hash;
    uint32_t refs; /* entries that hold it; loop thread only */
    size_t len;
    char data[]; /* len bytes and a NUL */
};

#define BLOB_MIN 512 /* shorter strings stay inline */

/* One stored object: key, resourceVersion and compact JSON text in one allocation. Each long
 * string of the object is a blob; in the text it is "\u0000" and its index in blobs (no
 * stored string holds a NUL: kt_json_parse rejects them). */
struct entry {
    struct kt_hnode node; /* in inf->store */
    struct blob **blobs;  /* n_blobs references, or NULL */
    uint32_t n_blobs;
    uint32_t hash;
    uint32_t mark;     /* the last LIST that returned it (replace_done) */
    uint32_t rv_off;   /* data + rv_off: the resourceVersion */
    uint32_t text_off; /* data + text_off: the object */
    size_t text_len;
    char data[]; /* key NUL rv NUL text NUL */
};

/* The per-object overhead the scale figures count: the table's node adds nothing to it. */
_Static_assert(sizeof(void *) != 8 || (sizeof(struct entry) == 48 && sizeof(struct blob) == 24),
               "informer entry or blob grew");

struct kt_informer {
    struct kt_kube_gvr gvr;
    char *label_selector;
    char *field_selector;
    long page_size;
    long watch_timeout_s;
    bool strip_managed_fields;
    json_t *(*transform)(json_t *obj, void *ud);
    void *transform_ud;
    const struct kt_json_cut_rule *cut; /* the opts' rule list; borrowed (static) */
    /* cut merged with the config's managedFields rule by kt_informer_loop_add, once, for
     * every LIST and watch (kt__kube_cut_rules): points into rules_room or is NULL (none). */
    const struct kt_json_cut_rule *rules;
    struct kt_json_cut_rule rules_room[KT__KUBE_CUT_ROOM];
    struct kt_informer_handlers h;

    pthread_mutex_t lock;  /* guards store against the loop thread's writes */
    struct kt_htab store;  /* "ns/name" -> struct entry */
    struct kt_htab blobs;  /* loop thread: the long strings the entries share, struct blob */
    struct kt_buf scratch; /* loop thread: serialising an object */
    uint32_t list_mark;    /* loop thread: counts LISTs, marks what each returned */
    atomic_bool synced;    /* every source has listed */
    atomic_ulong n_lists, n_relists_gone, n_watches, n_watch_ends, n_failures;

    struct src *srcs; /* owned; one per namespace, or one for all */
    size_t n_srcs;
    size_t n_listed; /* sources that have listed (loop thread) */
};

struct kt_informer_loop {
    struct kt_kube_config *cfg;
    struct kt_kube_client *client; /* for LISTs */
    CURLM *multi;
    struct src **srcs; /* every source of every informer added */
    size_t n;
    atomic_int stop;
    uint64_t rng;
};

static char *dup_or_null(const char *s)
{
    return s && *s ? kt_xstrdup(s) : NULL;
}

static void src_init(struct src *sr, struct kt_informer *inf, const char *ns)
{
    sr->inf = inf;
    sr->ns = dup_or_null(ns);
    sr->state = ST_LIST;
    sr->backoff_s = BACKOFF_MIN_S;
}

/* ---- the table ------------------------------------------------------------------------- */

static uint64_t entry_hash(const struct kt_hnode *n)
{
    return KT_HNODE_CENTRY(n, struct entry, node)->hash;
}

struct entry_key {
    const char *key;
    uint32_t hash;
};

static bool entry_eq(const struct kt_hnode *n, const void *key)
{
    const struct entry *e = KT_HNODE_CENTRY(n, struct entry, node);
    const struct entry_key *k = key;
    return e->hash == k->hash && strcmp(e->data, k->key) == 0;
}

static struct entry *table_get(const struct kt_htab *t, const char *key)
{
    struct entry_key k = {.key = key, .hash = kt_fnv32_str(key)};
    struct kt_hnode *n = kt_htab_find(t, k.hash, entry_eq, &k);
    return n ? KT_HNODE_ENTRY(n, struct entry, node) : NULL;
}

/* Put e (owned by the table from now on) in place of the entry with its key; returns that
 * entry (the caller's now) or NULL. */
static struct entry *table_put(struct kt_htab *t, struct entry *e)
{
    struct entry_key k = {.key = e->data, .hash = e->hash};
    struct kt_hnode *old = kt_htab_put(t, &e->node, e->hash, entry_eq, &k);
    return old ? KT_HNODE_ENTRY(old, struct entry, node) : NULL;
}

/* Unlink key's entry; returns it (the caller's now) or NULL. */
static struct entry *table_del(struct kt_htab *t, const char *key)
{
    struct entry_key k = {.key = key, .hash = kt_fnv32_str(key)};
    struct kt_hnode *old = kt_htab_del(t, k.hash, entry_eq, &k);
    return old ? KT_HNODE_ENTRY(old, struct entry, node) : NULL;
}

/* ---- shared long strings ---------------------------------------------------------------- */

static uint64_t blob_hash(const struct kt_hnode *n)
{
    return KT_HNODE_CENTRY(n, struct blob, node)->hash;
}

struct blob_key {
    const char *s;
    size_t len;
    uint32_t hash;
};

static bool blob_eq(const struct kt_hnode *n, const void *key)
{
    const struct blob *x = KT_HNODE_CENTRY(n, struct blob, node);
    const struct blob_key *k = key;
    return x->hash == k->hash && x->len == k->len && memcmp(x->data, k->s, k->len) == 0;
}

/* A reference to the blob holding s[0..n) (made when new). */
static struct blob *blob_ref(struct kt_htab *t, const char *s, size_t n)
{
    struct blob_key k = {.s = s, .len = n, .hash = kt_fnv32_mem(s, n)};
    struct kt_hnode *found = kt_htab_find(t, k.hash, blob_eq, &k);
    struct blob *x;

    if (found) {
        x = KT_HNODE_ENTRY(found, struct blob, node);
        x->refs++;
        return x;
    }
    x = kt_xmalloc(sizeof(*x) + n + 1);
    x->hash = k.hash;
    x->refs = 1;
    x->len = n;
    memcpy(x->data, s, n);
    x->data[n] = '\0';
    kt_htab_add(t, &x->node, x->hash);
    return x;
}

static void blob_unref(struct kt_htab *t, struct blob *x)
{
    if (--x->refs > 0) {
        return;
    }
    kt_htab_unlink(t, &x->node, x->hash);
    free(x);
}

/* Free e (unlinked) and drop its blob references. Loop thread. */
static void entry_free(struct kt_htab *t, struct entry *e)
{
    if (!e) {
        return;
    }
    for (uint32_t i = 0; i < e->n_blobs; i++) {
        blob_unref(t, e->blobs[i]);
    }
    free(e->blobs);
    free(e);
}

static void table_clear(struct kt_htab *t, struct kt_htab *bl)
{
    struct kt_hiter it;

    for (struct kt_hnode *n = kt_hiter_first(&it, t); n; n = kt_hiter_next(&it)) {
        entry_free(bl, KT_HNODE_ENTRY(n, struct entry, node));
    }
    kt_htab_fini(t);
    kt_htab_fini(bl);
}

static bool has_long_string(json_t *v)
{
    const char *k;
    json_t *m;
    size_t i;

    if (json_is_string(v)) {
        return json_string_length(v) >= BLOB_MIN;
    }
    json_object_foreach(v, k, m)
    {
        if (has_long_string(m)) {
            return true;
        }
    }
    json_array_foreach(v, i, m)
    {
        if (has_long_string(m)) {
            return true;
        }
    }
    return false;
}

/* The placeholder of blob number i: a NUL then i in decimal. */
static json_t *blob_mark(uint32_t i)
{
    char buf[16];
    int n = snprintf(buf + 1, sizeof(buf) - 1, "%u", (unsigned)i);

    buf[0] = '\0';
    return json_stringn_nocheck(buf, (size_t)n + 1);
}

/* The long strings of m, a member of a private copy, into blobs (recursively); returns the
 * placeholder to put in m's place, or NULL to keep m. */
static json_t *swap_out(struct kt_htab *t, json_t *m, struct kt_buf *refs)
{
    const char *k;
    json_t *c;
    size_t i;

    if (json_is_string(m)) {
        if (json_string_length(m) < BLOB_MIN) {
            return NULL;
        }
        struct blob *x = blob_ref(t, json_string_value(m), json_string_length(m));
        KT_ASSERT(kt_buf_append(refs, &x, sizeof(x), NULL) == 0);
        return blob_mark((uint32_t)(refs->len / sizeof(x) - 1));
    }
    json_object_foreach(m, k, c)
    {
        json_t *r = swap_out(t, c, refs);
        if (r) {
            json_object_set_new(m, k, r); /* replaces in place: the iteration goes on */
        }
    }
    json_array_foreach(m, i, c)
    {
        json_t *r = swap_out(t, c, refs);
        if (r) {
            json_array_set_new(m, i, r);
        }
    }
    return NULL;
}

/* Put the blobs of e back in place of their placeholders in v (parsed from e's text). */
static json_t *swap_in(const struct entry *e, json_t *m)
{
    const char *k;
    json_t *c;
    size_t i;

    if (json_is_string(m)) {
        const char *s = json_string_value(m);
        if (json_string_length(m) < 2 || s[0] != '\0') {
            return NULL;
        }
        unsigned long n = strtoul(s + 1, NULL, 10);
        KT_ASSERT(n < e->n_blobs);
        return json_stringn_nocheck(e->blobs[n]->data, e->blobs[n]->len);
    }
    json_object_foreach(m, k, c)
    {
        json_t *r = swap_in(e, c);
        if (r) {
            json_object_set_new(m, k, r);
        }
    }
    json_array_foreach(m, i, c)
    {
        json_t *r = swap_in(e, c);
        if (r) {
            json_array_set_new(m, i, r);
        }
    }
    return NULL;
}

/* A new parse of e's object. Caller owns it. */
static json_t *entry_object(const struct entry *e)
{
    json_error_t jerr;
    /* The text is our own serialisation of a parsed object: only running out of memory can
     * fail, and jansson's allocator (kt_mem_init) aborts then. */
    json_t *v = json_loadb(e->data + e->text_off, e->text_len,
                           JSON_DECODE_ANY | (e->n_blobs ? JSON_ALLOW_NUL : 0), &jerr);

    KT_ASSERT(v != NULL);
    if (e->n_blobs) {
        swap_in(e, v);
    }
    return v;
}

struct kt_informer *kt_informer_new(const struct kt_informer_opts *o,
                                    const struct kt_informer_handlers *h)
{
    struct kt_informer *inf = kt_xcalloc(1, sizeof(*inf));

    KT_ASSERT(o->gvr != NULL);
    inf->gvr = *o->gvr;
    inf->label_selector = dup_or_null(o->label_selector);
    inf->field_selector = dup_or_null(o->field_selector);
    inf->page_size = o->page_size > 0 ? o->page_size : 500;
    inf->watch_timeout_s = o->watch_timeout_s != 0 ? o->watch_timeout_s : 300;
    inf->strip_managed_fields = o->strip_managed_fields;
    inf->transform = o->transform;
    inf->transform_ud = o->transform_ud;
    inf->cut = o->cut;
    if (h) {
        inf->h = *h;
    }
    pthread_mutex_init(&inf->lock, NULL);
    kt_htab_init(&inf->store, entry_hash, 64);
    kt_htab_init(&inf->blobs, blob_hash, 16);
    inf->n_srcs = o->n_namespaces > 0 ? o->n_namespaces : 1;
    inf->srcs = kt_xcalloc(inf->n_srcs, sizeof(*inf->srcs));
    for (size_t i = 0; i < inf->n_srcs; i++) {
        src_init(&inf->srcs[i], inf, o->n_namespaces > 0 ? o->namespaces[i] : o->ns);
    }
    kt_buf_init(&inf->scratch, SIZE_MAX / 2);
    return inf;
}

void kt_informer_free(struct kt_informer *inf)
{
    if (!inf) {
        return;
    }
    for (size_t i = 0; i < inf->n_srcs; i++) {
        struct src *sr = &inf->srcs[i];
        free(sr->ns);
        free(sr->rv);
        free(sr->path);
        if (sr->easy) {
            curl_easy_cleanup(sr->easy);
        }
    }
    free(inf->srcs);
    free(inf->label_selector);
    free(inf->field_selector);
    table_clear(&inf->store, &inf->blobs);
    kt_buf_release(&inf->scratch);
    pthread_mutex_destroy(&inf->lock);
    free(inf);
}

bool kt_informer_synced(const struct kt_informer *inf)
{
    return atomic_load(&inf->synced);
}

bool kt_informer_unsynced_reason(struct kt_informer *inf, char *buf, size_t n)
{
    bool found = false;
    if (atomic_load(&inf->synced)) {
        return false;
    }
    pthread_mutex_lock(&inf->lock);
    for (size_t i = 0; i < inf->n_srcs && !found; i++) {
        const struct src *sr = &inf->srcs[i];
        if (!sr->listed) {
            snprintf(buf, n, "%s%s%s: %s", inf->gvr.resource, sr->ns ? " namespace=" : "",
                     sr->ns ? sr->ns : "", sr->why[0] ? sr->why : "not listed yet");
            found = true;
        }
    }
    pthread_mutex_unlock(&inf->lock);
    if (!found) {
        snprintf(buf, n, "%s: not synced yet", inf->gvr.resource);
    }
    return true;
}

static char *key_of(const char *ns, const char *name)
{
    if (ns && *ns) {
        return kt_xasprintf("%s/%s", ns, name);
    }
    return kt_xstrdup(name);
}

json_t *kt_informer_get(struct kt_informer *inf, const char *ns, const char *name)
{
    char *key = key_of(ns, name);
    json_t *v;

    /* A private parse: nothing stored is shared with other threads (jansson's inline
     * reference counts are not atomic). */
    pthread_mutex_lock(&inf->lock);
    const struct entry *e = table_get(&inf->store, key);
    v = e ? entry_object(e) : NULL;
    pthread_mutex_unlock(&inf->lock);
    free(key);
    return v;
}

bool kt_informer_rv(struct kt_informer *inf, const char *ns, const char *name, char *buf, size_t n)
{
    char *key = key_of(ns, name);

    pthread_mutex_lock(&inf->lock);
    const struct entry *e = table_get(&inf->store, key);
    if (e && n > 0) {
        snprintf(buf, n, "%s", e->data + e->rv_off);
    }
    pthread_mutex_unlock(&inf->lock);
    free(key);
    return e != NULL;
}

json_t *kt_informer_snapshot(struct kt_informer *inf)
{
    json_t *arr = json_array();

    pthread_mutex_lock(&inf->lock);
    struct kt_hiter it;
    for (const struct kt_hnode *n = kt_hiter_first(&it, &inf->store); n; n = kt_hiter_next(&it)) {
        json_array_append_new(arr, entry_object(KT_HNODE_CENTRY(n, struct entry, node)));
    }
    pthread_mutex_unlock(&inf->lock);
    return arr;
}

void kt_informer_stats(struct kt_informer *inf, struct kt_informer_stats *out)
{
    out->lists = atomic_load(&inf->n_lists);
    out->relists_gone = atomic_load(&inf->n_relists_gone);
    out->watches = atomic_load(&inf->n_watches);
    out->watch_ends = atomic_load(&inf->n_watch_ends);
    out->failures = atomic_load(&inf->n_failures);
    pthread_mutex_lock(&inf->lock);
    out->objects = inf->store.n;
    pthread_mutex_unlock(&inf->lock);
}

/* ---- applying changes to the store ------------------------------------------------------ */

/* The store key of obj, or NULL when it has no name. Caller owns it. */
static char *obj_key(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *name = kt_json_str(md, "name", NULL);

    if (!name || !*name) {
        return NULL;
    }
    return key_of(kt_json_str(md, "namespace", NULL), name);
}

static const char *rv_of(const json_t *obj)
{
    return kt_json_str(json_object_get(obj, "metadata"), "resourceVersion", "");
}

/* Steals obj; returns what to store. */
static json_t *prepare(struct kt_informer *inf, json_t *obj)
{
    if (inf->strip_managed_fields) {
        json_t *md = json_object_get(obj, "metadata");
        if (json_is_object(md) && json_object_get(md, "managedFields")) {
            /* The object may be shared with the caller's list: copy before changing it.
             * Shallow copies: only the two objects changed here are new; their other
             * members stay shared (nothing below changes them in place), and managedFields
             * is dropped without being copied. */
            json_t *copy = json_copy(obj);
            json_decref(obj);
            obj = copy;
            md = json_copy(json_object_get(obj, "metadata"));
            json_object_del(md, "managedFields");
            json_object_set_new(obj, "metadata", md);
        }
    }
    if (inf->transform) {
        obj = inf->transform(obj, inf->transform_ud);
    }
    return obj;
}

/* A new entry for obj under key: its resourceVersion and compact text. NULL when obj cannot
 * be serialised or is larger than an entry can say (then it is not stored). */
static struct entry *entry_new(struct kt_informer *inf, const char *key, json_t *obj)
{
    const char *rv = rv_of(obj);
    size_t klen = strlen(key), rlen = strlen(rv);
    struct kt_err err = {0};
    struct kt_buf refs;
    json_t *copy = NULL;
    struct entry *e;

    kt_buf_init(&refs, SIZE_MAX / 2);
    if (has_long_string(obj)) {
        copy = json_deep_copy(obj);
        swap_out(&inf->blobs, copy, &refs);
    }
    kt_buf_reset(&inf->scratch);
    if (kt_json_dump_buf(copy ? copy : obj, &inf->scratch, &err) < 0 ||
        inf->scratch.len > UINT32_MAX || klen + rlen + 2 > UINT32_MAX) {
        kt_buf_release(&inf->scratch);
        kt_buf_init(&inf->scratch, SIZE_MAX / 2);
        for (size_t i = 0; i < refs.len / sizeof(struct blob *); i++) {
            blob_unref(&inf->blobs, ((struct blob **)(void *)refs.data)[i]);
        }
        kt_buf_release(&refs);
        json_decref(copy);
        return NULL;
    }
    json_decref(copy);
    e = kt_xmalloc(sizeof(*e) + klen + rlen + inf->scratch.len + 3);
    e->node.next = NULL;
    e->n_blobs = (uint32_t)(refs.len / sizeof(struct blob *));
    e->blobs = e->n_blobs ? kt_xmalloc(refs.len) : NULL;
    if (e->n_blobs) {
        memcpy(e->blobs, refs.data, refs.len);
    }
    kt_buf_release(&refs);
    e->hash = kt_fnv32_str(key);
    e->mark = 0;
    e->rv_off = (uint32_t)(klen + 1);
    e->text_off = (uint32_t)(klen + rlen + 2);
    e->text_len = inf->scratch.len;
    memcpy(e->data, key, klen + 1);
    memcpy(e->data + e->rv_off, rv, rlen + 1);
    memcpy(e->data + e->text_off, inf->scratch.data, inf->scratch.len + 1);
    if (inf->scratch.cap > 64 * 1024) {
        kt_buf_release(&inf->scratch); /* one big object does not pin its size */
        kt_buf_init(&inf->scratch, SIZE_MAX / 2);
    }
    return e;
}

/* Store obj (stolen) as an add or update; duplicates (same resourceVersion) are dropped.
 * Runs on the loop thread, the table's only writer: it reads without the lock. */
static void upsert(struct kt_informer *inf, json_t *obj)
{
    char *key = obj_key(obj);
    struct entry *old, *e;

    if (!key) {
        json_decref(obj);
        return;
    }
    old = table_get(&inf->store, key);
    if (old && strcmp(old->data + old->rv_off, rv_of(obj)) == 0) {
        json_decref(obj);
        free(key);
        return;
    }
    e = entry_new(inf, key, obj);
    if (!e) {
        kt_log_warn("informer", "%s %s cannot be stored", inf->gvr.resource, key);
        json_decref(obj);
        free(key);
        return;
    }
    pthread_mutex_lock(&inf->lock);
    old = table_put(&inf->store, e);
    pthread_mutex_unlock(&inf->lock);
    if (old && inf->h.on_update) {
        json_t *was = entry_object(old);
        inf->h.on_update(inf->h.ud, was, obj);
        json_decref(was);
    } else if (!old && inf->h.on_add) {
        inf->h.on_add(inf->h.ud, obj);
    }
    entry_free(&inf->blobs, old);
    json_decref(obj);
    free(key);
}

/* Remove key; report last (stolen; NULL = the stored object) as the final state. */
static void remove_key(struct kt_informer *inf, const char *key, json_t *last)
{
    struct entry *old;

    pthread_mutex_lock(&inf->lock);
    old = table_del(&inf->store, key);
    pthread_mutex_unlock(&inf->lock);
    if (old && inf->h.on_delete) {
        json_t *was = last ? json_incref(last) : entry_object(old);
        inf->h.on_delete(inf->h.ud, was);
        json_decref(was);
    }
    entry_free(&inf->blobs, old);
    json_decref(last);
}

static int on_event(void *ud, const struct kt_kube_watch_event *ev)
{
    struct src *sr = ud;
    struct kt_informer *inf = sr->inf;
    json_t *obj;
    char *key;

    switch (ev->type) {
    case KT_WATCH_ADDED:
    case KT_WATCH_MODIFIED:
        upsert(inf, prepare(inf, json_incref(ev->object)));
        break;
    case KT_WATCH_DELETED:
        obj = prepare(inf, json_incref(ev->object));
        key = obj_key(obj);
        if (key) {
            remove_key(inf, key, obj);
            free(key);
        } else {
            json_decref(obj);
        }
        break;
    case KT_WATCH_BOOKMARK:
    case KT_WATCH_ERROR:
    default:
        break;
    }
    return 0;
}

/* kt_kube_list_opts.each: store every item as its page arrives (handlers run then), leaving
 * only its key in the list, so a LIST never holds more than one page of parsed objects. */
static json_t *store_each(json_t *item, void *ud)
{
    struct kt_informer *inf = ud;
    json_t *obj = prepare(inf, item);
    char *key = obj_key(obj);
    json_t *k = key ? json_string(key) : NULL;

    upsert(inf, obj);
    free(key);
    return k;
}

/* True when the store key k belongs to the source's part of the store (its namespace). */
static bool in_src(const struct src *sr, const char *k)
{
    size_t n = sr->ns ? strlen(sr->ns) : 0;
    return !sr->ns || (strncmp(k, sr->ns, n) == 0 && k[n] == '/');
}

/* After a source's LIST (its items are the keys store_each left): delete what it did not
 * return from the source's part of the store. The keys come from the list that succeeded,
 * not from items stored by an attempt that was restarted (kt_kube_list restarts once when
 * its continue token expires). */
static void replace_done(struct src *sr, json_t *keys)
{
    struct kt_informer *inf = sr->inf;
    json_t *gone = json_array();
    size_t i;
    json_t *v;

    inf->list_mark++;
    json_array_foreach(keys, i, v)
    {
        struct entry *e = json_is_string(v) ? table_get(&inf->store, json_string_value(v)) : NULL;
        if (e) {
            e->mark = inf->list_mark;
        }
    }
    struct kt_hiter it;
    for (const struct kt_hnode *n = kt_hiter_first(&it, &inf->store); n; n = kt_hiter_next(&it)) {
        const struct entry *e = KT_HNODE_CENTRY(n, struct entry, node);
        if (e->mark != inf->list_mark && in_src(sr, e->data)) {
            json_array_append_new(gone, json_string(e->data));
        }
    }
    json_array_foreach(gone, i, v)
    {
        remove_key(inf, json_string_value(v), NULL);
    }
    json_decref(gone);
}

static int do_list(struct kt_informer_loop *loop, struct src *sr, struct kt_err *err)
{
    struct kt_informer *inf = sr->inf;
    struct kt_kube_list_opts o = {0};
    json_t *list = NULL;
    const char *rv;

    o.label_selector = inf->label_selector;
    o.field_selector = inf->field_selector;
    o.limit = inf->page_size;
    o.each = store_each;
    o.each_ud = inf;
    if (kt__kube_list(loop->client, &inf->gvr, sr->ns, &o, inf->rules, &list, err) < 0) {
        return -1;
    }
    rv = kt_json_str(json_object_get(list, "metadata"), "resourceVersion", "");
    free(sr->rv);
    sr->rv = kt_xstrdup(rv);
    replace_done(sr, json_object_get(list, "items"));
    json_decref(list);
    atomic_fetch_add(&inf->n_lists, 1);
    if (!sr->listed) {
        pthread_mutex_lock(&inf->lock);
        sr->listed = true;
        sr->why[0] = '\0';
        pthread_mutex_unlock(&inf->lock);
        inf->n_listed++;
    }
    if (inf->n_listed == inf->n_srcs && !atomic_load(&inf->synced)) {
        atomic_store(&inf->synced, true);
        if (inf->h.on_synced) {
            inf->h.on_synced(inf->h.ud);
        }
    }
    return 0;
}

/* xorshift64*: jitter only, not security. */
static double rand01(struct kt_informer_loop *loop)
{
    loop->rng ^= loop->rng >> 12;
    loop->rng ^= loop->rng << 25;
    loop->rng ^= loop->rng >> 27;
    return (double)((loop->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static void backoff(struct kt_informer_loop *loop, struct src *sr, bool need_list,
                    const struct kt_err *err)
{
    double wait = sr->backoff_s * (0.5 + rand01(loop));

    atomic_fetch_add(&sr->inf->n_failures, 1);
    if (!sr->listed) {
        pthread_mutex_lock(&sr->inf->lock);
        snprintf(sr->why, sizeof(sr->why), "%s: %.240s", need_list ? "list" : "watch",
                 err ? err->msg : "failed");
        pthread_mutex_unlock(&sr->inf->lock);
    }
    kt_log_warn("informer", "%s: %s; retrying in %.1fs resource=%s%s%s",
                need_list ? "list" : "watch", err ? err->msg : "failed", wait,
                sr->inf->gvr.resource, sr->ns ? " namespace=" : "", sr->ns ? sr->ns : "");
    sr->state = ST_BACKOFF;
    sr->need_list = need_list;
    sr->next_at = kt__kube_now() + wait;
    sr->backoff_s *= 2;
    if (sr->backoff_s > BACKOFF_MAX_S) {
        sr->backoff_s = BACKOFF_MAX_S;
    }
}

static int start_watch(struct kt_informer_loop *loop, struct src *sr, struct kt_err *err)
{
    struct kt_informer *inf = sr->inf;
    struct kt_kube_list_opts o = {0};
    struct kt_buf p;
    long t = inf->watch_timeout_s;

    o.label_selector = inf->label_selector;
    o.field_selector = inf->field_selector;
    o.resource_version = sr->rv;
    o.allow_bookmarks = true;
    o.timeout_seconds = t > 0 ? t + (long)(rand01(loop) * (double)t) : 0;
    kt_buf_init(&p, 8192);
    if (kt_kube_path(&p, &inf->gvr, sr->ns, NULL, NULL, err) < 0 ||
        kt__kube_list_query(&p, &o, NULL, KT__KUBE_QUERY_WATCH, err) < 0) {
        kt_buf_release(&p);
        return -1;
    }
    free(sr->path);
    sr->path = kt_buf_take(&p, NULL);
    if (!sr->easy) {
        sr->easy = curl_easy_init();
        KT_ASSERT(sr->easy != NULL);
    }
    kt__kube_rate_wait(loop->cfg);
    kt__kube_stream_init(&sr->stream, loop->cfg, sr->easy,
                         &(struct kt__kube_stream_opts){
                             .path_query = sr->path,
                             .timeout_seconds = o.timeout_seconds,
                             .fn = on_event,
                             .ud = sr,
                             .stop = &loop->stop,
                             .rules = inf->rules,
                         });
    /* All watches of the loop share one HTTP/2 connection when the server offers h2 (the
     * kube-apiserver does; client-go does the same): one TLS session instead of one per
     * informer. PIPEWAIT makes a watch started before that connection is up wait for it
     * rather than open another. */
    curl_easy_setopt(sr->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(sr->easy, CURLOPT_PIPEWAIT, 1L);
    curl_multi_add_handle(loop->multi, sr->easy);
    atomic_fetch_add(&inf->n_watches, 1);
    sr->state = ST_WATCHING;
    return 0;
}

/* A watch transfer finished: decide what comes next. */
static void watch_done(struct kt_informer_loop *loop, struct src *sr, CURLcode rc)
{
    struct kt_err err = {0};
    int r = kt__kube_stream_result(&sr->stream, rc, &err);

    curl_multi_remove_handle(loop->multi, sr->easy);
    if (sr->stream.last_rv) {
        free(sr->rv);
        sr->rv = sr->stream.last_rv;
        sr->stream.last_rv = NULL;
    }
    kt__kube_stream_release(&sr->stream);
    if (r == 0) {
        atomic_fetch_add(&sr->inf->n_watch_ends, 1);
        sr->backoff_s = BACKOFF_MIN_S;
        sr->state = ST_WATCH;
        return;
    }
    if (err.code == KT_EGONE) {
        kt_log_info("informer", "watch: %s; relisting resource=%s", err.msg, sr->inf->gvr.resource);
        atomic_fetch_add(&sr->inf->n_relists_gone, 1);
        sr->state = ST_LIST;
        return;
    }
    backoff(loop, sr, false, &err);
}

/* ---- the loop --------------------------------------------------------------------------- */

struct kt_informer_loop *kt_informer_loop_new(struct kt_kube_config *cfg)
{
    struct kt_informer_loop *loop = kt_xcalloc(1, sizeof(*loop));

    kt__kube_global_init();
    loop->cfg = cfg;
    loop->client = kt_kube_client_new(cfg);
    loop->multi = curl_multi_init();
    KT_ASSERT(loop->multi != NULL);
    atomic_init(&loop->stop, 0);
    loop->rng =
        (uint64_t)kt__kube_now() * 1000003u ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
    return loop;
}

void kt_informer_loop_add(struct kt_informer_loop *loop, struct kt_informer *inf)
{
    inf->rules = kt__kube_cut_rules(loop->cfg, inf->cut, inf->rules_room);
    loop->srcs = kt_xrealloc(loop->srcs, (loop->n + inf->n_srcs) * sizeof(*loop->srcs));
    for (size_t i = 0; i < inf->n_srcs; i++) {
        loop->srcs[loop->n++] = &inf->srcs[i];
    }
}

void kt_informer_loop_stop(struct kt_informer_loop *loop)
{
    atomic_store(&loop->stop, 1);
    curl_multi_wakeup(loop->multi);
}

void kt_informer_loop_free(struct kt_informer_loop *loop)
{
    if (!loop) {
        return;
    }
    curl_multi_cleanup(loop->multi);
    kt_kube_client_free(loop->client);
    free(loop->srcs);
    free(loop);
}

/* Advance one source that is not streaming. */
static void step(struct kt_informer_loop *loop, struct src *sr, double now)
{
    struct kt_err err = {0};

    if (sr->state == ST_BACKOFF && now >= sr->next_at) {
        sr->state = sr->need_list ? ST_LIST : ST_WATCH;
    }
    if (sr->state == ST_LIST) {
        if (do_list(loop, sr, &err) < 0) {
            backoff(loop, sr, true, &err);
            return;
        }
        sr->state = ST_WATCH;
    }
    if (sr->state == ST_WATCH && start_watch(loop, sr, &err) < 0) {
        backoff(loop, sr, true, &err);
    }
}

/* Milliseconds until some source has work (0: now), at most 1000. */
static int poll_timeout_ms(const struct kt_informer_loop *loop, double now)
{
    double ms = 1000;
    size_t i;

    for (i = 0; i < loop->n; i++) {
        const struct src *sr = loop->srcs[i];
        if (sr->state == ST_LIST || sr->state == ST_WATCH) {
            return 0;
        }
        if (sr->state == ST_BACKOFF) {
            double d = (sr->next_at - now) * 1000;
            if (d < ms) {
                ms = d < 0 ? 0 : d;
            }
        }
    }
    return (int)ms;
}

static void collect_done(struct kt_informer_loop *loop)
{
    CURLMsg *msg;
    int left;

    for (;;) {
        msg = curl_multi_info_read(loop->multi, &left);
        if (!msg) {
            break;
        }
        if (msg->msg == CURLMSG_DONE) {
            struct kt__kube_stream *s = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            watch_done(loop, s->ud, msg->data.result);
        }
    }
}

int kt_informer_loop_run(struct kt_informer_loop *loop, struct kt_err *err)
{
    int running = 0;
    size_t i;

    (void)err;
    while (!atomic_load(&loop->stop)) {
        double now = kt__kube_now();
        for (i = 0; i < loop->n && !atomic_load(&loop->stop); i++) {
            if (loop->srcs[i]->state != ST_WATCHING) {
                step(loop, loop->srcs[i], now);
            }
        }
        curl_multi_perform(loop->multi, &running);
        collect_done(loop);
        curl_multi_poll(loop->multi, NULL, 0, poll_timeout_ms(loop, kt__kube_now()), NULL);
    }
    /* Tear down live watches so the informers can be run again or freed. */
    for (i = 0; i < loop->n; i++) {
        struct src *sr = loop->srcs[i];
        if (sr->state == ST_WATCHING) {
            curl_multi_remove_handle(loop->multi, sr->easy);
            kt__kube_stream_release(&sr->stream);
            sr->state = ST_WATCH;
        }
    }
    atomic_store(&loop->stop, 0);
    return 0;
}
