/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_podevents.c - reconciler/podevents.c, the pure parts of the
 * FailedScheduling events: the pod store transform, the unschedulable test, the event message
 * and its cut, and the de-duplicating rate limiter on an injected clock. The posting path
 * (caches, ownership, the API server) is tested on the real API server by
 * tests/integration/reconciler_test.sh. Compiled in directly because reconciler/ is not part
 * of libkt.a. */
#include "tests/test.h"

#include <stdlib.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "reconciler/podevents.c"

static json_t *parse(const char *s)
{
    struct kt_err err = {0};
    json_t *v = kt_json_parse(s, strlen(s), &err);
    KT_ASSERT(v);
    return v;
}

#define POD_META                                                                                   \
    "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","    \
    "\"uid\":\"u1\",\"resourceVersion\":\"7\",\"generateName\":\"p-\",\"labels\":{"                \
    "\"jobset.sigs.k8s.io/jobset-name\":\"tj\",\"jobset.sigs.k8s.io/jobset-uid\":\"js1\","         \
    "\"jobset.sigs.k8s.io/replicatedjob-name\":\"node\",\"batch.kubernetes.io/job-name\":\"x\"},"  \
    "\"ownerReferences\":[{\"kind\":\"Job\"}]}"

static void test_slim(void)
{
    json_t *pod = parse("{" POD_META ",\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
                        "\"status\":{\"phase\":\"Pending\",\"conditions\":["
                        "{\"type\":\"Ready\",\"status\":\"False\"},"
                        "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
                        "\"Unschedulable\",\"message\":\"0/4 nodes are available\"}]}}");
    json_t *want =
        parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
              "\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"7\",\"labels\":{"
              "\"jobset.sigs.k8s.io/jobset-name\":\"tj\",\"jobset.sigs.k8s.io/jobset-uid\":\"js1\","
              "\"jobset.sigs.k8s.io/replicatedjob-name\":\"node\"}},\"status\":{\"conditions\":["
              "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
              "\"message\":\"0/4 nodes are available\"}]}}");
    json_t *slim = kt_pod_slim(pod, NULL);
    CHECK(json_equal(slim, want));
    json_decref(slim);
    json_decref(want);
    /* no status, no labels: identity only, no crash */
    slim = kt_pod_slim(parse("{\"metadata\":{\"name\":\"q\"}}"), NULL);
    want = parse("{\"metadata\":{\"name\":\"q\",\"labels\":{}}}");
    CHECK(json_equal(slim, want));
    CHECK(kt_pod_unschedulable(slim) == NULL);
    json_decref(slim);
    json_decref(want);
}

static json_t *pod_with(const char *cond)
{
    char *s = kt_xasprintf("{\"status\":{\"conditions\":[%s]}}", cond);
    json_t *v = parse(s);
    free(s);
    return v;
}

