/* SPDX-License-Identifier: Apache-2.0 */
/* api/trainjob.c - the TrainJob codec: type checks, CRD defaults, typed view, write-back.
 *
 * Mirrors the defaults of upstream's TrainJob CRD (pkg/apis/trainer/v1alpha1/trainjob_types.go
 * kubebuilder:default markers). Value validation lives in the validator, not here. */
#include "api/trainjob.h"

#include <string.h>

#include "api/field.h"
#include "common/base/mem.h"

#define KT_TRAINJOB_KIND "TrainJob"

#define PATCH_POD                                                                                  \
    "spec.runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[]"                     \
    ".template.spec.template.spec."

/* The `default:` entries of our TrainJob CRD (api/trainer.kubeflow.org_trainjobs.yaml,
 * docs/internals/upstream.md#trainjob-fields), including the core/v1 ones it carries for EnvVar
 * sources, secretRef and imagePullSecrets as upstream's generated CRD does. tests/unit/test_api.c
 * checks this table against the CRD file. */
static const struct kt__default trainjob_defaults[] = {
    {"spec.runtimeRef.apiGroup", KT__DEF_STR, KT_GROUP, 0},
    {"spec.runtimeRef.kind", KT__DEF_STR, "ClusterTrainingRuntime", 0},
    {"spec.suspend", KT__DEF_BOOL, NULL, 0},
    {"spec.managedBy", KT__DEF_STR, KT_MANAGED_BY_DEFAULT, 0},
    {"spec.initializer.dataset.env[].valueFrom.configMapKeyRef.name", KT__DEF_STR, "", 0},
    {"spec.initializer.dataset.env[].valueFrom.fileKeyRef.optional", KT__DEF_BOOL, NULL, 0},
    {"spec.initializer.dataset.env[].valueFrom.secretKeyRef.name", KT__DEF_STR, "", 0},
    {"spec.initializer.dataset.secretRef.name", KT__DEF_STR, "", 0},
    {"spec.initializer.model.env[].valueFrom.configMapKeyRef.name", KT__DEF_STR, "", 0},
    {"spec.initializer.model.env[].valueFrom.fileKeyRef.optional", KT__DEF_BOOL, NULL, 0},
    {"spec.initializer.model.env[].valueFrom.secretKeyRef.name", KT__DEF_STR, "", 0},
    {"spec.initializer.model.secretRef.name", KT__DEF_STR, "", 0},
    {"spec.trainer.env[].valueFrom.configMapKeyRef.name", KT__DEF_STR, "", 0},
    {"spec.trainer.env[].valueFrom.fileKeyRef.optional", KT__DEF_BOOL, NULL, 0},
    {"spec.trainer.env[].valueFrom.secretKeyRef.name", KT__DEF_STR, "", 0},
    {PATCH_POD "containers[].env[].valueFrom.configMapKeyRef.name", KT__DEF_STR, "", 0},
    {PATCH_POD "containers[].env[].valueFrom.fileKeyRef.optional", KT__DEF_BOOL, NULL, 0},
    {PATCH_POD "containers[].env[].valueFrom.secretKeyRef.name", KT__DEF_STR, "", 0},
    {PATCH_POD "imagePullSecrets[].name", KT__DEF_STR, "", 0},
    {PATCH_POD "initContainers[].env[].valueFrom.configMapKeyRef.name", KT__DEF_STR, "", 0},
    {PATCH_POD "initContainers[].env[].valueFrom.fileKeyRef.optional", KT__DEF_BOOL, NULL, 0},
    {PATCH_POD "initContainers[].env[].valueFrom.secretKeyRef.name", KT__DEF_STR, "", 0},
};

const struct kt__default *kt__trainjob_defaults(size_t *n)
{
    *n = KT_ARRAY_SIZE(trainjob_defaults);
    return trainjob_defaults;
}

static int decode_source(json_t *init, const char *base, struct kt_initializer_src *out,
                         struct kt_err *err)
{
    json_t *src = NULL;
    json_t *secret = NULL;
    char p[96];

    if (kt__field_obj(init, base, &src, err) < 0) {
        return -1;
    }
    if (!src) {
        return 0;
    }
    out->present = true;
    kt__field_path_fmt(p, sizeof(p), "%s.storageUri", base);
    if (kt__field_str(src, p, &out->storage_uri, err) < 0) {
        return -1;
    }
    kt__field_path_fmt(p, sizeof(p), "%s.env", base);
    if (kt__field_arr_of(src, p, JSON_OBJECT, &out->env, err) < 0) {
        return -1;
    }
    kt__field_path_fmt(p, sizeof(p), "%s.secretRef", base);
    if (kt__field_obj(src, p, &secret, err) < 0) {
        return -1;
    }
    if (!secret) {
        return 0;
    }
    /* A secretRef without a name reads as name "" (the API server's core/v1 default). */
    out->secret_ref = "";
    kt__field_path_fmt(p, sizeof(p), "%s.secretRef.name", base);
    return kt__field_str(secret, p, &out->secret_ref, err);
}

