/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_tjmetrics.c - reconciler/tjmetrics.c: the kubeflow_trainer_
 * TrainJob metrics from informer events. Created only after the process start, each
 * transition counted once (a repeated update with the same conditions, a stale re-delivery),
 * failures by reason, suspend/resume, deletion, the state gauge moving between states, the
 * creation -> JobSet, -> first ready Job and -> finished histograms on an injected clock
 * (the first ready Job once per TrainJob, never for a JobSet that predates the process or
 * was ready when listed, nor for one that never had a ready Job), nothing counted while not
 * leading, phases; the exposition text of every family; negative: no TrainJob, JobSet or
 * pod name ever appears in the exposition. Also kubeflow_trainer_build_info. Compiled in
 * directly (reconciler/ is not part of libkt.a). */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"
#include "reconciler/applied.c"
#include "reconciler/status.c"
#include "reconciler/tjmetrics.c"

#define T0 1767225600.0 /* 2026-01-01T00:00:00Z: the process start */
#define AFTER "2026-01-01T00:00:10Z"
#define BEFORE "2025-12-31T23:00:00Z"

static void framework(void *ctx, const char *kind, const char *ns, const char *name, char *buf,
                      size_t n)
{
    (void)ctx;
    (void)kind;
    (void)ns;
    snprintf(buf, n, "%s", strcmp(name, "torch-distributed") == 0 ? "torch" : "");
}

/* A TrainJob named name (uid name-uid) created at created with conditions conds (a JSON array
 * text) and jobsStatus jobs (a JSON array text). */
static json_t *tj(const char *name, const char *created, const char *conds, const char *jobs)
{
    json_t *c = json_loads(conds, 0, NULL), *j = json_loads(jobs, 0, NULL);
    char *uid = kt_xasprintf("%s-uid", name);
    json_t *o = json_pack("{s:{s:s, s:s, s:s, s:s}, s:{s:{s:s, s:s}}, s:{s:o, s:o}}", "metadata",
                          "name", name, "namespace", "team-a", "uid", uid, "creationTimestamp",
                          created, "spec", "runtimeRef", "name", "torch-distributed", "kind",
                          "ClusterTrainingRuntime", "status", "conditions", c, "jobsStatus", j);
    free(uid);
    return o;
}

static const char *const LV[] = {"team-a", "ClusterTrainingRuntime", "torch-distributed", "torch"};

static double val(struct kt_metric *mt, const char *const *lv)
{
    return kt_metric_value(mt, lv);
}

static double state(struct kt_tjm *t, const char *s)
{
    const char *lv[] = {"team-a", s};
    return kt_metric_value(t->by_state, lv);
}

