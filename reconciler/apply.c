/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/apply.c - see apply.h. */
#include "apply.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

const struct kt_kube_gvr KT_GVR_PODGROUPS_SP = {
    .group = "scheduling.x-k8s.io", .version = "v1alpha1", .resource = "podgroups"};
const struct kt_kube_gvr KT_GVR_PODGROUPS_VOLCANO = {
    .group = "scheduling.volcano.sh", .version = "v1beta1", .resource = "podgroups"};

const struct kt_json_cut_rule KT_REC_JOBSET_CUT[2] = {
    {.parent = "spec", .member = "replicatedJobs"}, KT_JSON_CUT_END};

static bool is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

const struct kt_kube_gvr *kt_rec_gvr_of(const char *api_version, const char *kind)
{
    if (is(api_version, "v1") && is(kind, "ConfigMap")) {
        return &KT_GVR_CONFIGMAPS;
    }
    if (is(api_version, "v1") && is(kind, "Secret")) {
        return &KT_GVR_SECRETS;
    }
    if (is(api_version, "jobset.x-k8s.io/v1alpha2") && is(kind, "JobSet")) {
        return &KT_GVR_JOBSETS;
    }
    if (is(api_version, "scheduling.x-k8s.io/v1alpha1") && is(kind, "PodGroup")) {
        return &KT_GVR_PODGROUPS_SP;
    }
    if (is(api_version, "scheduling.volcano.sh/v1beta1") && is(kind, "PodGroup")) {
        return &KT_GVR_PODGROUPS_VOLCANO;
    }
    return NULL;
}

bool kt_rec_gvr_of_builtin(const struct kt_kube_gvr *gvr)
{
    return gvr == &KT_GVR_CONFIGMAPS || gvr == &KT_GVR_SECRETS || gvr == &KT_GVR_JOBSETS ||
           gvr == &KT_GVR_PODGROUPS_SP || gvr == &KT_GVR_PODGROUPS_VOLCANO;
}

/* ---- discovered kinds ---- */

struct kind_entry {
    char *api_version, *kind, *group, *version, *resource;
    struct kt_kube_gvr gvr; /* points into the strings above */
};

struct kt_rec_kinds {
    pthread_mutex_t mu;
    struct kind_entry *e[KT_REC_KINDS_MAX]; /* entries never move once published */
    size_t n;
};

struct kt_rec_kinds *kt_rec_kinds_new(void)
{
    struct kt_rec_kinds *k = kt_xcalloc(1, sizeof(*k));
    pthread_mutex_init(&k->mu, NULL);
    return k;
}

static void entry_free(struct kind_entry *e)
{
    free(e->api_version);
    free(e->kind);
    free(e->group);
    free(e->version);
    free(e->resource);
    free(e);
}

void kt_rec_kinds_free(struct kt_rec_kinds *k)
{
    if (!k) {
        return;
    }
    for (size_t i = 0; i < k->n; i++) {
        entry_free(k->e[i]);
    }
    pthread_mutex_destroy(&k->mu);
    free(k);
}

const struct kt_kube_gvr *kt_rec_kinds_lookup(struct kt_rec_kinds *k, const char *api_version,
                                              const char *kind)
{
    const struct kt_kube_gvr *g = kt_rec_gvr_of(api_version, kind);
    if (g || !k) {
        return g;
    }
    pthread_mutex_lock(&k->mu);
    for (size_t i = 0; i < k->n && !g; i++) {
        if (is(k->e[i]->api_version, api_version) && is(k->e[i]->kind, kind)) {
            g = &k->e[i]->gvr;
        }
    }
    pthread_mutex_unlock(&k->mu);
    return g;
}

/* The plural resource serving kind in the discovery document list, or NULL. Borrowed. */
static const char *resource_of(const json_t *list, const char *kind)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(list, "resources"), i, r)
    {
        const char *name = kt_json_str(r, "name", "");
        if (*name && !strchr(name, '/') && is(kt_json_str(r, "kind", NULL), kind)) {
            return name;
        }
    }
    return NULL;
}

