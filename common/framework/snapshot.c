/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/snapshot.c - runtime snapshot ConfigMaps (matches upstream
 * `pkg/runtime/core/snapshot.go`; the owner check is the reconciler's). */
#include "common/framework/snapshot.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api/runtime.h"
#include "common/base/json.h"
#include "common/base/buf.h"
#include "common/base/fielderr.h"
#include "common/base/mem.h"
#include "common/framework/runtime_info.h"
#include "common/base/yaml.h"

#define SNAPSHOT_MAX (8u << 20)

/* A deep copy with every object's keys sorted (Go map order, as sigs.k8s.io/yaml). */
static json_t *sorted_copy(const json_t *v)
{
    size_t i, n;
    json_t *m;
    if (json_is_array(v)) {
        json_t *out = json_array();
        json_array_foreach(v, i, m)
        {
            json_array_append_new(out, sorted_copy(m));
        }
        return out;
    }
    if (!json_is_object(v)) {
        return kt_json_clone(v);
    }
    const char **keys = kt_json_sorted_keys(v, &n);
    json_t *out = json_object();
    for (i = 0; i < n; i++) {
        json_object_set_new(out, keys[i], sorted_copy(json_object_get(v, keys[i])));
    }
    free(keys);
    return out;
}

json_t *kt_snapshot_build(const struct kt_trainjob *tj, const struct kt_runtime *rt,
                          struct kt_err *err)
{
    struct kt_buf b;
    json_t *copy = kt_json_clone(rt->obj);
    json_t *spec = json_object_get(json_object_get(copy, "spec"), "template");
    kt_canonical_quantities(json_object_get(spec, "spec"));
    json_t *sorted = sorted_copy(copy);
    json_decref(copy);
    kt_buf_init(&b, SNAPSHOT_MAX);
    if (kt_yaml_emit(sorted, &b, err) != 0) {
        json_decref(sorted);
        return NULL;
    }
    json_decref(sorted);
    char *name = kt_xasprintf("%s%s", tj->name, KT_SNAPSHOT_SUFFIX);
    json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
                           "ConfigMap", "metadata", "name", name, "namespace", tj->namespace_,
                           "data", KT_SNAPSHOT_KEY, b.data ? b.data : "");
    free(name);
    kt_buf_release(&b);
    return cm;
}

static bool owned_by(const json_t *cm, const char *uid)
{
    size_t i;
    json_t *ref;
    json_t *refs = json_object_get(json_object_get(cm, "metadata"), "ownerReferences");
    json_array_foreach(refs, i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (json_is_true(json_object_get(ref, "controller")) && u && strcmp(u, uid) == 0) {
            return true;
        }
    }
    return false;
}

json_t *kt_snapshot_parse(const char *text, struct kt_err *err)
{
    struct kt_yaml_limits lim;
    struct kt_yaml_stream s = {0};
    struct kt_err perr = {0};
    json_t *root = NULL;
    kt_yaml_limits_default(&lim);
    if (kt_yaml_parse(text, strlen(text), &lim, &s, &perr) != 0) {
        kt_yaml_stream_release(&s);
        kt_err_set(err, KT_EINVAL, "invalid runtime snapshot: unable to unmarshal the snapshot: %s",
                   perr.msg);
        return NULL;
    }
    if (s.len >= 1 && json_is_object(s.docs[0].root)) {
        root = json_incref(s.docs[0].root);
    }
    kt_yaml_stream_release(&s);
    if (!root) {
        kt_err_set(err, KT_EINVAL,
                   "invalid runtime snapshot: unable to unmarshal the snapshot: not an object");
    }
    return root;
}

static int check_ref(const struct kt_runtime *rt, const struct kt_trainjob *tj, struct kt_err *err)
{
    const char *av = json_string_value(json_object_get(rt->obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(rt->obj, "kind"));
    const char *slash = av ? strchr(av, '/') : NULL;
    char *group = slash ? kt_xstrndup(av, (size_t)(slash - av)) : kt_xstrdup("");
    const struct kt_runtime_ref *ref = &tj->runtime_ref;
    bool bad = (ref->kind && strcmp(ref->kind, kind ? kind : "") != 0) ||
               (ref->api_group && strcmp(ref->api_group, group) != 0) ||
               strcmp(ref->name ? ref->name : "", rt->name ? rt->name : "") != 0;
    if (bad) {
        char *q[6] = {kt_go_quote(ref->name ? ref->name : ""),
                      kt_go_quote(ref->api_group ? ref->api_group : "<any>"),
                      kt_go_quote(ref->kind ? ref->kind : "<any>"),
                      kt_go_quote(rt->name ? rt->name : ""),
                      kt_go_quote(group),
                      kt_go_quote(kind ? kind : "")};
        kt_err_set(err, KT_EINVAL,
                   "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting "
                   "a runtime with name, api group and kind of %s, %s, %s but found runtime with "
                   "name, api group and kind of %s, %s, %s",
                   q[0], q[1], q[2], q[3], q[4], q[5]);
        for (int i = 0; i < 6; i++) {
            free(q[i]);
        }
    }
    free(group);
    return bad ? -1 : 0;
}

int kt_snapshot_read(const json_t *cm, const struct kt_trainjob *tj,
                     const struct kt_snapshot_parser *parser, struct kt_runtime *out,
                     struct kt_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!owned_by(cm, tj->uid)) {
        return kt_err_set(err, KT_EINVAL,
                          "invalid runtime snapshot: a snapshot configmap "
                          "exists but is owned by another object");
    }
    json_t *text = json_object_get(json_object_get(cm, "data"), KT_SNAPSHOT_KEY);
    if (!json_is_string(text)) {
        return kt_err_set(err, KT_EINVAL,
                          "invalid runtime snapshot: snapshot ConfigMap missing \"%s\" data key",
                          KT_SNAPSHOT_KEY);
    }
    json_t *root = parser && parser->parse
                       ? parser->parse(parser->ctx, json_string_value(text), err)
                       : kt_snapshot_parse(json_string_value(text), err);
    if (!root) {
        return -1;
    }
    struct kt_err derr = {0};
    if (kt_runtime_decode(root, out, &derr) != 0) {
        return kt_err_set(err, KT_EINVAL,
                          "invalid runtime snapshot: unable to unmarshal the snapshot: %s",
                          derr.msg);
    }
    if (check_ref(out, tj, err) != 0) {
        kt_runtime_release(out);
        return -1;
    }
    return 0;
}
