/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate_schema.c - generic checks of a JSON value against our CRDs' OpenAPI v3
 * schemas, the way the API server applies them to custom resources: pruning of unknown
 * fields (reported as kubectl's strict decoding errors), structural defaults, ObjectMeta,
 * kube-openapi's checks with apiextensions' error conversion, list-type map/set uniqueness,
 * and the x-kubernetes-validations rules through their C twins (validate_cel.c). */
#include "common/validate/validate_schema.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/validate/validate_cel.h"

#define MAX_PATTERNS 8

struct kt_validator {
    json_t *schemas; /* object: kind -> schema */
    struct {
        char *src;
        regex_t re;
    } patterns[MAX_PATTERNS];
    size_t npatterns;
    bool no_defaulter; /* model a cluster without Trainer's mutating defaulter */
};

void kt_validator_set_no_defaulter(struct kt_validator *v, bool on)
{
    v->no_defaulter = on;
}

bool kt_validator_no_defaulter(const struct kt_validator *v)
{
    return v->no_defaulter;
}

/* ------------------------------------------------------------------ validator */

static json_t *join_schema(const char *const *parts, struct kt_err *err)
{
    struct kt_buf b;
    kt_buf_init(&b, (size_t)1 << 30);
    for (size_t i = 0; parts[i]; i++) {
        if (kt_buf_append(&b, parts[i], strlen(parts[i]), err) != 0) {
            kt_buf_release(&b);
            return NULL;
        }
    }
    json_t *s = kt_json_parse(b.data ? b.data : "", b.len, err);
    kt_buf_release(&b);
    return s;
}

/* Compile every `pattern` of the schema tree once. */
static int compile_patterns(struct kt_validator *v, const json_t *node, struct kt_err *err)
{
    if (json_is_array(node)) {
        size_t i;
        json_t *it;
        json_array_foreach(node, i, it)
        {
            if (compile_patterns(v, it, err) != 0) {
                return -1;
            }
        }
        return 0;
    }
    if (!json_is_object(node)) {
        return 0;
    }
    const char *p = json_string_value(json_object_get(node, "pattern"));
    if (p && !kt_validator_pattern(v, p)) {
        if (v->npatterns == MAX_PATTERNS) {
            return kt_err_set(err, KT_ERANGE, "too many schema patterns");
        }
        if (regcomp(&v->patterns[v->npatterns].re, p, REG_EXTENDED | REG_NOSUB) != 0) {
            return kt_err_set(err, KT_EINVAL, "schema pattern %s does not compile", p);
        }
        v->patterns[v->npatterns++].src = kt_xstrdup(p);
    }
    const char *k;
    json_t *it;
    json_object_foreach((json_t *)(uintptr_t)node, k, it)
    {
        if (compile_patterns(v, it, err) != 0) {
            return -1;
        }
    }
    return 0;
}

struct kt_validator *kt_validator_new(struct kt_err *err)
{
    struct kt_validator *v = kt_xcalloc(1, sizeof(*v));
    v->schemas = json_object();
    for (size_t i = 0; kt_crd_schemas[i].kind; i++) {
        json_t *s = join_schema(kt_crd_schemas[i].json_parts, err);
        if (!s) {
            kt_err_prefix(err, "compiled-in schema of %s", kt_crd_schemas[i].kind);
            goto fail;
        }
        json_object_set_new(v->schemas, kt_crd_schemas[i].kind, s);
        if (compile_patterns(v, s, err) != 0) {
            goto fail;
        }
    }
    return v;
fail:
    kt_validator_free(v);
    return NULL;
}

void kt_validator_free(struct kt_validator *v)
{
    if (!v) {
        return;
    }
    for (size_t i = 0; i < v->npatterns; i++) {
        regfree(&v->patterns[i].re);
        free(v->patterns[i].src);
    }
    json_decref(v->schemas);
    free(v);
}

const json_t *kt_validator_schema(const struct kt_validator *v, const char *kind)
{
    return kind ? json_object_get(v->schemas, kind) : NULL;
}

const regex_t *kt_validator_pattern(const struct kt_validator *v, const char *src)
{
    for (size_t i = 0; i < v->npatterns; i++) {
        if (strcmp(v->patterns[i].src, src) == 0) {
            return &v->patterns[i].re;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ pruning */

static bool schema_true(const json_t *s, const char *key)
{
    return json_is_true(json_object_get(s, key));
}

static const char *const object_meta_fields[] = {"name",
                                                 "generateName",
                                                 "namespace",
                                                 "selfLink",
                                                 "uid",
                                                 "resourceVersion",
                                                 "generation",
                                                 "creationTimestamp",
                                                 "deletionTimestamp",
                                                 "deletionGracePeriodSeconds",
                                                 "labels",
                                                 "annotations",
                                                 "ownerReferences",
                                                 "finalizers",
                                                 "managedFields",
                                                 NULL};

static bool is_meta_field(const char *k)
{
    for (size_t i = 0; object_meta_fields[i]; i++) {
        if (strcmp(object_meta_fields[i], k) == 0) {
            return true;
        }
    }
    return false;
}

static void prune(const json_t *s, json_t *val, const char *path, struct kt_strv *unknown);

static void prune_object(const json_t *s, json_t *val, const char *path, struct kt_strv *unknown)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    bool keep = schema_true(s, "x-kubernetes-preserve-unknown-fields");
    const char *k;
    json_t *it, *tmp;
    json_object_foreach_safe(val, tmp, k, it)
    {
        const json_t *sub = json_object_get(props, k);
        char *p = kt_vpath_child(path, k);
        if (sub) {
            prune(sub, it, p, unknown);
        } else if (json_is_object(addl)) {
            prune(addl, it, p, unknown);
        } else if (!keep && !json_is_true(addl)) {
            kt_strv_push(unknown, p);
            json_object_del(val, k);
        }
        free(p);
    }
}

static void prune(const json_t *s, json_t *val, const char *path, struct kt_strv *unknown)
{
    if (json_is_object(val) &&
        (json_object_get(s, "properties") || json_object_get(s, "additionalProperties") ||
         !schema_true(s, "x-kubernetes-preserve-unknown-fields"))) {
        prune_object(s, val, path, unknown);
    } else if (json_is_array(val) && json_is_object(json_object_get(s, "items"))) {
        size_t i;
        json_t *it;
        json_array_foreach(val, i, it)
        {
            char *p = kt_vpath_index(path, i);
            prune(json_object_get(s, "items"), it, p, unknown);
            free(p);
        }
    }
}

void kt_validate_prune(const struct kt_validator *v, const char *kind, json_t *obj,
                       struct kt_strv *unknown)
{
    const json_t *s = kt_validator_schema(v, kind);
    const char *k;
    json_t *it, *tmp;
    if (!s || !json_is_object(obj)) {
        return;
    }
    struct kt_strv found;
    kt_strv_init(&found);
    json_object_foreach_safe(obj, tmp, k, it)
    {
        if (strcmp(k, "metadata") == 0 && json_is_object(it)) {
            const char *mk;
            json_t *mit, *mtmp;
            json_object_foreach_safe(it, mtmp, mk, mit)
            {
                if (!is_meta_field(mk)) {
                    char *p = kt_xasprintf("metadata.%s", mk);
                    kt_strv_push(&found, p);
                    free(p);
                    json_object_del(it, mk);
                }
            }
        } else if (json_object_get(json_object_get(s, "properties"), k)) {
            prune(json_object_get(json_object_get(s, "properties"), k), it, k, &found);
        } else {
            kt_strv_push(&found, k);
            json_object_del(obj, k);
        }
    }
    kt_strv_sort(&found);
    for (size_t i = 0; i < found.len; i++) {
        kt_strv_push(unknown, found.items[i]);
    }
    kt_strv_release(&found);
}

/* ------------------------------------------------------------------ defaults */

static void defaults(const json_t *s, json_t *val)
{
    if (json_is_array(val)) {
        const json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *it;
        json_array_foreach(val, i, it)
        {
            defaults(items, it);
        }
        return;
    }
    if (!json_is_object(val)) {
        return;
    }
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const char *k;
    json_t *sub, *it, *tmp;
    json_object_foreach((json_t *)(uintptr_t)props, k, sub)
    {
        const json_t *def = json_object_get(sub, "default");
        it = json_object_get(val, k);
        if (def && (!it || json_is_null(it))) {
            json_object_set_new(val, k, json_deep_copy(def));
        } else if (it && json_is_null(it) && !schema_true(sub, "nullable")) {
            json_object_del(val, k);
        }
    }
    json_object_foreach_safe(val, tmp, k, it)
    {
        const json_t *ss = json_object_get(props, k);
        if (!ss && json_is_object(addl)) {
            ss = addl;
        }
        if (ss) {
            defaults(ss, it);
        }
    }
}

void kt_validate_defaults(const struct kt_validator *v, const char *kind, json_t *obj)
{
    const json_t *s = kt_validator_schema(v, kind);
    if (!s || !json_is_object(obj)) {
        return;
    }
    if (strcmp(kind, "TrainJob") == 0) {
        json_object_del(obj, "status");
    }
    defaults(s, obj);
}

/* ------------------------------------------------------------------ schema checks */

struct walk {
    const struct kt_validator *v;
    struct kt_vresult *r;
};

/* Invalid value with a value and an owned detail (freed here). */
static void add_invalid(struct walk *w, const char *path, const char *ptr, const json_t *val,
                        char *detail)
{
    char *value = kt_vvalue(val);
    kt_vadd(
        w->r, KT_VSTAGE_SCHEMA,
        &(struct kt_vadd_req){
            .field = path, .type = "Invalid value", .value = value, .detail = detail, .ptr = ptr});
    free(value);
    free(detail);
}

static void type_error(struct walk *w, const char *path, const char *ptr, const char *want,
                       const json_t *val)
{
    json_t *t = json_string(kt_vjson_type(val));
    add_invalid(
        w, path, ptr, t,
        kt_xasprintf("%s in body must be of type %s: \"%s\"", path, want, kt_vjson_type(val)));
    json_decref(t);
}

/* kube-openapi's type check of a formatted (apiextensions keeps only date-time here) field
 * holding a non-string: the format is the expected type and the datum's Go format
 * ("int64", "float64", or "" for bools and objects) the actual one; arrays pass. */
static void format_type_error(struct walk *w, const char *path, const char *ptr, const char *fmt,
                              const json_t *val)
{
    const char *got = kt_vis_integral(val) ? "int64" : json_is_real(val) ? "float64" : "";
    json_t *t = json_string(got);
    add_invalid(w, path, ptr, t,
                kt_xasprintf("%s in body must be of type %s: \"%s\"", path, fmt, got));
    json_decref(t);
}

static bool type_ok(const char *want, const json_t *val)
{
    const char *got = kt_vjson_type(val);
    if (strcmp(want, "number") == 0) {
        return json_is_number(val);
    }
    return strcmp(want, got) == 0;
}

/* int-or-string: kube-openapi reports the anyOf failure as three errors. */
static bool check_int_or_string(struct walk *w, const char *path, const char *ptr,
                                const json_t *val)
{
    if (json_is_string(val) || kt_vis_integral(val)) {
        return true;
    }
    type_error(w, path, ptr, "integer,string", val);
    json_t *empty = json_string("");
    add_invalid(w, "<nil>", ptr, empty,
                kt_xasprintf("\"%s\" must validate at least one schema (anyOf)", path));
    json_decref(empty);
    type_error(w, path, ptr, "integer", val);
    return false;
}

static size_t rune_count(const char *s)
{
    size_t n = 0;
    for (; *s; s++) {
        n += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return n;
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
    }
    return true;
}

static int atoi_n(const char *s, size_t n)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* kube-openapi's strfmt IsDateTime: YYYY-MM-DD "t" hh:mm:ss(.frac)?(z|+hh:mm), any case. */
static bool is_date_time(const char *s)
{
    size_t n = strlen(s);
    if (n < 20 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't')) {
        return false;
    }
    int y = atoi_n(s, 4), mo = atoi_n(s + 5, 2), d = atoi_n(s + 8, 2);
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap)) {
        return false;
    }
    const char *t = s + 11;
    if (strchr(t, 't') || strchr(t, 'T') || !digits(t, 2) || t[2] != ':' || !digits(t + 3, 2) ||
        t[5] != ':' || !digits(t + 6, 2)) {
        return false;
    }
    if (atoi_n(t, 2) > 23 || atoi_n(t + 3, 2) > 59 || atoi_n(t + 6, 2) > 59) {
        return false;
    }
    const char *z = t + 8;
    if (*z != '\0' && *z != 'z' && *z != 'Z' && *z != '+' && *z != '-') {
        z++; /* '.' of the regexp matches any character */
        size_t k = 0;
        while (z[k] >= '0' && z[k] <= '9') {
            k++;
        }
        if (k == 0) {
            return false;
        }
        z += k;
    }
    if ((*z == 'z' || *z == 'Z') && z[1] == '\0') {
        return true;
    }
    return (*z == '+' || *z == '-') && strlen(z) == 6 && digits(z + 1, 2) && z[3] == ':' &&
           digits(z + 4, 2);
}

