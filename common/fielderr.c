/* common/fielderr.c - field-error lists and their Go-compatible rendering (SPEC §4.5).
 *
 * Mirrors k8s.io/apimachinery/pkg/util/validation/field (Error, ErrorBody) and
 * util/errors (aggregate). Does not validate anything itself. */
#include "fielderr.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mem.h"
#include "quantity.h"

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

/* Decode one UTF-8 rune at s[0..n); returns its length or 0 when invalid. */
static size_t utf8_rune(const unsigned char *s, size_t n, uint32_t *r)
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
        size_t len = utf8_rune(p + i, n - i, &r);
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

/* ---- Go json.Marshal ---- */

struct gofield {
    const char *key;
    const struct goschema *sub;
};
struct goschema {
    bool sorted_map;              /* a Go map: keys sorted */
    bool quantity;                /* a resource.Quantity: its canonical string */
    const struct goschema *elem;  /* list elements / map values */
    const struct gofield *fields; /* NULL-key terminated; NULL = keep order */
};

static const struct goschema S_PLAIN = {false, false, NULL, NULL};
static const struct goschema S_QUANTITY = {false, true, NULL, NULL};
static const struct goschema S_QMAP = {true, false, &S_QUANTITY, NULL};
static const struct gofield F_OBJSEL[] = {{"apiVersion", NULL}, {"fieldPath", NULL}, {NULL, NULL}};
static const struct goschema S_OBJSEL = {false, false, NULL, F_OBJSEL};
static const struct gofield F_RESSEL[] = {
    {"containerName", NULL}, {"resource", NULL}, {"divisor", NULL}, {NULL, NULL}};
static const struct goschema S_RESSEL = {false, false, NULL, F_RESSEL};
static const struct gofield F_KEYSEL[] = {
    {"name", NULL}, {"key", NULL}, {"optional", NULL}, {NULL, NULL}};
static const struct goschema S_KEYSEL = {false, false, NULL, F_KEYSEL};
static const struct gofield F_ENVSRC[] = {{"fieldRef", &S_OBJSEL},
                                          {"resourceFieldRef", &S_RESSEL},
                                          {"configMapKeyRef", &S_KEYSEL},
                                          {"secretKeyRef", &S_KEYSEL},
                                          {NULL, NULL}};
static const struct goschema S_ENVSRC = {false, false, NULL, F_ENVSRC};
static const struct gofield F_ENV[] = {
    {"name", NULL}, {"value", NULL}, {"valueFrom", &S_ENVSRC}, {NULL, NULL}};
static const struct goschema S_ENV = {false, false, NULL, F_ENV};
static const struct goschema S_ENV_LIST = {false, false, &S_ENV, NULL};
static const struct gofield F_REF[] = {
    {"name", NULL}, {"apiGroup", NULL}, {"kind", NULL}, {NULL, NULL}};
static const struct goschema S_REF = {false, false, NULL, F_REF};
static const struct gofield F_PATCH[] = {
    {"manager", NULL}, {"time", NULL}, {"trainingRuntimeSpec", NULL}, {NULL, NULL}};
static const struct goschema S_PATCH = {false, false, NULL, F_PATCH};
static const struct goschema S_PATCH_LIST = {false, false, &S_PATCH, NULL};
static const struct gofield F_TARGET[] = {
    {"jobName", NULL}, {"containerNames", NULL}, {NULL, NULL}};
static const struct goschema S_TARGET = {false, false, NULL, F_TARGET};
static const struct gofield F_RES[] = {
    {"limits", &S_QMAP}, {"requests", &S_QMAP}, {"claims", NULL}, {NULL, NULL}};
static const struct goschema S_RES = {false, false, NULL, F_RES};

static const struct goschema *schema_of(enum kt_gotype t)
{
    switch (t) {
    case KT_GO_RUNTIME_REF:
        return &S_REF;
    case KT_GO_ENV_LIST:
        return &S_ENV_LIST;
    case KT_GO_PATCH_LIST:
        return &S_PATCH_LIST;
    case KT_GO_ENV_TARGET:
        return &S_TARGET;
    case KT_GO_RESOURCES:
        return &S_RES;
    case KT_GO_ANY:
    case KT_GO_STRING_SLICE:
    default:
        return &S_PLAIN;
    }
}

static int marshal(struct kt_buf *b, const json_t *v, const struct goschema *s);

/* jansson's iteration macros take a non-const object; we only read. */
static json_t *unconst(const json_t *v)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {v};
    return u.m;
}

