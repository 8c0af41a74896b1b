/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/mem.c - the allocator wrappers; abort on OOM instead of returning NULL. */
#include "common/base/mem.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define KT_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KT_ARENA_ASAN 1
#endif
#endif
#ifdef KT_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ARENA_POISON(p, n) ((void)(p), (void)(n))
#define ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

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

/* ---- the jansson arena ---------------------------------------------------------------- */

struct kt_json_arena {
    char *base;       /* the reservation, MAP_NORESERVE */
    size_t cap;       /* its size */
    size_t used;      /* bytes handed out in this scope */
    size_t high;      /* the most used in one scope: the pages that may be resident */
    size_t fallbacks; /* heap allocations in this scope because it was full */
    bool open;        /* between enter and leave */
};

#define ARENA_ALIGN 16u /* malloc's alignment on x86-64 and aarch64 */

/* The thread's arena in scope (frees inside it are no-ops), and whether allocations come
 * from it (not paused). */
static _Thread_local struct kt_json_arena *tl_arena;
static _Thread_local unsigned tl_paused;

struct kt_json_arena *kt_json_arena_new(size_t reserve)
{
    struct kt_json_arena *a = kt_xcalloc(1, sizeof(*a));
    size_t cap = (reserve + 4095) & ~(size_t)4095;
    void *p =
        mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (p == MAP_FAILED) {
        oom(cap);
    }
    a->base = p;
    a->cap = cap;
    ARENA_POISON(a->base, a->cap);
    return a;
}

void kt_json_arena_free(struct kt_json_arena *a)
{
    if (!a) {
        return;
    }
    if (tl_arena == a) {
        abort(); /* freed inside its own scope */
    }
    ARENA_UNPOISON(a->base, a->cap);
    munmap(a->base, a->cap);
    free(a);
}

void kt_json_arena_enter(struct kt_json_arena *a)
{
    if (tl_arena || a->open) {
        abort(); /* scopes do not nest */
    }
    a->open = true;
    a->used = 0;
    a->fallbacks = 0;
    tl_arena = a;
    tl_paused = 0;
}

void kt_json_arena_leave(struct kt_json_arena *a)
{
    if (tl_arena != a) {
        abort();
    }
    tl_arena = NULL;
    a->open = false;
    ARENA_POISON(a->base, a->used);
    if (a->high > KT_JSON_ARENA_KEEP) {
        /* The pages a large event touched go back; the first KEEP bytes stay for the next. */
        madvise(a->base + KT_JSON_ARENA_KEEP, a->high - KT_JSON_ARENA_KEEP, MADV_DONTNEED);
        a->high = KT_JSON_ARENA_KEEP;
    }
    a->used = 0;
}

void kt_json_arena_pause(void)
{
    tl_paused++;
}

void kt_json_arena_resume(void)
{
    if (tl_paused > 0) {
        tl_paused--;
    }
}

void kt_json_arena_stats(const struct kt_json_arena *a, struct kt_json_arena_stats *out)
{
    out->used = a->used;
    out->high = a->high;
    out->fallbacks = a->fallbacks;
}

/* n bytes from the thread's arena, or NULL when there is none in use or it is full. */
static void *arena_take(size_t n)
{
    struct kt_json_arena *a = tl_arena;
    size_t need;

    if (!a || tl_paused) {
        return NULL;
    }
    need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need < n || need > a->cap - a->used) {
        a->fallbacks++;
        return NULL;
    }
    void *p = a->base + a->used;
    a->used += need;
    if (a->used > a->high) {
        a->high = a->used;
    }
    ARENA_UNPOISON(p, n);
    return p;
}

static bool in_arena(const void *p)
{
    const struct kt_json_arena *a = tl_arena;
    const char *c = p;

    return a && c >= a->base && c < a->base + a->cap;
}

/* jansson's allocator: the thread's arena when in scope, else the heap, aborting except inside
 * a soft scope. */
static void *json_alloc(size_t n)
{
    void *p = arena_take(n ? n : 1);

    if (p) {
        return p;
    }
    return soft_depth ? malloc(n ? n : 1) : kt_xmalloc(n);
}

static void json_free(void *p)
{
    if (!in_arena(p)) {
        free(p);
    }
}

void kt_mem_init(void)
{
    json_set_alloc_funcs(json_alloc, json_free);
}
