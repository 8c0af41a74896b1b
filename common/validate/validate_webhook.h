/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate_webhook.h - steps 3 and 5 of the pipeline (validate.h): the
 * mutating webhook's runtimePatches stamping and the validating webhooks
 * (docs/internals/upstream.md#trainjob-defaulter to #runtime-validators). */
#ifndef KT_VALIDATE_WEBHOOK_H
#define KT_VALIDATE_WEBHOOK_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "api/runtime.h"
#include "common/base/err.h"
#include "common/framework/framework.h"
#include "common/validate/result.h"

/* Step 3 (docs/internals/upstream.md#trainjob-defaulter): stamp every runtimePatches[] entry of tj
 * with time, as upstream's defaulter: on create (old NULL) entries without a time (absent or null)
 * get now; on update an entry equal (ignoring time, after the Go round trip) to the old entry of
 * the same manager (the last such) keeps the old time, a changed one gets now, a new one gets now
 * unless it has a time. now is seconds since the epoch. Returns how many entries' times changed as
 * upstream's decoded object sees it (nil-ness or instant; a stamped now always counts): 0 means
 * upstream's defaulter leaves the object as decoded and answers without a patch. */
int kt_validate_default_trainjob(json_t *tj, const json_t *old, time_t now);

/* The mutating webhook's JSON Patch for the request's raw TrainJob tj and, on update, the old
 * object old (both borrowed; old NULL on create), as upstream's controller-runtime defaulter
 * answers: no operation when the defaulter changes nothing upstream's decoded object shows;
 * else the patch between tj and json.Marshal of the defaulted Go TrainJob (the round trip's
 * re-encoding included: quantities canonical, Times in UTC, zero values of non-omitempty
 * fields added), less the "remove" operations that the round trip of tj alone makes as well
 * (dropSchemeRemovals: unknown keys, nulls). Operation order as kt_jsonpatch_create's.
 * Caller owns the array; empty: answer without a patch. */
json_t *kt_validate_default_patch(const json_t *tj, const json_t *old, time_t now);

/* Where the webhook finds runtimes: an array of TrainingRuntime / ClusterTrainingRuntime
 * objects (as read; defaulted here), borrowed. */
struct kt_vruntimes {
    const json_t *runtimes;
    bool allow_missing; /* missing runtime: warning, runtime checks skipped */
    /* Cluster objects the plugins may read (the JobSet of a TrainJob whose runtimePatches
     * change); NULL = none. Borrowed. (Added for kt-webhook.) */
    const struct kt_view *view;
    /* Optional (NULL: decode on demand): the runtimes decoded ahead of time (kt-webhook decodes
     * each snapshot once). decoded[i], when its obj is not NULL, is runtimes[i] as
     * kt_validate_decode_runtime() decodes it and is used instead of decoding a copy; a zeroed
     * entry decodes on demand. Only read, never retained: threads may share it (jansson
     * reference counts are atomic). */
    const struct kt_runtime *decoded;
};

/* Step 5 for a TrainJob (docs/internals/upstream.md#trainjob-validator): tj and old are pruned,
 * defaulted objects (old NULL on create); a TrainJob without namespace is read in "default".
 * Runtime lookup ("unsupported runtime: <key>", "must be created"), deprecation warning, then
 * kt_framework_validate. -1 + err only when a runtime cannot be decoded. */
KT_MUST_CHECK int kt_validate_trainjob_webhook(const struct kt_framework *fw, const json_t *tj,
                                               const json_t *old, const struct kt_vruntimes *rts,
                                               struct kt_vresult *r, struct kt_err *err);

/* Decode runtime o (a TrainingRuntime / ClusterTrainingRuntime, not modified) the way the
 * TrainJob validator does: a namespaced runtime without namespace is in "default". On success
 * the caller releases rt with kt_runtime_release(); -1 + err (rt zeroed) otherwise. */
KT_MUST_CHECK int kt_validate_decode_runtime(const json_t *o, struct kt_runtime *rt,
                                             struct kt_err *err);

/* Step 5 for a TrainingRuntime / ClusterTrainingRuntime
 * (docs/internals/upstream.md#runtime-validators): the replicated-job ancestor checks (create;
 * update only for the cluster kind) and the deprecation warning (ClusterTrainingRuntime create). */
void kt_validate_runtime_webhook(const json_t *rt, const json_t *old, struct kt_vresult *r);

#endif
