/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/godecode.c - the decoder's error for a value that does not decode into upstream's
 * Go type; see godecode.h. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/err.h"
#include "common/base/godecode.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/quantity.h"

/* encoding/json's errorContext: the struct whose field is being decoded and the JSON names of
 * the fields from the root (array indices and map keys are not in it). */
struct dec {
    const char **stack;
    size_t len, cap;
    const struct kt_godesc *st;
    char *saved; /* the first UnmarshalTypeError, context added when saved */
    char *abort; /* an error that stopped the decoding */
    /* Where the walk is in the JSON value (keys and indices, which encoding/json's context
     * leaves out), and where saved and abort were found: field path and JSON Pointer. */
    struct seg *path;
    size_t plen, pcap;
    char *saved_at[2], *abort_at[2];
};

/* One step from a value to its child: an object key, or an array index when key is NULL. */
struct seg {
    const char *key;
    size_t idx;
};

/* ---- messages ------------------------------------------------------------------------------ */

/* A growing message (aborts on out of memory, like kt_xmalloc: messages are short). */
struct msg {
    char *p;
    size_t len, cap;
};

static void put(struct msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct msg *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (m->len + (size_t)n + 1 > m->cap) {
        m->cap = (m->len + (size_t)n + 1) * 2;
        m->p = kt_xrealloc(m->p, m->cap);
    }
    va_start(ap, fmt);
    vsnprintf(m->p + m->len, m->cap - m->len, fmt, ap);
    va_end(ap);
    m->len += (size_t)n;
}

/* ---- where ------------------------------------------------------------------------------- */

static void path_push(struct dec *d, const char *key, size_t idx)
{
    if (d->plen == d->pcap) {
        d->pcap = d->pcap ? d->pcap * 2 : 16;
        d->path = kt_xrealloc(d->path, d->pcap * sizeof(*d->path));
    }
    d->path[d->plen].key = key;
    d->path[d->plen++].idx = idx;
}

/* The path now as at[0] "a.b[0].c" (the API server's schema errors: keys of structs and maps
 * after a dot, indices in brackets) and at[1] "/a/b/0/c" (RFC 6901: ~ and / escaped). */
static void where_now(const struct dec *d, char *at[2])
{
    struct msg f = {0}, p = {0};
    put(&f, "%s", "");
    put(&p, "%s", "");
    for (size_t i = 0; i < d->plen; i++) {
        const char *k = d->path[i].key;
        if (!k) {
            put(&f, "[%zu]", d->path[i].idx);
            put(&p, "/%zu", d->path[i].idx);
            continue;
        }
        put(&f, "%s%s", f.len ? "." : "", k);
        put(&p, "/");
        for (; *k; k++) {
            if (*k == '~' || *k == '/') {
                put(&p, "~%c", *k == '~' ? '0' : '1');
            } else {
                put(&p, "%c", *k);
            }
        }
    }
    at[0] = f.p;
    at[1] = p.p;
}

/* Stop the decoding with msg (owned) found at the current path. */
static int stop(struct dec *d, char *msg)
{
    d->abort = msg;
    where_now(d, d->abort_at);
    return -1;
}

const char *kt_go_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    default:
        return "number";
    }
}

/* The literal of a number as Go quotes it ("number 1.5"). Reals print as their shortest decimal,
 * with ".0" when integral below 2^53 (above, they are integers too big for jansson). */
static void number_literal(const json_t *v, char *out, size_t size)
{
    if (json_is_integer(v)) {
        snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    }
    double r = json_real_value(v);
    if (r == floor(r) && fabs(r) < 1e300) {
        snprintf(out, size, fabs(r) < 9007199254740992.0 ? "%.0f.0" : "%.0f", r);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, r);
        if (strtod(out, NULL) == r) {
            return;
        }
    }
}