static void check(struct walk *w, const json_t *s, const json_t *val, const char *path,
                  const char *ptr);

static void check_string(struct walk *w, const json_t *s, const json_t *val, const char *path,
                         const char *ptr)
{
    const char *str = json_string_value(val);
    const json_t *maxl = json_object_get(s, "maxLength"), *minl = json_object_get(s, "minLength");
    const char *pat = json_string_value(json_object_get(s, "pattern"));
    const char *fmt = json_string_value(json_object_get(s, "format"));
    size_t n = rune_count(str);
    if (maxl && n > (size_t)json_integer_value(maxl)) {
        char *d =
            kt_xasprintf("may not be more than %lld bytes", (long long)json_integer_value(maxl));
        kt_vadd(w->r, KT_VSTAGE_SCHEMA,
                &(struct kt_vadd_req){.field = path, .type = "Too long", .detail = d, .ptr = ptr});
        free(d);
    }
    if (minl && n < (size_t)json_integer_value(minl)) {
        add_invalid(w, path, ptr, val,
                    kt_xasprintf("%s in body should be at least %lld chars long", path,
                                 (long long)json_integer_value(minl)));
    }
    const regex_t *re = pat ? kt_validator_pattern(w->v, pat) : NULL;
    if (re && (strlen(str) != json_string_length(val) || regexec(re, str, 0, NULL, 0) != 0)) {
        add_invalid(w, path, ptr, val, kt_xasprintf("%s in body should match '%s'", path, pat));
    }
    if (fmt && strcmp(fmt, "date-time") == 0 && !is_date_time(str)) {
        char *q = kt_vvalue(val);
        add_invalid(w, path, ptr, val,
                    kt_xasprintf("%s in body must be of type date-time: %s", path, q));
        free(q);
    }
}

