/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/unlabelled.c - see unlabelled.h. */
#include "unlabelled.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/str.h"
#include "common/framework/framework.h"

#define TJ_GROUP_PREFIX "trainer.kubeflow.org/"
/* Items per LIST page: metadata only, a few hundred bytes each. */
#define SCAN_PAGE 500

struct kt_unlabelled {
    struct kt_strv keys;   /* sorted and unique once sealed */
    struct kt_strv failed; /* "group/resource|ns" of the LISTs that failed (ns "" = all); sorted */
};

const char *kt_controller_trainjob(const json_t *obj)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        if (kt_json_bool(ref, "controller", false) &&
            strcmp(kt_json_str(ref, "kind", ""), "TrainJob") == 0 &&
            strncmp(kt_json_str(ref, "apiVersion", ""), TJ_GROUP_PREFIX, strlen(TJ_GROUP_PREFIX)) ==
                0) {
            return kt_json_str(ref, "name", NULL);
        }
    }
    return NULL;
}

struct kt_unlabelled *kt_unlabelled_new(void)
{
    return kt_xcalloc(1, sizeof(struct kt_unlabelled));
}

void kt_unlabelled_free(struct kt_unlabelled *u)
{
    if (!u) {
        return;
    }
    kt_strv_release(&u->keys);
    kt_strv_release(&u->failed);
    free(u);
}

/* Caller owns the result; free with free(). */
static char *key_of(const struct kt_kube_gvr *gvr, const char *ns, const char *name)
{
    return kt_xasprintf("%s/%s|%s|%s", gvr->group, gvr->resource, ns ? ns : "", name);
}

bool kt_unlabelled_add(struct kt_unlabelled *u, const struct kt_kube_gvr *gvr, const json_t *item)
{
    json_t *meta = json_object_get(item, "metadata");
    if (!kt_controller_trainjob(item) ||
        json_object_get(json_object_get(meta, "labels"), KT_TRAINJOB_NAME_LABEL)) {
        return false;
    }
    char *key = key_of(gvr, kt_json_str(meta, "namespace", ""), kt_json_str(meta, "name", ""));
    kt_strv_push(&u->keys, key);
    free(key);
    return true;
}

/* Caller owns the result; free with free(). */
static char *source_of(const struct kt_kube_gvr *gvr, const char *ns)
{
    return kt_xasprintf("%s/%s|%s", gvr->group, gvr->resource, ns ? ns : "");
}

void kt_unlabelled_mark_failed(struct kt_unlabelled *u, const struct kt_kube_gvr *gvr,
                               const char *ns)
{
    char *src = source_of(gvr, ns);
    kt_strv_push(&u->failed, src);
    free(src);
}

size_t kt_unlabelled_failed(const struct kt_unlabelled *u)
{
    return u->failed.len;
}

void kt_unlabelled_seal(struct kt_unlabelled *u)
{
    kt_strv_sort(&u->keys);
    kt_strv_uniq(&u->keys);
    kt_strv_sort(&u->failed);
    kt_strv_uniq(&u->failed);
}

/* True when the LIST of gvr in ns, or in all namespaces, failed: nothing is known there. */
static bool unknown(const struct kt_unlabelled *u, const struct kt_kube_gvr *gvr, const char *ns)
{
    if (u->failed.len == 0) {
        return false;
    }
    char *all = source_of(gvr, NULL);
    char *one = source_of(gvr, ns);
    bool found =
        kt_strv_sorted_contains(&u->failed, all) || kt_strv_sorted_contains(&u->failed, one);
    free(all);
    free(one);
    return found;
}

bool kt_unlabelled_has(const struct kt_unlabelled *u, const struct kt_kube_gvr *gvr, const char *ns,
                       const char *name)
{
    if (unknown(u, gvr, ns)) {
        return true;
    }
    if (u->keys.len == 0) {
        return false;
    }
    char *key = key_of(gvr, ns, name);
    bool found = kt_strv_sorted_contains(&u->keys, key);
    free(key);
    return found;
}

size_t kt_unlabelled_len(const struct kt_unlabelled *u)
{
    return u->keys.len;
}

/* ---- the scan ---- */

struct scan_ctx {
    struct kt_unlabelled *u;
    const struct kt_kube_gvr *gvr;
};

/* kt_kube_list's per-item hook: record the key, keep nothing of the page. */
static json_t *scan_item(json_t *item, void *ud)
{
    struct scan_ctx *s = ud;
    kt_unlabelled_add(s->u, s->gvr, item);
    json_decref(item);
    return NULL;
}

static int scan_one(struct kt_kube_client *c, struct kt_unlabelled *u,
                    const struct kt_kube_gvr *gvr, const char *ns, struct kt_err *err)
{
    struct scan_ctx s = {.u = u, .gvr = gvr};
    struct kt_kube_list_opts o = {
        .label_selector = "!" KT_TRAINJOB_NAME_LABEL,
        .limit = SCAN_PAGE,
        .metadata_only = true,
        .each = scan_item,
        .each_ud = &s,
    };
    json_t *list = NULL;
    int rc = kt_kube_list(c, gvr, ns, &o, &list, err);
    json_decref(list);
    return rc;
}

struct kt_unlabelled *kt_unlabelled_scan(struct kt_kube_client *c,
                                         const struct kt_kube_gvr *const *gvrs, size_t n_gvrs,
                                         const char *const *namespaces, size_t n_namespaces,
                                         struct kt_err *err)
{
    struct kt_unlabelled *u = kt_unlabelled_new();
    size_t n_ns = n_namespaces ? n_namespaces : 1;
    struct kt_err one = {0};
    for (size_t g = 0; g < n_gvrs; g++) {
        for (size_t i = 0; i < n_ns; i++) {
            const char *ns = n_namespaces ? namespaces[i] : NULL;
            if (scan_one(c, u, gvrs[g], ns, &one) != 0) {
                if (kt_unlabelled_failed(u) == 0) { /* the first failure explains the rest */
                    kt_err_set(err, one.code, "%s/%s%s%s: %s", gvrs[g]->group, gvrs[g]->resource,
                               ns ? " in " : "", ns ? ns : "", one.msg);
                }
                kt_unlabelled_mark_failed(u, gvrs[g], ns);
            }
        }
    }
    kt_unlabelled_seal(u);
    return u;
}
