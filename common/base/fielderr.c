/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/fielderr.c - field-error lists and their Go-compatible rendering
 * (docs/internals/upstream.md#error-text).
 *
 * Mirrors k8s.io/apimachinery/pkg/util/validation/field (Error, ErrorBody) and
 * util/errors (aggregate). Does not validate anything itself. */
#include "common/base/fielderr.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/quantity.h"
#include "common/base/str.h"

#define FERR_MAX_TEXT (64u << 20)

void kt_ferrs_init(struct kt_ferrs *l)
{
    memset(l, 0, sizeof(*l));
}

void kt_ferrs_release(struct kt_ferrs *l)
{
    if (!l) {
        return;
    }
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].field);
        free(l->items[i].value);
        free(l->items[i].detail);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static void push(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, char *value,
                 char *detail)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->items = kt_xrealloc(l->items, l->cap * sizeof(*l->items));
    }
    if (type != KT_FERR_INVALID) {
        free(value);
        value = NULL;
    }
    l->items[l->len].type = type;
    l->items[l->len].field = kt_xstrdup(field);
    l->items[l->len].value = value;
    l->items[l->len].detail = detail;
    l->len++;
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) {
        return kt_xstrdup("");
    }
    char *s = kt_xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

void kt_ferrs_add(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, const json_t *v,
                  enum kt_gotype t, const char *detail_fmt, ...)
{
    va_list ap;
    char *value = NULL;
    if (type == KT_FERR_INVALID) {
        if (!v || json_is_null(v)) {
            value = kt_xstrdup("null");
        } else if (json_is_string(v)) {
            value = kt_go_quote(json_string_value(v));
        } else {
            value = kt_go_marshal(v, t);
        }
    }
    va_start(ap, detail_fmt);
    char *detail = vfmt(detail_fmt, ap);
    va_end(ap);
    push(l, type, field, value, detail);
}

void kt_ferrs_add_str(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, const char *s,
                      const char *detail_fmt, ...)
{
    va_list ap;
    va_start(ap, detail_fmt);
    char *detail = vfmt(detail_fmt, ap);
    va_end(ap);
    push(l, type, field, kt_go_quote(s ? s : ""), detail);
}

void kt_ferrs_add_int(struct kt_ferrs *l, enum kt_ferr_type type, const char *field, long long n,
                      const char *detail_fmt, ...)
{
    va_list ap;
    va_start(ap, detail_fmt);
    char *detail = vfmt(detail_fmt, ap);
    va_end(ap);
    push(l, type, field, kt_xasprintf("%lld", n), detail);
}

void kt_ferrs_extend(struct kt_ferrs *l, const struct kt_ferrs *src)
{
    for (size_t i = 0; i < src->len; i++) {
        const struct kt_ferr *e = &src->items[i];
        push(l, e->type, e->field, e->value ? kt_xstrdup(e->value) : NULL,
             kt_xstrdup(e->detail ? e->detail : ""));
    }
}

const char *kt_ferr_type_str(enum kt_ferr_type type)
{
    switch (type) {
    case KT_FERR_INVALID:
        return "Invalid value";
    case KT_FERR_FORBIDDEN:
        return "Forbidden";
    case KT_FERR_REQUIRED:
        return "Required value";
    case KT_FERR_INTERNAL:
        return "Internal error";
    default:
        return "Invalid value";
    }
}

char *kt_ferr_string(const struct kt_ferr *e)
{
    const char *detail = e->detail ? e->detail : "";
    return kt_xasprintf("%s: %s%s%s%s%s", e->field, kt_ferr_type_str(e->type), e->value ? ": " : "",
                        e->value ? e->value : "", *detail ? ": " : "", detail);
}

char *kt_ferrs_string(const struct kt_ferrs *l)
{
    struct kt_buf b;
    size_t seen = 0;
    char **msgs = kt_xcalloc(l->len ? l->len : 1, sizeof(char *));
    kt_buf_init(&b, FERR_MAX_TEXT);
    for (size_t i = 0; i < l->len; i++) {
        char *m = kt_ferr_string(&l->items[i]);
        bool dup = false;
        for (size_t j = 0; j < seen && !dup; j++) {
            dup = strcmp(msgs[j], m) == 0;
        }
        if (dup) {
            free(m);
            continue;
        }
        msgs[seen++] = m;
    }
    int rc = 0;
    for (size_t i = 0; i < seen && rc == 0; i++) {
        rc = kt_buf_printf(&b, NULL, "%s%s", i ? ", " : "", msgs[i]);
    }
    for (size_t i = 0; i < seen; i++) {
        free(msgs[i]);
    }
    free(msgs);
    char *body = kt_buf_take(&b, NULL);
    if (seen <= 1) {
        return body;
    }
    char *out = kt_xasprintf("[%s]", body);
    free(body);
    return out;
}

