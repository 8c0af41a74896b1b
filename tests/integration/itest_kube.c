/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/itest_kube.c ENV_FILE - every verb of the kube client against the real
 * API server: CRUD on ConfigMaps, paged LIST, selectors, server-side apply conflicts, merge
 * patch, the status subresource (Pods; TrainJobs when the CRD is installed), DELETE
 * preconditions, Events, Leases, Status errors (404/409/422/403), 409 from concurrent writers,
 * the body cap and one-shot watches. Leaves the API server's flags alone. */
#include "tests/integration/kube_itest.h"

#include <pthread.h>

#include "common/base/str.h"

struct ctx {
    struct itest_env env;
    struct kt_kube_config *admin_cfg;
    struct kt_kube_client *c;
    char *ns;
};

static json_t *must_get(struct ctx *x, const struct kt_kube_gvr *gvr, const char *name)
{
    struct kt_err err = {0};
    json_t *o = NULL;

    if (kt_kube_get(x->c, gvr, x->ns, name, &o, &err) < 0) {
        fprintf(stderr, "get %s: %s\n", name, err.msg);
    }
    return o;
}

static const char *rv(const json_t *o)
{
    return kt_json_str(json_object_get(o, "metadata"), "resourceVersion", "");
}

static void test_create_get_errors(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *cm = itest_configmap("cm1", "k", "v1");
    json_t *out = NULL;
    json_t *bad;

    CHECK_OK(kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, cm, &out, &err));
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "metadata"), "namespace", ""), x->ns);
    CHECK(*rv(out) != '\0');
    json_decref(out);
    out = must_get(x, &KT_GVR_CONFIGMAPS, "cm1");
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "data"), "k", ""), "v1");
    json_decref(out);

    /* 409 AlreadyExists. */
    CHECK_EQ_INT(kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, cm, NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_ECONFLICT);
    CHECK_EQ_STR(kt_kube_client_last_status(x->c)->reason, "AlreadyExists");
    CHECK_CONTAINS(err.msg, "\"cm1\" already exists");
    /* 404 NotFound. */
    CHECK_EQ_INT(kt_kube_get(x->c, &KT_GVR_CONFIGMAPS, x->ns, "nope", &out, &err), -1);
    CHECK(out == NULL);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    CHECK_EQ_STR(kt_kube_client_last_status(x->c)->reason, "NotFound");
    CHECK_CONTAINS(err.msg, "configmaps \"nope\" not found");
    /* 422 Invalid, with the API server's field message. */
    bad = itest_configmap("Bad_Name", "k", "v");
    CHECK_EQ_INT(kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, bad, NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK_EQ_INT(kt_kube_client_last_status(x->c)->code, 422);
    CHECK_CONTAINS(err.msg, "metadata.name: Invalid value: \"Bad_Name\"");
    json_decref(bad);
    /* A bad path never reaches the server. */
    CHECK_EQ_INT(kt_kube_get(x->c, &KT_GVR_CONFIGMAPS, x->ns, "a/b", &out, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    json_decref(cm);
}

static void test_list_pages_and_selectors(struct ctx *x)
{
    struct kt_err err = {0};
    struct kt_kube_list_opts o = {.label_selector = "kt-test=yes,page", .limit = 2};
    json_t *list = NULL;
    int i;

    for (i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "page-%d", i);
        json_t *cm = itest_configmap(name, "i", name);
        json_object_set_new(kt_json_path(cm, "metadata.labels"), "page", json_string("1"));
        CHECK_OK(kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, cm, NULL, &err));
        json_decref(cm);
    }
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err));
    CHECK_EQ_INT(json_array_size(json_object_get(list, "items")), 5);
    CHECK(*kt_json_str(json_object_get(list, "metadata"), "resourceVersion", "") != '\0');
    CHECK(kt_json_path(list, "metadata.continue") == NULL);
    json_decref(list);
    o.field_selector = "metadata.name=page-3";
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err));
    CHECK_EQ_INT(json_array_size(json_object_get(list, "items")), 1);
    CHECK(kt_json_path(json_array_get(json_object_get(list, "items"), 0), "metadata.labels"));
    json_decref(list);
    /* Members cut from each page's text: every item's labels gone, the rest kept. */
    static const struct kt_json_cut_rule labels[] = {{.parent = "metadata", .member = "labels"},
                                                     KT_JSON_CUT_END};
    o.cut = labels;
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err));
    json_t *item = json_array_get(json_object_get(list, "items"), 0);
    CHECK(item && kt_json_path(item, "metadata.labels") == NULL);
    CHECK_EQ_STR(kt_json_str(json_object_get(item, "metadata"), "name", ""), "page-3");
    CHECK_EQ_STR(kt_json_str(json_object_get(item, "data"), "i", ""), "page-3");
    json_decref(list);
    o.cut = NULL;
    o.field_selector = NULL;
    o.label_selector = "page=2";
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err));
    CHECK_EQ_INT(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    o.label_selector = "page in (";
    CHECK_EQ_INT(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
}

/* metadata_only: the server answers a PartialObjectMetadataList, paged, for a core kind and a
 * CRD alike; items carry metadata (labels included) and no data or spec. */
static void test_list_metadata_only(struct ctx *x)
{
    struct kt_err err = {0};
    struct kt_kube_list_opts o = {
        .label_selector = "kt-test=yes,page", .limit = 2, .metadata_only = true};
    json_t *list = NULL;

    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err));
    json_t *items = json_object_get(list, "items");
    CHECK_EQ_INT(json_array_size(items), 5); /* test_list_pages_and_selectors' ConfigMaps */
    json_t *first = json_array_get(items, 0);
    CHECK_EQ_STR(kt_json_str(first, "kind", ""), "PartialObjectMetadata");
    CHECK_EQ_STR(kt_json_str(first, "apiVersion", ""), "meta.k8s.io/v1");
    CHECK(json_object_get(first, "data") == NULL);
    CHECK_EQ_STR(kt_json_str(kt_json_path(first, "metadata.labels"), "page", ""), "1");
    CHECK_EQ_STR(kt_json_str(list, "kind", ""), "PartialObjectMetadataList");
    json_decref(list);
    /* a negated selector, as the reconciler's start-up scan sends it */
    o.label_selector = "!page";
    o.field_selector = "metadata.name=page-3";
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err));
    CHECK_EQ_INT(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    o.label_selector = NULL;
    o.field_selector = NULL;
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CLUSTERTRAININGRUNTIMES, NULL, &o, &list, &err));
    CHECK_EQ_STR(kt_json_str(list, "kind", ""), "PartialObjectMetadataList");
    json_decref(list);
}

