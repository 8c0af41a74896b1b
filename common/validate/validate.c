/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate.c - the validation pipeline of one document (validate.h), the problem
 * (steps 1-5 of validate.h, in the API server's order). The stages never call back here. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/godecode.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/validate/validate.h"

/* ------------------------------------------------------------------ pipeline */

static const char *const our_kinds[] = {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime",
                                        NULL};

bool kt_validate_is_ours(const json_t *obj)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!av || !kind || strcmp(av, KT_API_VERSION) != 0) {
        return false;
    }
    for (size_t i = 0; our_kinds[i]; i++) {
        if (strcmp(kind, our_kinds[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* go_field: the Go decoder's context (no map key); at: the value's own path. */
static void unmarshal_error(struct kt_vresult *r, const json_t *x, const char *go_field,
                            const char *gotype, const char *at, const char *ptr)
{
    char *t =
        kt_xasprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.%s of type %s",
                     kt_go_json_kind(x), go_field, gotype);
    kt_vresult_add_go(r, KT_VSTAGE_DECODE, at, t, ptr);
    free(t);
}

/* kubectl decodes metadata into ObjectMeta before sending: wrong JSON types fail there. */
static bool meta_types_ok(const json_t *obj, struct kt_vresult *r)
{
    static const char *const strs[] = {"name", "namespace", "generateName", NULL};
    static const char *const maps[] = {"labels", "annotations", NULL};
    const json_t *meta = json_object_get(obj, "metadata");
    size_t before = r->len;
    for (size_t i = 0; strs[i]; i++) {
        const json_t *x = json_object_get(meta, strs[i]);
        if (x && !json_is_string(x) && !json_is_null(x)) {
            char *f = kt_xasprintf("metadata.%s", strs[i]),
                 *p = kt_xasprintf("/metadata/%s", strs[i]);
            unmarshal_error(r, x, f, "string", f, p);
            free(f);
            free(p);
        }
    }
    for (size_t i = 0; maps[i]; i++) {
        const json_t *m = json_object_get(meta, maps[i]);
        char *f = kt_xasprintf("metadata.%s", maps[i]), *p = kt_xasprintf("/metadata/%s", maps[i]);
        if (m && !json_is_object(m) && !json_is_null(m)) {
            unmarshal_error(r, m, f, "map[string]string", f, p);
        }
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)(uintptr_t)m, k, v)
        {
            if (!json_is_string(v) && !json_is_null(v)) {
                char *pp = kt_vptr_child(p, k), *at = kt_vpath_child(f, k);
                unmarshal_error(r, v, f, "string", at, pp);
                free(pp);
                free(at);
                break;
            }
        }
        free(f);
        free(p);
    }
    return r->len == before;
}

/* Steps 1-2 on a copy. Returns the copy, or NULL when strict decoding failed (problems in r). */
static json_t *decode(const struct kt_validator *v, const char *kind, const json_t *obj,
                      struct kt_vresult *r)
{
    if (!meta_types_ok(obj, r)) {
        return NULL;
    }
    json_t *copy = json_deep_copy(obj);
    struct kt_strv unknown;
    kt_strv_init(&unknown);
    kt_validate_prune(v, kind, copy, &unknown);
    for (size_t i = 0; i < unknown.len; i++) {
        char *text = kt_xasprintf("strict decoding error: unknown field \"%s\"", unknown.items[i]);
        char *ptr = kt_vpath_to_ptr(unknown.items[i]);
        kt_vresult_add(r, KT_VSTAGE_DECODE, unknown.items[i], "", text, ptr);
        free(ptr);
        free(text);
    }
    bool failed = unknown.len > 0;
    kt_strv_release(&unknown);
    if (failed) {
        json_decref(copy);
        return NULL;
    }
    kt_validate_defaults(v, kind, copy);
    return copy;
}

/* The old object of an update as the API server holds it: what it stored was pruned (unknown
 * fields dropped without error) and defaulted, so an old manifest with a stale field is
 * still the old object of the update, never silently a create. */
static json_t *decode_stored(const struct kt_validator *v, const char *kind, const json_t *old)
{
    json_t *copy = json_deep_copy(old);
    struct kt_strv unknown;
    kt_strv_init(&unknown);
    kt_validate_prune(v, kind, copy, &unknown);
    kt_strv_release(&unknown);
    kt_validate_defaults(v, kind, copy);
    return copy;
}

/* Whether d is an integral value an int64 holds. */
static bool real_is_int64(double d)
{
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (double)(int64_t)d == d;
}

/* v as the API server writes it to a webhook (a new reference): keys in sorted order (it
 * writes the object from a Go map; the order decides which decoding error comes first) and a
 * float64 with an integral value without a fraction ("2.0" reaches the webhook as 2). One pass
 * over v, using the project's sorted-key helper. */
static json_t *as_sent(const json_t *v)
{
    if (json_is_real(v) && real_is_int64(json_real_value(v))) {
        return json_integer((json_int_t)json_real_value(v));
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_array_append_new(a, as_sent(json_array_get(v, i)));
        }
        return a;
    }
    if (!json_is_object(v)) {
        return json_deep_copy(v);
    }
    size_t n = 0;
    const char **keys = kt_json_sorted_keys(v, &n);
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++) {
        json_object_set_new(o, keys[i], as_sent(json_object_get(v, keys[i])));
    }
    free(keys);
    return o;
}

