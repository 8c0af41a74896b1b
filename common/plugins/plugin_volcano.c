/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_volcano.c - the Volcano plugin
 * (docs/internals/upstream.md#coscheduling-and-volcano): the group-name pod annotation, the Volcano
 * PodGroup (queue, priorityClassName, networkTopology; created, or re-applied while suspended) and
 * its validation. Matches upstream `pkg/runtime/framework/plugins/volcano`. */
#include "common/plugins/plugins.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

#define VOLCANO_API "scheduling.volcano.sh/v1beta1"
#define GROUP_ANNOTATION "scheduling.k8s.io/group-name"
#define QUEUE_ANNOTATION "scheduling.volcano.sh/queue-name"
#define PC_API "scheduling.k8s.io/v1"

static const char *const volcano_watches[] = {VOLCANO_API "/PodGroup", NULL};

static int volcano_enforce(struct kt_build *b, struct kt_err *err)
{
    (void)err;
    if (!b->rt->pg.volcano) {
        return 0;
    }
    json_object_set_new(b->info.pod_annotations, GROUP_ANNOTATION, json_string(b->tj->name));
    return 0;
}

static json_t *pod_spec_of(const json_t *rjob)
{
    return kt_json_path(rjob, "template.spec.template.spec");
}

/* The priorityClassName of the last replicated job that sets one, or NULL. */
static const char *priority_class(const struct kt_info *info)
{
    const char *pc = NULL;
    size_t i;
    json_t *rj;
    json_array_foreach(json_object_get(info->spec, "replicatedJobs"), i, rj)
    {
        const char *s = json_string_value(json_object_get(pod_spec_of(rj), "priorityClassName"));
        pc = s ? s : pc;
    }
    return pc;
}

static json_t *network_topology(const json_t *nt)
{
    json_t *out = json_object();
    json_t *mode = json_object_get(nt, "mode");
    json_t *tier = json_object_get(nt, "highestTierAllowed");
    if (mode) {
        json_object_set(out, "mode", mode);
    }
    if (tier) {
        json_object_set(out, "highestTierAllowed", tier);
    }
    return out;
}

static int volcano_build(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    int64_t members;
    json_t *res;
    if (!b->rt->pg.volcano || kt_podgroup_skip(b, VOLCANO_API)) {
        return 0;
    }
    if (kt_podgroup_totals(&b->info, &members, &res, err) != 0) {
        return -1;
    }
    json_t *spec = json_pack("{s:I}", "minMember", (json_int_t)members);
    json_t *queue = json_object_get(b->info.annotations, QUEUE_ANNOTATION);
    if (json_is_string(queue)) {
        json_object_set(spec, "queue", queue);
    }
    const char *pc = priority_class(&b->info);
    if (pc) {
        json_object_set_new(spec, "priorityClassName", json_string(pc));
    }
    json_object_set_new(spec, "minResources", res);
    if (b->rt->pg.network_topology) {
        json_object_set_new(spec, "networkTopology", network_topology(b->rt->pg.network_topology));
    }
    json_array_append_new(objects,
                          json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", VOLCANO_API,
                                    "kind", "PodGroup", "metadata", "name", b->tj->name,
                                    "namespace", b->tj->namespace_, "spec", spec));
    return 0;
}

static bool system_critical(const char *pc)
{
    return strcmp(pc, "system-cluster-critical") == 0 || strcmp(pc, "system-node-critical") == 0;
}

static void volcano_validate(const struct kt_validation *v, struct kt_ferrs *errs,
                             struct kt_strv *warnings)
{
    size_t i;
    json_t *rj;
    (void)warnings;
    if (!v->rt->pg.volcano) {
        return;
    }
    const char *queue = json_string_value(json_object_get(v->info->annotations, QUEUE_ANNOTATION));
    if (queue && *queue == '\0') {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, "spec.annotations[" QUEUE_ANNOTATION "]", "",
                         "Volcano queue name must not be empty");
    }
    json_array_foreach(json_object_get(v->info->spec, "replicatedJobs"), i, rj)
    {
        const char *pc = json_string_value(json_object_get(pod_spec_of(rj), "priorityClassName"));
        if (!pc || *pc == '\0') {
            continue;
        }
        if (system_critical(pc)) {
            return;
        }
        if (!kt_view_get(v->view, PC_API, "PriorityClass", NULL, pc)) {
            kt_ferrs_add_str(errs, KT_FERR_INVALID, "spec.templateSpec.priorityClassName", pc,
                             "PriorityClass \"%s\" doesn't exist: PriorityClass.scheduling.k8s.io "
                             "\"%s\" not found",
                             pc, pc);
        }
    }
}

const struct kt_plugin kt_plugin_volcano = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "Volcano",
    .watches = volcano_watches,
    .validate = volcano_validate,
    .enforce_podgroup_policy = volcano_enforce,
    .build = volcano_build,
};