static double num(const json_t *x)
{
    return json_is_integer(x) ? (double)json_integer_value(x) : json_real_value(x);
}

static void check_number(struct walk *w, const json_t *s, const json_t *val, const char *path,
                         const char *ptr)
{
    const json_t *min = json_object_get(s, "minimum"), *max = json_object_get(s, "maximum");
    if (min && num(val) < num(min)) {
        char *m = kt_vvalue(min);
        add_invalid(w, path, ptr, val,
                    kt_xasprintf("%s in body should be greater than or equal to %s", path, m));
        free(m);
    }
    if (max && num(val) > num(max)) {
        char *m = kt_vvalue(max);
        add_invalid(w, path, ptr, val,
                    kt_xasprintf("%s in body should be less than or equal to %s", path, m));
        free(m);
    }
}

static void check_enum(struct walk *w, const json_t *s, const json_t *val, const char *path,
                       const char *ptr)
{
    const json_t *en = json_object_get(s, "enum");
    size_t i;
    json_t *it;
    if (!json_is_array(en)) {
        return;
    }
    json_array_foreach(en, i, it)
    {
        if (kt_json_equal(it, val)) {
            return;
        }
    }
    struct kt_buf b;
    kt_buf_init(&b, (size_t)1 << 30);
    KT_ASSERT(kt_buf_puts(&b, "supported values: ", NULL) == 0);
    json_array_foreach(en, i, it)
    {
        char *q = json_is_string(it) ? kt_go_quote(json_string_value(it)) : NULL;
        if (!q) {
            char *j = kt_json_dump_go(it);
            q = kt_go_quote(j);
            free(j);
        }
        KT_ASSERT(kt_buf_printf(&b, NULL, "%s%s", i ? ", " : "", q) == 0);
        free(q);
    }
    char *detail = kt_buf_take(&b, NULL);
    char *value = kt_vvalue(val);
    kt_vadd(w->r, KT_VSTAGE_SCHEMA,
            &(struct kt_vadd_req){.field = path,
                                  .type = "Unsupported value",
                                  .value = value,
                                  .detail = detail,
                                  .ptr = ptr});
    free(value);
    free(detail);
}