static int marshal_string(struct kt_buf *b, const char *str, size_t n)
{
    const unsigned char *p = (const unsigned char *)str;
    int rc = kt_buf_puts(b, "\"", NULL);
    for (size_t i = 0; i < n && rc == 0;) {
        uint32_t r = 0;
        size_t len = utf8_rune(p + i, n - i, &r);
        unsigned char c = p[i];
        if (len == 0) {
            rc = kt_buf_puts(b, "\\ufffd", NULL);
            i++;
            continue;
        }
        if (r == 0x2028 || r == 0x2029 || r == '<' || r == '>' || r == '&' || r < 0x20) {
            const char *sh = r == '\n'   ? "\\n"
                             : r == '\r' ? "\\r"
                             : r == '\t' ? "\\t"
                             : r == '\b' ? "\\b"
                             : r == '\f' ? "\\f"
                                         : NULL;
            rc = sh ? kt_buf_puts(b, sh, NULL) : kt_buf_printf(b, NULL, "\\u%04x", (unsigned)r);
        } else if (c == '"' || c == '\\') {
            rc = kt_buf_printf(b, NULL, "\\%c", c);
        } else {
            rc = kt_buf_append(b, p + i, len, NULL);
        }
        i += len;
    }
    return rc ? rc : kt_buf_puts(b, "\"", NULL);
}

static int marshal_real(struct kt_buf *b, double d)
{
    char tmp[64];
    if (!isfinite(d)) {
        return kt_buf_puts(b, "null", NULL);
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) {
            break;
        }
    }
    return kt_buf_puts(b, tmp, NULL);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int marshal_member(struct kt_buf *b, bool *first, const char *k, const json_t *v,
                          const struct goschema *s)
{
    int rc = kt_buf_puts(b, *first ? "" : ",", NULL);
    *first = false;
    rc |= rc ? rc : marshal_string(b, k, strlen(k));
    rc |= rc ? rc : kt_buf_puts(b, ":", NULL);
    return rc ? rc : marshal(b, v, s ? s : &S_PLAIN);
}

static bool listed(const struct gofield *f, const char *k)
{
    for (; f && f->key; f++) {
        if (strcmp(f->key, k) == 0) {
            return true;
        }
    }
    return false;
}

static int marshal_object(struct kt_buf *b, const json_t *v, const struct goschema *s)
{
    bool first = true;
    const char *k;
    json_t *m;
    int rc = kt_buf_puts(b, "{", NULL);
    if (s->sorted_map) {
        size_t n = json_object_size(v), i = 0;
        const char **keys = kt_xcalloc(n ? n : 1, sizeof(char *));
        json_object_foreach(unconst(v), k, m)
        {
            keys[i++] = k;
        }
        qsort(keys, n, sizeof(char *), cmp_str);
        for (i = 0; i < n && rc == 0; i++) {
            rc = marshal_member(b, &first, keys[i], json_object_get(v, keys[i]), s->elem);
        }
        free(keys);
        return rc ? rc : kt_buf_puts(b, "}", NULL);
    }
    for (const struct gofield *f = s->fields; f && f->key && rc == 0; f++) {
        m = json_object_get(v, f->key);
        if (m) {
            rc = marshal_member(b, &first, f->key, m, f->sub);
        }
    }
    json_object_foreach(unconst(v), k, m)
    {
        if (rc == 0 && !listed(s->fields, k)) {
            rc = marshal_member(b, &first, k, m, NULL);
        }
    }
    return rc ? rc : kt_buf_puts(b, "}", NULL);
}

static int marshal(struct kt_buf *b, const json_t *v, const struct goschema *s)
{
    size_t i;
    json_t *e;
    int rc = 0;
    struct kt_quantity q;
    char qbuf[KT_QUANTITY_STR_MAX];
    if (s->quantity && kt_quantity_from_json(v, &q, NULL) == 0) {
        const char *txt = kt_quantity_format(&q, qbuf, sizeof(qbuf));
        return marshal_string(b, txt, strlen(txt));
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return marshal_object(b, v, s);
    case JSON_ARRAY:
        rc = kt_buf_puts(b, "[", NULL);
        json_array_foreach(v, i, e)
        {
            if (rc == 0 && i > 0) {
                rc = kt_buf_puts(b, ",", NULL);
            }
            if (rc == 0) {
                rc = marshal(b, e, s->elem ? s->elem : &S_PLAIN);
            }
        }
        return rc ? rc : kt_buf_puts(b, "]", NULL);
    case JSON_STRING:
        return marshal_string(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return kt_buf_printf(b, NULL, "%lld", (long long)json_integer_value(v));
    case JSON_REAL:
        return marshal_real(b, json_real_value(v));
    case JSON_TRUE:
        return kt_buf_puts(b, "true", NULL);
    case JSON_FALSE:
        return kt_buf_puts(b, "false", NULL);
    case JSON_NULL:
    default:
        return kt_buf_puts(b, "null", NULL);
    }
}

char *kt_go_marshal(const json_t *v, enum kt_gotype t)
{
    struct kt_buf b;
    kt_buf_init(&b, FERR_MAX_TEXT);
    if (!v) {
        return kt_xstrdup("null");
    }
    if (marshal(&b, v, schema_of(t)) != 0) {
        return kt_xstrdup("null");
    }
    return kt_buf_take(&b, NULL);
}
