/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/reconcile.c - see reconcile.h. */
#include "reconcile.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "apply.h"
#include "common/crypto/crypto.h"
#include "common/base/hash.h"
#include "common/base/json.h"
#include "common/base/log.h"
#include "common/framework/snapshot.h"
#include "common/base/mem.h"
#include "common/plugins/plugins.h"
#include "podevents.h"
#include "held.h"
#include "status.h"
#include "unlabelled.h"

#define LOG "reconciler"
#define CONTROLLER "trainjob_controller"

static double real_now(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_of(const struct kt_rec *r)
{
    return r->clock.now ? r->clock.now(r->clock.ctx) : real_now(NULL);
}

/* ---- event handlers (informer loop thread) ---- */

static void enqueue(struct kt_rec *r, const char *key)
{
    const char *labels[] = {CONTROLLER};
    kt_queue_add(r->queue, key);
    kt_metric_inc(r->m_adds, labels);
}

/* obj's queue key: prefix, then namespace/name (name alone when cluster-scoped). Caller frees. */
static char *obj_key(const char *prefix, const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = kt_json_str(meta, "namespace", "");
    return *ns ? kt_xasprintf("%s%s/%s", prefix, ns, kt_json_str(meta, "name", ""))
               : kt_xasprintf("%s%s", prefix, kt_json_str(meta, "name", ""));
}

static void enqueue_obj(struct kt_rec *r, const char *prefix, const json_t *obj)
{
    char *key = obj_key(prefix, obj);
    enqueue(r, key);
    free(key);
}

static void tj_add(void *ud, const json_t *obj)
{
    struct kt_rec *r = ud;
    kt_tjm_trainjob_add(r->tjm, obj, now_of(r));
    enqueue_obj(ud, "", obj);
}

static void tj_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    struct kt_rec *r = ud;
    char *owner = obj_key("", new_obj);
    kt_tjm_trainjob_update(r->tjm, old_obj, new_obj, now_of(r));
    /* the cache shows this revision now: a status write it carries needs no record */
    kt_written_seen(r->written, owner,
                    kt_json_str(json_object_get(new_obj, "metadata"), "resourceVersion", ""));
    enqueue(r, owner);
    free(owner);
}

static void tj_delete(void *ud, const json_t *obj)
{
    struct kt_rec *r = ud;
    kt_tjm_trainjob_delete(r->tjm, obj);
    enqueue_obj(ud, "", obj);
}

static void owned_add(void *ud, const json_t *obj)
{
    const char *owner = kt_controller_trainjob(obj);
    if (owner) {
        char *key = kt_xasprintf(
            "%s/%s", kt_json_str(json_object_get(obj, "metadata"), "namespace", ""), owner);
        enqueue(ud, key);
        free(key);
    }
}

static void owned_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    owned_add(ud, old_obj);
    owned_add(ud, new_obj);
}

static void jobset_add(void *ud, const json_t *obj)
{
    struct kt_rec *r = ud;
    if (kt_controller_trainjob(obj)) {
        kt_tjm_jobset_add(r->tjm, obj, now_of(r));
    }
    owned_add(ud, obj);
}

static void jobset_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    struct kt_rec *r = ud;
    if (kt_controller_trainjob(new_obj)) {
        kt_tjm_jobset_update(r->tjm, old_obj, new_obj, now_of(r));
    }
    owned_update(ud, old_obj, new_obj);
}

/* kt_tjm_framework_fn: the runtime's trainer.kubeflow.org/framework label, else the first
 * policy of its spec.mlPolicy (torch, mpi, ...), from the cache. */
static void runtime_framework(void *ctx, const char *kind, const char *ns, const char *name,
                              char *buf, size_t n)
{
    struct kt_rec *r = ctx;
    bool cluster = strcmp(kind, "ClusterTrainingRuntime") == 0;
    json_t *rt =
        kt_informer_get(cluster ? r->cluster_runtimes : r->runtimes, cluster ? NULL : ns, name);
    const char *fw = kt_json_str(json_object_get(json_object_get(rt, "metadata"), "labels"),
                                 "trainer.kubeflow.org/framework", NULL);
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(json_object_get(rt, "spec"), "mlPolicy"), key, val)
    {
        if (!fw && json_is_object(val)) {
            fw = key;
        }
    }
    snprintf(buf, n, "%s", fw ? fw : "");
    json_decref(rt);
}

static bool has_legacy_finalizer(const json_t *obj)
{
    json_t *f = json_object_get(json_object_get(obj, "metadata"), "finalizers");
    size_t i;
    json_t *v;
    json_array_foreach(f, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), KT_LEGACY_FINALIZER) == 0) {
            return true;
        }
    }
    return false;
}

/* A namespace-scoped reconciler only reads ClusterTrainingRuntimes: their legacy finalizer
 * is left to a cluster-wide install (docs/install.md "Namespace-scoped install"). */
static void rt_add(void *ud, const json_t *obj)
{
    const struct kt_rec *r = ud;
    if (has_legacy_finalizer(obj)) {
        bool cluster = strcmp(kt_json_str(obj, "kind", ""), "ClusterTrainingRuntime") == 0;
        if (!cluster || r->n_namespaces == 0) {
            enqueue_obj(ud, cluster ? "ctr:" : "tr:", obj);
        }
    }
}

static void rt_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    rt_add(ud, new_obj);
}

/* ---- LimitRange and RuntimeClass events: re-reconcile suspended TrainJobs
 * (docs/internals/upstream.md#coscheduling-and-volcano) ---- */

/* True when a replicated job pod template of the runtime object rt_obj (a TrainingRuntime
 * or ClusterTrainingRuntime) names runtime class rc. */
static bool runtime_uses_class(const json_t *rt_obj, const char *rc)
{
    json_t *jobs = json_object_get(
        json_object_get(json_object_get(json_object_get(rt_obj, "spec"), "template"), "spec"),
        "replicatedJobs");
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        json_t *pod = json_object_get(
            json_object_get(json_object_get(json_object_get(job, "template"), "spec"), "template"),
            "spec");
        if (strcmp(kt_json_str(pod, "runtimeClassName", ""), rc) == 0) {
            return true;
        }
    }
    return false;
}

/* True when the runtime tj runs with (its snapshot, else the live runtime) uses class rc. */
static bool trainjob_uses_class(struct kt_rec *r, json_t *tj_obj, const char *rc)
{
    struct kt_trainjob tj = {0};
    struct kt_runtime rt = {0};
    struct kt_err err = {0};
    bool uses = false;
    if (kt_trainjob_decode(json_incref(tj_obj), &tj, &err) != 0) {
        return false;
    }
    char *snap = kt_xasprintf("%s%s", tj.name, KT_SNAPSHOT_SUFFIX);
    json_t *cm = kt_informer_get(r->configmaps, tj.namespace_, snap);
    free(snap);
    if (cm && kt_snapshot_read(cm, &tj, NULL, &rt, &err) == 0) {
        uses = runtime_uses_class(rt.obj, rc);
    } else if (!cm) {
        bool cluster = strcmp(tj.runtime_ref.kind, "ClusterTrainingRuntime") == 0;
        json_t *live = kt_informer_get(cluster ? r->cluster_runtimes : r->runtimes,
                                       cluster ? NULL : tj.namespace_, tj.runtime_ref.name);
        uses = live && runtime_uses_class(live, rc);
        json_decref(live);
    }
    json_decref(cm);
    kt_runtime_release(&rt);
    kt_trainjob_release(&tj);
    return uses;
}

