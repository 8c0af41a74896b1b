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
    static const struct kt_godesc str = {KT_GK_STRING, NULL, NULL, 0, "string", 0, 0};
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

static int walk(struct dec *d, const json_t *v, const struct kt_godesc *t)
{
    size_t i;
    const json_t *e;
    const char *key;

    if (json_is_null(v)) {
        return 0; /* null leaves any Go value as it is; Unmarshalers accept it */
    }
    switch (t->kind) {
    case KT_GK_ANY:
    case KT_GK_RAW:
    case KT_GK_BYTES:
        return 0;
    case KT_GK_PTR:
        return walk(d, v, t->elem);
    case KT_GK_STRING:
        if (!json_is_string(v)) {
            save(d, v, t);
        }
        return 0;
    case KT_GK_BOOL:
        if (!json_is_boolean(v)) {
            save(d, v, t);
        }
        return 0;
    case KT_GK_INT:
        if (!json_is_number(v) || !int_fits(v, t)) {
            save(d, v, t);
        }
        return 0;
    case KT_GK_FLOAT:
        if (!json_is_number(v)) {
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
        if (!json_is_array(v)) {
            save(d, v, t);
            return 0;
        }
        json_array_foreach(v, i, e)
        {
            path_push(d, NULL, i);
            if (walk(d, e, t->elem) != 0) {
                return -1;
            }
            d->plen--;
        }
        return 0;
    case KT_GK_MAP:
        if (!json_is_object(v)) {
            save(d, v, t);
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
    case KT_GK_QUANTITY: {
        struct kt_quantity q;
        struct kt_err err = {0};
        if (kt_quantity_from_json(v, &q, &err) != 0) {
            return stop(d, kt_xstrdup(err.msg));
        }
        return 0;
    }
    case KT_GK_INTORSTR:
        if (json_is_string(v)) {
            return 0;
        }
        if (!json_is_number(v) || !json_is_integer(v) || json_integer_value(v) < -2147483648LL ||
            json_integer_value(v) > 2147483647LL) {
            /* json.Unmarshal(value, &intstr.IntVal) */
            static const struct kt_godesc i32 = {KT_GK_INT, NULL, NULL, 0, "int32", 32, 0};
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
        return 0;
    case KT_GK_TIME:
    case KT_GK_MICROTIME:
    case KT_GK_DURATION:
        return walk_string_unmarshaler(d, v, t);
    }
    return 0;
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

char *kt_go_time_error(const char *s)
{
    /* The layout's chunks: the literal before each std element, the element, its name. */
    enum { YEAR, MONTH, DAY, HOUR, MIN, SEC, TZ, END };
    static const struct {
        const char *prefix;
        const char *std;
    } chunk[] = {{"", "2006"}, {"-", "01"}, {"-", "02"},    {"T", "15"},
                 {":", "04"},  {":", "05"}, {"", "Z07:00"}, {"", ""}};
    const char *v = s;
    int year = 0, month = 0, day = 0, n = 0;

    for (int c = YEAR; c <= END; c++) {
        const char *pre = chunk[c].prefix;
        for (; *pre; pre++, v++) {
            if (*v != *pre) {
                return parse_error(s, chunk[c].prefix, v, NULL, NULL);
            }
        }
        if (c == END) {
            if (*v) {
                return parse_error(s, "", v, ": extra text: ", v);
            }
            break;
        }
        const char *hold = v;
        const char *range = NULL;
        n = 0;
        int bad = 0;
        switch (c) {
        case YEAR:
            if (strlen(v) < 4 || !digit_at(v, 0)) {
                bad = 1;
                break;
            }
            for (int i = 0; i < 4; i++) {
                bad |= !isdigit((unsigned char)v[i]);
            }
            year = (v[0] - '0') * 1000 + (v[1] - '0') * 100 + (v[2] - '0') * 10 + v[3] - '0';
            v += 4;
            break;
        case MONTH:
            bad = getnum(&v, true, &month) != 0;
            if (!bad && (month <= 0 || month > 12)) {
                range = "month";
            }
            break;
        case DAY:
            bad = getnum(&v, true, &day) != 0;
            break;
        case HOUR:
            bad = getnum(&v, false, &n) != 0;
            if (n >= 24) {
                range = "hour";
            }
            break;
        case MIN:
            bad = getnum(&v, true, &n) != 0;
            if (n >= 60) {
                range = "minute";
            }
            break;
        case SEC:
            bad = getnum(&v, true, &n) != 0;
            if (bad) {
                break;
            }
            if (n >= 60) {
                range = "second";
                break;
            }
            /* A fraction the layout lacks is accepted (parseNanoseconds of its digits). */
            if ((v[0] == '.' || v[0] == ',') && digit_at(v, 1)) {
                v += 2;
                while (isdigit((unsigned char)*v)) {
                    v++;
                }
            }
            break;
        case TZ: {
            if (*v == 'Z') {
                v++;
                break;
            }
            if (strlen(v) < 6 || v[3] != ':') {
                bad = 1;
                break;
            }
            char hh[3] = {v[1], v[2], 0}, mm[3] = {v[4], v[5], 0};
            const char *p = hh;
            int hr = 0, mi = 0;
            char sign = v[0];
            v += 6;
            bad = getnum(&p, true, &hr) != 0;
            if (!bad) {
                p = mm;
                bad = getnum(&p, true, &mi) != 0;
            }
            if (hr > 24) {
                range = "time zone offset hour";
            }
            if (mi > 60) {
                range = "time zone offset minute";
            }
            if (sign != '+' && sign != '-') {
                bad = 1;
            }
            break;
        }
        }
        if (range) {
            char msg[64];
            snprintf(msg, sizeof(msg), ": %s out of range", range);
            return parse_error(s, chunk[c].std, v, msg, NULL);
        }
        if (bad) {
            return parse_error(s, chunk[c].std, hold, NULL, NULL);
        }
    }
    if (day < 1 || day > days_in(month, year)) {
        return parse_error(s, "", v, ": day out of range", NULL);
    }
    return NULL;
}