/* kt-webhook (as upstream's) decodes the object into its Go type before anything else and
 * denies 400 with the decoder's text when that fails (webhook/routes.c): a webhook-stage problem
 * carrying that text, at the failing value's field. False when it did not decode. */
static bool go_decodes(const json_t *o, const struct kt_godesc *type, struct kt_vresult *r)
{
    json_t *sent = as_sent(o);
    struct kt_go_decode f;
    int rc = kt_go_decode_check(sent, type, &f);
    json_decref(sent);
    if (rc == 0) {
        return true;
    }
    /* sent has o's keys and indices (reordered only), so f.ptr points into the input too. */
    kt_vresult_add_go(r, KT_VSTAGE_WEBHOOK, f.field, f.msg, f.ptr);
    kt_go_decode_release(&f);
    return false;
}

static const struct kt_godesc *go_type_of(const char *kind)
{
    if (strcmp(kind, "TrainJob") == 0) {
        return &kt_go_TrainJob;
    }
    return strcmp(kind, "TrainingRuntime") == 0 ? &kt_go_TrainingRuntime
                                                : &kt_go_ClusterTrainingRuntime;
}

int kt_validate_object(const struct kt_validate_req *req, struct kt_vresult *r, struct kt_err *err)
{
    return kt_validate_object_admitted(req, r, NULL, err);
}

int kt_validate_object_admitted(const struct kt_validate_req *req, struct kt_vresult *r,
                                json_t **admitted, struct kt_err *err)
{
    const struct kt_validator *v = req->v;
    const json_t *obj = req->obj;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    json_t *o = NULL, *oo = NULL;
    int rc = 0;
    size_t before = r->len;
    if (!kt_validate_is_ours(obj)) {
        return kt_err_set(err, KT_EINVAL, "not a trainer.kubeflow.org/v1alpha1 object");
    }
    o = decode(v, kind, obj, r);
    if (!o) {
        goto out;
    }
    /* The API server calls TrainJob's mutating defaulter before its schema validation, so a
     * TrainJob that does not decode is denied by the defaulter first; the runtimes have only
     * validators, called after the schema. */
    bool tj = strcmp(kind, "TrainJob") == 0;
    if (tj && !kt_validator_no_defaulter(v) && !go_decodes(o, go_type_of(kind), r)) {
        goto out;
    }
    if (req->old) {
        oo = decode_stored(v, kind, req->old);
    }
    if (tj) {
        kt_validate_default_trainjob(o, oo, req->now);
    }
    kt_validate_schema(v, kind, o, oo, r);
    if (r->len > before || (!tj && !go_decodes(o, go_type_of(kind), r))) {
        goto out;
    }
    if (tj) {
        rc = kt_validate_trainjob_webhook(req->fw, o, oo, req->rts, r, err);
    } else {
        kt_validate_runtime_webhook(o, oo, r);
    }
    if (admitted && rc == 0 && r->len == before) {
        *admitted = json_incref(o);
    }
out:
    json_decref(o);
    json_decref(oo);
    return rc;
}

int kt_validate_trainjob(const struct kt_validate_req *req, struct kt_vresult *r,
                         struct kt_err *err)
{
    return kt_validate_object(req, r, err);
}

void kt_validate_runtime(const struct kt_validator *v, const json_t *obj, const json_t *old,
                         struct kt_vresult *r)
{
    struct kt_err err = {0};
    if (kt_validate_object(&(struct kt_validate_req){.v = v, .obj = obj, .old = old}, r, &err) !=
        0) {
        kt_vresult_add(r, KT_VSTAGE_WEBHOOK, "", "Internal error", err.msg, "");
    }
}
