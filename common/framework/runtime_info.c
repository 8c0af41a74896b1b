/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/runtime_info.c - Info/PodSet construction and the shared upsert helpers.
 *
 * Matches upstream `pkg/runtime/runtime.go` (newRuntimeInfo, PodSets, resource helpers) and
 * `pkg/apply` (upsert keys, EnvVar conversion). No I/O, no globals. */
#include "common/framework/runtime_info.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/quantity.h"
#include "common/framework/smp.h"

static json_t *find_named(const json_t *arr, const char *name);

static json_t *copy_obj(const json_t *v)
{
    return json_is_object(v) ? kt_json_clone(v) : json_object();
}

static json_t *get_path(const json_t *v, const char *const *keys, size_t n)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = v};
    json_t *cur = u.m;
    for (size_t i = 0; i < n && cur; i++) {
        cur = json_is_object(cur) ? json_object_get(cur, keys[i]) : NULL;
    }
    return cur;
}

/* The object at keys under root, creating empty objects (replacing non-objects). */
static json_t *ensure_path(json_t *root, const char *const *keys, size_t n)
{
    json_t *cur = root;
    for (size_t i = 0; i < n; i++) {
        json_t *next = json_object_get(cur, keys[i]);
        if (!json_is_object(next)) {
            next = json_object();
            json_object_set_new(cur, keys[i], next);
        }
        cur = next;
    }
    return cur;
}

static void overlay_metadata(struct kt_info *info, const struct kt_trainjob *tj)
{
    static const char *const meta[] = {"trainingRuntimeSpec", "template", "metadata"};
    size_t i;
    json_t *p;
    json_array_foreach(tj->runtime_patches, i, p)
    {
        json_t *m = get_path(p, meta, 3);
        json_t *l = json_is_object(m) ? json_object_get(m, "labels") : NULL;
        json_t *a = json_is_object(m) ? json_object_get(m, "annotations") : NULL;
        if (json_is_object(l)) {
            json_object_update(info->labels, l);
        }
        if (json_is_object(a)) {
            json_object_update(info->annotations, a);
        }
    }
}

/* Upstream re-sorts the merged replicatedJobs (which strategic merge patch may reorder) into
 * the runtime's order, stably; a job only a patch names has no place in that order and is
 * dropped (the webhook rejects such patches; docs/compatibility.md). */
static void keep_runtime_jobs(json_t *spec, const json_t *runtime_spec)
{
    json_t *jobs = json_object_get(spec, "replicatedJobs");
    json_t *orig = json_object_get(runtime_spec, "replicatedJobs");
    if (!json_is_array(jobs)) {
        return;
    }
    json_t *sorted = json_array();
    size_t i, j;
    json_t *o, *job;
    json_array_foreach(orig, i, o)
    {
        const char *n = json_string_value(json_object_get(o, "name"));
        if (!n) { /* not valid in a runtime; kept where it was */
            job = json_array_get(jobs, i);
            if (job && !json_object_get(job, "name")) {
                json_array_append(sorted, job);
            }
            continue;
        }
        json_array_foreach(jobs, j, job)
        {
            const char *m = json_string_value(json_object_get(job, "name"));
            if (m && strcmp(n, m) == 0) {
                json_array_append(sorted, job);
                break;
            }
        }
    }
    json_object_set_new(spec, "replicatedJobs", sorted);
}

static void apply_patches(struct kt_info *info, const struct kt_trainjob *tj,
                          const json_t *runtime_spec, bool dra)
{
    static const char *const spec[] = {"trainingRuntimeSpec", "template", "spec"};
    size_t i;
    json_t *p;
    json_array_foreach(tj->runtime_patches, i, p)
    {
        json_t *typed = kt_smp_typed_jobset_patch(get_path(p, spec, 3), dra);
        kt_smp_jobset_spec(info->spec, typed);
        json_decref(typed);
    }
    keep_runtime_jobs(info->spec, runtime_spec);
}

static int64_t clamp_count(int64_t c)
{
    return c < 1 ? 1 : c;
}

