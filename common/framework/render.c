/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/render.c - the offline render engine (see render.h). Mirrors what the API server
 * (defaults), the validating webhook (runtime lookup, CustomValidation,
 * docs/internals/upstream.md#trainjob-validator) and the reconciler (build,
 * docs/internals/upstream.md#trainjob-reconcile step 5) do for one TrainJob. */
#include "common/framework/render.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/crypto/crypto.h"
#include "common/base/json.h"
#include "common/base/mem.h"

#define DEPRECATION_URL                                                                            \
    "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html"                          \
    "#runtime-deprecation-policy"

bool kt_render_is_kind(const json_t *obj, const char *kind)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *k = json_string_value(json_object_get(obj, "kind"));
    return av && k && strcmp(av, KT_API_VERSION) == 0 && strcmp(k, kind) == 0;
}

static const char *obj_ns(const json_t *o)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
    return ns && *ns ? ns : KT_RENDER_DEFAULT_NAMESPACE;
}

static const char *obj_name(const json_t *o)
{
    const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    return n ? n : "";
}

struct view_ctx {
    const json_t *objects;
    const char *ssh_key_pem;
};

static const json_t *view_get(void *ctx, const char *api_version, const char *kind, const char *ns,
                              const char *name)
{
    const struct view_ctx *v = ctx;
    return kt_render_objects_get((void *)(uintptr_t)v->objects, api_version, kind, ns, name);
}

const json_t *kt_render_objects_get(void *objects, const char *api_version, const char *kind,
                                    const char *ns, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach((json_t *)objects, i, o)
    {
        const char *av = json_string_value(json_object_get(o, "apiVersion"));
        const char *k = json_string_value(json_object_get(o, "kind"));
        if (av && k && strcmp(av, api_version) == 0 && strcmp(k, kind) == 0 &&
            strcmp(obj_name(o), name) == 0 && (!ns || strcmp(obj_ns(o), ns) == 0)) {
            return o;
        }
    }
    return NULL;
}

static int view_keygen(void *ctx, char **private_pem, char **public_line, struct kt_err *err)
{
    const struct view_ctx *v = ctx;
    struct kt_ssh_key key = {0};
    int rc = v->ssh_key_pem
                 ? kt_crypto_ssh_key_from_pem(v->ssh_key_pem, strlen(v->ssh_key_pem), &key, err)
                 : kt_crypto_ssh_key_generate(&key, err);
    if (rc != 0) {
        return -1;
    }
    *private_pem = key.private_pem;
    *public_line = key.public_line;
    return 0;
}

/* A decoded copy of tj_raw with the offline defaults (namespace, uid). */
static int decode_trainjob(const json_t *raw, const struct kt_render_opts *o,
                           struct kt_trainjob *tj, struct kt_err *err)
{
    json_t *obj = kt_json_clone(raw);
    json_t *meta = kt_json_obj_ensure(obj, "metadata");
    if (!meta) {
        json_decref(obj);
        return kt_err_set(err, KT_EINVAL, "metadata: expected object");
    }
    if (!json_is_string(json_object_get(meta, "namespace")) ||
        json_string_length(json_object_get(meta, "namespace")) == 0) {
        json_object_set_new(meta, "namespace", json_string(KT_RENDER_DEFAULT_NAMESPACE));
    }
    if (o->uid || !json_is_string(json_object_get(meta, "uid"))) {
        json_object_set_new(meta, "uid", json_string(o->uid ? o->uid : KT_RENDER_DEFAULT_UID));
    }
    return kt_trainjob_decode(obj, tj, err);
}

/* Find and decode the runtime tj refers to. 0 found, 1 not found, -1 decode error. */
static int find_runtime(const struct kt_trainjob *tj, const json_t *runtimes, struct kt_runtime *rt,
                        struct kt_err *err)
{
    const char *kind = tj->runtime_ref.kind ? tj->runtime_ref.kind : "";
    bool cluster = strcmp(kind, "ClusterTrainingRuntime") == 0;
    size_t i;
    json_t *o;
    json_array_foreach(runtimes, i, o)
    {
        if (!kt_render_is_kind(o, kind) || strcmp(obj_name(o), tj->runtime_ref.name) != 0) {
            continue;
        }
        if (!cluster && strcmp(obj_ns(o), tj->namespace_) != 0) {
            continue;
        }
        json_t *copy = kt_json_clone(o);
        if (!cluster) {
            json_object_set_new(kt_json_obj_ensure(copy, "metadata"), "namespace",
                                json_string(obj_ns(o)));
        }
        if (kt_runtime_decode(copy, rt, err) != 0) {
            return kt_err_prefix(err, "%s %s", kind, obj_name(o));
        }
        return 0;
    }
    return 1;
}

