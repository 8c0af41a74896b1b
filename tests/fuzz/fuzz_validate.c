/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_validate.c - the `ktctl validate` pipeline on arbitrary bytes.
 *
 * Target: kt_validate_object (strict decoding, defaults, defaulter, ObjectMeta, schema, CEL
 * twins, webhook checks) on every document of the input, with the input's runtimes as the
 * runtimes the TrainJobs see, plus kt_vresult_string. Every object of ours is also
 * validated against itself as the old object (transition rules) and must then produce no
 * rule error the create did not (unless list-map keys repeat). Never crash, leak or hang. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/validate/validate.h"
#include "common/base/yaml.h"
#include "common/plugins/plugins.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct kt_validator *validator;

static bool has_text(const struct kt_vresult *r, const char *text)
{
    for (size_t i = 0; i < r->len; i++) {
        if (strcmp(r->items[i].text, text) == 0) {
            return true;
        }
    }
    return false;
}

/* Repeated keys of a list-type map: the API server correlates each item with the first old
 * item of its keys, so a later duplicate meets a different oldSelf (upstream does the same). */
static bool has_duplicate(const struct kt_vresult *r)
{
    for (size_t i = 0; i < r->len; i++) {
        if (strstr(r->items[i].text, ": Duplicate value")) {
            return true;
        }
    }
    return false;
}

static void check_one(const struct kt_framework *fw, const json_t *obj,
                      const struct kt_vruntimes *rts)
{
    struct kt_vresult created, updated;
    struct kt_err err = {0};
    kt_vresult_init(&created);
    kt_vresult_init(&updated);
    struct kt_validate_req req = {
        .v = validator, .fw = fw, .obj = obj, .now = 1700000000, .rts = rts};
    if (kt_validate_object(&req, &created, &err) == 0) {
        free(kt_vresult_string(&created));
    }
    req.old = obj;
    if (kt_validate_object(&req, &updated, &err) == 0 && !has_duplicate(&created)) {
        for (size_t i = 0; i < updated.len; i++) {
            /* self == oldSelf holds against itself: no rule error only an update has */
            if (updated.items[i].stage == KT_VSTAGE_CEL &&
                !has_text(&created, updated.items[i].text)) {
                abort();
            }
        }
    }
    kt_vresult_release(&created);
    kt_vresult_release(&updated);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kt_yaml_stream s = {0};
    struct kt_yaml_limits lim;
    struct kt_err err = {0};
    struct kt_framework fw;

    kt_mem_init();
    if (!validator) {
        validator = kt_validator_new(&err);
        if (!validator) {
            abort();
        }
    }
    kt_framework_default(&fw);
    kt_yaml_limits_default(&lim);
    lim.max_bytes = 1u << 16;
    lim.max_nodes = 20000;
    (void)kt_yaml_parse((const char *)data, size, &lim, &s, &err);
    json_t *runtimes = json_array();
    for (size_t i = 0; i < s.len; i++) {
        const char *kind = json_string_value(json_object_get(s.docs[i].root, "kind"));
        if (kt_validate_is_ours(s.docs[i].root) && kind && strcmp(kind, "TrainJob") != 0) {
            json_array_append(runtimes, s.docs[i].root);
        }
    }
    struct kt_vruntimes rts = {.runtimes = runtimes};
    for (size_t i = 0; i < s.len; i++) {
        if (kt_validate_is_ours(s.docs[i].root)) {
            check_one(&fw, s.docs[i].root, &rts);
        }
    }
    json_decref(runtimes);
    kt_yaml_stream_release(&s);
    return 0;
}
