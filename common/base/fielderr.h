/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/fielderr.h - field-error lists rendered like Kubernetes field.ErrorList
 * (docs/internals/upstream.md#error-text).
 *
 * Validators append errors (docs/internals/style.md#a-validation-failure-is-data); callers render
 * one error as "<path>: <type>[: <value>][: <detail>]" and the list as a de-duplicated aggregate
 * ("[e1, e2]", no brackets for one). Values print the Go way: strings %q-quoted, integers and
 * bools plain, anything else as json.Marshal of the Go value it decodes into (the Go types of
 * common/base/gotypes.h: field order, omitempty, zero values, sorted map keys; <>& escaped).
 * No I/O. */
#ifndef KT_FIELDERR_H
#define KT_FIELDERR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/base/err.h"
#include "common/base/gotypes.h"

enum kt_ferr_type {
    KT_FERR_INVALID,   /* "Invalid value" (prints the value) */
    KT_FERR_FORBIDDEN, /* "Forbidden" (no value) */
    KT_FERR_REQUIRED,  /* "Required value" (no value) */
    KT_FERR_INTERNAL   /* "Internal error" (no value) */
};

/* The Go type a bad value decodes into upstream (its json.Marshal is what the error prints). */
enum kt_gotype {
    KT_GO_ANY,           /* unknown: JSON as given (our canonical order), <>& escaped */
    KT_GO_RUNTIME_REF,   /* trainer RuntimeRef */
    KT_GO_ENV_LIST,      /* []corev1.EnvVar */
    KT_GO_PATCH_LIST,    /* []trainer RuntimePatch (down to the pod spec patch's volumes...) */
    KT_GO_ENV_TARGET,    /* trainer EnvInjectionTarget (torch envInjection target) */
    KT_GO_RESOURCES,     /* corev1.ResourceRequirements */
    KT_GO_STRING_SLICE,  /* []string */
    KT_GO_CONTAINER_LIST /* []corev1.Container */
};

struct kt_ferr {
    enum kt_ferr_type type;
    char *field;  /* owned: "spec.trainer.env" */
    char *value;  /* owned rendered value, NULL when omitted */
    char *detail; /* owned, may be "" */
};

/* A growable list. Touch items/len read-only; grow only through the API. */
struct kt_ferrs {
    struct kt_ferr *items;
    size_t len;
    size_t cap;
};

void kt_ferrs_init(struct kt_ferrs *l);
/* Free every error. Accepts a zeroed list. */
void kt_ferrs_release(struct kt_ferrs *l);

/* Append an error whose value is the Go rendering of v (as type t); v NULL prints "null".
 * Invalid keeps the value; the other types drop it as upstream does. Does not retain v. */
void kt_ferrs_add(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, const json_t *v,
                  enum kt_gotype t, const char *detail_fmt, ...) KT_PRINTF(6, 7);
/* Append an error whose value is the Go string s (printed %q). Does not retain s. */
void kt_ferrs_add_str(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, const char *s,
                      const char *detail_fmt, ...) KT_PRINTF(5, 6);
/* Append an error whose value is an integer. */
void kt_ferrs_add_int(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, long long n,
                      const char *detail_fmt, ...) KT_PRINTF(5, 6);
/* Append a copy of every error of src. Does not retain src. */
void kt_ferrs_extend(struct kt_ferrs *l, const struct kt_ferrs *src);

/* "Invalid value" etc. Borrowed from a static table; valid forever. */
const char *kt_ferr_type_str(enum kt_ferr_type type);

/* One error as upstream's Error(). Caller owns the result; free with free(). */
char *kt_ferr_string(const struct kt_ferr *e);
/* The aggregate: "" for none, the error itself for one (after de-duplication), else
 * "[e1, e2, ...]". Caller owns the result; free with free(). */
char *kt_ferrs_string(const struct kt_ferrs *l);

/* Go's strconv.Quote of the NUL-terminated s. Caller owns the result; free with free(). */
char *kt_go_quote(const char *s);
/* Go's json.Marshal (compact, <>& and U+2028/9 escaped) of the Go value of type t that v
 * decodes into. Caller owns the result; free with free(). Does not retain v. */
char *kt_go_marshal(const json_t *v, enum kt_gotype t);
/* The same for the Go type described by d (common/base/gotypes.h, borrowed). */
char *kt_go_marshal_as(const json_t *v, const struct kt_godesc *d);

/* The same round trip as a JSON value: json.Marshal of the Go value of type d (borrowed) that v
 * (borrowed; NULL or null: the zero value) decodes into, read back. Struct fields in Go's order,
 * map keys sorted, unknown keys dropped, absent non-omitted fields as their zero value,
 * quantities canonical, Times in UTC seconds. Caller owns the result (json_decref); it may
 * share scalar nodes with v, so neither may change a scalar in place (json_string_set). */
json_t *kt_go_roundtrip(const json_t *v, const struct kt_godesc *d);

/* Go's time.Parse(time.RFC3339, s): seconds since the epoch and nanoseconds into *sec, *nsec;
 * false (nothing written) when s is not RFC 3339. */
bool kt_go_time_parse(const char *s, long long *sec, long *nsec);

/* metav1.Time's JSON text of the RFC 3339 time s: UTC, whole seconds, the fraction dropped
 * ("2026-11-27T16:02:42.858523+00:00" -> "2026-11-27T16:02:42Z"), into out; false (out
 * unspecified) when kt_go_time_parse refuses s. */
bool kt_go_time_text(const char *s, char out[32]);

#endif
