/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_status_server.c - the status server's pure parts
 * (docs/internals/upstream.md#status-server): the route and the Authorization header. The server
 * itself runs against the real API server in tests/integration/status_server_test.sh. */
#include "tests/test.h"

#include "webhook/status_server.c"
#include "common/base/mem.h"

static void test_parse_path(void)
{
    char ns[254], name[254];
    CHECK_OK(kt_status_parse_path(
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/job-1/status", ns, name));
    CHECK_EQ_STR(ns, "team-a");
    CHECK_EQ_STR(name, "job-1");
    static const char *const bad[] = {
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/job-1",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/job-1/status/",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces//trainjobs/job-1/status",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs//status",
        "/apis/trainer.kubeflow.org/v1/namespaces/team-a/trainjobs/job-1/status",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/jobsets/job-1/status",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/a/b/trainjobs/job-1/status",
        "/",
        "",
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(bad); i++) {
        CHECK(kt_status_parse_path(bad[i], ns, name) != 0);
    }
    /* a 254-byte segment does not fit any Kubernetes name: refused, no overflow */
    char longp[400];
    memset(ns, 0, sizeof(ns));
    snprintf(longp, sizeof(longp),
             "/apis/trainer.kubeflow.org/v1alpha1/namespaces/%0254d/trainjobs/j/status", 0);
    CHECK(kt_status_parse_path(longp, ns, name) != 0);
}

static void test_bearer(void)
{
    char tok[16];
    CHECK_OK(kt_status_bearer("Bearer abc.def", tok, sizeof(tok)));
    CHECK_EQ_STR(tok, "abc.def");
    CHECK_OK(kt_status_bearer("bEaReR \t xyz  ", tok, sizeof(tok)));
    CHECK_EQ_STR(tok, "xyz");
    static const char *const bad[] = {"",          "Bearer",      "Bearer ",
                                      "Basic abc", "Bearer a b",  "Bearerabc",
                                      "Token abc", "Bearers abc", NULL};
    for (size_t i = 0; bad[i]; i++) {
        CHECK(kt_status_bearer(bad[i], tok, sizeof(tok)) != 0);
    }
    CHECK(kt_status_bearer(NULL, tok, sizeof(tok)) != 0);
    /* a token that does not fit the buffer is refused, not truncated */
    CHECK(kt_status_bearer("Bearer 0123456789abcdef", tok, sizeof(tok)) != 0);
}

/* trainerStatus's lastUpdatedTime after kt_status_normalize of {"lastUpdatedTime": IN} (IN is
 * JSON text); want NULL: refused (-1). */
static void norm(const char *in, const char *want)
{
    char *text = kt_xasprintf("{\"progressPercentage\":7,\"lastUpdatedTime\":%s}", in);
    json_t *ts = kt_json_parse(text, strlen(text), NULL);
    CHECK(ts != NULL);
    int rc = kt_status_normalize(ts);
    if (!want) {
        CHECK_EQ_INT(rc, -1);
    } else {
        CHECK_EQ_INT(rc, 0);
        char *got = kt_json_dump_go(json_object_get(ts, "lastUpdatedTime"));
        CHECK_EQ_STR(got, want);
        free(got);
        CHECK_EQ_INT((int)json_integer_value(json_object_get(ts, "progressPercentage")), 7);
    }
    json_decref(ts);
    free(text);
}

/* Stored as metav1.Time serialises: UTC, whole seconds (what upstream's e2e suite reads back). */
static void test_normalize_time(void)
{
    norm("\"2026-11-27T16:02:42.858523+00:00\"", "\"2026-11-27T16:02:42Z\"");
    norm("\"2026-11-27T16:02:42.999999999Z\"", "\"2026-11-27T16:02:42Z\"");
    norm("\"2026-01-01T00:30:00+01:00\"", "\"2025-12-31T23:30:00Z\"");
    norm("\"2026-11-27T16:02:42-05:30\"", "\"2026-11-27T21:32:42Z\"");
    /* negative: already in that form, or null, stays as it is */
    norm("\"2026-11-27T16:02:42Z\"", "\"2026-11-27T16:02:42Z\"");
    norm("null", "null");
    /* not a time Go's decoder takes: refused (422 Invalid payload) */
    norm("\"yesterday\"", NULL);
    norm("\"2026-11-27 16:02:42Z\"", NULL);
    norm("\"2026-02-30T00:00:00Z\"", NULL);
    norm("\"2026-11-27T16:02:42\"", NULL);
    norm("1764259362", NULL);
    norm("{}", NULL);
    /* no lastUpdatedTime: nothing to do (the API server's CEL rule requires it) */
    json_t *ts = json_pack("{s:i}", "progressPercentage", 1);
    CHECK_EQ_INT(kt_status_normalize(ts), 0);
    CHECK_EQ_INT((int)json_object_size(ts), 1);
    json_decref(ts);
}

int main(void)
{
    kt_mem_init();
    test_parse_path();
    test_bearer();
    test_normalize_time();
    return test_report();
}