/* "json: cannot unmarshal WHAT into ..." with the context of d now. */
static char *type_error(const struct dec *d, const char *what, const char *go)
{
    if (!d->st && d->len == 0) {
        return kt_xasprintf("json: cannot unmarshal %s into Go value of type %s", what, go);
    }
    struct msg b = {0};
    const char *name = d->st ? strrchr(d->st->go, '.') : NULL;
    put(&b, "json: cannot unmarshal %s into Go struct field %s.", what,
        name ? name + 1 : (d->st ? d->st->go : ""));
    for (size_t i = 0; i < d->len; i++) {
        put(&b, "%s%s", i ? "." : "", d->stack[i]);
    }
    put(&b, " of type %s", go);
    return b.p;
}

/* d.saveError: the first one only. */
static void save(struct dec *d, const json_t *v, const struct kt_godesc *t)
{
    if (d->saved) {
        return;
    }
    char what[64] = "number";
    if (json_is_number(v) && t->kind == KT_GK_INT) {
        snprintf(what, sizeof(what), "number ");
        number_literal(v, what + 7, sizeof(what) - 7);
    } else {
        snprintf(what, sizeof(what), "%s", kt_go_json_kind(v));
    }
    d->saved = type_error(d, what, t->go);
    where_now(d, d->saved_at);
}

/* ---- integers ------------------------------------------------------------------------------ */

/* Does number v fit Go integer type t (strconv.ParseInt/ParseUint of its literal, then
 * OverflowInt/OverflowUint)? */
static bool int_fits(const json_t *v, const struct kt_godesc *t)
{
    int bits = t->bits ? t->bits : 64;
    if (json_is_integer(v)) {
        long long n = json_integer_value(v);
        if (t->uns) {
            return n >= 0 && (bits == 64 || (unsigned long long)n < (1ULL << bits));
        }
        if (bits == 64) {
            return true;
        }
        long long lim = 1LL << (bits - 1);
        return n >= -lim && n < lim;
    }
    /* A real: a literal with a fraction or exponent never parses; an integer past int64 was
     * widened to a real by the JSON reader (kt_json_parse): only uint64 may hold it. */
    double r = json_real_value(v);
    return t->uns && bits == 64 && r == floor(r) && r >= 9223372036854775808.0 &&
           r < 18446744073709551616.0 && fabs(r) >= 9007199254740992.0;
}

/* ---- the walk ------------------------------------------------------------------------------ */

static int walk(struct dec *d, const json_t *v, const struct kt_godesc *t);

static int walk_struct(struct dec *d, const json_t *v, const struct kt_godesc *t)
{
    const char *key;
    const json_t *val;
    json_object_foreach(kt__json_unconst(v), key, val)
    {
        const struct kt_gofield *f = NULL;
        for (size_t i = 0; i < t->nfields; i++) {
            if (strcmp(t->fields[i].key, key) == 0) {
                f = &t->fields[i];
                break;
            }
        }
        if (!f) {
            continue; /* unknown keys are ignored (the decoder is not strict) */
        }
        if (d->len + 2 > d->cap) {
            d->cap = d->cap ? d->cap * 2 : 16;
            d->stack = kt_xrealloc(d->stack, d->cap * sizeof(*d->stack));
        }
        const struct kt_godesc *st = d->st;
        size_t len = d->len;
        if (f->via) {
            d->stack[d->len++] = f->via; /* the embedded structs' Go field names */
        }
        d->stack[d->len++] = key;
        d->st = t;
        path_push(d, key, 0);
        int rc = walk(d, val, f->type);
        if (rc != 0) {
            return rc; /* the context stays as it was when the decoding stopped */
        }
        d->plen--;
        d->len = len;
        d->st = st;
    }
    return 0;
}

/* A type whose UnmarshalJSON first decodes a Go string (metav1.Time, MicroTime, Duration):
 * another JSON type fails with that UnmarshalTypeError (into string, the field's context). */
static int walk_string_unmarshaler(struct dec *d, const json_t *v, const struct kt_godesc *t)
{
    static const struct kt_godesc str = {.kind = KT_GK_STRING, .go = "string"};
    if (!json_is_string(v)) {
        char *what = kt_xstrdup(kt_go_json_kind(v));
        char *msg = type_error(d, what, str.go);
        free(what);
        return stop(d, msg);
    }
    if (t->kind == KT_GK_TIME) {
        char *msg = kt_go_time_error(json_string_value(v));
        return msg ? stop(d, msg) : 0;
    }
    return 0;
}

