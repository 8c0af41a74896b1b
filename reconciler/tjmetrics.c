/* reconciler/tjmetrics.c - TrainJob-level metrics; see tjmetrics.h.
 *
 * The per-TrainJob memory (labels, when this process first saw it, whether its JobSet was
 * timed, its state) lives in a jansson object keyed by "ns/name", touched only on the
 * informer loop thread; it holds one small entry per cached TrainJob. */
#include "reconciler/tjmetrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "reconciler/status.h"

#define NS "kubeflow_trainer_"
#define FW_MAX 64

struct kt_tjm {
    struct kt_metric *created, *completed, *failed, *suspended, *resumed, *deleted;
    struct kt_metric *by_state, *to_jobset, *duration, *phase_time, *phase_errors;
    kt_tjm_framework_fn *framework;
    void *ctx;
    double start_time;
    atomic_bool counting;
    json_t *jobs; /* "ns/name" -> {uid, kind, rname, fw, seen, js, state}; loop thread only */
};

/* 50 ms .. 24 h. */
static const double lifecycle_buckets[] = {0.05, 0.1,  0.25,  0.5,   1,    2.5, 5,
                                           10,   30,   60,    120,   300,  600, 1800,
                                           3600, 7200, 14400, 43200, 86400};

struct kt_tjm *kt_tjm_new(struct kt_metrics *m, double start_time, kt_tjm_framework_fn *framework,
                          void *ctx)
{
    static const char *const base[] = {"namespace", "runtime", "runtime_name", "framework"};
    static const char *const fail[] = {"namespace", "runtime", "runtime_name", "framework",
                                       "reason"};
    static const char *const res[] = {"namespace", "runtime", "runtime_name", "framework",
                                      "result"};
    static const char *const state[] = {"namespace", "state"};
    static const char *const phase[] = {"phase"};
    const size_t nb = sizeof(lifecycle_buckets) / sizeof(lifecycle_buckets[0]);
    struct kt_tjm *t = kt_xcalloc(1, sizeof(*t));
    t->created = kt_metrics_counter(m, NS "trainjobs_created_total",
                                    "Total number of TrainJobs created.", base, 4);
    t->completed =
        kt_metrics_counter(m, NS "trainjobs_completed_total",
                           "Total number of TrainJobs that completed successfully.", base, 4);
    t->failed =
        kt_metrics_counter(m, NS "trainjobs_failed_total",
                           "Total number of TrainJobs that failed, by Failed reason.", fail, 5);
    t->suspended = kt_metrics_counter(m, NS "trainjobs_suspended_total",
                                      "Total number of TrainJob suspension events.", base, 4);
    t->resumed = kt_metrics_counter(m, NS "trainjobs_resumed_total",
                                    "Total number of TrainJob resumption events.", base, 4);
    t->deleted = kt_metrics_counter(m, NS "trainjobs_deleted_total",
                                    "Total number of TrainJobs deleted.", base, 4);
    t->by_state = kt_metrics_gauge(m, NS "trainjobs_by_state",
                                   "TrainJobs in the cluster by current state.", state, 2);
    t->to_jobset = kt_metrics_histogram(m, NS "trainjob_jobset_created_seconds",
                                        "Time from TrainJob creation to its JobSet's creation.",
                                        base, 4, lifecycle_buckets, nb);
    t->duration = kt_metrics_histogram(
        m, NS "trainjob_duration_seconds",
        "End-to-end duration of TrainJobs from creation to Complete or Failed.", res, 5,
        lifecycle_buckets, nb);
    t->phase_time = kt_metrics_histogram(m, NS "reconcile_phase_duration_seconds",
                                         "Time spent per reconcile phase.", phase, 1, NULL, 0);
    t->phase_errors = kt_metrics_counter(m, NS "reconcile_phase_errors_total",
                                         "Reconcile phase runs that failed.", phase, 1);
    t->framework = framework;
    t->ctx = ctx;
    t->start_time = start_time;
    atomic_init(&t->counting, true);
    t->jobs = json_object();
    return t;
}

void kt_tjm_free(struct kt_tjm *t)
{
    if (!t) {
        return;
    }
    json_decref(t->jobs);
    free(t);
}