static void test_update_patch_apply(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *cur = must_get(x, &KT_GVR_CONFIGMAPS, "cm1");
    json_t *stale = json_deep_copy(cur);
    json_t *out = NULL;
    json_t *patch;
    json_t *a;

    json_object_set_new(json_object_get(cur, "data"), "k", json_string("v2"));
    CHECK_OK(kt_kube_update(
        x->c, &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .name = "cm1"}, cur,
        NULL, &err));
    /* The old resourceVersion is now a failed optimistic lock. */
    CHECK_EQ_INT(
        kt_kube_update(x->c,
                       &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .name = "cm1"},
                       stale, NULL, &err),
        -1);
    CHECK_EQ_INT(err.code, KT_ECONFLICT);
    CHECK_EQ_STR(kt_kube_client_last_status(x->c)->reason, "Conflict");
    CHECK_CONTAINS(err.msg, "the object has been modified");

    patch = json_pack("{s:{s:s, s:n}}", "data", "added", "yes", "k");
    CHECK_OK(kt_kube_merge_patch(
        x->c, &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .name = "cm1"}, patch,
        &out, &err));
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "data"), "added", ""), "yes");
    CHECK(json_object_get(json_object_get(out, "data"), "k") == NULL);
    json_decref(out);
    json_decref(patch);

    /* Server-side apply: two managers, a conflict without force, success with it. */
    a = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", "applied", "data", "owner", "a");
    struct kt_kube_apply_req req = {.gvr = &KT_GVR_CONFIGMAPS,
                                    .ns = x->ns,
                                    .name = "applied",
                                    .obj = a,
                                    .field_manager = "kt-a"};
    CHECK_OK(kt_kube_apply(x->c, &req, &out, &err));
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "data"), "owner", ""), "a");
    CHECK_EQ_STR(
        kt_json_str(json_array_get(kt_json_path(out, "metadata.managedFields"), 0), "manager", ""),
        "kt-a");
    json_decref(out);
    json_object_set_new(json_object_get(a, "data"), "owner", json_string("b"));
    req.field_manager = "kt-b";
    CHECK_EQ_INT(kt_kube_apply(x->c, &req, NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_ECONFLICT);
    CHECK_CONTAINS(err.msg, "conflict with \"kt-a\"");
    req.force = true;
    CHECK_OK(kt_kube_apply(x->c, &req, &out, &err));
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "data"), "owner", ""), "b");
    json_decref(out);
    /* The answer without the members a cut rule names (the server keeps them). */
    req.cut = KT_JSON_CUT_MANAGED_FIELDS;
    CHECK_OK(kt_kube_apply(x->c, &req, &out, &err));
    CHECK(kt_json_path(out, "metadata.managedFields") == NULL);
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "data"), "owner", ""), "b");
    json_decref(out);
    json_t *stored = must_get(x, &KT_GVR_CONFIGMAPS, "applied");
    CHECK(kt_json_path(stored, "metadata.managedFields") != NULL);
    json_decref(stored);
    req.cut = NULL;
    req.field_manager = "";
    CHECK_EQ_INT(kt_kube_apply(x->c, &req, NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    json_decref(a);
    json_decref(cur);
    json_decref(stale);
}

static json_t *make_pod(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
                     "metadata", "name", name, "spec", "containers", "name", "c", "image",
                     "busybox");
}