static void test_lifecycle(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0, framework, NULL);
    json_t *old = tj("job-old-7f3a", BEFORE, "[]", "[]");
    json_t *a = tj("job-a-91bc", AFTER, "[]", "[]");
    json_t *run = tj("job-a-91bc", AFTER, "[]", "[{\"name\":\"node\",\"active\":2}]");
    json_t *done =
        tj("job-a-91bc", AFTER,
           "[{\"type\":\"Complete\",\"status\":\"True\",\"reason\":\"JobsCompleted\"}]", "[]");
    kt_tjm_trainjob_add(t, old, T0 + 1); /* initial list: not created by us */
    CHECK(val(t->created, LV) == 0);
    CHECK(state(t, "Created") == 1);
    kt_tjm_trainjob_add(t, a, T0 + 10.0);
    kt_tjm_trainjob_add(t, a, T0 + 10.5); /* re-delivered: counted once */
    CHECK(val(t->created, LV) == 1);
    CHECK(state(t, "Created") == 2);
    json_t *js = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "job-a-91bc", "namespace",
                           "team-a", "creationTimestamp", AFTER);
    kt_tjm_jobset_add(t, js, T0 + 10.25);
    kt_tjm_jobset_add(t, js, T0 + 12); /* once per TrainJob */
    CHECK(val(t->to_jobset, LV) == 1);
    kt_tjm_trainjob_update(t, a, run, T0 + 20);
    CHECK(state(t, "Running") == 1 && state(t, "Created") == 1);
    kt_tjm_trainjob_update(t, run, done, T0 + 70);
    kt_tjm_trainjob_update(t, done, done, T0 + 71); /* no transition */
    CHECK(val(t->completed, LV) == 1);
    const char *res[] = {"team-a", "ClusterTrainingRuntime", "torch-distributed", "torch",
                         "Complete"};
    CHECK(val(t->duration, res) == 1);
    CHECK(state(t, "Complete") == 1 && state(t, "Running") == 0);
    kt_tjm_trainjob_delete(t, done);
    kt_tjm_trainjob_delete(t, done); /* gone already */
    CHECK(val(t->deleted, LV) == 1);
    CHECK(state(t, "Complete") == 0);
    char *text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text, "# TYPE kubeflow_trainer_trainjobs_created_total counter\n"
                         "kubeflow_trainer_trainjobs_created_total{namespace=\"team-a\","
                         "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                         "framework=\"torch\"} 1\n");
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjobs_completed_total{namespace=\"team-a\","
                         "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                         "framework=\"torch\"} 1\n");
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjobs_deleted_total{namespace=\"team-a\"");
    CHECK_CONTAINS(text, "# TYPE kubeflow_trainer_trainjobs_by_state gauge\n");
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjobs_by_state{namespace=\"team-a\","
                         "state=\"Created\"} 1\n");
    /* creation -> JobSet 0.25 s: in the 0.25 bucket, not in 0.1 */
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_trainjob_jobset_created_seconds_bucket{namespace=\"team-a\","
                   "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                   "framework=\"torch\",le=\"0.1\"} 0\n");
    CHECK_CONTAINS(text, "framework=\"torch\",le=\"0.25\"} 1\n");
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_trainjob_jobset_created_seconds_bucket{namespace=\"team-a\","
                   "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                   "framework=\"torch\",le=\"86400\"} 1\n");
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjob_duration_seconds_sum{namespace=\"team-a\","
                         "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                         "framework=\"torch\",result=\"Complete\"} 60\n");
    /* negative: names of TrainJobs (and so of their JobSets and pods) are never labels */
    CHECK(strstr(text, "job-a-91bc") == NULL);
    CHECK(strstr(text, "job-old-7f3a") == NULL);
    CHECK(strstr(text, "-uid") == NULL);
    free(text);
    json_decref(old);
    json_decref(a);
    json_decref(run);
    json_decref(done);
    json_decref(js);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

