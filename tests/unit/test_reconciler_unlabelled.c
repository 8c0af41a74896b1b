/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_unlabelled.c - reconciler/unlabelled.c: only objects whose
 * controller ownerReference is a TrainJob (and that lack our label) are kept; the sealed set
 * answers by resource, namespace and name, without duplicates; a LIST that failed makes only its
 * own source unknown (answered "read live"), the other kinds keep the scan's answer. Compiled in
 * directly (reconciler/ is not part of libkt.a); the scan itself runs against a real API server in
 * tests/integration/reconciler_test.sh (adopt-*). */
#include "tests/test.h"

#include "common/base/mem.h"
#include "reconciler/unlabelled.c"

static const struct kt_kube_gvr CMS = {"", "v1", "configmaps"};
static const struct kt_kube_gvr JSS = {"jobset.x-k8s.io", "v1alpha2", "jobsets"};

/* A PartialObjectMetadata as a metadata-only LIST returns it. */
static json_t *item(const char *ns, const char *name, const char *ref_av, const char *ref_kind,
                    bool controller)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "meta.k8s.io/v1", "kind",
                          "PartialObjectMetadata", "metadata", "namespace", ns, "name", name);
    if (ref_kind) {
        json_object_set_new(json_object_get(o, "metadata"), "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", ref_av, "kind",
                                      ref_kind, "name", "tj", "uid", "u1", "controller",
                                      controller));
    }
    return o;
}

static bool add_new(struct kt_unlabelled *u, const struct kt_kube_gvr *gvr, json_t *o)
{
    bool kept = kt_unlabelled_add(u, gvr, o);
    json_decref(o);
    return kept;
}

static void test_controller(void)
{
    json_t *o = item("ns", "a", "trainer.kubeflow.org/v1alpha1", "TrainJob", true);
    CHECK_EQ_STR(kt_controller_trainjob(o), "tj");
    json_decref(o);
    o = item("ns", "a", "trainer.kubeflow.org/v1alpha1", "TrainJob", false);
    CHECK(kt_controller_trainjob(o) == NULL); /* an owner, not the controller */
    json_decref(o);
    o = item("ns", "a", "batch/v1", "TrainJob", true);
    CHECK(kt_controller_trainjob(o) == NULL); /* another group's TrainJob */
    json_decref(o);
    o = item("ns", "a", "jobset.x-k8s.io/v1alpha2", "JobSet", true);
    CHECK(kt_controller_trainjob(o) == NULL);
    json_decref(o);
    o = item("ns", "a", NULL, NULL, false);
    CHECK(kt_controller_trainjob(o) == NULL);
    json_decref(o);
}

static void test_set(void)
{
    struct kt_unlabelled *u = kt_unlabelled_new();
    const char *tj = "trainer.kubeflow.org/v1alpha1";
    CHECK(add_new(u, &JSS, item("ns", "tj", tj, "TrainJob", true)));
    CHECK(add_new(u, &CMS, item("ns", "tj-initializer", tj, "TrainJob", true)));
    CHECK(add_new(u, &JSS, item("ns", "tj", tj, "TrainJob", true))); /* a restarted LIST */
    CHECK(!add_new(u, &JSS, item("ns", "other", "apps/v1", "Deployment", true)));
    CHECK(!add_new(u, &JSS, item("ns", "none", NULL, NULL, false)));
    CHECK(!add_new(u, &CMS, item("ns", "notctl", tj, "TrainJob", false)));
    json_t *labelled = item("ns", "lab", tj, "TrainJob", true);
    json_object_set_new(json_object_get(labelled, "metadata"), "labels",
                        json_pack("{s:s}", KT_TRAINJOB_NAME_LABEL, "tj"));
    CHECK(!add_new(u, &CMS, labelled)); /* the informer has it */
    kt_unlabelled_seal(u);
    CHECK_EQ_INT(kt_unlabelled_len(u), 2);
    CHECK(kt_unlabelled_has(u, &JSS, "ns", "tj"));
    CHECK(kt_unlabelled_has(u, &CMS, "ns", "tj-initializer"));
    CHECK(!kt_unlabelled_has(u, &CMS, "ns", "tj"));    /* other resource */
    CHECK(!kt_unlabelled_has(u, &JSS, "ns2", "tj"));   /* other namespace */
    CHECK(!kt_unlabelled_has(u, &JSS, "ns", "other")); /* not a TrainJob's */
    CHECK(!kt_unlabelled_has(u, &JSS, NULL, "tj"));
    kt_unlabelled_free(u);
    kt_unlabelled_free(NULL);
}

