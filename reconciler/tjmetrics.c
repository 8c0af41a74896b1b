/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/tjmetrics.c - TrainJob-level metrics; see tjmetrics.h.
 *
 * The per-TrainJob memory (when this process first saw it, whether its JobSet and its first
 * ready Job were timed and its creation counted, its state, its labels) is one fixed-size
 * struct per cached TrainJob
 * in an array, found by "ns/name" through a jansson index of slot numbers; the label
 * triples (runtime kind, runtime name, framework) are interned, since thousands of TrainJobs
 * share a few runtimes. Touched only on the informer loop thread. (Measured with
 * 10,000 TrainJobs added: a jansson object per TrainJob cost 1,600 heap bytes each, this
 * layout 112.) */
#include "reconciler/tjmetrics.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "reconciler/applied.h"
#include "reconciler/status.h"

#define NS "kubeflow_trainer_"
#define FW_MAX 64

/* The states of trainjobs_by_state; STATES[0] = not yet counted in any. */
static const char *const STATES[] = {"", "Created", "Running", "Suspended", "Complete", "Failed"};
#define N_STATES (KT_ARRAY_SIZE(STATES))

struct tjm_labels {
    char *kind, *rname, *fw; /* owned */
};

struct tjm_entry {
    uint64_t uid;    /* kt_applied_hash_str(metadata.uid): a re-created name is a new entry */
    double seen;     /* creation time (first sight for one created after our start) */
    uint32_t labels; /* index in kt_tjm.labels */
    uint8_t state;   /* index in STATES */
    /* one bit each, so the entry stays 24 bytes: */
    bool js : 1;      /* creation -> JobSet observed */
    bool fresh : 1;   /* created after our start */
    bool counted : 1; /* counted in trainjobs_created_total */
    bool ready : 1;   /* a child Job was seen ready: creation -> first Job ready is past */
};

struct kt_tjm {
    struct kt_metric *created, *completed, *failed, *suspended, *resumed, *deleted;
    struct kt_metric *by_state, *to_jobset, *to_ready, *duration, *phase_time, *phase_errors;
    kt_tjm_framework_fn *framework;
    void *ctx;
    double start_time;
    atomic_bool counting;
    /* loop thread only: */
    json_t *index;             /* "ns/name" -> integer slot in entries */
    struct tjm_entry *entries; /* slots; a deleted TrainJob's slot goes to free_slots */
    size_t n_entries, cap_entries;
    size_t *free_slots;
    size_t n_free, cap_free;
    json_t *label_ids; /* "kind\nname\nframework" -> integer index in labels */
    struct tjm_labels *labels;
    size_t n_labels, cap_labels;
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
    const struct kt_metrics_buckets lifecycle = {.bounds = lifecycle_buckets,
                                                 .n = KT_ARRAY_SIZE(lifecycle_buckets)};
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
                                        base, 4, &lifecycle);
    t->to_ready = kt_metrics_histogram(
        m, NS "trainjob_first_job_ready_seconds",
        "Time from TrainJob creation until a child Job of its JobSet first had all its pods ready.",
        base, 4, &lifecycle);
    t->duration = kt_metrics_histogram(
        m, NS "trainjob_duration_seconds",
        "End-to-end duration of TrainJobs from creation to Complete or Failed.", res, 5,
        &lifecycle);
    t->phase_time = kt_metrics_histogram(m, NS "reconcile_phase_duration_seconds",
                                         "Time spent per reconcile phase.", phase, 1, NULL);
    t->phase_errors = kt_metrics_counter(m, NS "reconcile_phase_errors_total",
                                         "Reconcile phase runs that failed.", phase, 1);
    /* Exposed at 0 from the start, so rate() sees the first error and the alert on it has a
     * series to evaluate (as controller-runtime's initMetrics does for its error counters). */
    const char *build[] = {KT_TJM_PHASE_BUILD}, *post[] = {KT_TJM_PHASE_POST};
    kt_metric_add(t->phase_errors, build, 0);
    kt_metric_add(t->phase_errors, post, 0);
    t->framework = framework;
    t->ctx = ctx;
    t->start_time = start_time;
    atomic_init(&t->counting, true);
    t->index = json_object();
    t->label_ids = json_object();
    return t;
}

