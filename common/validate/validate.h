/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate.h - the API server's and the webhooks' verdict on our kinds, offline
 * (docs/ktctl.md#ktctl-validate; docs/internals/upstream.md#api-types, #admission-webhooks). Shared
 * by ktctl and kt-webhook.
 *
 * One document goes through the API server's order:
 *
 *  1. strict decoding: fields our CRD schema does not know are what the API server prunes;
 *     kubectl's default server-side field validation (Strict) turns them into one
 *     "strict decoding error: unknown field \"a\", unknown field \"b\"" failure and nothing
 *     else is checked (kt_validate_prune);
 *  2. structural defaults from the CRD (`default:` entries, nulls of non-nullable fields
 *     dropped), status dropped for TrainJob (the status subresource resets it on create);
 *  3. mutating webhook: runtimePatches[].time stamping
 * (docs/internals/upstream.md#trainjob-defaulter, kt_validate_default_trainjob);
 *  4. ObjectMeta checks (name required, RFC 1123 subdomain), the generic OpenAPI checks of
 *     the compiled-in CRD schema (types, required, enum, minimum/maximum, lengths, items,
 *     properties, pattern, date-time, list-type map/set uniqueness) and C twins of every
 *     x-kubernetes-validations rule with the API server's exact messages (transition rules
 *     only with an old object). A "blocking" schema error (Required, Unsupported, Too long,
 *     Too many, type) skips the rules and adds the API server's
 *     "<nil>: Invalid value: null: some validation rules were not checked ..." element;
 *  5. only when 4 found nothing: the validating webhook
 * (docs/internals/upstream.md#trainjob-validator, #runtime-validators).
 *
 * Results are problems, each one element of the aggregate the API server or webhook would
 * return, plus warnings. Pure: no I/O, no clock (time comes in), no globals. */
#ifndef KT_VALIDATE_H
#define KT_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/base/err.h"
#include "common/base/str.h"
#include "common/framework/framework.h"
#include "common/validate/result.h"
#include "common/validate/validate_schema.h"
#include "common/validate/validate_webhook.h"

/* One document to validate and what it is checked against. Every pointer is borrowed for the
 * call and nothing is modified. */
struct kt_validate_req {
    const struct kt_validator *v;
    const struct kt_framework *fw; /* NULL for a runtime */
    const json_t *obj;
    const json_t *old;              /* NULL = CREATE, else the object an UPDATE replaces */
    time_t now;                     /* the defaulter's clock */
    const struct kt_vruntimes *rts; /* what a TrainJob's runtimeRef may name; NULL: none */
};

/* The whole pipeline for one document of kind TrainJob, TrainingRuntime or
 * ClusterTrainingRuntime: steps 1-5 on a copy of req->obj. req->old NULL = CREATE; otherwise
 * an UPDATE from old, read as the API server stored it (unknown fields pruned without error,
 * defaults applied): transition rules, the defaulter's time keeping and the webhooks' update
 * rules then run exactly as for kt-webhook's UPDATE review. Returns 0 (problems, if any, in
 * r), -1 + err when the webhook step failed internally. Does not retain req. */
KT_MUST_CHECK int kt_validate_object(const struct kt_validate_req *req, struct kt_vresult *r,
                                     struct kt_err *err);

/* kt_validate_object that also hands back the object as the API server would store it
 * (pruned, defaulted, runtimePatches stamped) in *admitted when no problem was found; else
 * *admitted is left alone. Caller owns *admitted (json_decref). admitted may be NULL. */
KT_MUST_CHECK int kt_validate_object_admitted(const struct kt_validate_req *req,
                                              struct kt_vresult *r, json_t **admitted,
                                              struct kt_err *err);

/* Shorthands of kt_validate_object per kind (the entry points kt-webhook wraps). */
KT_MUST_CHECK int kt_validate_trainjob(const struct kt_validate_req *req, struct kt_vresult *r,
                                       struct kt_err *err);
void kt_validate_runtime(const struct kt_validator *v, const json_t *obj, const json_t *old,
                         struct kt_vresult *r);

/* True for trainer.kubeflow.org/v1alpha1 kinds the validator handles. */
bool kt_validate_is_ours(const json_t *obj);

#endif
