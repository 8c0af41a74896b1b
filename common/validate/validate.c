/* common/validate/validate.c - the validation pipeline of one document (validate.h), the problem
 * list, and apimachinery's ObjectMeta label/annotation checks with their exact messages. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/validate/validate_internal.h"

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
}

/* "spec.env[1].name" / "metadata.labels[a/b]" -> "/spec/env/1/name" (best effort). */
static char *path_to_ptr(const char *path)
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
        char *ptr = path_to_ptr(l->items[i].field);
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

/* ------------------------------------------------------------------ labels, annotations */

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool name_part_ok(const char *s, size_t n)
{
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
            return false;
        }
    }
    return true;
}

#define NAME_PART_MSG                                                                              \
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "      \
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "      \
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define PREFIX_MSG                                                                                 \
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "          \
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "         \
    "'example.com', regex used for validation is "                                                 \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-_A-Za-z0-9.]*)?[A-Za-z0-9])?')"

static void bad(struct kt_vresult *r, const char *field, const char *value, const char *detail,
                const char *ptr)
{
    char *q = kt_go_quote(value);
    kt_vadd(r, KT_VSTAGE_SCHEMA, field, "Invalid value", q, detail, ptr);
    free(q);
}

/* apimachinery IsQualifiedName. */
static void check_qualified_name(struct kt_vresult *r, const char *field, const char *key,
                                 const char *ptr)
{
    const char *slash = strchr(key, '/');
    const char *name = slash ? slash + 1 : key;
    if (slash && strchr(name, '/')) {
        bad(r, field, key,
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')",
            ptr);
        return;
    }
    if (slash) {
        char *prefix = kt_xstrndup(key, (size_t)(slash - key));
        if (prefix[0] == '\0') {
            bad(r, field, key, "prefix part must be non-empty", ptr);
        } else if (strlen(prefix) > 253) {
            bad(r, field, key, "prefix part must be no more than 253 bytes", ptr);
        } else if (!kt_vis_dns1123_subdomain(prefix)) {
            bad(r, field, key, PREFIX_MSG, ptr);
        }
        free(prefix);
    }
    size_t n = strlen(name);
    if (n == 0) {
        bad(r, field, key, "name part must be non-empty", ptr);
    } else if (n > 63) {
        bad(r, field, key, "name part must be no more than 63 bytes", ptr);
    }
    if (!name_part_ok(name, n)) {
        bad(r, field, key, NAME_PART_MSG, ptr);
    }
}

void kt_vcheck_labels(struct kt_vresult *r, const json_t *labels, const char *field,
                      const char *ptr)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)labels, k, v)
    {
        char *p = kt_vptr_child(ptr, k);
        check_qualified_name(r, field, k, p);
        const char *s = json_string_value(v);
        size_t n = s ? strlen(s) : 0;
        if (s && n > 63) {
            bad(r, field, s, "must be no more than 63 bytes", p);
        }
        if (s && n > 0 && !name_part_ok(s, n)) {
            bad(r, field, s, LABEL_VALUE_MSG, p);
        }
        free(p);
    }
}

void kt_vcheck_annotations(struct kt_vresult *r, const json_t *annotations, const char *field,
                           const char *ptr)
{
    const char *k;
    json_t *v;
    size_t total = 0;
    json_object_foreach((json_t *)(uintptr_t)annotations, k, v)
    {
        char *p = kt_vptr_child(ptr, k);
        char *lower = kt_xstrdup(k);
        for (char *c = lower; *c; c++) {
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        }
        check_qualified_name(r, field, lower, p);
        free(lower);
        free(p);
        total += strlen(k) + json_string_length(v);
    }
    if (total > 256 * 1024) {
        kt_vadd(r, KT_VSTAGE_SCHEMA, field, "Too long", NULL, "may not be more than 262144 bytes",
                ptr);
    }
}

/* ------------------------------------------------------------------ pipeline */

static const char *const our_kinds[] = {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime",
                                        NULL};

bool kt_validate_is_ours(const json_t *obj)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!av || !kind || strcmp(av, KT_API_VERSION) != 0) {
        return false;
    }
    for (size_t i = 0; our_kinds[i]; i++) {
        if (strcmp(kind, our_kinds[i]) == 0) {
            return true;
        }
    }
    return false;
}