/* A copy of object o with its keys in Go's map order (sorted). */
static json_t *sorted_copy(const json_t *o)
{
    size_t n;
    const char **keys = kt_json_sorted_keys(o, &n);
    json_t *out = json_object();
    for (size_t i = 0; i < n; i++) {
        json_object_set(out, keys[i], json_object_get(o, keys[i]));
    }
    free(keys);
    return out;
}

/* x-kubernetes-list-type map/set: later duplicates are "Duplicate value". */
static void check_list_type(struct walk *w, const json_t *s, const json_t *arr, const char *path,
                            const char *ptr)
{
    const char *lt = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
    const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
    bool is_map = lt && strcmp(lt, "map") == 0, is_set = lt && strcmp(lt, "set") == 0;
    if (!is_map && !is_set) {
        return;
    }
    json_t *seen = json_array();
    size_t i, k;
    json_t *it, *key;
    json_array_foreach(arr, i, it)
    {
        json_t *id = json_object();
        if (is_map) {
            json_array_foreach(keys, k, key)
            {
                json_t *kv = json_object_get(it, json_string_value(key));
                if (kv) {
                    json_object_set(id, json_string_value(key), kv);
                }
            }
        } else {
            json_decref(id);
            id = json_incref(it);
        }
        bool dup = false;
        json_t *prev;
        json_array_foreach(seen, k, prev)
        {
            dup = dup || kt_json_equal(prev, id);
        }
        if (dup) {
            char *p = kt_vpath_index(path, i), *pp = kt_vptr_index(ptr, i);
            char *value = NULL;
            if (is_map) {
                json_t *sorted = sorted_copy(id);
                value = kt_json_dump_go(sorted);
                json_decref(sorted);
            } else {
                value =
                    json_is_object(id) || json_is_array(id) ? kt_json_dump_go(id) : kt_vvalue(id);
            }
            kt_vadd(w->r, KT_VSTAGE_SCHEMA,
                    &(struct kt_vadd_req){
                        .field = p, .type = "Duplicate value", .value = value, .ptr = pp});
            free(value);
            free(p);
            free(pp);
        }
        json_array_append_new(seen, id);
    }
    json_decref(seen);
}