/* Publish a discovered kind (unless another thread did meanwhile). */
static const struct kt_kube_gvr *publish(struct kt_rec_kinds *k, const char *api_version,
                                         const char *kind, const char *resource, struct kt_err *err)
{
    const struct kt_kube_gvr *g = kt_rec_kinds_lookup(k, api_version, kind);
    if (g) {
        return g;
    }
    const char *slash = strchr(api_version, '/');
    struct kind_entry *e = kt_xcalloc(1, sizeof(*e));
    e->api_version = kt_xstrdup(api_version);
    e->kind = kt_xstrdup(kind);
    e->group = slash ? kt_xstrndup(api_version, (size_t)(slash - api_version)) : kt_xstrdup("");
    e->version = kt_xstrdup(slash ? slash + 1 : api_version);
    e->resource = kt_xstrdup(resource);
    e->gvr =
        (struct kt_kube_gvr){.group = e->group, .version = e->version, .resource = e->resource};
    pthread_mutex_lock(&k->mu);
    if (k->n < KT_REC_KINDS_MAX) {
        k->e[k->n++] = e;
        g = &e->gvr;
    }
    pthread_mutex_unlock(&k->mu);
    if (!g) {
        kt_err_set(err, KT_ETOOBIG, "cannot resolve %s %s: more than %d discovered kinds",
                   api_version, kind, KT_REC_KINDS_MAX);
        entry_free(e);
    }
    return g;
}

int kt_rec_kinds_resolve(struct kt_rec_kinds *k, struct kt_kube_client *c, const char *api_version,
                         const char *kind, const struct kt_kube_gvr **gvr, struct kt_err *err)
{
    *gvr = kt_rec_kinds_lookup(k, api_version, kind);
    if (*gvr) {
        return 0;
    }
    if (!k || !*api_version || !*kind || strchr(api_version, '?') || strstr(api_version, "..")) {
        return kt_err_set(err, KT_EUNSUPPORTED, "cannot apply %s %s: unknown kind", api_version,
                          kind);
    }
    bool core = !strchr(api_version, '/');
    char *path = kt_xasprintf("%s/%s", core ? "/api" : "/apis", api_version);
    json_t *list = NULL;
    struct kt_err e = {0};
    int rc = kt_kube_request(c, &(struct kt_kube_http_req){.method = "GET", .path_query = path},
                             &list, &e);
    free(path);
    const char *res = rc == 0 ? resource_of(list, kind) : NULL;
    if (rc != 0 && e.code != KT_ENOENT) {
        *err = e;
        rc = kt_err_prefix(err, "discovery of %s", api_version);
    } else if (!res) {
        rc =
            kt_err_set(err, KT_EUNSUPPORTED, "cannot apply %s %s: unknown kind", api_version, kind);
    } else {
        *gvr = publish(k, api_version, kind, res, err);
        rc = *gvr ? 0 : -1;
    }
    json_decref(list);
    return rc;
}

int kt_rec_apply(struct kt_kube_client *c, struct kt_rec_kinds *k, const json_t *obj, json_t **out,
                 struct kt_err *err)
{
    const char *av = kt_json_str(obj, "apiVersion", "");
    const char *kind = kt_json_str(obj, "kind", "");
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = kt_json_str(meta, "namespace", "");
    const char *name = kt_json_str(meta, "name", "");
    const struct kt_kube_gvr *gvr = NULL;
    if (out) {
        *out = NULL;
    }
    if (kt_rec_kinds_resolve(k, c, av, kind, &gvr, err) != 0) {
        return -1;
    }
    struct kt_kube_apply_req req = {.gvr = gvr,
                                    .ns = ns,
                                    .name = name,
                                    .obj = obj,
                                    .field_manager = KT_FIELD_MANAGER,
                                    .force = true};
    if (gvr == &KT_GVR_JOBSETS) {
        req.cut = KT_REC_JOBSET_CUT;
    }
    if (kt_kube_apply(c, &req, out, err) != 0) {
        return kt_err_prefix(err, "%s %s/%s", kind, ns, name);
    }
    return 0;
}
