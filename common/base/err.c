/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/err.c - the error record and the code table. */
#include "common/base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_text[] = {
#define KT_ERR_TEXT(name, text) text,
    KT_ERR_CODES(KT_ERR_TEXT)
#undef KT_ERR_TEXT
};

int kt_err_set(struct kt_err *err, enum kt_code code, const char *fmt, ...)
{
    va_list ap;

    if (!err) {
        return -1;
    }
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int kt_err_prefix(struct kt_err *err, const char *fmt, ...)
{
    char prefix[256];
    char old[sizeof(err->msg)];
    va_list ap;

    if (!err) {
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    /* Truncation is intended: the record has a fixed size. */
    size_t n = strlen(prefix);
    if (n > sizeof(err->msg) - 3) {
        n = sizeof(err->msg) - 3;
    }
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    size_t room = sizeof(err->msg) - n - 3;
    size_t m = strnlen(old, room);
    memcpy(err->msg + n + 2, old, m);
    err->msg[n + 2 + m] = '\0';
    return -1;
}

const char *kt_err_code_str(enum kt_code code)
{
    if ((int)code < 0 || code >= KT_ECOUNT) {
        return "unknown error";
    }
    return code_text[code];
}

void kt__assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "kt: assertion failed: %s (%s:%d)\n", expr, file, line);
    abort();
}