/* ---- UTF-8 and quoting ---- */

/* Approximation of Go's unicode.IsPrint for runes >= 0x80: the format, control,
 * private-use and separator ranges a user is likely to meet are non-printable. */
static bool rune_printable(uint32_t r)
{
    if (r < 0xa0 || r == 0xad || r == 0x61c || r == 0x180e) {
        return false;
    }
    if ((r >= 0x200b && r <= 0x200f) || (r >= 0x2028 && r <= 0x202e) ||
        (r >= 0x2060 && r <= 0x206f) || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb)) {
        return false;
    }
    if ((r >= 0xe000 && r <= 0xf8ff) || r >= 0xf0000 || (r & 0xfffe) == 0xfffe) {
        return false;
    }
    return true;
}

static int quote_ascii(struct kt_buf *b, unsigned char c)
{
    static const char esc[] = "\a\b\f\n\r\t\v";
    static const char name[] = "abfnrtv";
    const char *p = c ? strchr(esc, c) : NULL;
    if (c == '"' || c == '\\') {
        return kt_buf_printf(b, NULL, "\\%c", c);
    }
    if (p) {
        return kt_buf_printf(b, NULL, "\\%c", name[p - esc]);
    }
    if (c < 0x20 || c == 0x7f) {
        return kt_buf_printf(b, NULL, "\\x%02x", c);
    }
    return kt_buf_append(b, &c, 1, NULL);
}

char *kt_go_quote(const char *s)
{
    struct kt_buf b;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    int rc = 0;
    kt_buf_init(&b, FERR_MAX_TEXT);
    rc |= kt_buf_puts(&b, "\"", NULL);
    for (size_t i = 0; i < n && rc == 0;) {
        uint32_t r = 0;
        size_t len = kt_utf8_rune(p + i, n - i, &r);
        if (len == 0) {
            rc |= kt_buf_printf(&b, NULL, "\\x%02x", p[i]);
            i++;
        } else if (len == 1) {
            rc |= quote_ascii(&b, p[i]);
            i++;
        } else if (rune_printable(r)) {
            rc |= kt_buf_append(&b, p + i, len, NULL);
            i += len;
        } else {
            rc |= kt_buf_printf(&b, NULL, r < 0x10000 ? "\\u%04x" : "\\U%08x", (unsigned)r);
            i += len;
        }
    }
    if (rc == 0) {
        rc |= kt_buf_puts(&b, "\"", NULL);
    }
    if (rc != 0) {
        return kt_xstrdup("\"\"");
    }
    return kt_buf_take(&b, NULL);
}

/* ---- Go json.Marshal ----
 *
 * A bad value is printed as upstream's field.Error prints it: json.Marshal of the Go value the
 * JSON decodes into. The Go types come from common/base/gotypes.c (generated from the Go API
 * declarations): struct fields in Go's order with their omitempty/omitzero, keys unknown to the
 * type dropped, absent non-omitted fields printed as their zero value, map keys sorted. A JSON
 * value whose shape does not fit its Go type (upstream could not decode it) prints as given. */

static const struct kt_godesc D_ANY = {.kind = KT_GK_ANY, .go = "interface {}"};
static const struct kt_godesc D_STRING = {.kind = KT_GK_STRING, .go = "string"};
static const struct kt_godesc D_STRING_SLICE = {
    .kind = KT_GK_SLICE, .elem = &D_STRING, .go = "[]string"};
static const struct kt_godesc D_ENV_LIST = {
    .kind = KT_GK_SLICE, .elem = &kt_go_EnvVar, .go = "[]v1.EnvVar"};
static const struct kt_godesc D_PATCH_LIST = {
    .kind = KT_GK_SLICE, .elem = &kt_go_RuntimePatch, .go = "[]v1alpha1.RuntimePatch"};
static const struct kt_godesc D_CONTAINER_LIST = {
    .kind = KT_GK_SLICE, .elem = &kt_go_Container, .go = "[]v1.Container"};

static const struct kt_godesc *desc_of(enum kt_gotype t)
{
    switch (t) {
    case KT_GO_RUNTIME_REF:
        return &kt_go_RuntimeRef;
    case KT_GO_ENV_LIST:
        return &D_ENV_LIST;
    case KT_GO_PATCH_LIST:
        return &D_PATCH_LIST;
    case KT_GO_ENV_TARGET:
        return &kt_go_EnvInjectionTarget;
    case KT_GO_RESOURCES:
        return &kt_go_ResourceRequirements;
    case KT_GO_STRING_SLICE:
        return &D_STRING_SLICE;
    case KT_GO_CONTAINER_LIST:
        return &D_CONTAINER_LIST;
    case KT_GO_ANY:
    default:
        return &D_ANY;
    }
}

