/* SPDX-License-Identifier: Apache-2.0 */
/* api/runtime.h - decode and encode TrainingRuntime / ClusterTrainingRuntime
 * (docs/internals/upstream.md#trainingruntime-and-clustertrainingruntime).
 *
 * Decoding checks apiVersion/kind and the JSON types of the typed fields, applies the
 * runtime CRD's schema defaults (ours and those of the embedded JobSetSpec) into the object
 * and fills struct kt_runtime. It does not validate values: more than one mlPolicy source
 * decodes fine and is recorded in ml.sources for the validator. */
#ifndef KT_API_RUNTIME_H
#define KT_API_RUNTIME_H

#include <jansson.h>

#include "api/types.h"
#include "common/base/err.h"

/* Decode obj (kind TrainingRuntime or ClusterTrainingRuntime) into out. Steals obj, also on
 * failure (on success out->obj owns it). Defaults applied into obj, each only when its
 * parent object exists and the member is absent or null:
 *   spec.mlPolicy.mpi: numProcPerNode 1, mpiImplementation "OpenMPI",
 *                      sshAuthMountPath "/root/.ssh", runLauncherAsNode false
 *   spec.mlPolicy.flux.numProcPerNode 1
 *   spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds 60
 *   spec.podGroupPolicy.volcano.networkTopology: mode "hard", highestTierAllowed 1
 *   spec.template.spec (JobSet v0.12.0 CRD): replicatedJobs[].replicas 1,
 *     replicatedJobs[].groupName "default", failurePolicy.restartStrategy "Recreate",
 *     volumeClaimPolicies[].retentionPolicy.whenDeleted "Delete"
 * Job and Pod template defaults are not applied (our CRD keeps that subtree as is).
 * Fails with KT_EINVAL for a wrong apiVersion/kind or a member of the wrong JSON type, and
 * KT_ERANGE for an int32 field out of range; out is then zeroed. */
KT_MUST_CHECK int kt_runtime_decode(json_t *obj, struct kt_runtime *out, struct kt_err *err);

/* The object with the typed fields written back (rt must be decoded): a deep copy of rt->obj where
 * the scalar typed fields (names, mlPolicy.numNodes, the mpi/flux values when that source is set,
 * scheduleTimeoutSeconds) that differ are set, a false ml.present / pg.coscheduling /
 * pg.volcano removes that member, and a replaced template_ / network_topology is copied
 * in. kind and source are read-only views. Caller owns the result; free with
 * json_decref(). Does not retain rt. */
json_t *kt_runtime_encode(const struct kt_runtime *rt);

/* Free what rt owns and zero it. Accepts a zeroed or released struct. */
void kt_runtime_release(struct kt_runtime *rt);

#endif