/* Does v have the JSON type a Go value of scalar kind k decodes from? */
static bool scalar_fits(const json_t *v, const struct kt_godesc *t)
{
    switch (t->kind) {
    case KT_GK_STRING:
        return json_is_string(v);
    case KT_GK_BOOL:
        return json_is_boolean(v);
    case KT_GK_INT:
        return json_is_number(v) && int_fits(v, t);
    case KT_GK_FLOAT:
        return json_is_number(v);
    default:
        return true;
    }
}

/* A slice or a map: each element walked under its index or key. */
static int walk_elems(struct dec *d, const json_t *v, const struct kt_godesc *t)
{
    size_t i;
    const json_t *e;
    const char *key;
    if (t->kind == KT_GK_SLICE ? !json_is_array(v) : !json_is_object(v)) {
        save(d, v, t);
        return 0;
    }
    if (t->kind == KT_GK_SLICE) {
        json_array_foreach(v, i, e)
        {
            path_push(d, NULL, i);
            if (walk(d, e, t->elem) != 0) {
                return -1;
            }
            d->plen--;
        }
        return 0;
    }
    json_object_foreach(kt__json_unconst(v), key, e)
    {
        path_push(d, key, 0);
        if (walk(d, e, t->elem) != 0) {
            return -1;
        }
        d->plen--;
    }
    return 0;
}

/* intstr.IntOrString: a string, or what json.Unmarshal(value, &intstr.IntVal) takes; anything
 * else stops the decoding with that int32 error, whatever was saved before. */
static int walk_intorstr(struct dec *d, const json_t *v)
{
    if (json_is_string(v) || (json_is_integer(v) && json_integer_value(v) >= -2147483648LL &&
                              json_integer_value(v) <= 2147483647LL)) {
        return 0;
    }
    static const struct kt_godesc i32 = {.kind = KT_GK_INT, .go = "int32", .bits = 32};
    char *saved = d->saved, *saved_at[2] = {d->saved_at[0], d->saved_at[1]};
    d->saved = NULL;
    save(d, v, &i32);
    d->abort = d->saved;
    d->abort_at[0] = d->saved_at[0];
    d->abort_at[1] = d->saved_at[1];
    d->saved = saved;
    d->saved_at[0] = saved_at[0];
    d->saved_at[1] = saved_at[1];
    return -1;
}

static int walk(struct dec *d, const json_t *v, const struct kt_godesc *t)
{
    if (json_is_null(v)) {
        return 0; /* null leaves any Go value as it is; Unmarshalers accept it */
    }
    switch (t->kind) {
    case KT_GK_PTR:
        return walk(d, v, t->elem);
    case KT_GK_STRING:
    case KT_GK_BOOL:
    case KT_GK_INT:
    case KT_GK_FLOAT:
        if (!scalar_fits(v, t)) {
            save(d, v, t);
        }
        return 0;
    case KT_GK_STRUCT:
        if (!json_is_object(v)) {
            save(d, v, t);
            return 0;
        }
        return walk_struct(d, v, t);
    case KT_GK_SLICE:
    case KT_GK_MAP:
        return walk_elems(d, v, t);
    case KT_GK_QUANTITY: {
        struct kt_quantity q;
        struct kt_err err = {0};
        return kt_quantity_from_json(v, &q, &err) != 0 ? stop(d, kt_xstrdup(err.msg)) : 0;
    }
    case KT_GK_INTORSTR:
        return walk_intorstr(d, v);
    case KT_GK_TIME:
    case KT_GK_MICROTIME:
    case KT_GK_DURATION:
        return walk_string_unmarshaler(d, v, t);
    case KT_GK_ANY:
    case KT_GK_RAW:
    case KT_GK_BYTES:
    default:
        return 0;
    }
}