static void test_status_subresource(struct ctx *x)
{
    static const struct kt_kube_gvr pods = {"", "v1", "pods"};
    struct kt_err err = {0};
    json_t *pod = make_pod("p1");
    json_t *out = NULL;
    json_t *st;

    CHECK_OK(kt_kube_create(x->c, &pods, x->ns, pod, NULL, &err));
    st = json_pack("{s:{s:s, s:s}}", "status", "phase", "Running", "message", "by kt");
    CHECK_OK(kt_kube_merge_patch(
        x->c,
        &(struct kt_kube_ref){.gvr = &pods, .ns = x->ns, .name = "p1", .subresource = "status"}, st,
        &out, &err));
    CHECK_EQ_STR(kt_json_str(kt_json_path(out, "status"), "phase", ""), "Running");
    json_decref(out);
    json_decref(st);
    /* Writing spec through /status is ignored; writing status through the main resource too. */
    st = json_pack("{s:{s:s}}", "status", "phase", "Failed");
    CHECK_OK(kt_kube_merge_patch(
        x->c, &(struct kt_kube_ref){.gvr = &pods, .ns = x->ns, .name = "p1"}, st, &out, &err));
    CHECK_EQ_STR(kt_json_str(kt_json_path(out, "status"), "phase", ""), "Running");
    json_decref(out);
    json_decref(st);
    /* Apply to the status subresource. */
    st = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                   "name", "p1", "status", "message", "applied");
    CHECK_OK(kt_kube_apply(x->c,
                           &(struct kt_kube_apply_req){.gvr = &pods,
                                                       .ns = x->ns,
                                                       .name = "p1",
                                                       .subresource = "status",
                                                       .obj = st,
                                                       .field_manager = "kt-status",
                                                       .force = true},
                           &out, &err));
    CHECK_EQ_STR(kt_json_str(kt_json_path(out, "status"), "message", ""), "applied");
    json_decref(out);
    json_decref(st);
    CHECK_EQ_INT(
        kt_kube_merge_patch(x->c,
                            &(struct kt_kube_ref){
                                .gvr = &pods, .ns = x->ns, .name = "nope", .subresource = "status"},
                            pod, NULL, &err),
        -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    json_decref(pod);
}