static void test_empty_and_many(void)
{
    struct kt_unlabelled *u = kt_unlabelled_new();
    kt_unlabelled_seal(u);
    CHECK_EQ_INT(kt_unlabelled_len(u), 0);
    CHECK(!kt_unlabelled_has(u, &JSS, "ns", "tj"));
    char name[32];
    for (int i = 999; i >= 0; i--) {
        snprintf(name, sizeof(name), "j%d", i);
        add_new(u, &JSS, item("ns", name, "trainer.kubeflow.org/v1", "TrainJob", true));
        add_new(u, &JSS, item("ns", name, "trainer.kubeflow.org/v1", "TrainJob", true));
    }
    kt_unlabelled_seal(u);
    CHECK_EQ_INT(kt_unlabelled_len(u), 1000);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "j%d", i);
        if (!kt_unlabelled_has(u, &JSS, "ns", name)) {
            TEST_FAIL_("%s lost", name);
        }
    }
    kt_unlabelled_free(u);
}

/* A failed LIST marks its source only: that kind (in that namespace, or everywhere for an
 * all-namespaces LIST) is read live; another kind, or another namespace, keeps the answer. */
static void test_failed_source(void)
{
    struct kt_unlabelled *u = kt_unlabelled_new();
    add_new(u, &CMS, item("ns", "tj-initializer", "trainer.kubeflow.org/v1", "TrainJob", true));
    kt_unlabelled_mark_failed(u, &JSS, NULL);
    kt_unlabelled_mark_failed(u, &JSS, NULL); /* twice: sealed once */
    kt_unlabelled_seal(u);
    CHECK_EQ_INT(kt_unlabelled_failed(u), 1);
    CHECK(kt_unlabelled_has(u, &JSS, "ns", "anything")); /* unknown: read live */
    CHECK(kt_unlabelled_has(u, &JSS, "other", "x"));
    CHECK(kt_unlabelled_has(u, &CMS, "ns", "tj-initializer"));
    CHECK(!kt_unlabelled_has(u, &CMS, "ns", "tj")); /* the ConfigMap scan still answers */
    kt_unlabelled_free(u);

    u = kt_unlabelled_new(); /* per namespace (watchNamespaces) */
    kt_unlabelled_mark_failed(u, &CMS, "a");
    kt_unlabelled_seal(u);
    CHECK(kt_unlabelled_has(u, &CMS, "a", "x"));
    CHECK(!kt_unlabelled_has(u, &CMS, "b", "x"));
    CHECK(!kt_unlabelled_has(u, &JSS, "a", "x"));
    kt_unlabelled_free(u);
}

/* The scan against a server that refuses every connection: each source marked failed, err
 * names the first, the set is still returned (the reconciler reads those kinds live). */
static void test_scan_refused(void)
{
    static const char kc[] = "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                             "clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\", "
                             "certificate-authority-data: eA==}}]\n"
                             "users: [{name: u, user: {token: t}}]\n"
                             "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
    struct kt_err err = {0};
    struct kt_kube_config *cfg =
        kt_kube_config_parse_kubeconfig(kc, sizeof(kc) - 1, NULL, NULL, &err);
    CHECK(cfg != NULL);
    if (!cfg) {
        TEST_FAIL_("kubeconfig: %s", err.msg);
        return;
    }
    kt_kube_config_set_timeouts(cfg, 2000, 1000);
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    const struct kt_kube_gvr *gvrs[] = {&JSS, &CMS};
    const char *nss[] = {"a", "b"};
    struct kt_unlabelled *u = kt_unlabelled_scan(c, gvrs, 2, nss, 2, &err);
    CHECK(u != NULL);
    if (u) {
        CHECK_EQ_INT(kt_unlabelled_failed(u), 4);
        CHECK(kt_unlabelled_has(u, &CMS, "b", "x"));
        CHECK_CONTAINS(err.msg, "jobset.x-k8s.io/jobsets in a: ");
    }
    kt_unlabelled_free(u);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
}

int main(void)
{
    kt_mem_init();
    test_controller();
    test_set();
    test_empty_and_many();
    test_failed_source();
    test_scan_refused();
    return test_report();
}
