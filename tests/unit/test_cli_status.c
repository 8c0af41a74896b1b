/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_cli_status.c - cli/status_view.c, the view of `ktctl status`: the line
 * saying what a TrainJob waits for (finished Failed/Complete with reason and message,
 * suspended and suspended by Kueue, resources creation failed, no JobSet yet, the scheduler's
 * message of a Pending pod, an initializer running, pods starting, N/M Running), pod counts
 * by phase per replicated job in the JobSet's order, the last events oldest first, notes for
 * what could not be read, and the text rendering. Compiled in directly: cli/ is not in
 * libkt.a. */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "cli/status_view.c"
#include "common/base/mem.h"

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v) {
        fprintf(stderr, "bad fixture: %s: %s\n", e.text, s);
        abort();
    }
    return v;
}

#define TJ(conds, extra)                                                                           \
    "{\"metadata\":{\"name\":\"job\",\"namespace\":\"ns\",\"uid\":\"u\","                          \
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"" extra "},\"spec\":{\"runtimeRef\":{\"name\":" \
    "\"torch-distributed\"}},\"status\":{\"conditions\":" conds "}}"
#define JS                                                                                         \
    "{\"metadata\":{\"name\":\"job\"},\"spec\":{\"replicatedJobs\":[{\"name\":\"dataset-"          \
    "initializer\"},{\"name\":\"node\"}]}}"
#define POD(rj, phase, status)                                                                     \
    "{\"metadata\":{\"name\":\"job-" rj "-0-0-x\",\"labels\":{"                                    \
    "\"jobset.sigs.k8s.io/replicatedjob-name\":\"" rj "\"}},\"status\":{\"phase\":\"" phase        \
    "\"" status "}}"
#define UNSCHED                                                                                    \
    ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"                 \
    "\"Unschedulable\",\"message\":\"0/4 nodes are available: 4 Insufficient nvidia.com/gpu.\"}]"

/* The waiting line for the given objects (NULL = none). */
static char *waiting(const char *tj, const char *js, const char *pods)
{
    json_t *t = J(tj), *j = js ? J(js) : NULL, *p = pods ? J(pods) : NULL;
    struct cli_status_input in = {t, j, NULL, p, NULL, NULL};
    json_t *v = cli_status_view(&in);
    char *out = kt_xstrdup(cli_status_waiting(v));
    json_decref(v);
    json_decref(t);
    json_decref(j);
    json_decref(p);
    return out;
}

#define CHECK_WAITING(want, tj, js, pods)                                                          \
    do {                                                                                           \
        char *w_ = waiting(tj, js, pods);                                                          \
        CHECK_EQ_STR(w_, want);                                                                    \
        free(w_);                                                                                  \
    } while (0)

static void test_waiting(void)
{
    CHECK_WAITING("finished: Failed \xe2\x80\x94 FailedJobs: jobset failed due to one or more job "
                  "failures",
                  TJ("[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"FailedJobs\","
                     "\"message\":\"jobset failed due to one or more job failures\"}]",
                     ""),
                  JS, "[]");
    CHECK_WAITING("finished: Complete \xe2\x80\x94 JobsCompleted: done",
                  TJ("[{\"type\":\"Complete\",\"status\":\"True\",\"reason\":\"JobsCompleted\","
                     "\"message\":\"done\"}]",
                     ""),
                  JS, "[]");
    CHECK_WAITING("suspended",
                  TJ("[{\"type\":\"Suspended\",\"status\":\"True\",\"reason\":\"Suspended\"}]", ""),
                  JS, "[]");
    CHECK_WAITING("suspended by Kueue",
                  TJ("[{\"type\":\"Suspended\",\"status\":\"True\"}]",
                     ",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\"}"),
                  JS, "[]");
    CHECK_WAITING("waiting for resources: quota exceeded",
                  TJ("[{\"type\":\"ResourcesCreationFailed\",\"status\":\"True\",\"message\":"
                     "\"quota exceeded\"}]",
                     ""),
                  NULL, NULL);
    CHECK_WAITING("waiting for the JobSet to be created", TJ("[]", ""), NULL, NULL);
    CHECK_WAITING("waiting for scheduling: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
                  TJ("[]", ""), JS,
                  "[" POD("node", "Pending", UNSCHED) "," POD("node", "Running", "") "]");
    CHECK_WAITING("initializer dataset-initializer running", TJ("[]", ""), JS,
                  "[" POD("dataset-initializer", "Running", "") "]");
    CHECK_WAITING("waiting for pods: the JobSet has no pods yet", TJ("[]", ""), JS, "[]");
    CHECK_WAITING("waiting for pods to start: job-node-0-0-x ContainerCreating", TJ("[]", ""), JS,
                  "[" POD("node", "Pending",
                          ",\"containerStatuses\":[{\"state\":{\"waiting\":{\"reason\":"
                          "\"ContainerCreating\"}}}]") "]");
    CHECK_WAITING(
        "running: 1/2 pods Running", TJ("[]", ""), JS,
        "[" POD("dataset-initializer", "Succeeded", "") "," POD("node", "Running", "") "]");
    /* negative: a False Failed condition is not a finish */
    CHECK_WAITING("waiting for the JobSet to be created",
                  TJ("[{\"type\":\"Failed\",\"status\":\"False\"}]", ""), NULL, NULL);
}