static void test_trainjob_crd(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *list = NULL;

    /* Only when the harness installed our CRDs; a plain cluster skips this. */
    if (kt_kube_list(x->c, &KT_GVR_TRAINJOBS, x->ns, NULL, &list, &err) < 0) {
        fprintf(stderr, "skip: TrainJob CRD not served: %s\n", err.msg);
        return;
    }
    CHECK_EQ_INT(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CLUSTERTRAININGRUNTIMES, NULL, NULL, &list, &err));
    json_decref(list);
}

static void test_delete_preconditions(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *cm = must_get(x, &KT_GVR_CONFIGMAPS, "page-0");
    const char *uid = kt_json_str(json_object_get(cm, "metadata"), "uid", "");
    struct kt_kube_delete_opts bad_uid = {.uid = "00000000-0000-0000-0000-000000000000"};
    struct kt_kube_delete_opts bad_rv = {.resource_version = "1"};
    struct kt_kube_delete_opts good = {
        .uid = uid, .resource_version = rv(cm), .propagation_policy = "Background"};
    json_t *out = NULL;

    CHECK_EQ_INT(kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, "page-0", &bad_uid, &err), -1);
    CHECK_EQ_INT(err.code, KT_ECONFLICT);
    CHECK_CONTAINS(err.msg, "the UID in the precondition");
    CHECK_EQ_INT(kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, "page-0", &bad_rv, &err), -1);
    CHECK_EQ_INT(err.code, KT_ECONFLICT);
    CHECK_OK(kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, "page-0", &good, &err));
    CHECK_EQ_INT(kt_kube_get(x->c, &KT_GVR_CONFIGMAPS, x->ns, "page-0", &out, &err), -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    CHECK_EQ_INT(kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, "page-0", NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    CHECK_OK(kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, "page-1", NULL, &err));
    json_decref(cm);
}

