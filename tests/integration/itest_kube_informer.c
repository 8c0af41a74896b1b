/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/itest_kube_informer.c ENV_FILE - informers and watches under real faults.
 *
 * One informer (label selector, paged LIST, managedFields stripped) runs on its loop thread
 * through: normal churn; an API server restart with --min-request-timeout=1 (every watch then
 * ends after 1-2 s and is resumed from the last resourceVersion); a restart with
 * --watch-cache=false, then etcd compaction while the loop is stopped, so the resumed watch
 * gets 410 Gone and the informer relists. After each phase the store AND the sequence of
 * handler calls must converge to the true state (a LIST) with no duplicate or missed call.
 * Then: 429 with Retry-After (--max-requests-inflight=1 while a slow reader holds the slot);
 * back to default flags; a second informer whose service-account token (a JWT signed with
 * KT_SA_KEY) expires mid-watch and is rotated in its token file; the in-cluster config. */
#include "tests/integration/kube_itest.h"

#include <pthread.h>
#include <signal.h>

#include "common/kube/informer.h"
#include "common/base/str.h"

#define CONVERGE_S 60.0

struct handler_log {
    pthread_mutex_t lock;
    json_t *state; /* key -> resourceVersion of the last add/update; removed on delete */
    int adds, updates, deletes;
    int duplicates; /* add/update delivering the resourceVersion already delivered */
    int anomalies;  /* add of a present key, update/delete of an absent key, managedFields */
    bool synced;
};

/* An informer, its loop thread and the log of its handler calls. */
struct watcher {
    struct handler_log log;
    struct kt_informer *inf;
    struct kt_informer_loop *loop;
    pthread_t thread;
};

struct ctx {
    struct itest_env env;
    const char *dir; /* cluster directory */
    char *scripts;   /* tests/cluster */
    struct kt_kube_config *cfg;
    struct kt_kube_client *c;
    char *ns;
    int seq;           /* names of created objects */
    struct watcher *w; /* the informer the checks look at */
    struct watcher main_w;
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

    /* An update must change something: the same resourceVersion again is a duplicate. */
    note(l, o, true, strcmp(rv_of(old), rv_of(o)) == 0 ? &l->duplicates : &l->updates);
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
    struct watcher *w = arg;
    struct kt_err err = {0};

    if (kt_informer_loop_run(w->loop, &err) < 0) {
        fprintf(stderr, "loop: %s\n", err.msg);
    }
    return NULL;
}

static void loop_start(struct ctx *x)
{
    pthread_create(&x->w->thread, NULL, loop_main, x->w);
}

