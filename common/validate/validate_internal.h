/* common/validate/validate_internal.h - helpers shared by the validate*.c files only. */
#ifndef KT_VALIDATE_INTERNAL_H
#define KT_VALIDATE_INTERNAL_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>

#include "common/validate/validate.h"

/* The compiled pattern of a schema `pattern` string, NULL when unknown. Borrowed from v. */
const regex_t *kt_validator_pattern(const struct kt_validator *v, const char *src);

/* Field paths ("a.b[0]") and JSON Pointers ("/a/b/0"). Caller owns the result; free(). */
char *kt_vpath_child(const char *path, const char *key);
char *kt_vpath_index(const char *path, size_t i);
char *kt_vptr_child(const char *ptr, const char *key);
char *kt_vptr_index(const char *ptr, size_t i);

/* The schema type name of a JSON value as kube-openapi reports it. Static string. */
const char *kt_vjson_type(const json_t *x);
/* An integer, or a real without fraction (the API server decodes those as int64). */
bool kt_vis_integral(const json_t *x);
/* Go's rendering of a scalar bad value (%v, strings %q). Caller owns it; free(). */
char *kt_vvalue(const json_t *x);
/* Append "<field>: <type>[: value][: detail]". Does not retain its arguments. */
void kt_vadd(struct kt_vresult *r, enum kt_vstage st, const char *field, const char *type,
             const char *value, const char *detail, const char *ptr);

bool kt_vis_dns1123_subdomain(const char *s);
/* ObjectMeta checks of apimachinery with its exact messages. */
void kt_vcheck_dns_subdomain(struct kt_vresult *r, const char *field, const char *name,
                             const char *ptr);
void kt_vcheck_labels(struct kt_vresult *r, const json_t *labels, const char *field,
                      const char *ptr);
void kt_vcheck_annotations(struct kt_vresult *r, const json_t *annotations, const char *field,
                           const char *ptr);

/* Walk obj along schema s and evaluate the C twin of every x-kubernetes-validations rule
 * (validate_cel.c); transition rules only where old has the same node. */
void kt_validate_cel(const struct kt_validator *v, const json_t *s, const json_t *obj,
                     const json_t *old, struct kt_vresult *r);

/* True when rule (an x-kubernetes-validations rule text) has a C twin. */
bool kt_validate_cel_has_twin(const char *rule);

#endif