/* Enqueue the suspended TrainJobs in ns (NULL: all) that use runtime class rc (NULL: any). */
static void enqueue_suspended(struct kt_rec *r, const char *what, const char *ns, const char *rc)
{
    json_t *all = kt_informer_snapshot(r->trainjobs);
    json_t *keys = json_array();
    size_t i;
    json_t *tj;
    json_array_foreach(all, i, tj)
    {
        json_t *meta = json_object_get(tj, "metadata");
        const char *tns = kt_json_str(meta, "namespace", "");
        if (!kt_json_bool(json_object_get(tj, "spec"), "suspend", false) ||
            (ns && strcmp(ns, tns) != 0) || (rc && !trainjob_uses_class(r, tj, rc))) {
            continue;
        }
        char *key = kt_xasprintf("%s/%s", tns, kt_json_str(meta, "name", ""));
        enqueue(r, key);
        if (json_array_size(keys) < 10) {
            json_array_append_new(keys, json_string(key));
        }
        free(key);
    }
    if (json_array_size(keys) > 0) {
        char *list = json_dumps(keys, JSON_COMPACT);
        kt_log_info(LOG, "%s changed: re-reconciling suspended trainjobs %s", what, list);
        free(list);
    }
    json_decref(keys);
    json_decref(all);
}

static void lr_add(void *ud, const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = kt_json_str(meta, "namespace", "");
    char *what = kt_xasprintf("limitrange %s/%s", ns, kt_json_str(meta, "name", ""));
    enqueue_suspended(ud, what, ns, NULL);
    free(what);
}

static void lr_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    lr_add(ud, new_obj);
}

static void rc_add(void *ud, const json_t *obj)
{
    const char *name = kt_json_str(json_object_get(obj, "metadata"), "name", "");
    char *what = kt_xasprintf("runtimeclass %s", name);
    enqueue_suspended(ud, what, NULL, name);
    free(what);
}

static void rc_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    rc_add(ud, new_obj);
}

/* ---- store transforms: keep only what the pipeline reads ---- */

/* Keep only the identity (the LimitRange and RuntimeClass handlers need no more). */
static json_t *metadata_only(json_t *obj, void *ud)
{
    (void)ud;
    json_t *meta = json_object_get(obj, "metadata");
    json_t *slim =
        json_pack("{s:O*, s:O*, s:{s:O*, s:O*, s:O*, s:O*}}", "apiVersion",
                  json_object_get(obj, "apiVersion"), "kind", json_object_get(obj, "kind"),
                  "metadata", "name", json_object_get(meta, "name"), "namespace",
                  json_object_get(meta, "namespace"), "uid", json_object_get(meta, "uid"),
                  "resourceVersion", json_object_get(meta, "resourceVersion"));
    json_decref(obj);
    return slim;
}

static json_t *slim_jobset(json_t *obj, void *ud)
{
    (void)ud;
    json_t *spec = json_object_get(obj, "spec");
    json_t *slim = json_pack(
        "{s:O*, s:O*, s:O*, s:{}, s:O*}", "apiVersion", json_object_get(obj, "apiVersion"), "kind",
        json_object_get(obj, "kind"), "metadata", json_object_get(obj, "metadata"), "spec",
        "status", json_object_get(obj, "status"));
    json_t *suspend = json_object_get(spec, "suspend");
    if (suspend) {
        json_object_set(json_object_get(slim, "spec"), "suspend", suspend);
    }
    json_decref(obj);
    return slim;
}

/* TrainJobs without kubectl's kubectl.kubernetes.io/last-applied-configuration annotation, a
 * second copy of the whole object for `kubectl apply` that nothing here reads (deliberate
 * difference: upstream's cache keeps it; docs/compatibility.md). The informer's object may
 * be shared with the LIST page: the metadata is copied before the change. */
#define KT_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

static json_t *drop_last_applied(json_t *obj, void *ud)
{
    (void)ud;
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_object_get(json_object_get(meta, "annotations"), KT_LAST_APPLIED)) {
        return obj;
    }
    json_t *copy = json_copy(obj);
    json_decref(obj);
    meta = json_copy(meta);
    json_t *ann = json_copy(json_object_get(meta, "annotations"));
    json_object_del(ann, KT_LAST_APPLIED);
    json_object_set_new(meta, "annotations", ann);
    json_object_set_new(copy, "metadata", meta);
    return copy;
}

static json_t *drop_secret_data(json_t *obj, void *ud)
{
    (void)ud;
    json_object_del(obj, "data");
    json_object_del(obj, "stringData");
    return obj;
}

/* Objects carrying our label but not controlled by a TrainJob (anyone can label a ConfigMap)
 * are stored as their identity only: they cost ~200 bytes whatever their size, still count
 * as "present" for a name, and are never read. Owned objects go through the kind's slimmer. */
struct owned_slim {
    json_t *(*fn)(json_t *obj, void *ud); /* NULL = store the whole object */
    /* Members the slimmer drops, cut from the text before it is parsed (informer.h): a rule
     * list, static; NULL: none. */
    const struct kt_json_cut_rule *cut;
};
static struct owned_slim SLIM_WHOLE = {.fn = NULL},
                         SLIM_JOBSET = {.fn = slim_jobset, .cut = KT_REC_JOBSET_CUT},
                         SLIM_SECRET = {.fn = drop_secret_data};

static json_t *owned_or_identity(json_t *obj, void *ud)
{
    const struct owned_slim *slim = ud;

    if (!kt_controller_trainjob(obj)) {
        return metadata_only(obj, NULL);
    }
    return slim->fn ? slim->fn(obj, NULL) : obj;
}

/* ---- returning freed heap ---- */

/* The informers parse LIST pages (full objects) before the transforms slim them, and a burst
 * of reconciles leaves per-request JSON behind; the freed chunks sit between live ones, so
 * glibc cannot shrink the heap by itself. malloc_trim(0) gives their pages back. It walks
 * every arena, so it runs once per informer's first LIST and once at the end of each burst
 * of work: when the queue has been empty for KT_TRIM_IDLE_S after a reconcile
 * (kt_rec_trim_idle, from the main thread's tick). */
#define KT_TRIM_IDLE_S 1.0