static void loop_stop(struct ctx *x)
{
    kt_informer_loop_stop(x->w->loop);
    pthread_join(x->w->thread, NULL);
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
    json_t *snap = kt_informer_snapshot(x->w->inf);
    json_t *store = json_object();
    json_t *it;
    size_t i;
    char key[256];
    bool ok;

    json_array_foreach(snap, i, it)
    {
        json_object_set_new(store, key_of(it, key, sizeof(key)), json_string(rv_of(it)));
    }
    pthread_mutex_lock(&x->w->log.lock);
    ok = json_equal(store, want) && json_equal(x->w->log.state, want);
    pthread_mutex_unlock(&x->w->log.lock);
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
    pthread_mutex_lock(&x->w->log.lock);
    CHECK_EQ_INT(x->w->log.duplicates, 0);
    CHECK_EQ_INT(x->w->log.anomalies, 0);
    fprintf(stderr,
            "%s: %s after %.2fs with %zu objects; handlers so far: %d add, %d update, "
            "%d delete\n",
            phase, ok ? "converged" : "NOT converged", itest_now() - t0, json_object_size(want),
            x->w->log.adds, x->w->log.updates, x->w->log.deletes);
    pthread_mutex_unlock(&x->w->log.lock);
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

    if (kt_kube_merge_patch(
            x->c, &(struct kt_kube_ref){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .name = name}, p,
            NULL, &err) < 0) {
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
    int64_t rev = -1;

    /* The resourceVersion of a fresh write is etcd's current revision. */
    char *name = create_cm(x, "no");
    if (kt_kube_get(x->c, &KT_GVR_CONFIGMAPS, x->ns, name, &cm, &err) < 0) {
        free(name);
        return -1;
    }
    if (kt_str_to_i64(kt_str_c(rv_of(cm)), 1, INT64_MAX, &rev, &err) < 0) {
        rev = -1;
    }
    json_decref(cm);
    free(name);
    if (rev < 0) {
        return -1;
    }
    if (itest_sh("curl -sf -o /dev/null -X POST %s/v3/kv/compaction -d "
                 "'{\"revision\":\"%lld\",\"physical\":true}'"
                 " >&2",
                 itest_env_get(&x->env, "KT_ETCD"), (long long)rev) != 0) {
        return -1;
    }
    return (long)rev;
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
    while (!kt_informer_synced(x->w->inf) && itest_now() - t0 < CONVERGE_S) {
        itest_nap_ms(10);
    }
    CHECK(kt_informer_synced(x->w->inf));
    pthread_mutex_lock(&x->w->log.lock);
    CHECK(x->w->log.synced);
    pthread_mutex_unlock(&x->w->log.lock);
    kt_informer_stats(x->w->inf, &st);
    CHECK_EQ_INT(st.objects, N_OBJ);
    check_converges(x, "initial list");
    churn(x, names, N_OBJ, 1);
    check_converges(x, "churn");
}

/* The data value of the stored ConfigMap name (or "" when absent). Caller frees. */
static char *stored_value(struct ctx *x, const char *name, const char *key)
{
    json_t *cm = kt_informer_get(x->w->inf, x->ns, name);
    char *v = kt_xstrdup(kt_json_str(json_object_get(cm, "data"), key, ""));

    json_decref(cm);
    return v;
}

static bool stored_equals(struct ctx *x, const char *name, const char *key, const char *want)
{
    char *v = stored_value(x, name, key);
    bool ok = strcmp(v, want) == 0;

    free(v);
    return ok;
}

/* Long strings are stored once and shared (informer.c's blobs): the same long value in two
 * objects, another one in a third, then one of the sharers changed, read back exactly. */
static void phase_long_strings(struct ctx *x, char **names)
{
    struct kt_buf a, b;
    double t0;

    /* churn round 1 left these selected with v=0: 3 and 8 untouched, 2 recreated */
    kt_buf_init(&a, 1 << 20);
    kt_buf_init(&b, 1 << 20);
    for (int i = 0; i < 200; i++) {
        if (kt_buf_printf(&a, NULL, "line %d: \"quoted\" \u00e9t\u00e9 \\ tab\t|", i) != 0 ||
            kt_buf_printf(&b, NULL, "other %d|", i) != 0) {
            test_failed++;
        }
    }
    patch_cm(x, names[3], "big", a.data, false);
    patch_cm(x, names[8], "big", a.data, false);
    patch_cm(x, names[2], "big", b.data, false);
    check_converges(x, "long strings");
    CHECK(stored_equals(x, names[3], "big", a.data));
    CHECK(stored_equals(x, names[8], "big", a.data));
    CHECK(stored_equals(x, names[2], "big", b.data));
    CHECK(stored_equals(x, names[3], "v", "0")); /* the short member next to it */
    patch_cm(x, names[3], "big", "short now", false);
    t0 = itest_now();
    while (!stored_equals(x, names[3], "big", "short now") && itest_now() - t0 < CONVERGE_S) {
        itest_nap_ms(20);
    }
    CHECK(stored_equals(x, names[3], "big", "short now"));
    CHECK(stored_equals(x, names[8], "big", a.data)); /* still held by the other sharer */
    kt_buf_release(&a);
    kt_buf_release(&b);
}

static void phase_min_request_timeout(struct ctx *x, char **names)
{
    struct kt_informer_stats before;
    struct kt_informer_stats st;
    struct kt_kube_list_opts o = {.resource_version = "0"};
    struct kt_err err = {0};
    double t0;

    kt_informer_stats(x->w->inf, &before);
    /* Also an API server restart under a live watch. */
    CHECK_EQ_INT(restart_apiserver(x, "--min-request-timeout=1"), 0);
    churn(x, names, N_OBJ, 2);
    check_converges(x, "restart with --min-request-timeout=1");
    t0 = itest_now();
    do {
        itest_nap_ms(100);
        kt_informer_stats(x->w->inf, &st);
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
    CHECK_OK(kt_kube_watch(
        x->c, &(struct kt_kube_watch_req){.gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .opts = &o},
        &err));
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
    kt_informer_stats(x->w->inf, &before);
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
        kt_kube_watch(x->c,
                      &(struct kt_kube_watch_req){
                          .gvr = &KT_GVR_CONFIGMAPS, .ns = x->ns, .opts = &o, .fn = stop_at_first},
                      &err),
        -1);
    CHECK_EQ_INT(err.code, KT_EGONE);
    fprintf(stderr, "watch from the compacted revision: %s\n", err.msg);
    json_decref(list);
    loop_start(x);
    check_converges(x, "relist after 410");
    kt_informer_stats(x->w->inf, &st);
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

static void watcher_init(struct watcher *w, struct kt_kube_config *cfg, const char *ns,
                         long watch_timeout_s)
{
    struct kt_informer_opts o = {.gvr = &KT_GVR_CONFIGMAPS,
                                 .ns = ns,
                                 .label_selector = "sel=yes",
                                 .page_size = 7,
                                 .watch_timeout_s = watch_timeout_s,
                                 .strip_managed_fields = true};
    struct kt_informer_handlers h = {on_add, on_update, on_delete, on_synced, &w->log};

    pthread_mutex_init(&w->log.lock, NULL);
    w->log.state = json_object();
    w->inf = kt_informer_new(&o, &h);
    w->loop = kt_informer_loop_new(cfg);
    kt_informer_loop_add(w->loop, w->inf);
}

static void watcher_release(struct watcher *w)
{
    kt_informer_loop_free(w->loop);
    kt_informer_free(w->inf);
    json_decref(w->log.state);
    pthread_mutex_destroy(&w->log.lock);
}

/* ---- a service-account token that expires mid-watch ------------------------------------- */

static char *b64url(const unsigned char *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = kt_xmalloc(n * 4 / 3 + 4);
    size_t i;
    size_t j = 0;

    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        out[j++] = tab[v >> 18];
        out[j++] = tab[(v >> 12) & 63];
        out[j++] = tab[(v >> 6) & 63];
        out[j++] = tab[v & 63];
    }
    if (n - i == 1) {
        out[j++] = tab[p[i] >> 2];
        out[j++] = tab[(p[i] & 3) << 4];
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 8 | p[i + 1];
        out[j++] = tab[v >> 10];
        out[j++] = tab[(v >> 4) & 63];
        out[j++] = tab[(v & 15) << 2];
    }
    out[j] = '\0';
    return out;
}

/* A service-account JWT (RS256, signed with the cluster's KT_SA_KEY via openssl) valid from
 * iat to exp (Unix seconds), written to path through a rename (a new inode, as kubelet's
 * projected volumes do). */
static int mint_token(struct ctx *x, const char *dir, const char *path, const char *uid, long iat,
                      long exp)
{
    const char *iss = itest_env_get(&x->env, "KT_APISERVER");
    const char *hdr = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
    char *claims = kt_xasprintf(
        "{\"iss\":\"%s\",\"aud\":[\"%s\"],\"sub\":\"system:serviceaccount:%s:kt-expiring\","
        "\"iat\":%ld,\"nbf\":%ld,\"exp\":%ld,\"kubernetes.io\":{\"namespace\":\"%s\","
        "\"serviceaccount\":{\"name\":\"kt-expiring\",\"uid\":\"%s\"}}}",
        iss, iss, x->ns, iat, iat, exp, x->ns, uid);
    char *h64 = b64url((const unsigned char *)hdr, strlen(hdr));
    char *c64 = b64url((const unsigned char *)claims, strlen(claims));
    char *input = kt_xasprintf("%s.%s", h64, c64);
    char *in_path = kt_xasprintf("%s/input", dir);
    char *sig_path = kt_xasprintf("%s/sig", dir);
    char *tmp_path = kt_xasprintf("%s/token.tmp", dir);
    struct kt_buf sig;
    struct kt_err err = {0};
    FILE *f;
    int rc = -1;

    kt_buf_init(&sig, 4096);
    f = fopen(in_path, "w");
    if (!f || fputs(input, f) < 0 || fclose(f) != 0 ||
        itest_sh("openssl dgst -sha256 -sign %s -binary -out %s %s",
                 itest_env_get(&x->env, "KT_SA_KEY"), sig_path, in_path) != 0 ||
        kt_buf_read_file(&sig, sig_path, &err) < 0) {
        goto out;
    }
    char *s64 = b64url((const unsigned char *)sig.data, sig.len);
    f = fopen(tmp_path, "w");
    if (f) {
        fprintf(f, "%s.%s\n", input, s64);
        rc = fclose(f) == 0 && rename(tmp_path, path) == 0 ? 0 : -1;
    }
    free(s64);
out:
    kt_buf_release(&sig);
    free(claims);
    free(h64);
    free(c64);
    free(input);
    free(in_path);
    free(sig_path);
    free(tmp_path);
    return rc;
}

/* ServiceAccount kt-expiring with a Role on ConfigMaps in the test namespace. Returns the
 * ServiceAccount's UID (caller frees) or NULL. */
static char *make_service_account(struct ctx *x)
{
    static const struct kt_kube_gvr sas = {"", "v1", "serviceaccounts"};
    static const struct kt_kube_gvr roles = {"rbac.authorization.k8s.io", "v1", "roles"};
    static const struct kt_kube_gvr bindings = {"rbac.authorization.k8s.io", "v1", "rolebindings"};
    struct kt_err err = {0};
    json_t *sa = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ServiceAccount",
                           "metadata", "name", "kt-expiring");
    json_t *role = json_pack("{s:s, s:s, s:{s:s}, s:[{s:[s], s:[s], s:[s,s,s]}]}", "apiVersion",
                             "rbac.authorization.k8s.io/v1", "kind", "Role", "metadata", "name",
                             "kt-expiring", "rules", "apiGroups", "", "resources", "configmaps",
                             "verbs", "get", "list", "watch");
    json_t *rb = json_pack("{s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s}], s:{s:s, s:s, s:s}}",
                           "apiVersion", "rbac.authorization.k8s.io/v1", "kind", "RoleBinding",
                           "metadata", "name", "kt-expiring", "subjects", "kind", "ServiceAccount",
                           "name", "kt-expiring", "namespace", x->ns, "roleRef", "apiGroup",
                           "rbac.authorization.k8s.io", "kind", "Role", "name", "kt-expiring");
    json_t *out = NULL;
    char *uid = NULL;

    if (kt_kube_create(x->c, &sas, x->ns, sa, &out, &err) == 0 &&
        kt_kube_create(x->c, &roles, x->ns, role, NULL, &err) == 0 &&
        kt_kube_create(x->c, &bindings, x->ns, rb, NULL, &err) == 0) {
        uid = kt_xstrdup(kt_json_str(json_object_get(out, "metadata"), "uid", ""));
    } else {
        fprintf(stderr, "service account setup: %s\n", err.msg);
    }
    json_decref(out);
    json_decref(sa);
    json_decref(role);
    json_decref(rb);
    return uid;
}

