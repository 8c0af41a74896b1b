/* SPDX-License-Identifier: Apache-2.0 */
/* api/trainjob.h - decode and encode TrainJob (trainer.kubeflow.org/v1alpha1,
 * docs/internals/upstream.md#trainjob-fields).
 *
 * Decoding checks apiVersion/kind and the JSON types of the typed fields, applies the CRD
 * schema defaults into the object (as the API server stores it) and fills struct
 * kt_trainjob. It does not validate values (required fields, CEL rules, limits): that is
 * the validator's job, so a TrainJob without spec.runtimeRef.name decodes with name "";
 * absent metadata.name/namespace/uid read as "", an absent spec.managedBy or
 * spec.runtimeRef.apiGroup/kind as its default. */
#ifndef KT_API_TRAINJOB_H
#define KT_API_TRAINJOB_H

#include <jansson.h>

#include "api/types.h"
#include "common/base/err.h"

/* Decode obj into out. Steals obj, also on failure (on success out->obj owns it).
 * Defaults applied into obj, each only when its parent object exists and the member is
 * absent or null (our CRD's `default:` entries): spec.runtimeRef.apiGroup
 * "trainer.kubeflow.org", spec.runtimeRef.kind "ClusterTrainingRuntime", spec.suspend false,
 * spec.managedBy "trainer.kubeflow.org/trainjob-controller"; and the core/v1 ones inside
 * spec.trainer.env[], spec.initializer.{dataset,model}.env[] and the runtime patches'
 * (init)containers[].env[] (valueFrom.configMapKeyRef.name "", .secretKeyRef.name "",
 * .fileKeyRef.optional false), spec.initializer.{dataset,model}.secretRef.name "" and the
 * patches' imagePullSecrets[].name "". Null members of typed fields
 * are removed (the API server prunes them). Integral reals in integer fields become
 * integers. Absent spec/runtimeRef leave the struct with the default strings without
 * creating them in obj. Unknown fields are kept untouched.
 * Fails with KT_EINVAL for a wrong apiVersion/kind or a member of the wrong JSON type
 * ("spec.trainer.numNodes: expected integer, got string") and KT_ERANGE for an int32 field
 * out of range; out is then zeroed. */
KT_MUST_CHECK int kt_trainjob_decode(json_t *obj, struct kt_trainjob *out, struct kt_err *err);

/* The object with the typed fields written back (tj must be decoded): a deep copy of tj->obj where
 * every typed field that differs from the copy is set (NULL/absent values remove the member; a
 * false `present` removes spec.trainer / spec.initializer.dataset / .model). Unchanged members keep
 * their JSON as is. Caller owns the result; free with json_decref(). Does not retain tj. */
json_t *kt_trainjob_encode(const struct kt_trainjob *tj);

/* The NotFound text for tj's runtime as upstream's informer cache words it, naming the Kind
 * (controller-runtime's cache reader puts the Kind where the API server puts the resource):
 * `ClusterTrainingRuntime.trainer.kubeflow.org "x" not found`, or `TrainingRuntime.…` when
 * spec.runtimeRef.kind is "TrainingRuntime". Caller owns the result; free with free(). */
char *kt_trainjob_runtime_not_found(const struct kt_trainjob *tj);

/* Free tj->obj and zero tj. Accepts a zeroed or released struct. */
void kt_trainjob_release(struct kt_trainjob *tj);

#endif
