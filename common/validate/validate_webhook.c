/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate_webhook.c - the webhooks' own checks, shared by kt-webhook and ktctl:
 * the TrainJob defaulter (docs/internals/upstream.md#trainjob-defaulter), the TrainJob validator's
 * runtime lookup, deprecation warning and CustomValidation plugins
 * (docs/internals/upstream.md#trainjob-validator), and the runtime validators
 * (docs/internals/upstream.md#runtime-validators). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/base/fielderr.h"
#include "common/base/gotypes.h"
#include "common/base/json.h"
#include "common/base/jsonpatch.h"
#include "common/base/mem.h"
#include "common/framework/dra.h"
#include "common/framework/runtime_info.h"
#include "common/validate/validate_webhook.h"

#define DEPRECATED_LABEL "trainer.kubeflow.org/support"
#define DEPRECATION_URL                                                                            \
    "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html"                          \
    "#runtime-deprecation-policy"

/* ------------------------------------------------------------------ defaulter */

static void rfc3339(time_t now, char out[32])
{
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The Go value of an entry's time (*metav1.Time): absent or null is nil. */
static const json_t *patch_time(const json_t *p)
{
    const json_t *t = json_object_get(p, "time");
    return json_is_null(t) ? NULL : t;
}

/* Are the decoded times equal as upstream's DeepEqual sees them: both nil, or the same instant
 * to the nanosecond? */
static bool same_time(const json_t *a, const json_t *b)
{
    long long sa, sb;
    long na, nb;
    if (!a || !b) {
        return !a && !b;
    }
    if (kt_go_time_parse(json_string_value(a), &sa, &na) &&
        kt_go_time_parse(json_string_value(b), &sb, &nb)) {
        return sa == sb && na == nb;
    }
    return kt_json_equal(a, b);
}

/* Equal ignoring the time member, as upstream's semantic DeepEqual of the decoded entries:
 * compared after the Go round trip (quantities canonical, unknown keys and empty omitempty
 * fields gone). */
static bool same_patch(const json_t *a, const json_t *b)
{
    json_t *x = kt_go_roundtrip(a, &kt_go_RuntimePatch);
    json_t *y = kt_go_roundtrip(b, &kt_go_RuntimePatch);
    json_object_del(x, "time");
    json_object_del(y, "time");
    bool eq = kt_json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/* The old entry of manager mgr: the last one, as upstream's map by manager keeps it. */
static json_t *old_entry(const json_t *old_patches, const char *mgr)
{
    json_t *found = NULL, *o;
    size_t i;
    json_array_foreach(old_patches, i, o)
    {
        if (json_is_object(o) && strcmp(kt_json_str(o, "manager", ""), mgr) == 0) {
            found = o;
        }
    }
    return found;
}

int kt_validate_default_trainjob(json_t *tj, const json_t *old, time_t now)
{
    json_t *patches = json_object_get(json_object_get(tj, "spec"), "runtimePatches");
    const json_t *old_patches =
        old ? json_object_get(json_object_get(old, "spec"), "runtimePatches") : NULL;
    char ts[32];
    size_t i;
    json_t *p;
    int changed = 0;
    rfc3339(now, ts);
    json_array_foreach(patches, i, p)
    {
        if (!json_is_object(p)) {
            continue;
        }
        const json_t *t = patch_time(p);
        json_t *o = old ? old_entry(old_patches, kt_json_str(p, "manager", "")) : NULL;
        if (o && same_patch(o, p)) {
            json_t *ot = kt__json_unconst(patch_time(o));
            changed += !same_time(ot, t);
            if (ot) {
                json_object_set(p, "time", ot);
            } else {
                json_object_del(p, "time");
            }
        } else if (o || !t) {
            /* now carries nanoseconds upstream: never equal to the request's time */
            json_object_set_new(p, "time", json_string(ts));
            changed++;
        }
    }
    return changed;
}

/* Upstream's defaulter (controller-runtime) answers with the JSON patch between the request's
 * raw object and json.Marshal of the defaulted Go TrainJob, so its patch carries the round
 * trip's re-encoding too (a quantity 2 becomes "2", a Time goes to UTC, zero values of
 * non-omitempty fields appear), less the "remove" operations the round trip of the undefaulted
 * object makes as well (unknown or null fields: its dropSchemeRemovals). The same here. */
static bool path_in_removes(const json_t *ops, const char *path)
{
    size_t i;
    json_t *op;
    json_array_foreach(ops, i, op)
    {
        if (kt_jsonpatch_is_remove(op) && strcmp(kt_json_str(op, "path", ""), path) == 0) {
            return true;
        }
    }
    return false;
}

static json_t *roundtrip_patch(const json_t *raw, const json_t *defaulted)
{
    json_t *marshaled = kt_go_roundtrip(defaulted, &kt_go_TrainJob);
    json_t *ops = kt_jsonpatch_create(raw, marshaled);
    json_decref(marshaled);
    json_t *scheme = NULL, *kept = json_array(), *op;
    size_t i;
    json_array_foreach(ops, i, op)
    {
        if (kt_jsonpatch_is_remove(op)) {
            if (!scheme) {
                json_t *original = kt_go_roundtrip(raw, &kt_go_TrainJob);
                scheme = kt_jsonpatch_create(raw, original);
                json_decref(original);
            }
            if (path_in_removes(scheme, kt_json_str(op, "path", ""))) {
                continue;
            }
        }
        json_array_append(kept, op);
    }
    json_decref(scheme);
    json_decref(ops);
    return kept;
}

/* tj with its own copies of the nodes the defaulter writes (the object, spec, the runtimePatches
 * array and its entries); every other node shared with tj, read-only. */
static json_t *defaulter_copy(const json_t *tj)
{
    json_t *c = json_copy(kt__json_unconst(tj));
    json_t *spec = json_object_get(c, "spec"), *rp, *e, *a;
    size_t i;
    if (!json_is_object(spec)) {
        return c;
    }
    spec = json_copy(spec);
    json_object_set_new(c, "spec", spec);
    rp = json_object_get(spec, "runtimePatches");
    if (!json_is_array(rp)) {
        return c;
    }
    a = json_array();
    json_array_foreach(rp, i, e)
    {
        json_array_append_new(a, json_is_object(e) ? json_copy(e) : json_incref(e));
    }
    json_object_set_new(spec, "runtimePatches", a);
    return c;
}

json_t *kt_validate_default_patch(const json_t *tj, const json_t *old, time_t now)
{
    /* No entry: the defaulter has nothing to stamp (the common case, no copy). */
    if (json_array_size(kt_json_path(tj, "spec.runtimePatches")) == 0) {
        return json_array();
    }
    json_t *after = defaulter_copy(tj);
    /* Nothing changed in the decoded object: upstream answers without a patch. */
    json_t *ops =
        kt_validate_default_trainjob(after, old, now) ? roundtrip_patch(tj, after) : json_array();
    json_decref(after);
    return ops;
}

/* ------------------------------------------------------------------ TrainJob */

static const char *obj_ns(const json_t *o)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
    return ns && ns[0] ? ns : "default";
}

static const char *obj_name(const json_t *o)
{
    const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    return n ? n : "";
}

static bool is_kind(const json_t *o, const char *kind)
{
    const char *k = json_string_value(json_object_get(o, "kind"));
    const char *av = json_string_value(json_object_get(o, "apiVersion"));
    return k && av && strcmp(k, kind) == 0 && strcmp(av, KT_API_VERSION) == 0;
}

int kt_validate_decode_runtime(const json_t *o, struct kt_runtime *rt, struct kt_err *err)
{
    json_t *copy = json_deep_copy(o);
    if (!is_kind(o, "ClusterTrainingRuntime")) {
        json_object_set_new(kt_json_obj_ensure(copy, "metadata"), "namespace",
                            json_string(obj_ns(o)));
    }
    if (kt_runtime_decode(copy, rt, err) != 0) {
        return kt_err_prefix(err, "%s %s", json_string_value(json_object_get(o, "kind")),
                             obj_name(o));
    }
    return 0;
}

/* Find the runtime of tj among runtimes: *use points at decoded[i] when that one is decoded,
 * else at own, decoded here. 0 found, 1 missing, -1 decode error. */
static int find_runtime(const struct kt_trainjob *tj, const json_t *runtimes,
                        const struct kt_runtime *decoded, const struct kt_runtime **use,
                        struct kt_runtime *own, struct kt_err *err)
{
    bool cluster = strcmp(tj->runtime_ref.kind, "ClusterTrainingRuntime") == 0;
    size_t i;
    json_t *o;
    json_array_foreach(runtimes, i, o)
    {
        if (!is_kind(o, tj->runtime_ref.kind) || strcmp(obj_name(o), tj->runtime_ref.name) != 0 ||
            (!cluster && strcmp(obj_ns(o), tj->namespace_) != 0)) {
            continue;
        }
        if (decoded && decoded[i].obj) {
            *use = &decoded[i];
            return 0;
        }
        *use = own;
        return kt_validate_decode_runtime(o, own, err);
    }
    return 1;
}

static void missing_runtime(const struct kt_trainjob *tj, bool allow, struct kt_vresult *r)
{
    bool cluster = strcmp(tj->runtime_ref.kind, "ClusterTrainingRuntime") == 0;
    const json_t *ref = json_object_get(json_object_get(tj->obj, "spec"), "runtimeRef");
    char *nf = kt_trainjob_runtime_not_found(tj);
    struct kt_ferrs l;
    kt_ferrs_init(&l);
    /* Upstream's path for the cluster kind really is spec.RuntimeRef
     * (docs/internals/upstream.md#quirk-9). */
    kt_ferrs_add(&l, KT_FERR_INVALID, cluster ? "spec.RuntimeRef" : "spec.runtimeRef", ref,
                 KT_GO_RUNTIME_REF,
                 "%s: specified %s must be created before the TrainJob is created", nf,
                 cluster ? "clusterTrainingRuntime" : "trainingRuntime");
    free(nf);
    char *s = kt_ferr_string(&l.items[0]);
    if (allow) {
        kt_strv_push(&r->warnings, s);
    } else {
        /* Not kt_vresult_add_ferrs: its pointer, from the path, would be /spec/RuntimeRef,
         * which is in no document; the value is spec.runtimeRef's. */
        kt_vresult_add(r, KT_VSTAGE_WEBHOOK, l.items[0].field, kt_ferr_type_str(l.items[0].type), s,
                       "/spec/runtimeRef");
    }
    free(s);
    kt_ferrs_release(&l);
}

static void warn_deprecated(const struct kt_runtime *rt, struct kt_vresult *r)
{
    const json_t *labels = json_object_get(json_object_get(rt->obj, "metadata"), "labels");
    const char *support = json_string_value(json_object_get(labels, DEPRECATED_LABEL));
    if (rt->cluster && support && strcmp(support, "deprecated") == 0) {
        char *w = kt_xasprintf("Referenced ClusterTrainingRuntime \"%s\" is deprecated and will "
                               "be removed in a future release of Kubeflow Trainer. See runtime "
                               "deprecation policy: %s",
                               rt->name, DEPRECATION_URL);
        kt_strv_push(&r->warnings, w);
        free(w);
    }
}

static int decode_tj(const json_t *raw, struct kt_trainjob *tj, struct kt_err *err)
{
    json_t *obj = kt_json_clone(raw);
    json_t *meta = kt_json_obj_ensure(obj, "metadata");
    if (meta && json_string_length(json_object_get(meta, "namespace")) == 0) {
        json_object_set_new(meta, "namespace", json_string("default"));
    }
    return kt_trainjob_decode(obj, tj, err);
}

/* 0 when the runtime key is supported; else the bare denial in r and 1. */
static int check_key(const struct kt_trainjob *tj, struct kt_vresult *r)
{
    char *key = kt_runtime_key(tj);
    bool ok = kt_runtime_key_supported(key);
    if (!ok) {
        char *msg = kt_xasprintf("unsupported runtime: %s", key);
        kt_vresult_add(r, KT_VSTAGE_WEBHOOK, "spec.runtimeRef", "", msg, "/spec/runtimeRef");
        free(msg);
    }
    free(key);
    return ok ? 0 : 1;
}

int kt_validate_trainjob_webhook(const struct kt_framework *fw, const json_t *tj_raw,
                                 const json_t *old_raw, const struct kt_vruntimes *rts,
                                 struct kt_vresult *r, struct kt_err *err)
{
    struct kt_trainjob tj = {0}, old = {0};
    struct kt_runtime own = {0};
    const struct kt_runtime *rt = NULL;
    struct kt_view view = {0};
    struct kt_ferrs l;
    int rc = -1, found;
    kt_ferrs_init(&l);
    if (decode_tj(tj_raw, &tj, err) != 0 || (old_raw && decode_tj(old_raw, &old, err) != 0)) {
        goto out;
    }
    if (check_key(&tj, r) != 0) {
        rc = 0;
        goto out;
    }
    if (!fw->dra) { /* the provisional KEP-2782 fields (docs/api.md#dynamic-resource-allocation) */
        struct kt_ferrs gate;
        kt_ferrs_init(&gate);
        kt_dra_validate_gate_off(tj_raw, old_raw, &gate);
        kt_vresult_add_ferrs(r, &gate);
        kt_ferrs_release(&gate);
    }
    found =
        find_runtime(&tj, rts ? rts->runtimes : NULL, rts ? rts->decoded : NULL, &rt, &own, err);
    if (found < 0) {
        goto out;
    }
    rc = 0;
    if (found == 1) {
        missing_runtime(&tj, rts && rts->allow_missing, r);
        goto out;
    }
    warn_deprecated(rt, r);
    struct kt_framework_validate_req in = {.tj = &tj,
                                           .old = old_raw ? &old : NULL,
                                           .rt = rt,
                                           .view = rts && rts->view ? rts->view : &view};
    if (kt_framework_validate(fw, &in, &l, &r->warnings, err) != 0) {
        rc = -1;
        goto out;
    }
    kt_vresult_add_ferrs(r, &l);
out:
    kt_ferrs_release(&l);
    kt_runtime_release(&own);
    kt_trainjob_release(&old);
    kt_trainjob_release(&tj);
    return rc;
}

/* ------------------------------------------------------------------ runtimes */

static const char *required_container(const char *ancestor)
{
    if (strcmp(ancestor, "trainer") == 0) {
        return "node";
    }
    if (strcmp(ancestor, "model-initializer") == 0 ||
        strcmp(ancestor, "dataset-initializer") == 0) {
        return ancestor;
    }
    return NULL;
}

static void check_replicated_job(const json_t *job, size_t i, struct kt_ferrs *l)
{
    const json_t *tmpl = json_object_get(job, "template");
    const json_t *labels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
    const char *ancestor = json_string_value(json_object_get(labels, KT_ANCESTOR_LABEL));
    const char *want = ancestor ? required_container(ancestor) : NULL;
    if (!want) {
        return;
    }
    const json_t *reps = json_object_get(job, "replicas");
    long long n = json_is_integer(reps) ? (long long)json_integer_value(reps) : 1;
    if (n != 1) {
        char *f = kt_xasprintf("spec.template.spec.replicatedJobs[%zu].replicas", i);
        kt_ferrs_add_int(l, KT_FERR_INVALID, f, n, "always must be 1");
        free(f);
    }
    const json_t *ctrs = kt_json_path(tmpl, "spec.template.spec");
    ctrs = json_object_get(ctrs, "containers");
    if (!kt_json_arr_find(ctrs, "name", want, NULL)) {
        char *f = kt_xasprintf(
            "spec.template.spec.replicatedJobs[%zu].template.spec.template.spec.containers", i);
        kt_ferrs_add(l, KT_FERR_INVALID, f, ctrs, KT_GO_CONTAINER_LIST,
                     "must contain the required container for the ancestor: %s", ancestor);
        free(f);
    }
}

void kt_validate_runtime_webhook(const json_t *rt, const json_t *old, struct kt_vresult *r)
{
    bool cluster = is_kind(rt, "ClusterTrainingRuntime");
    struct kt_ferrs l;
    size_t i;
    json_t *job;
    if (old && !cluster) {
        return; /* TrainingRuntime UPDATE is not validated (docs/internals/upstream.md#quirk-10) */
    }
    kt_ferrs_init(&l);
    json_array_foreach(kt_json_path(rt, "spec.template.spec.replicatedJobs"), i, job)
    {
        check_replicated_job(job, i, &l);
    }
    kt_vresult_add_ferrs(r, &l);
    kt_ferrs_release(&l);
    const json_t *labels = json_object_get(json_object_get(rt, "metadata"), "labels");
    const char *support = json_string_value(json_object_get(labels, DEPRECATED_LABEL));
    if (cluster && !old && support && strcmp(support, "deprecated") == 0) {
        char *w = kt_xasprintf("ClusterTrainingRuntime \"%s\" is deprecated and will be removed "
                               "in a future release of Kubeflow Trainer. See runtime "
                               "deprecation policy: %s",
                               obj_name(rt), DEPRECATION_URL);
        kt_strv_push(&r->warnings, w);
        free(w);
    }
}