static void test_unschedulable(void)
{
    static const struct {
        const char *cond, *want; /* want NULL: not unschedulable */
    } cases[] = {
        {"{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
         "\"message\":\"0/4 nodes are available: 4 Insufficient nvidia.com/gpu.\"}",
         "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."},
        {"{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}", ""},
        {"{\"type\":\"PodScheduled\",\"status\":\"True\"}", NULL},
        {"{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"SchedulingGated\","
         "\"message\":\"Scheduling is blocked due to non-empty scheduling gates\"}",
         NULL},
        {"{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"SchedulerError\"}", NULL},
        {"{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"Unschedulable\"}", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(cases); i++) {
        json_t *pod = pod_with(cases[i].cond);
        const char *got = kt_pod_unschedulable(pod);
        if (cases[i].want) {
            CHECK(got != NULL);
            CHECK_EQ_STR(got ? got : "(null)", cases[i].want);
        } else {
            CHECK(got == NULL);
        }
        json_decref(pod);
    }
    CHECK(kt_pod_unschedulable(NULL) == NULL);
}

static void test_note(void)
{
    char *n = kt_pod_sched_note("node", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.");
    CHECK_EQ_STR(n, "replicatedJob \"node\": 0/4 nodes are available: 4 Insufficient "
                    "nvidia.com/gpu.");
    free(n);
    n = kt_pod_sched_note(NULL, "m");
    CHECK_EQ_STR(n, "m");
    free(n);
    n = kt_pod_sched_note("", "m");
    CHECK_EQ_STR(n, "m");
    free(n);
    /* exactly the limit: kept whole */
    char *msg = kt_xcalloc(3000, 1);
    memset(msg, 'a', KT_SCHED_NOTE_MAX);
    n = kt_pod_sched_note(NULL, msg);
    CHECK_EQ_INT(strlen(n), KT_SCHED_NOTE_MAX);
    free(n);
    /* longer: cut to the limit with " ...", never inside a UTF-8 sequence */
    memset(msg, 'a', 2000);
    msg[1019] = (char)0xc3; /* "é" across the cut at byte 1020 */
    msg[1020] = (char)0xa9;
    n = kt_pod_sched_note(NULL, msg);
    CHECK_EQ_INT(strlen(n), KT_SCHED_NOTE_MAX - 1);
    CHECK_EQ_STR(n + strlen(n) - 5, "a ...");
    free(n);
    msg[1019] = 'a';
    msg[1020] = 'a';
    n = kt_pod_sched_note("node", msg);
    CHECK_EQ_INT(strlen(n), KT_SCHED_NOTE_MAX);
    CHECK(strncmp(n, "replicatedJob \"node\": aaa", 25) == 0);
    CHECK_EQ_STR(n + strlen(n) - 4, " ...");
    free(n);
    free(msg);
}

static void test_limiter(void)
{
    struct kt_evlimit *l = kt_evlimit_new();
    double t = 1000;
    CHECK(kt_evlimit_allow(l, "uid-a", "m1", t));
    /* the same message for the same TrainJob: once per window */
    CHECK(!kt_evlimit_allow(l, "uid-a", "m1", t + 1));
    CHECK(!kt_evlimit_allow(l, "uid-a", "m1", t + KT_SCHED_EVENT_DEDUP_S - 1));
    /* another TrainJob, or another message: posted */
    CHECK(kt_evlimit_allow(l, "uid-b", "m1", t + 2));
    CHECK(kt_evlimit_allow(l, "uid-a", "m2", t + 2));
    /* after the window the same message is posted again */
    CHECK(kt_evlimit_allow(l, "uid-a", "m1", t + KT_SCHED_EVENT_DEDUP_S + 1));
    kt_evlimit_free(l);

    /* rate: a burst of distinct messages, then one per refill period */
    l = kt_evlimit_new();
    int posted = 0;
    for (int i = 0; i < 20; i++) {
        char m[16];
        snprintf(m, sizeof(m), "m%d", i);
        posted += kt_evlimit_allow(l, "uid-r", m, t) ? 1 : 0;
    }
    CHECK_EQ_INT(posted, (int)KT_SCHED_EVENT_BURST);
    /* a refused message was not recorded: it may post once a token is back */
    CHECK(!kt_evlimit_allow(l, "uid-r", "m19", t + KT_SCHED_EVENT_REFILL_S / 2));
    CHECK(kt_evlimit_allow(l, "uid-r", "m19", t + KT_SCHED_EVENT_REFILL_S));
    CHECK(!kt_evlimit_allow(l, "uid-r", "m18", t + KT_SCHED_EVENT_REFILL_S));
    /* other TrainJobs have their own bucket */
    CHECK(kt_evlimit_allow(l, "uid-s", "m0", t + KT_SCHED_EVENT_REFILL_S));
    /* a long quiet time refills up to the burst only */
    posted = 0;
    for (int i = 100; i < 120; i++) {
        char m[16];
        snprintf(m, sizeof(m), "m%d", i);
        posted += kt_evlimit_allow(l, "uid-r", m, t + 100 * KT_SCHED_EVENT_REFILL_S) ? 1 : 0;
    }
    CHECK_EQ_INT(posted, (int)KT_SCHED_EVENT_BURST);
    kt_evlimit_free(l);
    kt_evlimit_free(NULL);
}

int main(void)
{
    kt_mem_init();
    test_slim();
    test_unschedulable();
    test_note();
    test_limiter();
    return test_report();
}
