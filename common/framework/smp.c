/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/smp.c - strategic merge patch for the JobSet/PodSpec subset (see smp.h).
 *
 * Follows k8s.io/apimachinery/pkg/util/strategicpatch with the patch strategies of
 * sigs.k8s.io/jobset v0.12 and k8s.io/api/core/v1, including its order of merged list items
 * (mergeSlice, normalizeElementOrder, mergeSortedSlice). Directives are not supported. */
#include "common/framework/smp.h"

#include <stdbool.h>
#include <string.h>

#include "common/base/json.h"

enum node_kind { N_GENERIC, N_STRUCT, N_LIST };

struct node;
struct field {
    const char *key;
    const struct node *node;
};
struct node {
    enum node_kind kind;
    const char *merge_key;      /* N_LIST */
    const struct node *elem;    /* N_LIST item schema */
    const struct field *fields; /* N_STRUCT, NULL-key terminated */
};

static const struct node GEN = {.kind = N_GENERIC};
static const struct node L_BY_NAME = {.kind = N_LIST, .merge_key = "name", .elem = &GEN};
static const struct node L_ENV = {.kind = N_LIST, .merge_key = "name", .elem = &GEN};
static const struct node L_MOUNTS = {.kind = N_LIST, .merge_key = "mountPath", .elem = &GEN};
static const struct node L_PORTS = {.kind = N_LIST, .merge_key = "containerPort", .elem = &GEN};
static const struct field F_RES[] = {{"claims", &L_BY_NAME}, {NULL, NULL}};
static const struct node RES = {.kind = N_STRUCT, .fields = F_RES};
static const struct field F_CONT[] = {{"env", &L_ENV},
                                      {"volumeMounts", &L_MOUNTS},
                                      {"ports", &L_PORTS},
                                      {"resources", &RES},
                                      {NULL, NULL}};
static const struct node CONT = {.kind = N_STRUCT, .fields = F_CONT};
static const struct node L_CONT = {.kind = N_LIST, .merge_key = "name", .elem = &CONT};
static const struct field F_POD[] = {{"containers", &L_CONT},
                                     {"initContainers", &L_CONT},
                                     {"volumes", &L_BY_NAME},
                                     {"imagePullSecrets", &L_BY_NAME},
                                     {"schedulingGates", &L_BY_NAME},
                                     {"resourceClaims", &L_BY_NAME},
                                     {NULL, NULL}};
static const struct node POD = {.kind = N_STRUCT, .fields = F_POD};
static const struct field F_PT[] = {{"spec", &POD}, {NULL, NULL}};
static const struct node PT = {.kind = N_STRUCT, .fields = F_PT};
static const struct field F_JS[] = {{"template", &PT}, {NULL, NULL}};
static const struct node JS = {.kind = N_STRUCT, .fields = F_JS};
static const struct field F_JT[] = {{"spec", &JS}, {NULL, NULL}};
static const struct node JT = {.kind = N_STRUCT, .fields = F_JT};
static const struct field F_RJ[] = {{"template", &JT}, {NULL, NULL}};
static const struct node RJ = {.kind = N_STRUCT, .fields = F_RJ};
static const struct node L_RJ = {.kind = N_LIST, .merge_key = "name", .elem = &RJ};
static const struct field F_JSS[] = {{"replicatedJobs", &L_RJ}, {NULL, NULL}};
static const struct node JSS = {.kind = N_STRUCT, .fields = F_JSS};

static void merge(json_t *dst_parent, const char *key, const json_t *patch, const struct node *n);

static const struct node *field_node(const struct node *n, const char *key)
{
    for (const struct field *f = n->fields; f && f->key; f++) {
        if (strcmp(f->key, key) == 0) {
            return f->node;
        }
    }
    return &GEN;
}

static void merge_object(json_t *dst, const json_t *patch, const struct node *n)
{
    const char *k;
    json_t *v;
    void *it = json_object_iter(kt__json_unconst(patch));
    for (; it; it = json_object_iter_next(kt__json_unconst(patch), it)) {
        k = json_object_iter_key(it);
        v = json_object_iter_value(it);
        merge(dst, k, v, n->kind == N_STRUCT ? field_node(n, k) : &GEN);
    }
}

static bool same_key(const json_t *a, const json_t *b)
{
    return a && b && json_equal(a, b);
}

/* Index of the first item of list whose merge key equals item's, or -1 (also when item has
 * no merge key): strategicpatch's index(). */
static long key_index(const json_t *list, const char *merge_key, const json_t *item)
{
    const json_t *k = json_is_object(item) ? json_object_get(item, merge_key) : NULL;
    size_t i;
    const json_t *o;
    json_array_foreach(list, i, o)
    {
        if (json_is_object(o) && same_key(json_object_get(o, merge_key), k)) {
            return (long)i;
        }
    }
    return -1;
}

