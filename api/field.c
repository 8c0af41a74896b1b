/* SPDX-License-Identifier: Apache-2.0 */
/* api/field.c - typed member access, CRD defaulting and write-back for the API codecs.
 *
 * Only what the codecs need: JSON type checks with field paths, int32 range checks, the
 * structural-schema defaulting rule (set when the parent exists and the member is absent or
 * null) and minimal-change write-back. No schema validation beyond types: that is the
 * validator's job. */
#include "api/field.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PATH_MAX_LEN 512

void kt__field_path_fmt(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
}

const char *kt__field_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        return "null";
    default:
        return "unknown";
    }
}

static const char *last_segment(const char *path)
{
    const char *dot = strrchr(path, '.');

    return dot ? dot + 1 : path;
}

json_t *kt__field_get(json_t *parent, const char *path)
{
    const char *key = last_segment(path);
    json_t *v;

    if (!json_is_object(parent)) {
        return NULL;
    }
    v = json_object_get(parent, key);
    if (json_is_null(v)) {
        json_object_del(parent, key);
        return NULL;
    }
    return v;
}

static int type_error(struct kt_err *err, const char *path, const char *want, const json_t *got)
{
    return kt_err_set(err, KT_EINVAL, "%s: expected %s, got %s", path, want,
                      kt__field_type_name(got));
}

int kt__field_obj(json_t *parent, const char *path, json_t **out, struct kt_err *err)
{
    json_t *v = kt__field_get(parent, path);

    if (!v) {
        return 0;
    }
    if (!json_is_object(v)) {
        return type_error(err, path, "object", v);
    }
    *out = v;
    return 0;
}

int kt__field_arr(json_t *parent, const char *path, json_t **out, struct kt_err *err)
{
    json_t *v = kt__field_get(parent, path);

    if (!v) {
        return 0;
    }
    if (!json_is_array(v)) {
        return type_error(err, path, "array", v);
    }
    *out = v;
    return 0;
}

int kt__field_str(json_t *parent, const char *path, const char **out, struct kt_err *err)
{
    json_t *v = kt__field_get(parent, path);

    if (!v) {
        return 0;
    }
    if (!json_is_string(v)) {
        return type_error(err, path, "string", v);
    }
    *out = json_string_value(v);
    return 0;
}

int kt__field_bool(json_t *parent, const char *path, bool *out, struct kt_err *err)
{
    json_t *v = kt__field_get(parent, path);

    if (!v) {
        return 0;
    }
    if (!json_is_boolean(v)) {
        return type_error(err, path, "boolean", v);
    }
    *out = json_is_true(v);
    return 0;
}

/* Check an integer member in [min, max]. An integral real becomes an integer in parent,
 * as the API server reads 2.0 as the integer 2. */
static int get_int(json_t *parent, const char *path, int64_t min, int64_t max,
                   struct kt_opt_i64 *out, struct kt_err *err)
{
    json_t *v = kt__field_get(parent, path);
    int64_t n;

    if (!v) {
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        /* 2^63 is exactly representable; anything at or beyond it cannot be an int64. */
        if (!(d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
            return type_error(err, path, "integer", v);
        }
        n = (int64_t)d;
        json_object_set_new(parent, last_segment(path), json_integer(n));
    } else if (json_is_integer(v)) {
        n = json_integer_value(v);
    } else {
        return type_error(err, path, "integer", v);
    }
    if (n < min || n > max) {
        return kt_err_set(err, KT_ERANGE, "%s: %lld is out of range for %s", path, (long long)n,
                          max == INT32_MAX ? "int32" : "int64");
    }
    out->has = true;
    out->v = n;
    return 0;
}

int kt__field_i32(json_t *parent, const char *path, struct kt_opt_i64 *out, struct kt_err *err)
{
    return get_int(parent, path, INT32_MIN, INT32_MAX, out, err);
}

int kt__field_i64(json_t *parent, const char *path, struct kt_opt_i64 *out, struct kt_err *err)
{
    return get_int(parent, path, INT64_MIN, INT64_MAX, out, err);
}

int kt__field_arr_of(json_t *parent, const char *path, json_type type, json_t **out,
                     struct kt_err *err)
{
    json_t *arr = NULL;
    json_t *item;
    size_t i;