static void check_array(struct walk *w, const json_t *s, const json_t *val, const char *path,
                        const char *ptr)
{
    const json_t *maxi = json_object_get(s, "maxItems"), *mini = json_object_get(s, "minItems");
    const json_t *items = json_object_get(s, "items");
    size_t n = json_array_size(val), i;
    json_t *it;
    if (maxi && n > (size_t)json_integer_value(maxi)) {
        char *v = kt_xasprintf("%zu", n);
        char *d = kt_xasprintf("must have at most %lld items", (long long)json_integer_value(maxi));
        kt_vadd(w->r, KT_VSTAGE_SCHEMA,
                &(struct kt_vadd_req){
                    .field = path, .type = "Too many", .value = v, .detail = d, .ptr = ptr});
        free(v);
        free(d);
    }
    if (mini && n < (size_t)json_integer_value(mini)) {
        json_t *jn = json_integer((json_int_t)n);
        add_invalid(w, path, ptr, jn,
                    kt_xasprintf("%s in body should have at least %lld items", path,
                                 (long long)json_integer_value(mini)));
        json_decref(jn);
    }
    if (json_is_object(items)) {
        json_array_foreach(val, i, it)
        {
            char *p = kt_vpath_index(path, i), *pp = kt_vptr_index(ptr, i);
            check(w, items, it, p, pp);
            free(p);
            free(pp);
        }
    }
}