static void test_events(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *cm = must_get(x, &KT_GVR_CONFIGMAPS, "cm1");
    struct kt_kube_event ev = {.involved = cm,
                               .type = "Warning",
                               .reason = "TestReason",
                               .message = "something \"quoted\" happened",
                               .component = "kt-itest",
                               .instance = "kt-itest-0"};
    struct kt_kube_list_opts o = {.field_selector = "involvedObject.name=cm1,reason=TestReason"};
    json_t *list = NULL;
    json_t *e;

    json_object_set_new(cm, "apiVersion", json_string("v1"));
    json_object_set_new(cm, "kind", json_string("ConfigMap"));
    CHECK_OK(kt_kube_event_create(x->c, &ev, &err));
    CHECK_OK(kt_kube_event_create(x->c, &ev, &err)); /* unique names */
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_EVENTS, x->ns, &o, &list, &err));
    CHECK_EQ_INT(json_array_size(json_object_get(list, "items")), 2);
    e = json_array_get(json_object_get(list, "items"), 0);
    CHECK_EQ_STR(kt_json_str(e, "type", ""), "Warning");
    CHECK_EQ_STR(kt_json_str(e, "message", ""), "something \"quoted\" happened");
    CHECK_EQ_STR(kt_json_str(kt_json_path(e, "involvedObject"), "kind", ""), "ConfigMap");
    CHECK_EQ_STR(kt_json_str(kt_json_path(e, "involvedObject"), "uid", "x"),
                 kt_json_str(json_object_get(cm, "metadata"), "uid", "y"));
    CHECK_EQ_STR(kt_json_str(kt_json_path(e, "source"), "component", ""), "kt-itest");
    json_decref(list);
    ev.reason = NULL;
    CHECK_EQ_INT(kt_kube_event_create(x->c, &ev, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    json_decref(cm);
}

static void test_leases(struct ctx *x)
{
    struct kt_err err = {0};
    char now[40];
    json_t *lease;
    json_t *got = NULL;
    json_t *stale;

    kt_kube_time_now(now, KT_KUBE_TIME_MICRO);
    lease = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
                      "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
                      "trainer.kubeflow.org", "spec", "holderIdentity", "a", "leaseDurationSeconds",
                      15, "acquireTime", now, "renewTime", now, "leaseTransitions", 0);
    CHECK_OK(kt_kube_create(x->c, &KT_GVR_LEASES, x->ns, lease, NULL, &err));
    CHECK_OK(kt_kube_get(x->c, &KT_GVR_LEASES, x->ns, "trainer.kubeflow.org", &got, &err));
    CHECK_EQ_STR(kt_json_str(kt_json_path(got, "spec"), "holderIdentity", ""), "a");
    CHECK_EQ_STR(kt_json_str(kt_json_path(got, "spec"), "renewTime", ""), now);
    stale = json_deep_copy(got);
    kt_kube_time_now(now, KT_KUBE_TIME_MICRO);
    json_object_set_new(kt_json_path(got, "spec"), "renewTime", json_string(now));
    CHECK_OK(kt_kube_update(
        x->c,
        &(struct kt_kube_ref){.gvr = &KT_GVR_LEASES, .ns = x->ns, .name = "trainer.kubeflow.org"},
        got, NULL, &err));
    /* A second candidate with the old resourceVersion loses. */
    json_object_set_new(kt_json_path(stale, "spec"), "holderIdentity", json_string("b"));
    CHECK_EQ_INT(kt_kube_update(x->c,
                                &(struct kt_kube_ref){.gvr = &KT_GVR_LEASES,
                                                      .ns = x->ns,
                                                      .name = "trainer.kubeflow.org"},
                                stale, NULL, &err),
                 -1);
    CHECK_EQ_INT(err.code, KT_ECONFLICT);
    json_decref(got);
    json_decref(stale);
    json_decref(lease);
}

static void test_forbidden(struct ctx *x)
{
    struct kt_kube_config *cfg = itest_config(&x->env, "KT_WEBHOOK_KUBECONFIG");
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    struct kt_err err = {0};
    json_t *out = NULL;
    json_t *cm = itest_configmap("denied", "k", "v");

    CHECK_EQ_INT(kt_kube_get(c, &KT_GVR_CONFIGMAPS, x->ns, "cm1", &out, &err), -1);
    CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
    CHECK_EQ_INT(kt_kube_client_last_status(c)->code, 403);
    CHECK_CONTAINS(err.msg, "User \"system:serviceaccount:kubeflow-system:");
    CHECK_CONTAINS(err.msg, "cannot get resource \"configmaps\"");
    CHECK_EQ_INT(kt_kube_create(c, &KT_GVR_CONFIGMAPS, x->ns, cm, NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
    CHECK_CONTAINS(err.msg, "cannot create resource");
    /* A refused watch: the HTTP status of the stream's response, decoded the same way. */
    CHECK_EQ_INT(
        kt_kube_watch(c, &(struct kt_kube_watch_req){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns}, &err),
        -1);
    CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
    CHECK_CONTAINS(err.msg, "cannot watch resource \"configmaps\"");
    json_decref(cm);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
}

/* ---- concurrent writers ----------------------------------------------------------------- */

#define WRITERS 4
#define INCREMENTS 15

struct writer {
    struct ctx *x;
    int conflicts;
    int failures;
};

/* GET, increment data.n, PUT with the read resourceVersion; retry on 409. */
static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct kt_kube_client *c = kt_kube_client_new(w->x->admin_cfg);
    int i;

    for (i = 0; i < INCREMENTS; i++) {
        for (;;) {
            struct kt_err err = {0};
            json_t *o = NULL;
            int64_t n = 0;
            if (kt_kube_get(c, &KT_GVR_CONFIGMAPS, w->x->ns, "counter", &o, &err) < 0) {
                w->failures++;
                break;
            }
            const char *s = kt_json_str(json_object_get(o, "data"), "n", "0");
            if (kt_str_to_i64(kt_str_c(s), 0, INT64_MAX - 1, &n, &err) < 0) {
                w->failures++;
                json_decref(o);
                break;
            }
            char buf[32];
            snprintf(buf, sizeof(buf), "%lld", (long long)(n + 1));
            json_object_set_new(json_object_get(o, "data"), "n", json_string(buf));
            int rc = kt_kube_update(
                c,
                &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = w->x->ns, .name = "counter"},
                o, NULL, &err);
            json_decref(o);
            if (rc == 0) {
                break;
            }
            if (err.code != KT_ECONFLICT) {
                w->failures++;
                break;
            }
            w->conflicts++;
        }
    }
    kt_kube_client_free(c);
    return NULL;
}

