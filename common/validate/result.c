/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/result.c - the problem list (result.h) and the path / value helpers. */
#include "common/validate/result.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"

/* ------------------------------------------------------------------ results */

void kt_vresult_init(struct kt_vresult *r)
{
    memset(r, 0, sizeof(*r));
    kt_strv_init(&r->warnings);
}

void kt_vresult_release(struct kt_vresult *r)
{
    for (size_t i = 0; i < r->len; i++) {
        free(r->items[i].field);
        free(r->items[i].type);
        free(r->items[i].text);
        free(r->items[i].ptr);
    }
    free(r->items);
    kt_strv_release(&r->warnings);
    memset(r, 0, sizeof(*r));
}

void kt_vresult_add(struct kt_vresult *r, enum kt_vstage stage, const char *field, const char *type,
                    const char *text, const char *ptr)
{
    if (r->len == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->items = kt_xrealloc(r->items, r->cap * sizeof(*r->items));
    }
    struct kt_vproblem *p = &r->items[r->len++];
    p->stage = stage;
    p->field = kt_xstrdup(field);
    p->type = kt_xstrdup(type);
    p->text = kt_xstrdup(text);
    p->ptr = kt_xstrdup(ptr ? ptr : "");
    p->go = false;
}

void kt_vresult_add_go(struct kt_vresult *r, enum kt_vstage stage, const char *field,
                       const char *text, const char *ptr)
{
    kt_vresult_add(r, stage, field, "Invalid value", text, ptr);
    r->items[r->len - 1].go = true;
}

/* "spec.env[1].name" / "metadata.labels[a/b]" -> "/spec/env/1/name" (best effort). */
char *kt_vpath_to_ptr(const char *path)
{
    char *out = kt_xstrdup("");
    const char *p = path;
    while (*p) {
        size_t n;
        if (*p == '[') {
            const char *end = strchr(p, ']');
            n = end ? (size_t)(end - p - 1) : strlen(p + 1);
            char *key = kt_xstrndup(p + 1, n);
            char *next = kt_vptr_child(out, key);
            free(key);
            free(out);
            out = next;
            p += n + 1 + (end ? 1 : 0);
        } else if (*p == '.') {
            p++;
        } else {
            n = strcspn(p, ".[");
            char *key = kt_xstrndup(p, n);
            char *next = kt_vptr_child(out, key);
            free(key);
            free(out);
            out = next;
            p += n;
        }
    }
    return out;
}

void kt_vresult_add_ferrs(struct kt_vresult *r, const struct kt_ferrs *l)
{
    for (size_t i = 0; i < l->len; i++) {
        char *text = kt_ferr_string(&l->items[i]);
        char *ptr = kt_vpath_to_ptr(l->items[i].field);
        kt_vresult_add(r, KT_VSTAGE_WEBHOOK, l->items[i].field, kt_ferr_type_str(l->items[i].type),
                       text, ptr);
        free(ptr);
        free(text);
    }
}

char *kt_vresult_string(const struct kt_vresult *r)
{
    struct kt_strv seen;
    struct kt_buf b;
    kt_strv_init(&seen);
    kt_buf_init(&b, (size_t)1 << 30);
    for (size_t i = 0; i < r->len; i++) {
        if (!kt_strv_contains(&seen, r->items[i].text)) {
            kt_strv_push(&seen, r->items[i].text);
        }
    }
    for (size_t i = 0; i < seen.len; i++) {
        KT_ASSERT(kt_buf_printf(&b, NULL, "%s%s",
                                i              ? ", "
                                : seen.len > 1 ? "["
                                               : "",
                                seen.items[i]) == 0);
    }
    if (seen.len > 1) {
        KT_ASSERT(kt_buf_puts(&b, "]", NULL) == 0);
    }
    kt_strv_release(&seen);
    return kt_buf_take(&b, NULL);
}

/* ------------------------------------------------------------------ paths */

char *kt_vpath_child(const char *path, const char *key)
{
    return path[0] ? kt_xasprintf("%s.%s", path, key) : kt_xstrdup(key);
}

char *kt_vpath_index(const char *path, size_t i)
{
    return kt_xasprintf("%s[%zu]", path, i);
}

char *kt_vptr_child(const char *ptr, const char *key)
{
    struct kt_buf b;
    kt_buf_init(&b, (size_t)1 << 30);
    size_t n = strlen(ptr);
    KT_ASSERT(kt_buf_append(&b, ptr, n, NULL) == 0);
    KT_ASSERT(kt_json_pointer_push(&b, key, NULL) == 0);
    return kt_buf_take(&b, NULL);
}

char *kt_vptr_index(const char *ptr, size_t i)
{
    return kt_xasprintf("%s/%zu", ptr, i);
}

/* ------------------------------------------------------------------ values */

const char *kt_vjson_type(const json_t *x)
{
    switch (json_typeof(x)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return kt_vis_integral(x) ? "integer" : "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

bool kt_vis_integral(const json_t *x)
{
    if (json_is_integer(x)) {
        return true;
    }
    double d = json_real_value(x);
    return json_is_real(x) && d > -9.2e18 && d < 9.2e18 && d == (double)(long long)d;
}

/* Go's %v of a JSON scalar (int64, float64, bool) or %q of a string. */
char *kt_vvalue(const json_t *x)
{
    char buf[KT_JSON_REAL_MAX];
    if (json_is_string(x)) {
        return kt_go_quote(json_string_value(x));
    }
    if (kt_vis_integral(x)) {
        long long n =
            json_is_integer(x) ? (long long)json_integer_value(x) : (long long)json_real_value(x);
        return kt_xasprintf("%lld", n);
    }
    if (json_is_real(x)) {
        double d = json_real_value(x);
        kt_json_format_real(d, buf);
        /* %v of a float64 uses %g's exponent form for large/small values */
        if (d != 0 && (d >= 1e21 || d <= -1e21 || (d < 1e-4 && d > -1e-4))) {
            return kt_xasprintf("%g", d);
        }
        return kt_xstrdup(buf);
    }
    if (json_is_boolean(x)) {
        return kt_xstrdup(json_is_true(x) ? "true" : "false");
    }
    return kt_xstrdup("null");
}

void kt_vadd(struct kt_vresult *r, enum kt_vstage st, const struct kt_vadd_req *p)
{
    const char *field = p->field, *type = p->type, *value = p->value, *detail = p->detail;
    char *text;
    if (value && detail) {
        text = kt_xasprintf("%s: %s: %s: %s", field, type, value, detail);
    } else if (value) {
        text = kt_xasprintf("%s: %s: %s", field, type, value);
    } else if (detail) {
        text = kt_xasprintf("%s: %s: %s", field, type, detail);
    } else {
        text = kt_xasprintf("%s: %s", field, type);
    }
    kt_vresult_add(r, st, field, type, text, p->ptr);
    free(text);
}