static void check_object(struct walk *w, const json_t *s, const json_t *val, const char *path,
                         const char *ptr)
{
    const json_t *req = json_object_get(s, "required"), *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const json_t *minp = json_object_get(s, "minProperties");
    size_t i;
    const char *k;
    json_t *it;
    json_array_foreach(req, i, it)
    {
        if (!json_object_get(val, json_string_value(it))) {
            char *p = kt_vpath_child(path, json_string_value(it));
            kt_vadd(w->r, KT_VSTAGE_SCHEMA,
                    &(struct kt_vadd_req){.field = p, .type = "Required value", .ptr = ptr});
            free(p);
        }
    }
    if (minp && json_object_size(val) < (size_t)json_integer_value(minp)) {
        json_t *jn = json_integer((json_int_t)json_object_size(val));
        add_invalid(w, path, ptr, jn,
                    kt_xasprintf("%s in body should have at least %lld properties", path,
                                 (long long)json_integer_value(minp)));
        json_decref(jn);
    }
    json_object_foreach((json_t *)(uintptr_t)val, k, it)
    {
        const json_t *sub = json_object_get(props, k);
        if (!sub && json_is_object(addl)) {
            sub = addl;
        }
        if (!sub || (path[0] == '\0' && strcmp(k, "metadata") == 0)) {
            continue;
        }
        char *p = kt_vpath_child(path, k), *pp = kt_vptr_child(ptr, k);
        check(w, sub, it, p, pp);
        free(p);
        free(pp);
    }
}

static void check(struct walk *w, const json_t *s, const json_t *val, const char *path,
                  const char *ptr)
{
    const char *type = json_string_value(json_object_get(s, "type"));
    const char *fmt = json_string_value(json_object_get(s, "format"));
    if (schema_true(s, "x-kubernetes-int-or-string")) {
        if (!check_int_or_string(w, path, ptr, val)) {
            return;
        }
    } else if (fmt && strcmp(fmt, "date-time") == 0 && !json_is_string(val)) {
        if (!json_is_array(val)) {
            format_type_error(w, path, ptr, fmt, val);
        }
    } else if (type && !type_ok(type, val)) {
        type_error(w, path, ptr, type, val);
    }
    if (json_is_string(val)) {
        check_string(w, s, val, path, ptr);
    } else if (json_is_number(val)) {
        check_number(w, s, val, path, ptr);
    }
    check_enum(w, s, val, path, ptr);
    if (json_is_array(val)) {
        check_array(w, s, val, path, ptr);
        check_list_type(w, s, val, path, ptr);
    } else if (json_is_object(val)) {
        check_object(w, s, val, path, ptr);
    }
}

/* ------------------------------------------------------------------ ObjectMeta */

static bool dns1123_label_chars(const char *s, size_t n, bool dots)
{
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && !(dots && c == '.')) {
            return false;
        }
    }
    return true;
}