static void test_concurrent_writers(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *cm = itest_configmap("counter", "n", "0");
    struct writer w[WRITERS];
    pthread_t t[WRITERS];
    int conflicts = 0;
    int i;

    CHECK_OK(kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, cm, NULL, &err));
    json_decref(cm);
    for (i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){.x = x};
        pthread_create(&t[i], NULL, writer_main, &w[i]);
    }
    for (i = 0; i < WRITERS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ_INT(w[i].failures, 0);
        conflicts += w[i].conflicts;
    }
    cm = must_get(x, &KT_GVR_CONFIGMAPS, "counter");
    /* No lost update: every increment landed exactly once. */
    CHECK_EQ_STR(kt_json_str(json_object_get(cm, "data"), "n", ""), "60");
    fprintf(stderr, "concurrent writers: %d updates, %d conflicts (409) retried\n",
            WRITERS * INCREMENTS, conflicts);
    json_decref(cm);
}

/* ---- caps and watches ------------------------------------------------------------------- */

static void test_body_cap(struct ctx *x)
{
    struct kt_kube_config *cfg = itest_config(&x->env, "KT_ADMIN_KUBECONFIG");
    struct kt_kube_client *c;
    struct kt_err err = {0};
    json_t *list = NULL;

    kt_kube_config_set_caps(cfg, 512, 512);
    c = kt_kube_client_new(cfg);
    CHECK_EQ_INT(kt_kube_list(c, &KT_GVR_CONFIGMAPS, x->ns, NULL, &list, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK(list == NULL);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
}

struct seen {
    int added, modified, deleted, bookmarks;
    int with_data, with_mf; /* events whose object still has data / metadata.managedFields */
    char last[64];
};

static int record(void *ud, const struct kt_kube_watch_event *ev)
{
    struct seen *s = ud;
    const char *name = kt_json_str(json_object_get(ev->object, "metadata"), "name", "");

    if (strncmp(name, "w-", 2) != 0 && ev->type != KT_WATCH_BOOKMARK) {
        return 0;
    }
    switch (ev->type) {
    case KT_WATCH_ADDED:
        s->added++;
        break;
    case KT_WATCH_MODIFIED:
        s->modified++;
        break;
    case KT_WATCH_DELETED:
        s->deleted++;
        break;
    default:
        s->bookmarks++;
        break;
    }
    if (ev->type != KT_WATCH_BOOKMARK) {
        s->with_data += json_object_get(ev->object, "data") != NULL;
        s->with_mf += kt_json_path(ev->object, "metadata.managedFields") != NULL;
    }
    snprintf(s->last, sizeof(s->last), "%s", name);
    return ev->type == KT_WATCH_DELETED ? 1 : 0;
}

static void test_watch_replay_and_timeout(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *list = NULL;
    json_t *cm = itest_configmap("w-1", "k", "v");
    json_t *patch = json_pack("{s:{s:s}}", "data", "k", "v2");
    struct kt_kube_list_opts o = {.allow_bookmarks = true, .timeout_seconds = 10};
    struct seen s = {0};
    char *last = NULL;
    atomic_int stop;
    double t0;

    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, NULL, &list, &err));
    o.resource_version = kt_json_str(json_object_get(list, "metadata"), "resourceVersion", "");
    CHECK_OK(kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, cm, NULL, &err));
    CHECK_OK(kt_kube_merge_patch(
        x->c, &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .name = "w-1"}, patch,
        NULL, &err));
    CHECK_OK(kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, "w-1", NULL, &err));
    /* Replayed from the list's resourceVersion; the callback stops at the DELETED event. */
    struct kt_kube_watch_req w = {.gvr = &KT_GVR_CONFIGMAPS,
                                  .ns = x->ns,
                                  .opts = &o,
                                  .fn = record,
                                  .ud = &s,
                                  .last_rv = &last};
    CHECK_OK(kt_kube_watch(x->c, &w, &err));
    CHECK_EQ_INT(s.added, 1);
    CHECK_EQ_INT(s.modified, 1);
    CHECK_EQ_INT(s.deleted, 1);
    CHECK_EQ_INT(s.with_data, 3);
    CHECK(last != NULL && strcmp(last, o.resource_version) != 0);

    /* The same replay with cut rules: every event's object without data and managedFields
     * (cut from the line before it is parsed); rules naming absent members cut nothing. */
    static const struct kt_json_cut_rule cut[] = {
        {"object", "data"}, {"metadata", "managedFields"}, KT_JSON_CUT_END};
    static const struct kt_json_cut_rule absent[] = {{"object", "nothingHere"}, KT_JSON_CUT_END};
    const struct kt_json_cut_rule *lists[] = {cut, absent};
    for (size_t i = 0; i < KT_ARRAY_SIZE(lists); i++) {
        o.cut = lists[i];
        memset(&s, 0, sizeof(s));
        CHECK_OK(kt_kube_watch(x->c, &w, &err));
        CHECK_EQ_INT(s.added + s.modified + s.deleted, 3);
        CHECK_EQ_INT(s.with_data, i == 0 ? 0 : 3);
        if (i == 0) {
            CHECK_EQ_INT(s.with_mf, 0);
        }
    }
    o.cut = NULL;

    /* timeoutSeconds ends the watch cleanly (0), nothing new arrives. */
    o.resource_version = last;
    o.timeout_seconds = 1;
    memset(&s, 0, sizeof(s));
    t0 = itest_now();
    CHECK_OK(kt_kube_watch(x->c, &w, &err));
    CHECK_EQ_INT(s.added + s.modified + s.deleted, 0);
    fprintf(stderr, "watch with timeoutSeconds=1 ended cleanly after %.2fs\n", itest_now() - t0);

    /* A stop flag set from outside ends the watch at once. */
    atomic_init(&stop, 1);
    o.timeout_seconds = 60;
    w.stop = &stop;
    w.last_rv = NULL;
    CHECK_OK(kt_kube_watch(x->c, &w, &err));
    /* An invalid namespace fails before any request. */
    o.resource_version = NULL;
    w.gvr = &KT_GVR_TRAINJOBS;
    w.ns = "bad/ns";
    w.stop = NULL;
    CHECK_EQ_INT(kt_kube_watch(x->c, &w, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    free(last);
    json_decref(patch);
    json_decref(cm);
    json_decref(list);
}

/* A client from a JSON kubeconfig: server URL, CA file (NULL = none: the system store),
 * client certificate from the admin kubeconfig's files. */
static struct kt_kube_config *config_for(struct ctx *x, const char *server, const char *ca)
{
    char *doc = kt_xasprintf(
        "{\"current-context\":\"t\",\"clusters\":[{\"name\":\"c\",\"cluster\":{"
        "\"server\":\"%s\"%s%s%s}}],\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"x\"}}],"
        "\"contexts\":[{\"name\":\"t\",\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}]}",
        server, ca ? ",\"certificate-authority\":\"" : "", ca ? ca : "", ca ? "\"" : "");
    struct kt_err err = {0};
    struct kt_kube_config *cfg =
        kt_kube_config_parse_kubeconfig(doc, strlen(doc), NULL, NULL, &err);

    (void)x;
    if (!cfg) {
        fprintf(stderr, "config_for: %s\n", err.msg);
    }
    free(doc);
    return cfg;
}

static void test_tls_and_network_errors(struct ctx *x)
{
    const char *api = itest_env_get(&x->env, "KT_APISERVER");
    struct kt_kube_config *cfg = config_for(x, api, NULL);
    struct kt_kube_client *c;
    struct kt_err err = {0};
    json_t *out = NULL;

    /* Verification is always on: the test CA is not in the system store. */
    CHECK(cfg != NULL);
    if (cfg) {
        c = kt_kube_client_new(cfg);
        CHECK_EQ_INT(kt_kube_get(c, &KT_GVR_NAMESPACES, NULL, "default", &out, &err), -1);
        CHECK_EQ_INT(err.code, KT_EIO);
        fprintf(stderr, "unknown CA: %s\n", err.msg);
        CHECK(kt_kube_client_last_status(c)->http == 0);
        kt_kube_client_free(c);
        kt_kube_config_free(cfg);
    }
    /* The right CA but a port nobody listens on. */
    cfg = config_for(x, "https://127.0.0.1:1", itest_env_get(&x->env, "KT_CA"));
    CHECK(cfg != NULL);
    if (cfg) {
        c = kt_kube_client_new(cfg);
        CHECK_EQ_INT(kt_kube_get(c, &KT_GVR_NAMESPACES, NULL, "default", &out, &err), -1);
        CHECK_EQ_INT(err.code, KT_EIO);
        kt_kube_client_free(c);
        kt_kube_config_free(cfg);
    }
    /* The right CA and server with a bogus bearer token: 401 as a clear error. */
    cfg = config_for(x, api, itest_env_get(&x->env, "KT_CA"));
    if (cfg) {
        c = kt_kube_client_new(cfg);
        CHECK_EQ_INT(kt_kube_get(c, &KT_GVR_NAMESPACES, NULL, "default", &out, &err), -1);
        CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
        CHECK_EQ_INT(kt_kube_client_last_status(c)->code, 401);
        CHECK_CONTAINS(err.msg, "HTTP 401 Unauthorized");
        kt_kube_client_free(c);
        kt_kube_config_free(cfg);
    }
}

int main(int argc, char **argv)
{
    struct ctx x = {0};

    kt_mem_init();
    if (argc != 2 || itest_env_load(&x.env, argv[1]) < 0) {
        fprintf(stderr, "usage: %s ENV_FILE\n", argv[0]);
        return 2;
    }
    x.admin_cfg = itest_config(&x.env, "KT_ADMIN_KUBECONFIG");
    x.c = kt_kube_client_new(x.admin_cfg);
    x.ns = itest_namespace(x.c, "kt-kube");
    test_create_get_errors(&x);
    test_list_pages_and_selectors(&x);
    test_list_metadata_only(&x);
    test_update_patch_apply(&x);
    test_status_subresource(&x);
    test_trainjob_crd(&x);
    test_delete_preconditions(&x);
    test_events(&x);
    test_leases(&x);
    test_forbidden(&x);
    test_concurrent_writers(&x);
    test_body_cap(&x);
    test_watch_replay_and_timeout(&x);
    test_tls_and_network_errors(&x);
    kt_kube_client_free(x.c);
    kt_kube_config_free(x.admin_cfg);
    itest_env_release(&x.env);
    free(x.ns);
    return test_report();
}
