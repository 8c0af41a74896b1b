/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/hash.h - FNV-1a, the one string hash of kt's in-memory tables: the informer's
 * entries and shared strings, the work queue, the applied and snapshot caches, the event
 * de-duplication. In-memory only: nothing stores or sends a value, so the seed may change
 * between releases. Pure, header-only, thread-safe; nothing is retained. */
#ifndef KT_HASH_H
#define KT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define KT_FNV64_BASIS 14695981039346656037ull
#define KT_FNV64_PRIME 1099511628211ull
#define KT_FNV32_BASIS 2166136261u
#define KT_FNV32_PRIME 16777619u

/* h continued over n bytes of p (start with KT_FNV64_BASIS). */
static inline uint64_t kt_fnv64_mem(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ s[i]) * KT_FNV64_PRIME;
    }
    return h;
}

/* h continued over the NUL-terminated s. */
static inline uint64_t kt_fnv64_str(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * KT_FNV64_PRIME;
    }
    return h;
}

/* h continued over one byte that no UTF-8 string contains (0xff): a separator between
 * strings hashed one after the other, so ("ab","c") and ("a","bc") differ. */
static inline uint64_t kt_fnv64_sep(uint64_t h)
{
    return (h ^ 0xffu) * KT_FNV64_PRIME;
}

/* The 32-bit hash of n bytes of p, for tables that keep 32-bit hashes per entry. */
static inline uint32_t kt_fnv32_mem(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint32_t h = KT_FNV32_BASIS;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ s[i]) * KT_FNV32_PRIME;
    }
    return h;
}

/* The 32-bit hash of the NUL-terminated s. */
static inline uint32_t kt_fnv32_str(const char *s)
{
    uint32_t h = KT_FNV32_BASIS;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * KT_FNV32_PRIME;
    }
    return h;
}

#endif