static struct kt_kube_config *token_config(struct ctx *x, const char *dir, const char *token)
{
    char *path = kt_xasprintf("%s/kubeconfig", dir);
    struct kt_err err = {0};
    struct kt_kube_config *cfg = NULL;
    FILE *f = fopen(path, "w");

    /* JSON is YAML: the kubeconfig loader reads it as such. */
    if (f) {
        fprintf(f,
                "{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"current-context\":\"t\","
                "\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"%s\","
                "\"certificate-authority\":\"%s\"}}],\"users\":[{\"name\":\"u\",\"user\":"
                "{\"tokenFile\":\"%s\"}}],\"contexts\":[{\"name\":\"t\",\"context\":"
                "{\"cluster\":\"c\",\"user\":\"u\"}}]}\n",
                itest_env_get(&x->env, "KT_APISERVER"), itest_env_get(&x->env, "KT_CA"), token);
        fclose(f);
        cfg = kt_kube_config_from_kubeconfig(path, NULL, &err);
    }
    if (!cfg) {
        fprintf(stderr, "token kubeconfig: %s\n", err.msg);
    } else {
        kt_kube_config_set_timeouts(cfg, 10000, 2000);
    }
    free(path);
    return cfg;
}

/* Poll a LIST with the token until it is refused with 401 (bounded). */
static bool wait_unauthorized(struct kt_kube_client *c, const char *ns)
{
    double t0 = itest_now();

    while (itest_now() - t0 < 120) {
        struct kt_err err = {0};
        json_t *list = NULL;
        if (kt_kube_list(c, &KT_GVR_CONFIGMAPS, ns, NULL, &list, &err) < 0 &&
            kt_kube_client_last_status(c)->code == 401) {
            fprintf(stderr, "token refused after %.1fs: %s\n", itest_now() - t0, err.msg);
            return err.code == KT_EFORBIDDEN;
        }
        json_decref(list);
        itest_nap_ms(250);
    }
    return false;
}