static int decode_trainer(json_t *spec, struct kt_trainer *out, struct kt_err *err)
{
    json_t *t = NULL;

    if (kt__field_obj(spec, "spec.trainer", &t, err) < 0) {
        return -1;
    }
    if (!t) {
        return 0;
    }
    out->present = true;
    if (kt__field_str(t, "spec.trainer.image", &out->image, err) < 0 ||
        kt__field_arr_of(t, "spec.trainer.command", JSON_STRING, &out->command, err) < 0 ||
        kt__field_arr_of(t, "spec.trainer.args", JSON_STRING, &out->args, err) < 0 ||
        kt__field_arr_of(t, "spec.trainer.env", JSON_OBJECT, &out->env, err) < 0 ||
        kt__field_i32(t, "spec.trainer.numNodes", &out->num_nodes, err) < 0 ||
        kt__field_obj(t, "spec.trainer.resourcesPerNode", &out->resources_per_node, err) < 0 ||
        kt__field_i32(t, "spec.trainer.numProcPerNode", &out->num_proc_per_node, err) < 0 ||
        kt__field_arr_of(t, "spec.trainer.resourceClaimsPerNode", JSON_OBJECT,
                         &out->resource_claims_per_node, err) < 0) {
        return -1;
    }
    return 0;
}

static int decode_patches(json_t *spec, json_t **out, struct kt_err *err)
{
    json_t *item;
    size_t i;

    if (kt__field_arr_of(spec, "spec.runtimePatches", JSON_OBJECT, out, err) < 0) {
        return -1;
    }
    json_array_foreach(*out, i, item)
    {
        const char *manager = NULL;
        char p[64];
        kt__field_path_fmt(p, sizeof(p), "spec.runtimePatches[%zu].manager", i);
        if (kt__field_str(item, p, &manager, err) < 0) {
            return -1;
        }
    }
    return 0;
}

static int decode_spec(json_t *spec, struct kt_trainjob *out, struct kt_err *err)
{
    json_t *ref = NULL;
    json_t *init = NULL;

    if (kt__field_obj(spec, "spec.runtimeRef", &ref, err) < 0 ||
        kt__field_str(ref, "spec.runtimeRef.name", &out->runtime_ref.name, err) < 0 ||
        kt__field_str(ref, "spec.runtimeRef.apiGroup", &out->runtime_ref.api_group, err) < 0 ||
        kt__field_str(ref, "spec.runtimeRef.kind", &out->runtime_ref.kind, err) < 0) {
        return -1;
    }
    if (kt__field_obj(spec, "spec.initializer", &init, err) < 0 ||
        decode_source(init, "spec.initializer.dataset", &out->dataset, err) < 0 ||
        decode_source(init, "spec.initializer.model", &out->model, err) < 0) {
        return -1;
    }
    if (decode_trainer(spec, &out->trainer, err) < 0 ||
        decode_patches(spec, &out->runtime_patches, err) < 0) {
        return -1;
    }
    if (kt__field_bool(spec, "spec.suspend", &out->suspend, err) < 0 ||
        kt__field_i64(spec, "spec.activeDeadlineSeconds", &out->active_deadline_seconds, err) < 0 ||
        kt__field_i32(spec, "spec.ttlSecondsAfterFinished", &out->ttl_seconds_after_finished, err) <
            0 ||
        kt__field_str(spec, "spec.managedBy", &out->managed_by, err) < 0) {
        return -1;
    }
    return 0;
}

static int decode_fields(json_t *obj, struct kt_trainjob *out, struct kt_err *err)
{
    json_t *meta = NULL;
    json_t *spec = NULL;

    out->name = "";
    out->namespace_ = "";
    out->uid = "";
    out->runtime_ref.name = "";
    out->runtime_ref.api_group = KT_GROUP;
    out->runtime_ref.kind = "ClusterTrainingRuntime";
    out->managed_by = KT_MANAGED_BY_DEFAULT;
    if (kt__field_obj(obj, "metadata", &meta, err) < 0 ||
        kt__field_str(meta, "metadata.name", &out->name, err) < 0 ||
        kt__field_str(meta, "metadata.namespace", &out->namespace_, err) < 0 ||
        kt__field_str(meta, "metadata.uid", &out->uid, err) < 0) {
        return -1;
    }
    if (kt__field_obj(obj, "spec", &spec, err) < 0 || decode_spec(spec, out, err) < 0) {
        return -1;
    }
    return kt__field_obj(obj, "status", &out->status, err);
}

