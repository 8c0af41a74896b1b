/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_webhook_thread.c - kt-webhook's routes under concurrent load (run under TSan
 * too, hence the file name), plus the AdmissionReview codec's exact output.
 *
 * The webhook sources are compiled in (docs/internals/style.md#testing-a-static-helper): a
 * files-mode store with one torch ClusterTrainingRuntime, the four routes on a plain-HTTP kt_httpd
 * with 4 worker threads, 8 client threads posting allowed / denied / mutating reviews while a ninth
 * thread keeps republishing the runtime snapshot (the reference-counted swap). Every answer must be
 * the expected verdict and the review counter must add up. */
#include "tests/test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/net/httpd.h"
#include "common/base/log.h"
#include "webhook/admission.c"
#include "webhook/review_json.c"
#include "webhook/routes.c"
#include "webhook/store.c"
#include "common/base/mem.h"

#define CLIENTS 8
#define ROUNDS 40

static const char runtime_json[] =
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
    "\"metadata\":{\"name\":\"torch-distributed\"},\"spec\":{\"mlPolicy\":{\"numNodes\":1,"
    "\"torch\":{\"numProcPerNode\":\"auto\"}},\"template\":{\"spec\":{\"replicatedJobs\":[{"
    "\"name\":\"node\",\"replicas\":1,\"template\":{\"metadata\":{\"labels\":{"
    "\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":{"
    "\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"x\"}]}}}}}]}}}}";

/* A review of a TrainJob; env and patches are spliced in. */
static char *review(const char *uid, const char *env, const char *patches)
{
    return kt_xasprintf(
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"%s\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\","
        "\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"ns\",\"object\":{"
        "\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{"
        "\"name\":\"j\",\"namespace\":\"ns\"},\"spec\":{\"runtimeRef\":{\"name\":"
        "\"torch-distributed\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":"
        "\"ClusterTrainingRuntime\"},\"trainer\":{\"env\":[%s]},\"runtimePatches\":[%s]}}}}",
        uid, env, patches);
}

static struct kt_wsnap *fixture_snap(void)
{
    json_t *rts = json_array();

    json_array_append_new(rts, kt_json_parse(runtime_json, sizeof(runtime_json) - 1, NULL));
    return snap_new(rts, json_array());
}

/* ---- the codec, exactly ---- */

static void test_codec(void)
{
    struct kt_admission_ctx ctx = {0};
    struct kt_err err = {0};
    size_t len = 0;
    char *body = review("u-1", "", "");

    CHECK_EQ_INT(
        kt_admission_decode(&ctx, "application/json; charset=utf-8", body, strlen(body), &err),
        KT_ADMISSION_OK);
    CHECK_EQ_STR(ctx.uid, "u-1");
    CHECK_EQ_STR(ctx.kind, "TrainJob");
    CHECK(ctx.op == KT_OP_CREATE);
    kt_admission_deny(&ctx, "a: Invalid value: \"<x>\"");
    kt_admission_warn(&ctx, "w1");
    char *out = kt_admission_encode(&ctx, &len);
    CHECK_EQ_STR(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                      "\"response\":{\"uid\":\"u-1\",\"allowed\":false,\"status\":{\"metadata\":"
                      "{},\"message\":\"a: Invalid value: \\\"\\u003cx\\u003e\\\"\",\"reason\":"
                      "\"Forbidden\",\"code\":403},\"warnings\":[\"w1\"]}}\n");
    CHECK_EQ_INT((long long)len, (long long)strlen(out));
    free(out);
    kt_admission_patch(&ctx, json_pack("[{s:s,s:s,s:s}]", "op", "add", "path", "/a", "value", "b"));
    out = kt_admission_encode(&ctx, &len);
    CHECK_CONTAINS(out, "\"allowed\":true,\"status\":{\"metadata\":{},\"code\":200},\"patch\":"
                        "\"W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6ImIifV0=\","
                        "\"patchType\":\"JSONPatch\"");
    free(out);
    kt_admission_release(&ctx);
    kt_admission_release(&ctx); /* a released context is zeroed: releasing again is fine */
    free(body);

    /* Negative: every malformed body is a 400/415 with a message, nothing leaks. */
    static const struct {
        const char *ct, *body;
        enum kt_admission_bad want;
        const char *msg;
    } bad[] = {
        {"text/plain", "{}", KT_ADMISSION_BAD_CONTENT_TYPE, "expected application/json"},
        {NULL, "{}", KT_ADMISSION_BAD_CONTENT_TYPE, "contentType="},
        {"application/jsonx", "{}", KT_ADMISSION_BAD_CONTENT_TYPE, "expected"},
        {"application/json", "", KT_ADMISSION_BAD_BODY, "request body is empty"},
        {"application/json", "{", KT_ADMISSION_BAD_BODY, "couldn't decode"},
        {"application/json",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
         KT_ADMISSION_BAD_BODY, "has no request"},
        {"application/json",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
         "{\"uid\":\"x\",\"operation\":\"CREATE\",\"object\":[]}}",
         KT_ADMISSION_BAD_BODY, "request.object must be an object"},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(bad); i++) {
        struct kt_admission_ctx c = {0};
        struct kt_err e = {0};
        CHECK_EQ_INT(kt_admission_decode(&c, bad[i].ct, bad[i].body, strlen(bad[i].body), &e),
                     bad[i].want);
        CHECK_CONTAINS(e.msg, bad[i].msg);
        kt_admission_release(&c);
    }
    out = kt_admission_encode_error(400, "bad \xff byte", &len);
    CHECK_CONTAINS(out, "\"uid\":\"\",\"allowed\":false,\"status\":{\"metadata\":{},\"message\":"
                        "\"bad ? byte\",\"code\":400}");
    free(out);
}

/* ---- concurrent load ---- */

struct shared {
    uint16_t port;
    atomic_int bad;
    atomic_int done;
    struct kt_wstore *store;
};

/* One POST over a fresh TCP connection; the response body into out (cap n). */
static int post(uint16_t port, const char *path, const char *body, char *out, size_t n)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct timeval tv = {.tv_sec = 20};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    size_t got = 0;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    char *req = kt_xasprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
                             path, strlen(body), body);
    ssize_t w = write(fd, req, strlen(req));
    free(req);
    while (w > 0 && got + 1 < n) {
        ssize_t r = read(fd, out + got, n - 1 - got);
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
    }
    out[got] = '\0';
    close(fd);
    return w > 0 && got > 0 ? 0 : -1;
}

