/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_jobset.c - the JobSet plugin (docs/internals/upstream.md#jobset):
 * PreBuildSync (endpoints, parallelism), the JobSet builder, its CustomValidation checks and the
 * TrainJobStatus step. Matches upstream `pkg/runtime/framework/plugins/jobset` (jobset.go,
 * builder.go). */
#include "common/plugins/plugins.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

#define JOBSET_API "jobset.x-k8s.io/v1alpha2"

static const char *const jobset_watches[] = {JOBSET_API "/JobSet", NULL};

static json_t *obj_ensure(json_t *parent, const char *key)
{
    json_t *v = json_object_get(parent, key);
    if (!json_is_object(v)) {
        v = json_object();
        json_object_set_new(parent, key, v);
    }
    return v;
}

static int64_t rjob_replicas(const json_t *rjob)
{
    json_t *r = json_object_get(rjob, "replicas");
    return json_is_integer(r) ? json_integer_value(r) : 1;
}

/* ---- PreBuildSync ---- */

static int jobset_pre_build(struct kt_build *b, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    json_t *net = json_object_get(b->info.spec, "network");
    const char *sub = json_string_value(json_object_get(net, "subdomain"));
    (void)err;
    if (!sub || !*sub) {
        sub = tj->name;
    }
    for (size_t i = 0; i < b->info.n_podsets; i++) {
        struct kt_podset *ps = &b->info.podsets[i];
        int64_t reps = rjob_replicas(ps->rjob);
        for (int64_t r = 0; r < reps && r < 100000; r++) {
            for (int64_t p = 0; p < ps->count && p < 100000; p++) {
                char *ep = kt_xasprintf("%s-%s-%lld-%lld.%s", tj->name, ps->name, (long long)r,
                                        (long long)p, sub);
                kt_strv_push(&ps->endpoints, ep);
                free(ep);
            }
        }
        json_t *tmpl = obj_ensure(ps->rjob, "template");
        json_t *spec = obj_ensure(tmpl, "spec");
        json_object_set_new(spec, "parallelism", json_integer(ps->count));
        json_object_set_new(spec, "completions", json_integer(ps->count));
    }
    return 0;
}

/* ---- Build ---- */

static bool is_ancestor(const struct kt_podset *ps, const char *a)
{
    return ps->ancestor && strcmp(ps->ancestor, a) == 0;
}

static void build_initializer(struct kt_build *b, struct kt_podset *ps, const char *name,
                              const struct kt_initializer_src *src)
{
    json_object_set_new(ps->rjob, "replicas", json_integer(1));
    json_t *c = kt_podset_container(ps, name);
    if (!c || !src->present) {
        return;
    }
    (void)b;
    if (src->storage_uri) {
        json_t *e = kt_env_value("STORAGE_URI", src->storage_uri);
        kt_upsert_env(c, e);
        json_decref(e);
    }
    if (src->env) {
        json_t *env = kt_env_convert(src->env);
        kt_upsert_envs(c, env);
        json_decref(env);
    }
    if (src->secret_ref) {
        json_t *from = json_object_get(c, "envFrom");
        if (!json_is_array(from)) {
            from = json_array();
            json_object_set_new(c, "envFrom", from);
        }
        json_array_append_new(from, json_pack("{s:{s:s}}", "secretRef", "name", src->secret_ref));
    }
}

static void upsert_trainer_env(const struct kt_trainjob *tj, json_t *c)
{
    if (c && tj->trainer.env) {
        json_t *env = kt_env_convert(tj->trainer.env);
        kt_upsert_envs(c, env);
        json_decref(env);
    }
}

static void build_trainer(struct kt_build *b, struct kt_podset *ps)
{
    const struct kt_trainjob *tj = b->tj;
    json_object_set_new(ps->rjob, "replicas", json_integer(1));
    json_t *c = kt_podset_container(ps, KT_NODE);
    if (!c || !tj->trainer.present) {
        return;
    }
    if (tj->trainer.image) {
        json_object_set_new(c, "image", json_string(tj->trainer.image));
    }
    if (b->trainer_command) {
        json_object_set_new(c, "command", kt_json_clone(b->trainer_command));
    }
    if (b->trainer_args) {
        json_object_set_new(c, "args", kt_json_clone(b->trainer_args));
    }
    upsert_trainer_env(tj, c);
}

static void merge_pod_meta(struct kt_build *b, struct kt_podset *ps)
{
    json_t *tmpl = obj_ensure(obj_ensure(obj_ensure(ps->rjob, "template"), "spec"), "template");
    json_t *meta = NULL;
    if (json_object_size(b->info.pod_labels) > 0) {
        meta = obj_ensure(tmpl, "metadata");
        json_object_update(obj_ensure(meta, "labels"), b->info.pod_labels);
    }
    if (json_object_size(b->info.pod_annotations) > 0) {
        meta = obj_ensure(tmpl, "metadata");
        json_object_update(obj_ensure(meta, "annotations"), b->info.pod_annotations);
    }
}

static bool existing_running(const struct kt_build *b)
{
    const json_t *js = kt_view_get(b->view, JOBSET_API, "JobSet", b->tj->namespace_, b->tj->name);
    if (!js || b->tj->suspend) {
        return false;
    }
    json_t *spec = json_object_get(js, "spec");
    return !json_is_true(json_object_get(spec, "suspend"));
}

static json_t *jobset_object(struct kt_build *b)
{
    const struct kt_trainjob *tj = b->tj;
    json_t *meta = json_pack("{s:s, s:s}", "name", tj->name, "namespace", tj->namespace_);
    if (json_object_size(b->info.labels) > 0) {
        json_object_set(meta, "labels", b->info.labels);
    }
    if (json_object_size(b->info.annotations) > 0) {
        json_object_set(meta, "annotations", b->info.annotations);
    }
    json_t *spec = kt_json_clone(b->info.spec);
    kt_canonical_quantities(spec);
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", JOBSET_API, "kind", "JobSet", "metadata",
                     meta, "spec", spec);
}