void kt_tjm_free(struct kt_tjm *t)
{
    if (!t) {
        return;
    }
    json_decref(t->index);
    json_decref(t->label_ids);
    for (size_t i = 0; i < t->n_labels; i++) {
        free(t->labels[i].kind);
        free(t->labels[i].rname);
        free(t->labels[i].fw);
    }
    free(t->labels);
    free(t->entries);
    free(t->free_slots);
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

static const char *ns_of(const json_t *obj)
{
    return kt_json_str(json_object_get(obj, "metadata"), "namespace", "");
}

static void state_add(struct kt_tjm *t, const char *ns, const char *state, double d)
{
    const char *lv[] = {ns, state};
    kt_metric_add(t->by_state, lv, d);
}

/* The index of the label triple, interned on first use. */
static uint32_t intern_labels(struct kt_tjm *t, const char *kind, const char *rname, const char *fw)
{
    char *key = kt_xasprintf("%s\n%s\n%s", kind, rname, fw);
    json_t *id = json_object_get(t->label_ids, key);
    if (!id) {
        if (t->n_labels == t->cap_labels) {
            t->cap_labels = t->cap_labels ? t->cap_labels * 2 : 8;
            t->labels = kt_xrealloc(t->labels, t->cap_labels * sizeof(*t->labels));
        }
        t->labels[t->n_labels] = (struct tjm_labels){
            .kind = kt_xstrdup(kind), .rname = kt_xstrdup(rname), .fw = kt_xstrdup(fw)};
        id = json_integer((json_int_t)t->n_labels++);
        json_object_set_new(t->label_ids, key, id);
    }
    free(key);
    return (uint32_t)json_integer_value(id);
}

/* A slot for a new entry: a freed one, else a new one at the end. */
static size_t new_slot(struct kt_tjm *t)
{
    if (t->n_free > 0) {
        return t->free_slots[--t->n_free];
    }
    if (t->n_entries == t->cap_entries) {
        t->cap_entries = t->cap_entries ? t->cap_entries * 2 : 64;
        t->entries = kt_xrealloc(t->entries, t->cap_entries * sizeof(*t->entries));
    }
    return t->n_entries++;
}

static void free_slot(struct kt_tjm *t, size_t slot)
{
    if (t->n_free == t->cap_free) {
        t->cap_free = t->cap_free ? t->cap_free * 2 : 64;
        t->free_slots = kt_xrealloc(t->free_slots, t->cap_free * sizeof(*t->free_slots));
    }
    t->free_slots[t->n_free++] = slot;
}

/* The entry of obj (by "ns/name"), or NULL. Valid until the next new entry. */
static struct tjm_entry *find_entry(struct kt_tjm *t, const json_t *obj)
{
    char *key = key_of(obj);
    json_t *slot = json_object_get(t->index, key);
    free(key);
    return slot ? &t->entries[json_integer_value(slot)] : NULL;
}

/* A new entry for obj in a fresh slot (seen = now when created after start). */
static struct tjm_entry *new_entry(struct kt_tjm *t, const json_t *obj, uint64_t uid, double now)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const json_t *ref = json_object_get(json_object_get(obj, "spec"), "runtimeRef");
    const char *kind = kt_json_str(ref, "kind", "ClusterTrainingRuntime");
    const char *rname = kt_json_str(ref, "name", "");
    char fw[FW_MAX] = "";
    if (t->framework) {
        t->framework(t->ctx, kind, kt_json_str(meta, "namespace", ""), rname, fw, sizeof(fw));
    }
    int64_t created = kt_rec_parse_time(kt_json_str(meta, "creationTimestamp", ""));
    bool fresh = created >= 0 && (double)created >= (double)(int64_t)t->start_time;
    uint32_t labels = intern_labels(t, kind, rname, fw);
    size_t slot = new_slot(t);
    t->entries[slot] = (struct tjm_entry){
        .uid = uid, .seen = fresh ? now : (double)created, .labels = labels, .fresh = fresh};
    char *key = key_of(obj);
    json_object_set_new(t->index, key, json_integer((json_int_t)slot));
    free(key);
    return &t->entries[slot];
}