/* Stable insertion sort of list by the index of each item's merge key in order (every item
 * is in order: strategicpatch's normalizeSliceOrder on the patch items). */
static void sort_by(json_t *list, const json_t *order, const char *merge_key)
{
    for (size_t i = 1; i < json_array_size(list); i++) {
        json_t *it = json_incref(json_array_get(list, i));
        long ki = key_index(order, merge_key, it);
        size_t j = i;
        while (j > 0 && key_index(order, merge_key, json_array_get(list, j - 1)) > ki) {
            json_array_set(list, j, json_array_get(list, j - 1));
            j--;
        }
        json_array_set_new(list, j, it);
    }
}

/* The order strategicpatch gives a merged list (mergeSlice's "enforce the order"): the items
 * the patch names, in patch order, interleaved with the server-only items (original order):
 * a server-only item goes first only when both it and the next patch item are in the
 * original and it came first there; a patch item not in the original goes first. */
static void enforce_order(json_t *dst, const json_t *orig, const json_t *patch, const char *mk)
{
    json_t *right = json_array(); /* items the patch names */
    json_t *left = json_array();  /* server-only items */
    size_t i = 0, j = 0, k;
    json_t *o;
    json_array_foreach(dst, k, o)
    {
        json_array_append(key_index(patch, mk, o) >= 0 ? right : left, o);
    }
    sort_by(right, patch, mk);
    json_array_clear(dst);
    while (i < json_array_size(left) || j < json_array_size(right)) {
        bool take_left = j >= json_array_size(right);
        if (!take_left && i < json_array_size(left)) {
            long li = key_index(orig, mk, json_array_get(left, i));
            long ri = key_index(orig, mk, json_array_get(right, j));
            take_left = li >= 0 && ri >= 0 && li < ri;
        }
        json_array_append(dst, take_left ? json_array_get(left, i++) : json_array_get(right, j++));
    }
    json_decref(left);
    json_decref(right);
}

/* strategicpatch's mergeSlice for a list with a merge key: each patch item merges into the
 * original item with its key or is appended, then enforce_order. */
static void merge_list(json_t *dst, const json_t *patch, const struct node *n)
{
    size_t i;
    json_t *p;
    json_t *orig = json_copy(dst); /* the original items, for their order (keys never change) */
    json_array_foreach(patch, i, p)
    {
        long at = json_object_get(p, n->merge_key) ? key_index(dst, n->merge_key, p) : -1;
        if (at >= 0) {
            merge_object(json_array_get(dst, (size_t)at), p, n->elem);
        } else {
            json_array_append_new(dst, kt_json_clone(p));
        }
    }
    enforce_order(dst, orig, patch, n->merge_key);
    json_decref(orig);
}

/* Merge patch into dst_parent[key] following node n. */
static void merge(json_t *dst_parent, const char *key, const json_t *patch, const struct node *n)
{
    json_t *cur = json_object_get(dst_parent, key);
    if (json_is_null(patch)) {
        json_object_del(dst_parent, key);
        return;
    }
    if (json_is_object(patch) && json_is_object(cur)) {
        merge_object(cur, patch, n);
        return;
    }
    if (n->kind == N_LIST && json_is_array(patch) && json_is_array(cur)) {
        merge_list(cur, patch, n);
        return;
    }
    json_object_set_new(dst_parent, key, kt_json_clone(patch));
}

void kt_smp_generic(json_t *dst, const json_t *patch)
{
    if (json_is_object(dst) && json_is_object(patch)) {
        merge_object(dst, patch, &GEN);
    }
}

void kt_smp_jobset_spec(json_t *spec, const json_t *patch)
{
    if (json_is_object(spec) && json_is_object(patch)) {
        merge_object(spec, patch, &JSS);
    }
}

void kt_smp_container_resources(json_t *container, const json_t *patch)
{
    if (json_is_object(container) && json_is_object(patch)) {
        merge(container, "resources", patch, &RES);
    }
}

/* ---- typed re-serialisation of the patch ---- */

struct tfield;
struct tnode {
    const struct tfield *fields; /* NULL = any content (a Kubernetes type), omitempty only */
    bool list;                   /* list of tnode items */
    bool dra; /* a provisional KEP-2782 field: kept only with the gate DynamicResourceAllocation */
};
struct tfield {
    const char *key;
    const struct tnode *node;
};

