/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/dra.c - device counts and webhook checks of Dynamic Resource Allocation
 * (see dra.h; docs/api.md#dynamic-resource-allocation). */
#include "common/framework/dra.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

static bool contains_gpu(const char *s)
{
    for (; s && *s; s++) {
        if (tolower((unsigned char)s[0]) == 'g' && tolower((unsigned char)s[1]) == 'p' &&
            tolower((unsigned char)s[2]) == 'u') {
            return true;
        }
    }
    return false;
}

/* One DeviceRequest of resource.k8s.io/v1: its GPU-class device count. */
static int64_t request_devices(const json_t *req)
{
    const json_t *ex = json_object_get(req, "exactly");
    if (!json_is_object(ex) || !contains_gpu(kt_json_str(ex, "deviceClassName", NULL))) {
        return 0;
    }
    if (strcmp(kt_json_str(ex, "allocationMode", "ExactCount"), "ExactCount") != 0) {
        return 0;
    }
    int64_t n = kt_json_int(ex, "count", 1);
    return n > 0 ? n : 0;
}

/* The sum over devices.requests (only the one named only, when not NULL). */
static int64_t claim_devices(const json_t *devices, const char *only)
{
    int64_t sum = 0;
    size_t i;
    json_t *req;
    json_array_foreach(json_object_get(devices, "requests"), i, req)
    {
        if (only && strcmp(kt_json_str(req, "name", ""), only) != 0) {
            continue;
        }
        int64_t n = request_devices(req);
        sum = n > INT32_MAX - sum ? INT32_MAX : sum + n;
    }
    return sum;
}

/* The devices of pod claim pc (a PodResourceClaim), read through view in ns. */
static const json_t *get_obj(const struct kt_dra_getter *g, const char *kind, const char *ns,
                             const char *name)
{
    return g && g->get ? g->get(g->ctx, KT_DRA_API_VERSION, kind, ns, name) : NULL;
}

static int64_t pod_claim_devices(const json_t *pc, const char *only, const char *ns,
                                 const struct kt_dra_getter *g)
{
    const char *tmpl = kt_json_str(pc, "resourceClaimTemplateName", NULL);
    const char *claim = kt_json_str(pc, "resourceClaimName", NULL);
    if (tmpl) {
        const json_t *o = get_obj(g, "ResourceClaimTemplate", ns, tmpl);
        return claim_devices(kt_json_path(o, "spec.spec.devices"), only);
    }
    if (claim) {
        const json_t *o = get_obj(g, "ResourceClaim", ns, claim);
        return claim_devices(kt_json_path(o, "spec.devices"), only);
    }
    return 0;
}

int64_t kt_dra_devices(const struct kt_info *info, const struct kt_trainjob *tj,
                       const struct kt_dra_getter *g)
{
    const struct kt_podset *ps = NULL;
    for (size_t i = 0; i < info->n_podsets && !ps; i++) {
        const struct kt_podset *p = &info->podsets[i];
        bool trainer = p->ancestor && strcmp(p->ancestor, KT_ANCESTOR_TRAINER) == 0;
        ps = strcmp(p->name, KT_NODE) == 0 || trainer ? p : NULL;
    }
    const json_t *c = ps ? kt_podset_container(ps, KT_NODE) : NULL;
    const json_t *pod_claims = ps ? json_object_get(ps->pod_spec, "resourceClaims") : NULL;
    const char *ns = tj->namespace_ && *tj->namespace_ ? tj->namespace_ : "default";
    int64_t sum = 0;
    size_t i;
    json_t *use;
    json_array_foreach(kt_json_path(c, "resources.claims"), i, use)
    {
        const char *name = kt_json_str(use, "name", NULL);
        const json_t *pc = name ? kt_json_arr_find(pod_claims, "name", name, NULL) : NULL;
        const char *only = kt_json_str(use, "request", NULL);
        int64_t n = pc ? pod_claim_devices(pc, only && *only ? only : NULL, ns, g) : 0;
        sum = n > INT32_MAX - sum ? INT32_MAX : sum + n;
    }
    return sum;
}

/* ---- validation ---- */

static json_t *any_container(const struct kt_podset *ps, const char *name)
{
    json_t *c = kt_podset_container(ps, name);
    return c ? c : kt_podset_init_container(ps, name);
}

/* Each `containers` entry of each resourceClaimsPerNode claim exists in every node pod. */
static void check_targets(const struct kt_info *info, const struct kt_trainjob *tj,
                          struct kt_ferrs *errs)
{
    size_t i, j;
    json_t *claim, *cn;
    json_array_foreach(tj->trainer.resource_claims_per_node, i, claim)
    {
        json_array_foreach(json_object_get(claim, "containers"), j, cn)
        {
            const char *name = json_string_value(cn);
            for (size_t k = 0; k < info->n_podsets && name; k++) {
                const struct kt_podset *ps = &info->podsets[k];
                if (!kt_podset_gets_node_resources(info->runtime, ps) || any_container(ps, name)) {
                    continue;
                }
                char *path =
                    kt_xasprintf("spec.trainer.resourceClaimsPerNode[%zu].containers[%zu]", i, j);
                kt_ferrs_add_str(errs, KT_FERR_INVALID, path, name,
                                 "no container or init container of this name in the pods of "
                                 "replicated job \"%s\"",
                                 ps->name);
                free(path);
                break;
            }
        }
    }
}

/* Every resources.claims entry of the containers in list names one of pod_claims. */
static void check_uses(const struct kt_podset *ps, const char *list, const char *field,
                       struct kt_ferrs *errs)
{
    const json_t *pod_claims = json_object_get(ps->pod_spec, "resourceClaims");
    size_t i, j;
    json_t *c, *use;
    json_array_foreach(json_object_get(ps->pod_spec, list), i, c)
    {
        json_array_foreach(kt_json_path(c, "resources.claims"), j, use)
        {
            const char *name = kt_json_str(use, "name", "");
            if (kt_json_arr_find(pod_claims, "name", name, NULL)) {
                continue;
            }
            kt_ferrs_add_str(errs, KT_FERR_INVALID, field, name,
                             "%s \"%s\" of replicated job \"%s\" uses a claim that is not in "
                             "its pod's resourceClaims",
                             strcmp(list, "containers") == 0 ? "container" : "init container",
                             kt_json_str(c, "name", ""), ps->name);
        }
    }
}

void kt_dra_validate(const struct kt_info *info, const struct kt_trainjob *tj,
                     struct kt_ferrs *errs)
{
    const char *field =
        json_array_size(tj->runtime_patches) > 0 ? "spec.runtimePatches" : "spec.runtimeRef";
    if (tj->trainer.present && json_array_size(tj->trainer.resource_claims_per_node) > 0) {
        bool any = false;
        for (size_t i = 0; i < info->n_podsets; i++) {
            any = any || kt_podset_gets_node_resources(info->runtime, &info->podsets[i]);
        }
        if (!any) {
            kt_ferrs_add(errs, KT_FERR_INVALID, "spec.trainer.resourceClaimsPerNode",
                         tj->trainer.resource_claims_per_node, KT_GO_ANY,
                         "the runtime has no trainer node job to put the claims in (a replicated "
                         "job with the trainer ancestor label, in a runtime with an mlPolicy)");
        }
        check_targets(info, tj, errs);
    }
    for (size_t i = 0; i < info->n_podsets; i++) {
        check_uses(&info->podsets[i], "initContainers", field, errs);
        check_uses(&info->podsets[i], "containers", field, errs);
    }
}

/* ---- the gate off ---- */

#define GATE_OFF "requires the feature gate DynamicResourceAllocation, which is disabled"

/* member key of a (an object), the same member of b (may be NULL) */
static void forbid(const json_t *a, const json_t *b, const char *key, const char *path,
                   struct kt_ferrs *errs)
{
    const json_t *v = json_object_get(a, key);
    if (!v || json_is_null(v) || (b && kt_json_equal(v, json_object_get(b, key)))) {
        return;
    }
    char *p = kt_xasprintf("%s.%s", path, key);
    kt_ferrs_add(errs, KT_FERR_FORBIDDEN, p, NULL, KT_GO_ANY, GATE_OFF);
    free(p);
}

static void forbid_containers(const json_t *pod, const json_t *old_pod, const char *list,
                              const char *base, struct kt_ferrs *errs)
{
    const json_t *old_list = json_object_get(old_pod, list);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(pod, list), i, c)
    {
        char *p = kt_xasprintf("%s.%s[%zu]", base, list, i);
        forbid(c, json_array_get(old_list, i), "resources", p, errs);
        free(p);
    }
}

