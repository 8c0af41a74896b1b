/* tests/integration/itest_kube_informer.c ENV_FILE - informers and watches under real faults.
 *
 * One informer (label selector, paged LIST, managedFields stripped) runs on its loop thread
 * through: normal churn; an API server restart with --min-request-timeout=1 (every watch then
 * ends after 1-2 s and is resumed from the last resourceVersion); a restart with
 * --watch-cache=false, then etcd compaction while the loop is stopped, so the resumed watch
 * gets 410 Gone and the informer relists. After each phase the store AND the sequence of
 * handler calls must converge to the true state (a LIST) with no duplicate or missed call.
 * The API server is restarted with its default flags at the end. */
#include "tests/integration/kube_itest.h"

#include <pthread.h>

#include "common/informer.h"

#define CONVERGE_S 60.0

struct handler_log {
    pthread_mutex_t lock;
    json_t *state; /* key -> resourceVersion of the last add/update; removed on delete */
    int adds, updates, deletes;
    int duplicates; /* add/update delivering the resourceVersion already delivered */
    int anomalies;  /* add of a present key, update/delete of an absent key, managedFields */
    bool synced;
};

struct ctx {
    struct itest_env env;
    const char *dir; /* cluster directory */
    char *scripts;   /* tests/cluster */
    struct kt_kube_config *cfg;
    struct kt_kube_client *c;
    char *ns;
    int seq; /* names of created objects */
    struct handler_log log;
    struct kt_informer *inf;
    struct kt_informer_loop *loop;
    pthread_t thread;
};

static const char *key_of(const json_t *o, char *buf, size_t n)
{
    const json_t *md = json_object_get(o, "metadata");

    snprintf(buf, n, "%s/%s", kt_json_str(md, "namespace", ""), kt_json_str(md, "name", ""));
    return buf;
}

static const char *rv_of(const json_t *o)
{
    return kt_json_str(json_object_get(o, "metadata"), "resourceVersion", "");
}

static void note(struct handler_log *l, const json_t *o, bool present_expected, int *counter)
{
    char key[256];
    json_t *cur;

    key_of(o, key, sizeof(key));
    pthread_mutex_lock(&l->lock);
    cur = json_object_get(l->state, key);
    if ((cur != NULL) != present_expected) {
        l->anomalies++;
    }
    if (cur && strcmp(json_string_value(cur), rv_of(o)) == 0) {
        l->duplicates++;
    }
    if (kt_json_path(o, "metadata.managedFields")) {
        l->anomalies++;
    }
    json_object_set_new(l->state, key, json_string(rv_of(o)));
    (*counter)++;
    pthread_mutex_unlock(&l->lock);
}

static void on_add(void *ud, const json_t *o)
{
    struct handler_log *l = ud;

    note(l, o, false, &l->adds);
}

static void on_update(void *ud, const json_t *old, const json_t *o)
{
    struct handler_log *l = ud;

    if (strcmp(rv_of(old), rv_of(o)) == 0) {
        l->duplicates++;
    }
    note(l, o, true, &l->updates);
}

static void on_delete(void *ud, const json_t *o)
{
    struct handler_log *l = ud;
    char key[256];

    key_of(o, key, sizeof(key));
    pthread_mutex_lock(&l->lock);
    if (!json_object_get(l->state, key)) {
        l->anomalies++;
    }
    json_object_del(l->state, key);
    l->deletes++;
    pthread_mutex_unlock(&l->lock);
}

static void on_synced(void *ud)
{
    struct handler_log *l = ud;

    pthread_mutex_lock(&l->lock);
    l->synced = true;
    pthread_mutex_unlock(&l->lock);
}

static void *loop_main(void *arg)
{
    struct ctx *x = arg;
    struct kt_err err = {0};

    if (kt_informer_loop_run(x->loop, &err) < 0) {
        fprintf(stderr, "loop: %s\n", err.msg);
    }
    return NULL;
}

static void loop_start(struct ctx *x)
{
    pthread_create(&x->thread, NULL, loop_main, x);
}

static void loop_stop(struct ctx *x)
{
    kt_informer_loop_stop(x->loop);
    pthread_join(x->thread, NULL);
}

/* ---- the true state and convergence ----------------------------------------------------- */

