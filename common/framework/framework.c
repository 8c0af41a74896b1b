/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/framework.c - the plugin table and the build / validation / status pipelines.
 *
 * Matches upstream `pkg/runtime/framework/core/framework.go` and
 * `pkg/runtime/core/trainingruntime.go` (buildObjects), with a fixed plugin order. */
#include "common/framework/framework.h"

#include <stdlib.h>
#include <string.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/framework/dra.h"
#include "common/framework/snapshot.h"

int kt_framework_check(const struct kt_framework *fw, struct kt_err *err)
{
    size_t status = 0;
    for (size_t i = 0; i < fw->n; i++) {
        const struct kt_plugin *p = fw->plugins[i];
        if (p->abi != KT_PLUGIN_ABI || p->size < sizeof(struct kt_plugin)) {
            return kt_err_set(err, KT_EINVAL, "plugin %s: unsupported ABI %u", p->name, p->abi);
        }
        status += (p->status || (p->adapter && p->adapter->has_status(p))) ? 1 : 0;
    }
    if (status > 1) {
        return kt_err_set(err, KT_EINVAL, "too many TrainJobStatus plugins are registered");
    }
    return 0;
}

const json_t *kt_view_get(const struct kt_view *view, const char *api_version, const char *kind,
                          const char *ns, const char *name)
{
    if (!view || !view->get) {
        return NULL;
    }
    return view->get(view->ctx, api_version, kind, ns, name);
}

char *kt_runtime_key(const struct kt_trainjob *tj)
{
    const char *kind = tj->runtime_ref.kind ? tj->runtime_ref.kind : "";
    const char *group = tj->runtime_ref.api_group ? tj->runtime_ref.api_group : "";
    if (*group == '\0') {
        return kt_xstrdup(kind);
    }
    return kt_xasprintf("%s.%s", kind, group);
}

bool kt_runtime_key_supported(const char *key)
{
    return strcmp(key, "TrainingRuntime." KT_GROUP) == 0 ||
           strcmp(key, "ClusterTrainingRuntime." KT_GROUP) == 0;
}

static int check_key(const struct kt_trainjob *tj, struct kt_err *err)
{
    char *key = kt_runtime_key(tj);
    int rc = 0;
    if (!kt_runtime_key_supported(key)) {
        rc = kt_err_set(err, KT_EUNSUPPORTED, "unsupported runtime: %s", key);
    }
    free(key);
    return rc;
}

void kt_framework_stamp(json_t *obj, const struct kt_trainjob *tj)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    json_t *labels = json_object_get(meta, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    json_object_set_new(labels, KT_TRAINJOB_NAME_LABEL, json_string(tj->name));
    json_t *ref = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", KT_API_VERSION, "kind",
                            "TrainJob", "name", tj->name, "uid", tj->uid, "controller", 1,
                            "blockOwnerDeletion", 1);
    json_object_set_new(meta, "ownerReferences", json_pack("[o]", ref));
}

typedef int (*phase_fn)(struct kt_build *b, struct kt_err *err);

static phase_fn phase_of(const struct kt_plugin *p, int phase)
{
    switch (phase) {
    case 0:
        return p->enforce_ml_policy;
    case 1:
        return p->enforce_podgroup_policy;
    case 2:
        return p->enforce_podspec;
    case 3:
        return p->pre_build_sync;
    default:
        return NULL;
    }
}

static int run_plugins(const struct kt_framework *fw, struct kt_build *b, json_t *objects,
                       struct kt_err *err)
{
    for (int phase = 0; phase < 4; phase++) {
        for (size_t i = 0; i < fw->n; i++) {
            const struct kt_plugin *p = fw->plugins[i];
            phase_fn fn = phase_of(p, phase);
            if (p->adapter && p->adapter->build(p, phase, b, NULL, err) != 0) {
                return -1;
            }
            if (fn && fn(b, err) != 0) {
                return -1;
            }
        }
    }
    for (size_t i = 0; i < fw->n; i++) {
        const struct kt_plugin *p = fw->plugins[i];
        if (p->adapter && p->adapter->build(p, 4, b, objects, err) != 0) {
            return -1;
        }
        if (p->build && p->build(b, objects, err) != 0) {
            return -1;
        }
    }
    return 0;
}

static int runtime_missing(const struct kt_trainjob *tj, struct kt_err *err)
{
    bool cluster = !tj->runtime_ref.kind || strcmp(tj->runtime_ref.kind, "TrainingRuntime") != 0;
    char *nf = kt_trainjob_runtime_not_found(tj);
    /* Upstream's reconciler wraps its cache's NotFound in a per-kind sentence. */
    kt_err_set(err, KT_ENOENT, "%s: %s",
               cluster ? "not found ClusterTrainingRuntime specified in TrainJob"
                       : "TrainingRuntime specified in TrainJob is not found",
               nf);
    free(nf);
    return -1;
}

/* The runtime a build uses: the TrainJob's snapshot (decoded into snap, which the caller
 * releases) or the live runtime. */