static void synced_trim(void *ud)
{
    (void)ud;
    malloc_trim(0);
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void kt_rec_trim_idle(struct kt_rec *r)
{
    long long last = atomic_load(&r->last_work_ms);
    if (last == 0 || kt_queue_len(r->queue) != 0 ||
        mono_now() * 1000.0 - (double)last < KT_TRIM_IDLE_S * 1000.0) {
        return;
    }
    if (atomic_compare_exchange_strong(&r->last_work_ms, &last, 0)) {
        malloc_trim(0);
    }
}

/* ---- init ---- */

static bool crd_served(struct kt_kube_client *c, const struct kt_kube_gvr *gvr)
{
    char *path = kt_xasprintf("/apis/%s/%s", gvr->group, gvr->version);
    json_t *list = NULL;
    struct kt_err err = {0};
    bool found = false;
    if (kt_kube_request(c, &(struct kt_kube_http_req){.method = "GET", .path_query = path}, &list,
                        &err) == 0) {
        found = kt_json_arr_find(json_object_get(list, "resources"), "name", gvr->resource, NULL) !=
                NULL;
    }
    json_decref(list);
    free(path);
    return found;
}

/* A namespaced kind's informer watches only r->namespaces when the list is set (a
 * namespace-scoped install), else every namespace. */
static void scope(const struct kt_rec *r, struct kt_informer_opts *o)
{
    o->namespaces = r->namespaces;
    o->n_namespaces = r->n_namespaces;
}

static struct kt_informer *informer(struct kt_rec *r, const struct kt_kube_gvr *gvr,
                                    bool namespaced, const struct kt_informer_handlers *h,
                                    json_t *(*transform)(json_t *, void *))
{
    struct kt_informer_opts o = {
        .gvr = gvr,
        .strip_managed_fields = true,
        .transform = transform,
    };
    if (namespaced) {
        scope(r, &o);
    }
    struct kt_informer *inf = kt_informer_new(&o, h);
    kt_informer_loop_add(r->loop, inf);
    return inf;
}

/* ---- unschedulable JobSet pods: a FailedScheduling event on the TrainJob (podevents.h) ---- */

/* Enqueue the pod when the scheduler has just called it unschedulable (or says something new);
 * the worker decides whether it belongs to a TrainJob of ours. */
static void pod_add(void *ud, const json_t *obj)
{
    if (kt_pod_unschedulable(obj)) {
        enqueue_obj(ud, KT_POD_KEY_PREFIX, obj);
    }
}

static void pod_update(void *ud, const json_t *old_obj, const json_t *new_obj)
{
    const char *was = kt_pod_unschedulable(old_obj), *is = kt_pod_unschedulable(new_obj);
    if (is && (!was || strcmp(was, is) != 0)) {
        enqueue_obj(ud, KT_POD_KEY_PREFIX, new_obj);
    }
}

static const struct kt_kube_gvr GVR_PODS = {.group = "", .version = "v1", .resource = "pods"};

static void pod_watch(struct kt_rec *r)
{
    struct kt_informer_handlers h = {
        .on_add = pod_add, .on_update = pod_update, .on_synced = synced_trim, .ud = r};
    struct kt_informer_opts o = {
        .gvr = &GVR_PODS,
        .label_selector = KT_JOBSET_NAME_LABEL,
        .field_selector = KT_POD_FIELD_SELECTOR,
        .transform = kt_pod_slim,
    };
    scope(r, &o);
    r->sched_limit = kt_evlimit_new();
    r->pods = kt_informer_new(&o, &h);
    kt_informer_loop_add(r->loop, r->pods);
}

/* An informer for a kind we own (selected by our label): strangers kept as identities,
 * LISTs paged by OWNED_LIST_PAGE so a relist holds at most that many full objects (up to
 * ~1.5 MB each) before they are slimmed. */
#define OWNED_LIST_PAGE 20

static struct kt_informer *owned_informer(struct kt_rec *r, const struct kt_kube_gvr *gvr,
                                          const struct kt_informer_handlers *h,
                                          struct owned_slim *slim)
{
    struct kt_informer_opts o = {
        .gvr = gvr,
        .label_selector = KT_TRAINJOB_NAME_LABEL,
        .page_size = OWNED_LIST_PAGE,
        .strip_managed_fields = true,
        .transform = owned_or_identity,
        .transform_ud = slim,
        .cut = slim->cut,
    };
    scope(r, &o); /* owned objects live in their TrainJob's namespace */
    struct kt_informer *inf = kt_informer_new(&o, h);
    kt_informer_loop_add(r->loop, inf);
    return inf;
}

static const struct kt_kube_gvr GVR_LIMITRANGES = {
    .group = "", .version = "v1", .resource = "limitranges"};
static const struct kt_kube_gvr GVR_RUNTIMECLASSES = {
    .group = "node.k8s.io", .version = "v1", .resource = "runtimeclasses"};

/* LimitRanges and RuntimeClasses, metadata only, when a PodGroup policy can be in use. */
static void podgroup_side_watches(struct kt_rec *r)
{
    struct kt_informer_handlers lrh = {.on_add = lr_add,
                                       .on_update = lr_update,
                                       .on_delete = lr_add,
                                       .on_synced = synced_trim,
                                       .ud = r};
    struct kt_informer_handlers rch = {.on_add = rc_add,
                                       .on_update = rc_update,
                                       .on_delete = rc_add,
                                       .on_synced = synced_trim,
                                       .ud = r};
    if (!r->podgroups_sp && !r->podgroups_volcano) {
        return;
    }
    r->limitranges = informer(r, &GVR_LIMITRANGES, true, &lrh, metadata_only);
    r->runtimeclasses = informer(r, &GVR_RUNTIMECLASSES, false, &rch, metadata_only);
}

static bool watched(const struct kt_rec *r, const struct kt_kube_gvr *gvr)
{
    if (kt_rec_gvr_of_builtin(gvr)) {
        return true;
    }
    for (size_t i = 0; i < r->n_extra; i++) {
        if (r->extra_gvr[i] == gvr) {
            return true;
        }
    }
    return false;
}

/* One owned informer per kind a plugin watches that no informer covers yet. */
static void plugin_watches(struct kt_rec *r, struct kt_kube_client *c)
{
    struct kt_informer_handlers owned = {.on_add = owned_add,
                                         .on_update = owned_update,
                                         .on_delete = owned_add,
                                         .on_synced = synced_trim,
                                         .ud = r};
    for (size_t i = 0; i < r->fw.n; i++) {
        const char *const *w = r->fw.plugins[i]->watches;
        for (; w && *w; w++) {
            const char *slash = strrchr(*w, '/');
            char *av = slash ? kt_xstrndup(*w, (size_t)(slash - *w)) : kt_xstrdup("");
            const struct kt_kube_gvr *gvr = NULL;
            struct kt_err err = {0};
            if (kt_rec_kinds_resolve(r->kinds, c, av, slash ? slash + 1 : "", &gvr, &err) != 0) {
                kt_log_warn(LOG, "plugin %s watches %s: not watched: %s", r->fw.plugins[i]->name,
                            *w, err.msg);
            } else if (!watched(r, gvr) && r->n_extra == KT_REC_EXTRA_MAX) {
                kt_log_warn(LOG, "plugin %s watches %s: not watched: more than %d extra kinds",
                            r->fw.plugins[i]->name, *w, KT_REC_EXTRA_MAX);
            } else if (!watched(r, gvr)) {
                r->extra_gvr[r->n_extra] = gvr;
                r->extra[r->n_extra++] = owned_informer(r, gvr, &owned, &SLIM_WHOLE);
                kt_log_info(LOG, "plugin %s: watching owned %s", r->fw.plugins[i]->name, *w);
            }
            free(av);
        }
    }
}

int kt_rec_init(struct kt_rec *r, struct kt_kube_client *c, struct kt_err *err)
{
    (void)err;
    struct kt_informer_handlers tjh = {.on_add = tj_add,
                                       .on_update = tj_update,
                                       .on_delete = tj_delete,
                                       .on_synced = synced_trim,
                                       .ud = r};
    struct kt_informer_handlers owned = {.on_add = owned_add,
                                         .on_update = owned_update,
                                         .on_delete = owned_add,
                                         .on_synced = synced_trim,
                                         .ud = r};
    struct kt_informer_handlers jsh = {.on_add = jobset_add,
                                       .on_update = jobset_update,
                                       .on_delete = owned_add,
                                       .on_synced = synced_trim,
                                       .ud = r};
    struct kt_informer_handlers rth = {
        .on_add = rt_add, .on_update = rt_update, .on_synced = synced_trim, .ud = r};

    if (!r->fw.plugins) {
        kt_framework_default(&r->fw);
    }
    pthread_mutex_init(&r->ev_mu, NULL);
    if (r->start_time <= 0) {
        r->start_time = now_of(r);
    }
    r->kinds = kt_rec_kinds_new();
    r->applied = kt_applied_new();
    r->written = kt_written_new();
    r->held = kt_held_new();
    r->snaps = kt_snapcache_new();
    if (r->metrics) {
        r->tjm = kt_tjm_new(r->metrics, r->start_time, runtime_framework, r);
    }
    r->loop = kt_informer_loop_new(r->cfg);
    r->trainjobs = informer(r, &KT_GVR_TRAINJOBS, true, &tjh, drop_last_applied);
    r->runtimes = informer(r, &KT_GVR_TRAININGRUNTIMES, true, &rth, NULL);
    r->cluster_runtimes = informer(r, &KT_GVR_CLUSTERTRAININGRUNTIMES, false, &rth, NULL);
    r->jobsets = owned_informer(r, &KT_GVR_JOBSETS, &jsh, &SLIM_JOBSET);
    r->configmaps = owned_informer(r, &KT_GVR_CONFIGMAPS, &owned, &SLIM_WHOLE);
    r->secrets = owned_informer(r, &KT_GVR_SECRETS, &owned, &SLIM_SECRET);
    if (crd_served(c, &KT_GVR_PODGROUPS_SP)) {
        r->podgroups_sp = owned_informer(r, &KT_GVR_PODGROUPS_SP, &owned, &SLIM_WHOLE);
    }
    if (crd_served(c, &KT_GVR_PODGROUPS_VOLCANO)) {
        r->podgroups_volcano = owned_informer(r, &KT_GVR_PODGROUPS_VOLCANO, &owned, &SLIM_WHOLE);
    }
    podgroup_side_watches(r);
    plugin_watches(r, c);
    pod_watch(r);
    kt_log_info(LOG, "informers ready podgroups_scheduler_plugins=%s podgroups_volcano=%s",
                r->podgroups_sp ? "yes" : "no", r->podgroups_volcano ? "yes" : "no");
    return 0;
}

/* The resources of the owned informers (what view_get may read live for a legacy TrainJob:
 * informer_for's domain) into gvrs; returns the count. */
static size_t owned_gvrs(const struct kt_rec *r, const struct kt_kube_gvr **gvrs)
{
    size_t n = 0;
    gvrs[n++] = &KT_GVR_CONFIGMAPS;
    gvrs[n++] = &KT_GVR_SECRETS;
    gvrs[n++] = &KT_GVR_JOBSETS;
    if (r->podgroups_sp) {
        gvrs[n++] = &KT_GVR_PODGROUPS_SP;
    }
    if (r->podgroups_volcano) {
        gvrs[n++] = &KT_GVR_PODGROUPS_VOLCANO;
    }
    for (size_t i = 0; i < r->n_extra; i++) {
        gvrs[n++] = r->extra_gvr[i];
    }
    return n;
}

void kt_rec_scan_unlabelled(struct kt_rec *r, struct kt_kube_client *c)
{
    const struct kt_kube_gvr *gvrs[5 + KT_REC_EXTRA_MAX];
    size_t n = owned_gvrs(r, gvrs);
    struct kt_err err = {0};
    /* Before the LISTs: an object they miss was created after this instant. */
    r->start_time = now_of(r);
    kt_unlabelled_free(r->unlabelled);
    r->unlabelled = kt_unlabelled_scan(c, gvrs, n, r->namespaces, r->n_namespaces, &err);
    if (kt_unlabelled_failed(r->unlabelled) > 0) {
        kt_log_warn(LOG,
                    "listing unlabelled owned objects failed for %zu source(s): TrainJobs created "
                    "before now read those objects live (the other kinds use the scan): %s",
                    kt_unlabelled_failed(r->unlabelled), err.msg);
    }
    kt_log_info(LOG, "unlabelled objects controlled by a TrainJob: %zu",
                kt_unlabelled_len(r->unlabelled));
    malloc_trim(0); /* the LIST pages are gone */
}

/* Every informer (NULL entries for the optional ones) into all; returns the count. */
static size_t all_informers(struct kt_rec *r, struct kt_informer **all)
{
    struct kt_informer *fixed[] = {
        r->trainjobs, r->runtimes,     r->cluster_runtimes,  r->jobsets,     r->configmaps,
        r->secrets,   r->podgroups_sp, r->podgroups_volcano, r->limitranges, r->runtimeclasses,
        r->pods};
    size_t n = 0;
    for (size_t i = 0; i < KT_ARRAY_SIZE(fixed); i++) {
        all[n++] = fixed[i];
    }
    for (size_t i = 0; i < r->n_extra; i++) {
        all[n++] = r->extra[i];
    }
    return n;
}

void kt_rec_release(struct kt_rec *r)
{
    struct kt_informer *all[11 + KT_REC_EXTRA_MAX];
    size_t n = all_informers(r, all);
    pthread_mutex_destroy(&r->ev_mu);
    kt_evlimit_free(r->sched_limit);
    r->sched_limit = NULL;
    kt_informer_loop_free(r->loop);
    for (size_t i = 0; i < n; i++) {
        kt_informer_free(all[i]);
    }
    kt_rec_kinds_free(r->kinds);
    r->kinds = NULL;
    kt_applied_free(r->applied);
    kt_tjm_free(r->tjm);
    r->applied = NULL;
    kt_written_free(r->written);
    r->written = NULL;
    kt_held_free(r->held);
    r->held = NULL;
    kt_snapcache_free(r->snaps);
    r->snaps = NULL;
    kt_unlabelled_free(r->unlabelled);
    r->unlabelled = NULL;
    r->loop = NULL;
}

bool kt_rec_synced(struct kt_rec *r)
{
    char why[8];
    return !kt_rec_unsynced_reason(r, why, sizeof(why));
}

bool kt_rec_unsynced_reason(struct kt_rec *r, char *buf, size_t n)
{
    struct kt_informer *all[11 + KT_REC_EXTRA_MAX];
    size_t len = all_informers(r, all);
    for (size_t i = 0; i < len; i++) {
        /* The pod watch only feeds events: a cluster whose RBAC predates it still works. */
        if (all[i] && all[i] != r->pods && kt_informer_unsynced_reason(all[i], buf, n)) {
            return true;
        }
    }
    return false;
}

/* ---- the cluster view of one reconcile ---- */

struct rview {
    struct kt_rec *r;
    struct kt_kube_client *c;
    const struct kt_trainjob *tj;
    const struct kt_view *view;
    bool legacy;  /* the TrainJob predates this process: unlabelled objects may exist */
    json_t *seen; /* "apiVersion|kind|ns|name" -> object, or null for "absent" */
    struct kt_err err;
    bool failed;      /* a live read failed (not NotFound): the reconcile must be retried */
    double requeue_s; /* > 0: reconcile again this much later (an apply skipped: apply_changed) */
};

static struct kt_informer *informer_for(struct kt_rec *r, const struct kt_kube_gvr *gvr)
{
    if (gvr == &KT_GVR_CONFIGMAPS) {
        return r->configmaps;
    }
    if (gvr == &KT_GVR_SECRETS) {
        return r->secrets;
    }
    if (gvr == &KT_GVR_JOBSETS) {
        return r->jobsets;
    }
    if (gvr == &KT_GVR_PODGROUPS_SP) {
        return r->podgroups_sp;
    }
    if (gvr == &KT_GVR_PODGROUPS_VOLCANO) {
        return r->podgroups_volcano;
    }
    for (size_t i = 0; i < r->n_extra; i++) {
        if (r->extra_gvr[i] == gvr) {
            return r->extra[i];
        }
    }
    return NULL;
}

/* Label an unlabelled object that this TrainJob controls, so that the informers select it
 * from now on (migration from upstream, which did not label). Best effort. */
static void adopt(struct rview *v, const struct kt_kube_gvr *gvr, const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *owner = kt_controller_trainjob(obj);
    if (!owner || strcmp(owner, v->tj->name) != 0 ||
        json_object_get(json_object_get(meta, "labels"), KT_TRAINJOB_NAME_LABEL)) {
        return;
    }
    json_t *patch =
        json_pack("{s:{s:{s:s}}}", "metadata", "labels", KT_TRAINJOB_NAME_LABEL, v->tj->name);
    struct kt_err err = {0};
    if (kt_kube_merge_patch(v->c,
                            &(struct kt_kube_ref){.gvr = gvr,
                                                  .ns = kt_json_str(meta, "namespace", ""),
                                                  .name = kt_json_str(meta, "name", "")},
                            patch, NULL, &err) != 0) {
        kt_log_warn(LOG, "adopting %s %s failed: %s", gvr->resource, kt_json_str(meta, "name", ""),
                    err.msg);
    } else {
        kt_log_info(LOG, "labelled legacy %s %s/%s", gvr->resource,
                    kt_json_str(meta, "namespace", ""), kt_json_str(meta, "name", ""));
    }
    json_decref(patch);
}

static json_t *live_get(struct rview *v, const struct kt_kube_gvr *gvr, const char *ns,
                        const char *name)
{
    json_t *obj = NULL;
    struct kt_err err = {0};
    if (kt_kube_get(v->c, gvr, ns, name, &obj, &err) != 0) {
        if (err.code != KT_ENOENT && !v->failed) {
            v->failed = true;
            v->err = err;
        }
        return NULL;
    }
    adopt(v, gvr, obj);
    return obj;
}

/* Whether a legacy TrainJob's object gvr ns/name, absent from its informer, may exist
 * unlabelled and must be read live: only when the start-up scan listed it, or when there was
 * no scan (it failed, or the caller did not run one). The one object this misses is one that
 * another writer (upstream's manager still running) creates unlabelled after the scan for a
 * TrainJob older than it: the same case a TrainJob created after our start already has (no
 * live read at all), and two managers writing the same TrainJob's objects are unsupported
 * anyway. The reconcile then treats it as absent and applies its own object of that name
 * over it (labelled; for the immutable MPI SSH Secret the apply fails with a Warning event,
 * as for a TrainJob created after our start). The scan keeps only TrainJob-controlled
 * objects, so an unlabelled object with another controller, or none, is no longer read live
 * for a legacy TrainJob either: the same as for any other TrainJob. */
static bool maybe_unlabelled(const struct kt_rec *r, const struct kt_kube_gvr *gvr, const char *ns,
                             const char *name)
{
    return !r->unlabelled || kt_unlabelled_has(r->unlabelled, gvr, ns, name);
}

static const json_t *view_get(void *ctx, const char *api_version, const char *kind, const char *ns,
                              const char *name)
{
    struct rview *v = ctx;
    char *key = kt_xasprintf("%s|%s|%s|%s", api_version, kind, ns ? ns : "", name);
    json_t *obj = json_object_get(v->seen, key);
    if (!obj) {
        const struct kt_kube_gvr *gvr = NULL;
        struct kt_err err = {0};
        if (kt_rec_kinds_resolve(v->r->kinds, v->c, api_version, kind, &gvr, &err) != 0 &&
            err.code != KT_EUNSUPPORTED && !v->failed) {
            v->failed = true;
            v->err = err;
        }
        struct kt_informer *inf = gvr ? informer_for(v->r, gvr) : NULL;
        json_t *got = inf ? kt_informer_get(inf, ns, name) : NULL;
        /* Our informers hold only objects labelled with a TrainJob's name, in TrainJob
         * namespaces; an object elsewhere (the status server's certificate Secret in the
         * operator namespace) is read live. */
        bool foreign = ns && *ns && strcmp(ns, v->tj->namespace_) != 0;
        if (!got && gvr &&
            ((inf && v->legacy && maybe_unlabelled(v->r, gvr, ns, name)) || !inf || foreign)) {
            got = live_get(v, gvr, ns, name);
        }
        obj = got ? got : json_null();
        json_object_set_new(v->seen, key, obj);
    }
    free(key);
    return json_is_null(obj) ? NULL : obj;
}

/* Record what the server returned for an applied object, so the rest of this reconcile
 * (the status step) sees it even before the informer does. */
static void view_put(struct rview *v, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    char *key = kt_xasprintf("%s|%s|%s|%s", kt_json_str(obj, "apiVersion", ""),
                             kt_json_str(obj, "kind", ""), kt_json_str(meta, "namespace", ""),
                             kt_json_str(meta, "name", ""));
    json_object_set_new(v->seen, key, obj);
    free(key);
}

static int view_keygen(void *ctx, char **private_pem, char **public_line, struct kt_err *err)
{
    (void)ctx;
    struct kt_ssh_key key = {0};
    if (kt_crypto_ssh_key_generate(&key, err) != 0) {
        return -1;
    }
    *private_pem = key.private_pem;
    *public_line = key.public_line;
    return 0;
}

/* The view's snapshot_parse: the process's cache of parsed snapshots (snapcache.h). */
static json_t *view_snapshot_parse(void *ctx, const char *text, struct kt_err *err)
{
    struct rview *v = ctx;
    return kt_snapcache_parse(v->r->snaps, text, err);
}

/* ---- build and apply (docs/internals/upstream.md#trainjob-reconcile step 5) ---- */

/* The live runtime of tj into rt; 0 found, 1 not found, -1 error. */
static int get_runtime(struct rview *v, struct kt_runtime *rt, struct kt_err *err)
{
    const struct kt_trainjob *tj = v->tj;
    bool cluster = strcmp(tj->runtime_ref.kind, "ClusterTrainingRuntime") == 0;
    const char *ns = cluster ? NULL : tj->namespace_;
    struct kt_informer *inf = cluster ? v->r->cluster_runtimes : v->r->runtimes;
    const struct kt_kube_gvr *gvr =
        cluster ? &KT_GVR_CLUSTERTRAININGRUNTIMES : &KT_GVR_TRAININGRUNTIMES;
    json_t *obj = kt_informer_get(inf, ns, tj->runtime_ref.name);
    if (!obj && kt_kube_get(v->c, gvr, ns, tj->runtime_ref.name, &obj, err) != 0) {
        return err->code == KT_ENOENT ? 1 : -1;
    }
    return kt_runtime_decode(obj, rt, err) == 0 ? 0 : -1;
}

/* The resourceVersion the cache (this reconcile's view, else the informer) shows for o, or
 * "" when it has none. Never a live read. Caller frees. */
static char *cached_rv(struct rview *v, const json_t *o)
{
    const char *av = kt_json_str(o, "apiVersion", ""), *kind = kt_json_str(o, "kind", "");
    json_t *meta = json_object_get(o, "metadata");
    const char *ns = kt_json_str(meta, "namespace", ""), *name = kt_json_str(meta, "name", "");
    char *key = kt_xasprintf("%s|%s|%s|%s", av, kind, ns, name);
    const json_t *seen = json_object_get(v->seen, key);
    free(key);
    if (seen) {
        return kt_xstrdup(kt_json_str(json_object_get(seen, "metadata"), "resourceVersion", ""));
    }
    /* the informer's stored revision, without parsing the stored object */
    const struct kt_kube_gvr *gvr = kt_rec_kinds_lookup(v->r->kinds, av, kind);
    struct kt_informer *inf = gvr ? informer_for(v->r, gvr) : NULL;
    char rv[64] = "";
    if (inf) {
        kt_informer_rv(inf, ns, name, rv, sizeof(rv));
    }
    return kt_xstrdup(rv);
}

/* How long an object this process applied may be absent from the cache before it is taken
 * for gone and applied again (kt_applied_recent): its watch event normally comes within
 * milliseconds; a reconcile in between (the TrainJob's snapshot ConfigMap's event arriving
 * first) would otherwise apply the same JobSet twice. */
#define KT_APPLY_SETTLE_S 2.0

/* Lower *requeue_s to s when s > 0 comes sooner than what is asked already (0: nothing). */
static void requeue_sooner(double *requeue_s, double s)
{
    if (s > 0 && (*requeue_s <= 0 || s < *requeue_s)) {
        *requeue_s = s;
    }
}

/* Apply o unless this process applied the same o last and the cache still shows the
 * revision that apply produced, or applied it a moment ago and the cache does not show it yet
 * (applied.h; then v->requeue_s asks for a reconcile once it should). */
static int apply_changed(struct rview *v, const json_t *o, struct kt_err *err)
{
    json_t *meta = json_object_get(o, "metadata");
    char *okey =
        kt_xasprintf("%s|%s|%s|%s", kt_json_str(o, "apiVersion", ""), kt_json_str(o, "kind", ""),
                     kt_json_str(meta, "namespace", ""), kt_json_str(meta, "name", ""));
    char *owner = kt_xasprintf("%s/%s", v->tj->namespace_, v->tj->name);
    uint64_t content = kt_applied_hash_obj(o);
    char *rv = cached_rv(v, o);
    int rc = 0;
    double now = mono_now(), left = 0;
    if (!*rv &&
        kt_applied_recent(v->r->applied, owner, okey, content, now, KT_APPLY_SETTLE_S, &left)) {
        /* applied a moment ago, its watch event not here yet: the rest of this reconcile sees
         * what was applied (as after an apply), and it looks again once the event is due */
        view_put(v, json_deep_copy(o));
        requeue_sooner(&v->requeue_s, left);
    } else if (!kt_applied_same(v->r->applied, owner, okey, content, rv)) {
        json_t *resp = NULL;
        rc = kt_rec_apply(v->c, v->r->kinds, o, &resp, err);
        if (rc == 0 && resp) {
            kt_applied_put_at(v->r->applied, owner, okey, content,
                              kt_json_str(json_object_get(resp, "metadata"), "resourceVersion", ""),
                              now);
            view_put(v, resp);
        }
    }
    free(rv);
    free(owner);
    free(okey);
    return rc;
}

static int build_and_apply(struct rview *v, const struct kt_view *view, struct kt_err *err)
{
    const struct kt_trainjob *tj = v->tj;
    struct kt_runtime rt = {0};
    json_t *objs = NULL;
    int found = 1, rc = -1;
    char *snap = kt_xasprintf("%s%s", tj->name, KT_SNAPSHOT_SUFFIX);
    if (!kt_view_get(view, "v1", "ConfigMap", tj->namespace_, snap)) {
        found = get_runtime(v, &rt, err);
    }
    free(snap);
    if (found < 0 || v->failed) {
        if (v->failed) {
            *err = v->err;
        }
        goto out;
    }
    if (kt_framework_build(&v->r->fw, tj, found == 0 ? &rt : NULL, view, &objs, err) != 0) {
        goto out;
    }
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        if (apply_changed(v, o, err) != 0) {
            goto out;
        }
    }
    rc = 0;
out:
    json_decref(objs);
    kt_runtime_release(&rt);
    return rc;
}

