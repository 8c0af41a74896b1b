/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_coscheduling.c - the CoScheduling plugin
 * (docs/internals/upstream.md#coscheduling-and-volcano): the pod-group pod label, and the
 * scheduler-plugins PodGroup (created, or re-applied while suspended). Also holds the PodGroup
 * totals the Volcano plugin shares. Matches upstream `pkg/runtime/framework/plugins/coscheduling`.
 */
#include "common/plugins/plugins.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/quantity.h"

#define COSCHED_API "scheduling.x-k8s.io/v1alpha1"
#define COSCHED_LABEL "scheduling.x-k8s.io/pod-group"

static const char *const cosched_watches[] = {COSCHED_API "/PodGroup", NULL};

/* sums[name] += count x q, keeping the exact value in *slot. */
static int add_requests(json_t *sums, const json_t *reqs, int64_t count, struct kt_err *err)
{
    const char *k;
    json_t *v;
    char buf[KT_QUANTITY_STR_MAX];
    json_object_foreach((json_t *)(uintptr_t)reqs, k, v)
    {
        struct kt_quantity q, total = {0};
        json_t *cur = json_object_get(sums, k);
        if (kt_quantity_from_json(v, &q, err) != 0 || kt_quantity_mul(&q, count, err) != 0 ||
            (cur && kt_quantity_from_json(cur, &total, err) != 0) ||
            kt_quantity_add(&total, &q, err) != 0) {
            return kt_err_prefix(err, "%s", k);
        }
        json_object_set_new(sums, k, json_string(kt_quantity_format(&total, buf, sizeof(buf))));
    }
    return 0;
}

/* The same object with keys sorted (Go marshals a ResourceList map in key order). */
static json_t *sorted(const json_t *obj)
{
    size_t n;
    const char **keys = kt_json_sorted_keys(obj, &n);
    json_t *out = json_object();
    for (size_t i = 0; i < n; i++) {
        json_object_set(out, keys[i], json_object_get(obj, keys[i]));
    }
    free(keys);
    return out;
}

int kt_podgroup_totals(const struct kt_info *info, int64_t *min_member, json_t **min_resources,
                       struct kt_err *err)
{
    json_t *sums = json_object();
    *min_member = 0;
    *min_resources = NULL;
    for (size_t i = 0; i < info->n_podsets; i++) {
        const struct kt_podset *ps = &info->podsets[i];
        json_t *reqs = kt_podset_single_pod_requests(ps, err);
        int rc = reqs ? add_requests(sums, reqs, ps->count, err) : -1;
        json_decref(reqs);
        if (rc != 0) {
            json_decref(sums);
            return -1;
        }
        *min_member += ps->count;
    }
    *min_resources = sorted(sums);
    json_decref(sums);
    return 0;
}

bool kt_podgroup_skip(const struct kt_build *b, const char *api_version)
{
    const json_t *pg =
        kt_view_get(b->view, api_version, "PodGroup", b->tj->namespace_, b->tj->name);
    return pg && !b->tj->suspend;
}

static int cosched_enforce(struct kt_build *b, struct kt_err *err)
{
    (void)err;
    if (!b->rt->pg.coscheduling) {
        return 0;
    }
    json_object_set_new(b->info.pod_labels, COSCHED_LABEL, json_string(b->tj->name));
    return 0;
}

static int cosched_build(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    int64_t members;
    json_t *res;
    if (!b->rt->pg.coscheduling || kt_podgroup_skip(b, COSCHED_API)) {
        return 0;
    }
    if (kt_podgroup_totals(&b->info, &members, &res, err) != 0) {
        return -1;
    }
    json_t *spec =
        json_pack("{s:I, s:o, s:I}", "minMember", (json_int_t)members, "minResources", res,
                  "scheduleTimeoutSeconds", (json_int_t)b->rt->pg.schedule_timeout_seconds);
    json_array_append_new(objects,
                          json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", COSCHED_API,
                                    "kind", "PodGroup", "metadata", "name", b->tj->name,
                                    "namespace", b->tj->namespace_, "spec", spec));
    return 0;
}

const struct kt_plugin kt_plugin_coscheduling = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "CoScheduling",
    .watches = cosched_watches,
    .enforce_podgroup_policy = cosched_enforce,
    .build = cosched_build,
};
