/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/buf.h - growable byte buffer with a hard size cap
 * (docs/internals/style.md#caps-on-outside-input).
 *
 * Used for HTTP bodies, files and serialized output. Not thread-safe; not a
 * string library (see str.h for slices). */
#ifndef KT_BUF_H
#define KT_BUF_H

#include <stddef.h>

#include "common/base/err.h"

/* Touch the fields only through the functions below (reading data/len is fine). */
struct kt_buf {
    char *data; /* NUL-terminated when non-NULL */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* hard limit for len; appends beyond it fail */
};

/* Prepare an empty buffer that may grow to at most max bytes. Cannot fail. */
void kt_buf_init(struct kt_buf *b, size_t max);

/* Append n bytes. On failure (KT_ETOOBIG) the buffer is released. Does not retain p. */
KT_MUST_CHECK int kt_buf_append(struct kt_buf *b, const void *p, size_t n, struct kt_err *err);

/* Make room for need bytes (plus the NUL) without aborting: the request path's way to grow.
 * KT_ETOOBIG past b->max (the buffer is released, as for kt_buf_append); KT_EINTERNAL
 * ("out of memory") when the allocation fails, leaving b as it was. */
KT_MUST_CHECK int kt_buf_try_reserve(struct kt_buf *b, size_t need, struct kt_err *err);

/* The allocation (bytes) b will hold after growing to fit need bytes: b->cap when it already
 * fits, else what the next append or kt_buf_try_reserve allocates. need must be <= b->max. */
size_t kt_buf_cap_for(const struct kt_buf *b, size_t need);

/* Append a NUL-terminated string. Same failure rule as kt_buf_append. */
KT_MUST_CHECK int kt_buf_puts(struct kt_buf *b, const char *s, struct kt_err *err);

/* Append printf-style text. Same failure rule as kt_buf_append. */
KT_MUST_CHECK int kt_buf_printf(struct kt_buf *b, struct kt_err *err, const char *fmt, ...)
    KT_PRINTF(3, 4);

/* Hand the contents to the caller and reset b. Caller owns the result; free with free().
 * Returns an empty string (never NULL) for an empty buffer. */
char *kt_buf_take(struct kt_buf *b, size_t *len);

/* Cut the contents back to their first len bytes (len <= b->len), keeping the allocation. */
void kt_buf_truncate(struct kt_buf *b, size_t len);

/* Forget the contents but keep the allocation and cap. */
void kt_buf_reset(struct kt_buf *b);

/* Ready b for its next use with cap max: the contents forgotten, the allocation kept when it
 * is at most keep bytes and max is unchanged (a buffer reused per request stays one
 * allocation), else freed. */
void kt_buf_recycle(struct kt_buf *b, size_t max, size_t keep);

/* Free the contents. Accepts a zeroed or already-released buffer. */
void kt_buf_release(struct kt_buf *b);

/* Read a whole file (path "-" = stdin) into b, failing with KT_ETOOBIG past b->max
 * and KT_EIO when it cannot be read. Every error message starts with the path ("<stdin>"
 * for "-"), so callers print it as it is. */
KT_MUST_CHECK int kt_buf_read_file(struct kt_buf *b, const char *path, struct kt_err *err);

#endif