/* True when the same message was recorded for this TrainJob recently (then it is skipped);
 * otherwise remembers it. */
static bool event_seen(struct kt_rec *r, const struct kt_trainjob *tj, const char *msg)
{
    uint64_t kh = kt_fnv64_str(kt_fnv64_sep(kt_fnv64_str(KT_FNV64_BASIS, tj->namespace_)), tj->uid);
    uint64_t mh = kt_fnv64_str(KT_FNV64_BASIS, msg);
    double now = now_of(r);
    struct kt_rec_event_slot *s = &r->ev_slots[kh % (KT_ARRAY_SIZE(r->ev_slots))];
    pthread_mutex_lock(&r->ev_mu);
    bool seen = s->key_hash == kh && s->msg_hash == mh && now - s->at < KT_EVENT_DEDUP_S;
    if (!seen) {
        s->key_hash = kh;
        s->msg_hash = mh;
        s->at = now;
    }
    pthread_mutex_unlock(&r->ev_mu);
    return seen;
}

static void warn_event(struct rview *v, const char *msg)
{
    if (event_seen(v->r, v->tj, msg)) {
        return;
    }
    char *note = kt_rec_event_note(msg);
    struct kt_kube_event ev = {.involved = v->tj->obj,
                               .type = "Warning",
                               .reason = KT_EVENT_REASON_FAILED,
                               .message = note,
                               .component = KT_EVENT_COMPONENT};
    struct kt_err err = {0};
    if (kt_kube_event_create(v->c, &ev, &err) != 0) {
        kt_log_warn(LOG, "event for trainjob %s/%s failed: %s", v->tj->namespace_, v->tj->name,
                    err.msg);
    }
    free(note);
}

