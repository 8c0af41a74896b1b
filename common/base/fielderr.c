/* common/base/fielderr.c - field-error lists and their Go-compatible rendering (SPEC §4.5).
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

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/quantity.h"

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

/* How a Go struct field marshals when absent or zero (encoding/json tags). */
enum {
    GF_KEEP = 0,          /* print when present (pointer or untagged field) */
    GF_OMITEMPTY = 1,     /* value type with omitempty: drop "", 0, false, [], {} */
    GF_ZERO_STR = 2,      /* string without omitempty: absent prints "" */
    GF_ZERO_INT = 4,      /* integer without omitempty: absent prints 0 */
    GF_ZERO_STRUCT = 8,   /* struct value: omitempty never drops it, absent prints {...} */
    GF_ZERO_QUANTITY = 16 /* resource.Quantity value: absent prints "0" */
};

struct gofield {
    const char *key;
    const struct goschema *sub;
    unsigned flags;
};
struct goschema {
    bool sorted_map;              /* a Go map: keys sorted */
    bool quantity;                /* a resource.Quantity: its canonical string */
    const struct goschema *elem;  /* list elements / map values */
    const struct gofield *fields; /* NULL-key terminated; NULL = keep order */
};

#define GF_END                                                                                     \
    {                                                                                              \
        NULL, NULL, 0                                                                              \
    }
#define GO_STRUCT(fields)                                                                          \
    {                                                                                              \
        false, false, NULL, fields                                                                 \
    }
#define GO_LIST(elem)                                                                              \
    {                                                                                              \
        false, false, elem, NULL                                                                   \
    }

static const struct goschema S_PLAIN = {false, false, NULL, NULL};
static const struct goschema S_QUANTITY = {false, true, NULL, NULL};
static const struct goschema S_QMAP = {true, false, &S_QUANTITY, NULL};
static const struct gofield F_OBJSEL[] = {
    {"apiVersion", NULL, GF_OMITEMPTY}, {"fieldPath", NULL, GF_ZERO_STR}, GF_END};
static const struct goschema S_OBJSEL = GO_STRUCT(F_OBJSEL);
static const struct gofield F_RESSEL[] = {{"containerName", NULL, GF_OMITEMPTY},
                                          {"resource", NULL, GF_ZERO_STR},
                                          {"divisor", &S_QUANTITY, GF_ZERO_QUANTITY},
                                          GF_END};
static const struct goschema S_RESSEL = GO_STRUCT(F_RESSEL);
/* ConfigMapKeySelector / SecretKeySelector: LocalObjectReference inline, key, optional. */
static const struct gofield F_KEYSEL[] = {
    {"name", NULL, GF_OMITEMPTY}, {"key", NULL, GF_ZERO_STR}, {"optional", NULL, GF_KEEP}, GF_END};
static const struct goschema S_KEYSEL = GO_STRUCT(F_KEYSEL);
static const struct gofield F_FILESEL[] = {{"volumeName", NULL, GF_ZERO_STR},
                                           {"path", NULL, GF_ZERO_STR},
                                           {"key", NULL, GF_ZERO_STR},
                                           {"optional", NULL, GF_KEEP},
                                           GF_END};
static const struct goschema S_FILESEL = GO_STRUCT(F_FILESEL);
static const struct gofield F_ENVSRC[] = {
    {"fieldRef", &S_OBJSEL, GF_KEEP},        {"resourceFieldRef", &S_RESSEL, GF_KEEP},
    {"configMapKeyRef", &S_KEYSEL, GF_KEEP}, {"secretKeyRef", &S_KEYSEL, GF_KEEP},
    {"fileKeyRef", &S_FILESEL, GF_KEEP},     GF_END};
static const struct goschema S_ENVSRC = GO_STRUCT(F_ENVSRC);
static const struct gofield F_ENV[] = {{"name", NULL, GF_ZERO_STR},
                                       {"value", NULL, GF_OMITEMPTY},
                                       {"valueFrom", &S_ENVSRC, GF_KEEP},
                                       GF_END};
static const struct goschema S_ENV = GO_STRUCT(F_ENV);
static const struct goschema S_ENV_LIST = GO_LIST(&S_ENV);
static const struct gofield F_REF[] = {
    {"name", NULL, GF_KEEP}, {"apiGroup", NULL, GF_KEEP}, {"kind", NULL, GF_KEEP}, GF_END};
