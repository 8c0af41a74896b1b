/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/godecode.h - does a JSON value decode into upstream's Go type? (SPEC §4.5)
 *
 * Upstream's webhooks decode the review's object with controller-runtime's admission decoder
 * (apimachinery's JSON serializer: sigs.k8s.io/json, encoding/json's rules, case-sensitive keys,
 * unknown keys ignored) and answer 400 with the decoder's error when that fails. This module
 * walks a value against the Go type table (common/base/gotypes.h) and gives that error text:
 *   - a value of the wrong JSON type, an integer out of its Go width or a number with a
 *     fraction/exponent for an integer: the first one in document order, as encoding/json's
 *     UnmarshalTypeError ("json: cannot unmarshal string into Go struct field
 *     Trainer.spec.trainer.numNodes of type int32");
 *   - a type's own UnmarshalJSON failing (metav1.Time, resource.Quantity, intstr.IntOrString)
 *     stops the decoding at once: its own text (time.Parse's ParseError, ParseQuantity's errors,
 *     the standard library's UnmarshalTypeError without a field), even after a saved one.
 * Limits (docs/compatibility.md): a real prints as its shortest decimal with ".0" when integral
 * (Go prints the literal: "1.0" and "1.5" agree, "2e0" or "1.50" do not); integers past int64
 * print as decimals. Pure; no I/O; thread-safe. */
#ifndef KT_GODECODE_H
#define KT_GODECODE_H

#include <jansson.h>

#include "common/base/gotypes.h"

/* The decoder's error for v decoded into d, or NULL when it decodes. Caller owns the result
 * (free()). Does not retain v. */
char *kt_go_decode_error(const json_t *v, const struct kt_godesc *d);

/* encoding/json's word for v's JSON kind in "cannot unmarshal X" (object, array, string, bool,
 * number). A static string; not owned by the caller. */
const char *kt_go_json_kind(const json_t *v);

/* time.Parse(time.RFC3339, s)'s error text, or NULL when s parses. Caller owns the result. */
char *kt_go_time_error(const char *s);

#endif
