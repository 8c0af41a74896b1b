/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/review_json.c - the fast AdmissionReview reader; see review_json.h.
 *
 * One recursive-descent pass over the bytes. A value is either built (out != NULL, with
 * jansson's own constructors and setters, so duplicates and key order come out as jansson's
 * parser makes them) or only checked (out == NULL). Every check is at least as strict as
 * jansson's lexer: a body this reader accepts is one jansson accepts with the same values. */
#include "webhook/review_json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

#define RJ_MAX_DEPTH 256 /* jansson allows 2048; deeper bodies take its path */
#define RJ_MAX_DIGITS 18 /* always fits json_int_t; longer integers take jansson's path */

/* Which members of an object to build: the listed ones (whole, or by sub when set); the
 * others are only checked. */
struct rj_keep {
    const char *name;
    const struct rj_keep *sub;
};

static const struct rj_keep rj_request_keep[] = {
    {"uid", NULL},       {"operation", NULL}, {"kind", NULL},      {"dryRun", NULL},
    {"namespace", NULL}, {"object", NULL},    {"oldObject", NULL}, {NULL, NULL},
};
static const struct rj_keep rj_review_keep[] = {
    {"apiVersion", NULL},
    {"kind", NULL},
    {"request", rj_request_keep},
    {NULL, NULL},
};

struct rj_rd {
    const unsigned char *p;
    const unsigned char *end;
    int depth;
};

/* One string token's raw bytes, between the quotes. */
struct rj_str {
    const unsigned char *s;
    size_t n;
    bool esc; /* holds backslash escapes */
};

static int rj_read_value(struct rj_rd *r, json_t **out);

static void rj_skip_ws(struct rj_rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
        r->p++;
    }
}

static bool rj_at(const struct rj_rd *r, unsigned char c)
{
    return r->p < r->end && *r->p == c;
}

static bool rj_in(unsigned char c, unsigned char lo, unsigned char hi)
{
    return c >= lo && c <= hi;
}

/* Length of the UTF-8 sequence at p (2-4 bytes, p[0] >= 0x80), 0 when jansson would refuse it:
 * a stray continuation byte, an overlong form, a surrogate, past U+10FFFF or cut short. */
static size_t rj_utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t left = (size_t)(end - p);
    unsigned char c = p[0];

    if (rj_in(c, 0xC2, 0xDF)) {
        return left >= 2 && rj_in(p[1], 0x80, 0xBF) ? 2 : 0;
    }
    if (rj_in(c, 0xE0, 0xEF)) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return left >= 3 && rj_in(p[1], lo, hi) && rj_in(p[2], 0x80, 0xBF) ? 3 : 0;
    }
    if (rj_in(c, 0xF0, 0xF4)) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return left >= 4 && rj_in(p[1], lo, hi) && rj_in(p[2], 0x80, 0xBF) &&
                       rj_in(p[3], 0x80, 0xBF)
                   ? 4
                   : 0;
    }
    return 0;
}

/* The 4 hex digits at p (end checked by the caller), or -1. */
static long rj_hex4(const unsigned char *p)
{
    long v = 0;

    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        int d = rj_in(c, '0', '9')   ? c - '0'
                : rj_in(c, 'a', 'f') ? c - 'a' + 10
                : rj_in(c, 'A', 'F') ? c - 'A' + 10
                                     : -1;
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

/* The code point of the \u escape at p ("\uXXXX"; a surrogate pair takes 12 bytes) into *cp
 * and its length into *n; -1 for what jansson refuses (\u0000, a lone or unpaired surrogate,
 * a bad hex digit). */
static int rj_unicode_escape(const unsigned char *p, const unsigned char *end, long *cp, size_t *n)
{
    long hi = end - p >= 6 ? rj_hex4(p + 2) : -1, lo;

    if (hi <= 0 || (hi >= 0xDC00 && hi <= 0xDFFF)) {
        return -1;
    }
    if (hi < 0xD800 || hi > 0xDBFF) {
        *cp = hi;
        *n = 6;
        return 0;
    }
    if (end - p < 12 || p[6] != '\\' || p[7] != 'u') {
        return -1;
    }
    lo = rj_hex4(p + 8);
    if (lo < 0xDC00 || lo > 0xDFFF) {
        return -1;
    }
    *cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
    *n = 12;
    return 0;
}

/* The escape at p (a backslash): its length, and the bytes it stands for into out (up to 4)
 * with their count in *outn. 0 when jansson refuses it. */
static size_t rj_escape(const unsigned char *p, const unsigned char *end, unsigned char *out,
                        size_t *outn)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit = end - p >= 2 && p[1] ? strchr(from, p[1]) : NULL;
    long cp;
    size_t n;

    if (hit) {
        out[0] = (unsigned char)to[hit - from];
        *outn = 1;
        return 2;
    }
    if (end - p < 2 || p[1] != 'u' || rj_unicode_escape(p, end, &cp, &n) < 0) {
        return 0;
    }
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        *outn = 1;
    } else if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        *outn = 2;
    } else if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        *outn = 3;
    } else {
        out[0] = (unsigned char)(0xF0 | (cp >> 18));
        out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (unsigned char)(0x80 | (cp & 0x3F));
        *outn = 4;
    }
    return n;
}