int kt_go_decode_check(const json_t *v, const struct kt_godesc *d, struct kt_go_decode *out)
{
    struct dec st = {0};
    bool stopped = walk(&st, v, d) != 0;
    char *msg = stopped ? st.abort : st.saved;
    char **at = stopped ? st.abort_at : st.saved_at;
    char **drop = stopped ? st.saved_at : st.abort_at;

    memset(out, 0, sizeof(*out));
    free(stopped ? st.saved : NULL);
    free(drop[0]);
    free(drop[1]);
    free(st.stack);
    free(st.path);
    if (!msg) {
        free(at[0]);
        free(at[1]);
        return 0;
    }
    out->msg = msg;
    out->field = at[0];
    out->ptr = at[1];
    return 1;
}

void kt_go_decode_release(struct kt_go_decode *f)
{
    if (!f) {
        return;
    }
    free(f->msg);
    free(f->field);
    free(f->ptr);
    memset(f, 0, sizeof(*f));
}

char *kt_go_decode_error(const json_t *v, const struct kt_godesc *d)
{
    struct kt_go_decode f;
    if (kt_go_decode_check(v, d, &f) == 0) {
        return NULL;
    }
    char *msg = f.msg;
    f.msg = NULL;
    kt_go_decode_release(&f);
    return msg;
}

/* ---- time.Parse(time.RFC3339, s) ----------------------------------------------------------- */

#define RFC3339 "2006-01-02T15:04:05Z07:00"

/* time's quote(): ASCII as is ('"' and '\\' escaped), every other byte as \xNN. */
static void time_quote(struct msg *b, const char *s)
{
    put(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x80 || *p < ' ') {
            put(b, "\\x%02x", *p);
        } else {
            put(b, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
        }
    }
    put(b, "\"");
}

/* newParseError(...).Error(): with a message "parsing time V<msg>", else "parsing time V as
 * LAYOUT: cannot parse VALUE_ELEM as LAYOUT_ELEM". */
static char *parse_error(const char *value, const char *layout_elem, const char *value_elem,
                         const char *msg, const char *msg_quoted)
{
    struct msg b = {0};
    put(&b, "parsing time ");
    time_quote(&b, value);
    if (msg) {
        put(&b, "%s", msg);
        if (msg_quoted) {
            time_quote(&b, msg_quoted);
        }
    } else {
        put(&b, " as ");
        time_quote(&b, RFC3339);
        put(&b, ": cannot parse ");
        time_quote(&b, value_elem);
        put(&b, " as ");
        time_quote(&b, layout_elem);
    }
    return b.p;
}

static bool digit_at(const char *s, size_t i)
{
    return strlen(s) > i && isdigit((unsigned char)s[i]);
}

/* time's getnum: one or (fixed) exactly two digits. */
static int getnum(const char **s, bool fixed, int *n)
{
    if (!digit_at(*s, 0)) {
        return -1;
    }
    if (!digit_at(*s, 1)) {
        if (fixed) {
            return -1;
        }
        *n = (*s)[0] - '0';
        *s += 1;
        return 0;
    }
    *n = ((*s)[0] - '0') * 10 + (*s)[1] - '0';
    *s += 2;
    return 0;
}

static int days_in(int month, int year)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return month == 2 && leap ? 29 : days[month - 1];
}

/* The layout's chunks: the literal before each std element, the element, its name. */
enum tchunk { YEAR, MONTH, DAY, HOUR, MIN, SEC, TZ, END };
static const struct {
    const char *prefix;
    const char *std;
} tchunks[] = {
    [YEAR] = {.prefix = "", .std = "2006"}, [MONTH] = {.prefix = "-", .std = "01"},
    [DAY] = {.prefix = "-", .std = "02"},   [HOUR] = {.prefix = "T", .std = "15"},
    [MIN] = {.prefix = ":", .std = "04"},   [SEC] = {.prefix = ":", .std = "05"},
    [TZ] = {.prefix = "", .std = "Z07:00"}, [END] = {.prefix = "", .std = ""},
};

/* What parsing has found so far, and why an element failed. */
struct tparse {
    int year, month, day;
    const char *range; /* the element out of range ("month", ...), or NULL */
};