static const char *go_json_type(const json_t *x)
{
    switch (json_typeof(x)) {
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

static void unmarshal_error(struct kt_vresult *r, const json_t *x, const char *field,
                            const char *gotype, const char *ptr)
{
    char *t =
        kt_xasprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.%s of type %s",
                     go_json_type(x), field, gotype);
    kt_vresult_add(r, KT_VSTAGE_DECODE, field, "", t, ptr);
    free(t);
}

/* kubectl decodes metadata into ObjectMeta before sending: wrong JSON types fail there. */
static bool meta_types_ok(const json_t *obj, struct kt_vresult *r)
{
    static const char *const strs[] = {"name", "namespace", "generateName", NULL};
    static const char *const maps[] = {"labels", "annotations", NULL};
    const json_t *meta = json_object_get(obj, "metadata");
    size_t before = r->len;
    for (size_t i = 0; strs[i]; i++) {
        const json_t *x = json_object_get(meta, strs[i]);
        if (x && !json_is_string(x) && !json_is_null(x)) {
            char *f = kt_xasprintf("metadata.%s", strs[i]),
                 *p = kt_xasprintf("/metadata/%s", strs[i]);
            unmarshal_error(r, x, f, "string", p);
            free(f);
            free(p);
        }
    }
    for (size_t i = 0; maps[i]; i++) {
        const json_t *m = json_object_get(meta, maps[i]);
        char *f = kt_xasprintf("metadata.%s", maps[i]), *p = kt_xasprintf("/metadata/%s", maps[i]);
        if (m && !json_is_object(m) && !json_is_null(m)) {
            unmarshal_error(r, m, f, "map[string]string", p);
        }
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)(uintptr_t)m, k, v)
        {
            if (!json_is_string(v) && !json_is_null(v)) {
                char *pp = kt_vptr_child(p, k);
                unmarshal_error(r, v, f, "string", pp);
                free(pp);
                break;
            }
        }
        free(f);
        free(p);
    }
    return r->len == before;
}

/* Steps 1-2 on a copy. Returns the copy, or NULL when strict decoding failed (problems in r). */
static json_t *decode(const struct kt_validator *v, const char *kind, const json_t *obj,
                      struct kt_vresult *r)
{
    if (!meta_types_ok(obj, r)) {
        return NULL;
    }
    json_t *copy = json_deep_copy(obj);
    struct kt_strv unknown;
    kt_strv_init(&unknown);
    kt_validate_prune(v, kind, copy, &unknown);
    for (size_t i = 0; i < unknown.len; i++) {
        char *text = kt_xasprintf("strict decoding error: unknown field \"%s\"", unknown.items[i]);
        char *ptr = path_to_ptr(unknown.items[i]);
        kt_vresult_add(r, KT_VSTAGE_DECODE, unknown.items[i], "", text, ptr);
        free(ptr);
        free(text);
    }
    bool failed = unknown.len > 0;
    kt_strv_release(&unknown);
    if (failed) {
        json_decref(copy);
        return NULL;
    }
    kt_validate_defaults(v, kind, copy);
    return copy;
}

int kt_validate_object(const struct kt_validator *v, const struct kt_framework *fw,
                       const json_t *obj, const json_t *old, time_t now,
                       const struct kt_vruntimes *rts, struct kt_vresult *r, struct kt_err *err)
{
    return kt_validate_object_admitted(v, fw, obj, old, now, rts, r, NULL, err);
}

int kt_validate_object_admitted(const struct kt_validator *v, const struct kt_framework *fw,
                                const json_t *obj, const json_t *old, time_t now,
                                const struct kt_vruntimes *rts, struct kt_vresult *r,
                                json_t **admitted, struct kt_err *err)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    json_t *o = NULL, *oo = NULL;
    int rc = 0;
    size_t before = r->len;
    if (!kt_validate_is_ours(obj)) {
        return kt_err_set(err, KT_EINVAL, "not a trainer.kubeflow.org/v1alpha1 object");
    }
    o = decode(v, kind, obj, r);
    if (!o) {
        goto out;
    }
    if (old) {
        struct kt_vresult ignored;
        kt_vresult_init(&ignored);
        oo = decode(v, kind, old, &ignored);
        kt_vresult_release(&ignored);
    }
    if (strcmp(kind, "TrainJob") == 0) {
        kt_validate_default_trainjob(o, oo, now);
    }
    kt_validate_schema(v, kind, o, oo, r);
    if (r->len > before) {
        goto out;
    }
    if (strcmp(kind, "TrainJob") == 0) {
        rc = kt_validate_trainjob_webhook(fw, o, oo, rts, r, err);
    } else {
        kt_validate_runtime_webhook(o, oo, r);
    }
    if (admitted && rc == 0 && r->len == before) {
        *admitted = json_incref(o);
    }
out:
    json_decref(o);
    json_decref(oo);
    return rc;
}

int kt_validate_trainjob(const struct kt_validator *v, const struct kt_framework *fw,
                         const json_t *obj, const json_t *old, time_t now,
                         const struct kt_vruntimes *rts, struct kt_vresult *r, struct kt_err *err)
{
    return kt_validate_object(v, fw, obj, old, now, rts, r, err);
}

void kt_validate_runtime(const struct kt_validator *v, const json_t *obj, const json_t *old,
                         struct kt_vresult *r)
{
    struct kt_err err = {0};
    if (kt_validate_object(v, NULL, obj, old, 0, NULL, r, &err) != 0) {
        kt_vresult_add(r, KT_VSTAGE_WEBHOOK, "", "Internal error", err.msg, "");
    }
}