void kt_dra_validate_gate_off(const json_t *tj, const json_t *old, struct kt_ferrs *errs)
{
    forbid(kt_json_path(tj, "spec.trainer"), kt_json_path(old, "spec.trainer"),
           "resourceClaimsPerNode", "spec.trainer", errs);
    const json_t *old_patches = kt_json_path(old, "spec.runtimePatches");
    size_t i, j;
    json_t *patch, *rjob;
    json_array_foreach(kt_json_path(tj, "spec.runtimePatches"), i, patch)
    {
        const json_t *old_rjobs =
            kt_json_path(json_array_get(old_patches, i), "trainingRuntimeSpec.template.spec");
        old_rjobs = json_object_get(old_rjobs, "replicatedJobs");
        json_array_foreach(kt_json_path(patch, "trainingRuntimeSpec.template.spec.replicatedJobs"),
                           j, rjob)
        {
            const json_t *pod = kt_json_path(rjob, "template.spec.template.spec");
            const json_t *old_pod =
                kt_json_path(json_array_get(old_rjobs, j), "template.spec.template.spec");
            char *base = kt_xasprintf("spec.runtimePatches[%zu].trainingRuntimeSpec.template.spec."
                                      "replicatedJobs[%zu].template.spec.template.spec",
                                      i, j);
            forbid(pod, old_pod, "resourceClaims", base, errs);
            forbid_containers(pod, old_pod, "initContainers", base, errs);
            forbid_containers(pod, old_pod, "containers", base, errs);
            free(base);
        }
    }
}