/* The remembered entry of obj, made on first sight (and anew for a re-created name whose
 * delete was not seen). */
static struct tjm_entry *entry_of(struct kt_tjm *t, const json_t *obj, double now)
{
    uint64_t uid = kt_applied_hash_str(kt_json_str(json_object_get(obj, "metadata"), "uid", ""));
    struct tjm_entry *e = find_entry(t, obj);
    if (e && e->uid == uid) {
        return e;
    }
    if (e) { /* the old TrainJob's delete was missed (a relist): it leaves the gauge */
        if (e->state) {
            state_add(t, ns_of(obj), STATES[e->state], -1);
        }
        free_slot(t, (size_t)(e - t->entries));
    }
    return new_entry(t, obj, uid, now);
}

/* A TrainJob first seen before its runtime (the initial lists of TrainJobs and runtimes are not
 * ordered) got framework "": ask again when a series is written, and keep the answer once the
 * runtime names one, so no series carries framework="" for a runtime that has a framework. */
static void resolve_framework(struct kt_tjm *t, struct tjm_entry *e, const char *ns)
{
    char fw[FW_MAX] = "";
    if (!t->framework || t->labels[e->labels].fw[0]) {
        return;
    }
    const struct tjm_labels *l = &t->labels[e->labels];
    t->framework(t->ctx, l->kind, ns, l->rname, fw, sizeof(fw));
    if (!fw[0]) {
        return; /* the common case for a runtime without a framework: nothing copied */
    }
    /* intern_labels may move t->labels: copy the two names it reads out of it first */
    char *kind = kt_xstrdup(l->kind), *rname = kt_xstrdup(l->rname);
    e->labels = intern_labels(t, kind, rname, fw);
    free(kind);
    free(rname);
}

static void labels_of(struct kt_tjm *t, struct tjm_entry *e, const char *ns, const char **lv)
{
    resolve_framework(t, e, ns);
    const struct tjm_labels *l = &t->labels[e->labels];
    lv[0] = ns;
    lv[1] = l->kind;
    lv[2] = l->rname;
    lv[3] = l->fw;
}

static uint8_t state_index(const char *state)
{
    for (size_t i = 1; i < N_STATES; i++) {
        if (strcmp(STATES[i], state) == 0) {
            return (uint8_t)i;
        }
    }
    return 0;
}

/* Move e's state gauge to obj's current state. */
static void track_state(struct kt_tjm *t, struct tjm_entry *e, const json_t *obj)
{
    uint8_t now_state = state_index(kt_tjm_state(obj));
    if (e->state == now_state) {
        return;
    }
    if (e->state) {
        state_add(t, ns_of(obj), STATES[e->state], -1);
    }
    state_add(t, ns_of(obj), STATES[now_state], 1);
    e->state = now_state;
}

void kt_tjm_trainjob_add(struct kt_tjm *t, const json_t *obj, double now)
{
    if (!t) {
        return;
    }
    struct tjm_entry *e = entry_of(t, obj, now);
    track_state(t, e, obj);
    if (e->fresh && counting(t) && !e->counted) {
        const char *lv[4];
        labels_of(t, e, ns_of(obj), lv);
        kt_metric_inc(t->created, lv);
        e->counted = true;
    }
}

