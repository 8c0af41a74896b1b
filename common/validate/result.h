/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/result.h - the problem list every validation stage appends to, and the
 * field-path / JSON Pointer / value helpers the stages share. The bottom of common/validate/:
 * it includes nothing of the stages or the pipeline. */
#ifndef KT_VALIDATE_RESULT_H
#define KT_VALIDATE_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/base/fielderr.h"
#include "common/base/str.h"

/* Which admission stage produced a problem. */
enum kt_vstage {
    KT_VSTAGE_DECODE, /* strict decoding (unknown fields) */
    KT_VSTAGE_SCHEMA, /* ObjectMeta, OpenAPI schema, list types */
    KT_VSTAGE_CEL,    /* x-kubernetes-validations twins */
    KT_VSTAGE_WEBHOOK /* the validating webhook */
};

struct kt_vproblem {
    enum kt_vstage stage;
    char *field; /* owned: "spec.trainer.numNodes", "<nil>", "" for a bare message */
    char *type;  /* owned: "Invalid value", "Unsupported value", ..., "" for a bare message */
    char *text;  /* owned: the aggregate element, "<field>: <type>[: value][: detail]" */
    char *ptr;   /* owned: JSON Pointer of the offending node (may not exist in the input) */
    bool go;     /* text is a Go decoder's (encoding/json, a time or a quantity): it names no
                    field of ours, or one without list indices and map keys */
};

/* A growable list. Touch fields read-only. */
struct kt_vresult {
    struct kt_vproblem *items;
    size_t len;
    size_t cap;
    struct kt_strv warnings; /* admission warnings, in order */
};

void kt_vresult_init(struct kt_vresult *r);
/* Free everything. Accepts a zeroed result. */
void kt_vresult_release(struct kt_vresult *r);
/* Append a problem. Does not retain its arguments. */
void kt_vresult_add(struct kt_vresult *r, enum kt_vstage stage, const char *field, const char *type,
                    const char *text, const char *ptr);
/* Append a Go decoder's error text found at field / ptr: type "Invalid value" (what the API
 * server's schema says of the same value when no webhook decodes first), go set. Does not
 * retain its arguments. */
void kt_vresult_add_go(struct kt_vresult *r, enum kt_vstage stage, const char *field,
                       const char *text, const char *ptr);
/* Append the field errors of a kt_ferrs (webhook stage); the pointer is derived from the
 * path. Does not retain l. */
void kt_vresult_add_ferrs(struct kt_vresult *r, const struct kt_ferrs *l);
/* The aggregate as the API server / webhook writes it: the element alone for one, else
 * "[e1, e2, ...]" (de-duplicated); "" for none. Caller owns it; free with free(). */
char *kt_vresult_string(const struct kt_vresult *r);

/* Field paths ("a.b[0]") and JSON Pointers ("/a/b/0"). Caller owns the result; free(). */
char *kt_vpath_child(const char *path, const char *key);
char *kt_vpath_index(const char *path, size_t i);
char *kt_vptr_child(const char *ptr, const char *key);
char *kt_vptr_index(const char *ptr, size_t i);
/* "spec.env[1].name" / "metadata.labels[a/b]" as a JSON Pointer, "/spec/env/1/name" (best
 * effort). Caller owns the result; free(). */
char *kt_vpath_to_ptr(const char *path);

/* The schema type name of a JSON value as kube-openapi reports it. Static string. */
const char *kt_vjson_type(const json_t *x);
/* An integer, or a real without fraction (the API server decodes those as int64). */
bool kt_vis_integral(const json_t *x);
/* Go's rendering of a scalar bad value (%v, strings %q). Caller owns it; free(). */
char *kt_vvalue(const json_t *x);
/* What kt_vadd appends: strings borrowed for the call. */
struct kt_vadd_req {
    const char *field;  /* the field path */
    const char *type;   /* Go's field.ErrorType text ("Invalid value", ...) */
    const char *value;  /* the bad value as Go prints it, or NULL */
    const char *detail; /* or NULL */
    const char *ptr;    /* the JSON pointer of the field */
};

/* Append "<field>: <type>[: value][: detail]". Does not retain p. */
void kt_vadd(struct kt_vresult *r, enum kt_vstage st, const struct kt_vadd_req *p);

#endif