static void test_failed_suspended(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0, framework, NULL);
    json_t *a = tj("job-b", AFTER, "[]", "[]");
    json_t *susp =
        tj("job-b", AFTER,
           "[{\"type\":\"Suspended\",\"status\":\"True\",\"reason\":\"Suspended\"}]", "[]");
    json_t *resumed =
        tj("job-b", AFTER, "[{\"type\":\"Suspended\",\"status\":\"False\",\"reason\":\"Resumed\"}]",
           "[]");
    json_t *failed = tj("job-b", AFTER,
                        "[{\"type\":\"Suspended\",\"status\":\"False\",\"reason\":\"Resumed\"},"
                        "{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"FailedJobs\"}]",
                        "[]");
    kt_tjm_trainjob_add(t, a, T0 + 10);
    kt_tjm_trainjob_update(t, a, susp, T0 + 11);
    CHECK(state(t, "Suspended") == 1);
    kt_tjm_trainjob_update(t, susp, resumed, T0 + 12);
    kt_tjm_trainjob_update(t, resumed, failed, T0 + 13);
    kt_tjm_trainjob_update(t, failed, failed, T0 + 14);
    CHECK(val(t->suspended, LV) == 1);
    CHECK(val(t->resumed, LV) == 1);
    const char *fl[] = {"team-a", "ClusterTrainingRuntime", "torch-distributed", "torch",
                        "FailedJobs"};
    CHECK(val(t->failed, fl) == 1);
    CHECK(val(t->completed, LV) == 0);
    CHECK(state(t, "Failed") == 1 && state(t, "Suspended") == 0);
    char *text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjobs_failed_total{namespace=\"team-a\","
                         "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                         "framework=\"torch\",reason=\"FailedJobs\"} 1\n");
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjobs_suspended_total{");
    CHECK_CONTAINS(text, "kubeflow_trainer_trainjobs_resumed_total{");
    CHECK_CONTAINS(text, "result=\"Failed\"} 3\n"); /* duration sum: 13 - 10 */
    CHECK(strstr(text, "job-b") == NULL);
    free(text);
    /* not leading: the state gauge moves, nothing is counted */
    kt_tjm_set_counting(t, false);
    json_t *c = tj("job-c", AFTER, "[]", "[]");
    kt_tjm_trainjob_add(t, c, T0 + 20);
    kt_tjm_trainjob_delete(t, failed);
    CHECK(val(t->created, LV) == 1);
    CHECK(val(t->deleted, LV) == 0);
    CHECK(state(t, "Failed") == 0 && state(t, "Created") == 1);
    json_decref(a);
    json_decref(susp);
    json_decref(resumed);
    json_decref(failed);
    json_decref(c);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

/* A name re-created with a new uid whose delete was missed (a relist): one entry, the gauge
 * counts it once; its slot is reused after a delete (no growth over add/delete cycles). */
static void test_recreated_and_reused(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0, framework, NULL);
    json_t *a = tj("same", AFTER, "[]", "[]");
    json_t *b = tj("same", AFTER, "[]", "[{\"name\":\"node\",\"active\":1}]");
    json_object_set_new(json_object_get(b, "metadata"), "uid", json_string("other-uid"));
    kt_tjm_trainjob_add(t, a, T0 + 10);
    kt_tjm_trainjob_add(t, b, T0 + 11);
    CHECK(state(t, "Created") == 0);
    CHECK(state(t, "Running") == 1);
    CHECK(val(t->created, LV) == 2);
    kt_tjm_trainjob_delete(t, b);
    CHECK(state(t, "Running") == 0);
    for (int i = 0; i < 100; i++) {
        kt_tjm_trainjob_add(t, a, T0 + 12);
        kt_tjm_trainjob_delete(t, a);
    }
    CHECK(t->n_entries <= 2);
    CHECK(json_object_size(t->index) == 0);
    CHECK(t->n_labels == 1);
    json_decref(a);
    json_decref(b);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

/* The JobSet of TrainJob name (owned by uid owner), created at created, whose replicated
 * job "node" has ready and active child Jobs. */
static json_t *js_of(const char *name, const char *owner, const char *created, int ready,
                     int active)
{
    return json_pack("{s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]},"
                     " s:{s:[{s:s, s:i, s:i, s:i, s:i, s:i}]}}",
                     "metadata", "name", name, "namespace", "team-a", "creationTimestamp", created,
                     "ownerReferences", "apiVersion", "trainer.kubeflow.org/v1alpha1", "kind",
                     "TrainJob", "name", name, "uid", owner, "controller", 1, "status",
                     "replicatedJobsStatus", "name", "node", "ready", ready, "active", active,
                     "succeeded", 0, "failed", 0, "suspended", 0);
}

static void test_first_job_ready(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0, framework, NULL);
    json_t *a = tj("job-r", AFTER, "[]", "[]");
    json_t *pending = js_of("job-r", "job-r-uid", AFTER, 0, 1);
    json_t *ready = js_of("job-r", "job-r-uid", AFTER, 1, 1);
    kt_tjm_trainjob_add(t, a, T0 + 10);
    kt_tjm_jobset_add(t, pending, T0 + 10.5);
    kt_tjm_jobset_update(t, pending, pending, T0 + 11); /* pods Pending: active, not ready */
    CHECK(val(t->to_ready, LV) == 0);
    kt_tjm_jobset_update(t, pending, ready, T0 + 14); /* 0 -> 1 */
    CHECK(val(t->to_ready, LV) == 1);
    kt_tjm_jobset_update(t, ready, ready, T0 + 15);   /* a later reconcile: not again */
    kt_tjm_jobset_update(t, ready, pending, T0 + 16); /* a pod restarts ... */
    kt_tjm_jobset_update(t, pending, ready, T0 + 17); /* ... and is ready again: not first */
    CHECK(val(t->to_ready, LV) == 1);
    CHECK(kt_tjm_jobset_ready(ready) && !kt_tjm_jobset_ready(pending));
    CHECK(sizeof(struct tjm_entry) == 24); /* the new flag is a bit, not a byte more */
    char *text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text, "# TYPE kubeflow_trainer_trainjob_first_job_ready_seconds histogram\n");
    /* 4 s after creation: in the 5 s bucket, not in 2.5 */
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_trainjob_first_job_ready_seconds_bucket{namespace=\"team-a\","
                   "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                   "framework=\"torch\",le=\"2.5\"} 0\n");
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_trainjob_first_job_ready_seconds_bucket{namespace=\"team-a\","
                   "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                   "framework=\"torch\",le=\"5\"} 1\n");
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_trainjob_first_job_ready_seconds_sum{namespace=\"team-a\","
                   "runtime=\"ClusterTrainingRuntime\",runtime_name=\"torch-distributed\","
                   "framework=\"torch\"} 4\n");
    CHECK(strstr(text, "job-r") == NULL);
    free(text);

    /* negative: a JobSet whose Jobs never get ready (pods Pending, then failed) */
    json_t *b = tj("job-n", AFTER, "[]", "[]");
    json_t *nb0 = js_of("job-n", "job-n-uid", AFTER, 0, 0);
    json_t *nb1 = js_of("job-n", "job-n-uid", AFTER, 0, 1);
    kt_tjm_trainjob_add(t, b, T0 + 20);
    kt_tjm_jobset_add(t, nb0, T0 + 20);
    kt_tjm_jobset_update(t, nb0, nb1, T0 + 21);
    kt_tjm_jobset_update(t, nb1, nb0, T0 + 22);
    CHECK(val(t->to_ready, LV) == 1);
    /* negative: a JobSet left over from an earlier TrainJob of that name (another uid) */
    json_t *stale0 = js_of("job-n", "gone-uid", AFTER, 0, 1);
    json_t *stale1 = js_of("job-n", "gone-uid", AFTER, 1, 1);
    kt_tjm_jobset_update(t, stale0, stale1, T0 + 23);
    CHECK(val(t->to_ready, LV) == 1);
    /* not leading: not observed, and not later either (the leader of that moment did) */
    kt_tjm_set_counting(t, false);
    json_t *nb2 = js_of("job-n", "job-n-uid", AFTER, 1, 1);
    kt_tjm_jobset_update(t, nb0, nb2, T0 + 24);
    kt_tjm_set_counting(t, true);
    kt_tjm_jobset_update(t, nb0, nb2, T0 + 25);
    CHECK(val(t->to_ready, LV) == 1);
    /* unknown TrainJob (not in the cache): nothing, no entry made */
    json_t *o0 = js_of("job-x", "job-x-uid", AFTER, 0, 1),
           *o1 = js_of("job-x", "job-x-uid", AFTER, 1, 1);
    kt_tjm_jobset_update(t, o0, o1, T0 + 26);
    CHECK(val(t->to_ready, LV) == 1);
    CHECK(json_object_size(t->index) == 2);
    kt_tjm_jobset_update(NULL, o0, o1, T0 + 26); /* no metrics: nothing */
    json_decref(a);
    json_decref(pending);
    json_decref(ready);
    json_decref(b);
    json_decref(nb0);
    json_decref(nb1);
    json_decref(nb2);
    json_decref(stale0);
    json_decref(stale1);
    json_decref(o0);
    json_decref(o1);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