/* Complete/Failed newly True: the counter and the duration since creation. */
static void finished(struct kt_tjm *t, struct tjm_entry *e, const json_t *old_obj,
                     const json_t *new_obj, double now)
{
    const char *lv[5], *reason = "";
    labels_of(t, e, ns_of(new_obj), lv);
    double since = now - e->seen;
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
    struct tjm_entry *e = entry_of(t, new_obj, now);
    track_state(t, e, new_obj);
    if (!counting(t)) {
        return;
    }
    const char *lv[4];
    labels_of(t, e, ns_of(new_obj), lv);
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
    struct tjm_entry *e = find_entry(t, obj);
    if (!e) {
        return;
    }
    if (e->state) {
        state_add(t, ns_of(obj), STATES[e->state], -1);
    }
    if (counting(t)) {
        const char *lv[4];
        labels_of(t, e, ns_of(obj), lv);
        kt_metric_inc(t->deleted, lv);
    }
    free_slot(t, (size_t)(e - t->entries));
    char *key = key_of(obj);
    json_object_del(t->index, key);
    free(key);
}

/* The uid of obj's controller TrainJob ownerReference, or NULL. */
static const char *owner_uid(const json_t *obj)
{
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref)
    {
        if (kt_json_bool(ref, "controller", false) &&
            strcmp(kt_json_str(ref, "kind", ""), "TrainJob") == 0) {
            return kt_json_str(ref, "uid", NULL);
        }
    }
    return NULL;
}

/* The entry of the TrainJob that owns jobset (a TrainJob's JobSet has its name), or NULL;
 * NULL too when the JobSet belongs to an earlier TrainJob of that name (a different uid). */
static struct tjm_entry *entry_of_jobset(struct kt_tjm *t, const json_t *jobset)
{
    struct tjm_entry *e = find_entry(t, jobset);
    const char *uid = owner_uid(jobset);
    if (e && uid && e->uid != kt_applied_hash_str(uid)) {
        return NULL;
    }
    return e;
}

/* Created at or after this process's start (whole seconds, as creationTimestamp). */
static bool created_since_start(const struct kt_tjm *t, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    int64_t created = kt_rec_parse_time(kt_json_str(meta, "creationTimestamp", ""));
    return created >= (int64_t)t->start_time;
}

void kt_tjm_jobset_add(struct kt_tjm *t, const json_t *jobset, double now)
{
    if (!t) {
        return;
    }
    struct tjm_entry *e = entry_of_jobset(t, jobset);
    if (e && kt_tjm_jobset_ready(jobset)) {
        e->ready = true; /* already past (a relist, or the list at our start) */
    }
    if (!e || e->js || !created_since_start(t, jobset) || !counting(t)) {
        return;
    }
    e->js = true;
    const char *lv[4];
    labels_of(t, e, ns_of(jobset), lv);
    double since = now - e->seen;
    kt_metric_observe(t->to_jobset, lv, since > 0 ? since : 0);
}

void kt_tjm_jobset_update(struct kt_tjm *t, const json_t *old_js, const json_t *new_js, double now)
{
    if (!t) {
        return;
    }
    struct tjm_entry *e = entry_of_jobset(t, new_js);
    if (!e || e->ready || !kt_tjm_jobset_ready(new_js)) {
        return;
    }
    /* Marked also while not counting: the leader of that moment observed it, and a later
     * drop and return of readiness (a restarted pod, a JobSet restart) is not the first. */
    e->ready = true;
    if (kt_tjm_jobset_ready(old_js) || !created_since_start(t, new_js) || !counting(t)) {
        return;
    }
    const char *lv[4];
    labels_of(t, e, ns_of(new_js), lv);
    double since = now - e->seen;
    kt_metric_observe(t->to_ready, lv, since > 0 ? since : 0);
}

bool kt_tjm_jobset_ready(const json_t *jobset)
{
    size_t i;
    json_t *rj;
    json_array_foreach(json_object_get(json_object_get(jobset, "status"), "replicatedJobsStatus"),
                       i, rj)
    {
        if (json_integer_value(json_object_get(rj, "ready")) > 0) {
            return true;
        }
    }
    return false;
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
