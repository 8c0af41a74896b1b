/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/json.h - helpers over jansson, our data model
 * (docs/internals/style.md#one-file-per-library).
 *
 * Integers stay integers (json_integer); reals print in their shortest round-trip
 * form (0.1 stays 0.1). Object key order is preserved (jansson keeps insertion
 * order). Nothing here does I/O. */
#ifndef KT_JSON_H
#define KT_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/buf.h"
#include "common/base/err.h"

/* Parse one JSON document of len bytes (duplicate keys: last wins, as Go's decoder).
 * Caller owns the result; free with json_decref(). NULL + err (KT_EPARSE with line and
 * column) on failure. */
json_t *kt_json_parse(const char *data, size_t len, struct kt_err *err);

/* Serialize compactly (no spaces), keys in insertion order, reals shortest round-trip.
 * Caller owns the result; free with free(). Does not retain v. */
char *kt_json_dump(const json_t *v);
/* Same, indented by 2 spaces, for humans and golden files. Caller owns the result; free with
 * free(). Does not retain v. */
char *kt_json_dump_pretty(const json_t *v);
/* Append the compact form to b. Fails only when b's cap is exceeded. Does not retain v. */
KT_MUST_CHECK int kt_json_dump_buf(const json_t *v, struct kt_buf *b, struct kt_err *err);

/* Walk a dotted path of object keys ("spec.trainer.numNodes"). Borrowed from root;
 * valid while root lives unchanged. NULL when any step is missing or not an object. */
json_t *kt_json_path(const json_t *root, const char *dotted);

/* Typed getters on an object member; return def when absent or of another type.
 * Strings are borrowed from obj. */
const char *kt_json_str(const json_t *obj, const char *key, const char *def);
int64_t kt_json_int(const json_t *obj, const char *key, int64_t def);
bool kt_json_bool(const json_t *obj, const char *key, bool def);

/* Get the object member key, creating an empty object there when absent or null.
 * Borrowed from obj. Returns NULL when the member exists with another type. */
json_t *kt_json_obj_ensure(json_t *obj, const char *key);
/* Same for an array member. Borrowed from obj. */
json_t *kt_json_arr_ensure(json_t *obj, const char *key);

/* Find the first object in array arr whose member key is the string val.
 * Borrowed from arr. *index (may be NULL) gets its position. */
json_t *kt_json_arr_find(const json_t *arr, const char *key, const char *val, size_t *index);

/* Deep equality with Kubernetes semantics: like json_equal, but an integer and a
 * real with the same value are equal. */
bool kt_json_equal(const json_t *a, const json_t *b);

/* Like kt_json_dump, but escapes strings exactly as Go's json.Marshal does: also `<`, `>`,
 * `&` (as \u003c \u003e \u0026) and U+2028/U+2029. Use it where text must match Go's
 * output byte for byte (error messages that embed JSON). Caller owns the result; free(). */
char *kt_json_dump_go(const json_t *v);
/* Append the Go-escaped compact form to b. Fails only when b's cap is exceeded. */
KT_MUST_CHECK int kt_json_dump_go_buf(const json_t *v, struct kt_buf *b, struct kt_err *err);

/* Append "/" and token escaped as an RFC 6901 JSON Pointer reference token (~ as ~0, / as
 * ~1) to b. Same failure rule as kt_buf_append. Does not retain token. */
KT_MUST_CHECK int kt_json_pointer_push(struct kt_buf *b, const char *token, struct kt_err *err);

/* Bytes kt_json_format_real and kt_json_format_float32_key may write, NUL included. */
#define KT_JSON_REAL_MAX 48
/* Write v as Go's encoding/json writes a float64 (shortest round-trip digits, plain
 * notation for 1e-6 <= |v| < 1e21, else 1e+21 / 1e-7 style; 100.0 prints "100").
 * NaN and infinities print "null". out holds KT_JSON_REAL_MAX bytes; returns the length. */
size_t kt_json_format_real(double v, char *out);
/* Write v as Go's strconv.FormatFloat(v, 'g', -1, 32) does (how sigs.k8s.io/yaml turns
 * a float map key into a string: 1e6 -> "1e+06", 0.5 -> "0.5"; .inf/-.inf/.nan). */
size_t kt_json_format_float32_key(double v, char *out);

/* obj's keys sorted with strcmp (Go's map order), *n of them; borrowed from obj (valid while
 * obj is unchanged). Caller owns the array (never NULL); free with free(). */
const char **kt_json_sorted_keys(const json_t *obj, size_t *n);

/* Internal to common/: v without const, for jansson's iteration macros and getters, which
 * take non-const pointers even to read. Callers must only read through the result. */
json_t *kt__json_unconst(const json_t *v);

/* A deep copy of v, like json_deep_copy but without jansson 2.14's per-node loop
 * bookkeeping (which formats a pointer string per object, a third of a render's time).
 * Caller owns the result; free with json_decref(). NULL for NULL. */
json_t *kt_json_clone(const json_t *v);

#endif
