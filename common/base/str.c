/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/str.c - slices, checked integer parsing and owned string lists. */
#include "common/base/str.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

struct kt_str kt_str_c(const char *s)
{
    struct kt_str r = {.ptr = s, .len = s ? strlen(s) : 0};

    return r;
}

bool kt_str_eq(struct kt_str a, const char *b)
{
    size_t n = strlen(b);

    return a.len == n && (n == 0 || memcmp(a.ptr, b, n) == 0);
}

bool kt_str_has_prefix(struct kt_str s, const char *prefix)
{
    size_t n = strlen(prefix);

    return s.len >= n && memcmp(s.ptr, prefix, n) == 0;
}

bool kt_str_has_suffix(struct kt_str s, const char *suffix)
{
    size_t n = strlen(suffix);

    return s.len >= n && memcmp(s.ptr + s.len - n, suffix, n) == 0;
}

char *kt_str_dup(struct kt_str s)
{
    return kt_xstrndup(s.ptr ? s.ptr : "", s.len);
}

struct kt_str kt_str_cut(struct kt_str s, char sep, struct kt_str *head)
{
    struct kt_str rest = {.len = 0};
    const char *p = s.len ? memchr(s.ptr, sep, s.len) : NULL;

    if (!p) {
        *head = s;
        return rest;
    }
    head->ptr = s.ptr;
    head->len = (size_t)(p - s.ptr);
    rest.ptr = p + 1;
    rest.len = s.len - head->len - 1;
    return rest;
}

int kt_str_to_i64(struct kt_str s, int64_t min, int64_t max, int64_t *out, struct kt_err *err)
{
    size_t i = 0;
    bool neg = false;
    uint64_t v = 0;
    uint64_t limit;

    if (s.len == 0) {
        return kt_err_set(err, KT_EPARSE, "empty number");
    }
    if (s.ptr[0] == '-' || s.ptr[0] == '+') {
        neg = s.ptr[0] == '-';
        i = 1;
    }
    if (i == s.len) {
        return kt_err_set(err, KT_EPARSE, "invalid number \"%.*s\"", (int)s.len, s.ptr);
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < s.len; i++) {
        unsigned d = (unsigned)(s.ptr[i] - '0');
        if (d > 9) {
            return kt_err_set(err, KT_EPARSE, "invalid number \"%.*s\"", (int)s.len, s.ptr);
        }
        if (v > (limit - d) / 10) {
            return kt_err_set(err, KT_ERANGE, "number out of range \"%.*s\"", (int)s.len, s.ptr);
        }
        v = v * 10 + d;
    }
    {
        int64_t r = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
        if (r < min || r > max) {
            return kt_err_set(err, KT_ERANGE, "%lld is out of range [%lld, %lld]", (long long)r,
                              (long long)min, (long long)max);
        }
        *out = r;
    }
    return 0;
}

void kt_strv_init(struct kt_strv *v)
{
    v->items = NULL;
    v->len = 0;
    v->cap = 0;
}

void kt_strv_push(struct kt_strv *v, const char *s)
{
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->items = kt_xrealloc(v->items, v->cap * sizeof(*v->items));
    }
    v->items[v->len++] = kt_xstrdup(s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void kt_strv_sort(struct kt_strv *v)
{
    if (v->len > 1) {
        qsort(v->items, v->len, sizeof(*v->items), cmp_str);
    }
}

bool kt_strv_contains(const struct kt_strv *v, const char *s)
{
    for (size_t i = 0; i < v->len; i++) {
        if (strcmp(v->items[i], s) == 0) {
            return true;
        }
    }
    return false;
}

void kt_strv_uniq(struct kt_strv *v)
{
    size_t kept = 0;
    for (size_t i = 0; i < v->len; i++) {
        if (kept > 0 && strcmp(v->items[kept - 1], v->items[i]) == 0) {
            free(v->items[i]);
        } else {
            v->items[kept++] = v->items[i];
        }
    }
    v->len = kept;
}

bool kt_strv_sorted_contains(const struct kt_strv *v, const char *s)
{
    return v->len > 0 && bsearch(&s, v->items, v->len, sizeof(*v->items), cmp_str) != NULL;
}

void kt_strv_release(struct kt_strv *v)
{
    if (!v) {
        return;
    }
    for (size_t i = 0; i < v->len; i++) {
        free(v->items[i]);
    }
    free(v->items);
    kt_strv_init(v);
}

const char *kt_flag_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];

    if (strncmp(a, name, n) != 0) {
        return NULL;
    }
    if (a[n] == '=') {
        return a + n + 1;
    }
    if (a[n] != '\0') {
        return NULL;
    }
    if (*i + 1 >= argc) {
        if (missing) {
            *missing = true;
        }
        return NULL;
    }
    return argv[++*i];
}

size_t kt_utf8_rune(const unsigned char *s, size_t n, uint32_t *r)
{
    if (s[0] < 0x80) {
        *r = s[0];
        return 1;
    }
    size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (len == 0 || len > n || s[0] > 0xf4) {
        return 0;
    }
    uint32_t v = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        v = (v << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) ||
        (v >= 0xd800 && v <= 0xdfff)) {
        return 0;
    }
    *r = v;
    return len;
}
