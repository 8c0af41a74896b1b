/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/quantity.c - exact Kubernetes quantities (docs/internals/upstream.md#quantities).
 *
 * Behaviour follows k8s.io/apimachinery/pkg/api/resource (quantity.go, suffix.go, amount.go):
 * the same scanner, the same rounding (up, away from zero, to 1n), the same BinarySI cap,
 * the same canonical String(). The value is a 128-bit count of nano units; upstream's
 * arbitrary-precision fallback is replaced by a KT_ERANGE error beyond 10^38 nano. */
#include "common/base/quantity.h"

#include "common/base/str.h"
#include "common/base/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANO ((kt_i128)1000000000)

static const char ERR_FORMAT[] = "quantities must match the regular expression "
                                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char ERR_SUFFIX[] = "unable to parse quantity's suffix";
static const char ERR_NUMERIC[] = "unable to parse numeric part of quantity";
static const char ERR_RANGE[] = "quantity too large";

/* 10^38: magnitudes at or above it are outside what we represent. */
static kt_i128 nano_limit(void)
{
    kt_i128 v = 1;
    for (int i = 0; i < 38; i++) {
        v *= 10;
    }
    return v;
}

static kt_i128 i128_abs(kt_i128 v)
{
    return v < 0 ? -v : v;
}

/* The pieces parseQuantityString finds. */
struct qscan {
    bool positive;
    bool has_digit;       /* the numeric text holds a digit (inf.Dec would accept it) */
    struct kt_str num;    /* integer digits without leading zeros; may be empty ("0") */
    struct kt_str denom;  /* fraction digits */
    struct kt_str suffix; /* everything after the number */
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static size_t scan_digits(const char *s, size_t pos, size_t end)
{
    while (pos < end && is_digit(s[pos])) {
        pos++;
    }
    return pos;
}

/* Mirrors upstream's scanner, including what it accepts ("-", ".", "1.") and rejects. */
static int qscan_run(const char *s, size_t end, struct qscan *q, struct kt_err *err)
{
    size_t pos = 0;

    memset(q, 0, sizeof(*q));
    q->positive = true;
    if (end > 0 && (s[0] == '-' || s[0] == '+')) {
        q->positive = s[0] != '-';
        pos++;
    }
    while (pos < end && s[pos] == '0') {
        pos++;
        q->has_digit = true;
    }
    if (pos >= end) {
        q->has_digit = true; /* upstream returns "0" here */
        return 0;
    }
    size_t start = pos;
    pos = scan_digits(s, pos, end);
    q->num = (struct kt_str){.ptr = s + start, .len = pos - start};
    if (pos < end && s[pos] == '.') {
        pos++;
        start = pos;
        pos = scan_digits(s, pos, end);
        q->denom = (struct kt_str){.ptr = s + start, .len = pos - start};
    }
    q->has_digit = q->has_digit || q->num.len > 0 || q->denom.len > 0;
    start = pos;
    while (pos < end && s[pos] != '\0' && strchr("eEinumkKMGTP", s[pos]) != NULL) {
        pos++;
    }
    if (pos < end && (s[pos] == '-' || s[pos] == '+')) {
        pos++;
    }
    pos = scan_digits(s, pos, end);
    if (pos < end) {
        return kt_err_set(err, KT_EPARSE, "%s", ERR_FORMAT);
    }
    q->suffix = (struct kt_str){.ptr = s + start, .len = end - start};
    return 0;
}

/* Upstream's suffix table: base 10 or 2, and the exponent. */
struct qsuffix {
    const char *text;
    int base;
    int exp;
};

static const struct qsuffix SUFFIXES[] = {
    {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},  {"M", 10, 6},
    {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
    {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
};

/* Go's strconv.ParseInt(s, 10, 64) truncated to int32 as upstream does (int32(parsed)). */
static bool parse_exponent(struct kt_str s, int32_t *out)
{
    size_t i = 0;
    bool neg = false;
    uint64_t v = 0;

    if (s.len > 0 && (s.ptr[0] == '+' || s.ptr[0] == '-')) {
        neg = s.ptr[0] == '-';
        i = 1;
    }
    if (i >= s.len) {
        return false;
    }
    for (; i < s.len; i++) {
        if (!is_digit(s.ptr[i])) {
            return false;
        }
        v = v * 10 + (uint64_t)(s.ptr[i] - '0');
        if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
            return false;
        }
    }
    uint64_t bits = neg ? (uint64_t)0 - v : v;
    *out = (int32_t)(uint32_t)(bits & 0xffffffffu);
    return true;
}

static int interpret_suffix(struct kt_str s, int *base, int32_t *exp, enum kt_qformat *fmt)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(SUFFIXES); i++) {
        if (kt_str_eq(s, SUFFIXES[i].text)) {
            *base = SUFFIXES[i].base;
            *exp = SUFFIXES[i].exp;
            *fmt = *base == 2 ? KT_QF_BINARY_SI : KT_QF_DECIMAL_SI;
            return 0;
        }
    }
    if (s.len > 1 && (s.ptr[0] == 'e' || s.ptr[0] == 'E')) {
        if (parse_exponent((struct kt_str){.ptr = s.ptr + 1, .len = s.len - 1}, exp)) {
            *base = 10;
            *fmt = KT_QF_DECIMAL_EXPONENT;
            return 0;
        }
    }
    return -1;
}

/* The digits of num followed by those of denom, read by index. */
struct digits {
    struct kt_str a, b;
};

static int digit_at(const struct digits *d, size_t i)
{
    if (i < d->a.len) {
        return d->a.ptr[i] - '0';
    }
    return d->b.ptr[i - d->a.len] - '0';
}

/* value = digits * 10^scale, rounded up (away from zero) to nano units. */
static int decimal_nano(const struct digits *d, int64_t scale, kt_i128 *out, struct kt_err *err)
{
    size_t total = d->a.len + d->b.len, start = 0;
    kt_i128 acc = 0;

    while (start < total && digit_at(d, start) == 0) {
        start++;
    }
    if (start == total) {
        *out = 0;
        return 0;
    }
    size_t len = total - start;
    int64_t shift = scale + 9;
    if (shift < 0 && (uint64_t)-shift >= len) {
        *out = 1; /* below 1n: upstream rounds up to the smallest amount */
        return 0;
    }
    size_t keep = shift < 0 ? len - (size_t)-shift : len;
    if (keep + (size_t)(shift > 0 ? shift : 0) > 38) {
        return kt_err_set(err, KT_ERANGE, "%s", ERR_RANGE);
    }
    for (size_t i = 0; i < keep; i++) {
        acc = acc * 10 + digit_at(d, start + i);
    }
    for (int64_t i = 0; i < shift; i++) {
        acc *= 10;
    }
    for (size_t i = start + keep; i < total; i++) {
        if (digit_at(d, i) != 0) {
            acc += 1;
            break;
        }
    }
    if (acc >= nano_limit()) {
        return kt_err_set(err, KT_ERANGE, "%s", ERR_RANGE);
    }
    *out = acc;
    return 0;
}

/* value = (num.denom) * 2^exp in nano units, rounded up, capped at 2^63-1 like upstream. */
static void binary_nano(struct kt_str num, struct kt_str denom, int exp, kt_i128 *out)
{
    const kt_i128 cap = (kt_i128)INT64_MAX * NANO;
    kt_i128 ip = 0, r = 0, m = ((kt_i128)1 << exp) * NANO;
    bool sticky = false;

    if (num.len > 19) {
        *out = cap;
        return;
    }
    for (size_t i = 0; i < num.len; i++) {
        ip = ip * 10 + (num.ptr[i] - '0');
    }
    ip <<= exp;
    if (ip > (kt_i128)INT64_MAX) {
        *out = cap;
        return;
    }
    /* Horner from the last fraction digit keeps floor(frac * 2^exp * 10^9) exact. */
    for (size_t i = denom.len; i > 0; i--) {
        kt_i128 t = (denom.ptr[i - 1] - '0') * m + r;
        r = t / 10;
        sticky = sticky || t % 10 != 0;
    }
    kt_i128 total = ip * NANO + r + (sticky ? 1 : 0);
    *out = total > cap ? cap : total;
}

/* Whether upstream's fast path keeps the input text as the String() result. */
static bool keeps_text(const struct qscan *q, int base, int32_t exp)
{
    size_t nlen = q->num.len > 0 ? q->num.len : 1;

    if (base == 2) {
        if (q->denom.len != 0 || 15 - (int)nlen - (exp * 3) / 10 - 1 < 0) {
            return false;
        }
        int64_t v = 0;
        for (size_t i = 0; i < q->num.len; i++) {
            v = v * 10 + (q->num.ptr[i] - '0');
        }
        return (v & 7) != 0;
    }
    if (18 - (int64_t)(nlen + q->denom.len) < 0) {
        return false;
    }
    int32_t scale = (int32_t)(uint32_t)((uint32_t)exp - (uint32_t)q->denom.len);
    if (scale < -9 || scale % 3 != 0 || q->num.len == 0) {
        return false;
    }
    /* shifted = num + denom must not end in "000". */
    struct digits d = {.a = q->num, .b = q->denom};
    size_t total = q->num.len + q->denom.len;
    return !(total >= 3 && digit_at(&d, total - 1) == 0 && digit_at(&d, total - 2) == 0 &&
             digit_at(&d, total - 3) == 0);
}

/* Whether upstream takes the int64 fast path (which never needs inf.Dec's parser). */
static bool fast_path(const struct qscan *q, int base, int32_t exp)
{
    size_t nlen = q->num.len > 0 ? q->num.len : 1;

    if (base == 2) {
        return q->denom.len == 0 && 15 - (int)nlen - (exp * 3) / 10 - 1 >= 0;
    }
    int32_t scale = (int32_t)(uint32_t)((uint32_t)exp - (uint32_t)q->denom.len);
    return 18 - (int64_t)(nlen + q->denom.len) >= 0 && scale >= -9;
}

int kt_quantity_parse(const char *s, size_t len, struct kt_quantity *out, struct kt_err *err)
{
    struct qscan q;
    struct kt_quantity r = {0};
    int base = 10;
    int32_t exp = 0;

    if (len == 0) {
        return kt_err_set(err, KT_EPARSE, "%s", ERR_FORMAT);
    }
    if (qscan_run(s, len, &q, err) < 0) {
        return -1;
    }
    if (interpret_suffix(q.suffix, &base, &exp, &r.format) < 0) {
        return kt_err_set(err, KT_EPARSE, "%s", ERR_SUFFIX);
    }
    if (!q.has_digit && !fast_path(&q, base, exp)) {
        return kt_err_set(err, KT_EPARSE, "%s", ERR_NUMERIC);
    }
    if (base == 2) {
        binary_nano(q.num, q.denom, exp, &r.nano);
        if (r.nano > 0 && r.nano < NANO) {
            r.format = KT_QF_DECIMAL_SI; /* upstream: a binary value below 1 is decimal */
        }
    } else {
        struct digits d = {.a = q.num, .b = q.denom};
        if (decimal_nano(&d, (int64_t)exp - (int64_t)q.denom.len, &r.nano, err) < 0) {
            return -1;
        }
    }
    if (!q.positive) {
        r.nano = -r.nano;
    }
    if ((keeps_text(&q, base, exp) || (len == 1 && s[0] == '0')) && len < sizeof(r.text)) {
        memcpy(r.text, s, len);
        r.text[len] = '\0';
    }
    *out = r;
    return 0;
}

int kt_quantity_parse_c(const char *s, struct kt_quantity *out, struct kt_err *err)
{
    return kt_quantity_parse(s, strlen(s), out, err);
}

/* Decimal digits of |v| (v != INT128_MIN) into buf, with a leading '-' when negative. */
static size_t i128_to_str(kt_i128 v, char *buf, size_t size)
{
    char tmp[48];
    size_t n = 0, o = 0;
    kt_i128 a = i128_abs(v);

    do {
        tmp[n++] = (char)('0' + (int)(a % 10));
        a /= 10;
    } while (a != 0 && n < sizeof(tmp));
    if (v < 0 && o + 1 < size) {
        buf[o++] = '-';
    }
    while (n > 0 && o + 1 < size) {
        buf[o++] = tmp[--n];
    }
    if (size > 0) {
        buf[o] = '\0';
    }
    return o;
}

static const char *dec_suffix(int exp)
{
    static const char *const names[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    if (exp < -9 || exp > 18 || exp % 3 != 0) {
        return ""; /* upstream finds no suffix and prints the bare mantissa */
    }
    return names[(exp + 9) / 3];
}

static char *format_decimal(kt_i128 nano, enum kt_qformat f, char *buf, size_t size)
{
    kt_i128 m = nano;
    int exp = -9;

    while (m % 10 == 0) {
        m /= 10;
        exp++;
    }
    while (((exp % 3) + 3) % 3 != 0) {
        m *= 10;
        exp--;
    }
    size_t n = i128_to_str(m, buf, size);
    if (f == KT_QF_DECIMAL_EXPONENT) {
        if (exp != 0) {
            snprintf(buf + n, size - n, "e%d", exp);
        }
        return buf;
    }
    snprintf(buf + n, size - n, "%s", dec_suffix(exp));
    return buf;
}

char *kt_quantity_format(const struct kt_quantity *q, char *buf, size_t size)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

    if (size == 0) {
        return buf;
    }
    if (q->text[0] != '\0') {
        snprintf(buf, size, "%s", q->text);
        return buf;
    }
    if (q->nano == 0) {
        snprintf(buf, size, "0");
        return buf;
    }
    if (q->format != KT_QF_BINARY_SI || i128_abs(q->nano) < 1024 * NANO || q->nano % NANO != 0) {
        return format_decimal(q->nano,
                              q->format == KT_QF_DECIMAL_EXPONENT ? KT_QF_DECIMAL_EXPONENT
                                                                  : KT_QF_DECIMAL_SI,
                              buf, size);
    }
    kt_i128 m = q->nano / NANO;
    size_t k = 0;
    while (m % 1024 == 0) {
        m /= 1024;
        k++;
    }
    size_t n = i128_to_str(m, buf, size);
    snprintf(buf + n, size - n, "%s", k < KT_ARRAY_SIZE(bin) ? bin[k] : "");
    return buf;
}

json_t *kt_quantity_to_json(const struct kt_quantity *q)
{
    char buf[KT_QUANTITY_STR_MAX];
    return json_string(kt_quantity_format(q, buf, sizeof(buf)));
}

int kt_quantity_cmp(const struct kt_quantity *a, const struct kt_quantity *b)
{
    return a->nano < b->nano ? -1 : (a->nano > b->nano ? 1 : 0);
}

bool kt_quantity_is_zero(const struct kt_quantity *q)
{
    return q->nano == 0;
}

int kt_quantity_sign(const struct kt_quantity *q)
{
    return q->nano < 0 ? -1 : (q->nano > 0 ? 1 : 0);
}

static int add_nano(struct kt_quantity *a, const struct kt_quantity *b, kt_i128 delta,
                    struct kt_err *err)
{
    kt_i128 sum;

    if (__builtin_add_overflow(a->nano, delta, &sum) || i128_abs(sum) >= nano_limit()) {
        return kt_err_set(err, KT_ERANGE, "%s", ERR_RANGE);
    }
    if (a->nano == 0) {
        a->format = b->format;
    }
    a->nano = sum;
    a->text[0] = '\0';
    return 0;
}

int kt_quantity_add(struct kt_quantity *a, const struct kt_quantity *b, struct kt_err *err)
{
    return add_nano(a, b, b->nano, err);
}

int kt_quantity_sub(struct kt_quantity *a, const struct kt_quantity *b, struct kt_err *err)
{
    return add_nano(a, b, -b->nano, err);
}

int kt_quantity_mul(struct kt_quantity *q, int64_t n, struct kt_err *err)
{
    kt_i128 r;

    if (__builtin_mul_overflow(q->nano, (kt_i128)n, &r) || i128_abs(r) >= nano_limit()) {
        return kt_err_set(err, KT_ERANGE, "%s", ERR_RANGE);
    }
    q->nano = r;
    q->text[0] = '\0';
    return 0;
}

/* ceil(|nano| / unit) with the sign of nano, as upstream's ScaledValue. */
static int scaled_value(const struct kt_quantity *q, kt_i128 unit, int64_t *out, struct kt_err *err)
{
    kt_i128 a = i128_abs(q->nano);
    kt_i128 v = (a + unit - 1) / unit;

    if (q->nano < 0) {
        v = -v;
    }
    if (v > INT64_MAX || v < INT64_MIN) {
        return kt_err_set(err, KT_ERANGE, "quantity does not fit in int64");
    }
    *out = (int64_t)v;
    return 0;
}

int kt_quantity_value(const struct kt_quantity *q, int64_t *out, struct kt_err *err)
{
    return scaled_value(q, NANO, out, err);
}

int kt_quantity_milli_value(const struct kt_quantity *q, int64_t *out, struct kt_err *err)
{
    return scaled_value(q, 1000000, out, err);
}

bool kt_quantity_as_int64(const struct kt_quantity *q, int64_t *out)
{
    if (q->nano % NANO != 0) {
        return false;
    }
    kt_i128 v = q->nano / NANO;
    if (v > INT64_MAX || v < INT64_MIN) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

struct kt_quantity kt_quantity_from_int64(int64_t n, enum kt_qformat f)
{
    struct kt_quantity q = {0};
    q.nano = (kt_i128)n * NANO;
    q.format = f;
    return q;
}

struct kt_quantity kt_quantity_from_milli(int64_t n, enum kt_qformat f)
{
    struct kt_quantity q = {0};
    q.nano = (kt_i128)n * 1000000;
    q.format = f;
    return q;
}

/* Length of the Unicode space (Go's unicode.IsSpace) starting at s, or 0. */
static size_t space_len(const unsigned char *s, size_t n)
{
    if (n >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r'))) {
        return 1;
    }
    if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0)) {
        return 2;
    }
    if (n >= 3 && s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80) {
        return 3;
    }
    if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
        (s[2] <= 0x8a || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf) && s[2] >= 0x80) {
        return 3;
    }
    if (n >= 3 && ((s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f) ||
                   (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80))) {
        return 3;
    }
    return 0;
}