static void init_podset(struct kt_podset *ps, json_t *rjob, const struct kt_runtime *rt)
{
    static const char *const labels[] = {"template", "metadata", "labels"};
    static const char *const par[] = {"template", "spec"};
    static const char *const pod[] = {"template", "spec", "template", "spec"};
    json_t *l = get_path(rjob, labels, 3);
    json_t *anc = json_is_object(l) ? json_object_get(l, KT_ANCESTOR_LABEL) : NULL;
    json_t *js = get_path(rjob, par, 2);
    json_t *pj = json_is_object(js) ? json_object_get(js, "parallelism") : NULL;

    ps->name = json_string_value(json_object_get(rjob, "name"));
    if (!ps->name) {
        ps->name = "";
    }
    ps->ancestor = json_string_value(anc);
    ps->count = json_is_integer(pj) ? json_integer_value(pj) : 1;
    if (ps->ancestor && strcmp(ps->ancestor, KT_ANCESTOR_TRAINER) == 0 && rt->ml.present) {
        ps->count = rt->ml.num_nodes.has ? rt->ml.num_nodes.v : 1;
    }
    ps->count = clamp_count(ps->count);
    ps->rjob = rjob;
    ps->pod_spec = ensure_path(rjob, pod, 4);
    kt_strv_init(&ps->endpoints);
}

bool kt_podset_gets_node_resources(const struct kt_runtime *rt, const struct kt_podset *ps)
{
    bool trainer = rt->ml.present && ps->ancestor && strcmp(ps->ancestor, KT_ANCESTOR_TRAINER) == 0;
    bool launcher_node = rt->ml.kind == KT_POLICY_MPI && rt->ml.mpi_run_launcher_as_node &&
                         strcmp(ps->name, KT_NODE) == 0;
    return trainer || launcher_node;
}

static void merge_resources(struct kt_info *info, const struct kt_trainjob *tj)
{
    const json_t *res = tj->trainer.present ? tj->trainer.resources_per_node : NULL;
    if (!res) {
        return;
    }
    for (size_t i = 0; i < info->n_podsets; i++) {
        struct kt_podset *ps = &info->podsets[i];
        json_t *c = kt_podset_gets_node_resources(info->runtime, ps)
                        ? kt_podset_container(ps, KT_NODE)
                        : NULL;
        if (c) {
            kt_smp_container_resources(c, res);
        }
    }
}

/* Replace the item of list (created in parent[key] when absent) named like item, else append.
 * Steals item. */
static void upsert_named(json_t *parent, const char *key, json_t *item)
{
    json_t *list = json_object_get(parent, key);
    if (!json_is_array(list)) {
        list = json_array();
        json_object_set_new(parent, key, list);
    }
    json_t *at = find_named(list, json_string_value(json_object_get(item, "name")));
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        if (o == at) {
            json_array_set_new(list, i, item);
            return;
        }
    }
    json_array_append_new(list, item);
}

/* The container or init container name of ps, NULL when neither exists. */
static json_t *any_container(const struct kt_podset *ps, const char *name)
{
    json_t *c = kt_podset_container(ps, name);
    return c ? c : kt_podset_init_container(ps, name);
}

/* One claim of spec.trainer.resourceClaimsPerNode into one node pod spec: the pod-level entry
 * (name plus its source), then {name} in resources.claims of each target container. */
static void apply_claim(struct kt_podset *ps, const json_t *claim)
{
    static const char *const src[] = {"resourceClaimName", "resourceClaimTemplateName"};
    const char *name = json_string_value(json_object_get(claim, "name"));
    if (!name) {
        return;
    }
    json_t *pc = json_pack("{s:s}", "name", name);
    for (size_t k = 0; k < KT_ARRAY_SIZE(src); k++) {
        json_t *v = json_object_get(claim, src[k]);
        if (json_is_string(v)) {
            json_object_set(pc, src[k], v);
        }
    }
    upsert_named(ps->pod_spec, "resourceClaims", pc);
    const json_t *targets = json_object_get(claim, "containers");
    size_t n = json_array_size(targets);
    for (size_t i = 0; i < (n ? n : 1); i++) {
        const char *cn = n ? json_string_value(json_array_get(targets, i)) : KT_NODE;
        json_t *c = cn ? any_container(ps, cn) : NULL;
        if (!c) {
            continue; /* the webhook refuses it (docs/api.md#dynamic-resource-allocation) */
        }
        json_t *res = json_object_get(c, "resources");
        if (!json_is_object(res)) {
            res = json_object();
            json_object_set_new(c, "resources", res);
        }
        upsert_named(res, "claims", json_pack("{s:s}", "name", name));
    }
}