static const struct goschema S_REF = GO_STRUCT(F_REF);
static const struct gofield F_PATCH[] = {{"manager", NULL, GF_KEEP},
                                         {"time", NULL, GF_KEEP},
                                         {"trainingRuntimeSpec", NULL, GF_KEEP},
                                         GF_END};
static const struct goschema S_PATCH = GO_STRUCT(F_PATCH);
static const struct goschema S_PATCH_LIST = GO_LIST(&S_PATCH);
static const struct gofield F_TARGET[] = {
    {"jobName", NULL, GF_KEEP}, {"containerNames", NULL, GF_KEEP}, GF_END};
static const struct goschema S_TARGET = GO_STRUCT(F_TARGET);
static const struct gofield F_CLAIM[] = {
    {"name", NULL, GF_ZERO_STR}, {"request", NULL, GF_OMITEMPTY}, GF_END};
static const struct goschema S_CLAIM = GO_STRUCT(F_CLAIM);
static const struct goschema S_CLAIM_LIST = GO_LIST(&S_CLAIM);
static const struct gofield F_RES[] = {{"limits", &S_QMAP, GF_OMITEMPTY},
                                       {"requests", &S_QMAP, GF_OMITEMPTY},
                                       {"claims", &S_CLAIM_LIST, GF_OMITEMPTY},
                                       GF_END};
static const struct goschema S_RES = GO_STRUCT(F_RES);

/* corev1.Container and the nested types whose order was checked against k8s.io/api v0.35;
 * probes, lifecycle and securityContext keep the input order. */
static const struct gofield F_PORT[] = {
    {"name", NULL, GF_OMITEMPTY},         {"hostPort", NULL, GF_OMITEMPTY},
    {"containerPort", NULL, GF_ZERO_INT}, {"protocol", NULL, GF_OMITEMPTY},
    {"hostIP", NULL, GF_OMITEMPTY},       GF_END};
static const struct goschema S_PORT = GO_STRUCT(F_PORT);
static const struct goschema S_PORT_LIST = GO_LIST(&S_PORT);
/* ConfigMapEnvSource / SecretEnvSource: LocalObjectReference inline, optional. */
static const struct gofield F_ENVREF[] = {
    {"name", NULL, GF_OMITEMPTY}, {"optional", NULL, GF_KEEP}, GF_END};
static const struct goschema S_ENVREF = GO_STRUCT(F_ENVREF);
static const struct gofield F_ENVFROM[] = {{"prefix", NULL, GF_OMITEMPTY},
                                           {"configMapRef", &S_ENVREF, GF_KEEP},
                                           {"secretRef", &S_ENVREF, GF_KEEP},
                                           GF_END};
static const struct goschema S_ENVFROM = GO_STRUCT(F_ENVFROM);
static const struct goschema S_ENVFROM_LIST = GO_LIST(&S_ENVFROM);
static const struct gofield F_RESIZE[] = {
    {"resourceName", NULL, GF_ZERO_STR}, {"restartPolicy", NULL, GF_ZERO_STR}, GF_END};
static const struct goschema S_RESIZE = GO_STRUCT(F_RESIZE);
static const struct goschema S_RESIZE_LIST = GO_LIST(&S_RESIZE);
static const struct gofield F_MOUNT[] = {
    {"name", NULL, GF_ZERO_STR},          {"readOnly", NULL, GF_OMITEMPTY},
    {"recursiveReadOnly", NULL, GF_KEEP}, {"mountPath", NULL, GF_ZERO_STR},
    {"subPath", NULL, GF_OMITEMPTY},      {"mountPropagation", NULL, GF_KEEP},
    {"subPathExpr", NULL, GF_OMITEMPTY},  GF_END};
static const struct goschema S_MOUNT = GO_STRUCT(F_MOUNT);
static const struct goschema S_MOUNT_LIST = GO_LIST(&S_MOUNT);
static const struct gofield F_DEVICE[] = {
    {"name", NULL, GF_ZERO_STR}, {"devicePath", NULL, GF_ZERO_STR}, GF_END};