/* The in-cluster config over a service-account directory (token, ca.crt, namespace) and the
 * KUBERNETES_SERVICE_* variables, as a pod would see them. */
static void check_in_cluster(struct ctx *x, const char *dir)
{
    const char *api = itest_env_get(&x->env, "KT_APISERVER");
    struct kt_err err = {0};
    struct kt_kube_config *cfg;
    struct kt_kube_client *c;
    json_t *list = NULL;

    CHECK_EQ_INT(itest_sh("cp %s %s/ca.crt && printf '%%s\\n' %s > %s/namespace",
                          itest_env_get(&x->env, "KT_CA"), dir, x->ns, dir),
                 0);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", strrchr(api, ':') + 1, 1);
    cfg = kt_kube_config_in_cluster(dir, &err);
    CHECK(cfg != NULL);
    if (!cfg) {
        fprintf(stderr, "in-cluster: %s\n", err.msg);
        return;
    }
    CHECK_EQ_STR(kt_kube_config_server(cfg), api);
    CHECK_EQ_STR(kt_kube_config_namespace(cfg), x->ns);
    c = kt_kube_client_new(cfg);
    CHECK_OK(kt_kube_list(c, &KT_GVR_CONFIGMAPS, kt_kube_config_namespace(cfg), NULL, &list, &err));
    CHECK(json_array_size(json_object_get(list, "items")) > 0);
    /* The Role grants reads only. */
    CHECK_EQ_INT(kt_kube_delete(c, &KT_GVR_CONFIGMAPS, x->ns, "cm-000", NULL, &err), -1);
    CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
    json_decref(list);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

static void phase_token_expiry(struct ctx *x, char **names)
{
    char dir[] = "/tmp/kt-itest-token-XXXXXX";
    struct watcher tw = {0};
    struct kt_informer_stats before;
    struct kt_informer_stats st;
    struct kt_kube_config *cfg = NULL;
    struct kt_kube_client *c = NULL;
    char *token = NULL;
    char *uid = make_service_account(x);
    long now = (long)time(NULL);
    double t0;

    CHECK(uid != NULL && mkdtemp(dir) != NULL);
    if (!uid) {
        return;
    }
    token = kt_xasprintf("%s/token", dir);
    /* Expired 55 s ago: still inside the API server's 60 s clock-skew leeway, so it works for
     * a few seconds more (plus the API server's 10 s token cache) and then stops working. */
    CHECK_OK(mint_token(x, dir, token, uid, now - 120, now - 55));
    cfg = token_config(x, dir, token);
    CHECK(cfg != NULL);
    if (!cfg) {
        goto out;
    }
    c = kt_kube_client_new(cfg);
    watcher_init(&tw, cfg, x->ns, 1);
    x->w = &tw;
    loop_start(x);
    check_converges(x, "token informer synced");
    CHECK(wait_unauthorized(c, x->ns));
    kt_informer_stats(tw.inf, &before);
    t0 = itest_now();
    do {
        itest_nap_ms(100);
        kt_informer_stats(tw.inf, &st);
    } while (st.failures == before.failures && itest_now() - t0 < 30);
    CHECK(st.failures > before.failures);
    churn(x, names, N_OBJ, 7);
    /* Rotate: a fresh token in the same file; the client notices the new file. */
    now = (long)time(NULL);
    CHECK_OK(mint_token(x, dir, token, uid, now - 1, now + 600));
    check_converges(x, "informer after the token rotated");
    check_in_cluster(x, dir);
    loop_stop(x);
    watcher_release(&tw);
    x->w = &x->main_w;
out:
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
    itest_sh("rm -rf %s", dir);
    free(token);
    free(uid);
}

/* ---- 429 Too Many Requests with Retry-After --------------------------------------------- */

/* Start curl reading a ~37 MB LIST at 20 kB/s as admin: it holds the API server's only
 * read-only in-flight slot (--max-requests-inflight=1) until killed. Returns its PID. */
static pid_t start_slow_reader(struct ctx *x, const char *big_ns)
{
    char *url = kt_xasprintf("%s/api/v1/namespaces/%s/configmaps",
                             itest_env_get(&x->env, "KT_APISERVER"), big_ns);
    char *cert = kt_xasprintf("%s/admin.crt", x->dir);
    char *key = kt_xasprintf("%s/admin.key", x->dir);
    pid_t pid = fork();

    if (pid == 0) {
        execlp("curl", "curl", "-s", "-o", "/dev/null", "--limit-rate", "20k", "--cacert",
               itest_env_get(&x->env, "KT_CA"), "--cert", cert, "--key", key, url, (char *)NULL);
        _exit(127);
    }
    free(url);
    free(cert);
    free(key);
    return pid;
}

static void stop_slow_reader(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
}

struct getter {
    struct kt_kube_client *c;
    const char *ns;
    int rc;
    struct kt_err err;
};

static void *getter_main(void *arg)
{
    struct getter *g = arg;
    json_t *o = NULL;

    g->rc = kt_kube_get(g->c, &KT_GVR_CONFIGMAPS, g->ns, "big-0", &o, &g->err);
    json_decref(o);
    return NULL;
}

/* Fill a namespace with 40 ConfigMaps of ~930 kB: a 37 MB LIST, more than the largest socket
 * buffers this kernel may autotune to (tcp_rmem max 32 MiB + tcp_wmem max 4 MiB), so the slow
 * reader's LIST can never be written out and release its in-flight slot early. */
static char *make_big_namespace(struct ctx *x)
{
    char *ns = itest_namespace(x->c, "kt-big");
    char *blob = kt_xmalloc(930001);
    struct kt_err err = {0};
    int i;

    memset(blob, 'x', 930000);
    blob[930000] = '\0';
    for (i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof(name), "big-%d", i);
        json_t *cm = itest_configmap(name, "d", blob);
        if (kt_kube_create(x->c, &KT_GVR_CONFIGMAPS, ns, cm, NULL, &err) < 0) {
            fprintf(stderr, "big: %s\n", err.msg);
            test_failed++;
        }
        json_decref(cm);
    }
    free(blob);
    return ns;
}