/* spec.trainer.resourceClaimsPerNode (KEP-2782, gate DynamicResourceAllocation) into the pod
 * specs that get the per-node resources, after the runtime patches: a claim of the same name
 * from the runtime or a patch is replaced. */
static void apply_claims(struct kt_info *info, const struct kt_trainjob *tj)
{
    const json_t *claims = tj->trainer.present ? tj->trainer.resource_claims_per_node : NULL;
    size_t j;
    const json_t *claim;
    for (size_t i = 0; i < info->n_podsets && claims; i++) {
        struct kt_podset *ps = &info->podsets[i];
        if (!kt_podset_gets_node_resources(info->runtime, ps)) {
            continue;
        }
        json_array_foreach(claims, j, claim)
        {
            apply_claim(ps, claim);
        }
    }
}

int kt_info_build(struct kt_info *out, const struct kt_runtime *rt, const struct kt_trainjob *tj,
                  struct kt_err *err)
{
    return kt_info_build_gated(out, rt, tj, false, err);
}

int kt_info_build_gated(struct kt_info *out, const struct kt_runtime *rt,
                        const struct kt_trainjob *tj, bool dra, struct kt_err *err)
{
    const json_t *tmpl = rt->template_;
    json_t *meta = json_is_object(tmpl) ? json_object_get(tmpl, "metadata") : NULL;
    json_t *spec = json_is_object(tmpl) ? json_object_get(tmpl, "spec") : NULL;
    size_t i;
    json_t *rjob;

    memset(out, 0, sizeof(*out));
    out->runtime = rt;
    out->labels = copy_obj(json_is_object(meta) ? json_object_get(meta, "labels") : NULL);
    out->annotations = copy_obj(json_is_object(meta) ? json_object_get(meta, "annotations") : NULL);
    out->pod_labels = json_object();
    out->pod_annotations = json_object();
    out->spec = copy_obj(spec);
    overlay_metadata(out, tj);
    apply_patches(out, tj, spec, dra);

    json_t *rjobs = json_object_get(out->spec, "replicatedJobs");
    if (rjobs && !json_is_array(rjobs)) {
        kt_info_release(out);
        return kt_err_set(err, KT_EINVAL, "spec.template.spec.replicatedJobs: expected array");
    }
    out->podsets = kt_xcalloc(json_array_size(rjobs) + 1, sizeof(*out->podsets));
    json_array_foreach(rjobs, i, rjob)
    {
        if (!json_is_object(rjob)) {
            kt_info_release(out);
            return kt_err_set(err, KT_EINVAL,
                              "spec.template.spec.replicatedJobs[%zu]: expected object", i);
        }
        init_podset(&out->podsets[i], rjob, rt);
        out->n_podsets = i + 1;
    }
    merge_resources(out, tj);
    if (dra) {
        apply_claims(out, tj);
    }
    return 0;
}

void kt_info_release(struct kt_info *info)
{
    if (!info) {
        return;
    }
    json_decref(info->labels);
    json_decref(info->annotations);
    json_decref(info->pod_labels);
    json_decref(info->pod_annotations);
    json_decref(info->spec);
    for (size_t i = 0; i < info->n_podsets; i++) {
        kt_strv_release(&info->podsets[i].endpoints);
    }
    free(info->podsets);
    memset(info, 0, sizeof(*info));
}

struct kt_podset *kt_info_podset_by_ancestor(const struct kt_info *info, const char *ancestor)
{
    for (size_t i = 0; i < info->n_podsets; i++) {
        const char *a = info->podsets[i].ancestor;
        if (a && strcmp(a, ancestor) == 0) {
            return &info->podsets[i];
        }
    }
    return NULL;
}

struct kt_podset *kt_info_podset_by_name(const struct kt_info *info, const char *name)
{
    for (size_t i = 0; i < info->n_podsets; i++) {
        if (strcmp(info->podsets[i].name, name) == 0) {
            return &info->podsets[i];
        }
    }
    return NULL;
}

static json_t *find_named(const json_t *arr, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && strcmp(n, name) == 0) {
            return c;
        }
    }
    return NULL;
}