int kt_trainjob_decode(json_t *obj, struct kt_trainjob *out, struct kt_err *err)
{
    static const char *const kinds[] = {KT_TRAINJOB_KIND};

    memset(out, 0, sizeof(*out));
    if (kt__field_check_kind(obj, kinds, 1, err) < 0 ||
        kt__field_defaults(obj, trainjob_defaults, KT_ARRAY_SIZE(trainjob_defaults), err) < 0 ||
        decode_fields(obj, out, err) < 0) {
        json_decref(obj);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    out->obj = obj;
    return 0;
}

/* The member key of the object at dotted path parent in the decoded object, or NULL. */
static json_t *orig_member(const struct kt_trainjob *tj, const char *parent, const char *key)
{
    return json_object_get(kt__field_get_parent(tj->obj, parent), key);
}

static void encode_source(json_t *out, const struct kt_trainjob *tj, const char *base,
                          const struct kt_initializer_src *src)
{
    char secret[96];

    if (!src->present) {
        json_t *init = kt__field_get_parent(out, "spec.initializer");
        if (init) {
            json_object_del(init, strrchr(base, '.') + 1);
        }
        return;
    }
    kt__field_make_parent(out, base);
    kt__field_put_str(out, base, "storageUri", src->storage_uri, NULL);
    kt__field_put_json(out, base, "env", src->env, orig_member(tj, base, "env"));
    kt__field_path_fmt(secret, sizeof(secret), "%s.secretRef", base);
    if (!src->secret_ref) {
        json_object_del(kt__field_make_parent(out, base), "secretRef");
        return;
    }
    kt__field_make_parent(out, secret);
    kt__field_put_str(out, secret, "name", src->secret_ref, "");
}

static void encode_trainer(json_t *out, const struct kt_trainjob *tj)
{
    const struct kt_trainer *t = &tj->trainer;
    const char *p = "spec.trainer";

    if (!t->present) {
        json_t *spec = kt__field_get_parent(out, "spec");
        if (spec) {
            json_object_del(spec, "trainer");
        }
        return;
    }
    kt__field_make_parent(out, p);
    kt__field_put_str(out, p, "image", t->image, NULL);
    kt__field_put_json(out, p, "command", t->command, orig_member(tj, p, "command"));
    kt__field_put_json(out, p, "args", t->args, orig_member(tj, p, "args"));
    kt__field_put_json(out, p, "env", t->env, orig_member(tj, p, "env"));
    kt__field_put_int(out, p, "numNodes", t->num_nodes);
    kt__field_put_json(out, p, "resourcesPerNode", t->resources_per_node,
                       orig_member(tj, p, "resourcesPerNode"));
    kt__field_put_int(out, p, "numProcPerNode", t->num_proc_per_node);
    kt__field_put_json(out, p, "resourceClaimsPerNode", t->resource_claims_per_node,
                       orig_member(tj, p, "resourceClaimsPerNode"));
}

static void encode_runtime_ref(json_t *out, const struct kt_trainjob *tj)
{
    const struct kt_runtime_ref *r = &tj->runtime_ref;
    const char *p = "spec.runtimeRef";

    /* The CRD defaults apiGroup/kind only inside an existing runtimeRef: don't invent one. */
    if (!kt__field_get_parent(out, p) && (!r->name || !r->name[0])) {
        return;
    }
    kt__field_make_parent(out, p);
    kt__field_put_str(out, p, "name", r->name, "");
    kt__field_put_str(out, p, "apiGroup", r->api_group, NULL);
    kt__field_put_str(out, p, "kind", r->kind, NULL);
}

json_t *kt_trainjob_encode(const struct kt_trainjob *tj)
{
    json_t *out;

    KT_ASSERT(tj->obj);
    out = json_deep_copy(tj->obj);
    kt__field_put_str(out, "metadata", "name", tj->name, "");
    kt__field_put_str(out, "metadata", "namespace", tj->namespace_, "");
    kt__field_put_str(out, "metadata", "uid", tj->uid, "");
    encode_runtime_ref(out, tj);
    if (tj->dataset.present || tj->model.present || kt__field_get_parent(out, "spec.initializer")) {
        encode_source(out, tj, "spec.initializer.dataset", &tj->dataset);
        encode_source(out, tj, "spec.initializer.model", &tj->model);
    }
    encode_trainer(out, tj);
    kt__field_put_json(out, "spec", "runtimePatches", tj->runtime_patches,
                       orig_member(tj, "spec", "runtimePatches"));
    kt__field_put_bool(out, "spec", "suspend", tj->suspend, false);
    kt__field_put_int(out, "spec", "activeDeadlineSeconds", tj->active_deadline_seconds);
    kt__field_put_int(out, "spec", "ttlSecondsAfterFinished", tj->ttl_seconds_after_finished);
    kt__field_put_str(out, "spec", "managedBy", tj->managed_by, KT_MANAGED_BY_DEFAULT);
    kt__field_put_json(out, "", "status", tj->status, orig_member(tj, "", "status"));
    return out;
}

void kt_trainjob_release(struct kt_trainjob *tj)
{
    if (!tj) {
        return;
    }
    json_decref(tj->obj);
    memset(tj, 0, sizeof(*tj));
}

char *kt_trainjob_runtime_not_found(const struct kt_trainjob *tj)
{
    const char *kind = tj->runtime_ref.kind;
    bool cluster = !kind || strcmp(kind, "TrainingRuntime") != 0;
    return kt_xasprintf("%s.%s \"%s\" not found",
                        cluster ? "ClusterTrainingRuntime" : "TrainingRuntime", KT_GROUP,
                        tj->runtime_ref.name ? tj->runtime_ref.name : "");
}