/* The string token at r->p (a quote): check it and note where its bytes are. -1 for a
 * control character, bad UTF-8, a bad escape or a missing closing quote. */
static int rj_scan_string(struct rj_rd *r, struct rj_str *s)
{
    const unsigned char *p = r->p + 1;
    unsigned char tmp[4];
    size_t n, k;

    s->s = p;
    s->esc = false;
    while (p < r->end && *p != '"') {
        if (*p < 0x20) {
            return -1;
        }
        if (*p == '\\') {
            n = rj_escape(p, r->end, tmp, &k);
            if (!n) {
                return -1;
            }
            s->esc = true;
            p += n;
        } else if (*p >= 0x80) {
            n = rj_utf8_len(p, r->end);
            if (!n) {
                return -1;
            }
            p += n;
        } else {
            p++;
        }
    }
    if (p >= r->end) {
        return -1;
    }
    s->n = (size_t)(p - s->s);
    r->p = p + 1;
    return 0;
}

/* The decoded bytes of a checked string with escapes, NUL-terminated, length in *n (never
 * longer than the raw text). Caller owns the result; free with free(). NULL when out of
 * memory. */
static char *rj_unescape(const struct rj_str *s, size_t *n)
{
    char *out = kt_try_malloc(s->n + 1);
    const unsigned char *p = s->s, *end = s->s + s->n;
    size_t o = 0, k;

    if (!out) {
        return NULL;
    }
    while (p < end) {
        if (*p != '\\') {
            out[o++] = (char)*p++;
            continue;
        }
        p += rj_escape(p, end, (unsigned char *)out + o, &k);
        o += k;
    }
    out[o] = '\0';
    *n = o;
    return out;
}

static int rj_read_string(struct rj_rd *r, json_t **out)
{
    struct rj_str s;
    char *dec;
    size_t n;

    if (rj_scan_string(r, &s) < 0) {
        return -1;
    }
    if (!out) {
        return 0;
    }
    if (!s.esc) {
        *out = json_stringn_nocheck((const char *)s.s, s.n);
        return *out ? 0 : -1;
    }
    dec = rj_unescape(&s, &n);
    *out = dec ? json_stringn_nocheck(dec, n) : NULL;
    free(dec);
    return *out ? 0 : -1;
}

/* An integer of at most RJ_MAX_DIGITS digits (jansson's grammar: -?(0|[1-9][0-9]*)); a fraction
 * or an exponent (a real) is left to jansson. */
static int rj_read_number(struct rj_rd *r, json_t **out)
{
    const unsigned char *p = r->p, *digits;
    bool neg = rj_at(r, '-');
    json_int_t v = 0;

    p += neg;
    digits = p;
    while (p < r->end && rj_in(*p, '0', '9')) {
        if (p - digits == RJ_MAX_DIGITS) {
            return -1;
        }
        v = v * 10 + (*p++ - '0');
    }
    if (p == digits || (*digits == '0' && p - digits > 1) ||
        (p < r->end && (*p == '.' || *p == 'e' || *p == 'E'))) {
        return -1;
    }
    r->p = p;
    if (out) {
        *out = json_integer(neg ? -v : v);
        return *out ? 0 : -1;
    }
    return 0;
}

static int rj_read_literal(struct rj_rd *r, json_t **out)
{
    static const char *const words[] = {"true", "false", "null"};
    size_t left = (size_t)(r->end - r->p);

    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if (left >= n && memcmp(r->p, words[i], n) == 0) {
            r->p += n;
            if (out) {
                *out = i == 0 ? json_true() : i == 1 ? json_false() : json_null();
            }
            return 0;
        }
    }
    return -1;
}

/* The keep entry named by the (decoded) key name[0..n), or NULL. */
static const struct rj_keep *rj_kept(const struct rj_keep *lv, const char *name, size_t n)
{
    for (; lv->name; lv++) {
        if (strlen(lv->name) == n && memcmp(lv->name, name, n) == 0) {
            return lv;
        }
    }
    return NULL;
}

static int rj_read_object(struct rj_rd *r, json_t **out, const struct rj_keep *lv);

/* The value of a member named name[0..n) of an object being built under level lv (NULL =
 * build every member) into *v; *v stays NULL for a member that is only checked. */
