/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/json.c - jansson helpers: parse, our own serializer, getters, equality.
 *
 * The serializer walks the json_t tree itself so that reals print in Go's shortest
 * round-trip form and strings can be escaped the way Go's encoding/json does. It
 * does not validate UTF-8 again: jansson already did when the strings were made. */
#include "common/base/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

/* Does the integer token t[0..n) fit in json_int_t? */
static bool int_fits(const char *t, size_t n)
{
    const char *lim = t[0] == '-' ? "9223372036854775808" : "9223372036854775807";
    size_t digits = t[0] == '-' ? n - 1 : n;
    size_t ll = strlen(lim);

    return digits < ll || (digits == ll && memcmp(t + (n - digits), lim, ll) <= 0);
}

/* Copy data with ".0" after every integer token beyond int64, so jansson reads it as a
 * real the way Go's decoder reads every number into a float64. Caller frees. */
static char *widen_big_ints(const char *data, size_t len, size_t *out_len)
{
    char *w = kt_xmalloc(len * 2 + 3);
    size_t o = 0;
    size_t i = 0;
    size_t start;
    bool in_str = false;
    bool integral;

    while (i < len) {
        char c = data[i];

        if (in_str || c == '"') {
            w[o++] = c;
            if (c == '\\' && in_str && i + 1 < len) {
                w[o++] = data[++i];
            } else if (c == '"') {
                in_str = !in_str;
            }
            i++;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9')) {
            w[o++] = c;
            i++;
            continue;
        }
        /* A whole number token; only pure integers are widened. */
        start = i;
        integral = true;
        for (i++; i < len && data[i] && strchr("0123456789.eE+-", data[i]); i++) {
            integral = integral && data[i] >= '0' && data[i] <= '9';
        }
        memcpy(w + o, data + start, i - start);
        o += i - start;
        if (integral && i - start > 1 && !int_fits(data + start, i - start)) {
            w[o++] = '.';
            w[o++] = '0';
        }
    }
    w[o] = '\0';
    *out_len = o;
    return w;
}

