/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/godecode.h - does a JSON value decode into upstream's Go type?
 * (docs/internals/upstream.md#error-text)
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
 * Besides the text, kt_go_decode_check says where the failing value is (the decoder's text
 * names its Go struct field without list indices or map keys, and a quantity's or a time's
 * error names nothing), so a caller can point at that value's line.
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

/* Why and where a value does not decode. The caller allocates it; kt_go_decode_check fills it
 * and the caller frees its strings with kt_go_decode_release(). */
struct kt_go_decode {
    char *msg;   /* owned: the decoder's text, byte for byte kt_go_decode_error()'s */
    char *field; /* owned: the failing value's path as the API server's schema errors write it,
                    struct and map keys after dots, indices in brackets: "spec.trainer.numNodes",
                    "spec.trainer.resourcesPerNode.limits.cpu", "spec.runtimePatches[0].time";
                    "" for v itself */
    char *ptr;   /* owned: the same path as a JSON Pointer into v, "/spec/runtimePatches/0/time" */
};

/* Decode v into d as kt_go_decode_error does: 0 when it decodes (*out zeroed, nothing to
 * release), 1 when it does not (*out filled; caller owns its strings, free with
 * kt_go_decode_release()). Does not retain v or d. */
int kt_go_decode_check(const json_t *v, const struct kt_godesc *d, struct kt_go_decode *out);

/* Free out's strings and zero it. Accepts NULL and a zeroed struct. */
void kt_go_decode_release(struct kt_go_decode *out);

/* encoding/json's word for v's JSON kind in "cannot unmarshal X" (object, array, string, bool,
 * number). A static string; not owned by the caller. */
const char *kt_go_json_kind(const json_t *v);

/* time.Parse(time.RFC3339, s)'s error text, or NULL when s parses. Caller owns the result. */
char *kt_go_time_error(const char *s);

#endif