static const struct tnode T_ANY = {.list = false};
static const struct tnode T_ANY_LIST = {.list = true};
static const struct tnode T_DRA = {.dra = true};
static const struct tnode T_DRA_LIST = {.list = true, .dra = true};
static const struct tfield TF_META[] = {{"labels", &T_ANY},     {"annotations", &T_ANY},
                                        {"name", &T_ANY},       {"namespace", &T_ANY},
                                        {"finalizers", &T_ANY}, {NULL, NULL}};
static const struct tnode T_META = {.fields = TF_META};
static const struct tfield TF_CONT[] = {{"name", &T_ANY},
                                        {"env", &T_ANY_LIST},
                                        {"volumeMounts", &T_ANY_LIST},
                                        {"securityContext", &T_ANY},
                                        {"resources", &T_DRA},
                                        {NULL, NULL}};
static const struct tnode T_CONT_LIST = {.fields = TF_CONT, .list = true};
static const struct tfield TF_POD[] = {{"serviceAccountName", &T_ANY},
                                       {"volumes", &T_ANY_LIST},
                                       {"initContainers", &T_CONT_LIST},
                                       {"containers", &T_CONT_LIST},
                                       {"imagePullSecrets", &T_ANY_LIST},
                                       {"securityContext", &T_ANY},
                                       {"nodeSelector", &T_ANY},
                                       {"affinity", &T_ANY},
                                       {"tolerations", &T_ANY_LIST},
                                       {"schedulingGates", &T_ANY_LIST},
                                       {"terminationGracePeriodSeconds", &T_ANY},
                                       {"resourceClaims", &T_DRA_LIST},
                                       {NULL, NULL}};
static const struct tnode T_POD = {.fields = TF_POD};
static const struct tfield TF_PT[] = {{"metadata", &T_META}, {"spec", &T_POD}, {NULL, NULL}};
static const struct tnode T_PT = {.fields = TF_PT};
static const struct tfield TF_JS[] = {{"template", &T_PT}, {NULL, NULL}};
static const struct tnode T_JS = {.fields = TF_JS};
static const struct tfield TF_JT[] = {{"metadata", &T_META}, {"spec", &T_JS}, {NULL, NULL}};
static const struct tnode T_JT = {.fields = TF_JT};
static const struct tfield TF_RJ[] = {{"name", &T_ANY}, {"template", &T_JT}, {NULL, NULL}};
static const struct tnode T_RJ_LIST = {.fields = TF_RJ, .list = true};
static const struct tfield TF_JSS[] = {{"replicatedJobs", &T_RJ_LIST}, {NULL, NULL}};
static const struct tnode T_JSS = {.fields = TF_JSS};

static bool is_empty(const json_t *v)
{
    return json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

static json_t *typed(const json_t *v, const struct tnode *n, bool dra);

/* omitempty for arbitrary Kubernetes content: drop nulls, "" and [] members recursively. */
static json_t *omit_empty(const json_t *v)
{
    const char *k;
    json_t *m;
    size_t i;
    json_t *out;
    if (json_is_array(v)) {
        out = json_array();
        json_array_foreach(v, i, m)
        {
            json_array_append_new(out, omit_empty(m));
        }
        return out;
    }
    if (!json_is_object(v)) {
        return kt_json_clone(v);
    }
    out = json_object();
    void *it = json_object_iter(kt__json_unconst(v));
    for (; it; it = json_object_iter_next(kt__json_unconst(v), it)) {
        k = json_object_iter_key(it);
        m = json_object_iter_value(it);
        if (!is_empty(m)) {
            json_object_set_new(out, k, omit_empty(m));
        }
    }
    return out;
}

static json_t *typed_item(const json_t *v, const struct tnode *n, bool dra)
{
    if (!n->fields || !json_is_object(v)) {
        return omit_empty(v);
    }
    json_t *out = json_object();
    for (const struct tfield *f = n->fields; f->key; f++) {
        json_t *m = json_object_get(v, f->key);
        if (!m || is_empty(m) || (f->node->dra && !dra)) {
            continue;
        }
        json_t *c = typed(m, f->node, dra);
        if (json_is_object(c) && json_object_size(c) == 0 && f->node->fields) {
            json_decref(c);
            continue;
        }
        json_object_set_new(out, f->key, c);
    }
    return out;
}

static json_t *typed(const json_t *v, const struct tnode *n, bool dra)
{
    if (!n->list) {
        return typed_item(v, n, dra);
    }
    if (!json_is_array(v)) {
        return omit_empty(v);
    }
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        json_array_append_new(out, typed_item(e, n, dra));
    }
    return out;
}

json_t *kt_smp_typed_jobset_patch(const json_t *patch, bool dra)
{
    if (!json_is_object(patch)) {
        return json_object();
    }
    return typed(patch, &T_JSS, dra);
}