static int rj_read_member_value(struct rj_rd *r, const struct rj_keep *lv, const char *name,
                                size_t n, json_t **v)
{
    const struct rj_keep *k = lv ? rj_kept(lv, name, n) : NULL;

    if (lv && !k) {
        return rj_read_value(r, NULL);
    }
    if (k && k->sub && rj_at(r, '{')) {
        return rj_read_object(r, v, k->sub);
    }
    return rj_read_value(r, v);
}

/* One "key": value member of an object; obj NULL = only check it. */
static int rj_read_member(struct rj_rd *r, json_t *obj, const struct rj_keep *lv)
{
    struct rj_str key;
    json_t *v = NULL;
    char *dec = NULL;
    const char *name;
    size_t n;
    int rc;

    if (!rj_at(r, '"') || rj_scan_string(r, &key) < 0) {
        return -1;
    }
    rj_skip_ws(r);
    if (!rj_at(r, ':')) {
        return -1;
    }
    r->p++;
    rj_skip_ws(r);
    if (!obj) {
        return rj_read_value(r, NULL);
    }
    name = (const char *)key.s;
    n = key.n;
    if (key.esc) {
        dec = rj_unescape(&key, &n);
        if (!dec) {
            return -1;
        }
        name = dec;
    }
    rc = rj_read_member_value(r, lv, name, n, &v);
    if (rc == 0 && v) {
        rc = json_object_setn_new_nocheck(obj, name, n, v);
    }
    free(dec);
    return rc;
}

/* Step into a container: -1 past RJ_MAX_DEPTH. */
static int rj_enter(struct rj_rd *r)
{
    if (++r->depth > RJ_MAX_DEPTH) {
        return -1;
    }
    r->p++;
    rj_skip_ws(r);
    return 0;
}

/* After an element: ws, then ',' (1: another follows) or the closing byte (0); -1 else. */
static int rj_next(struct rj_rd *r, unsigned char close)
{
    rj_skip_ws(r);
    if (rj_at(r, ',')) {
        r->p++;
        rj_skip_ws(r);
        return 1;
    }
    if (rj_at(r, close)) {
        r->p++;
        r->depth--;
        return 0;
    }
    return -1;
}

static int rj_read_object(struct rj_rd *r, json_t **out, const struct rj_keep *lv)
{
    json_t *obj = NULL;
    int more;

    if (rj_enter(r) < 0 || (out && !(obj = json_object()))) {
        return -1;
    }
    if (rj_at(r, '}')) {
        r->p++;
        r->depth--;
        goto done;
    }
    do {
        if (rj_read_member(r, obj, lv) < 0) {
            json_decref(obj);
            return -1;
        }
    } while ((more = rj_next(r, '}')) == 1);
    if (more < 0) {
        json_decref(obj);
        return -1;
    }
done:
    if (out) {
        *out = obj;
    }
    return 0;
}

static int rj_read_array(struct rj_rd *r, json_t **out)
{
    json_t *arr = NULL, *v;
    int more;

    if (rj_enter(r) < 0 || (out && !(arr = json_array()))) {
        return -1;
    }
    if (rj_at(r, ']')) {
        r->p++;
        r->depth--;
        goto done;
    }
    do {
        v = NULL;
        if (rj_read_value(r, out ? &v : NULL) < 0 || (arr && json_array_append_new(arr, v) < 0)) {
            json_decref(arr);
            return -1;
        }
    } while ((more = rj_next(r, ']')) == 1);
    if (more < 0) {
        json_decref(arr);
        return -1;
    }
done:
    if (out) {
        *out = arr;
    }
    return 0;
}

static int rj_read_value(struct rj_rd *r, json_t **out)
{
    if (r->p >= r->end) {
        return -1;
    }
    switch (*r->p) {
    case '{':
        return rj_read_object(r, out, NULL);
    case '[':
        return rj_read_array(r, out);
    case '"':
        return rj_read_string(r, out);
    case 't':
    case 'f':
    case 'n':
        return rj_read_literal(r, out);
    default:
        return rj_read_number(r, out);
    }
}

json_t *kt_review_json_parse(const char *body, size_t len)
{
    struct rj_rd r = {.p = (const unsigned char *)body, .end = (const unsigned char *)body + len};
    json_t *review = NULL;
    int rc;

    rj_skip_ws(&r);
    if (!rj_at(&r, '{')) {
        return NULL;
    }
    kt_mem_soft_begin();
    rc = rj_read_object(&r, &review, rj_review_keep);
    kt_mem_soft_end();
    rj_skip_ws(&r);
    if (rc < 0 || r.p != r.end) {
        json_decref(review);
        return NULL;
    }
    return review;
}