struct in_effect {
    struct kt_runtime snap;
    const struct kt_runtime *use; /* &snap or the live runtime */
};

/* Step 0 of the build: the runtime in effect into *eff, and the snapshot to create (if any)
 * appended to objects. */
static int resolve_runtime(const struct kt_trainjob *tj, const struct kt_runtime *rt,
                           const struct kt_view *view, struct in_effect *eff, json_t *objects,
                           struct kt_err *err)
{
    struct kt_runtime *snap = &eff->snap;
    const struct kt_runtime **use = &eff->use;
    char *name = kt_xasprintf("%s%s", tj->name, KT_SNAPSHOT_SUFFIX);
    const json_t *cm = kt_view_get(view, "v1", "ConfigMap", tj->namespace_, name);
    free(name);
    if (cm) {
        if (kt_snapshot_read(cm, tj, view ? &view->snapshot_parser : NULL, snap, err) != 0) {
            return -1;
        }
        *use = snap;
        return 0;
    }
    if (!rt) {
        return runtime_missing(tj, err);
    }
    json_t *obj = kt_snapshot_build(tj, rt, err);
    if (!obj) {
        return -1;
    }
    json_array_append_new(objects, obj);
    *use = rt;
    return 0;
}

static json_t *copy_or_null(const json_t *v)
{
    return v ? kt_json_clone(v) : NULL;
}

int kt_framework_build(const struct kt_framework *fw, const struct kt_trainjob *tj,
                       const struct kt_runtime *rt, const struct kt_view *view, json_t **out,
                       struct kt_err *err)
{
    struct in_effect eff = {0};
    struct kt_build b = {0};
    json_t *objects = json_array();
    size_t i;
    json_t *o;
    int rc = -1;

    *out = NULL;
    if (check_key(tj, err) != 0 || resolve_runtime(tj, rt, view, &eff, objects, err) != 0) {
        goto out;
    }
    b.rt = eff.use;
    b.tj = tj;
    b.view = view;
    b.status_server = fw->status_server;
    b.dra = fw->dra;
    b.trainer_command = tj->trainer.present ? copy_or_null(tj->trainer.command) : NULL;
    b.trainer_args = tj->trainer.present ? copy_or_null(tj->trainer.args) : NULL;
    if (kt_info_build_gated(&b.info, b.rt, tj, fw->dra, err) != 0) {
        goto out;
    }
    if (fw->dra) {
        struct kt_dra_getter g = {.get = view ? view->get : NULL, .ctx = view ? view->ctx : NULL};
        b.dra_devices = kt_dra_devices(&b.info, tj, &g);
    }
    if (run_plugins(fw, &b, objects, err) != 0) {
        goto out;
    }
    json_array_foreach(objects, i, o)
    {
        kt_framework_stamp(o, tj);
    }
    *out = objects;
    objects = NULL;
    rc = 0;
out:
    json_decref(objects);
    json_decref(b.trainer_command);
    json_decref(b.trainer_args);
    kt_info_release(&b.info);
    kt_runtime_release(&eff.snap);
    return rc;
}

int64_t kt_build_gpus(const struct kt_build *b)
{
    int64_t ext = kt_resources_gpu_count(kt_info_resources_per_node(&b->info, b->tj));
    return ext > 0 ? ext : b->dra_devices;
}

int kt_framework_validate(const struct kt_framework *fw,
                          const struct kt_framework_validate_req *req, struct kt_ferrs *errs,
                          struct kt_strv *warnings, struct kt_err *err)
{
    struct kt_info info;
    if (kt_info_build_gated(&info, req->rt, req->tj, fw->dra, err) != 0) {
        return -1;
    }
    struct kt_validation v = {.tj = req->tj,
                              .old = req->old,
                              .rt = req->rt,
                              .info = &info,
                              .view = req->view,
                              .dra = fw->dra};
    for (size_t i = 0; i < fw->n; i++) {
        if (fw->plugins[i]->adapter) {
            fw->plugins[i]->adapter->validate(fw->plugins[i], &v, errs, warnings);
        } else if (fw->plugins[i]->validate) {
            fw->plugins[i]->validate(&v, errs, warnings);
        }
    }
    if (fw->dra) { /* after the plugins, where upstream's JobSet plugin checks claims */
        kt_dra_validate(&info, req->tj, errs);
    }
    kt_info_release(&info);
    return 0;
}

int kt_framework_status(const struct kt_framework *fw, const struct kt_trainjob *tj,
                        const struct kt_view *view, json_t **out, struct kt_err *err)
{
    *out = NULL;
    for (size_t i = 0; i < fw->n; i++) {
        const struct kt_plugin *p = fw->plugins[i];
        if (p->adapter && p->adapter->has_status(p)) {
            return p->adapter->status(p, tj, view, out, err);
        }
        if (p->status) {
            return p->status(tj, view, out, err);
        }
    }
    return 0;
}