json_t *kt_json_parse(const char *data, size_t len, struct kt_err *err)
{
    json_error_t jerr;
    json_t *v;

    /* Without JSON_REJECT_DUPLICATES jansson keeps the last duplicate, like Go. Decoding is
     * where input size turns into memory: a failed allocation fails this parse, not the
     * process (mem.h's soft scope). */
    kt_mem_soft_begin();
    v = json_loadb(data ? data : "", data ? len : 0, JSON_DECODE_ANY, &jerr);
    kt_mem_soft_end();
    if (!v && data && strstr(jerr.text, "too big")) {
        size_t wlen;
        char *wide = widen_big_ints(data, len, &wlen);

        kt_mem_soft_begin();
        v = json_loadb(wide, wlen, JSON_DECODE_ANY, &jerr);
        kt_mem_soft_end();
        free(wide);
    }
    if (!v) {
        kt_err_set(err, KT_EPARSE, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    return v;
}

json_t *kt__json_unconst(const json_t *v)
{
    json_t *r;

    memcpy(&r, &v, sizeof(r));
    return r;
}

/* ---- shortest round-trip reals ---- */

static bool round_trips(double v, int bits32, int prec, char *tmp, size_t cap)
{
    snprintf(tmp, cap, "%.*e", prec - 1, v);
    return bits32 ? strtof(tmp, NULL) == (float)v : strtod(tmp, NULL) == v;
}

/* Shortest digits that read back as v (as a float when bits32). digits gets them without
 * sign or point, *exp10 the decimal exponent of the first digit. Returns the count. */
static int real_digits(double v, int bits32, char *digits, int *exp10)
{
    char tmp[40];
    int max = bits32 ? 9 : 17;
    int lo;
    int hi;
    int prec;
    int n = 0;
    const char *p;
    int sign;

    /* Round-tripping is monotonic in the precision: short values (0.5, 1.5) are found
     * by the first tries, the rest by bisection instead of 17 printf calls. */
    for (prec = 1; prec <= 3; prec++) {
        if (round_trips(v, bits32, prec, tmp, sizeof(tmp))) {
            goto found;
        }
    }
    lo = 4;
    hi = max;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (round_trips(v, bits32, mid, tmp, sizeof(tmp))) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    round_trips(v, bits32, lo, tmp, sizeof(tmp));
found:
    p = tmp;
    if (*p == '-') {
        p++;
    }
    for (; *p && *p != 'e'; p++) {
        if (*p != '.') {
            digits[n++] = *p;
        }
    }
    while (n > 1 && digits[n - 1] == '0') {
        n--;
    }
    digits[n] = '\0';
    /* snprintf wrote "e+XX" or "e-XXX"; read the exponent back. */
    *exp10 = 0;
    sign = 1;
    if (*p == 'e') {
        p++;
        sign = *p == '-' ? -1 : 1;
        for (p++; *p >= '0' && *p <= '9'; p++) {
            *exp10 = *exp10 * 10 + (*p - '0');
        }
    }
    *exp10 *= sign;
    return n;
}

/* Write digits d (n of them, value d.ddd x 10^x) in plain decimal notation. */
static size_t fmt_fixed(char *out, const char *d, int n, int x)
{
    size_t o = 0;
    int i;

    if (x < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (i = -1; i > x; i--) {
            out[o++] = '0';
        }
        memcpy(out + o, d, (size_t)n);
        return o + (size_t)n;
    }
    for (i = 0; i <= x; i++) {
        out[o++] = i < n ? d[i] : '0';
    }
    if (n > x + 1) {
        out[o++] = '.';
        memcpy(out + o, d + x + 1, (size_t)(n - x - 1));
        o += (size_t)(n - x - 1);
    }
    return o;
}

/* Write d.ddd then "e" and the exponent; Go pads the exponent to two digits unless
 * clean is set (encoding/json drops the padding). */
static size_t fmt_exp(char *out, const char *d, int n, int x, int clean)
{
    size_t o = 0;
    int w;

    out[o++] = d[0];
    if (n > 1) {
        out[o++] = '.';
        memcpy(out + o, d + 1, (size_t)(n - 1));
        o += (size_t)(n - 1);
    }
    w = snprintf(out + o, 16, clean ? "e%+d" : "e%+03d", x);
    return o + (size_t)w;
}

size_t kt_json_format_real(double v, char *out)
{
    char d[24];
    int x;
    int n;
    size_t o = 0;
    double a = fabs(v);

    if (isnan(v) || isinf(v)) {
        memcpy(out, "null", 5);
        return 4;
    }
    n = real_digits(v, 0, d, &x);
    if (signbit(v)) {
        out[o++] = '-';
    }
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        o += fmt_exp(out + o, d, n, x, 1);
    } else {
        o += fmt_fixed(out + o, d, n, x);
    }
    out[o] = '\0';
    return o;
}

size_t kt_json_format_float32_key(double v, char *out)
{
    char d[24];
    int x;
    int n;
    size_t o = 0;

    if (isnan(v)) {
        memcpy(out, ".nan", 5);
        return 4;
    }
    if (isinf(v) || isinf((float)v)) {
        memcpy(out, v > 0 ? ".inf" : "-.inf", v > 0 ? 5 : 6);
        return v > 0 ? 4 : 5;
    }
    n = real_digits(v, 1, d, &x);
    if (signbit(v)) {
        out[o++] = '-';
    }
    if (x < -4 || x >= 6) {
        o += fmt_exp(out + o, d, n, x, 0);
    } else {
        o += fmt_fixed(out + o, d, n, x);
    }
    out[o] = '\0';
    return o;
}

/* ---- serializer ---- */

enum { DUMP_PRETTY = 1, DUMP_GO = 2 };

struct dump {
    struct kt_buf *b;
    struct kt_err *err;
    int flags;
};

static int put(struct dump *d, const char *s, size_t n)
{
    return kt_buf_append(d->b, s, n, d->err);
}

/* Does byte sequence at p need escaping? Returns the escape text length in esc. */
static size_t escape_at(const unsigned char *p, const unsigned char *end, int go, char *esc)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char c = *p;

    switch (c) {
    case '"':
    case '\\':
        esc[0] = '\\';
        esc[1] = (char)c;
        return 2;
    case '\b':
        memcpy(esc, "\\b", 2);
        return 2;
    case '\f':
        memcpy(esc, "\\f", 2);
        return 2;
    case '\n':
        memcpy(esc, "\\n", 2);
        return 2;
    case '\r':
        memcpy(esc, "\\r", 2);
        return 2;
    case '\t':
        memcpy(esc, "\\t", 2);
        return 2;
    default:
        break;
    }
    if (c < 0x20 || (go && (c == '<' || c == '>' || c == '&'))) {
        memcpy(esc, "\\u00", 4);
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        return 6;
    }
    /* U+2028 and U+2029 (E2 80 A8/A9) break JavaScript; Go escapes them. */
    if (go && c == 0xE2 && end - p >= 3 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
        memcpy(esc, p[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
        return 6;
    }
    return 0;
}

/* The bytes escape_at may escape: 1 in either mode, 2 in Go's only. Every other byte is
 * copied as it is, in runs. */
static const unsigned char may_escape[256] = {
    [0] = 1,   [1] = 1,    [2] = 1,   [3] = 1,   [4] = 1,   [5] = 1,    [6] = 1,  [7] = 1,
    [8] = 1,   [9] = 1,    [10] = 1,  [11] = 1,  [12] = 1,  [13] = 1,   [14] = 1, [15] = 1,
    [16] = 1,  [17] = 1,   [18] = 1,  [19] = 1,  [20] = 1,  [21] = 1,   [22] = 1, [23] = 1,
    [24] = 1,  [25] = 1,   [26] = 1,  [27] = 1,  [28] = 1,  [29] = 1,   [30] = 1, [31] = 1,
    ['"'] = 1, ['\\'] = 1, ['<'] = 2, ['>'] = 2, ['&'] = 2, [0xE2] = 2,
};

static int dump_string(struct dump *d, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + len;
    const unsigned char *run = p;
    const unsigned char mask = d->flags & DUMP_GO ? 3 : 1;
    char esc[8];
    size_t n;

    if (put(d, "\"", 1) < 0) {
        return -1;
    }
    while (p < end) {
        if (!(may_escape[*p] & mask)) {
            p++;
            continue;
        }
        n = escape_at(p, end, d->flags & DUMP_GO, esc);
        if (!n) {
            p++;
            continue;
        }
        if (put(d, (const char *)run, (size_t)(p - run)) < 0 || put(d, esc, n) < 0) {
            return -1;
        }
        p += (*p == 0xE2) ? 3 : 1;
        run = p;
    }
    if (put(d, (const char *)run, (size_t)(p - run)) < 0) {
        return -1;
    }
    return put(d, "\"", 1);
}

static int dump_value(struct dump *d, const json_t *v, int depth);

static int newline_indent(struct dump *d, int depth)
{
    static const char spaces[] = "\n                                ";
    int n = depth * 2;

    if (!(d->flags & DUMP_PRETTY)) {
        return 0;
    }
    if (put(d, "\n", 1) < 0) {
        return -1;
    }
    while (n > 0) {
        int k = n > 32 ? 32 : n;
        if (put(d, spaces + 1, (size_t)k) < 0) {
            return -1;
        }
        n -= k;
    }
    return 0;
}

static int dump_object(struct dump *d, const json_t *v, int depth)
{
    const char *key;
    json_t *val;
    int first = 1;

    if (json_object_size(v) == 0) {
        return put(d, "{}", 2);
    }
    if (put(d, "{", 1) < 0) {
        return -1;
    }
    json_object_foreach(kt__json_unconst(v), key, val)
    {
        if ((!first && put(d, ",", 1) < 0) || newline_indent(d, depth + 1) < 0) {
            return -1;
        }
        first = 0;
        if (dump_string(d, key, strlen(key)) < 0 || put(d, ":", 1) < 0 ||
            ((d->flags & DUMP_PRETTY) && put(d, " ", 1) < 0) || dump_value(d, val, depth + 1) < 0) {
            return -1;
        }
    }
    if (newline_indent(d, depth) < 0) {
        return -1;
    }
    return put(d, "}", 1);
}

static int dump_array(struct dump *d, const json_t *v, int depth)
{
    size_t i;
    size_t n = json_array_size(v);

    if (n == 0) {
        return put(d, "[]", 2);
    }
    if (put(d, "[", 1) < 0) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        if ((i > 0 && put(d, ",", 1) < 0) || newline_indent(d, depth + 1) < 0 ||
            dump_value(d, json_array_get(v, i), depth + 1) < 0) {
            return -1;
        }
    }
    if (newline_indent(d, depth) < 0) {
        return -1;
    }
    return put(d, "]", 1);
}

static int dump_value(struct dump *d, const json_t *v, int depth)
{
    char num[64];
    int n;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return dump_object(d, v, depth);
    case JSON_ARRAY:
        return dump_array(d, v, depth);
    case JSON_STRING:
        return dump_string(d, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return put(d, num, (size_t)n);
    case JSON_REAL:
        return put(d, num, kt_json_format_real(json_real_value(v), num));
    case JSON_TRUE:
        return put(d, "true", 4);
    case JSON_FALSE:
        return put(d, "false", 5);
    case JSON_NULL:
    default:
        return put(d, "null", 4);
    }
}

static char *dump_alloc(const json_t *v, int flags)
{
    struct kt_buf b;
    struct dump d = {.b = &b, .flags = flags};

    kt_buf_init(&b, (size_t)-1 / 2);
    if (!v) {
        return kt_xstrdup("null");
    }
    if (dump_value(&d, v, 0) < 0) {
        kt_buf_release(&b);
        return kt_xstrdup("null");
    }
    return kt_buf_take(&b, NULL);
}

char *kt_json_dump(const json_t *v)
{
    return dump_alloc(v, 0);
}

char *kt_json_dump_pretty(const json_t *v)
{
    return dump_alloc(v, DUMP_PRETTY);
}

char *kt_json_dump_go(const json_t *v)
{
    return dump_alloc(v, DUMP_GO);
}

int kt_json_dump_buf(const json_t *v, struct kt_buf *b, struct kt_err *err)
{
    struct dump d = {.b = b, .err = err};

    if (!v) {
        return put(&d, "null", 4);
    }
    return dump_value(&d, v, 0);
}

int kt_json_dump_go_buf(const json_t *v, struct kt_buf *b, struct kt_err *err)
{
    struct dump d = {.b = b, .err = err, .flags = DUMP_GO};

    if (!v) {
        return put(&d, "null", 4);
    }
    return dump_value(&d, v, 0);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **kt_json_sorted_keys(const json_t *obj, size_t *n)
{
    size_t len = json_object_size(obj), i = 0;
    const char **keys = kt_xcalloc(len ? len : 1, sizeof(*keys));
    const char *k;
    json_t *m;
    json_object_foreach(kt__json_unconst(obj), k, m)
    {
        keys[i++] = k;
    }
    qsort(keys, len, sizeof(*keys), cmp_keys);
    *n = len;
    return keys;
}

int kt_json_pointer_push(struct kt_buf *b, const char *token, struct kt_err *err)
{
    int rc = kt_buf_append(b, "/", 1, err);
    for (const char *c = token; *c && rc == 0; c++) {
        const char *e = *c == '~' ? "~0" : *c == '/' ? "~1" : NULL;
        rc = kt_buf_append(b, e ? e : c, e ? 2 : 1, err);
    }
    return rc;
}

/* ---- getters ---- */

json_t *kt_json_path(const json_t *root, const char *dotted)
{
    const json_t *cur = root;
    const char *p = dotted;

    while (cur && p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);

        if (!json_is_object(cur)) {
            return NULL;
        }
        cur = json_object_getn(cur, p, n);
        p = dot ? dot + 1 : NULL;
    }
    return kt__json_unconst(cur);
}

const char *kt_json_str(const json_t *obj, const char *key, const char *def)
{
    const json_t *v = json_object_get(obj, key);

    return json_is_string(v) ? json_string_value(v) : def;
}

int64_t kt_json_int(const json_t *obj, const char *key, int64_t def)
{
    const json_t *v = json_object_get(obj, key);

    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

bool kt_json_bool(const json_t *obj, const char *key, bool def)
{
    const json_t *v = json_object_get(obj, key);

    return json_is_boolean(v) ? json_is_true(v) : def;
}

static json_t *ensure(json_t *obj, const char *key, json_type type)
{
    json_t *v;

    if (!json_is_object(obj)) {
        return NULL;
    }
    v = json_object_get(obj, key);
    if (v && !json_is_null(v)) {
        return json_typeof(v) == type ? v : NULL;
    }
    v = type == JSON_OBJECT ? json_object() : json_array();
    if (json_object_set_new(obj, key, v) < 0) {
        return NULL;
    }
    return v;
}

json_t *kt_json_obj_ensure(json_t *obj, const char *key)
{
    return ensure(obj, key, JSON_OBJECT);
}

json_t *kt_json_arr_ensure(json_t *obj, const char *key)
{
    return ensure(obj, key, JSON_ARRAY);
}

json_t *kt_json_arr_find(const json_t *arr, const char *key, const char *val, size_t *index)
{
    size_t i;
    size_t n = json_array_size(arr);

    for (i = 0; i < n; i++) {
        json_t *item = json_array_get(arr, i);
        const char *s = kt_json_str(item, key, NULL);

        if (s && val && strcmp(s, val) == 0) {
            if (index) {
                *index = i;
            }
            return item;
        }
    }
    return NULL;
}

static bool equal_object(const json_t *a, const json_t *b)
{
    const char *key;
    json_t *va;

    if (json_object_size(a) != json_object_size(b)) {
        return false;
    }
    json_object_foreach(kt__json_unconst(a), key, va)
    {
        const json_t *vb = json_object_get(b, key);

        if (!vb || !kt_json_equal(va, vb)) {
            return false;
        }
    }
    return true;
}

bool kt_json_equal(const json_t *a, const json_t *b)
{
    size_t i;

    if (a == b) {
        return true;
    }
    if (!a || !b) {
        return false;
    }
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b)) {
            return json_integer_value(a) == json_integer_value(b);
        }
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b)) {
        return false;
    }
    switch (json_typeof(a)) {
    case JSON_OBJECT:
        return equal_object(a, b);
    case JSON_ARRAY:
        if (json_array_size(a) != json_array_size(b)) {
            return false;
        }
        for (i = 0; i < json_array_size(a); i++) {
            if (!kt_json_equal(json_array_get(a, i), json_array_get(b, i))) {
                return false;
            }
        }
        return true;
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    default:
        return true;
    }
}

json_t *kt_json_clone(const json_t *v)
{
    size_t i;
    json_t *m;
    json_t *out;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        out = json_object();
        union {
            const json_t *c;
            json_t *m;
        } u = {.c = v};
        for (void *it = json_object_iter(u.m); it; it = json_object_iter_next(u.m, it)) {
            json_object_set_new_nocheck(out, json_object_iter_key(it),
                                        kt_json_clone(json_object_iter_value(it)));
        }
        return out;
    }
    case JSON_ARRAY:
        out = json_array();
        json_array_foreach(v, i, m)
        {
            json_array_append_new(out, kt_json_clone(m));
        }
        return out;
    case JSON_STRING:
        return json_stringn_nocheck(json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return json_integer(json_integer_value(v));
    case JSON_REAL:
        return json_real(json_real_value(v));
    case JSON_TRUE:
        return json_true();
    case JSON_FALSE:
        return json_false();
    case JSON_NULL:
        return json_null();
    default:
        return NULL;
    }
}