static const struct goschema S_DEVICE = GO_STRUCT(F_DEVICE);
static const struct goschema S_DEVICE_LIST = GO_LIST(&S_DEVICE);
static const struct gofield F_CONTAINER[] = {{"name", NULL, GF_ZERO_STR},
                                             {"image", NULL, GF_OMITEMPTY},
                                             {"command", NULL, GF_OMITEMPTY},
                                             {"args", NULL, GF_OMITEMPTY},
                                             {"workingDir", NULL, GF_OMITEMPTY},
                                             {"ports", &S_PORT_LIST, GF_OMITEMPTY},
                                             {"envFrom", &S_ENVFROM_LIST, GF_OMITEMPTY},
                                             {"env", &S_ENV_LIST, GF_OMITEMPTY},
                                             {"resources", &S_RES, GF_ZERO_STRUCT},
                                             {"resizePolicy", &S_RESIZE_LIST, GF_OMITEMPTY},
                                             {"restartPolicy", NULL, GF_KEEP},
                                             {"restartPolicyRules", NULL, GF_OMITEMPTY},
                                             {"volumeMounts", &S_MOUNT_LIST, GF_OMITEMPTY},
                                             {"volumeDevices", &S_DEVICE_LIST, GF_OMITEMPTY},
                                             {"livenessProbe", NULL, GF_KEEP},
                                             {"readinessProbe", NULL, GF_KEEP},
                                             {"startupProbe", NULL, GF_KEEP},
                                             {"lifecycle", NULL, GF_KEEP},
                                             {"terminationMessagePath", NULL, GF_OMITEMPTY},
                                             {"terminationMessagePolicy", NULL, GF_OMITEMPTY},
                                             {"imagePullPolicy", NULL, GF_OMITEMPTY},
                                             {"securityContext", NULL, GF_KEEP},
                                             {"stdin", NULL, GF_OMITEMPTY},
                                             {"stdinOnce", NULL, GF_OMITEMPTY},
                                             {"tty", NULL, GF_OMITEMPTY},
                                             GF_END};
static const struct goschema S_CONTAINER = GO_STRUCT(F_CONTAINER);
static const struct goschema S_CONTAINER_LIST = GO_LIST(&S_CONTAINER);

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
    case KT_GO_CONTAINER_LIST:
        return &S_CONTAINER_LIST;
    case KT_GO_ANY:
    case KT_GO_STRING_SLICE:
    default:
        return &S_PLAIN;
    }
}

static int marshal(struct kt_buf *b, const json_t *v, const struct goschema *s);

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

/* Go's omitempty test on a decoded value: false, 0, "", nil, empty slice or map. */
static bool go_empty(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_REAL:
        return json_real_value(v) == 0;
    case JSON_ARRAY:
        return json_array_size(v) == 0;
    case JSON_OBJECT:
        return json_object_size(v) == 0;
    case JSON_TRUE:
        return false;
    case JSON_FALSE:
    case JSON_NULL:
    default:
        return true;
    }
}

/* The zero value Go prints for an absent (or null) field of f, or NULL when it prints none.
 * Caller owns the result. */
static json_t *go_zero(const struct gofield *f)
{
    if (f->flags & GF_ZERO_STR) {
        return json_string("");
    }
    if (f->flags & GF_ZERO_INT) {
        return json_integer(0);
    }
    if (f->flags & GF_ZERO_STRUCT) {
        return json_object();
    }
    if (f->flags & GF_ZERO_QUANTITY) {
        return json_string("0");
    }
    return NULL;
}

/* One declared struct field as encoding/json prints it (m NULL when absent). */
static int marshal_field(struct kt_buf *b, bool *first, const struct gofield *f, const json_t *m)
{
    if (!m || json_is_null(m)) {
        json_t *zero = go_zero(f);
        int rc = zero ? marshal_member(b, first, f->key, zero, f->sub) : 0;
        json_decref(zero);
        return rc;
    }
    if ((f->flags & GF_OMITEMPTY) && go_empty(m)) {
        return 0;
    }
    return marshal_member(b, first, f->key, m, f->sub);
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
        json_object_foreach(kt__json_unconst(v), k, m)
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
        rc = marshal_field(b, &first, f, json_object_get(v, f->key));
    }
    json_object_foreach(kt__json_unconst(v), k, m)
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
