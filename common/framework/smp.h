/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/smp.h - Kubernetes strategic merge patch for the JobSetSpec and PodSpec keys the
 * framework patches (docs/internals/upstream.md#runtime-info-and-pod-sets), on json_t.
 *
 * Merge keys as upstream's Go struct tags: replicatedJobs by name; containers and
 * initContainers by name; env by name; volumeMounts by mountPath; ports by containerPort;
 * volumes, imagePullSecrets, schedulingGates, resources.claims by name. Maps (labels,
 * annotations, nodeSelector, limits, requests) merge per key; structs (affinity,
 * securityContext) merge recursively; every other list (tolerations, command, args) is
 * replaced. No directives ($patch, $retainKeys): the patches we apply are re-serialised from
 * typed structs and never carry them, so volumes merge by name without retainKeys pruning.
 * Merged lists are ordered as strategicpatch orders them: the items the patch names come in
 * patch order; an original item the patch does not name stays ahead of the next patch item
 * only when that item is also original and came later in the original list; patch items new
 * to the list therefore go before the remaining original ones ([a, b] + patch [c] gives
 * [c, a, b]; + patch [b, c] gives [a, b, c]; + patch [b, a] gives [b, a]). No I/O. */
#ifndef KT_SMP_H
#define KT_SMP_H

#include <jansson.h>
#include <stdbool.h>

/* The patch as upstream re-serialises it from the typed JobSetSpecPatch: only the fields of
 * the patch types (replicatedJobs[].name/template, metadata, the eleven PodSpecPatch fields,
 * ContainerPatch name/env/volumeMounts/securityContext), nulls and empty strings, lists and
 * maps dropped (omitempty). With dra (the feature gate DynamicResourceAllocation) also the
 * provisional KEP-2782 fields PodSpecPatch resourceClaims and ContainerPatch resources
 * (docs/api.md#dynamic-resource-allocation). Caller owns the result; free with json_decref().
 * Does not retain patch. NULL patch gives an empty object. */
json_t *kt_smp_typed_jobset_patch(const json_t *patch, bool dra);

/* Merge patch (a JobSetSpec-shaped object) into spec in place. Does not retain patch. */
void kt_smp_jobset_spec(json_t *spec, const json_t *patch);

/* Merge a ResourceRequirements patch into container["resources"] (created when absent).
 * Does not retain patch. */
void kt_smp_container_resources(json_t *container, const json_t *patch);

/* Merge patch into dst with no schema: objects recursively, everything else replaced.
 * Does not retain patch. */
void kt_smp_generic(json_t *dst, const json_t *patch);

#endif