/* RFC 1123 subdomain: labels of [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by dots. */
bool kt_vis_dns1123_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (!dns1123_label_chars(s, n, true)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
        if (edge && (s[i] == '-' || s[i] == '.')) {
            return false;
        }
    }
    return true;
}

static void check_meta(struct walk *w, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!name || !name[0]) {
        if (!json_string_value(json_object_get(meta, "generateName"))) {
            kt_vadd(w->r, KT_VSTAGE_SCHEMA,
                    &(struct kt_vadd_req){.field = "metadata.name",
                                          .type = "Required value",
                                          .detail = "name or generateName is required",
                                          .ptr = "/metadata"});
        }
    } else {
        kt_vcheck_dns_subdomain(w->r, "metadata.name", name, "/metadata/name");
    }
    kt_vcheck_labels(w->r, json_object_get(meta, "labels"), "metadata.labels", "/metadata/labels");
    kt_vcheck_annotations(w->r, json_object_get(meta, "annotations"), "metadata.annotations",
                          "/metadata/annotations");
}

void kt_vcheck_dns_subdomain(struct kt_vresult *r, const char *field, const char *name,
                             const char *ptr)
{
    char *v = kt_go_quote(name);
    if (strlen(name) > 253) {
        kt_vadd(r, KT_VSTAGE_SCHEMA,
                &(struct kt_vadd_req){.field = field,
                                      .type = "Invalid value",
                                      .value = v,
                                      .detail = "must be no more than 253 bytes",
                                      .ptr = ptr});
    }
    if (!kt_vis_dns1123_subdomain(name)) {
        kt_vadd(
            r, KT_VSTAGE_SCHEMA,
            &(struct kt_vadd_req){
                .field = field,
                .type = "Invalid value",
                .value = v,
                .detail =
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                    "characters, '-' or '.', and must start and end with an alphanumeric character "
                    "(e.g. 'example.com', regex used for validation is "
                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                .ptr = ptr});
    }
    free(v);
}

/* ------------------------------------------------------------------ labels, annotations
 * (ObjectMeta) */

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
    kt_vadd(r, KT_VSTAGE_SCHEMA,
            &(struct kt_vadd_req){
                .field = field, .type = "Invalid value", .value = q, .detail = detail, .ptr = ptr});
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
        kt_vadd(r, KT_VSTAGE_SCHEMA,
                &(struct kt_vadd_req){.field = field,
                                      .type = "Too long",
                                      .detail = "may not be more than 262144 bytes",
                                      .ptr = ptr});
    }
}

/* Errors of these types make the API server skip the x-kubernetes-validations rules. */
static bool blocking(const struct kt_vresult *r, size_t from)
{
    static const char *const types[] = {"Unsupported value", "Required value", "Too long",
                                        "Too many", NULL};
    for (size_t i = from; i < r->len; i++) {
        for (size_t t = 0; types[t]; t++) {
            if (strcmp(r->items[i].type, types[t]) == 0) {
                return true;
            }
        }
        if (strstr(r->items[i].text, " in body must be of type ")) {
            return true;
        }
    }
    return false;
}

void kt_validate_schema(const struct kt_validator *v, const char *kind, const json_t *obj,
                        const json_t *old, struct kt_vresult *r)
{
    const json_t *s = kt_validator_schema(v, kind);
    struct walk w = {.v = v, .r = r};
    size_t from = r->len;
    if (!s) {
        return;
    }
    check_meta(&w, obj);
    size_t schema_from = r->len;
    check(&w, s, obj, "", "");
    if (blocking(r, schema_from)) {
        kt_vadd(r, KT_VSTAGE_SCHEMA,
                &(struct kt_vadd_req){
                    .field = "<nil>",
                    .type = "Invalid value",
                    .value = "null",
                    .detail =
                        "some validation rules were not checked because the object was invalid; "
                        "correct the existing errors to complete validation",
                    .ptr = ""});
        return;
    }
    (void)from;
    kt_validate_cel(v, s, obj, old, r);
}