json_t *kt_podset_container(const struct kt_podset *ps, const char *name)
{
    return find_named(json_object_get(ps->pod_spec, "containers"), name);
}

json_t *kt_podset_init_container(const struct kt_podset *ps, const char *name)
{
    return find_named(json_object_get(ps->pod_spec, "initContainers"), name);
}

const json_t *kt_info_resources_per_node(const struct kt_info *info, const struct kt_trainjob *tj)
{
    if (tj->trainer.present && tj->trainer.resources_per_node) {
        return tj->trainer.resources_per_node;
    }
    for (size_t i = 0; i < info->n_podsets; i++) {
        const struct kt_podset *ps = &info->podsets[i];
        bool trainer = ps->ancestor && strcmp(ps->ancestor, KT_ANCESTOR_TRAINER) == 0;
        if (strcmp(ps->name, KT_NODE) == 0 || trainer) {
            json_t *c = kt_podset_container(ps, KT_NODE);
            return c ? json_object_get(c, "resources") : NULL;
        }
    }
    return NULL;
}

/* ---- quantities rounded up ---- */

int64_t kt_quantity_ceil_i64(const json_t *q)
{
    struct kt_quantity v;
    int64_t n = 0;
    if (!q || kt_quantity_from_json(q, &v, NULL) != 0) {
        return -1;
    }
    if (kt_quantity_value(&v, &n, NULL) != 0) {
        return kt_quantity_sign(&v) > 0 ? INT64_MAX : 0;
    }
    return n < 0 ? 0 : n;
}

static void canon_list(json_t *list)
{
    const char *k;
    json_t *v;
    struct kt_quantity q;
    char buf[KT_QUANTITY_STR_MAX];
    json_object_foreach(list, k, v)
    {
        if (kt_quantity_from_json(v, &q, NULL) == 0) {
            json_object_set_new(list, k, json_string(kt_quantity_format(&q, buf, sizeof(buf))));
        }
    }
}

static void canon_resources(json_t *res)
{
    if (json_is_object(res)) {
        canon_list(json_object_get(res, "limits"));
        canon_list(json_object_get(res, "requests"));
    }
}

static void canon_containers(json_t *list)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        canon_resources(json_object_get(c, "resources"));
    }
}

static void canon_pod_spec(json_t *pod)
{
    size_t i;
    json_t *v;
    struct kt_quantity q;
    char buf[KT_QUANTITY_STR_MAX];
    if (!json_is_object(pod)) {
        return;
    }
    canon_containers(json_object_get(pod, "containers"));
    canon_containers(json_object_get(pod, "initContainers"));
    canon_list(json_object_get(pod, "overhead"));
    json_array_foreach(json_object_get(pod, "volumes"), i, v)
    {
        json_t *ed = json_object_get(v, "emptyDir");
        json_t *sl = json_is_object(ed) ? json_object_get(ed, "sizeLimit") : NULL;
        if (sl && kt_quantity_from_json(sl, &q, NULL) == 0) {
            json_object_set_new(ed, "sizeLimit",
                                json_string(kt_quantity_format(&q, buf, sizeof(buf))));
        }
    }
}

void kt_canonical_quantities(json_t *jobset_spec)
{
    static const char *const pod[] = {"template", "spec", "template", "spec"};
    static const char *const pvc[] = {"spec", "resources"};
    size_t i, j;
    json_t *rj, *pol, *t;
    json_array_foreach(json_object_get(jobset_spec, "replicatedJobs"), i, rj)
    {
        canon_pod_spec(get_path(rj, pod, 4));
    }
    json_array_foreach(json_object_get(jobset_spec, "volumeClaimPolicies"), i, pol)
    {
        json_array_foreach(json_object_get(pol, "templates"), j, t)
        {
            canon_resources(get_path(t, pvc, 2));
        }
    }
}

/* ---- SinglePodRequests ---- */

/* A resource list: names and exact quantities, in first-seen order. */
struct rlist {
    const char *name[64];
    struct kt_quantity q[64];
    size_t n;
};

static struct kt_quantity *rl_slot(struct rlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->name[i], name) == 0) {
            return &l->q[i];
        }
    }
    if (l->n == 64) {
        return NULL;
    }
    l->name[l->n] = name;
    memset(&l->q[l->n], 0, sizeof(l->q[l->n]));
    return &l->q[l->n++];
}

