/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_abi.c - the host side of the public plugin ABI (api/kt_plugin.h): the
 * struct kt_plugin_host function table, and the adapter through which the framework calls an
 * external plugin's entry (kt__plugin_ext_*, reached only through the kt__plugin_abi_adapter
 * vtable the loader installs). Documents cross the boundary as JSON text;
 * every string handed to the plugin lives in the call's scratch list until it returns. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kt_plugin.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/plugins/plugin_loader.h"

struct kt_plugin_ctx {
    unsigned point;   /* KT_EP_* of the running callback; 0 during init */
    const char *name; /* the plugin's name */
    const struct kt_trainjob *tj;
    const struct kt_trainjob *old;
    const struct kt_runtime *rt;
    const struct kt_info *info; /* NULL in status and init */
    struct kt_build *b;         /* build points only */
    const struct kt_view *view;
    json_t *objects; /* ComponentBuilder */
    struct kt_ferrs *errs;
    struct kt_strv *warnings;
    json_t *status;         /* owned: set_status */
    struct kt_strv scratch; /* owned: strings handed out */
    char *failure;          /* owned: the last fail() message */
};

static const char *keep(struct kt_plugin_ctx *c, char *owned)
{
    kt_strv_push(&c->scratch, owned);
    free(owned);
    return c->scratch.items[c->scratch.len - 1];
}

static const char *keep_json(struct kt_plugin_ctx *c, const json_t *v)
{
    if (!v) {
        return NULL;
    }
    if (json_is_string(v)) {
        return keep(c, kt_xstrdup(json_string_value(v)));
    }
    return keep(c, kt_json_dump(v));
}

/* RFC 6901: walk "/a/b~1c/0". Borrowed; NULL when absent. */
static const json_t *pointer_walk(const json_t *v, const char *p)
{
    if (!p || *p == '\0') {
        return v;
    }
    if (*p != '/') {
        return NULL;
    }
    while (v && *p == '/') {
        p++;
        size_t n = strcspn(p, "/");
        char *tok = kt_xmalloc(n + 1);
        size_t k = 0;
        for (size_t j = 0; j < n; j++) {
            if (p[j] == '~' && j + 1 < n && (p[j + 1] == '0' || p[j + 1] == '1')) {
                tok[k++] = p[j + 1] == '0' ? '~' : '/';
                j++;
            } else {
                tok[k++] = p[j];
            }
        }
        tok[k] = '\0';
        if (json_is_object(v)) {
            v = json_object_get(v, tok);
        } else if (json_is_array(v)) {
            char *end = NULL;
            unsigned long idx = strtoul(tok, &end, 10);
            v = (k > 0 && end && *end == '\0') ? json_array_get(v, idx) : NULL;
        } else {
            v = NULL;
        }
        free(tok);
        p += n;
    }
    return v;
}

static const json_t *doc_of(struct kt_plugin_ctx *c, int doc)
{
    switch (doc) {
    case KT_DOC_TRAINJOB:
        return c->tj ? c->tj->obj : NULL;
    case KT_DOC_OLD_TRAINJOB:
        return c->old ? c->old->obj : NULL;
    case KT_DOC_RUNTIME:
        return c->rt ? c->rt->obj : NULL;
    case KT_DOC_JOBSET_SPEC:
        return c->info ? c->info->spec : NULL;
    default:
        return NULL;
    }
}

static const char *h_get(struct kt_plugin_ctx *c, int doc, const char *pointer)
{
    return keep_json(c, pointer_walk(doc_of(c, doc), pointer));
}

static const char *h_lookup(struct kt_plugin_ctx *c, const char *api_version, const char *kind,
                            const char *ns, const char *name)
{
    if (!api_version || !kind || !name) {
        return NULL;
    }
    const json_t *o = kt_view_get(c->view, api_version, kind, ns ? ns : "", name);
    return o ? keep(c, kt_json_dump(o)) : NULL;
}

static const char *h_tj_namespace(struct kt_plugin_ctx *c)
{
    return c->tj && c->tj->namespace_ ? c->tj->namespace_ : "";
}

static const char *h_tj_name(struct kt_plugin_ctx *c)
{
    return c->tj && c->tj->name ? c->tj->name : "";
}

