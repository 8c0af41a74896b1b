/* common/kube/informer.c - list+watch stores driven by one thread (curl multi).
 *
 * Each informer is a small state machine: LIST (blocking, paged) -> WATCH (streamed through the
 * loop's multi handle) -> WATCH again from the last resourceVersion, relisting on 410 Gone and
 * backing off with jitter after failures. An informer restricted to listed namespaces runs
 * that state machine once per namespace (a source), all feeding one store. The store is a
 * jansson object keyed "ns/name" under a mutex; handlers run outside the lock. */
#include "common/kube/informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    char *path; /* the watch path+query while watching */
};

struct kt_informer {
    struct kt_kube_gvr gvr;
    char *label_selector;
    char *field_selector;
    long page_size;
    long watch_timeout_s;
    bool strip_managed_fields;
    json_t *(*transform)(json_t *obj, void *ud);
    void *transform_ud;
    struct kt_informer_handlers h;

    pthread_mutex_t lock; /* guards store */
    json_t *store;        /* "ns/name" -> object */
    atomic_bool synced;   /* every source has listed */
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
    if (h) {
        inf->h = *h;
    }
    pthread_mutex_init(&inf->lock, NULL);
    inf->store = json_object();
    inf->n_srcs = o->n_namespaces > 0 ? o->n_namespaces : 1;
    inf->srcs = kt_xcalloc(inf->n_srcs, sizeof(*inf->srcs));
    for (size_t i = 0; i < inf->n_srcs; i++) {
        src_init(&inf->srcs[i], inf, o->n_namespaces > 0 ? o->namespaces[i] : o->ns);
    }
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
    json_decref(inf->store);
    pthread_mutex_destroy(&inf->lock);
    free(inf);
}

bool kt_informer_synced(const struct kt_informer *inf)
{
    return atomic_load(&inf->synced);
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

    /* A deep copy, not a reference: jansson's inline refcount checks are plain reads, so
     * sharing stored values with other threads would race with the loop's decrefs. */
    pthread_mutex_lock(&inf->lock);
    v = json_object_get(inf->store, key);
    v = v ? json_deep_copy(v) : NULL;
    pthread_mutex_unlock(&inf->lock);
    free(key);
    return v;
}

json_t *kt_informer_snapshot(struct kt_informer *inf)
{
    json_t *arr = json_array();
    const char *k;
    json_t *v;

    pthread_mutex_lock(&inf->lock);
    json_object_foreach(inf->store, k, v)
    {
        json_array_append_new(arr, json_deep_copy(v));
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
    out->objects = json_object_size(inf->store);
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
            /* The object may be shared with the caller's list: copy before changing it. */
            json_t *copy = json_copy(obj);
            json_decref(obj);
            obj = copy;
            md = json_deep_copy(json_object_get(obj, "metadata"));
            json_object_del(md, "managedFields");
            json_object_set_new(obj, "metadata", md);
        }
    }
    if (inf->transform) {
        obj = inf->transform(obj, inf->transform_ud);
    }
    return obj;
}

/* Store obj (stolen) as an add or update; duplicates (same resourceVersion) are dropped. */
static void upsert(struct kt_informer *inf, json_t *obj)
{
    char *key = obj_key(obj);
    json_t *old = NULL;

    if (!key) {
        json_decref(obj);
        return;
    }
    pthread_mutex_lock(&inf->lock);
    old = json_incref(json_object_get(inf->store, key));
    if (old && strcmp(rv_of(old), rv_of(obj)) == 0) {
        pthread_mutex_unlock(&inf->lock);
        json_decref(old);
        json_decref(obj);
        free(key);
        return;
    }
    json_object_set(inf->store, key, obj);
    pthread_mutex_unlock(&inf->lock);
    if (old && inf->h.on_update) {
        inf->h.on_update(inf->h.ud, old, obj);
    } else if (!old && inf->h.on_add) {
        inf->h.on_add(inf->h.ud, obj);
    }
    json_decref(old);
    json_decref(obj);
    free(key);
}

/* Remove key; report last (stolen; NULL = the stored object) as the final state. */
static void remove_key(struct kt_informer *inf, const char *key, json_t *last)
{
    json_t *old;

    pthread_mutex_lock(&inf->lock);
    old = json_incref(json_object_get(inf->store, key));
    if (old) {
        json_object_del(inf->store, key);
    }
    pthread_mutex_unlock(&inf->lock);
    if (old && inf->h.on_delete) {
        inf->h.on_delete(inf->h.ud, last ? last : old);
    }
    json_decref(old);
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

/* kt_kube_list_opts.each: prepare every item as its page arrives, so a LIST never holds
 * more than one page of unprepared objects. */
static json_t *prepare_each(json_t *item, void *ud)
{
    return prepare(ud, item);
}

/* True when the store key k belongs to the source's part of the store (its namespace). */
static bool in_src(const struct src *sr, const char *k)
{
    size_t n = sr->ns ? strlen(sr->ns) : 0;
    return !sr->ns || (strncmp(k, sr->ns, n) == 0 && k[n] == '/');
}

/* Replace the source's part of the store with a LIST's (prepared) items: adds and updates for
 * what changed, deletes for what is gone. */
static void replace(struct src *sr, json_t *items)
{
    struct kt_informer *inf = sr->inf;
    json_t *seen = json_object();
    json_t *gone = json_array();
    const char *k;
    json_t *v;
    size_t i;

    json_array_foreach(items, i, v)
    {
        char *key = obj_key(v);
        if (key) {
            json_object_set_new(seen, key, json_true());
            upsert(inf, json_incref(v)); /* prepared as its page arrived (do_list) */
            free(key);
        }
    }
    pthread_mutex_lock(&inf->lock);
    json_object_foreach(inf->store, k, v)
    {
        if (in_src(sr, k) && !json_object_get(seen, k)) {
            json_array_append_new(gone, json_string(k));
        }
    }
    pthread_mutex_unlock(&inf->lock);
    json_array_foreach(gone, i, v)
    {
        remove_key(inf, json_string_value(v), NULL);
    }
    json_decref(gone);
    json_decref(seen);
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
    o.each = prepare_each;
    o.each_ud = inf;
    if (kt_kube_list(loop->client, &inf->gvr, sr->ns, &o, &list, err) < 0) {
        return -1;
    }
    rv = kt_json_str(json_object_get(list, "metadata"), "resourceVersion", "");
    free(sr->rv);
    sr->rv = kt_xstrdup(rv);
    replace(sr, json_object_get(list, "items"));
    json_decref(list);
    atomic_fetch_add(&inf->n_lists, 1);
    if (!sr->listed) {
        sr->listed = true;
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
        kt__kube_list_query(&p, &o, NULL, true, err) < 0) {
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
    kt__kube_stream_init(&sr->stream, loop->cfg, sr->easy, sr->path, o.timeout_seconds, on_event,
                         sr, &loop->stop);
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
