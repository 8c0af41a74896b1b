/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_api.c - libFuzzer target for the TrainJob and runtime codecs.
 *
 * Target: kt_trainjob_decode, kt_runtime_decode
 * The input is JSON (jansson). Each document is decoded as it is, and again with
 * apiVersion/kind forced to TrainJob and to ClusterTrainingRuntime so mutations reach the
 * fields. Property: no crash or leak, and for every accepted input encode(decode(x)) is a
 * fixed point: decoding the encoded object and encoding again gives the same JSON. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/base/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_trainjob(json_t *obj)
{
    struct kt_trainjob tj;
    struct kt_trainjob again;
    json_t *out;
    json_t *out2;

    if (kt_trainjob_decode(obj, &tj, NULL) < 0) {
        return;
    }
    out = kt_trainjob_encode(&tj);
    if (!json_equal(out, tj.obj) || kt_trainjob_decode(out, &again, NULL) < 0) {
        abort();
    }
    out2 = kt_trainjob_encode(&again);
    if (!json_equal(out2, tj.obj)) {
        abort();
    }
    json_decref(out2);
    kt_trainjob_release(&again);
    kt_trainjob_release(&tj);
}

static void check_runtime(json_t *obj)
{
    struct kt_runtime rt;
    struct kt_runtime again;
    json_t *out;
    json_t *out2;

    if (kt_runtime_decode(obj, &rt, NULL) < 0) {
        return;
    }
    out = kt_runtime_encode(&rt);
    if (!json_equal(out, rt.obj) || kt_runtime_decode(out, &again, NULL) < 0) {
        abort();
    }
    out2 = kt_runtime_encode(&again);
    if (!json_equal(out2, rt.obj)) {
        abort();
    }
    json_decref(out2);
    kt_runtime_release(&again);
    kt_runtime_release(&rt);
}

/* A copy of v with apiVersion/kind set, or NULL when v is not an object. */
static json_t *as_kind(const json_t *v, const char *kind)
{
    json_t *c;

    if (!json_is_object(v)) {
        return NULL;
    }
    c = json_deep_copy(v);
    json_object_set_new(c, "apiVersion", json_string("trainer.kubeflow.org/v1alpha1"));
    json_object_set_new(c, "kind", json_string(kind));
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *v;

    kt_mem_init();
    v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!v) {
        return 0;
    }
    check_trainjob(json_deep_copy(v));
    check_runtime(json_deep_copy(v));
    check_trainjob(as_kind(v, "TrainJob"));
    check_runtime(as_kind(v, "ClusterTrainingRuntime"));
    json_decref(v);
    return 0;
}
