/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/buf.c - capped growable buffer. Doubles its allocation; never exceeds max+1 bytes. */
#include "common/base/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

void kt_buf_init(struct kt_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

size_t kt_buf_cap_for(const struct kt_buf *b, size_t need)
{
    size_t cap;

    if (need + 1 <= b->cap) {
        return b->cap;
    }
    cap = b->cap ? b->cap : 64;
    while (cap < need + 1 && cap <= SIZE_MAX / 2) {
        cap *= 2;
    }
    if (cap < need + 1) {
        cap = need + 1;
    }
    return cap > b->max + 1 ? b->max + 1 : cap;
}

static int too_big(struct kt_buf *b, struct kt_err *err)
{
    size_t max = b->max;

    kt_buf_release(b);
    b->max = max;
    return kt_err_set(err, KT_ETOOBIG, "exceeds the limit of %zu bytes", max);
}

static int grow(struct kt_buf *b, size_t need, struct kt_err *err)
{
    size_t cap;

    if (need > b->max) {
        return too_big(b, err);
    }
    cap = kt_buf_cap_for(b, need);
    if (cap != b->cap) {
        b->data = kt_xrealloc(b->data, cap);
        b->cap = cap;
    }
    return 0;
}

int kt_buf_try_reserve(struct kt_buf *b, size_t need, struct kt_err *err)
{
    size_t cap;
    char *p;

    if (need > b->max) {
        return too_big(b, err);
    }
    cap = kt_buf_cap_for(b, need);
    if (cap == b->cap) {
        return 0;
    }
    p = kt_try_realloc(b->data, cap);
    if (!p) {
        return kt_err_set(err, KT_EINTERNAL, "out of memory (%zu bytes)", cap);
    }
    if (!b->data) {
        p[0] = '\0';
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int kt_buf_append(struct kt_buf *b, const void *p, size_t n, struct kt_err *err)
{
    if (n > b->max || b->len > b->max - n) {
        return too_big(b, err);
    }
    if (grow(b, b->len + n, err) < 0) {
        return -1;
    }
    if (n) {
        memcpy(b->data + b->len, p, n);
    }
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int kt_buf_puts(struct kt_buf *b, const char *s, struct kt_err *err)
{
    return kt_buf_append(b, s, strlen(s), err);
}

int kt_buf_printf(struct kt_buf *b, struct kt_err *err, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    int n;
    char *big;
    int rc;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return kt_err_set(err, KT_EINTERNAL, "format error");
    }
    if ((size_t)n < sizeof(small)) {
        return kt_buf_append(b, small, (size_t)n, err);
    }
    big = kt_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rc = kt_buf_append(b, big, (size_t)n, err);
    free(big);
    return rc;
}

char *kt_buf_take(struct kt_buf *b, size_t *len)
{
    char *p = b->data;

    if (len) {
        *len = b->len;
    }
    if (!p) {
        p = kt_xstrdup("");
    }
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

void kt_buf_truncate(struct kt_buf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        b->data[len] = '\0';
    }
}

void kt_buf_reset(struct kt_buf *b)
{
    kt_buf_truncate(b, 0);
}

void kt_buf_recycle(struct kt_buf *b, size_t max, size_t keep)
{
    if (b->cap > keep || b->max != max) {
        kt_buf_release(b);
        kt_buf_init(b, max);
    } else {
        kt_buf_reset(b);
    }
}

void kt_buf_release(struct kt_buf *b)
{
    if (!b) {
        return;
    }
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

int kt_buf_read_file(struct kt_buf *b, const char *path, struct kt_err *err)
{
    FILE *f;
    char chunk[65536];
    size_t n;
    int rc = 0;
    bool in = strcmp(path, "-") == 0;
    const char *shown = in ? "<stdin>" : path;

    f = in ? stdin : fopen(path, "rb");
    if (!f) {
        return kt_err_set(err, KT_EIO, "%s: %s", shown, strerror(errno));
    }
    for (;;) {
        n = fread(chunk, 1, sizeof(chunk), f);
        if (n == 0) {
            break;
        }
        if (kt_buf_append(b, chunk, n, err) < 0) {
            rc = kt_err_prefix(err, "%s", shown);
            break;
        }
    }
    if (rc == 0 && ferror(f)) {
        rc = kt_err_set(err, KT_EIO, "%s: read error", shown);
    }
    if (rc == 0 && !b->data) {
        rc = kt_buf_append(b, "", 0, err);
    }
    if (f != stdin) {
        fclose(f);
    }
    return rc;
}
