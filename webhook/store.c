/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/store.c - runtimes and JobSets for the webhook; see store.h. */
#include "webhook/store.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/runtime.h"
#include "api/types.h"
#include "common/base/buf.h"
#include "common/kube/informer.h"
#include "common/base/json.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/validate/validate.h"
#include "common/base/yaml.h"

#define LOG "webhook"
#define MAX_FILE (16u * 1024 * 1024)
#define MAX_DEPTH 8

struct kt_wstore {
    /* published snapshot */
    pthread_mutex_t mu;
    struct kt_wsnap *cur;
    atomic_bool synced;
    /* cluster mode (cfg NULL in files mode) */
    struct kt_kube_config *cfg;
    struct kt_informer_loop *loop;
    struct kt_informer *inf[2]; /* TrainingRuntimes, ClusterTrainingRuntimes */
    bool inf_synced[2];         /* loop thread only */
    json_t *mine;               /* loop thread only: "Kind/ns/name" -> private copy */
    pthread_t thread;
    bool running;
    /* idle API clients (one per concurrent request at most) */
    pthread_mutex_t pool_mu;
    struct kt_kube_client **pool;
    size_t pool_len, pool_cap;
};

/* ------------------------------------------------------------------ snapshots */

static struct kt_wsnap *snap_new(json_t *runtimes, json_t *objects)
{
    struct kt_wsnap *s = kt_xcalloc(1, sizeof(*s));
    size_t n = json_array_size(runtimes);

    atomic_init(&s->refs, 1);
    s->runtimes = runtimes;
    s->objects = objects;
    s->decoded = kt_xcalloc(n ? n : 1, sizeof(*s->decoded));
    for (size_t i = 0; i < n; i++) {
        struct kt_err err = {0};
        if (kt_validate_decode_runtime(json_array_get(runtimes, i), &s->decoded[i], &err) != 0) {
            kt_log_debug(LOG, "runtime not pre-decoded: %s", err.msg);
        }
    }
    return s;
}

void kt_wsnap_release(struct kt_wsnap *snap)
{
    if (snap && atomic_fetch_sub_explicit(&snap->refs, 1, memory_order_acq_rel) == 1) {
        size_t n = json_array_size(snap->runtimes);
        for (size_t i = 0; i < n; i++) {
            kt_runtime_release(&snap->decoded[i]);
        }
        free(snap->decoded);
        json_decref(snap->runtimes);
        json_decref(snap->objects);
        free(snap);
    }
}