static const char *h_tj_uid(struct kt_plugin_ctx *c)
{
    return c->tj && c->tj->uid ? c->tj->uid : "";
}

static uint32_t h_podset_count(struct kt_plugin_ctx *c)
{
    return c->info ? (uint32_t)c->info->n_podsets : 0;
}

static struct kt_podset *podset(struct kt_plugin_ctx *c, uint32_t i)
{
    return c->info && i < c->info->n_podsets ? &c->info->podsets[i] : NULL;
}

static int32_t h_podset_find(struct kt_plugin_ctx *c, const char *name, const char *ancestor)
{
    for (uint32_t i = 0; c->info && i < c->info->n_podsets; i++) {
        const struct kt_podset *ps = &c->info->podsets[i];
        if (name && ps->name && strcmp(ps->name, name) == 0) {
            return (int32_t)i;
        }
        if (!name && ancestor && ps->ancestor && strcmp(ps->ancestor, ancestor) == 0) {
            return (int32_t)i;
        }
    }
    return -1;
}

static const char *h_podset_name(struct kt_plugin_ctx *c, uint32_t i)
{
    const struct kt_podset *ps = podset(c, i);
    return ps ? ps->name : NULL;
}

static const char *h_podset_ancestor(struct kt_plugin_ctx *c, uint32_t i)
{
    const struct kt_podset *ps = podset(c, i);
    return ps ? ps->ancestor : NULL;
}

static int64_t h_podset_pods(struct kt_plugin_ctx *c, uint32_t i)
{
    const struct kt_podset *ps = podset(c, i);
    return ps ? ps->count : 0;
}

static int64_t h_podset_replicas(struct kt_plugin_ctx *c, uint32_t i)
{
    const struct kt_podset *ps = podset(c, i);
    return ps ? kt_json_int(ps->rjob, "replicas", 1) : 0;
}

static const char *h_podset_get(struct kt_plugin_ctx *c, uint32_t i, const char *pointer)
{
    const struct kt_podset *ps = podset(c, i);
    return ps ? keep_json(c, pointer_walk(ps->rjob, pointer)) : NULL;
}