static int jobset_build(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    const struct kt_runtime *rt = b->rt;
    if (existing_running(b)) {
        return 0;
    }
    size_t jobs = json_array_size(json_object_get(b->info.spec, "replicatedJobs"));
    if (jobs < b->info.n_podsets) {
        return kt_err_set(err, KT_EINVAL,
                          "runtime template has %zu replicatedJobs but runtime info has %zu "
                          "podSets",
                          jobs, b->info.n_podsets);
    }
    for (size_t i = 0; i < b->info.n_podsets; i++) {
        struct kt_podset *ps = &b->info.podsets[i];
        if (is_ancestor(ps, KT_ANCESTOR_DATASET)) {
            build_initializer(b, ps, KT_ANCESTOR_DATASET, &tj->dataset);
        } else if (is_ancestor(ps, KT_ANCESTOR_MODEL)) {
            build_initializer(b, ps, KT_ANCESTOR_MODEL, &tj->model);
        } else if (is_ancestor(ps, KT_ANCESTOR_TRAINER)) {
            build_trainer(b, ps);
        }
    }
    if (rt->ml.present && rt->ml.kind == KT_POLICY_MPI && rt->ml.mpi_run_launcher_as_node) {
        struct kt_podset *node = kt_info_podset_by_name(&b->info, KT_NODE);
        if (node && tj->trainer.present) {
            upsert_trainer_env(tj, kt_podset_container(node, KT_NODE));
        }
    }
    for (size_t i = 0; i < b->info.n_podsets; i++) {
        merge_pod_meta(b, &b->info.podsets[i]);
    }
    json_object_set_new(b->info.spec, "suspend", json_boolean(tj->suspend));
    json_array_append_new(objects, jobset_object(b));
    return 0;
}

/* ---- Validate ---- */