/* dst += src (max: dst = max(dst, src)) for every resource of src. */
static int rl_merge(struct rlist *dst, const struct rlist *src, bool max, struct kt_err *err)
{
    for (size_t i = 0; i < src->n; i++) {
        struct kt_quantity *d = rl_slot(dst, src->name[i]);
        if (!d) {
            return kt_err_set(err, KT_ERANGE, "too many resource names");
        }
        if (max) {
            if (kt_quantity_cmp(&src->q[i], d) > 0 || kt_quantity_is_zero(d)) {
                *d = src->q[i];
            }
        } else if (kt_quantity_add(d, &src->q[i], err) != 0) {
            return -1;
        }
    }
    return 0;
}

static int rl_read(struct rlist *l, const json_t *list, struct kt_err *err)
{
    const char *k;
    json_t *v;
    memset(l, 0, sizeof(*l));
    json_object_foreach((json_t *)(uintptr_t)list, k, v)
    {
        struct kt_quantity *q = rl_slot(l, k);
        if (!q) {
            return kt_err_set(err, KT_ERANGE, "too many resource names");
        }
        if (kt_quantity_from_json(v, q, err) != 0) {
            return kt_err_prefix(err, "%s", k);
        }
    }
    return 0;
}

static const json_t *requests_of(const json_t *c)
{
    return json_object_get(json_object_get(c, "resources"), "requests");
}

static int init_requests(const json_t *pod, struct rlist *reqs, struct kt_err *err)
{
    struct rlist restartable = {0}, init_max = {0}, r, step;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(pod, "initContainers"), i, c)
    {
        bool sidecar = strcmp(kt_json_str(c, "restartPolicy", ""), "Always") == 0;
        if (rl_read(&r, requests_of(c), err) != 0) {
            return -1;
        }
        if (sidecar &&
            (rl_merge(reqs, &r, false, err) != 0 || rl_merge(&restartable, &r, false, err) != 0)) {
            return -1;
        }
        step = restartable;
        if (!sidecar && rl_merge(&step, &r, false, err) != 0) {
            return -1;
        }
        if (rl_merge(&init_max, &step, true, err) != 0) {
            return -1;
        }
    }
    return rl_merge(reqs, &init_max, true, err);
}

json_t *kt_podset_single_pod_requests(const struct kt_podset *ps, struct kt_err *err)
{
    struct rlist reqs = {0}, r;
    size_t i;
    json_t *c;
    char buf[KT_QUANTITY_STR_MAX];
    json_array_foreach(json_object_get(ps->pod_spec, "containers"), i, c)
    {
        if (rl_read(&r, requests_of(c), err) != 0 || rl_merge(&reqs, &r, false, err) != 0) {
            return NULL;
        }
    }
    if (init_requests(ps->pod_spec, &reqs, err) != 0 ||
        rl_read(&r, json_object_get(ps->pod_spec, "overhead"), err) != 0 ||
        rl_merge(&reqs, &r, false, err) != 0) {
        return NULL;
    }
    json_t *out = json_object();
    for (i = 0; i < reqs.n; i++) {
        json_object_set_new(out, reqs.name[i],
                            json_string(kt_quantity_format(&reqs.q[i], buf, sizeof(buf))));
    }
    return out;
}

static int64_t gpu_in(const json_t *list)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)list, k, v)
    {
        char low[256];
        size_t n = strlen(k);
        if (n >= sizeof(low)) {
            continue;
        }
        for (size_t i = 0; i <= n; i++) {
            low[i] = (char)tolower((unsigned char)k[i]);
        }
        if (strstr(low, "gpu")) {
            int64_t c = kt_quantity_ceil_i64(v);
            return c < 0 ? 0 : c;
        }
    }
    return 0;
}

int64_t kt_resources_gpu_count(const json_t *resources)
{
    if (!json_is_object(resources)) {
        return 0;
    }
    int64_t n = gpu_in(json_object_get(resources, "requests"));
    return n ? n : gpu_in(json_object_get(resources, "limits"));
}

