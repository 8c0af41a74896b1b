/* SPDX-License-Identifier: Apache-2.0 */
/* tests/tools/bench_webhook_validate.c - in-process micro-benchmark of kt-webhook's TrainJob
 * review path (webhook/routes.c minus HTTP/TLS), to see where a review's CPU goes.
 *
 * Usage: bench_webhook_validate CASE_DIR [SECONDS]. CASE_DIR is a tests/admission case with
 * request.json (a TrainJob AdmissionReview) and objects.yaml (its runtimes). Each stage runs in
 * a loop for SECONDS (default 1) and prints its thread CPU time per call, so the figures hold
 * on a loaded machine:
 *   bench: review-parse: X us            (the request body -> JSON, kt_json_parse)
 *   bench: review-validate-decode: X us  (kt_validate_trainjob_webhook: copies and decodes
 *                                          the runtime on every call, the old path)
 *   bench: review-validate-cached: X us  (the same with kt_vruntimes.decoded: the runtimes
 *                                          decoded once, as the snapshot does now)
 *   bench: review-parse-fast: X us       (the body -> JSON as kt-webhook reads it now,
 *                                          webhook/review_json.c)
 *   bench: review-whole: X us            (decode + review + encode + release: everything
 *                                          kt-webhook does per review above HTTP/TLS)
 *   bench: default-whole: X us           (the same on the defaulter's path, the review as
 *                                          given: no runtimePatches time to set, no patch)
 *   bench: default-patched: X us         (the defaulter's path, the review with a
 *                                          runtimePatches entry without time and an integer
 *                                          GPU limit added: the round-trip patch is built)
 * Asserts nothing; exits 1 when the fixture cannot be read or is not allowed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/runtime.h"
#include "common/base/buf.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/validate/validate.h"
#include "common/base/yaml.h"
#include "common/plugins/plugins.h"
#include "webhook/admission.c"
#include "webhook/review_json.c"
#include "webhook/routes.c"
#include "webhook/store.c"

struct fixture {
    struct kt_framework fw;
    struct kt_wstore *store; /* files mode, for review-whole */
    struct kt_wroutes routes;
    char *body;
    size_t body_len;
    char *mbody;      /* body with a runtimePatches entry (no time) and an integer GPU limit */
    json_t *object;   /* request.object */
    json_t *runtimes; /* defaulted, as kt-webhook's files store keeps them */
    struct kt_runtime *decoded;
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load_runtimes(const char *path, struct fixture *f)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    struct kt_yaml_stream s = {0};
    struct kt_validator *v = kt_validator_new(&err);
    int rc = -1;
    kt_buf_init(&b, 8u << 20);
    kt_yaml_limits_default(&lim);
    if (!v || kt_buf_read_file(&b, path, &err) != 0 ||
        kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &s, &err) != 0) {
        fprintf(stderr, "bench_webhook_validate: %s: %s\n", path, err.msg);
        goto out;
    }
    for (size_t i = 0; i < s.len; i++) {
        if (kt_validate_is_ours(s.docs[i].root)) {
            json_t *c = json_deep_copy(s.docs[i].root);
            kt_validate_defaults(v, json_string_value(json_object_get(c, "kind")), c);
            json_array_append_new(f->runtimes, c);
        }
    }
    size_t n = json_array_size(f->runtimes);
    f->decoded = kt_xcalloc(n ? n : 1, sizeof(*f->decoded));
    for (size_t i = 0; i < n; i++) {
        if (kt_validate_decode_runtime(json_array_get(f->runtimes, i), &f->decoded[i], &err) != 0) {
            fprintf(stderr, "bench_webhook_validate: %s\n", err.msg);
            goto out;
        }
    }
    rc = 0;
out:
    kt_yaml_stream_release(&s);
    kt_buf_release(&b);
    kt_validator_free(v);
    return rc;
}