/* Go's isEmptyValue (omitempty) of the value v (NULL: absent or null) decodes to. */
static bool go_empty(const json_t *v, const struct kt_godesc *d)
{
    switch (d->kind) {
    case KT_GK_STRING:
    case KT_GK_BYTES:
        return !v || (json_is_string(v) && json_string_length(v) == 0);
    case KT_GK_SLICE:
        return !v || (json_is_array(v) && json_array_size(v) == 0);
    case KT_GK_MAP:
        return !v || (json_is_object(v) && json_object_size(v) == 0);
    case KT_GK_INT:
    case KT_GK_FLOAT:
        return !v || (json_is_number(v) && json_number_value(v) == 0);
    case KT_GK_BOOL:
        return !v || json_is_false(v);
    case KT_GK_PTR:
    case KT_GK_ANY:
        return !v;
    default: /* structs (Quantity, Time, ... too) are never empty */
        return false;
    }
}

static bool go_zero(const json_t *v, const struct kt_godesc *d);

static bool struct_zero(const json_t *v, const struct kt_godesc *d)
{
    if (!json_is_object(v)) {
        return false;
    }
    for (size_t i = 0; i < d->nfields; i++) {
        const json_t *m = json_object_get(v, d->fields[i].key);
        if (!go_zero(json_is_null(m) ? NULL : m, d->fields[i].type)) {
            return false;
        }
    }
    return true;
}

/* metav1.Time's IsZero: January 1, year 1, 00:00:00 UTC (Go's zero time.Time). */
static bool time_is_zero(const json_t *v)
{
    long long sec;
    long ns;
    return json_is_string(v) && kt_go_time_parse(json_string_value(v), &sec, &ns) &&
           sec == -62135596800LL && ns == 0;
}

/* reflect.Value.IsZero (omitzero; a type's own IsZero for Time) of the value v (NULL: absent or
 * null) decodes to. */
static bool go_zero(const json_t *v, const struct kt_godesc *d)
{
    if (!v) {
        return true;
    }
    switch (d->kind) {
    case KT_GK_STRING:
    case KT_GK_INT:
    case KT_GK_FLOAT:
    case KT_GK_BOOL:
        return go_empty(v, d);
    case KT_GK_STRUCT:
        return struct_zero(v, d);
    case KT_GK_TIME:
        return time_is_zero(v);
    default: /* a present pointer, slice, map or special type */
        return false;
    }
}