struct kt_wsnap *kt_wstore_acquire(struct kt_wstore *s)
{
    pthread_mutex_lock(&s->mu);
    struct kt_wsnap *snap = s->cur;
    atomic_fetch_add_explicit(&snap->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
    return snap;
}

/* Replace the published snapshot; steals snap. */
static void publish(struct kt_wstore *s, struct kt_wsnap *snap)
{
    pthread_mutex_lock(&s->mu);
    struct kt_wsnap *old = s->cur;
    s->cur = snap;
    pthread_mutex_unlock(&s->mu);
    kt_wsnap_release(old);
}

bool kt_wstore_synced(struct kt_wstore *s)
{
    return atomic_load(&s->synced);
}

bool kt_wstore_unsynced_reason(struct kt_wstore *s, char *buf, size_t n)
{
    if (atomic_load(&s->synced)) {
        return false;
    }
    for (size_t i = 0; i < 2; i++) {
        if (s->inf[i] && kt_informer_unsynced_reason(s->inf[i], buf, n)) {
            return true;
        }
    }
    snprintf(buf, n, "not listed yet");
    return true;
}

static struct kt_wstore *store_new(void)
{
    struct kt_wstore *s = kt_xcalloc(1, sizeof(*s));

    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    s->cur = snap_new(json_array(), json_array());
    s->mine = json_object();
    return s;
}

/* ------------------------------------------------------------------ files */

static bool is_runtime(const json_t *o)
{
    const char *av = kt_json_str(o, "apiVersion", "");
    const char *k = kt_json_str(o, "kind", "");

    return strcmp(av, KT_API_VERSION) == 0 &&
           (strcmp(k, "TrainingRuntime") == 0 || strcmp(k, "ClusterTrainingRuntime") == 0);
}

/* Sort one decoded document (or the items of a List) into runtimes / objects. */
static void add_doc(const struct kt_validator *v, json_t *root, json_t *runtimes, json_t *objects)
{
    const char *kind = kt_json_str(root, "kind", "");
    size_t i;
    json_t *item;

    if (!json_is_object(root)) {
        return;
    }
    if (strcmp(kind, "List") == 0 || json_is_array(json_object_get(root, "items"))) {
        json_array_foreach(json_object_get(root, "items"), i, item)
        {
            add_doc(v, item, runtimes, objects);
        }
        return;
    }
    json_t *copy = json_deep_copy(root);
    if (is_runtime(copy)) {
        kt_validate_defaults(v, kind, copy);
        json_array_append_new(runtimes, copy);
    } else {
        json_array_append_new(objects, copy);
    }
}

static int load_file(const struct kt_validator *v, const char *path, json_t *runtimes,
                     json_t *objects, struct kt_err *err)
{
    struct kt_buf b;
    struct kt_yaml_limits lim;
    struct kt_yaml_stream st = {0};
    int rc = -1;

    kt_buf_init(&b, MAX_FILE);
    if (kt_buf_read_file(&b, path, err) != 0) {
        goto out;
    }
    kt_yaml_limits_default(&lim);
    if (kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &st, err) != 0) {
        kt_err_prefix(err, "%s", path);
        goto out;
    }
    for (size_t i = 0; i < st.len; i++) {
        add_doc(v, st.docs[i].root, runtimes, objects);
    }
    rc = 0;
out:
    kt_yaml_stream_release(&st);
    kt_buf_release(&b);
    return rc;
}

static bool wanted_file(const char *name)
{
    struct kt_str s = kt_str_c(name);

    return name[0] != '.' && (kt_str_has_suffix(s, ".yaml") || kt_str_has_suffix(s, ".yml") ||
                              kt_str_has_suffix(s, ".json"));
}

static int load_path(const struct kt_validator *v, const char *path, int depth, json_t *runtimes,
                     json_t *objects, struct kt_err *err);

static int load_dir(const struct kt_validator *v, const char *path, int depth, json_t *runtimes,
                    json_t *objects, struct kt_err *err)
{
    struct dirent **ents = NULL;
    int n = scandir(path, &ents, NULL, alphasort), rc = 0;

    if (n < 0) {
        return kt_err_set(err, KT_EIO, "%s: cannot read directory", path);
    }
    for (int i = 0; i < n; i++) {
        char *sub = kt_xasprintf("%s/%s", path, ents[i]->d_name);
        struct stat sb;
        if (rc == 0 && ents[i]->d_name[0] != '.' && stat(sub, &sb) == 0 &&
            (S_ISDIR(sb.st_mode) || wanted_file(ents[i]->d_name))) {
            rc = load_path(v, sub, depth + 1, runtimes, objects, err);
        }
        free(sub);
        free(ents[i]);
    }
    free(ents);
    return rc;
}

static int load_path(const struct kt_validator *v, const char *path, int depth, json_t *runtimes,
                     json_t *objects, struct kt_err *err)
{
    struct stat sb;

    if (depth > MAX_DEPTH) {
        return kt_err_set(err, KT_EINVAL, "%s: directories nested too deep", path);
    }
    if (stat(path, &sb) != 0) {
        return kt_err_set(err, KT_EIO, "%s: no such file or directory", path);
    }
    if (S_ISDIR(sb.st_mode)) {
        return load_dir(v, path, depth, runtimes, objects, err);
    }
    return load_file(v, path, runtimes, objects, err);
}