static void validate_initializer(const struct kt_validation *v, const char *job, const char *config,
                                 struct kt_ferrs *errs)
{
    json_t *ref = json_object_get(json_object_get(v->tj->obj, "spec"), "runtimeRef");
    struct kt_podset *ps = kt_info_podset_by_name(v->info, job);
    if (!ps) {
        kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimeRef", ref, KT_GO_RUNTIME_REF,
                     "must have %s job when trainJob is configured with input %s", job, config);
        return;
    }
    json_t *c = kt_podset_container(ps, job);
    if (!c) {
        kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimeRef", ref, KT_GO_RUNTIME_REF,
                     "must have container with name - %s in the %s job", job, job);
        return;
    }
    if (!kt_json_arr_find(json_object_get(c, "volumeMounts"), "name", "initializer", NULL)) {
        kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimeRef", ref, KT_GO_RUNTIME_REF,
                     "must have volumeMount with name - initializer in container %s of the %s job",
                     job, job);
    }
}

static bool suspended(const struct kt_trainjob *tj)
{
    return tj && tj->suspend;
}

static void validate_patch_update(const struct kt_validation *v, struct kt_ferrs *errs)
{
    const json_t *a = v->tj->runtime_patches, *o = v->old->runtime_patches;
    bool same = (!a || json_array_size(a) == 0) && (!o || json_array_size(o) == 0);
    if (!same && a && o) {
        same = kt_json_equal(a, o);
    }
    if (same) {
        return;
    }
    if (!suspended(v->tj) && !suspended(v->old)) {
        kt_ferrs_add(errs, KT_FERR_FORBIDDEN, "spec.runtimePatches", NULL, KT_GO_ANY,
                     "RuntimePatches can only be modified when the TrainJob is suspended before "
                     "or after the update");
        return;
    }
    const json_t *js = kt_view_get(v->view, JOBSET_API, "JobSet", v->tj->namespace_, v->tj->name);
    size_t i;
    json_t *st;
    json_array_foreach(json_object_get(json_object_get(js, "status"), "replicatedJobsStatus"), i,
                       st)
    {
        if (kt_json_int(st, "active", 0) > 0) {
            kt_ferrs_add(errs, KT_FERR_FORBIDDEN, "spec.runtimePatches", NULL, KT_GO_ANY,
                         "RuntimePatches cannot be modified when the JobSet's ReplicatedJob %s is "
                         "still active",
                         kt_json_str(st, "name", ""));
        }
    }
}

static bool rfc1123_subdomain(const char *s, size_t n)
{
    bool start = true;
    if (n == 0 || n > 253) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.') {
            if (start || s[i - 1] == '-') {
                return false;
            }
            start = true;
            continue;
        }
        if (!alnum && (c != '-' || start)) {
            return false;
        }
        start = false;
    }
    return s[n - 1] != '-' && s[n - 1] != '.';
}

static bool http_path(const char *s)
{
    static const char ok[] = "/-._~%!$&'()*+,;=:";
    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        bool alnum =
            (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');
        if (!alnum && !strchr(ok, *s)) {
            return false;
        }
    }
    return true;
}

/* k8s IsDomainPrefixedPath on field spec.runtimePatches.manager. */
static void validate_manager(const char *m, struct kt_ferrs *errs)
{
    static const char *path = "spec.runtimePatches.manager";
    const char *slash = strchr(m, '/');
    if (!*m) {
        kt_ferrs_add(errs, KT_FERR_REQUIRED, path, NULL, KT_GO_ANY, "%s", "");
        return;
    }
    if (!slash || slash == m || !slash[1]) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, path, m,
                         "must be a domain-prefixed path (such as \"acme.io/foo\")");
        return;
    }
    char *host = kt_xstrndup(m, (size_t)(slash - m));
    if (strlen(host) > 253) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, path, host, "must be no more than 253 characters");
    }
    if (!rfc1123_subdomain(host, strlen(host))) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, path, host,
                         "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                         "characters, '-' or '.', and must start and end with an alphanumeric "
                         "character (e.g. 'example.com', regex used for validation is "
                         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    }
    free(host);
    if (!http_path(slash + 1)) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, path, slash + 1,
                         "Invalid path (regex used for validation is "
                         "'[A-Za-z0-9/\\-._~%%!$&'()*+,;=:]+')");
    }
}

