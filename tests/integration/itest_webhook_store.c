/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/itest_webhook_store.c - kt-webhook's runtime store on the real API server.
 *
 * The webhook sources are compiled in (docs/internals/style.md#testing-a-static-helper). Checks, as
 * the cluster admin (the webhook's own identity and RBAC are covered by webhook_admission.sh):
 *  - a cache miss does one live GET: with the informers not started, a TrainingRuntime that
 *    exists is still found, one that does not exist gives an empty list (so the validator
 *    says "must be created"), a ClusterTrainingRuntime likewise;
 *  - with the informers running the store becomes synced, publishes new runtimes and drops
 *    deleted ones (bounded polls, never asserted on time);
 *  - the per-request view reads a JobSet that does not exist as NULL without an error, and a
 *    PriorityClass (cluster-scoped, for a Volcano runtime) live: one that exists is found
 *    (with whatever namespace the caller passes), one that does not is NULL without an error. */
#include "tests/integration/kube_itest.h"

#include "common/base/log.h"
#include "webhook/store.c"

#define WAIT_S 30.0

static json_t *runtime_obj(const char *kind, const char *name, const char *ns)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:{s:s}, s:{s:{s:{s:[{s:s, s:{s:{s:{s:s}}, s:{s:{s:{s:[{s:s, s:s}]}}}}}]}}}}",
        "apiVersion", "trainer.kubeflow.org/v1alpha1", "kind", kind, "metadata", "name", name,
        "spec", "template", "spec", "replicatedJobs", "name", "node", "template", "metadata",
        "labels", "trainer.kubeflow.org/trainjob-ancestor-step", "trainer", "spec", "template",
        "spec", "containers", "name", "node", "image", "busybox");
    if (ns) {
        json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(ns));
    }
    return o;
}

/* runtimes_for on a fresh snapshot; returns the number of runtimes seen and whether the
 * answer came from a live GET. */
static int lookup(struct kt_wstore *s, const char *group, const char *kind, const char *ns,
                  const char *name, bool *live)
{
    struct kt_wsnap *snap = kt_wstore_acquire(s);
    const json_t *rts = NULL;
    json_t *owned = NULL;
    struct kt_err err = {0};
    int n = -1;

    struct kt_wstore_runtime_ref ref = {.api_group = group, .kind = kind, .name = name, .ns = ns};
    if (kt_wstore_runtimes_for(s, snap, &ref, &rts, &owned, &err) == 0) {
        n = 0;
        size_t i;
        json_t *o;
        json_array_foreach(rts, i, o)
        {
            n += matches(o, "trainer.kubeflow.org/v1alpha1", kind,
                         strcmp(kind, "TrainingRuntime") == 0 ? ns : NULL, name);
        }
        *live = owned != NULL;
    } else {
        fprintf(stderr, "lookup: %s\n", err.msg);
    }
    json_decref(owned);
    kt_wsnap_release(snap);
    return n;
}

static void test_live_get(struct kt_kube_config *cfg, struct kt_kube_client *c, const char *ns,
                          const char *ctr, const char *pc)
{
    struct kt_wstore *s = kt_wstore_from_cluster(cfg); /* informers never started */
    bool live = false;

    CHECK(!kt_wstore_synced(s));
    CHECK_EQ_INT(lookup(s, KT_GROUP, "TrainingRuntime", ns, "rt", &live), 1);
    CHECK(live);
    CHECK_EQ_INT(lookup(s, KT_GROUP, "TrainingRuntime", ns, "absent", &live), 0);
    CHECK(live);
    CHECK_EQ_INT(lookup(s, KT_GROUP, "ClusterTrainingRuntime", ns, ctr, &live), 1);
    CHECK_EQ_INT(lookup(s, KT_GROUP, "TrainingRuntime", "other-ns-without-it", "rt", &live), 0);
    /* Unsupported kinds are never fetched: the validator answers "unsupported runtime". */
    CHECK_EQ_INT(lookup(s, KT_GROUP, "Pod", ns, "rt", &live), 0);
    CHECK(!live);
    CHECK_EQ_INT(lookup(s, "example.com", "TrainingRuntime", ns, "rt", &live), 0);
    CHECK(!live);
    struct kt_wsnap *snap = kt_wstore_acquire(s);
    struct kt_wview v;
    kt_wview_init(&v, s, snap);
    CHECK(kt_view_get(&v.view, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "none") == NULL);
    CHECK(!v.err_set);
    CHECK(kt_view_get(&v.view, "v1", "Secret", ns, "x") == NULL); /* never read */
    const json_t *got = kt_view_get(&v.view, "scheduling.k8s.io/v1", "PriorityClass", NULL, pc);
    CHECK(got != NULL);
    CHECK_EQ_STR(kt_json_str(json_object_get(got, "metadata"), "name", ""), pc);
    CHECK(kt_view_get(&v.view, "scheduling.k8s.io/v1", "PriorityClass", ns, pc) != NULL);
    CHECK(kt_view_get(&v.view, "scheduling.k8s.io/v1", "PriorityClass", NULL, "absent-pc") == NULL);
    CHECK(!v.err_set);
    kt_wview_release(&v);
    kt_wsnap_release(snap);
    kt_wstore_free(s);
    (void)c;
}