static void test_view_and_print(void)
{
    json_t *tj = J(TJ("[{\"type\":\"Suspended\",\"status\":\"False\",\"reason\":\"Resumed\","
                      "\"lastTransitionTime\":\"2026-01-01T00:00:30Z\"}]",
                      ""));
    json_t *js = J(JS);
    json_t *jobs = J("[{\"metadata\":{\"name\":\"job-node-0\",\"labels\":{"
                     "\"jobset.sigs.k8s.io/replicatedjob-name\":\"node\"}},\"status\":{"
                     "\"active\":2}}]");
    json_t *pods = J("[" POD("node", "Pending", UNSCHED) "," POD("node", "Running", "") "]");
    json_t *events = json_array();
    for (int i = 0; i < 12; i++) {
        char *e = kt_xasprintf("{\"lastTimestamp\":\"2026-01-01T00:01:%02dZ\",\"type\":\"Warning\","
                               "\"reason\":\"R%d\",\"message\":\"m%d\"}",
                               59 - i, 59 - i, 59 - i);
        json_array_append_new(events, J(e));
        free(e);
    }
    json_t *notes = J("[\"events: Forbidden: no\"]");
    struct cli_status_input in = {tj, js, jobs, pods, events, notes};
    json_t *v = cli_status_view(&in);
    json_t *rj = json_object_get(v, "replicatedJobs");
    CHECK_EQ_INT(json_array_size(rj), 2);
    CHECK_EQ_STR(kt_json_str(json_array_get(rj, 0), "name", ""), "dataset-initializer");
    json_t *node = json_array_get(rj, 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(node, "pods"), "Pending")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(node, "pods"), "Running")), 1);
    CHECK_EQ_INT(json_array_size(json_object_get(node, "jobs")), 1);
    json_t *ev = json_object_get(v, "events");
    CHECK_EQ_INT(json_array_size(ev), CLI_STATUS_EVENTS_MAX);
    CHECK_EQ_STR(kt_json_str(json_array_get(ev, 0), "reason", ""), "R50"); /* oldest kept */
    CHECK_EQ_STR(kt_json_str(json_array_get(ev, 9), "reason", ""), "R59");
    CHECK_EQ_STR(kt_json_str(json_object_get(v, "trainJob"), "name", ""), "job");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cli_status_print(f, v, 1767225720); /* 2026-01-01T00:02:00Z */
    fclose(f);
    CHECK_CONTAINS(text, "TrainJob:  ns/job (created 2m ago)\n");
    CHECK_CONTAINS(text, "Runtime:   ClusterTrainingRuntime torch-distributed\n");
    CHECK_CONTAINS(text, "Status:    waiting for scheduling: 0/4 nodes are available");
    CHECK_CONTAINS(text, "  node: pods Pending 1 Running 1 Succeeded 0 Failed 0\n");
    CHECK_CONTAINS(text, "    Job job-node-0: active 2, succeeded 0, failed 0\n");
    CHECK_CONTAINS(text, "    Pending pod job-node-0-0-x: Unschedulable: 0/4 nodes are available");
    CHECK_CONTAINS(text, "  Suspended                False  90s   Resumed\n");
    CHECK_CONTAINS(text, "Note: events: Forbidden: no\n");
    CHECK(strstr(text, "R49") == NULL); /* older than the last 10 */
    free(text);
    json_decref(v);
    json_decref(tj);
    json_decref(js);
    json_decref(jobs);
    json_decref(pods);
    json_decref(events);
    json_decref(notes);
}

int main(void)
{
    kt_mem_init();
    test_waiting();
    test_view_and_print();
    return test_report();
}