/* ---- status (docs/internals/upstream.md#trainjob-reconcile steps 6-9) ---- */

static void join_err(struct kt_err *into, const struct kt_err *e)
{
    if (into->code == KT_OK) {
        *into = *e;
    } else {
        struct kt_err tmp = *into;
        kt_err_set(into, tmp.code, "%s\n%s", tmp.msg, e->msg);
    }
}

static void delete_jobset(struct rview *v)
{
    struct kt_err err = {0};
    struct kt_kube_delete_opts o = {.propagation_policy = "Background"};
    if (kt_kube_delete(v->c, &KT_GVR_JOBSETS, v->tj->namespace_, v->tj->name, &o, &err) != 0 &&
        err.code != KT_ENOENT) {
        kt_log_info(LOG, "deleting jobset %s/%s after the deadline failed: %s", v->tj->namespace_,
                    v->tj->name, err.msg);
    }
}

static const char *cached_tj_rv(const struct kt_trainjob *tj)
{
    return kt_json_str(json_object_get(tj->obj, "metadata"), "resourceVersion", "");
}

/* The status this reconcile starts from: the one this process wrote last when the cache does
 * not show it yet (written.h), else the cache's. Caller owns the result. */
static json_t *start_status(struct kt_rec *r, const char *owner, const struct kt_trainjob *tj)
{
    json_t *w = kt_written_get(r->written, owner, tj->uid, cached_tj_rv(tj));
    const json_t *from = w ? w : tj->status;
    json_t *orig = json_is_object(from) ? json_deep_copy(from) : json_object();
    json_decref(w);
    return orig;
}

