/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_status_server.c - the status server's pure parts (SPEC §5.8): the route
 * and the Authorization header. The server itself runs against the real API server in
 * tests/integration/status_server_test.sh. */
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
    for (size_t i = 0; i < KT_ARRAY_LEN(bad); i++) {
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

int main(void)
{
    kt_mem_init();
    test_parse_path();
    test_bearer();
    return test_report();
}