/* "2006": four digits. Nonzero when v does not start with them. */
static int take_year(const char **v, int *year)
{
    const char *p = *v;
    if (strlen(p) < 4 || !digit_at(p, 0)) {
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        bad |= !isdigit((unsigned char)p[i]);
    }
    *year = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + p[3] - '0';
    *v = p + 4;
    return bad;
}

/* "05" and the fraction the layout lacks, which Go accepts (parseNanoseconds of its digits). */
static int take_seconds(const char **v, const char **range)
{
    int n = 0;
    if (getnum(v, true, &n) != 0) {
        return 1;
    }
    if (n >= 60) {
        *range = "second";
        return 0;
    }
    const char *p = *v;
    if ((p[0] == '.' || p[0] == ',') && digit_at(p, 1)) {
        p += 2;
        while (isdigit((unsigned char)*p)) {
            p++;
        }
        *v = p;
    }
    return 0;
}

/* "Z07:00": Z, or a sign, two digits, a colon, two digits. */
static int take_zone(const char **v, const char **range)
{
    const char *z = *v;
    if (*z == 'Z') {
        *v = z + 1;
        return 0;
    }
    if (strlen(z) < 6 || z[3] != ':') {
        return 1;
    }
    char hh[3] = {z[1], z[2], 0}, mm[3] = {z[4], z[5], 0};
    const char *p = hh;
    int hr = 0, mi = 0;
    *v = z + 6;
    int bad = getnum(&p, true, &hr) != 0;
    if (!bad) {
        p = mm;
        bad = getnum(&p, true, &mi) != 0;
    }
    if (hr > 24) {
        *range = "time zone offset hour";
    }
    if (mi > 60) {
        *range = "time zone offset minute";
    }
    return bad || (z[0] != '+' && z[0] != '-');
}

/* A clock element ("15", "04") below limit, named name when it is not. */
static int take_clock(const char **v, bool fixed, int limit, const char *name, const char **range)
{
    int n = 0;
    int bad = getnum(v, fixed, &n) != 0;
    if (n >= limit) {
        *range = name;
    }
    return bad;
}

/* Element c of the layout at *v (advanced past it). Nonzero when it does not parse. */
static int take_element(enum tchunk c, const char **v, struct tparse *t)
{
    switch (c) {
    case YEAR:
        return take_year(v, &t->year);
    case MONTH: {
        int bad = getnum(v, true, &t->month) != 0;
        if (!bad && (t->month <= 0 || t->month > 12)) {
            t->range = "month";
        }
        return bad;
    }
    case DAY:
        return getnum(v, true, &t->day) != 0;
    case HOUR:
        return take_clock(v, false, 24, "hour", &t->range);
    case MIN:
        return take_clock(v, true, 60, "minute", &t->range);
    case SEC:
        return take_seconds(v, &t->range);
    case TZ:
        return take_zone(v, &t->range);
    case END:
    default:
        return 0;
    }
}

char *kt_go_time_error(const char *s)
{
    const char *v = s;
    struct tparse t = {0};
    for (enum tchunk c = YEAR; c <= END; c++) {
        for (const char *pre = tchunks[c].prefix; *pre; pre++, v++) {
            if (*v != *pre) {
                return parse_error(s, tchunks[c].prefix, v, NULL, NULL);
            }
        }
        if (c == END) {
            if (*v) {
                return parse_error(s, "", v, ": extra text: ", v);
            }
            break;
        }
        const char *hold = v;
        int bad = take_element(c, &v, &t);
        if (t.range) {
            char msg[64];
            snprintf(msg, sizeof(msg), ": %s out of range", t.range);
            return parse_error(s, tchunks[c].std, v, msg, NULL);
        }
        if (bad) {
            return parse_error(s, tchunks[c].std, hold, NULL, NULL);
        }
    }
    if (t.day < 1 || t.day > days_in(t.month, t.year)) {
        return parse_error(s, "", v, ": day out of range", NULL);
    }
    return NULL;
}