/* The merge patch from orig to st, when they differ; the server's answer is recorded for the
 * reconciles that read the cache before its watch delivers it (written.h). */
static int patch_status(struct rview *v, const char *owner, json_t *orig, json_t *st,
                        struct kt_err *err)
{
    if (kt_json_equal(orig, st)) {
        return 0;
    }
    json_t *patch = json_pack("{s:o}", "status", kt_rec_merge_patch(orig, st));
    json_t *resp = NULL;
    int rc = kt_kube_merge_patch(v->c,
                                 &(struct kt_kube_ref){.gvr = &KT_GVR_TRAINJOBS,
                                                       .ns = v->tj->namespace_,
                                                       .name = v->tj->name,
                                                       .subresource = "status"},
                                 patch, &resp, err);
    json_decref(patch);
    if (rc == 0 && resp) {
        kt_written_put(v->r->written, owner, v->tj->uid, cached_tj_rv(v->tj), resp);
        /* its watch event may have been stored before the answer came: no handler drops it */
        char rv[64];
        if (kt_informer_rv(v->r->trainjobs, v->tj->namespace_, v->tj->name, rv, sizeof(rv))) {
            kt_written_seen(v->r->written, owner, rv);
        }
    } else {
        kt_written_forget(v->r->written, owner);
    }
    json_decref(resp);
    if (rc != 0 && err->code == KT_ENOENT) {
        return 0; /* deleted meanwhile */
    }
    return rc;
}

/* The runtime's spec.runPolicy for v's TrainJob (provisional, KEP-2899): from its snapshot
 * (the runtime it runs with), else the cached runtime; zeroed when neither is at hand or the
 * TrainJob sets both fields itself. Never a live read of the runtime: a finished TrainJob
 * whose snapshot and runtime are gone simply has no runtime defaults. */
static void run_policy(struct rview *v, bool supported, struct kt_run_policy *out)
{
    const struct kt_trainjob *tj = v->tj;
    struct kt_runtime rt = {0};
    struct kt_err err = {0};
    int rc = -1;
    memset(out, 0, sizeof(*out));
    if (!supported || (tj->active_deadline_seconds.has && tj->ttl_seconds_after_finished.has)) {
        return;
    }
    char *snap = kt_xasprintf("%s%s", tj->name, KT_SNAPSHOT_SUFFIX);
    const json_t *cm = kt_view_get(v->view, "v1", "ConfigMap", tj->namespace_, snap);
    free(snap);
    if (cm) {
        /* Parsing the snapshot's YAML on every reconcile for a field few runtimes have would
         * double the cost of a reconcile: only a runtime that names it is parsed. */
        const char *text = kt_json_str(json_object_get(cm, "data"), "runtime", "");
        rc = strstr(text, "runPolicy")
                 ? kt_snapshot_read(cm, tj, &v->view->snapshot_parser, &rt, &err)
                 : -1;
    } else {
        bool cluster = strcmp(tj->runtime_ref.kind, "ClusterTrainingRuntime") == 0;
        json_t *obj = kt_informer_get(cluster ? v->r->cluster_runtimes : v->r->runtimes,
                                      cluster ? NULL : tj->namespace_, tj->runtime_ref.name);
        rc = obj ? kt_runtime_decode(obj, &rt, &err) : -1;
    }
    if (rc == 0) {
        *out = rt.run_policy;
    }
    kt_runtime_release(&rt);
}

