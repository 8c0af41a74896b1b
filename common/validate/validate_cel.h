/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate_cel.h - the C twins of the CRDs' x-kubernetes-validations rules
 * (step 4 of the pipeline, called by the schema stage). */
#ifndef KT_VALIDATE_CEL_H
#define KT_VALIDATE_CEL_H

#include <jansson.h>
#include <stdbool.h>

#include "common/validate/result.h"

/* The validator of validate_schema.h; opaque here. */
struct kt_validator;

/* Walk obj along schema s and evaluate the C twin of every x-kubernetes-validations rule
 * (validate_cel.c); transition rules only where old has the same node. */
void kt_validate_cel(const struct kt_validator *v, const json_t *s, const json_t *obj,
                     const json_t *old, struct kt_vresult *r);

/* True when rule (an x-kubernetes-validations rule text) has a C twin. */
bool kt_validate_cel_has_twin(const char *rule);

#endif
