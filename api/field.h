/* SPDX-License-Identifier: Apache-2.0 */
/* api/field.h - typed access to the members of our kinds, shared by the API codecs.
 *
 * Getters check a member's JSON type and fail with the field path
 * ("spec.trainer.numNodes: expected integer, got string"); a table-driven defaulter applies
 * CRD schema defaults in place; write-back helpers put typed values into an encoded copy.
 * Internal to api/ (kt__ prefix): callers use api/trainjob.h and api/runtime.h. */
#ifndef KT_API_FIELD_H
#define KT_API_FIELD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/types.h"
#include "common/base/err.h"

/* The JSON type name used in messages: object array string integer number boolean null. */
const char *kt__field_type_name(const json_t *v);

/* printf a field path into dst (cap bytes); a longer path is truncated, which only
 * shortens a message. */
void kt__field_path_fmt(char *dst, size_t cap, const char *fmt, ...) KT_PRINTF(3, 4);

/* Check that obj is an object with apiVersion trainer.kubeflow.org/v1alpha1 and a kind
 * among the n kinds (KT_EINVAL naming the member otherwise). Does not retain kinds. */
KT_MUST_CHECK int kt__field_check_kind(json_t *obj, const char *const *kinds, size_t n,
                                       struct kt_err *err);

/* The member named by the last segment of the dotted path, from parent (an object or NULL).
 * A null member counts as absent and is removed, as the API server prunes nulls of
 * non-nullable fields. Borrowed from parent; NULL when absent. */
json_t *kt__field_get(json_t *parent, const char *path);

/* Typed getters. path is the member's full dotted path, used in messages; its last
 * segment is the key looked up in parent (NULL parent = absent). Absent leaves *out
 * unchanged and succeeds. A wrong type fails with KT_EINVAL, an int32 out of range with
 * KT_ERANGE. Integral reals (2.0) are accepted and replaced by integers in parent.
 * Results are borrowed from parent; valid while parent lives unchanged. */
KT_MUST_CHECK int kt__field_obj(json_t *parent, const char *path, json_t **out, struct kt_err *err);
KT_MUST_CHECK int kt__field_arr(json_t *parent, const char *path, json_t **out, struct kt_err *err);
KT_MUST_CHECK int kt__field_str(json_t *parent, const char *path, const char **out,
                                struct kt_err *err);
KT_MUST_CHECK int kt__field_bool(json_t *parent, const char *path, bool *out, struct kt_err *err);
KT_MUST_CHECK int kt__field_i32(json_t *parent, const char *path, struct kt_opt_i64 *out,
                                struct kt_err *err);
KT_MUST_CHECK int kt__field_i64(json_t *parent, const char *path, struct kt_opt_i64 *out,
                                struct kt_err *err);
/* An array member whose items must all be of JSON type `type` (JSON_STRING, JSON_OBJECT).
 * Item errors name the index: "spec.trainer.command[2]: expected string, got integer". */
KT_MUST_CHECK int kt__field_arr_of(json_t *parent, const char *path, json_type type, json_t **out,
                                   struct kt_err *err);

enum kt__default_type { KT__DEF_STR, KT__DEF_BOOL, KT__DEF_I32, KT__DEF_I64 };

/* One CRD schema default: path is dotted from the root, a segment ending in "[]" is an
 * array whose every item is visited ("spec.template.spec.replicatedJobs[].replicas").
 * As with structural-schema defaulting, the value is set only when every parent exists
 * and the member is absent (or null). */
struct kt__default {
    const char *path;
    enum kt__default_type type;
    const char *s; /* KT__DEF_STR */
    int64_t i;     /* KT__DEF_BOOL (0/1), KT__DEF_I32, KT__DEF_I64 */
};

/* The default tables of api/trainjob.c and api/runtime.c, for the test that compares them
 * with the CRD files. Borrowed from static storage; *n gets the count. */
const struct kt__default *kt__trainjob_defaults(size_t *n);
const struct kt__default *kt__runtime_defaults(size_t *n);

/* Apply n defaults to root in place. A parent or defaulted member of the wrong type fails
 * with its concrete path ("spec.template.spec.replicatedJobs[1]: expected object, got
 * string"). On failure root may be partly defaulted. Does not retain rules. */
KT_MUST_CHECK int kt__field_defaults(json_t *root, const struct kt__default *rules, size_t n,
                                     struct kt_err *err);

/* The object at dotted path parent under root ("" = root itself). Borrowed from root; NULL
 * when absent. */
json_t *kt__field_get_parent(json_t *root, const char *parent);
/* The same, created as needed (as empty objects, replacing nulls or values of other types).
 * Borrowed from root; never NULL. */
json_t *kt__field_make_parent(json_t *root, const char *parent);

/* Write-back of typed values into root (an encoded copy) under the object at dotted path
 * parent. A member equal to the value is left alone, so unchanged fields keep their
 * original JSON. Nothing is created for a value equal to absent_eq (may be NULL) when the
 * member is absent. val NULL / !has removes the member. */
void kt__field_put_str(json_t *root, const char *parent, const char *key, const char *val,
                       const char *absent_eq);
void kt__field_put_bool(json_t *root, const char *parent, const char *key, bool val,
                        bool absent_eq);
void kt__field_put_int(json_t *root, const char *parent, const char *key, struct kt_opt_i64 val);
/* Put an embedded value. orig is the member of the decoded object (NULL when it had
 * none): when val == orig the copy already holds it; NULL removes the member; any other
 * value is deep-copied in. Does not retain val. */
void kt__field_put_json(json_t *root, const char *parent, const char *key, const json_t *val,
                        const json_t *orig);

#endif