/* Length of the Unicode space ending at s[n-1], or 0. */
static size_t space_len_back(const unsigned char *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        if (space_len(s + n - k, k) == k) {
            return k;
        }
    }
    return 0;
}

static int parse_trimmed(const char *s, size_t len, struct kt_quantity *out, struct kt_err *err)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k;

    while (len > 0 && (k = space_len(u, len)) > 0) {
        u += k;
        len -= k;
    }
    while (len > 0 && (k = space_len_back(u, len)) > 0) {
        len -= k;
    }
    return kt_quantity_parse((const char *)u, len, out, err);
}

/* Shortest round-trip decimal digits of v (no sign) and its scientific exponent. */
static size_t shortest_digits(double v, char *digits, size_t size, int *exp10)
{
    char e[40];
    size_t nd = 0;

    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v) {
            break;
        }
    }
    const char *p = e;
    for (; *p != '\0' && *p != 'e'; p++) {
        if (is_digit(*p) && nd + 1 < size) {
            digits[nd++] = *p;
        }
    }
    *exp10 = *p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0;
    while (nd > 1 && digits[nd - 1] == '0') {
        nd--;
    }
    digits[nd] = '\0';
    return nd;
}

/* The text Go's encoding/json writes for a float64: shortest round-trip digits, fixed
 * notation for 1e-6 <= |v| < 1e21, else exponent form with "e-07" cleaned to "e-7". */