/* Start the slow reader until it holds the only read slot: the first 429 arrives. It may not
 * get the slot: a system:masters request that finds the slot taken (by the API server's own
 * loopback clients, an informer relisting after the restart, or our probe) is served beside
 * the limit and holds nothing, so a reader that sees no 429 within 5 s is replaced. */
static pid_t hold_read_slot(struct ctx *x, struct kt_kube_client *c, const char *big,
                            struct kt_err *err)
{
    double t0 = itest_now();
    json_t *o = NULL;

    for (int attempt = 1; itest_now() - t0 < 60; attempt++) {
        pid_t slow = start_slow_reader(x, big);
        double t1 = itest_now();
        do {
            itest_nap_ms(50);
            if (kt_kube_get(c, &KT_GVR_CONFIGMAPS, big, "big-0", &o, err) == 0) {
                json_decref(o);
                o = NULL;
            }
        } while (kt_kube_client_last_status(c)->code != 429 && itest_now() - t1 < 5);
        if (kt_kube_client_last_status(c)->code == 429) {
            fprintf(stderr, "slow reader %d holds the read slot\n", attempt);
            return slow;
        }
        stop_slow_reader(slow);
    }
    return -1;
}

static void phase_too_many_requests(struct ctx *x)
{
    struct kt_kube_config *cfg = itest_config(&x->env, "KT_WEBHOOK_KUBECONFIG");
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    char *big = make_big_namespace(x);
    struct getter g = {.c = c, .ns = big};
    struct kt_err err = {0};
    pthread_t t;
    pid_t slow;
    double t0;

    /* system:masters (the admin) is served even when the slot is full; the webhook identity
     * is not, and 429 comes before authorization (its 403 would come after). */
    CHECK_EQ_INT(
        restart_apiserver(x, "--max-requests-inflight=1 --max-mutating-requests-inflight=1"), 0);
    slow = hold_read_slot(x, c, big, &err);
    /* Still busy after every retry: a clear 429 error (its body is plain text, no Status). */
    CHECK_EQ_INT(kt_kube_client_last_status(c)->code, 429);
    CHECK_EQ_INT(err.code, KT_EHTTP);
    CHECK_CONTAINS(err.msg, "HTTP 429");
    CHECK(kt_kube_client_retries(c) >= 2);
    fprintf(stderr, "429 after %lu retries: %s\n", kt_kube_client_retries(c), err.msg);
    /* Freed during the Retry-After pause: the retry gets through (to RBAC, which says 403). */
    unsigned long before = kt_kube_client_retries(c);
    pthread_create(&t, NULL, getter_main, &g);
    t0 = itest_now();
    while (kt_kube_client_retries(c) == before && itest_now() - t0 < 30) {
        itest_nap_ms(10);
    }
    stop_slow_reader(slow);
    pthread_join(t, NULL);
    CHECK(kt_kube_client_retries(c) > before);
    CHECK_EQ_INT(g.rc, -1);
    CHECK_EQ_INT(g.err.code, KT_EFORBIDDEN);
    CHECK_EQ_INT(kt_kube_client_last_status(c)->code, 403);
    fprintf(stderr, "after the slot freed: %s\n", g.err.msg);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
    free(big);
}