static json_t *truth(struct ctx *x)
{
    struct kt_kube_list_opts o = {.label_selector = "sel=yes"};
    struct kt_err err = {0};
    json_t *list = NULL;
    json_t *m = json_object();
    json_t *it;
    size_t i;
    char key[256];

    if (kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, &list, &err) < 0) {
        fprintf(stderr, "truth: %s\n", err.msg);
        return m;
    }
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        json_object_set_new(m, key_of(it, key, sizeof(key)), json_string(rv_of(it)));
    }
    json_decref(list);
    return m;
}

/* The informer's store and the handler log both equal want (key -> resourceVersion). */
static bool converged(struct ctx *x, const json_t *want)
{
    json_t *snap = kt_informer_snapshot(x->inf);
    json_t *store = json_object();
    json_t *it;
    size_t i;
    char key[256];
    bool ok;

    json_array_foreach(snap, i, it)
    {
        json_object_set_new(store, key_of(it, key, sizeof(key)), json_string(rv_of(it)));
    }
    pthread_mutex_lock(&x->log.lock);
    ok = json_equal(store, want) && json_equal(x->log.state, want);
    pthread_mutex_unlock(&x->log.lock);
    json_decref(store);
    json_decref(snap);
    return ok;
}

static void check_converges(struct ctx *x, const char *phase)
{
    json_t *want = truth(x);
    double t0 = itest_now();
    bool ok = false;

    while (itest_now() - t0 < CONVERGE_S) {
        ok = converged(x, want);
        if (ok) {
            break;
        }
        itest_nap_ms(20);
    }
    CHECK(ok);
    pthread_mutex_lock(&x->log.lock);
    CHECK_EQ_INT(x->log.duplicates, 0);
    CHECK_EQ_INT(x->log.anomalies, 0);
    fprintf(stderr,
            "%s: %s after %.2fs with %zu objects; handlers so far: %d add, %d update, "
            "%d delete\n",
            phase, ok ? "converged" : "NOT converged", itest_now() - t0, json_object_size(want),
            x->log.adds, x->log.updates, x->log.deletes);
    pthread_mutex_unlock(&x->log.lock);
    json_decref(want);
}

/* ---- mutations -------------------------------------------------------------------------- */

static char *create_cm(struct ctx *x, const char *sel)
{
    struct kt_err err = {0};
    char *name = kt_xasprintf("cm-%03d", x->seq++);
    json_t *cm = itest_configmap(name, "v", "0");

    json_object_set_new(kt_json_path(cm, "metadata.labels"), "sel", json_string(sel));
    if (kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, x->ns, cm, NULL, &err) < 0) {
        fprintf(stderr, "create %s: %s\n", name, err.msg);
        test_failed++;
    }
    json_decref(cm);
    return name;
}

static void patch_cm(struct ctx *x, const char *name, const char *key, const char *val, bool label)
{
    struct kt_err err = {0};
    json_t *p = label ? json_pack("{s:{s:{s:s}}}", "metadata", "labels", key, val)
                      : json_pack("{s:{s:s}}", "data", key, val);

    if (kt_kube_merge_patch(x->c, &KT_GVR_CONFIGMAPS, x->ns, name, NULL, p, NULL, &err) < 0) {
        fprintf(stderr, "patch %s: %s\n", name, err.msg);
        test_failed++;
    }
    json_decref(p);
}

static void delete_cm(struct ctx *x, const char *name)
{
    struct kt_err err = {0};

    if (kt_kube_delete(x->c, &KT_GVR_CONFIGMAPS, x->ns, name, NULL, &err) < 0) {
        fprintf(stderr, "delete %s: %s\n", name, err.msg);
        test_failed++;
    }
}

/* A round of churn over names[0..n): updates, label flips (out of and into the selection),
 * deletes, creates. Names of deleted objects are replaced by new ones. */
static void churn(struct ctx *x, char **names, size_t n, int round)
{
    char val[16];
    size_t i;

    snprintf(val, sizeof(val), "%d", round);
    for (i = 0; i < n; i++) {
        switch ((i + (size_t)round) % 5) {
        case 0:
        case 1:
            patch_cm(x, names[i], "v", val, false);
            break;
        case 2:
            patch_cm(x, names[i], "sel", round % 2 ? "no" : "yes", true);
            break;
        case 3:
            delete_cm(x, names[i]);
            free(names[i]);
            names[i] = create_cm(x, "yes");
            break;
        default:
            break;
        }
    }
}