struct kt_wstore *kt_wstore_from_files(const char *path, struct kt_err *err)
{
    struct kt_validator *v = kt_validator_new(err);
    json_t *runtimes = json_array(), *objects = json_array();

    if (!v || load_path(v, path, 0, runtimes, objects, err) != 0) {
        kt_validator_free(v);
        json_decref(runtimes);
        json_decref(objects);
        return NULL;
    }
    kt_validator_free(v);
    struct kt_wstore *s = store_new();
    publish(s, snap_new(runtimes, objects));
    atomic_store(&s->synced, true);
    kt_log_info(LOG, "objects loaded path=%s runtimes=%zu objects=%zu", path,
                json_array_size(runtimes), json_array_size(objects));
    return s;
}

/* ------------------------------------------------------------------ informers */

static char *obj_key(const json_t *o)
{
    const json_t *md = json_object_get(o, "metadata");

    return kt_xasprintf("%s/%s/%s", kt_json_str(o, "kind", ""), kt_json_str(md, "namespace", ""),
                        kt_json_str(md, "name", ""));
}

/* Loop thread: rebuild the snapshot from the private map once both informers synced. */
static void republish(struct kt_wstore *s)
{
    const char *k;
    json_t *o;

    if (!s->inf_synced[0] || !s->inf_synced[1]) {
        return;
    }
    json_t *arr = json_array();
    json_object_foreach(s->mine, k, o)
    {
        json_array_append_new(arr, json_deep_copy(o));
    }
    publish(s, snap_new(arr, json_array()));
    kt_log_debug(LOG, "runtime cache published runtimes=%zu", json_array_size(arr));
}

/* The informers list TrainingRuntimeList items without kind/apiVersion; put them back. */
static void put_obj(struct kt_wstore *s, const json_t *obj, const char *kind)
{
    json_t *c = json_deep_copy(obj);

    json_object_set_new(c, "apiVersion", json_string(KT_API_VERSION));
    json_object_set_new(c, "kind", json_string(kind));
    char *key = obj_key(c);
    json_object_set_new(s->mine, key, c);
    free(key);
    republish(s);
}

#define HANDLERS(idx, kind)                                                                        \
    static void on_add_##idx(void *ud, const json_t *o)                                            \
    {                                                                                              \
        put_obj(ud, o, kind);                                                                      \
    }                                                                                              \
    static void on_update_##idx(void *ud, const json_t *old, const json_t *o)                      \
    {                                                                                              \
        (void)old;                                                                                 \
        put_obj(ud, o, kind);                                                                      \
    }                                                                                              \
    static void on_delete_##idx(void *ud, const json_t *o)                                         \
    {                                                                                              \
        struct kt_wstore *s = ud;                                                                  \
        json_t *c = json_deep_copy(o);                                                             \
        json_object_set_new(c, "kind", json_string(kind));                                         \
        char *key = obj_key(c);                                                                    \
        json_object_del(s->mine, key);                                                             \
        free(key);                                                                                 \
        json_decref(c);                                                                            \
        republish(s);                                                                              \
    }                                                                                              \
    static void on_synced_##idx(void *ud)                                                          \
    {                                                                                              \
        struct kt_wstore *s = ud;                                                                  \
        s->inf_synced[idx] = true;                                                                 \
        republish(s);                                                                              \
        if (s->inf_synced[0] && s->inf_synced[1]) {                                                \
            atomic_store(&s->synced, true);                                                        \
            kt_log_info(LOG, "runtime cache synced runtimes=%zu", json_object_size(s->mine));      \
        }                                                                                          \
    }

HANDLERS(0, "TrainingRuntime")
HANDLERS(1, "ClusterTrainingRuntime")

