/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/mem.c - the allocator wrappers; abort on OOM instead of returning NULL. */
#include "common/base/mem.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "kt: out of memory allocating %zu bytes\n", n);
    abort();
}

void *kt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p) {
        oom(n);
    }
    return p;
}

void *kt_xcalloc(size_t count, size_t size)
{
    void *p;

    if (size && count > SIZE_MAX / size) {
        oom(SIZE_MAX);
    }
    p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        oom(count * size);
    }
    return p;
}

void *kt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q) {
        oom(n);
    }
    return q;
}

char *kt_xstrndup(const char *s, size_t n)
{
    char *p = kt_xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *kt_xstrdup(const char *s)
{
    return kt_xstrndup(s, strlen(s));
}

char *kt_xasprintf(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *p;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        abort();
    }
    p = kt_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *kt_try_malloc(size_t n)
{
    return malloc(n ? n : 1);
}

void *kt_try_realloc(void *p, size_t n)
{
    return realloc(p, n ? n : 1);
}

static _Thread_local unsigned soft_depth;

void kt_mem_soft_begin(void)
{
    soft_depth++;
}

void kt_mem_soft_end(void)
{
    if (soft_depth > 0) {
        soft_depth--;
    }
}

/* jansson's allocator: aborting, except inside a soft scope. */
static void *json_alloc(size_t n)
{
    return soft_depth ? malloc(n ? n : 1) : kt_xmalloc(n);
}

void kt_mem_init(void)
{
    json_set_alloc_funcs(json_alloc, free);
}
