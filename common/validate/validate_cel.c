/* SPDX-License-Identifier: Apache-2.0 */
/* common/validate/validate_cel.c - C twins of every x-kubernetes-validations rule of our CRDs.
 *
 * There is no CEL interpreter here: each rule text of api/<crd>.yaml maps to a C function with
 * the same meaning on the rule's `self` (and `oldSelf` for transition rules). A rule text
 * without a twin is reported as an internal error so a new CRD rule cannot be skipped
 * silently (tests/validate checks every rule of the compiled-in schemas has one). Failures
 * render as the API server does: "<path>: Invalid value: <value>: <message>", the value only
 * for scalars, "<nil>" as the path of a rule on the root. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/validate/validate_cel.h"

/* 1 = holds, 0 = fails, -1 = evaluation error with *why set (static text). */
typedef int (*twin_fn)(const json_t *self, const json_t *old, const char **why);

struct twin {
    const char *rule;
    bool transition;
    twin_fn fn;
};

static int t_equal_old(const json_t *self, const json_t *old, const char **why)
{
    (void)why;
    return kt_json_equal(self, old);
}

static size_t runes(const char *s)
{
    size_t n = 0;
    for (; *s; s++) {
        n += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return n;
}

static bool in_set(char c, const char *set)
{
    return c && strchr(set, c) != NULL;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define ALPHA LOWER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGIT "0123456789"

static const char *meta_name(const json_t *self, const char **why)
{
    const json_t *meta = json_object_get(self, "metadata");
    const json_t *name = json_object_get(meta, "name");
    if (!json_is_string(name)) {
        /* The API server has a name by then (generated, or "Required value" from ObjectMeta,
         * which ktctl reports instead); the rule holds. */
        *why = NULL;
        return NULL;
    }
    return json_string_value(name);
}

/* self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') */
static int t_name_rfc1035(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    const char *s = meta_name(self, why);
    if (!s) {
        return 1;
    }
    size_t n = strlen(s);
    if (n == 0 || !in_set(s[0], LOWER) || (n > 1 && !in_set(s[n - 1], LOWER DIGIT))) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if (!in_set(s[i], LOWER DIGIT "-")) {
            return 0;
        }
    }
    return 1;
}

/* size(self.metadata.name) <= 63 (CEL counts code points) */
static int t_name_size(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    const char *s = meta_name(self, why);
    return s ? runes(s) <= 63 : 1;
}

/* self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')  (RE2: '.' is not \n) */
static int t_storage_uri(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    const char *s = json_string_value(self);
    size_t n = json_string_length(self), i = 1;
    if (n == 0) {
        return 1;
    }
    if (!in_set(s[0], ALPHA)) {
        return 0;
    }
    /* the scheme run is greedy but may backtrack: find any "://" reachable */
    for (; i < n; i++) {
        if (strncmp(s + i, "://", 3) == 0 && i + 3 < n &&
            memchr(s + i + 3, '\n', n - i - 3) == NULL) {
            return 1;
        }
        if (!in_set(s[i], ALPHA DIGIT "+.-")) {
            return 0;
        }
    }
    return 0;
}

/* self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue'] */
static int t_managed_by(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    const char *s = json_string_value(self);
    return strcmp(s, "trainer.kubeflow.org/trainjob-controller") == 0 ||
           strcmp(s, "kueue.x-k8s.io/multikueue") == 0;
}

/* self >= 1 */
static int t_ge1(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    return json_is_integer(self) ? json_integer_value(self) >= 1 : json_real_value(self) >= 1;
}

/* has(self.lastUpdatedTime) */
static int t_has_last_updated(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    return json_object_get(self, "lastUpdatedTime") != NULL;
}

/* [has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)]
 *   .filter(x, x).size() <= 1 */
static int t_one_policy(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    static const char *const keys[] = {"torch", "mpi", "jax", "xgboost", "flux"};
    int n = 0;
    for (size_t i = 0; i < 5; i++) {
        n += json_object_get(self, keys[i]) != NULL;
    }
    return n <= 1;
}

/* !self.exists(c, c == 'node') */
static int t_no_node(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    size_t i;
    json_t *it;
    json_array_foreach(self, i, it)
    {
        if (json_is_string(it) && strcmp(json_string_value(it), "node") == 0) {
            return 0;
        }
    }
    return 1;
}

/* !(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' &&
 *   self.replicatedJobs.exists(x, has(x.dependsOn))) */
static int t_startup_depends(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    const json_t *sp = json_object_get(self, "startupPolicy");
    const char *order = json_string_value(json_object_get(sp, "startupPolicyOrder"));
    if (!sp || !order || strcmp(order, "InOrder") != 0) {
        return 1;
    }
    const json_t *jobs = json_object_get(self, "replicatedJobs");
    if (!jobs) {
        *why = "no such key: replicatedJobs";
        return -1;
    }
    size_t i;
    json_t *it;
    json_array_foreach(jobs, i, it)
    {
        if (json_object_get(it, "dependsOn")) {
            return 0;
        }
    }
    return 1;
}

/* self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0) */
static int t_vcp_namespace(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    const json_t *tpls = json_object_get(self, "templates");
    if (!tpls) {
        *why = "no such key: templates";
        return -1;
    }
    size_t i;
    json_t *it;
    int res = 1;
    json_array_foreach(tpls, i, it)
    {
        const json_t *meta = json_object_get(it, "metadata");
        if (!meta) {
            /* all() keeps going after an error and a false wins over it */
            *why = "no such key: metadata";
            res = res == 1 ? -1 : res;
            continue;
        }
        const json_t *ns = json_object_get(meta, "namespace");
        if (ns && json_string_length(ns) > 0) {
            res = 0;
        }
    }
    return res;
}

/* !has(self.ttlSecondsAfterFinished) - kt's KEP-2899 rule on the runtime's JobSet and Job
 * templates: cleanup belongs to the TrainJob (spec.runPolicy). */
static int t_no_ttl(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    return json_object_get(self, "ttlSecondsAfterFinished") == NULL;
}

/* !has(self.activeDeadlineSeconds) - the same for the deadline of the runtime's Job templates. */
static int t_no_deadline(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    return json_object_get(self, "activeDeadlineSeconds") == NULL;
}

/* has(self.resourceClaimName) != has(self.resourceClaimTemplateName) - a KEP-2782 claim names
 * exactly one source (docs/api.md#dynamic-resource-allocation). */
static int t_claim_one_source(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    return (json_object_get(self, "resourceClaimName") != NULL) !=
           (json_object_get(self, "resourceClaimTemplateName") != NULL);
}

/* !has(self.claims) - device claims of the trainer go in resourceClaimsPerNode, not in
 * resourcesPerNode (KEP-2782). */
static int t_no_claims(const json_t *self, const json_t *old, const char **why)
{
    (void)old;
    (void)why;
    return json_object_get(self, "claims") == NULL;
}

static const struct twin twins[] = {
    {"self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')", false, t_name_rfc1035},
    {"size(self.metadata.name) <= 63", false, t_name_size},
    {"self == oldSelf", true, t_equal_old},
    {"self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')", false, t_storage_uri},
    {"self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']", false,
     t_managed_by},
    {"self >= 1", false, t_ge1},
    {"has(self.lastUpdatedTime)", false, t_has_last_updated},
    {"[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)]"
     ".filter(x, x).size() <= 1",
     false, t_one_policy},
    {"!self.exists(c, c == 'node')", false, t_no_node},
    {"!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
     "self.replicatedJobs.exists(x, has(x.dependsOn)))",
     false, t_startup_depends},
    {"self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)", false,
     t_vcp_namespace},
    {"!has(self.ttlSecondsAfterFinished)", false, t_no_ttl},
    {"!has(self.activeDeadlineSeconds)", false, t_no_deadline},
    {"has(self.resourceClaimName) != has(self.resourceClaimTemplateName)", false,
     t_claim_one_source},
    {"!has(self.claims)", false, t_no_claims},
};

static const struct twin *find_twin(const char *rule)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(twins); i++) {
        if (strcmp(twins[i].rule, rule) == 0) {
            return &twins[i];
        }
    }
    return NULL;
}

