/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_admission.c - AdmissionReview decoding and the four reviews on arbitrary
 * bytes.
 *
 * Target: kt_admission_decode, kt_wroutes_review, kt_admission_encode
 * The first byte picks the webhook path; the rest is the request body. Whatever decodes is
 * reviewed against a fixed torch ClusterTrainingRuntime and TrainingRuntime (files-mode store,
 * fixed clock) and the encoded response must parse back as an AdmissionReview with the
 * request's uid. Rejected bodies must still encode an error review. The fast review reader
 * (webhook/review_json.c) must build exactly jansson's tree for every body it takes.
 * Deterministic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "webhook/admission.c"
#include "webhook/review_json.c"
#include "webhook/routes.c"
#include "webhook/store.c"
#include "tests/review_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {KT_PATH_MUTATE_TRAINJOB, KT_PATH_VALIDATE_TRAINJOB,
                                    KT_PATH_VALIDATE_TR, KT_PATH_VALIDATE_CTR};

static const char runtimes_json[] =
    "[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
    "\"metadata\":{\"name\":\"torch-distributed\"},\"spec\":{\"mlPolicy\":{\"numNodes\":1,"
    "\"torch\":{\"numProcPerNode\":\"auto\"}},\"template\":{\"spec\":{\"replicatedJobs\":[{"
    "\"name\":\"node\",\"replicas\":1,\"template\":{\"metadata\":{\"labels\":{"
    "\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":{"
    "\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"x\"}]}}}}}]}}}},"
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainingRuntime\","
    "\"metadata\":{\"name\":\"torch\",\"namespace\":\"default\"},\"spec\":{\"mlPolicy\":{"
    "\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\","
    "\"template\":{\"metadata\":{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":"
    "\"trainer\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\"}]}}}}}]}}}}"
    "]";

static time_t fixed_now(void)
{
    return 1767225600; /* 2026-01-01T00:00:00Z */
}

static struct kt_wstore *fixture(void)
{
    static struct kt_wstore *s;

    if (!s) {
        s = store_new();
        publish(s, snap_new(kt_json_parse(runtimes_json, sizeof(runtimes_json) - 1, NULL),
                            json_array()));
        atomic_store(&s->synced, true);
    }
    return s;
}

static void check_encoded(char *text, size_t len, const char *uid)
{
    json_t *back = kt_json_parse(text, len, NULL);
    const json_t *resp = json_object_get(back, "response");

    if (!back || strcmp(kt_json_str(back, "kind", ""), "AdmissionReview") != 0 ||
        !json_is_boolean(json_object_get(resp, "allowed")) ||
        strcmp(kt_json_str(resp, "uid", "?"), uid) != 0) {
        abort();
    }
    json_decref(back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kt_admission_ctx ctx = {0};
    struct kt_err err = {0};
    struct kt_wroutes r;
    size_t len = 0;

    kt_mem_init();
    if (size < 1) {
        return 0;
    }
    kt_wroutes_init(&r, fixture(), NULL);
    r.now = fixed_now;
    if (review_diff((const char *)data + 1, size - 1) < 0) {
        abort();
    }
    const char *path = paths[data[0] % 4];
    const char *ct = data[0] & 0x80 ? "text/plain" : "application/json";
    if (kt_admission_decode(&ctx, ct, (const char *)data + 1, size - 1, &err) != KT_ADMISSION_OK) {
        check_encoded(kt_admission_encode_error(400, err.msg, &len), len, "");
        kt_admission_release(&ctx);
        return 0;
    }
    (void)kt_wroutes_review(&r, path, &ctx);
    check_encoded(kt_admission_encode(&ctx, &len), len, ctx.uid);
    kt_admission_release(&ctx);
    return 0;
}
