/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/itest_kube_informer_ns.c ENV_FILE - an informer restricted to a list of
 * namespaces (kt_informer_opts.namespaces) on the real API server: one LIST+WATCH per listed
 * namespace into one store; objects of an unlisted namespace never appear, before or after the
 * informer synced; adds, updates and deletes of every listed namespace are delivered once;
 * stats count a LIST per namespace. Every wait is a bounded poll. */
#include "tests/integration/kube_itest.h"

#include <pthread.h>

#include "common/kube/informer.h"

#define WAIT_S 60.0

struct counts {
    pthread_mutex_t lock;
    int adds, updates, deletes, synced;
};

static void on_add(void *ud, const json_t *o)
{
    struct counts *c = ud;
    (void)o;
    pthread_mutex_lock(&c->lock);
    c->adds++;
    pthread_mutex_unlock(&c->lock);
}

static void on_update(void *ud, const json_t *old, const json_t *o)
{
    struct counts *c = ud;
    (void)old;
    (void)o;
    pthread_mutex_lock(&c->lock);
    c->updates++;
    pthread_mutex_unlock(&c->lock);
}

static void on_delete(void *ud, const json_t *o)
{
    struct counts *c = ud;
    (void)o;
    pthread_mutex_lock(&c->lock);
    c->deletes++;
    pthread_mutex_unlock(&c->lock);
}

static void on_synced(void *ud)
{
    struct counts *c = ud;
    pthread_mutex_lock(&c->lock);
    c->synced++;
    pthread_mutex_unlock(&c->lock);
}

static void *loop_main(void *arg)
{
    struct kt_err err = {0};
    if (kt_informer_loop_run(arg, &err) < 0) {
        fprintf(stderr, "loop: %s\n", err.msg);
    }
    return NULL;
}

static void create_cm(struct kt_kube_client *c, const char *ns, const char *name)
{
    struct kt_err err = {0};
    json_t *cm = itest_configmap(name, "v", "0");
    if (kt_kube_create(c, &KT_GVR_CONFIGMAPS, ns, cm, NULL, &err) < 0) {
        fprintf(stderr, "create %s/%s: %s\n", ns, name, err.msg);
        test_failed++;
    }
    json_decref(cm);
}

/* Bounded poll until ns/name is in (want) or out of (!want) the store. */
static bool wait_present(struct kt_informer *inf, const char *ns, const char *name, bool want)
{
    double t0 = itest_now();
    while (itest_now() - t0 < WAIT_S) {
        json_t *o = kt_informer_get(inf, ns, name);
        bool have = o != NULL;
        json_decref(o);
        if (have == want) {
            return true;
        }
        itest_nap_ms(10);
    }
    return false;
}

static bool absent(struct kt_informer *inf, const char *ns, const char *name)
{
    json_t *o = kt_informer_get(inf, ns, name);
    json_decref(o);
    return o == NULL;
}

int main(int argc, char **argv)
{
    struct itest_env env = {0};
    struct counts n = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct kt_informer_handlers h = {on_add, on_update, on_delete, on_synced, &n};
    struct kt_informer_stats st;
    struct kt_err err = {0};
    pthread_t t;

    kt_mem_init();
    if (argc != 2 || itest_env_load(&env, argv[1]) < 0) {
        fprintf(stderr, "usage: %s ENV_FILE\n", argv[0]);
        return 2;
    }
    struct kt_kube_config *cfg = itest_config(&env, "KT_ADMIN_KUBECONFIG");
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    char *a = itest_namespace(c, "kt-insa"), *b = itest_namespace(c, "kt-insb");
    char *other = itest_namespace(c, "kt-insc");
    create_cm(c, a, "first");
    create_cm(c, b, "first");
    create_cm(c, other, "first");

    const char *const list[] = {a, b};
    struct kt_informer_opts o = {.gvr = &KT_GVR_CONFIGMAPS,
                                 .ns = other, /* ignored when namespaces are given */
                                 .namespaces = list,
                                 .n_namespaces = 2,
                                 .label_selector = "kt-test=yes"};
    struct kt_informer *inf = kt_informer_new(&o, &h);
    struct kt_informer_loop *loop = kt_informer_loop_new(cfg);
    kt_informer_loop_add(loop, inf);
    pthread_create(&t, NULL, loop_main, loop);

    double t0 = itest_now();
    while (!kt_informer_synced(inf) && itest_now() - t0 < WAIT_S) {
        itest_nap_ms(10);
    }
    CHECK(kt_informer_synced(inf));
    kt_informer_stats(inf, &st);
    CHECK_EQ_INT(st.objects, 2);
    CHECK_EQ_INT(st.lists, 2); /* one per listed namespace */
    CHECK(!absent(inf, a, "first"));
    CHECK(!absent(inf, b, "first"));
    CHECK(absent(inf, other, "first"));

    /* Events of both listed namespaces arrive; the unlisted namespace's never do. */
    create_cm(c, other, "second");
    create_cm(c, a, "second");
    create_cm(c, b, "second");
    CHECK(wait_present(inf, a, "second", true));
    CHECK(wait_present(inf, b, "second", true));
    json_t *p = json_pack("{s:{s:s}}", "data", "v", "1");
    if (kt_kube_merge_patch(
            c, &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = b, .name = "first"}, p, NULL,
            &err) < 0 ||
        kt_kube_delete(c, &KT_GVR_CONFIGMAPS, a, "first", NULL, &err) < 0) {
        fprintf(stderr, "patch/delete: %s\n", err.msg);
        test_failed++;
    }
    json_decref(p);
    CHECK(wait_present(inf, a, "first", false));
    t0 = itest_now();
    for (;;) {
        json_t *got = kt_informer_get(inf, b, "first");
        bool updated = strcmp(kt_json_str(json_object_get(got, "data"), "v", ""), "1") == 0;
        json_decref(got);
        if (updated || itest_now() - t0 > WAIT_S) {
            CHECK(updated);
            break;
        }
        itest_nap_ms(10);
    }
    CHECK(absent(inf, other, "first"));
    CHECK(absent(inf, other, "second"));
    kt_informer_stats(inf, &st);
    CHECK_EQ_INT(st.objects, 3); /* b/first, a/second, b/second */
    CHECK(st.watches >= 2);
    pthread_mutex_lock(&n.lock);
    CHECK_EQ_INT(n.adds, 4);
    CHECK_EQ_INT(n.updates, 1);
    CHECK_EQ_INT(n.deletes, 1);
    CHECK_EQ_INT(n.synced, 1);
    pthread_mutex_unlock(&n.lock);

    kt_informer_loop_stop(loop);
    pthread_join(t, NULL);
    kt_informer_loop_free(loop);
    kt_informer_free(inf);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
    free(a);
    free(b);
    free(other);
    itest_env_release(&env);
    return test_report();
}
