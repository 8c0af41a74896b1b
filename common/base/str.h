/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/str.h - string slices and checked number readers
 * (docs/internals/style.md#slices-for-parsing).
 *
 * A slice borrows its bytes; nothing here allocates except kt_str_dup and the
 * string list. */
#ifndef KT_STR_H
#define KT_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/err.h"

struct kt_str {
    const char *ptr; /* not NUL-terminated in general; borrowed */
    size_t len;
};

/* A slice of a NUL-terminated string. Borrowed from s; valid while s lives. */
struct kt_str kt_str_c(const char *s);
/* Byte-wise equality of a slice and a C string. */
bool kt_str_eq(struct kt_str a, const char *b);
bool kt_str_has_prefix(struct kt_str s, const char *prefix);
bool kt_str_has_suffix(struct kt_str s, const char *suffix);
/* Caller owns the result; free with free(). */
char *kt_str_dup(struct kt_str s);
/* Split at the first sep: head gets the part before it, the return value the rest
 * (len 0 and ptr NULL when sep does not occur; head then gets all of s). */
struct kt_str kt_str_cut(struct kt_str s, char sep, struct kt_str *head);

/* Parse a whole slice as a decimal integer in [min, max]. Fails (KT_ERANGE, KT_EPARSE)
 * on overflow, trailing bytes, or an empty slice. *out is set only on success. */
KT_MUST_CHECK int kt_str_to_i64(struct kt_str s, int64_t min, int64_t max, int64_t *out,
                                struct kt_err *err);

/* A growable list of owned strings. Touch items/len; grow only through the API. */
struct kt_strv {
    char **items; /* each owned by the list */
    size_t len;
    size_t cap;
};

void kt_strv_init(struct kt_strv *v);
/* Appends a copy of s. Does not retain s. */
void kt_strv_push(struct kt_strv *v, const char *s);
/* Sort items with strcmp. */
void kt_strv_sort(struct kt_strv *v);
bool kt_strv_contains(const struct kt_strv *v, const char *s);
/* Drop repeated items of a sorted list (kt_strv_sort first). */
void kt_strv_uniq(struct kt_strv *v);
/* kt_strv_contains by binary search: v must be sorted. */
bool kt_strv_sorted_contains(const struct kt_strv *v, const char *s);
/* Free every item and the array. Accepts a zeroed list. */
void kt_strv_release(struct kt_strv *v);

/* Command-line flag NAME as "NAME VALUE" (advancing *i past VALUE) or "NAME=VALUE": the
 * value, borrowed from argv. NULL when argv[*i] is not NAME; also NULL, with *missing set
 * true, when a bare NAME is the last argument (missing may be NULL). */
const char *kt_flag_value(int argc, char **argv, int *i, const char *name, bool *missing);

/* Decode one UTF-8 rune at s[0..n) (n >= 1) into *r: its length in bytes, or 0 when the bytes
 * there are not valid UTF-8 (overlong, surrogate, above U+10FFFF, truncated). */
size_t kt_utf8_rune(const unsigned char *s, size_t n, uint32_t *r);

#endif