static int restart_apiserver(struct ctx *x, const char *flags)
{
    return itest_sh("%s/restart-apiserver.sh %s -- %s >&2", x->scripts, x->dir, flags);
}

static long etcd_compact(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *cm = NULL;
    long rev;

    /* The resourceVersion of a fresh write is etcd's current revision. */
    char *name = create_cm(x, "no");
    if (kt_kube_get(x->c, &KT_GVR_CONFIGMAPS, x->ns, name, &cm, &err) < 0) {
        free(name);
        return -1;
    }
    rev = strtol(rv_of(cm), NULL, 10);
    json_decref(cm);
    free(name);
    if (itest_sh(
            "curl -sf -X POST %s/v3/kv/compaction -d '{\"revision\":\"%ld\",\"physical\":true}'"
            " >&2",
            itest_env_get(&x->env, "KT_ETCD"), rev) != 0) {
        return -1;
    }
    return rev;
}

/* ---- phases ----------------------------------------------------------------------------- */

#define N_OBJ 20

static void phase_baseline(struct ctx *x, char **names)
{
    struct kt_informer_stats st;
    double t0 = itest_now();
    size_t i;

    for (i = 0; i < N_OBJ; i++) {
        names[i] = create_cm(x, "yes");
    }
    for (i = 0; i < 5; i++) {
        free(create_cm(x, "no"));
    }
    loop_start(x);
    while (!kt_informer_synced(x->inf) && itest_now() - t0 < CONVERGE_S) {
        itest_nap_ms(10);
    }
    CHECK(kt_informer_synced(x->inf));
    CHECK(x->log.synced);
    kt_informer_stats(x->inf, &st);
    CHECK_EQ_INT(st.objects, N_OBJ);
    check_converges(x, "initial list");
    churn(x, names, N_OBJ, 1);
    check_converges(x, "churn");
}

static void phase_min_request_timeout(struct ctx *x, char **names)
{
    struct kt_informer_stats before;
    struct kt_informer_stats st;
    struct kt_kube_list_opts o = {.resource_version = "0"};
    struct kt_err err = {0};
    double t0;

    kt_informer_stats(x->inf, &before);
    /* Also an API server restart under a live watch. */
    CHECK_EQ_INT(restart_apiserver(x, "--min-request-timeout=1"), 0);
    churn(x, names, N_OBJ, 2);
    check_converges(x, "restart with --min-request-timeout=1");
    t0 = itest_now();
    do {
        itest_nap_ms(100);
        kt_informer_stats(x->inf, &st);
    } while (st.watch_ends < before.watch_ends + 3 && itest_now() - t0 < 30);
    CHECK(st.watch_ends >= before.watch_ends + 3);
    CHECK(st.watches > before.watches + 3);
    fprintf(stderr, "server-ended watches: %lu, watch requests: %lu, failures (restart): %lu\n",
            st.watch_ends - before.watch_ends, st.watches - before.watches,
            st.failures - before.failures);
    churn(x, names, N_OBJ, 3);
    check_converges(x, "churn across server-ended watches");
    /* The blocking watch without timeoutSeconds ends cleanly too. */
    t0 = itest_now();
    CHECK_OK(kt_kube_watch(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, NULL, NULL, NULL, NULL, &err));
    fprintf(stderr, "blocking watch ended by the server after %.2fs\n", itest_now() - t0);
}

static int stop_at_first(void *ud, const struct kt_kube_watch_event *ev)
{
    (void)ud;
    (void)ev;
    return 1;
}