/* A second informer on the same loop thread: cluster scope, field selector, no handlers. */
static void check_second_informer(struct kt_informer *inf, const char *ns)
{
    struct kt_informer_stats st;
    double t0 = itest_now();
    json_t *o;

    while (!kt_informer_synced(inf) && itest_now() - t0 < CONVERGE_S) {
        itest_nap_ms(10);
    }
    kt_informer_stats(inf, &st);
    CHECK_EQ_INT(st.objects, 1);
    o = kt_informer_get(inf, NULL, ns);
    CHECK(o != NULL);
    CHECK_EQ_STR(kt_json_str(json_object_get(o, "metadata"), "name", ""), ns);
    json_decref(o);
    CHECK(kt_informer_get(inf, NULL, "kube-system") == NULL);
    CHECK(kt_informer_get(inf, "x", ns) == NULL);
    /* kt_informer_rv: the stored revision without a parse; none for what is not stored */
    char rv[64] = "untouched";
    o = kt_informer_get(inf, NULL, ns);
    CHECK(kt_informer_rv(inf, NULL, ns, rv, sizeof(rv)));
    CHECK_EQ_STR(rv, kt_json_str(json_object_get(o, "metadata"), "resourceVersion", "-"));
    json_decref(o);
    snprintf(rv, sizeof(rv), "untouched");
    CHECK(!kt_informer_rv(inf, NULL, "kube-system", rv, sizeof(rv)));
    CHECK(!kt_informer_rv(inf, "x", ns, rv, sizeof(rv)));
    CHECK_EQ_STR(rv, "untouched");
}