static int h_podset_hostname(struct kt_plugin_ctx *c, uint32_t i, int64_t job, int64_t pod,
                             char *buf, size_t len)
{
    const struct kt_podset *ps = podset(c, i);
    if (!ps || !buf || len == 0) {
        return -1;
    }
    const char *sub = json_string_value(kt_json_path(c->info->spec, "network.subdomain"));
    if (!sub || *sub == '\0') {
        sub = h_tj_name(c);
    }
    int n = snprintf(buf, len, "%s-%s-%lld-%lld.%s", h_tj_name(c), ps->name, (long long)job,
                     (long long)pod, sub);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* Build-side points that may change the pod sets. */
static bool mutable_point(const struct kt_plugin_ctx *c)
{
    return c->b && (c->point == KT_EP_ENFORCE_ML_POLICY || c->point == KT_EP_ENFORCE_PODGROUP ||
                    c->point == KT_EP_ENFORCE_PODSPEC || c->point == KT_EP_PRE_BUILD_SYNC);
}

static struct kt_podset *mutable_podset(struct kt_plugin_ctx *c, uint32_t i, int *rc)
{
    if (!mutable_point(c)) {
        *rc = -1;
        return NULL;
    }
    struct kt_podset *ps = &c->b->info.podsets[0];
    if (i >= c->b->info.n_podsets) {
        *rc = 1;
        return NULL;
    }
    return ps + i;
}

static int h_podset_set_pods(struct kt_plugin_ctx *c, uint32_t i, int64_t pods)
{
    int rc = 0;
    struct kt_podset *ps = mutable_podset(c, i, &rc);
    if (!ps) {
        return rc;
    }
    if (pods < 0) {
        return -1;
    }
    ps->count = pods;
    return 0;
}

typedef void (*container_fn)(json_t *container, const json_t *item);

/* Apply fn(container, item) to the named container (regular, then init) or to every
 * regular container when name is NULL. item NULL = bad JSON input. */
static int each_container(struct kt_plugin_ctx *c, uint32_t i, const char *name, container_fn fn,
                          json_t *item)
{
    int rc = 0;
    struct kt_podset *ps = mutable_podset(c, i, &rc);
    if (!ps || !item) {
        json_decref(item);
        return ps ? -1 : rc;
    }
    if (name) {
        json_t *ct = kt_podset_container(ps, name);
        ct = ct ? ct : kt_podset_init_container(ps, name);
        rc = ct ? 0 : 1;
        if (ct) {
            fn(ct, item);
        }
    } else {
        size_t k;
        json_t *ct;
        json_array_foreach(json_object_get(ps->pod_spec, "containers"), k, ct)
        {
            fn(ct, item);
        }
    }
    json_decref(item);
    return rc;
}

static json_t *parse_object(const char *text)
{
    struct kt_err err = {0};
    if (!text) {
        return NULL;
    }
    json_t *v = kt_json_parse(text, strlen(text), &err);
    if (v && !json_is_object(v)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

static int h_add_env(struct kt_plugin_ctx *c, uint32_t i, const char *container, const char *name,
                     const char *value)
{
    json_t *env = name && value ? kt_env_value(name, value) : NULL;
    return each_container(c, i, container, kt_upsert_env, env);
}

static int h_add_env_field_ref(struct kt_plugin_ctx *c, uint32_t i, const char *container,
                               const char *name, const char *field_path)
{
    json_t *env = name && field_path ? kt_env_field_ref(name, field_path) : NULL;
    return each_container(c, i, container, kt_upsert_env, env);
}

static int h_add_env_json(struct kt_plugin_ctx *c, uint32_t i, const char *container,
                          const char *env_json)
{
    json_t *env = parse_object(env_json);
    if (env && !json_is_string(json_object_get(env, "name"))) {
        json_decref(env);
        env = NULL;
    }
    return each_container(c, i, container, kt_upsert_env, env);
}

static int h_add_port(struct kt_plugin_ctx *c, uint32_t i, const char *container, int32_t port,
                      const char *name)
{
    json_t *p = port > 0 && port < 65536 ? json_pack("{s:i}", "containerPort", (int)port) : NULL;
    if (p && name) {
        json_object_set_new(p, "name", json_string(name));
    }
    return each_container(c, i, container, kt_upsert_port, p);
}

static int h_add_volume(struct kt_plugin_ctx *c, uint32_t i, const char *volume_json)
{
    int rc = 0;
    struct kt_podset *ps = mutable_podset(c, i, &rc);
    json_t *vol = ps ? parse_object(volume_json) : NULL;
    if (!ps || !vol || !json_is_string(json_object_get(vol, "name"))) {
        json_decref(vol);
        return ps ? -1 : rc;
    }
    kt_upsert_volume(ps->pod_spec, vol);
    json_decref(vol);
    return 0;
}

static int h_add_volume_mount(struct kt_plugin_ctx *c, uint32_t i, const char *container,
                              const char *mount_json)
{
    json_t *m = parse_object(mount_json);
    if (m && !json_is_string(json_object_get(m, "mountPath"))) {
        json_decref(m);
        m = NULL;
    }
    return each_container(c, i, container, kt_upsert_mount, m);
}

static int set_meta(struct kt_plugin_ctx *c, json_t *obj, const char *key, const char *value)
{
    if (!mutable_point(c) || !key || !value) {
        return -1;
    }
    json_object_set_new(obj, key, json_string(value));
    return 0;
}

static int h_set_pod_label(struct kt_plugin_ctx *c, const char *key, const char *value)
{
    return set_meta(c, c->b ? c->b->info.pod_labels : NULL, key, value);
}

static int h_set_pod_annotation(struct kt_plugin_ctx *c, const char *key, const char *value)
{
    return set_meta(c, c->b ? c->b->info.pod_annotations : NULL, key, value);
}

static int h_set_jobset_label(struct kt_plugin_ctx *c, const char *key, const char *value)
{
    return set_meta(c, c->b ? c->b->info.labels : NULL, key, value);
}

static int h_set_jobset_annotation(struct kt_plugin_ctx *c, const char *key, const char *value)
{
    return set_meta(c, c->b ? c->b->info.annotations : NULL, key, value);
}

static int h_add_object(struct kt_plugin_ctx *c, const char *object_json)
{
    if (c->point != KT_EP_BUILD || !c->objects) {
        return -1;
    }
    json_t *o = parse_object(object_json);
    if (!o || !json_is_string(json_object_get(o, "apiVersion")) ||
        !json_is_string(json_object_get(o, "kind")) ||
        !json_is_string(kt_json_path(o, "metadata.name"))) {
        json_decref(o);
        return -1;
    }
    json_array_append_new(c->objects, o);
    return 0;
}

static int h_field_error(struct kt_plugin_ctx *c, int type, const char *field,
                         const char *value_json, const char *detail)
{
    static const enum kt_ferr_type types[] = {KT_FERR_INVALID, KT_FERR_FORBIDDEN, KT_FERR_REQUIRED};
    if (c->point != KT_EP_VALIDATE || !c->errs || !field || type < 0 || type > 2) {
        return -1;
    }
    struct kt_err err = {0};
    json_t *v = value_json ? kt_json_parse(value_json, strlen(value_json), &err) : NULL;
    if (value_json && !v) {
        v = json_string(value_json);
    }
    kt_ferrs_add(c->errs, types[type], field, v, KT_GO_ANY, "%s", detail ? detail : "");
    json_decref(v);
    return 0;
}

static int h_warning(struct kt_plugin_ctx *c, const char *message)
{
    if (c->point != KT_EP_VALIDATE || !c->warnings || !message) {
        return -1;
    }
    kt_strv_push(c->warnings, message);
    return 0;
}

static int h_set_status(struct kt_plugin_ctx *c, const char *status_json)
{
    json_t *s = c->point == KT_EP_STATUS ? parse_object(status_json) : NULL;
    if (!s) {
        return -1;
    }
    json_decref(c->status);
    c->status = s;
    return 0;
}

static int h_fail(struct kt_plugin_ctx *c, const char *message)
{
    free(c->failure);
    c->failure = kt_xstrdup(message ? message : "failed");
    return -1;
}

static void h_log(struct kt_plugin_ctx *c, int level, const char *message)
{
    static const enum kt_log_level levels[] = {KT_LOG_DEBUG, KT_LOG_INFO, KT_LOG_WARN,
                                               KT_LOG_ERROR};
    enum kt_log_level l = level >= 0 && level <= 3 ? levels[level] : KT_LOG_INFO;
    kt_log(l, "plugin", "%s: %s", c->name, message ? message : "");
}

static const struct kt_plugin_host host = {
    .abi_major = KT_PLUGIN_ABI_MAJOR,
    .abi_minor = KT_PLUGIN_ABI_MINOR,
    .size = sizeof(struct kt_plugin_host),
    .get = h_get,
    .lookup = h_lookup,
    .trainjob_namespace = h_tj_namespace,
    .trainjob_name = h_tj_name,
    .trainjob_uid = h_tj_uid,
    .podset_count = h_podset_count,
    .podset_find = h_podset_find,
    .podset_name = h_podset_name,
    .podset_ancestor = h_podset_ancestor,
    .podset_pods = h_podset_pods,
    .podset_replicas = h_podset_replicas,
    .podset_get = h_podset_get,
    .podset_hostname = h_podset_hostname,
    .podset_set_pods = h_podset_set_pods,
    .add_env = h_add_env,
    .add_env_field_ref = h_add_env_field_ref,
    .add_env_json = h_add_env_json,
    .add_port = h_add_port,
    .add_volume = h_add_volume,
    .add_volume_mount = h_add_volume_mount,
    .set_pod_label = h_set_pod_label,
    .set_pod_annotation = h_set_pod_annotation,
    .set_jobset_label = h_set_jobset_label,
    .set_jobset_annotation = h_set_jobset_annotation,
    .add_object = h_add_object,
    .field_error = h_field_error,
    .warning = h_warning,
    .set_status = h_set_status,
    .fail = h_fail,
    .log = h_log,
};

const struct kt_plugin_host *kt__plugin_host(void)
{
    return &host;
}

static void ctx_init(struct kt_plugin_ctx *c, const struct kt_plugin_ext *ext, unsigned point)
{
    memset(c, 0, sizeof(*c));
    c->point = point;
    c->name = ext->def->name;
    kt_strv_init(&c->scratch);
}

static void ctx_release(struct kt_plugin_ctx *c)
{
    kt_strv_release(&c->scratch);
    json_decref(c->status);
    free(c->failure);
}

static int ctx_fail(struct kt_plugin_ctx *c, struct kt_err *err)
{
    return kt_err_set(err, KT_EINVAL, "plugin %s: %s", c->name, c->failure ? c->failure : "failed");
}

int kt__plugin_ext_init(struct kt_plugin_ext *ext, const char *config, struct kt_err *err)
{
    struct kt_plugin_ctx c;
    int rc = 0;
    if (!ext->def->init) {
        return 0;
    }
    ctx_init(&c, ext, 0);
    if (ext->def->init(&host, &c, config, &ext->state) != 0) {
        rc = kt_err_set(err, KT_EINVAL, "plugin %s (%s): init failed: %s", c.name, ext->path,
                        c.failure ? c.failure : "no reason given");
    }
    ctx_release(&c);
    return rc;
}

bool kt__plugin_ext_has(const struct kt_plugin *p, unsigned bit)
{
    return p->ext && (p->ext->def->points & bit) != 0;
}

static const unsigned build_points[] = {KT_EP_ENFORCE_ML_POLICY, KT_EP_ENFORCE_PODGROUP,
                                        KT_EP_ENFORCE_PODSPEC, KT_EP_PRE_BUILD_SYNC, KT_EP_BUILD};

static kt_plugin_fn build_fn(const struct kt_plugin_def *d, int phase)
{
    switch (phase) {
    case 0:
        return d->enforce_ml_policy;
    case 1:
        return d->enforce_podgroup_policy;
    case 2:
        return d->enforce_podspec;
    case 3:
        return d->pre_build_sync;
    default:
        return d->build;
    }
}

int kt__plugin_ext_build(const struct kt_plugin *p, int phase, struct kt_build *b, json_t *objects,
                         struct kt_err *err)
{
    const struct kt_plugin_ext *ext = p->ext;
    if (phase < 0 || phase > 4 || !kt__plugin_ext_has(p, build_points[phase])) {
        return 0;
    }
    struct kt_plugin_ctx c;
    ctx_init(&c, ext, build_points[phase]);
    c.tj = b->tj;
    c.rt = b->rt;
    c.info = &b->info;
    c.b = b;
    c.view = b->view;
    c.objects = objects;
    int rc = build_fn(ext->def, phase)(&host, &c, ext->state) != 0 ? ctx_fail(&c, err) : 0;
    ctx_release(&c);
    return rc;
}

void kt__plugin_ext_validate(const struct kt_plugin *p, const struct kt_validation *v,
                             struct kt_ferrs *errs, struct kt_strv *warnings)
{
    const struct kt_plugin_ext *ext = p->ext;
    if (!kt__plugin_ext_has(p, KT_EP_VALIDATE)) {
        return;
    }
    struct kt_plugin_ctx c;
    ctx_init(&c, ext, KT_EP_VALIDATE);
    c.tj = v->tj;
    c.old = v->old;
    c.rt = v->rt;
    c.info = v->info;
    c.view = v->view;
    c.errs = errs;
    c.warnings = warnings;
    if (ext->def->validate(&host, &c, ext->state) != 0) {
        kt_ferrs_add(errs, KT_FERR_INTERNAL, "spec", NULL, KT_GO_ANY, "plugin %s: %s", c.name,
                     c.failure ? c.failure : "failed");
    }
    ctx_release(&c);
}

int kt__plugin_ext_status(const struct kt_plugin *p, const struct kt_trainjob *tj,
                          const struct kt_view *view, json_t **out, struct kt_err *err)
{
    const struct kt_plugin_ext *ext = p->ext;
    struct kt_plugin_ctx c;
    int rc = 0;
    *out = NULL;
    ctx_init(&c, ext, KT_EP_STATUS);
    c.tj = tj;
    c.view = view;
    if (ext->def->status(&host, &c, ext->state) != 0) {
        rc = ctx_fail(&c, err);
    } else {
        *out = c.status;
        c.status = NULL;
    }
    ctx_release(&c);
    return rc;
}

static bool has_status(const struct kt_plugin *p)
{
    return kt__plugin_ext_has(p, KT_EP_STATUS);
}

const struct kt_plugin_adapter kt__plugin_abi_adapter = {
    .has_status = has_status,
    .build = kt__plugin_ext_build,
    .validate = kt__plugin_ext_validate,
    .status = kt__plugin_ext_status,
};