void kt_tjm_set_counting(struct kt_tjm *t, bool on)
{
    if (!t) {
        return;
    }
    atomic_store(&t->counting, on);
}

static bool counting(struct kt_tjm *t)
{
    return atomic_load(&t->counting);
}

/* status.conditions[type] is "True". */
static bool cond_true(const json_t *obj, const char *type, const char **reason)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        if (strcmp(kt_json_str(c, "type", ""), type) == 0) {
            if (reason) {
                *reason = kt_json_str(c, "reason", "");
            }
            return strcmp(kt_json_str(c, "status", ""), "True") == 0;
        }
    }
    return false;
}

static bool has_active_pods(const json_t *obj)
{
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "jobsStatus"), i, j)
    {
        if (json_integer_value(json_object_get(j, "active")) > 0) {
            return true;
        }
    }
    return false;
}

const char *kt_tjm_state(const json_t *trainjob)
{
    if (cond_true(trainjob, KT_COND_FAILED, NULL)) {
        return "Failed";
    }
    if (cond_true(trainjob, KT_COND_COMPLETE, NULL)) {
        return "Complete";
    }
    if (cond_true(trainjob, KT_COND_SUSPENDED, NULL)) {
        return "Suspended";
    }
    return has_active_pods(trainjob) ? "Running" : "Created";
}

static char *key_of(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    return kt_xasprintf("%s/%s", kt_json_str(meta, "namespace", ""), kt_json_str(meta, "name", ""));
}

static void state_add(struct kt_tjm *t, const char *ns, const char *state, double d)
{
    const char *lv[] = {ns, state};
    kt_metric_add(t->by_state, lv, d);
}

/* The remembered entry of obj, made on first sight (seen = now when created after start). */
static json_t *entry_of(struct kt_tjm *t, const json_t *obj, double now)
{
    char *key = key_of(obj);
    const json_t *meta = json_object_get(obj, "metadata");
    json_t *e = json_object_get(t->jobs, key);
    const char *uid = kt_json_str(meta, "uid", "");
    if (!e || strcmp(kt_json_str(e, "uid", ""), uid) != 0) {
        const json_t *ref = json_object_get(json_object_get(obj, "spec"), "runtimeRef");
        const char *kind = kt_json_str(ref, "kind", "ClusterTrainingRuntime");
        const char *rname = kt_json_str(ref, "name", "");
        const char *ns = kt_json_str(meta, "namespace", "");
        char fw[FW_MAX] = "";
        if (t->framework) {
            t->framework(t->ctx, kind, ns, rname, fw, sizeof(fw));
        }
        int64_t created = kt_rec_parse_time(kt_json_str(meta, "creationTimestamp", ""));
        bool fresh = created >= 0 && (double)created >= (double)(int64_t)t->start_time;
        e = json_pack("{s:s, s:s, s:s, s:s, s:f, s:b, s:b, s:s}", "uid", uid, "kind", kind, "rname",
                      rname, "fw", fw, "seen", fresh ? now : (double)created, "js", false, "fresh",
                      fresh, "state", "");
        json_object_set_new(t->jobs, key, e);
    }
    free(key);
    return e;
}

static void labels_of(const json_t *e, const char *ns, const char **lv)
{
    lv[0] = ns;
    lv[1] = kt_json_str(e, "kind", "");
    lv[2] = kt_json_str(e, "rname", "");
    lv[3] = kt_json_str(e, "fw", "");
}

static const char *ns_of(const json_t *obj)
{
    return kt_json_str(json_object_get(obj, "metadata"), "namespace", "");
}

/* Move e's state gauge to obj's current state. */
static void track_state(struct kt_tjm *t, json_t *e, const json_t *obj)
{
    const char *now_state = kt_tjm_state(obj), *was = kt_json_str(e, "state", "");
    if (strcmp(was, now_state) == 0) {
        return;
    }
    if (*was) {
        state_add(t, ns_of(obj), was, -1);
    }
    state_add(t, ns_of(obj), now_state, 1);
    json_object_set_new(e, "state", json_string(now_state));
}

