/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/err.h - error codes and the error record every fallible call fills.
 *
 * Codes and their text are defined once in KT_ERR_CODES. A validation failure
 * is data (see validate's field-error list), not a kt_err. */
#ifndef KT_ERR_H
#define KT_ERR_H

#include <stddef.h>

#define KT_MUST_CHECK __attribute__((warn_unused_result))
#define KT_PRINTF(a, b) __attribute__((format(printf, a, b)))

#define KT_ERR_CODES(X)                                                                            \
    X(KT_OK, "ok")                                                                                 \
    X(KT_EINVAL, "invalid input")                                                                  \
    X(KT_ETOOBIG, "too big")                                                                       \
    X(KT_ENOENT, "not found")                                                                      \
    X(KT_EIO, "I/O error")                                                                         \
    X(KT_EPARSE, "parse error")                                                                    \
    X(KT_ERANGE, "out of range")                                                                   \
    X(KT_EHTTP, "HTTP error")                                                                      \
    X(KT_ECONFLICT, "conflict")                                                                    \
    X(KT_EFORBIDDEN, "forbidden")                                                                  \
    X(KT_EGONE, "gone")                                                                            \
    X(KT_ETIMEOUT, "timed out")                                                                    \
    X(KT_EUNSUPPORTED, "unsupported")                                                              \
    X(KT_EINTERNAL, "internal error")

enum kt_code {
#define KT_ERR_ENUM(name, text) name,
    KT_ERR_CODES(KT_ERR_ENUM)
#undef KT_ERR_ENUM
        KT_ECOUNT
};

/* An error record; callers put it on the stack, zeroed. */
struct kt_err {
    enum kt_code code;
    char msg[1024]; /* NUL-terminated, truncated to fit */
};

/* Fill err (NULL allowed) with code and a printf-style message. Always returns -1. */
int kt_err_set(struct kt_err *err, enum kt_code code, const char *fmt, ...) KT_PRINTF(3, 4);

/* Prefix err's message with "prefix: " (NULL err allowed). Returns -1. */
int kt_err_prefix(struct kt_err *err, const char *fmt, ...) KT_PRINTF(2, 3);

/* The fixed text of a code. Borrowed from a static table; valid forever. */
const char *kt_err_code_str(enum kt_code code);

/* Abort with file/line when a programming invariant is broken. */
#define KT_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            kt__assert_fail(#cond, __FILE__, __LINE__);                                            \
        }                                                                                          \
    } while (0)

_Noreturn void kt__assert_fail(const char *expr, const char *file, int line);

#endif