static bool in_names(const json_t *a, const json_t *b, const char *name)
{
    return kt_json_arr_find(a, "name", name, NULL) || kt_json_arr_find(b, "name", name, NULL);
}

static bool env_forbidden(const char *name)
{
    return strcmp(name, KT_ANCESTOR_DATASET) == 0 || strcmp(name, KT_ANCESTOR_MODEL) == 0 ||
           strcmp(name, KT_NODE) == 0;
}

/* The runtime's own replicated job named name (before patches), or NULL. */
static json_t *runtime_job(const struct kt_runtime *rt, const char *name)
{
    json_t *spec = json_object_get(rt->template_, "spec");
    return kt_json_arr_find(json_object_get(spec, "replicatedJobs"), "name", name, NULL);
}

static void validate_patch_containers(const struct kt_validation *v, const char *job,
                                      const json_t *rjob, const json_t *pod, struct kt_ferrs *errs)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const json_t *rp = v->tj->runtime_patches;
    json_t *rt_pod = kt_json_path(rjob, "template.spec.template.spec");
    json_t *init = json_object_get(rt_pod, "initContainers");
    json_t *cont = json_object_get(rt_pod, "containers");
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(pod, lists[l]), i, c)
        {
            const char *name = kt_json_str(c, "name", "");
            if (!in_names(init, cont, name)) {
                kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimePatches", rp, KT_GO_PATCH_LIST,
                             "must not have %s that doesn't exist in the runtime job %s",
                             l == 0 ? "initContainer" : "container", job);
            }
            json_t *env = json_object_get(c, "env");
            if (l == 1 && json_array_size(env) > 0 && env_forbidden(name)) {
                kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimePatches", rp, KT_GO_PATCH_LIST,
                             "must not have envs for the dataset-initializer, model-initializer, "
                             "node containers");
            }
        }
    }
}

/* Patch targets are checked against the runtime template itself, not against Info (where
 * the patch already added what it names). Deliberate difference (docs/compatibility.md):
 * upstream checks Info, so it admits a patch that creates a job or container and then builds
 * an image-less one that the batch API refuses. */
static void validate_patches(const struct kt_validation *v, struct kt_ferrs *errs)
{
    static const char *const jobs_path = "trainingRuntimeSpec.template.spec";
    size_t i, j;
    json_t *p, *rj;
    json_array_foreach(v->tj->runtime_patches, i, p)
    {
        validate_manager(kt_json_str(p, "manager", ""), errs);
        json_t *spec = kt_json_path(p, jobs_path);
        json_array_foreach(json_object_get(spec, "replicatedJobs"), j, rj)
        {
            const char *name = kt_json_str(rj, "name", "");
            json_t *rjob = runtime_job(v->rt, name);
            if (!rjob) {
                kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimePatches", v->tj->runtime_patches,
                             KT_GO_PATCH_LIST,
                             "must not have replicated job that doesn't exist in the runtime job "
                             "template");
                continue;
            }
            validate_patch_containers(v, name, rjob,
                                      kt_json_path(rj, "template.spec.template.spec"), errs);
        }
    }
}

static void jobset_validate(const struct kt_validation *v, struct kt_ferrs *errs,
                            struct kt_strv *warnings)
{
    (void)warnings;
    if (v->tj->dataset.present) {
        validate_initializer(v, KT_ANCESTOR_DATASET, "datasetConfig", errs);
    }
    if (v->tj->model.present) {
        validate_initializer(v, KT_ANCESTOR_MODEL, "modelConfig", errs);
    }
    if (v->old) {
        validate_patch_update(v, errs);
    }
    validate_patches(v, errs);
}

