/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/mem.h - allocation that aborts on out-of-memory
 * (docs/internals/style.md#out-of-memory-aborts).
 *
 * The only place that calls malloc/realloc. kt_mem_init() points jansson at
 * these functions; call it once at startup (tests and binaries do).
 *
 * The exception is the HTTP request path, where an allocation failure must fail one request
 * and never the process: kt_try_malloc/kt_try_realloc return NULL, and inside a "soft" scope
 * (kt_mem_soft_begin/end, per thread) jansson's allocations return NULL instead of aborting,
 * which jansson turns into a clean decode error. */
#ifndef KT_MEM_H
#define KT_MEM_H

#include <stddef.h>

/* The number of elements of array a. Passing a pointer is a compile error (a negative array
 * size: the check below is 0 for an array), so the one spelling of sizeof(a) / sizeof(a[0])
 * cannot silently divide a pointer's size; make lint refuses the long form and compiles a
 * pointer through it to prove the error. */
#define KT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]) + KT__MUST_BE_ARRAY(a))
#define KT__MUST_BE_ARRAY(a)                                                                       \
    (sizeof(char[1 - 2 * __builtin_types_compatible_p(__typeof__(a), __typeof__(&(a)[0]))]) - 1)

/* Caller owns the result; free with free(). Never returns NULL (aborts). */
void *kt_xmalloc(size_t n);
/* Caller owns the result; free with free(). Zeroed; aborts on overflow or OOM. */
void *kt_xcalloc(size_t count, size_t size);
/* Caller owns the result (p is consumed); free with free(). */
void *kt_xrealloc(void *p, size_t n);
/* Caller owns the result; free with free(). Does not retain s. */
char *kt_xstrdup(const char *s);
/* Caller owns the result; free with free(). Copies n bytes and adds a NUL. */
char *kt_xstrndup(const char *s, size_t n);
/* Caller owns the result; free with free(). printf into a fresh string. */
char *kt_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Caller owns the result; free with free(). NULL when memory is short (never aborts). */
void *kt_try_malloc(size_t n);
/* Like realloc: the result replaces p; on NULL (memory short) p is untouched and still owned
 * by the caller. Never aborts. */
void *kt_try_realloc(void *p, size_t n);

/* Until the matching kt_mem_soft_end() on this thread, jansson's allocations return NULL on
 * failure instead of aborting. Only wrap calls that handle a NULL from jansson (decoding).
 * Nestable. */
void kt_mem_soft_begin(void);
void kt_mem_soft_end(void);

/* Route jansson's allocations through kt_xmalloc. Idempotent. */
void kt_mem_init(void);

#endif