void kt_tjm_trainjob_add(struct kt_tjm *t, const json_t *obj, double now)
{
    if (!t) {
        return;
    }
    json_t *e = entry_of(t, obj, now);
    track_state(t, e, obj);
    if (json_is_true(json_object_get(e, "fresh")) && counting(t) &&
        !json_is_true(json_object_get(e, "counted"))) {
        const char *lv[4];
        labels_of(e, ns_of(obj), lv);
        kt_metric_inc(t->created, lv);
        json_object_set_new(e, "counted", json_true());
    }
}

/* Complete/Failed newly True: the counter and the duration since creation. */
static void finished(struct kt_tjm *t, const json_t *e, const json_t *old_obj,
                     const json_t *new_obj, double now)
{
    const char *lv[5], *reason = "";
    labels_of(e, ns_of(new_obj), lv);
    double since = now - json_real_value(json_object_get(e, "seen"));
    if (cond_true(new_obj, KT_COND_FAILED, &reason) && !cond_true(old_obj, KT_COND_FAILED, NULL)) {
        lv[4] = *reason ? reason : "Unknown";
        kt_metric_inc(t->failed, lv);
        lv[4] = "Failed";
        kt_metric_observe(t->duration, lv, since > 0 ? since : 0);
    } else if (cond_true(new_obj, KT_COND_COMPLETE, NULL) &&
               !cond_true(old_obj, KT_COND_COMPLETE, NULL) &&
               !cond_true(new_obj, KT_COND_FAILED, NULL)) {
        kt_metric_inc(t->completed, lv);
        lv[4] = "Complete";
        kt_metric_observe(t->duration, lv, since > 0 ? since : 0);
    }
}

void kt_tjm_trainjob_update(struct kt_tjm *t, const json_t *old_obj, const json_t *new_obj,
                            double now)
{
    if (!t) {
        return;
    }
    json_t *e = entry_of(t, new_obj, now);
    track_state(t, e, new_obj);
    if (!counting(t)) {
        return;
    }
    const char *lv[4];
    labels_of(e, ns_of(new_obj), lv);
    bool was = cond_true(old_obj, KT_COND_SUSPENDED, NULL);
    bool is = cond_true(new_obj, KT_COND_SUSPENDED, NULL);
    if (is && !was) {
        kt_metric_inc(t->suspended, lv);
    }
    const char *reason = "";
    cond_true(new_obj, KT_COND_SUSPENDED, &reason);
    if (was && !is && strcmp(reason, "Resumed") == 0) {
        kt_metric_inc(t->resumed, lv);
    }
    finished(t, e, old_obj, new_obj, now);
}

void kt_tjm_trainjob_delete(struct kt_tjm *t, const json_t *obj)
{
    if (!t) {
        return;
    }
    char *key = key_of(obj);
    json_t *e = json_object_get(t->jobs, key);
    if (e) {
        const char *was = kt_json_str(e, "state", "");
        if (*was) {
            state_add(t, ns_of(obj), was, -1);
        }
        if (counting(t)) {
            const char *lv[4];
            labels_of(e, ns_of(obj), lv);
            kt_metric_inc(t->deleted, lv);
        }
        json_object_del(t->jobs, key);
    }
    free(key);
}

void kt_tjm_jobset_add(struct kt_tjm *t, const json_t *jobset, double now)
{
    if (!t) {
        return;
    }
    char *key = key_of(jobset); /* a TrainJob's JobSet has its name */
    json_t *e = json_object_get(t->jobs, key);
    const json_t *meta = json_object_get(jobset, "metadata");
    int64_t created = kt_rec_parse_time(kt_json_str(meta, "creationTimestamp", ""));
    free(key);
    if (!e || json_is_true(json_object_get(e, "js")) || created < (int64_t)t->start_time ||
        !counting(t)) {
        return;
    }
    json_object_set_new(e, "js", json_true());
    const char *lv[4];
    labels_of(e, ns_of(jobset), lv);
    double since = now - json_real_value(json_object_get(e, "seen"));
    kt_metric_observe(t->to_jobset, lv, since > 0 ? since : 0);
}

void kt_tjm_phase(struct kt_tjm *t, const char *phase, double seconds, bool failed)
{
    if (!t) {
        return;
    }
    const char *lv[] = {phase};
    kt_metric_observe(t->phase_time, lv, seconds);
    if (failed) {
        kt_metric_inc(t->phase_errors, lv);
    }
}