/* ---- TrainJobStatus ---- */

static bool cond_true(const json_t *conds, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (strcmp(kt_json_str(c, "type", ""), type) == 0 &&
            strcmp(kt_json_str(c, "status", ""), "True") == 0) {
            return true;
        }
    }
    return false;
}

/* meta.SetStatusCondition: update in place (lastTransitionTime only when status changes). */
static void set_condition(json_t *status, const json_t *src, const char *type)
{
    static const char *const keys[] = {"status", "observedGeneration", "lastTransitionTime",
                                       "reason", "message"};
    json_t *conds = kt_json_arr_ensure(status, "conditions");
    json_t *cur = kt_json_arr_find(conds, "type", type, NULL);
    if (!cur) {
        cur = json_pack("{s:s}", "type", type);
        for (size_t k = 0; k < 5; k++) {
            json_t *v = json_object_get(src, keys[k]);
            if (v) {
                json_object_set(cur, keys[k], v);
            }
        }
        json_array_append_new(conds, cur);
        return;
    }
    bool changed = strcmp(kt_json_str(cur, "status", ""), kt_json_str(src, "status", "")) != 0;
    for (size_t k = 0; k < 5; k++) {
        json_t *v = json_object_get(src, keys[k]);
        if (v && (k != 2 || changed)) {
            json_object_set(cur, keys[k], v);
        }
    }
}

static void copy_conditions(json_t *status, const json_t *js_conds)
{
    static const char *const map[][2] = {{"Completed", "Complete"}, {"Failed", "Failed"}};
    size_t i;
    json_t *c;
    for (size_t m = 0; m < 2; m++) {
        json_array_foreach(js_conds, i, c)
        {
            if (strcmp(kt_json_str(c, "type", ""), map[m][0]) == 0 &&
                strcmp(kt_json_str(c, "status", ""), "True") == 0) {
                set_condition(status, c, map[m][1]);
            }
        }
    }
}

static json_t *jobs_status(const json_t *list)
{
    static const char *const keys[] = {"ready", "succeeded", "failed", "active", "suspended"};
    json_t *out = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s)
    {
        json_t *e = json_pack("{s:s}", "name", kt_json_str(s, "name", ""));
        for (size_t k = 0; k < 5; k++) {
            json_object_set_new(e, keys[k], json_integer(kt_json_int(s, keys[k], 0)));
        }
        json_array_append_new(out, e);
    }
    return out;
}

static int jobset_status(const struct kt_trainjob *tj, const struct kt_view *view, json_t **out,
                         struct kt_err *err)
{
    *out = NULL;
    const json_t *js = kt_view_get(view, JOBSET_API, "JobSet", tj->namespace_, tj->name);
    json_t *conds = json_object_get(tj->status, "conditions");
    if (!js) {
        if (cond_true(conds, "Complete") || cond_true(conds, "Failed")) {
            return 0;
        }
        return kt_err_set(err, KT_ENOENT, "jobsets.jobset.x-k8s.io \"%s\" not found", tj->name);
    }
    json_t *st = json_is_object(tj->status) ? kt_json_clone(tj->status) : json_object();
    json_t *jst = json_object_get(js, "status");
    copy_conditions(st, json_object_get(jst, "conditions"));
    json_t *jobs = jobs_status(json_object_get(jst, "replicatedJobsStatus"));
    if (json_array_size(jobs) > 0) {
        json_object_set_new(st, "jobsStatus", jobs);
    } else {
        json_decref(jobs);
        json_object_del(st, "jobsStatus");
    }
    *out = st;
    return 0;
}

const struct kt_plugin kt_plugin_jobset = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "JobSet",
    .watches = jobset_watches,
    .validate = jobset_validate,
    .pre_build_sync = jobset_pre_build,
    .build = jobset_build,
    .status = jobset_status,
};