/* A restart (or a new leader's first start): a TrainJob already running when the process
 * started is not observed, whether its JobSet is listed ready (and stays ready) or is listed
 * not ready and gets ready later (its JobSet predates the process: its first ready Job may
 * have been before, then lost with a restarted pod). */
static void test_first_job_ready_restart(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0 + 100, framework, NULL);
    json_t *a = tj("job-r", AFTER, "[]", "[{\"name\":\"node\",\"active\":1,\"ready\":1}]");
    json_t *ready = js_of("job-r", "job-r-uid", AFTER, 1, 1);
    json_t *ready2 = js_of("job-r", "job-r-uid", AFTER, 1, 2);
    kt_tjm_trainjob_add(t, a, T0 + 101); /* the initial list */
    kt_tjm_jobset_add(t, ready, T0 + 101);
    kt_tjm_jobset_update(t, ready, ready2, T0 + 102);
    CHECK(val(t->to_ready, LV) == 0);
    json_t *b = tj("job-p", AFTER, "[]", "[]");
    json_t *p0 = js_of("job-p", "job-p-uid", AFTER, 0, 1);
    json_t *p1 = js_of("job-p", "job-p-uid", AFTER, 1, 1);
    kt_tjm_trainjob_add(t, b, T0 + 101);
    kt_tjm_jobset_add(t, p0, T0 + 101);
    kt_tjm_jobset_update(t, p0, p1, T0 + 105);
    CHECK(val(t->to_ready, LV) == 0);
    CHECK(val(t->to_jobset, LV) == 0);
    char *text = kt_metrics_expose(m, NULL);
    CHECK(strstr(text, "kubeflow_trainer_trainjob_first_job_ready_seconds_count{") == NULL);
    free(text);
    json_decref(a);
    json_decref(ready);
    json_decref(ready2);
    json_decref(b);
    json_decref(p0);
    json_decref(p1);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

/* kt_tjm_framework_fn for a runtime that reaches the cache after the TrainJobs: "" until *ctx
 * (runtime cached) is true. */