/* What the status steps of one reconcile share. */
struct status_pass {
    const char *owner; /* "ns/name" */
    json_t *orig;      /* the status as stored (borrowed) */
    bool supported;    /* the runtime kind is supported (build_step) */
    double now;
    int64_t held_start;  /* the startTime a held write chose (held.h), -1 = none */
    double *requeue_s;   /* lowered when a deadline or a TTL is due later */
    struct kt_err *errs; /* the reconcile's errors, joined */
};

/* Steps 6-8 on st (stolen), with the provisional start/completion times; returns the new
 * status. */
static json_t *compute_status(struct rview *v, struct kt_trainjob *tj, const struct status_pass *p,
                              json_t *st, const struct kt_run_policy *rp)
{
    bool supported = p->supported;
    double now = p->now;
    kt_rec_set_suspended(st, tj->suspend, (int64_t)floor(now));
    if (supported) {
        json_t *pst = NULL;
        struct kt_err e = {0};
        json_object_set(tj->obj, "status", st);
        tj->status = st;
        double t0 = mono_now();
        int rc = kt_framework_status(&v->r->fw, tj, v->view, &pst, &e);
        kt_tjm_phase(v->r->tjm, KT_TJM_PHASE_POST, mono_now() - t0, rc != 0);
        if (rc != 0) {
            join_err(p->errs, &e);
        }
        st = kt_rec_take_plugin_status(st, pst);
    }
    struct kt_opt_i64 deadline = kt_rec_resolve(tj->active_deadline_seconds,
                                                supported ? &rp->active_deadline_seconds : NULL);
    if (kt_rec_check_deadline(tj, deadline, st, now, p->requeue_s) == KT_DEADLINE_EXCEEDED) {
        delete_jobset(v);
    }
    kt_rec_set_times(st, tj->suspend, (int64_t)floor(now), p->held_start);
    return st;
}

/* ttlSecondsAfterFinished (provisional, KEP-2899): delete the finished TrainJob once its TTL
 * has passed. Only a finish already stored in orig counts, so the Complete/Failed condition
 * is written (and seen by watchers) before the TrainJob goes, even with a TTL of 0. Not yet
 * due: *requeue_s = the time left (one timer, no polling; a TrainJob update - a changed TTL -
 * re-reconciles anyway; after a restart the first reconcile acts on a TTL that expired while
 * kt was down). Returns 1 when the TrainJob is deleted (or gone), 0 otherwise, -1 + err when
 * the delete failed (retried with backoff).
 *
 * Foreground propagation, as Kubernetes' TTL-after-finished controller deletes Jobs: the
 * TrainJob stays (with a deletionTimestamp) until the garbage collector has removed its
 * JobSet, Jobs, pods, ConfigMaps and Secrets, so its name is not free for a new TrainJob
 * while the old one's objects, which carry the same names, still exist. The uid and
 * resourceVersion preconditions make a TTL edited after this reconcile read the object win. */
static int ttl_delete(struct rview *v, const struct status_pass *p, const json_t *st,
                      struct kt_opt_i64 ttl, struct kt_err *err)
{
    json_t *meta = json_object_get(v->tj->obj, "metadata");
    double left = 0;
    if (json_object_get(meta, "deletionTimestamp")) {
        return 0;
    }
    enum kt_rec_ttl due = kt_rec_check_ttl(st, ttl, p->now, &left);
    if (due == KT_TTL_NONE) {
        return 0;
    }
    if (due == KT_TTL_PENDING || !kt_rec_finished(p->orig)) {
        *p->requeue_s = left > 0 ? left : 0.05; /* after the status write this reconcile makes */
        return 0;
    }
    struct kt_kube_delete_opts o = {.uid = v->tj->uid,
                                    .resource_version = kt_json_str(meta, "resourceVersion", NULL),
                                    .propagation_policy = "Foreground"};
    if (kt_kube_delete(v->c, &KT_GVR_TRAINJOBS, v->tj->namespace_, v->tj->name, &o, err) != 0) {
        return err->code == KT_ENOENT ? 1 : -1;
    }
    kt_log_info(LOG, "trainjob %s/%s deleted: ttlSecondsAfterFinished %lld passed",
                v->tj->namespace_, v->tj->name, (long long)ttl.v);
    return 1;
}

/* docs/internals/upstream.md#trainjob-reconcile steps 4-5 on st: an unknown runtime kind fails the
 * TrainJob; otherwise its objects are built and applied unless it is finished. Terminal is
 * terminal: a TrainJob this process has seen finished builds nothing, even from a cached copy older
 * than its stored finish (the TrainJob watch may lag behind the JobSet watch reporting the JobSet
 * deleted). Returns whether the runtime kind is supported. */
static bool build_step(struct rview *v, const char *owner, json_t *st, double now,
                       struct kt_err *errs)
{
    struct kt_err e = {0};
    char *key = kt_runtime_key(v->tj);
    bool supported = kt_runtime_key_supported(key);
    if (!supported) {
        char *msg = kt_xasprintf("unsupported runtime: %s", key);
        kt_rec_set_condition(st, KT_COND_FAILED, "True", KT_REASON_NOT_SUPPORTED, msg,
                             (int64_t)floor(now));
        kt_err_set(&e, KT_EUNSUPPORTED, "%s", msg);
        join_err(errs, &e);
        free(msg);
    } else if (!kt_rec_finished(st) && !kt_applied_finished(v->r->applied, owner, v->tj->uid)) {
        double t0 = mono_now();
        int rc = build_and_apply(v, v->view, &e);
        kt_tjm_phase(v->r->tjm, KT_TJM_PHASE_BUILD, mono_now() - t0, rc != 0);
        if (rc != 0) {
            warn_event(v, e.msg);
            kt_rec_set_creation_failed(st, &e, (int64_t)floor(now));
            join_err(errs, &e);
        } else {
            kt_rec_remove_condition(st, KT_COND_CREATION_FAILED);
        }
    }
    free(key);
    return supported;
}

/* Whether the write from p->orig to st is held back (held.h): it may wait
 * (kt_rec_status_write_can_wait) and the batch window, counted from the first held change, has
 * not passed; the reconcile then requeues itself for the end of the window. A write that goes
 * out carries every held change with it. */
static bool hold_status(struct rview *v, const struct status_pass *p, json_t *st)
{
    struct kt_rec *r = v->r;
    if (r->status_batch_s <= 0 || !kt_rec_status_write_can_wait(p->orig, st)) {
        return false;
    }
    double since;
    int64_t start;
    if (!kt_held_get(r->held, p->owner, v->tj->uid, &since, &start)) {
        bool adds_start = !json_object_get(p->orig, "startTime");
        start = adds_start ? kt_rec_parse_time(kt_json_str(st, "startTime", "")) : -1;
        kt_held_hold(r->held, p->owner, v->tj->uid, p->now, start);
        since = p->now;
    }
    double left = since + r->status_batch_s - p->now;
    if (left <= 0) {
        return false;
    }
    requeue_sooner(p->requeue_s, left);
    return true;
}

/* Steps 6-9 and the TTL: the new status from st (stolen), then either the TrainJob's deletion
 * or the status write. */