bool kt_go_time_parse(const char *s, long long *sec, long *nsec)
{
    struct tm tm;
    int n = 0, frac = 0, off = 0;
    long ns = 0;
    memset(&tm, 0, sizeof(tm));
    if (!s ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n != 19) {
        return false;
    }
    if (s[n] == '.') {
        frac = (int)strspn(s + n + 1, "0123456789");
        if (frac == 0) {
            return false;
        }
        for (int i = 0; i < 9; i++) {
            ns = ns * 10 + (i < frac ? s[n + 1 + i] - '0' : 0);
        }
        frac++;
    }
    const char *zone = s + n + frac;
    if (strcmp(zone, "Z") != 0) {
        int hh = 0, mm = 0, m = 0;
        if ((zone[0] != '+' && zone[0] != '-') ||
            sscanf(zone + 1, "%2d:%2d%n", &hh, &mm, &m) != 2 || m != 5 || zone[6]) {
            return false;
        }
        off = (zone[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *sec = (long long)timegm(&tm) - off;
    *nsec = ns;
    return true;
}

bool kt_go_time_text(const char *s, char out[32])
{
    long long sec;
    long ns;
    struct tm tm;
    if (!kt_go_time_parse(s, &sec, &ns)) {
        return false;
    }
    time_t t = (time_t)sec;
    return gmtime_r(&t, &tm) && strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) != 0;
}

/* The text of kt_go_roundtrip's value, printed as given (its keys are already in Go's order). */
char *kt_go_marshal_as(const json_t *v, const struct kt_godesc *d)
{
    struct kt_buf b;
    char *out;
    if (!v) {
        return kt_xstrdup("null");
    }
    json_t *go = kt_go_roundtrip(v, d);
    kt_buf_init(&b, FERR_MAX_TEXT);
    if (kt_json_dump_go_buf(go, &b, NULL) != 0) {
        out = kt_xstrdup("null"); /* past the cap: b was released */
    } else {
        out = kt_buf_take(&b, NULL);
    }
    json_decref(go);
    return out;
}

char *kt_go_marshal(const json_t *v, enum kt_gotype t)
{
    return kt_go_marshal_as(v, desc_of(t));
}

/* ---- Go json.Marshal as a JSON value ----
 *
 * What json.Marshal of the Go value v decodes into produces, read back as JSON (object keys in
 * the order Go writes them); kt_go_marshal_as prints it. */

/* Does v's JSON shape fit d (else upstream could not have decoded it: print as given)? */
static bool fits(const json_t *v, const struct kt_godesc *d)
{
    switch (d->kind) {
    case KT_GK_STRUCT:
    case KT_GK_MAP:
        return json_is_object(v);
    case KT_GK_SLICE:
        return json_is_array(v);
    case KT_GK_TIME:
        return json_is_string(v);
    default:
        return true;
    }
}

static json_t *value_of(const json_t *v, const struct kt_godesc *d);

static json_t *struct_value(const json_t *v, const struct kt_godesc *d)
{
    json_t *o = json_object();
    for (size_t i = 0; i < d->nfields; i++) {
        const struct kt_gofield *f = &d->fields[i];
        const json_t *m = v ? json_object_get(v, f->key) : NULL;
        m = json_is_null(m) ? NULL : m;
        if (((f->flags & KT_GF_OMITEMPTY) && go_empty(m, f->type)) ||
            ((f->flags & KT_GF_OMITZERO) && go_zero(m, f->type))) {
            continue;
        }
        json_object_set_new(o, f->key, value_of(m, f->type));
    }
    return o;
}

static json_t *zero_value(const struct kt_godesc *d)
{
    switch (d->kind) {
    case KT_GK_STRING:
        return json_string("");
    case KT_GK_INT:
    case KT_GK_FLOAT:
    case KT_GK_INTORSTR:
        return json_integer(0);
    case KT_GK_BOOL:
        return json_false();
    case KT_GK_QUANTITY:
        return json_string("0");
    case KT_GK_DURATION:
        return json_string("0s");
    case KT_GK_STRUCT:
        return struct_value(NULL, d);
    default: /* nil pointer, slice, map, interface; zero Time; empty RawExtension */
        return json_null();
    }
}

/* A Go map: the keys inserted sorted (encoding/json's order). */
static json_t *map_value(const json_t *v, const struct kt_godesc *d)
{
    size_t n;
    const char **keys = kt_json_sorted_keys(v, &n);
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++) {
        json_object_set_new(o, keys[i], value_of(json_object_get(v, keys[i]), d->elem));
    }
    free(keys);
    return o;
}

static json_t *array_value(const json_t *v, const struct kt_godesc *elem)
{
    json_t *a = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        json_array_append_new(a, value_of(e, elem));
    }
    return a;
}

static json_t *quantity_value(const json_t *v)
{
    struct kt_quantity q;
    char qbuf[KT_QUANTITY_STR_MAX];
    if (kt_quantity_from_json(v, &q, NULL) != 0) {
        return json_deep_copy(v);
    }
    return json_string(kt_quantity_format(&q, qbuf, sizeof(qbuf)));
}

static json_t *time_value(const json_t *v)
{
    char out[32];
    return kt_go_time_text(json_string_value(v), out) ? json_string(out) : json_deep_copy(v);
}

static json_t *value_of(const json_t *v, const struct kt_godesc *d)
{
    if (!v || json_is_null(v)) {
        return zero_value(d);
    }
    if (!fits(v, d)) {
        return json_deep_copy(v);
    }
    switch (d->kind) {
    case KT_GK_PTR:
        return value_of(v, d->elem);
    case KT_GK_SLICE:
        return array_value(v, d->elem);
    case KT_GK_MAP:
        return map_value(v, d);
    case KT_GK_STRUCT:
        return struct_value(v, d);
    case KT_GK_QUANTITY:
        return quantity_value(v);
    case KT_GK_TIME: /* the zero Time prints null */
        return time_is_zero(v) ? json_null() : time_value(v);
    default: /* scalars (shared: jansson's are immutable), IntOrString, MicroTime/Duration/
              * bytes/raw JSON as given */
        return json_is_object(v) || json_is_array(v) ? json_deep_copy(v)
                                                     : json_incref(kt__json_unconst(v));
    }
}

json_t *kt_go_roundtrip(const json_t *v, const struct kt_godesc *d)
{
    return value_of(v, d);
}