static void *client(void *arg)
{
    struct shared *sh = arg;
    char *ok = review("ok", "", "");
    char *denied = review("denied", "{\"name\":\"PET_NNODES\",\"value\":\"1\"}", "");
    char *mut = review("mut", "", "{\"manager\":\"a.io/b\"}");
    char local[8192];

    for (int i = 0; i < ROUNDS; i++) {
        const char *body = i % 3 == 0 ? ok : i % 3 == 1 ? denied : mut;
        const char *path = i % 3 == 2 ? KT_PATH_MUTATE_TRAINJOB : KT_PATH_VALIDATE_TRAINJOB;
        const char *want = i % 3 == 0
                               ? "\"allowed\":true,\"status\":{\"metadata\":{},\"code\":200}}"
                           : i % 3 == 1 ? "\"allowed\":false"
                                        : "\"patchType\":\"JSONPatch\"";
        if (post(sh->port, path, body, local, sizeof(local)) != 0 || !strstr(local, " 200 ") ||
            !strstr(local, want)) {
            atomic_fetch_add(&sh->bad, 1);
        }
    }
    free(ok);
    free(denied);
    free(mut);
    return NULL;
}

static void *republisher(void *arg)
{
    struct shared *sh = arg;
    long rounds = 0, wrong = 0;

    /* How many times this loop runs depends on the scheduler: count into locals and check once,
     * so the test's check count is the same on every run. */
    do { /* at least once, even when the clients are done first */
        publish(sh->store, fixture_snap());
        struct kt_wsnap *s = kt_wstore_acquire(sh->store);
        wrong += json_array_size(s->runtimes) != 1;
        kt_wsnap_release(s);
        rounds++;
    } while (!atomic_load(&sh->done));
    CHECK_EQ_INT(wrong, 0);
    CHECK(rounds > 0);
    return NULL;
}

static void test_concurrent(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_wstore *store = store_new();
    struct kt_wroutes r;
    struct kt_err err = {0};
    struct shared sh = {.store = store};
    pthread_t th[CLIENTS], rep;

    publish(store, fixture_snap());
    atomic_store(&store->synced, true);
    kt_wroutes_init(&r, store, m);
    struct kt_httpd_opts o = {
        .name = "webhook", .listen = "127.0.0.1:0", .threads = 4, .metrics = m};
    struct kt_httpd *h = kt_httpd_new(&o, &err);
    CHECK(h != NULL);
    kt_wroutes_register(&r, h);
    CHECK_OK(kt_httpd_start(h, &err));
    sh.port = kt_httpd_port(h);
    pthread_create(&rep, NULL, republisher, &sh);
    for (int i = 0; i < CLIENTS; i++) {
        pthread_create(&th[i], NULL, client, &sh);
    }
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
    }
    atomic_store(&sh.done, 1);
    pthread_join(rep, NULL);
    CHECK_EQ_INT(atomic_load(&sh.bad), 0);
    const char *allowed[] = {"validator.trainjob.trainer.kubeflow.org", "allowed"};
    const char *denied[] = {"validator.trainjob.trainer.kubeflow.org", "denied"};
    const char *patched[] = {"defaulter.trainjob.trainer.kubeflow.org", "patched"};
    double total = kt_metric_value(r.m_reviews, allowed) + kt_metric_value(r.m_reviews, denied) +
                   kt_metric_value(r.m_reviews, patched);
    CHECK_EQ_INT((long long)total, CLIENTS * ROUNDS);
    CHECK_EQ_INT((long long)kt_metric_value(r.m_reviews, denied), CLIENTS * (ROUNDS / 3));
    const char *v200[] = {"200", KT_PATH_VALIDATE_TRAINJOB};
    const char *m200[] = {"200", KT_PATH_MUTATE_TRAINJOB};
    const char *vpath[] = {KT_PATH_VALIDATE_TRAINJOB};
    CHECK_EQ_INT(
        (long long)(kt_metric_value(r.m_cr_total, v200) + kt_metric_value(r.m_cr_total, m200)),
        CLIENTS * ROUNDS);
    CHECK_EQ_INT((long long)kt_metric_value(r.m_cr_latency, vpath),
                 (long long)kt_metric_value(r.m_cr_total, v200));
    CHECK_EQ_INT((long long)kt_metric_value(r.m_cr_inflight, vpath), 0);
    kt_httpd_free(h);
    kt_wstore_free(store);
    kt_metrics_free(m);
}

int main(void)
{
    kt_mem_init();
    kt_log_set_level(KT_LOG_WARN);
    test_codec();
    test_concurrent();
    return test_report();
}