static void deny_missing(const struct kt_trainjob *tj, struct kt_ferrs *denial)
{
    bool cluster = strcmp(tj->runtime_ref.kind, "ClusterTrainingRuntime") == 0;
    json_t *ref = json_object_get(json_object_get(tj->obj, "spec"), "runtimeRef");
    char *nf = kt_trainjob_runtime_not_found(tj);
    /* Upstream's path for the cluster kind really is spec.RuntimeRef
     * (docs/internals/upstream.md#quirk-9). */
    kt_ferrs_add(denial, KT_FERR_INVALID, cluster ? "spec.RuntimeRef" : "spec.runtimeRef", ref,
                 KT_GO_RUNTIME_REF,
                 "%s: specified %s must be created before the TrainJob is created", nf,
                 cluster ? "clusterTrainingRuntime" : "trainingRuntime");
    free(nf);
}

static void warn_deprecated(const struct kt_runtime *rt, struct kt_strv *warnings)
{
    json_t *labels = json_object_get(json_object_get(rt->obj, "metadata"), "labels");
    const char *support =
        json_string_value(json_object_get(labels, "trainer.kubeflow.org/support"));
    if (rt->cluster && support && strcmp(support, "deprecated") == 0) {
        char *w = kt_xasprintf("Referenced ClusterTrainingRuntime \"%s\" is deprecated and will be "
                               "removed in a future release of Kubeflow Trainer. See runtime "
                               "deprecation policy: %s",
                               rt->name, DEPRECATION_URL);
        kt_strv_push(warnings, w);
        free(w);
    }
}

/* Webhook step (docs/internals/upstream.md#trainjob-validator) on in->tj against in->rt
 * (NULL: the runtime was not found). 0 allowed, 1 denied. */
static int validate(const struct kt_framework *fw, const struct kt_framework_validate_req *in,
                    struct kt_ferrs *denial, struct kt_strv *warnings, struct kt_err *err)
{
    const struct kt_trainjob *tj = in->tj;
    char *key = kt_runtime_key(tj);
    if (!kt_runtime_key_supported(key)) {
        /* Upstream denies with the bare message, not a field error. */
        kt_err_set(err, KT_EUNSUPPORTED, "unsupported runtime: %s", key);
        free(key);
        return -1;
    }
    free(key);
    if (!in->rt) {
        deny_missing(tj, denial);
        return 1;
    }
    warn_deprecated(in->rt, warnings);
    if (kt_framework_validate(fw, in, denial, warnings, err) != 0) {
        return -1;
    }
    return denial->len > 0 ? 1 : 0;
}

int kt_render_trainjob(const struct kt_framework *fw, const struct kt_render_req *req,
                       json_t *items, struct kt_ferrs *denial, struct kt_strv *warnings,
                       struct kt_err *err)
{
    const struct kt_render_opts *opts = req->opts;
    struct kt_trainjob tj = {0};
    struct kt_runtime rt = {0};
    struct view_ctx vctx = {.objects = req->objects, .ssh_key_pem = opts->ssh_key_pem};
    struct kt_view view = {
        .get = view_get, .ctx = &vctx, .ssh_keygen = view_keygen, .keygen_ctx = &vctx};
    json_t *out = NULL;
    int rc = -1, found;

    if (decode_trainjob(req->trainjob, opts, &tj, err) != 0) {
        return -1;
    }
    char *key = kt_runtime_key(&tj);
    found = kt_runtime_key_supported(key) ? find_runtime(&tj, req->runtimes, &rt, err) : 1;
    free(key);
    if (found < 0) {
        goto out;
    }
    if (!opts->no_validate) {
        struct kt_framework_validate_req in = {
            .tj = &tj, .rt = found == 0 ? &rt : NULL, .view = &view};
        rc = validate(fw, &in, denial, warnings, err);
        if (rc != 0) {
            goto out;
        }
    }
    rc = -1;
    if (kt_framework_build(fw, &tj, found == 0 ? &rt : NULL, &view, &out, err) != 0) {
        goto out;
    }
    json_array_extend(items, out);
    json_decref(out);
    rc = 0;
out:
    kt_runtime_release(&rt);
    kt_trainjob_release(&tj);
    return rc;
}