    if (kt__field_arr(parent, path, &arr, err) < 0) {
        return -1;
    }
    if (!arr) {
        return 0;
    }
    json_array_foreach(arr, i, item)
    {
        if (json_typeof(item) != type) {
            char at[PATH_MAX_LEN];
            kt__field_path_fmt(at, sizeof(at), "%s[%zu]", path, i);
            return type_error(err, at, type == JSON_OBJECT ? "object" : "string", item);
        }
    }
    *out = arr;
    return 0;
}

/* Set or check the defaulted member key of obj; path names it in messages. */
static int default_leaf(json_t *obj, const char *key, const char *path,
                        const struct kt__default *rule, struct kt_err *err)
{
    struct kt_opt_i64 n = {0};
    const char *s = NULL;
    bool b = false;

    switch (rule->type) {
    case KT__DEF_STR:
        if (kt__field_str(obj, path, &s, err) < 0) {
            return -1;
        }
        if (!s) {
            json_object_set_new(obj, key, json_string(rule->s));
        }
        return 0;
    case KT__DEF_BOOL:
        if (kt__field_bool(obj, path, &b, err) < 0) {
            return -1;
        }
        if (!json_object_get(obj, key)) {
            json_object_set_new(obj, key, json_boolean(rule->i));
        }
        return 0;
    default:
        KT_ASSERT(rule->type == KT__DEF_I32 || rule->type == KT__DEF_I64);
        if (get_int(obj, path, rule->type == KT__DEF_I32 ? INT32_MIN : INT64_MIN,
                    rule->type == KT__DEF_I32 ? INT32_MAX : INT64_MAX, &n, err) < 0) {
            return -1;
        }
        if (!n.has) {
            json_object_set_new(obj, key, json_integer(rule->i));
        }
        return 0;
    }
}

/* Append n bytes of s at dst[*len], truncating like snprintf (cap > 0). */
static void path_put(char *dst, size_t cap, size_t *len, const char *s, size_t n)
{
    size_t room = cap - 1 - *len;
    n = n < room ? n : room;
    memcpy(dst + *len, s, n);
    *len += n;
    dst[*len] = '\0';
}

/* "base.seg" (or "seg" for an empty base); on the hot path of every decode, so no printf. */
static void path_join(char *dst, size_t cap, const char *base, const char *seg, size_t seglen)
{
    size_t len = 0;
    dst[0] = '\0';
    if (base[0]) {
        path_put(dst, cap, &len, base, strlen(base));
        path_put(dst, cap, &len, ".", 1);
    }
    path_put(dst, cap, &len, seg, seglen);
}

/* Walk the rest of the rule path (rest) below obj, whose concrete path is at. */
static int default_walk(json_t *obj, const char *rest, const char *at,
                        const struct kt__default *rule, struct kt_err *err)
{
    const char *dot = strchr(rest, '.');
    size_t seglen = dot ? (size_t)(dot - rest) : strlen(rest);
    bool each = seglen > 2 && memcmp(rest + seglen - 2, "[]", 2) == 0;
    size_t keylen = each ? seglen - 2 : seglen;
    char key[128];
    char path[PATH_MAX_LEN];
    json_t *child = NULL;

    KT_ASSERT(keylen < sizeof(key));
    memcpy(key, rest, keylen);
    key[keylen] = '\0';
    path_join(path, sizeof(path), at, rest, keylen);
    if (!dot) {
        return default_leaf(obj, key, path, rule, err);
    }
    if (!each) {
        if (kt__field_obj(obj, path, &child, err) < 0) {
            return -1;
        }
        return child ? default_walk(child, dot + 1, path, rule, err) : 0;
    }
    if (kt__field_arr(obj, path, &child, err) < 0) {
        return -1;
    }
    for (size_t i = 0; child && i < json_array_size(child); i++) {
        json_t *item = json_array_get(child, i);
        char ipath[PATH_MAX_LEN];
        kt__field_path_fmt(ipath, sizeof(ipath), "%s[%zu]", path, i);
        if (!json_is_object(item)) {
            return type_error(err, ipath, "object", item);
        }
        if (default_walk(item, dot + 1, ipath, rule, err) < 0) {
            return -1;
        }
    }
    return 0;
}

int kt__field_defaults(json_t *root, const struct kt__default *rules, size_t n, struct kt_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (default_walk(root, rules[i].path, "", &rules[i], err) < 0) {
            return -1;
        }
    }
    return 0;
}

enum walk { WALK_GET, WALK_MAKE };