int main(int argc, char **argv)
{
    struct ctx x = {0};
    char *names[N_OBJ] = {0};
    struct kt_informer_opts ns_opts = {.gvr = &KT_GVR_NAMESPACES};
    struct kt_informer *ns_inf;
    char *field;
    size_t i;

    kt_mem_init();
    if (argc != 2 || itest_env_load(&x.env, argv[1]) < 0) {
        fprintf(stderr, "usage: %s ENV_FILE\n", argv[0]);
        return 2;
    }
    x.dir = itest_env_get(&x.env, "KT_CLUSTER_DIR");
    x.scripts = scripts_dir(argv[0]);
    x.cfg = itest_config(&x.env, "KT_ADMIN_KUBECONFIG");
    /* Fail fast while the API server restarts instead of waiting 30 s per request. */
    kt_kube_config_set_timeouts(x.cfg, 10000, 2000);
    x.c = kt_kube_client_new(x.cfg);
    x.ns = itest_namespace(x.c, "kt-inf");
    x.w = &x.main_w;
    watcher_init(x.w, x.cfg, x.ns, -1);
    ns_opts.field_selector = field = kt_xasprintf("metadata.name=%s", x.ns);
    ns_inf = kt_informer_new(&ns_opts, NULL);
    kt_informer_loop_add(x.w->loop, ns_inf);
    phase_baseline(&x, names);
    phase_long_strings(&x, names);
    check_second_informer(ns_inf, x.ns);
    phase_min_request_timeout(&x, names);
    phase_compaction(&x, names);
    loop_stop(&x);
    phase_too_many_requests(&x);
    CHECK_EQ_INT(restart_apiserver(&x, ""), 0);
    phase_token_expiry(&x, names);
    watcher_release(&x.main_w);
    kt_informer_free(ns_inf);
    free(field);
    for (i = 0; i < N_OBJ; i++) {
        free(names[i]);
    }
    kt_kube_client_free(x.c);
    kt_kube_config_free(x.cfg);
    free(x.ns);
    free(x.scripts);
    itest_env_release(&x.env);
    return test_report();
}