struct kt_wstore *kt_wstore_from_cluster(struct kt_kube_config *cfg)
{
    struct kt_wstore *s = store_new();
    const struct kt_informer_handlers h[2] = {
        {on_add_0, on_update_0, on_delete_0, on_synced_0, s},
        {on_add_1, on_update_1, on_delete_1, on_synced_1, s},
    };
    const struct kt_kube_gvr *gvrs[2] = {&KT_GVR_TRAININGRUNTIMES, &KT_GVR_CLUSTERTRAININGRUNTIMES};

    s->cfg = cfg;
    s->loop = kt_informer_loop_new(cfg);
    for (int i = 0; i < 2; i++) {
        struct kt_informer_opts o = {.gvr = gvrs[i], .strip_managed_fields = true};
        s->inf[i] = kt_informer_new(&o, &h[i]);
        kt_informer_loop_add(s->loop, s->inf[i]);
    }
    return s;
}

static void *loop_main(void *arg)
{
    struct kt_wstore *s = arg;
    struct kt_err err = {0};

    if (kt_informer_loop_run(s->loop, &err) != 0) {
        kt_log_error(LOG, "informer loop failed: %s", err.msg);
    }
    return NULL;
}

int kt_wstore_start(struct kt_wstore *s, struct kt_err *err)
{
    if (!s->loop || s->running) {
        return 0;
    }
    if (pthread_create(&s->thread, NULL, loop_main, s) != 0) {
        return kt_err_set(err, KT_EINTERNAL, "cannot start the informer thread");
    }
    s->running = true;
    return 0;
}

void kt_wstore_stop(struct kt_wstore *s)
{
    if (!s || !s->running) {
        return;
    }
    kt_informer_loop_stop(s->loop);
    pthread_join(s->thread, NULL);
    s->running = false;
}

void kt_wstore_free(struct kt_wstore *s)
{
    if (!s) {
        return;
    }
    kt_wstore_stop(s);
    kt_informer_loop_free(s->loop);
    for (int i = 0; i < 2; i++) {
        kt_informer_free(s->inf[i]);
    }
    for (size_t i = 0; i < s->pool_len; i++) {
        kt_kube_client_free(s->pool[i]);
    }
    free(s->pool);
    kt_wsnap_release(s->cur);
    json_decref(s->mine);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->pool_mu);
    free(s);
}

/* ------------------------------------------------------------------ live reads */

static struct kt_kube_client *client_get(struct kt_wstore *s)
{
    struct kt_kube_client *c = NULL;

    pthread_mutex_lock(&s->pool_mu);
    if (s->pool_len > 0) {
        c = s->pool[--s->pool_len];
    }
    pthread_mutex_unlock(&s->pool_mu);
    return c ? c : kt_kube_client_new(s->cfg);
}

static void client_put(struct kt_wstore *s, struct kt_kube_client *c)
{
    pthread_mutex_lock(&s->pool_mu);
    if (s->pool_len == s->pool_cap) {
        s->pool_cap = s->pool_cap ? 2 * s->pool_cap : 8;
        s->pool = kt_xrealloc(s->pool, s->pool_cap * sizeof(*s->pool));
    }
    s->pool[s->pool_len++] = c;
    pthread_mutex_unlock(&s->pool_mu);
}

/* One live GET. 0 with *out (NULL when not found), -1 + err on other failures. */
static int live_get(struct kt_wstore *s, const struct kt_kube_gvr *gvr, const char *ns,
                    const char *name, json_t **out, struct kt_err *err)
{
    struct kt_kube_client *c = client_get(s);
    int rc = kt_kube_get(c, gvr, ns, name, out, err);

    client_put(s, c);
    if (rc != 0 && err->code == KT_ENOENT) {
        *out = NULL;
        return 0;
    }
    return rc;
}

static bool matches(const json_t *o, const char *av, const char *kind, const char *ns,
                    const char *name)
{
    const json_t *md = json_object_get(o, "metadata");
    const char *ons = kt_json_str(md, "namespace", "");

    if (ns && !ons[0]) {
        ons = "default";
    }
    return strcmp(kt_json_str(o, "apiVersion", ""), av) == 0 &&
           strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
           strcmp(kt_json_str(md, "name", ""), name) == 0 && (!ns || strcmp(ons, ns) == 0);
}