static void go_json_float(double v, char *buf, size_t size)
{
    char digits[24], out[64];
    int exp10 = 0;
    size_t o = 0;
    double a = v < 0 ? -v : v;
    size_t nd = shortest_digits(a, digits, sizeof(digits), &exp10);

    if (v < 0 || (v == 0 && signbit(v))) {
        out[o++] = '-';
    }
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        int ae = exp10 < 0 ? -exp10 : exp10;
        snprintf(out + o, sizeof(out) - o, "%c%s%se%c%s%d", digits[0], nd > 1 ? "." : "",
                 digits + 1, exp10 < 0 ? '-' : '+', ae < 10 && exp10 >= 0 ? "0" : "", ae);
        snprintf(buf, size, "%s", out);
        return;
    }
    if (exp10 < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) {
            out[o++] = '0';
        }
        snprintf(out + o, sizeof(out) - o, "%s", digits);
        snprintf(buf, size, "%s", out);
        return;
    }
    for (int i = 0; i <= exp10; i++) {
        out[o++] = (size_t)i < nd ? digits[i] : '0';
    }
    if (nd > (size_t)exp10 + 1) {
        out[o++] = '.';
        snprintf(out + o, sizeof(out) - o, "%s", digits + exp10 + 1);
    } else {
        out[o] = '\0';
    }
    snprintf(buf, size, "%s", out);
}

int kt_quantity_from_json(const json_t *v, struct kt_quantity *out, struct kt_err *err)
{
    char buf[64];

    switch (json_typeof(v)) {
    case JSON_STRING:
        return parse_trimmed(json_string_value(v), json_string_length(v), out, err);
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return kt_quantity_parse_c(buf, out, err);
    case JSON_REAL:
        go_json_float(json_real_value(v), buf, sizeof(buf));
        return kt_quantity_parse_c(buf, out, err);
    case JSON_NULL:
        *out = (struct kt_quantity){0};
        return 0;
    default:
        return kt_err_set(err, KT_EPARSE, "%s", ERR_FORMAT);
    }
}