bool kt_validate_cel_has_twin(const char *rule)
{
    return find_twin(rule) != NULL;
}

static void eval_rules(const json_t *rules, const json_t *val, const json_t *old, const char *path,
                       const char *ptr, struct kt_vresult *r)
{
    size_t i;
    json_t *rule;
    const char *field = path[0] ? path : "<nil>";
    json_array_foreach(rules, i, rule)
    {
        const char *text = json_string_value(json_object_get(rule, "rule"));
        const char *msg = json_string_value(json_object_get(rule, "message"));
        const struct twin *t = find_twin(text ? text : "");
        const char *why = NULL;
        if (!t) {
            char *d = kt_xasprintf("no C twin for rule %s", text ? text : "?");
            kt_vadd(r, KT_VSTAGE_CEL,
                    &(struct kt_vadd_req){
                        .field = field, .type = "Internal error", .detail = d, .ptr = ptr});
            free(d);
            continue;
        }
        if (t->transition && !old) {
            continue;
        }
        int ok = t->fn(val, old, &why);
        if (ok == 1) {
            continue;
        }
        bool scalar = !json_is_object(val) && !json_is_array(val);
        char *value = scalar ? kt_vvalue(val) : NULL;
        if (ok < 0) {
            char *tv = kt_go_quote(kt_vjson_type(val));
            char *d = kt_xasprintf("%s evaluating rule: %s", why, msg ? msg : text);
            kt_vadd(
                r, KT_VSTAGE_CEL,
                &(struct kt_vadd_req){
                    .field = field, .type = "Invalid value", .value = tv, .detail = d, .ptr = ptr});
            free(d);
            free(tv);
        } else {
            kt_vadd(r, KT_VSTAGE_CEL,
                    &(struct kt_vadd_req){.field = field,
                                          .type = "Invalid value",
                                          .value = value,
                                          .detail = msg ? msg : "failed rule",
                                          .ptr = ptr});
        }
        free(value);
    }
}