static void late_framework(void *ctx, const char *kind, const char *ns, const char *name, char *buf,
                           size_t n)
{
    const bool *cached = ctx;
    (void)kind;
    (void)ns;
    snprintf(buf, n, "%s", *cached && strcmp(name, "torch-distributed") == 0 ? "torch" : "");
}

/* The initial lists are not ordered: a TrainJob seen before its runtime gets the runtime's
 * framework once the runtime is cached, not framework="" for ever. */
static void test_framework_after_runtime(void)
{
    bool cached = false;
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0, late_framework, &cached);
    json_t *a = tj("job-a-91bc", AFTER, "[]", "[]");
    json_t *b = tj("job-b-52de", AFTER, "[]", "[]");
    json_t *done =
        tj("job-a-91bc", AFTER,
           "[{\"type\":\"Complete\",\"status\":\"True\",\"reason\":\"JobsCompleted\"}]", "[]");
    const char *nofw[] = {"team-a", "ClusterTrainingRuntime", "torch-distributed", ""};
    kt_tjm_trainjob_add(t, a, T0 + 10); /* before the runtime: created with framework "" */
    CHECK(val(t->created, nofw) == 1);
    cached = true; /* the runtime's informer delivers it */
    kt_tjm_trainjob_update(t, a, done, T0 + 70);
    CHECK(val(t->completed, LV) == 1);
    CHECK(val(t->completed, nofw) == 0);
    kt_tjm_trainjob_add(t, b, T0 + 80);
    CHECK(val(t->created, LV) == 1);
    /* negative: a runtime without a framework keeps the empty label */
    cached = false;
    json_t *c = tj("job-c-0aa1", AFTER, "[]", "[]");
    kt_tjm_trainjob_add(t, c, T0 + 90);
    CHECK(val(t->created, nofw) == 2);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(done);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

static void test_phases_and_build_info(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_tjm *t = kt_tjm_new(m, T0, NULL, NULL);
    kt_tjm_phase(t, KT_TJM_PHASE_BUILD, 0.002, false);
    kt_tjm_phase(t, KT_TJM_PHASE_BUILD, 0.003, true);
    kt_tjm_phase(t, KT_TJM_PHASE_POST, 0.0001, false);
    kt_tjm_phase(NULL, KT_TJM_PHASE_POST, 1, true); /* no metrics: nothing */
    kt_metrics_build_info(m, "reconciler");
    char *text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_reconcile_phase_duration_seconds_count{phase=\"Build\"} 2\n");
    CHECK_CONTAINS(
        text,
        "kubeflow_trainer_reconcile_phase_duration_seconds_count{phase=\"PostExecution\"} 1\n");
    CHECK_CONTAINS(text, "kubeflow_trainer_reconcile_phase_errors_total{phase=\"Build\"} 1\n");
    /* exposed at 0 from the start (rate() then sees the first error) */
    CHECK_CONTAINS(text,
                   "kubeflow_trainer_reconcile_phase_errors_total{phase=\"PostExecution\"} 0\n");
    CHECK_CONTAINS(
        text, "# TYPE kubeflow_trainer_build_info gauge\n"
              "kubeflow_trainer_build_info{component=\"reconciler\",git_version=\"" KT_BUILD_VERSION
              "\",upstream_version=\"v2.3.0\",api_version=\"trainer.kubeflow.org/v1alpha1\"} 1\n");
    /* an unknown framework is an empty label, and a TrainJob without a runtime kind defaults */
    json_t *o = json_pack("{s:{s:s, s:s, s:s, s:s}, s:{s:{s:s}}}", "metadata", "name", "x",
                          "namespace", "ns", "uid", "u", "creationTimestamp", AFTER, "spec",
                          "runtimeRef", "name", "custom");
    kt_tjm_trainjob_add(t, o, T0 + 10);
    const char *lv[] = {"ns", "ClusterTrainingRuntime", "custom", ""};
    CHECK(val(t->created, lv) == 1);
    CHECK_EQ_STR(kt_tjm_state(o), "Created");
    json_decref(o);
    free(text);
    kt_tjm_free(t);
    kt_metrics_free(m);
}

int main(void)
{
    kt_mem_init();
    test_lifecycle();
    test_failed_suspended();
    test_recreated_and_reused();
    test_first_job_ready();
    test_first_job_ready_restart();
    test_phases_and_build_info();
    test_framework_after_runtime();
    return test_report();
}