static const json_t *find(const json_t *arr, const char *av, const char *kind, const char *ns,
                          const char *name)
{
    size_t i;
    json_t *o;

    json_array_foreach(arr, i, o)
    {
        if (matches(o, av, kind, ns, name)) {
            return o;
        }
    }
    return NULL;
}

int kt_wstore_runtimes_for(struct kt_wstore *s, const struct kt_wsnap *snap,
                           const struct kt_wstore_runtime_ref *ref, const json_t **runtimes,
                           json_t **owned, struct kt_err *err)
{
    const char *kind = ref->kind, *ns = ref->ns, *name = ref->name;
    bool cluster = strcmp(kind, "ClusterTrainingRuntime") == 0;
    json_t *got = NULL;

    *owned = NULL;
    *runtimes = snap->runtimes;
    if (!s->cfg || strcmp(ref->api_group, KT_GROUP) != 0 ||
        (!cluster && strcmp(kind, "TrainingRuntime") != 0) ||
        find(snap->runtimes, KT_API_VERSION, kind, cluster ? NULL : ns, name)) {
        return 0;
    }
    const struct kt_kube_gvr *gvr =
        cluster ? &KT_GVR_CLUSTERTRAININGRUNTIMES : &KT_GVR_TRAININGRUNTIMES;
    if (live_get(s, gvr, cluster ? NULL : ns, name, &got, err) != 0) {
        return kt_err_prefix(err, "reading %s %s", kind, name);
    }
    kt_log_debug(LOG, "runtime cache miss kind=%s ns=%s name=%s found=%d", kind, ns, name,
                 got != NULL);
    *owned = json_array();
    if (got) {
        json_object_set_new(got, "apiVersion", json_string(KT_API_VERSION));
        json_object_set_new(got, "kind", json_string(kind));
        json_array_append_new(*owned, got);
    }
    *runtimes = *owned;
    return 0;
}

/* ------------------------------------------------------------------ view */

static const json_t *view_get(void *ctx, const char *av, const char *kind, const char *ns,
                              const char *name)
{
    struct kt_wview *v = ctx;
    json_t *got = NULL;

    if (!v->store->cfg) {
        return find(v->snap->objects, av, kind, ns, name);
    }
    /* Read live, one GET each: a TrainJob's JobSet (runtimePatches changes) and a Volcano
     * runtime's PriorityClass (cluster-scoped); the webhook reads nothing else. */
    const struct kt_kube_gvr *gvr = NULL;
    if (strcmp(kind, "JobSet") == 0 && strcmp(av, "jobset.x-k8s.io/v1alpha2") == 0) {
        gvr = &KT_GVR_JOBSETS;
    } else if (strcmp(kind, "PriorityClass") == 0 && strcmp(av, "scheduling.k8s.io/v1") == 0) {
        gvr = &KT_GVR_PRIORITYCLASSES;
        ns = NULL;
    }
    if (!gvr) {
        return NULL;
    }
    if (live_get(v->store, gvr, ns, name, &got, &v->err) != 0) {
        v->err_set = true;
        kt_err_prefix(&v->err, "reading %s %s%s%s", kind, ns ? ns : "", ns ? "/" : "", name);
        return NULL;
    }
    if (!got) {
        return NULL;
    }
    json_array_append_new(v->fetched, got);
    return got;
}

void kt_wview_init(struct kt_wview *v, struct kt_wstore *s, const struct kt_wsnap *snap)
{
    memset(v, 0, sizeof(*v));
    v->store = s;
    v->snap = snap;
    v->fetched = json_array();
    v->view.get = view_get;
    v->view.ctx = v;
}

void kt_wview_release(struct kt_wview *v)
{
    json_decref(v->fetched);
    memset(v, 0, sizeof(*v));
}