/* True when item has every key of a list-type map and each is a scalar: the API server
 * correlates only such items with the old list. */
static bool keyed(const json_t *keys, const json_t *item)
{
    size_t k;
    json_t *key;
    if (!json_is_object(item)) {
        return false;
    }
    json_array_foreach(keys, k, key)
    {
        const json_t *v = json_object_get(item, json_string_value(key));
        if (!v || json_is_object(v) || json_is_array(v) || json_is_null(v)) {
            return false;
        }
    }
    return true;
}

/* The old item of a list-type map matching item's keys, else NULL. Like the API server,
 * the first old item with those keys wins when keys repeat (a Duplicate value error). */
static const json_t *old_item(const json_t *s, const json_t *item, const json_t *old_arr)
{
    const char *lt = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
    const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
    size_t i, k;
    json_t *o, *key;
    if (!lt || strcmp(lt, "map") != 0 || !json_is_array(old_arr) || !keyed(keys, item)) {
        return NULL;
    }
    json_array_foreach(old_arr, i, o)
    {
        bool same = keyed(keys, o);
        json_array_foreach(keys, k, key)
        {
            const json_t *a = json_object_get(item, json_string_value(key));
            const json_t *b = json_object_get(o, json_string_value(key));
            same = same && kt_json_equal(a, b);
        }
        if (same) {
            return o;
        }
    }
    return NULL;
}

static void walk(const json_t *s, const json_t *val, const json_t *old, const char *path,
                 const char *ptr, struct kt_vresult *r)
{
    const json_t *rules = json_object_get(s, "x-kubernetes-validations");
    if (json_is_array(rules)) {
        eval_rules(rules, val, old, path, ptr, r);
    }
    if (json_is_array(val) && json_is_object(json_object_get(s, "items"))) {
        size_t i;
        json_t *it;
        json_array_foreach(val, i, it)
        {
            char *p = kt_vpath_index(path, i), *pp = kt_vptr_index(ptr, i);
            walk(json_object_get(s, "items"), it, old_item(s, it, old), p, pp, r);
            free(p);
            free(pp);
        }
        return;
    }
    if (!json_is_object(val)) {
        return;
    }
    const json_t *props = json_object_get(s, "properties");
    const char *k;
    json_t *it;
    json_object_foreach((json_t *)(uintptr_t)val, k, it)
    {
        const json_t *sub = json_object_get(props, k);
        if (!sub) {
            sub = json_object_get(s, "additionalProperties");
        }
        if (!json_is_object(sub)) {
            continue;
        }
        char *p = kt_vpath_child(path, k), *pp = kt_vptr_child(ptr, k);
        walk(sub, it, json_object_get(old, k), p, pp, r);
        free(p);
        free(pp);
    }
}

void kt_validate_cel(const struct kt_validator *v, const json_t *s, const json_t *obj,
                     const json_t *old, struct kt_vresult *r)
{
    (void)v;
    walk(s, obj, old, "", "", r);
}