static void status_step(struct rview *v, struct kt_trainjob *tj, const struct status_pass *p,
                        json_t *st)
{
    struct kt_err e = {0};
    struct kt_run_policy rp;
    run_policy(v, p->supported, &rp);
    st = compute_status(v, tj, p, st, &rp);
    if (kt_rec_finished(st)) {
        kt_applied_mark_finished(v->r->applied, p->owner, tj->uid);
    }
    struct kt_opt_i64 ttl = kt_rec_resolve(tj->ttl_seconds_after_finished,
                                           p->supported ? &rp.ttl_seconds_after_finished : NULL);
    int gone = ttl_delete(v, p, st, ttl, &e);
    if (gone < 0) {
        join_err(p->errs, &e);
    }
    e.code = KT_OK;
    if (gone <= 0 && !hold_status(v, p, st)) {
        if (patch_status(v, p->owner, p->orig, st, &e) != 0) {
            join_err(p->errs, &e);
        } else {
            kt_held_forget(v->r->held, p->owner); /* written, or nothing to write */
        }
    }
    json_decref(st);
}

static int reconcile_trainjob(struct kt_rec *r, struct kt_kube_client *c, const char *ns,
                              const char *name, double *requeue_s, struct kt_err *err)
{
    struct kt_trainjob tj = {0};
    char *owner = kt_xasprintf("%s/%s", ns, name);
    json_t *raw = kt_informer_get(r->trainjobs, ns, name);
    int rc = 0;
    if (!raw) {
        kt_applied_forget(r->applied, owner); /* deleted */
        kt_written_forget(r->written, owner);
        kt_held_forget(r->held, owner);
        goto out;
    }
    if (kt_trainjob_decode(raw, &tj, err) != 0) {
        kt_log_error(LOG, "trainjob %s/%s cannot be decoded: %s", ns, name, err->msg);
        goto out; /* retrying will not help; the next update event will */
    }
    if (strcmp(tj.managed_by, KT_MANAGED_BY_DEFAULT) != 0) {
        kt_log_debug(LOG, "trainjob %s/%s is managed by %s: skipped", ns, name, tj.managed_by);
        goto out;
    }
    double now = now_of(r);
    json_t *meta = json_object_get(tj.obj, "metadata");
    int64_t created = kt_rec_parse_time(kt_json_str(meta, "creationTimestamp", ""));
    struct rview v = {.r = r,
                      .c = c,
                      .tj = &tj,
                      .legacy = created < 0 || (double)created < r->start_time,
                      .seen = json_object(),
                      .err = {0}};
    struct kt_view view = {.get = view_get,
                           .ctx = &v,
                           .ssh_keygen = view_keygen,
                           .snapshot_parser = {.parse = view_snapshot_parse, .ctx = &v}};
    struct kt_err errs = {0};
    v.view = &view;
    json_t *orig = start_status(r, owner, &tj);
    json_t *st = json_deep_copy(orig);
    double held_since;
    int64_t held_start;
    kt_held_get(r->held, owner, tj.uid, &held_since, &held_start);
    struct status_pass pass = {.owner = owner,
                               .orig = orig,
                               .held_start = held_start,
                               .supported = build_step(&v, owner, st, now, &errs),
                               .now = now,
                               .requeue_s = requeue_s,
                               .errs = &errs};
    status_step(&v, &tj, &pass, st);
    requeue_sooner(requeue_s, v.requeue_s);
    json_decref(orig);
    json_decref(v.seen);
    if (errs.code != KT_OK) {
        *err = errs;
        rc = -1;
    }
out:
    kt_trainjob_release(&tj);
    free(owner);
    return rc;
}

/* ---- runtimes: strip the legacy finalizer (docs/internals/upstream.md#runtime-finalizers) ---- */

static int reconcile_runtime(struct kt_rec *r, struct kt_kube_client *c, bool cluster,
                             const char *ns, const char *name, struct kt_err *err)
{
    struct kt_informer *inf = cluster ? r->cluster_runtimes : r->runtimes;
    json_t *obj = kt_informer_get(inf, cluster ? NULL : ns, name);
    int rc = 0;
    if (!obj || !has_legacy_finalizer(obj)) {
        json_decref(obj);
        return 0;
    }
    json_t *meta = json_object_get(obj, "metadata");
    json_t *keep = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(meta, "finalizers"), i, f)
    {
        if (!json_is_string(f) || strcmp(json_string_value(f), KT_LEGACY_FINALIZER) != 0) {
            json_array_append(keep, f);
        }
    }
    json_t *patch = json_pack("{s:{s:s, s:o}}", "metadata", "resourceVersion",
                              kt_json_str(meta, "resourceVersion", ""), "finalizers",
                              json_array_size(keep) ? keep : json_null());
    if (!json_array_size(keep)) {
        json_decref(keep);
    }
    const struct kt_kube_gvr *gvr =
        cluster ? &KT_GVR_CLUSTERTRAININGRUNTIMES : &KT_GVR_TRAININGRUNTIMES;
    if (kt_kube_merge_patch(
            c, &(struct kt_kube_ref){.gvr = gvr, .ns = cluster ? NULL : ns, .name = name}, patch,
            NULL, err) != 0) {
        rc = err->code == KT_ENOENT ? 0 : -1;
    } else {
        kt_log_info(LOG, "removed finalizer %s from %s %s", KT_LEGACY_FINALIZER, gvr->resource,
                    name);
    }
    json_decref(patch);
    json_decref(obj);
    return rc;
}

int kt_rec_reconcile(struct kt_rec *r, struct kt_kube_client *c, const char *key, double *requeue_s,
                     struct kt_err *err)
{
    *requeue_s = 0;
    if (strncmp(key, KT_POD_KEY_PREFIX, strlen(KT_POD_KEY_PREFIX)) == 0) {
        const char *k = key + strlen(KT_POD_KEY_PREFIX), *slash = strchr(k, '/');
        char *ns = kt_xstrndup(k, slash ? (size_t)(slash - k) : 0);
        struct kt_podevent_src src = {.pods = r->pods,
                                      .jobsets = r->jobsets,
                                      .trainjobs = r->trainjobs,
                                      .sched_limit = r->sched_limit};
        kt_rec_pod_event(&src, c, ns, slash ? slash + 1 : k, now_of(r));
        free(ns);
        return 0;
    }
    bool cluster = strncmp(key, "ctr:", 4) == 0;
    bool runtime = cluster || strncmp(key, "tr:", 3) == 0;
    const char *k = cluster ? key + 4 : runtime ? key + 3 : key;
    const char *slash = strchr(k, '/');
    char *ns = slash ? kt_xstrndup(k, (size_t)(slash - k)) : kt_xstrdup("");
    const char *name = slash ? slash + 1 : k;
    int rc = runtime ? reconcile_runtime(r, c, cluster, ns, name, err)
                     : reconcile_trainjob(r, c, ns, name, requeue_s, err);
    free(ns);
    return rc;
}

void kt_rec_process(struct kt_rec *r, struct kt_kube_client *c, const char *key)
{
    const char *ctl[] = {CONTROLLER};
    struct kt_err err = {0};
    double requeue = 0, t0 = mono_now();
    int rc = kt_rec_reconcile(r, c, key, &requeue, &err);
    kt_metric_observe(r->m_time, ctl, mono_now() - t0);
    if (rc != 0) {
        const char *lv[] = {CONTROLLER, "error"};
        kt_metric_inc(r->m_total, lv);
        kt_metric_inc(r->m_errors, ctl);
        double d = kt_queue_add_rate_limited(r->queue, key);
        kt_log_warn(LOG, "reconcile %s failed (retry in %.3fs): %s", key, d, err.msg);
        atomic_store(&r->last_work_ms, (long long)(mono_now() * 1000.0));
        return;
    }
    kt_queue_forget(r->queue, key);
    const char *lv[] = {CONTROLLER, requeue > 0 ? "requeue_after" : "success"};
    kt_metric_inc(r->m_total, lv);
    if (requeue > 0) {
        kt_queue_add_after(r->queue, key, requeue);
    }
    kt_log_debug(LOG, "reconciled %s", key);
    atomic_store(&r->last_work_ms, (long long)(mono_now() * 1000.0));
}