/* Poll until lookup gives want from the cache (not a live GET), bounded. */
static bool cached(struct kt_wstore *s, const char *kind, const char *ns, const char *name,
                   int want)
{
    double end = itest_now() + WAIT_S;

    while (itest_now() < end) {
        bool live = true;
        int n = lookup(s, KT_GROUP, kind, ns, name, &live);
        if (n == want && (want == 0 || !live)) {
            return true;
        }
        itest_nap_ms(20);
    }
    return false;
}

static void test_informers(struct kt_kube_config *cfg, struct kt_kube_client *c, const char *ns)
{
    struct kt_wstore *s = kt_wstore_from_cluster(cfg);
    struct kt_err err = {0};
    double end = itest_now() + WAIT_S;

    CHECK_OK(kt_wstore_start(s, &err));
    while (!kt_wstore_synced(s) && itest_now() < end) {
        itest_nap_ms(20);
    }
    CHECK(kt_wstore_synced(s));
    CHECK(cached(s, "TrainingRuntime", ns, "rt", 1));
    json_t *o = runtime_obj("TrainingRuntime", "later", ns);
    CHECK_OK(kt_kube_create(c, &KT_GVR_TRAININGRUNTIMES, ns, o, NULL, &err));
    json_decref(o);
    CHECK(cached(s, "TrainingRuntime", ns, "later", 1));
    CHECK_OK(kt_kube_delete(c, &KT_GVR_TRAININGRUNTIMES, ns, "later", NULL, &err));
    /* Deleted: gone from the snapshot, and the live GET agrees. */
    CHECK(cached(s, "TrainingRuntime", ns, "later", 0));
    kt_wstore_free(s);
}

int main(int argc, char **argv)
{
    struct itest_env env;
    struct kt_err err = {0};

    kt_mem_init();
    kt_log_set_level(getenv("KT_DEBUG") ? KT_LOG_DEBUG : KT_LOG_WARN);
    if (argc != 2 || itest_env_load(&env, argv[1]) < 0) {
        fprintf(stderr, "usage: %s ENV_FILE\n", argv[0]);
        return 2;
    }
    struct kt_kube_config *cfg = itest_config(&env, "KT_ADMIN_KUBECONFIG");
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    char *ns = itest_namespace(c, "kt-whstore");
    char *ctr = kt_xasprintf("whstore-%s", ns);
    json_t *o = runtime_obj("TrainingRuntime", "rt", ns);
    CHECK_OK(kt_kube_create(c, &KT_GVR_TRAININGRUNTIMES, ns, o, NULL, &err));
    json_decref(o);
    o = runtime_obj("ClusterTrainingRuntime", ctr, NULL);
    CHECK_OK(kt_kube_create(c, &KT_GVR_CLUSTERTRAININGRUNTIMES, NULL, o, NULL, &err));
    json_decref(o);

    char *pc = kt_xasprintf("whstore-pc-%s", ns);
    o = json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                  "PriorityClass", "metadata", "name", pc, "value", 100);
    CHECK_OK(kt_kube_create(c, &KT_GVR_PRIORITYCLASSES, NULL, o, NULL, &err));
    json_decref(o);

    test_live_get(cfg, c, ns, ctr, pc);
    test_informers(cfg, c, ns);

    CHECK_OK(kt_kube_delete(c, &KT_GVR_CLUSTERTRAININGRUNTIMES, NULL, ctr, NULL, &err));
    CHECK_OK(kt_kube_delete(c, &KT_GVR_PRIORITYCLASSES, NULL, pc, NULL, &err));
    free(pc);
    free(ctr);
    free(ns);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
    itest_env_release(&env);
    return test_report();
}
