/* common/base/fielderr.h - field-error lists rendered like Kubernetes field.ErrorList (SPEC §4.5).
 *
 * Validators append errors (a validation failure is data, STYLE rule 24); callers render one
 * error as "<path>: <type>[: <value>][: <detail>]" and the list as a de-duplicated aggregate
 * ("[e1, e2]", no brackets for one). Values print the Go way: strings %q-quoted, integers and
 * bools plain, anything else as json.Marshal would (struct field order for the known types,
 * <>& escaped). No I/O. */
#ifndef KT_FIELDERR_H
#define KT_FIELDERR_H

#include <jansson.h>
#include <stddef.h>

#include "common/base/err.h"

enum kt_ferr_type {
    KT_FERR_INVALID,   /* "Invalid value" (prints the value) */
    KT_FERR_FORBIDDEN, /* "Forbidden" (no value) */
    KT_FERR_REQUIRED,  /* "Required value" (no value) */
    KT_FERR_INTERNAL   /* "Internal error" (no value) */
};

/* Go struct types whose json.Marshal field order we reproduce for bad values. */
enum kt_gotype {
    KT_GO_ANY,           /* JSON as given (our canonical order), <>& escaped */
    KT_GO_RUNTIME_REF,   /* name, apiGroup, kind */
    KT_GO_ENV_LIST,      /* []EnvVar: name, value, valueFrom */
    KT_GO_PATCH_LIST,    /* []RuntimePatch: manager, time, trainingRuntimeSpec */
    KT_GO_ENV_TARGET,    /* torch envInjection target: jobName, containerNames */
    KT_GO_RESOURCES,     /* ResourceRequirements: limits, requests, claims (map keys sorted) */
    KT_GO_STRING_SLICE,  /* []string */
    KT_GO_CONTAINER_LIST /* []corev1.Container: name, image, command, ... (Go tags' omitempty,
                            "resources":{} always) */
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
/* Go's json.Marshal of v (compact, <>& and U+2028/9 escaped), reordering objects of type t.
 * Caller owns the result; free with free(). Does not retain v. */
char *kt_go_marshal(const json_t *v, enum kt_gotype t);

#endif