int64_t kt_resources_cpu_count(const json_t *resources)
{
    if (!json_is_object(resources)) {
        return 0;
    }
    json_t *req = json_object_get(resources, "requests");
    int64_t n = kt_quantity_ceil_i64(json_is_object(req) ? json_object_get(req, "cpu") : NULL);
    if (n > 0) {
        return n;
    }
    json_t *lim = json_object_get(resources, "limits");
    n = kt_quantity_ceil_i64(json_is_object(lim) ? json_object_get(lim, "cpu") : NULL);
    return n > 0 ? n : 0;
}

/* ---- upserts ---- */

static json_t *list_of(json_t *obj, const char *key)
{
    json_t *l = json_object_get(obj, key);
    if (!json_is_array(l)) {
        l = json_array();
        json_object_set_new(obj, key, l);
    }
    return l;
}

static bool same_str(const json_t *a, const json_t *b)
{
    return json_is_string(a) && json_is_string(b) &&
           strcmp(json_string_value(a), json_string_value(b)) == 0;
}

static void upsert_by(json_t *obj, const char *list, const json_t *item, const char *key)
{
    json_t *l = list_of(obj, list);
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e)
    {
        if (same_str(json_object_get(e, key), json_object_get(item, key))) {
            json_array_set_new(l, i, kt_json_clone(item));
            return;
        }
    }
    json_array_append_new(l, kt_json_clone(item));
}

void kt_upsert_env(json_t *container, const json_t *env)
{
    upsert_by(container, "env", env, "name");
}

void kt_upsert_envs(json_t *container, const json_t *envs)
{
    size_t i;
    json_t *e;
    json_array_foreach(envs, i, e)
    {
        kt_upsert_env(container, e);
    }
}

void kt_upsert_port(json_t *container, const json_t *port)
{
    json_t *l = list_of(container, "ports");
    json_t *cp = json_object_get(port, "containerPort");
    json_t *name = json_object_get(port, "name");
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e)
    {
        json_t *ecp = json_object_get(e, "containerPort");
        bool port_eq = json_is_integer(cp) && json_is_integer(ecp) &&
                       json_integer_value(cp) == json_integer_value(ecp);
        if (port_eq || same_str(name, json_object_get(e, "name"))) {
            json_array_set_new(l, i, kt_json_clone(port));
            return;
        }
    }
    json_array_append_new(l, kt_json_clone(port));
}

void kt_upsert_volume(json_t *pod_spec, const json_t *volume)
{
    upsert_by(pod_spec, "volumes", volume, "name");
}

void kt_upsert_mount(json_t *container, const json_t *mount)
{
    upsert_by(container, "volumeMounts", mount, "mountPath");
}

json_t *kt_env_value(const char *name, const char *value)
{
    return json_pack("{s:s, s:s}", "name", name, "value", value);
}

json_t *kt_env_field_ref(const char *name, const char *path)
{
    return json_pack("{s:s, s:{s:{s:s}}}", "name", name, "valueFrom", "fieldRef", "fieldPath",
                     path);
}

json_t *kt_env_convert(const json_t *envs)
{
    static const char *const sources[] = {"fieldRef", "resourceFieldRef", "configMapKeyRef",
                                          "secretKeyRef"};
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(envs, i, e)
    {
        json_t *name = json_object_get(e, "name");
        json_t *from = json_object_get(e, "valueFrom");
        json_t *v = json_object();
        json_object_set_new(v, "name",
                            json_string(json_is_string(name) ? json_string_value(name) : ""));
        if (json_is_object(from)) {
            json_t *src = json_object();
            for (size_t k = 0; k < KT_ARRAY_SIZE(sources); k++) {
                json_t *s = json_object_get(from, sources[k]);
                if (s) {
                    json_object_set_new(src, sources[k], kt_json_clone(s));
                }
            }
            json_object_set_new(v, "valueFrom", src);
        } else {
            json_t *val = json_object_get(e, "value");
            json_object_set_new(v, "value",
                                json_string(json_is_string(val) ? json_string_value(val) : ""));
        }
        json_array_append_new(out, v);
    }
    return out;
}

bool kt_json_strings_eq(const json_t *arr, const char *const *want, size_t n)
{
    if (!json_is_array(arr) || json_array_size(arr) != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (!s || strcmp(s, want[i]) != 0) {
            return false;
        }
    }
    return true;
}