static json_t *parent_walk(json_t *root, const char *parent, enum walk how)
{
    bool create = how == WALK_MAKE;
    json_t *cur = root;
    const char *p = parent;

    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        char key[128];
        json_t *next;

        KT_ASSERT(len < sizeof(key));
        memcpy(key, p, len);
        key[len] = '\0';
        next = json_object_get(cur, key);
        if (!json_is_object(next)) {
            if (!create) {
                return NULL;
            }
            next = json_object();
            json_object_set_new(cur, key, next);
        }
        cur = next;
        p = dot ? dot + 1 : p + len;
    }
    return cur;
}

json_t *kt__field_get_parent(json_t *root, const char *parent)
{
    return parent_walk(root, parent, WALK_GET);
}

json_t *kt__field_make_parent(json_t *root, const char *parent)
{
    return parent_walk(root, parent, WALK_MAKE);
}

static void del_member(json_t *root, const char *parent, const char *key)
{
    json_t *obj = kt__field_get_parent(root, parent);

    if (obj) {
        json_object_del(obj, key);
    }
}

void kt__field_put_str(json_t *root, const char *parent, const char *key, const char *val,
                       const char *absent_eq)
{
    json_t *obj = kt__field_get_parent(root, parent);
    json_t *cur = obj ? json_object_get(obj, key) : NULL;

    if (!val) {
        del_member(root, parent, key);
        return;
    }
    if (json_is_string(cur) && strcmp(json_string_value(cur), val) == 0) {
        return;
    }
    if (!cur && absent_eq && strcmp(val, absent_eq) == 0) {
        return;
    }
    json_object_set_new(kt__field_make_parent(root, parent), key, json_string(val));
}

void kt__field_put_bool(json_t *root, const char *parent, const char *key, bool val, bool absent_eq)
{
    json_t *obj = kt__field_get_parent(root, parent);
    json_t *cur = obj ? json_object_get(obj, key) : NULL;

    if (json_is_boolean(cur) && json_is_true(cur) == val) {
        return;
    }
    if (!cur && val == absent_eq) {
        return;
    }
    json_object_set_new(kt__field_make_parent(root, parent), key, json_boolean(val));
}

void kt__field_put_int(json_t *root, const char *parent, const char *key, struct kt_opt_i64 val)
{
    json_t *obj = kt__field_get_parent(root, parent);
    json_t *cur = obj ? json_object_get(obj, key) : NULL;

    if (!val.has) {
        del_member(root, parent, key);
        return;
    }
    if (json_is_integer(cur) && json_integer_value(cur) == val.v) {
        return;
    }
    json_object_set_new(kt__field_make_parent(root, parent), key, json_integer(val.v));
}

void kt__field_put_json(json_t *root, const char *parent, const char *key, const json_t *val,
                        const json_t *orig)
{
    if (val == orig && val) {
        return;
    }
    if (!val) {
        del_member(root, parent, key);
        return;
    }
    /* json_deep_copy takes a const pointer since jansson 2.7 (Debian 12 ships 2.14). */
    json_object_set_new(kt__field_make_parent(root, parent), key, json_deep_copy(val));
}

/* Quote s for a message, or say "nothing" when it is absent. */
static void quoted(char *dst, size_t cap, const char *s)
{
    if (s) {
        kt__field_path_fmt(dst, cap, "\"%s\"", s);
    } else {
        kt__field_path_fmt(dst, cap, "nothing");
    }
}

int kt__field_check_kind(json_t *obj, const char *const *kinds, size_t n, struct kt_err *err)
{
    const char *api_version = NULL;
    const char *kind = NULL;
    char got[96];

    KT_ASSERT(n >= 1 && n <= 2);
    if (!json_is_object(obj)) {
        return kt_err_set(err, KT_EINVAL, "expected a %s object, got %s", kinds[0],
                          obj ? kt__field_type_name(obj) : "nothing");
    }
    if (kt__field_str(obj, "apiVersion", &api_version, err) < 0 ||
        kt__field_str(obj, "kind", &kind, err) < 0) {
        return -1;
    }
    if (!api_version || strcmp(api_version, KT_API_VERSION) != 0) {
        quoted(got, sizeof(got), api_version);
        return kt_err_set(err, KT_EINVAL, "apiVersion: expected \"%s\", got %s", KT_API_VERSION,
                          got);
    }
    for (size_t i = 0; kind && i < n; i++) {
        if (strcmp(kind, kinds[i]) == 0) {
            return 0;
        }
    }
    quoted(got, sizeof(got), kind);
    return kt_err_set(err, KT_EINVAL, "kind: expected \"%s\"%s%s%s, got %s", kinds[0],
                      n > 1 ? " or \"" : "", n > 1 ? kinds[1] : "", n > 1 ? "\"" : "", got);
}