#define PATCHED_SPEC                                                                               \
    "{\"trainer\":{\"numNodes\":2,\"resourcesPerNode\":{\"limits\":{\"nvidia.com/gpu\":2}}},"      \
    "\"runtimePatches\":[{\"manager\":\"acme.io/bench\",\"trainingRuntimeSpec\":{\"template\":"    \
    "{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":"      \
    "{\"spec\":{\"nodeSelector\":{\"pool\":\"a\"}}}}}}]}}}}]}"

static int load(const char *dir, struct fixture *f)
{
    struct kt_buf b;
    struct kt_err err = {0};
    char *req = kt_xasprintf("%s/request.json", dir);
    char *objs = kt_xasprintf("%s/objects.yaml", dir);
    int rc = -1;
    kt_buf_init(&b, 8u << 20);
    if (kt_buf_read_file(&b, req, &err) != 0) {
        fprintf(stderr, "bench_webhook_validate: %s: %s\n", req, err.msg);
        goto out;
    }
    f->body_len = b.len;
    f->body = kt_buf_take(&b, NULL);
    json_t *review = kt_json_parse(f->body, f->body_len, &err);
    f->object = json_incref(kt_json_path(review, "request.object"));
    json_t *spec = kt_json_path(review, "request.object.spec");
    json_t *add = kt_json_parse(PATCHED_SPEC, strlen(PATCHED_SPEC), &err);
    if (spec && add) {
        json_object_update(spec, add);
        f->mbody = kt_json_dump(review);
    }
    json_decref(add);
    json_decref(review);
    if (!f->object) {
        fprintf(stderr, "bench_webhook_validate: %s: no request.object\n", req);
        goto out;
    }
    rc = load_runtimes(objs, f);
    if (rc == 0) {
        f->store = kt_wstore_from_files(objs, &err);
        if (!f->store) {
            fprintf(stderr, "bench_webhook_validate: %s: %s\n", objs, err.msg);
            rc = -1;
        }
        kt_wroutes_init(&f->routes, f->store, NULL);
    }
out:
    kt_buf_release(&b);
    free(req);
    free(objs);
    return rc;
}

/* One validation; -1 when it failed or did not allow the fixture. */
static int validate_once(const struct fixture *f, bool cached)
{
    struct kt_vruntimes rts = {.runtimes = f->runtimes, .decoded = cached ? f->decoded : NULL};
    struct kt_vresult r;
    struct kt_err err = {0};
    kt_vresult_init(&r);
    int rc = kt_validate_trainjob_webhook(&f->fw, f->object, NULL, &rts, &r, &err);
    if (rc != 0 || r.len != 0) {
        char *s = kt_vresult_string(&r);
        fprintf(stderr, "bench_webhook_validate: not allowed: %s%s\n", err.msg, s);
        free(s);
        rc = -1;
    }
    kt_vresult_release(&r);
    return rc;
}

static int parse_once(const struct fixture *f)
{
    json_t *v = kt_json_parse(f->body, f->body_len, NULL);
    int rc = v ? 0 : -1;
    json_decref(v);
    return rc;
}

static int parse_fast_once(const struct fixture *f)
{
    json_t *v = kt_review_json_parse(f->body, f->body_len);
    int rc = v ? 0 : -1;
    json_decref(v);
    return rc;
}

/* What routes.c's answer() does for one review of body at path, minus the HTTP response;
 * -1 unless the verdict is want. */
static int review_once(struct fixture *f, const char *body, const char *path, const char *want)
{
    struct kt_admission_ctx ctx = {0};
    size_t len = 0;
    int rc = -1;

    if (body && kt_admission_decode(&ctx, "application/json", body, strlen(body), NULL) ==
                    KT_ADMISSION_OK) {
        const char *v = kt_wroutes_review(&f->routes, path, &ctx);
        char *out = kt_admission_encode(&ctx, &len);
        rc = strcmp(v, want) == 0 ? 0 : -1;
        free(out);
    }
    kt_admission_release(&ctx);
    return rc;
}

static int whole_once(struct fixture *f)
{
    return review_once(f, f->body, KT_PATH_VALIDATE_TRAINJOB, "allowed");
}

/* Run stage 0 (parse), 1 (validate, decode), 2 (validate, cached), 3 (fast parse), 4 (whole),
 * 5 (defaulter, no patch), 6 (defaulter, patched) for secs of CPU time; prints microseconds per
 * call. */
static int run(struct fixture *f, int stage, const char *name, double secs)
{
    long n = 0;
    double start = cpu_now(), end = start;
    while (end - start < secs) {
        for (int i = 0; i < 50; i++, n++) {
            int rc = stage == 0   ? parse_once(f)
                     : stage == 3 ? parse_fast_once(f)
                     : stage == 4 ? whole_once(f)
                     : stage == 5 ? review_once(f, f->body, KT_PATH_MUTATE_TRAINJOB, "allowed")
                     : stage == 6 ? review_once(f, f->mbody, KT_PATH_MUTATE_TRAINJOB, "patched")
                                  : validate_once(f, stage == 2);
            if (rc != 0) {
                return -1;
            }
        }
        end = cpu_now();
    }
    printf("bench: %s: %.1f us\n", name, (end - start) * 1e6 / (double)n);
    return 0;
}

int main(int argc, char **argv)
{
    struct fixture f;
    int rc = 1;
    memset(&f, 0, sizeof(f));
    kt_mem_init();
    kt_framework_default(&f.fw);
    f.runtimes = json_array();
    double secs = argc > 2 ? strtod(argv[2], NULL) : 1.0;
    if (argc < 2) {
        fprintf(stderr, "usage: bench_webhook_validate CASE_DIR [SECONDS]\n");
        goto out;
    }
    if (load(argv[1], &f) != 0 || run(&f, 0, "review-parse", secs) != 0 ||
        run(&f, 1, "review-validate-decode", secs) != 0 ||
        run(&f, 2, "review-validate-cached", secs) != 0 ||
        run(&f, 3, "review-parse-fast", secs) != 0 || run(&f, 4, "review-whole", secs) != 0 ||
        run(&f, 5, "default-whole", secs) != 0 || run(&f, 6, "default-patched", secs) != 0) {
        goto out;
    }
    rc = 0;
out:
    for (size_t i = 0; f.decoded && i < json_array_size(f.runtimes); i++) {
        kt_runtime_release(&f.decoded[i]);
    }
    free(f.decoded);
    kt_wstore_free(f.store);
    free(f.body);
    free(f.mbody);
    json_decref(f.object);
    json_decref(f.runtimes);
    return rc;
}
