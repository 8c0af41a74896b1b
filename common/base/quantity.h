/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/quantity.h - Kubernetes resource quantities, exact
 * (docs/internals/upstream.md#quantities).
 *
 * Parses, compares, adds and multiplies quantities the way apimachinery's resource.Quantity
 * does and prints its String() byte for byte, including the quirks users can see (the
 * parsed text is kept when it is already canonical, "+1" stays "+1"; binary values are
 * capped at 2^63-1). Values are held as a 128-bit count of nano units, so magnitudes are
 * limited to below 10^29 (upstream has no limit for decimal values); past that, KT_ERANGE.
 * No floating point anywhere except reading JSON reals. No allocation. */
#ifndef KT_QUANTITY_H
#define KT_QUANTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/err.h"

__extension__ typedef __int128 kt_i128;

/* The three formats of apimachinery (names as upstream's Format strings). */
enum kt_qformat {
    KT_QF_DECIMAL_SI,      /* "DecimalSI": n u m "" k M G T P E */
    KT_QF_BINARY_SI,       /* "BinarySI": Ki Mi Gi Ti Pi Ei */
    KT_QF_DECIMAL_EXPONENT /* "DecimalExponent": 1e3, 5E-1 */
};

/* Longest parsed text kept for String(); longer canonical inputs print recomputed. */
#define KT_QUANTITY_TEXT_MAX 64
/* Room for any String() result (128-bit mantissa, sign, suffix). */
#define KT_QUANTITY_STR_MAX 64

/* A value; copy freely. A zeroed struct is the quantity 0 (DecimalSI). */
struct kt_quantity {
    kt_i128 nano;                    /* the value times 10^9; |nano| < 10^38 */
    enum kt_qformat format;          /* the format String() uses */
    char text[KT_QUANTITY_TEXT_MAX]; /* upstream's cached String() text, "" when none */
};

/* Parse s[0..len) (no surrounding space allowed, as ParseQuantity). Errors (KT_EPARSE) use
 * upstream's texts: "quantities must match the regular expression
 * '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", "unable to parse quantity's suffix",
 * "unable to parse numeric part of quantity"; KT_ERANGE "quantity too large" past our limit.
 * *out is set only on success. */
KT_MUST_CHECK int kt_quantity_parse(const char *s, size_t len, struct kt_quantity *out,
                                    struct kt_err *err);
/* Same for a NUL-terminated string. */
KT_MUST_CHECK int kt_quantity_parse_c(const char *s, struct kt_quantity *out, struct kt_err *err);

/* Decode a JSON value as Quantity.UnmarshalJSON does: a string (Unicode space trimmed),
 * an integer, or a real (read through the text Go's encoder would write for it); null is
 * 0. Any other type fails with the regular-expression error. Does not retain v. */
KT_MUST_CHECK int kt_quantity_from_json(const json_t *v, struct kt_quantity *out,
                                        struct kt_err *err);

/* Upstream's String() into buf (size >= KT_QUANTITY_STR_MAX recommended). Returns buf;
 * truncates (still NUL-terminated) when size is too small. */
char *kt_quantity_format(const struct kt_quantity *q, char *buf, size_t size);
/* The same as a new JSON string. Caller owns the result (json_decref). */
json_t *kt_quantity_to_json(const struct kt_quantity *q);

/* -1, 0, 1 as a < b, a == b, a > b (value only; format ignored). */
int kt_quantity_cmp(const struct kt_quantity *a, const struct kt_quantity *b);
bool kt_quantity_is_zero(const struct kt_quantity *q);
int kt_quantity_sign(const struct kt_quantity *q);

/* a += b, as Quantity.Add: when a is zero beforehand it takes b's format. Fails (KT_ERANGE)
 * past our limit, leaving a unchanged. */
KT_MUST_CHECK int kt_quantity_add(struct kt_quantity *a, const struct kt_quantity *b,
                                  struct kt_err *err);
/* a -= b, as Quantity.Sub (same format rule). */
KT_MUST_CHECK int kt_quantity_sub(struct kt_quantity *a, const struct kt_quantity *b,
                                  struct kt_err *err);
/* q *= n, format kept, as Quantity.Mul. Fails (KT_ERANGE) past our limit, q unchanged. */
KT_MUST_CHECK int kt_quantity_mul(struct kt_quantity *q, int64_t n, struct kt_err *err);

/* The value rounded up away from zero to an integer, as Quantity.Value() (2.5 -> 3,
 * 0.7 -> 1, -2.5 -> -3). Fails (KT_ERANGE) when it does not fit int64 (upstream wraps). */
KT_MUST_CHECK int kt_quantity_value(const struct kt_quantity *q, int64_t *out, struct kt_err *err);
/* The same in thousandths, as MilliValue() (ceil of q*1000). */
KT_MUST_CHECK int kt_quantity_milli_value(const struct kt_quantity *q, int64_t *out,
                                          struct kt_err *err);
/* True and *out set when q is an integer that fits int64 (AsInt64-like, exact only). */
bool kt_quantity_as_int64(const struct kt_quantity *q, int64_t *out);

/* A quantity of value n (integer) in format f, as NewQuantity. */
struct kt_quantity kt_quantity_from_int64(int64_t n, enum kt_qformat f);
/* A quantity of value n/1000, as NewMilliQuantity. */
struct kt_quantity kt_quantity_from_milli(int64_t n, enum kt_qformat f);

#endif