static void phase_compaction(struct ctx *x, char **names)
{
    struct kt_informer_stats before;
    struct kt_informer_stats st;
    struct kt_kube_list_opts o = {.timeout_seconds = 10};
    struct kt_err err = {0};
    json_t *list = NULL;
    long rev;

    CHECK_EQ_INT(restart_apiserver(x, "--watch-cache=false"), 0);
    churn(x, names, N_OBJ, 4);
    check_converges(x, "restart with --watch-cache=false");
    kt_informer_stats(x->inf, &before);
    loop_stop(x);
    CHECK_OK(kt_kube_list(x->c, &KT_GVR_CONFIGMAPS, x->ns, NULL, &list, &err));
    o.resource_version = kt_json_str(json_object_get(list, "metadata"), "resourceVersion", "");
    /* While nobody watches: changes, then compaction past them. */
    churn(x, names, N_OBJ, 5);
    rev = etcd_compact(x);
    CHECK(rev > 0);
    fprintf(stderr, "compacted etcd at revision %ld (old watch point %s)\n", rev,
            o.resource_version);
    CHECK_EQ_INT(
        kt_kube_watch(x->c, &KT_GVR_CONFIGMAPS, x->ns, &o, stop_at_first, NULL, NULL, NULL, &err),
        -1);
    CHECK_EQ_INT(err.code, KT_EGONE);
    fprintf(stderr, "watch from the compacted revision: %s\n", err.msg);
    json_decref(list);
    loop_start(x);
    check_converges(x, "relist after 410");
    kt_informer_stats(x->inf, &st);
    CHECK(st.relists_gone >= before.relists_gone + 1);
    CHECK(st.lists >= before.lists + 1);
    churn(x, names, N_OBJ, 6);
    check_converges(x, "churn after relist");
}

static char *scripts_dir(const char *argv0)
{
    char *dir;
    char *p;

    if (access("tests/cluster/restart-apiserver.sh", X_OK) == 0) {
        return kt_xstrdup("tests/cluster");
    }
    /* build/<variant>/itests/itest_x -> the repository root is three levels up. */
    dir = kt_xstrdup(argv0);
    for (int i = 0; i < 4; i++) {
        p = strrchr(dir, '/');
        if (!p) {
            break;
        }
        *p = '\0';
    }
    p = kt_xasprintf("%s/tests/cluster", dir);
    free(dir);
    return p;
}

static void setup(struct ctx *x)
{
    struct kt_informer_opts o = {.gvr = &KT_GVR_CONFIGMAPS,
                                 .label_selector = "sel=yes",
                                 .page_size = 7,
                                 .watch_timeout_s = -1,
                                 .strip_managed_fields = true};
    struct kt_informer_handlers h = {on_add, on_update, on_delete, on_synced, &x->log};

    x->cfg = itest_config(&x->env, "KT_ADMIN_KUBECONFIG");
    /* Fail fast while the API server restarts instead of waiting 30 s per request. */
    kt_kube_config_set_timeouts(x->cfg, 10000, 2000);
    x->c = kt_kube_client_new(x->cfg);
    x->ns = itest_namespace(x->c, "kt-inf");
    o.ns = x->ns;
    pthread_mutex_init(&x->log.lock, NULL);
    x->log.state = json_object();
    x->inf = kt_informer_new(&o, &h);
    x->loop = kt_informer_loop_new(x->cfg);
    kt_informer_loop_add(x->loop, x->inf);
}

int main(int argc, char **argv)
{
    struct ctx x = {0};
    char *names[N_OBJ] = {0};
    size_t i;

    kt_mem_init();
    if (argc != 2 || itest_env_load(&x.env, argv[1]) < 0) {
        fprintf(stderr, "usage: %s ENV_FILE\n", argv[0]);
        return 2;
    }
    x.dir = itest_env_get(&x.env, "KT_CLUSTER_DIR");
    x.scripts = scripts_dir(argv[0]);
    setup(&x);
    phase_baseline(&x, names);
    phase_min_request_timeout(&x, names);
    phase_compaction(&x, names);
    loop_stop(&x);
    CHECK_EQ_INT(restart_apiserver(&x, ""), 0);
    kt_informer_loop_free(x.loop);
    kt_informer_free(x.inf);
    for (i = 0; i < N_OBJ; i++) {
        free(names[i]);
    }
    json_decref(x.log.state);
    pthread_mutex_destroy(&x.log.lock);
    kt_kube_client_free(x.c);
    kt_kube_config_free(x.cfg);
    free(x.ns);
    free(x.scripts);
    itest_env_release(&x.env);
    return test_report();
}
