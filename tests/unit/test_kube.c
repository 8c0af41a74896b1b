/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_kube.c - the kube client's pure parts: kubeconfig and in-cluster config,
 * Status decoding, watch-line decoding, line splitting, the rate limiter, paths and queries,
 * the merged cut rule lists.
 * No network: nothing here opens a connection. */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/buf.h"
#include "common/kube/kube.h"
#include "common/kube/kube_internal.h"
#include "common/base/mem.h"

/* base64 of "-----BEGIN CERTIFICATE-----\nAAAA\n" (content is not checked at load time). */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEK"

static const char kubeconfig_data[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: admin\n"
    "clusters:\n"
    "- name: local\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: " CA_B64 "\n"
    "- name: other\n"
    "  cluster:\n"
    "    server: https://10.0.0.1:443\n"
    "    certificate-authority: certs/ca.crt\n"
    "- name: insecure\n"
    "  cluster:\n"
    "    server: https://10.0.0.2\n"
    "    insecure-skip-tls-verify: true\n"
    "- name: plain\n"
    "  cluster:\n"
    "    server: http://10.0.0.3\n"
    "contexts:\n"
    "- name: admin\n"
    "  context: {cluster: local, user: admin, namespace: team-a}\n"
    "- name: tok\n"
    "  context: {cluster: other, user: tok}\n"
    "- name: tokfile\n"
    "  context: {cluster: other, user: tokfile}\n"
    "- name: bad-insecure\n"
    "  context: {cluster: insecure, user: tok}\n"
    "- name: bad-plain\n"
    "  context: {cluster: plain, user: tok}\n"
    "- name: bad-exec\n"
    "  context: {cluster: other, user: exec}\n"
    "- name: bad-halfcert\n"
    "  context: {cluster: other, user: halfcert}\n"
    "- name: bad-cluster\n"
    "  context: {cluster: nowhere, user: tok}\n"
    "- name: bad-b64\n"
    "  context: {cluster: other, user: badb64}\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: " CA_B64 "\n"
    "    client-key-data: " CA_B64 "\n"
    "- name: tok\n"
    "  user: {token: s3cr3t}\n"
    "- name: tokfile\n"
    "  user: {tokenFile: /run/tok}\n"
    "- name: exec\n"
    "  user: {exec: {command: aws}}\n"
    "- name: halfcert\n"
    "  user: {client-certificate: /a.crt}\n"
    "- name: badb64\n"
    "  user: {client-certificate-data: '!!!', client-key-data: " CA_B64 "}\n";

static struct kt_kube_config *parse_ctx(const char *ctx, struct kt_err *err)
{
    return kt_kube_config_parse_kubeconfig(kubeconfig_data, sizeof(kubeconfig_data) - 1, ctx,
                                           "/etc/kube", err);
}

static void test_kubeconfig_data_files(void)
{
    struct kt_err err = {0};
    struct kt_kube_config *cfg = parse_ctx(NULL, &err);
    struct stat st;
    struct kt_buf b;
    char *ca;

    CHECK(cfg != NULL);
    if (!cfg) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    CHECK_EQ_STR(kt_kube_config_server(cfg), "https://127.0.0.1:6443");
    CHECK_EQ_STR(kt_kube_config_namespace(cfg), "team-a");
    CHECK(cfg->ca_file && cfg->cert_file && cfg->key_file);
    CHECK_EQ_INT(cfg->n_data_fds, 3);
    /* Nothing under a name in the file system: only the open descriptor. */
    CHECK(strncmp(cfg->ca_file, "/proc/self/fd/", 14) == 0);
    CHECK_OK(stat(cfg->ca_file, &st));
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    CHECK_EQ_INT(st.st_nlink, 0);
    kt_buf_init(&b, 4096);
    CHECK_OK(kt_buf_read_file(&b, cfg->ca_file, &err));
    CHECK_EQ_STR(b.data, "-----BEGIN CERTIFICATE-----\nAAAA\n");
    kt_buf_release(&b);
    CHECK(cfg->token == NULL && cfg->token_file == NULL);
    ca = kt_xstrdup(cfg->ca_file);
    kt_kube_config_free(cfg);
    CHECK(access(ca, F_OK) != 0); /* removed with the config */
    free(ca);
}

static void test_kubeconfig_token_and_paths(void)
{
    struct kt_err err = {0};
    struct kt_kube_config *cfg = parse_ctx("tok", &err);

    CHECK(cfg != NULL);
    if (cfg) {
        CHECK_EQ_STR(cfg->ca_file, "/etc/kube/certs/ca.crt");
        CHECK_EQ_STR(cfg->token, "s3cr3t");
        CHECK_EQ_STR(kt_kube_config_namespace(cfg), "");
        CHECK_EQ_INT(cfg->n_data_fds, 0);
        char *h = kt__kube_auth_header(cfg, false);
        CHECK_EQ_STR(h, "Authorization: Bearer s3cr3t");
        free(h);
    }
    kt_kube_config_free(cfg);
    cfg = parse_ctx("tokfile", &err);
    CHECK(cfg != NULL);
    if (cfg) {
        CHECK_EQ_STR(cfg->token_file, "/run/tok");
    }
    kt_kube_config_free(cfg);
}

static void expect_fail(const char *ctx, enum kt_code code, const char *needle)
{
    struct kt_err err = {0};
    struct kt_kube_config *cfg = parse_ctx(ctx, &err);

    CHECK(cfg == NULL);
    CHECK_EQ_INT(err.code, code);
    CHECK_CONTAINS(err.msg, needle);
    kt_kube_config_free(cfg);
}

static void test_kubeconfig_errors(void)
{
    struct kt_err err = {0};
    struct kt_kube_config *cfg;

    expect_fail("nope", KT_ENOENT, "context \"nope\" not found");
    expect_fail("bad-insecure", KT_EUNSUPPORTED, "insecure-skip-tls-verify");
    expect_fail("bad-plain", KT_EINVAL, "https://");
    expect_fail("bad-exec", KT_EUNSUPPORTED, "exec");
    expect_fail("bad-halfcert", KT_EINVAL, "together");
    expect_fail("bad-cluster", KT_ENOENT, "cluster \"nowhere\"");
    expect_fail("bad-b64", KT_EPARSE, "base64");
    cfg = kt_kube_config_parse_kubeconfig("[1, 2", 5, NULL, NULL, &err);
    CHECK(cfg == NULL);
    cfg = kt_kube_config_parse_kubeconfig("- a\n", 4, NULL, NULL, &err);
    CHECK(cfg == NULL);
    CHECK_CONTAINS(err.msg, "not a mapping");
    cfg = kt_kube_config_parse_kubeconfig("kind: Config\n", 13, NULL, NULL, &err);
    CHECK(cfg == NULL);
    CHECK_CONTAINS(err.msg, "current-context");
    cfg = kt_kube_config_from_kubeconfig("/nonexistent/kubeconfig", NULL, &err);
    CHECK(cfg == NULL);
    CHECK_EQ_INT(err.code, KT_EIO);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_in_cluster_token_rotation(void)
{
    char dir[] = "/tmp/kt-test-sa-XXXXXX";
    struct kt_err err = {0};
    struct kt_kube_config *cfg;
    char *tok;
    char *ns;
    char *h;

    CHECK(mkdtemp(dir) != NULL);
    tok = kt_xasprintf("%s/token", dir);
    ns = kt_xasprintf("%s/namespace", dir);
    unsetenv("KUBERNETES_SERVICE_HOST");
    cfg = kt_kube_config_in_cluster(dir, &err);
    CHECK(cfg == NULL);
    CHECK_CONTAINS(err.msg, "KUBERNETES_SERVICE_HOST");
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cfg = kt_kube_config_in_cluster(dir, &err);
    CHECK(cfg == NULL); /* no token file yet */
    CHECK_EQ_INT(err.code, KT_EIO);
    write_file(tok, "first\n");
    write_file(ns, "kubeflow-system\n");
    cfg = kt_kube_config_in_cluster(dir, &err);
    CHECK(cfg != NULL);
    if (cfg) {
        CHECK_EQ_STR(kt_kube_config_server(cfg), "https://[fd00::1]:443");
        CHECK_EQ_STR(kt_kube_config_namespace(cfg), "kubeflow-system");
        h = kt__kube_auth_header(cfg, false);
        CHECK_EQ_STR(h, "Authorization: Bearer first");
        free(h);
        /* A rotated token (new inode, as kubelet's atomic writer does) is picked up. */
        unlink(tok);
        write_file(tok, "second-token\n");
        h = kt__kube_auth_header(cfg, false);
        CHECK_EQ_STR(h, "Authorization: Bearer second-token");
        free(h);
        /* A vanished file keeps the last token rather than failing. */
        unlink(tok);
        h = kt__kube_auth_header(cfg, true);
        CHECK_EQ_STR(h, "Authorization: Bearer second-token");
        free(h);
    }
    kt_kube_config_free(cfg);
    unlink(ns);
    rmdir(dir);
    free(tok);
    free(ns);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

static void test_status_decode(void)
{
    static const char body[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
        "\"message\":\"configmaps \\\"x\\\" is forbidden: User \\\"bob\\\" cannot get\","
        "\"reason\":\"Forbidden\",\"details\":{\"name\":\"x\",\"kind\":\"configmaps\"},"
        "\"code\":403}";
    static const char tmr[] = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429,"
                              "\"details\":{\"retryAfterSeconds\":3}}";
    struct kt_kube_status st;
    struct kt_err err = {0};

    CHECK_OK(kt_kube_status_decode(403, body, sizeof(body) - 1, &st, &err));
    CHECK_EQ_INT(st.code, 403);
    CHECK_EQ_STR(st.reason, "Forbidden");
    CHECK_CONTAINS(st.message, "User \"bob\" cannot get");
    CHECK_EQ_INT(kt_kube_status_err(&st, &err), -1);
    CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
    CHECK_CONTAINS(err.msg, "HTTP 403 Forbidden: configmaps \"x\" is forbidden");

    CHECK_OK(kt_kube_status_decode(429, tmr, sizeof(tmr) - 1, &st, &err));
    CHECK_EQ_INT(st.retry_after_s, 3);
    /* Not a Status: the HTTP code stands, the body's start becomes the message. */
    CHECK_EQ_INT(kt_kube_status_decode(502, "bad\ngateway", 11, &st, &err), -1);
    CHECK_EQ_INT(st.code, 502);
    CHECK_EQ_STR(st.message, "bad gateway");
    CHECK_EQ_INT(kt_kube_status_decode(500, NULL, 0, &st, &err), -1);
    CHECK_EQ_STR(st.reason, "");
    CHECK_EQ_INT(kt_kube_status_decode(404, "{\"kind\":\"Pod\"}", 14, &st, &err), -1);
    /* A Status with an absurd code keeps the HTTP one. */
    CHECK_OK(kt_kube_status_decode(409, "{\"kind\":\"Status\",\"code\":123456}", 31, &st, &err));
    CHECK_EQ_INT(st.code, 409);

    CHECK_EQ_INT(kt_kube_code_of(404), KT_ENOENT);
    CHECK_EQ_INT(kt_kube_code_of(409), KT_ECONFLICT);
    CHECK_EQ_INT(kt_kube_code_of(410), KT_EGONE);
    CHECK_EQ_INT(kt_kube_code_of(422), KT_EINVAL);
    CHECK_EQ_INT(kt_kube_code_of(401), KT_EFORBIDDEN);
    CHECK_EQ_INT(kt_kube_code_of(504), KT_ETIMEOUT);
    CHECK_EQ_INT(kt_kube_code_of(500), KT_EHTTP);
}

static void test_watch_decode(void)
{
    static const char added[] = "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\","
                                "\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"42\"}}}";
    static const char gone[] =
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
        "\"status\":\"Failure\",\"message\":\"too old resource version: 5 (90)\","
        "\"reason\":\"Expired\",\"code\":410}}";
    static const char bookmark[] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\","
                                   "\"metadata\":{\"resourceVersion\":\"77\"}}}";
    struct kt_kube_watch_event ev;
    struct kt_err err = {0};

    CHECK_OK(kt_kube_watch_decode_line(added, sizeof(added) - 1, &ev, &err));
    CHECK_EQ_INT(ev.type, KT_WATCH_ADDED);
    CHECK_EQ_STR(ev.rv, "42");
    CHECK_EQ_STR(json_string_value(json_object_get(ev.object, "kind")), "ConfigMap");
    kt_kube_watch_event_release(&ev);
    CHECK(ev.object == NULL);

    CHECK_OK(kt_kube_watch_decode_line(gone, sizeof(gone) - 1, &ev, &err));
    CHECK_EQ_INT(ev.type, KT_WATCH_ERROR);
    CHECK_EQ_INT(ev.status.code, 410);
    CHECK_EQ_STR(ev.status.reason, "Expired");
    CHECK_EQ_INT(kt_kube_status_err(&ev.status, &err), -1);
    CHECK_EQ_INT(err.code, KT_EGONE);
    kt_kube_watch_event_release(&ev);

    CHECK_OK(kt_kube_watch_decode_line(bookmark, sizeof(bookmark) - 1, &ev, &err));
    CHECK_EQ_INT(ev.type, KT_WATCH_BOOKMARK);
    CHECK_EQ_STR(ev.rv, "77");
    kt_kube_watch_event_release(&ev);

    CHECK_EQ_INT(kt_kube_watch_decode_line("{\"type\":", 8, &ev, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK(ev.object == NULL);
    CHECK_EQ_INT(kt_kube_watch_decode_line("{\"type\":\"RENAMED\",\"object\":{}}", 30, &ev, &err),
                 -1);
    CHECK_CONTAINS(err.msg, "unknown watch event type");
    CHECK_EQ_INT(kt_kube_watch_decode_line("{\"type\":\"ADDED\"}", 16, &ev, &err), -1);
    CHECK_CONTAINS(err.msg, "without an object");
    CHECK_EQ_INT(kt_kube_watch_decode_line("[1]", 3, &ev, &err), -1);
    CHECK_EQ_INT(kt_kube_watch_decode_line("{\"type\":7,\"object\":{}}", 22, &ev, &err), -1);
}

struct line_log {
    struct kt_buf all;
    int count;
    int stop_after;
};

static int log_line(void *ud, const char *line, size_t len)
{
    struct line_log *l = ud;

    l->count++;
    if (kt_buf_append(&l->all, line, len, NULL) < 0 || kt_buf_puts(&l->all, "|", NULL) < 0) {
        return -1;
    }
    return l->stop_after && l->count >= l->stop_after ? 7 : 0;
}

static void test_lines(void)
{
    struct kt_kube_lines lines;
    struct line_log log = {.count = 0};
    struct kt_err err = {0};

    kt_buf_init(&log.all, 1024);
    kt_kube_lines_init(&lines, 8);
    CHECK_OK(kt_kube_lines_feed(&lines, "ab", 2, log_line, &log, &err));
    CHECK_OK(kt_kube_lines_feed(&lines, "c\n\n \r\nde", 8, log_line, &log, &err));
    CHECK_OK(kt_kube_lines_feed(&lines, "f\n", 2, log_line, &log, &err));
    CHECK_EQ_STR(log.all.data, "abc|def|");
    CHECK_EQ_INT(log.count, 2);
    /* A line past the cap fails, and the stream stays failed. */
    CHECK_EQ_INT(kt_kube_lines_feed(&lines, "123456789", 9, log_line, &log, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK_EQ_INT(kt_kube_lines_feed(&lines, "\n", 1, log_line, &log, &err), -1);
    kt_kube_lines_release(&lines);

    /* Whole lines in one chunk are passed in place (no copy): the same lines, and the cap
     * holds for them too (8 bytes fit, 9 do not). */
    kt_kube_lines_init(&lines, 8);
    kt_buf_reset(&log.all);
    log.count = 0;
    CHECK_OK(kt_kube_lines_feed(&lines, "g\n12345678\n\t\nh", 14, log_line, &log, &err));
    CHECK_OK(kt_kube_lines_feed(&lines, "i\nj\n", 4, log_line, &log, &err));
    CHECK_EQ_STR(log.all.data, "g|12345678|hi|j|");
    CHECK_EQ_INT(log.count, 4);
    CHECK_EQ_INT(kt_kube_lines_feed(&lines, "k\n123456789\n", 12, log_line, &log, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK_EQ_INT(log.count, 5);
    kt_kube_lines_release(&lines);

    /* The callback's non-zero value stops the feed and is returned. */
    kt_kube_lines_init(&lines, 64);
    log.count = 0;
    log.stop_after = 1;
    CHECK_EQ_INT(kt_kube_lines_feed(&lines, "x\ny\n", 4, log_line, &log, &err), 7);
    CHECK_EQ_INT(log.count, 1);
    kt_kube_lines_release(&lines);
    kt_buf_release(&log.all);
}

static void test_ratelimit(void)
{
    struct kt_kube_ratelimit rl;
    int i;
    double w;

    kt_kube_ratelimit_init(&rl, 10, 3, 100.0);
    for (i = 0; i < 3; i++) {
        CHECK(kt_kube_ratelimit_reserve(&rl, 100.0) == 0);
    }
    w = kt_kube_ratelimit_reserve(&rl, 100.0);
    CHECK(w > 0.099 && w < 0.101);
    w = kt_kube_ratelimit_reserve(&rl, 100.0);
    CHECK(w > 0.199 && w < 0.201); /* queued behind the previous reservation */
    /* After a long idle period the bucket refills only up to burst. */
    for (i = 0; i < 3; i++) {
        CHECK(kt_kube_ratelimit_reserve(&rl, 200.0) == 0);
    }
    CHECK(kt_kube_ratelimit_reserve(&rl, 200.0) > 0);
    /* qps <= 0 means unlimited. */
    kt_kube_ratelimit_init(&rl, 0, 1, 0);
    w = 0;
    for (i = 0; i < 1000; i++) {
        w += kt_kube_ratelimit_reserve(&rl, 0);
    }
    CHECK(w == 0);
}

static void check_path(const struct kt_kube_gvr *gvr, const char *ns, const char *name,
                       const char *sub, const char *want)
{
    struct kt_buf b;
    struct kt_err err = {0};

    kt_buf_init(&b, 1024);
    CHECK_OK(kt_kube_path(&b, gvr, ns, name, sub, &err));
    CHECK_EQ_STR(b.data, want);
    kt_buf_release(&b);
}

static void check_bad_path(const char *ns, const char *name, const char *sub)
{
    struct kt_buf b;
    struct kt_err err = {0};

    kt_buf_init(&b, 1024);
    CHECK_EQ_INT(kt_kube_path(&b, &KT_GVR_CONFIGMAPS, ns, name, sub, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    kt_buf_release(&b);
}

static void test_paths_and_queries(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_kube_list_opts o = {.label_selector = "app in (a,b),!x",
                                  .field_selector = "metadata.name=n",
                                  .resource_version = "12",
                                  .limit = 50,
                                  .timeout_seconds = 30,
                                  .allow_bookmarks = true};

    check_path(&KT_GVR_CONFIGMAPS, "ns1", NULL, NULL, "/api/v1/namespaces/ns1/configmaps");
    check_path(&KT_GVR_CONFIGMAPS, NULL, NULL, NULL, "/api/v1/configmaps");
    check_path(&KT_GVR_TRAINJOBS, "d", "tj", "status",
               "/apis/trainer.kubeflow.org/v1alpha1/namespaces/d/trainjobs/tj/status");
    check_path(&KT_GVR_CLUSTERTRAININGRUNTIMES, "", "torch", NULL,
               "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch");
    check_path(&KT_GVR_LEASES, "kube-system", "l", NULL,
               "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
    check_bad_path("ns", "a/b", NULL);
    check_bad_path("ns", "..", NULL);
    check_bad_path("ns", "", NULL);
    check_bad_path("n?s", "a", NULL);
    check_bad_path("ns", "a%2F", NULL);
    check_bad_path("ns", NULL, "status");

    kt_buf_init(&b, 1024);
    CHECK_OK(kt__kube_list_query(&b, &o, "tok/+=", KT__KUBE_QUERY_LIST, &err));
    CHECK_EQ_STR(b.data, "?labelSelector=app%20in%20%28a%2Cb%29%2C%21x"
                         "&fieldSelector=metadata.name%3Dn&resourceVersion=12"
                         "&continue=tok%2F%2B%3D&limit=50");
    kt_buf_reset(&b);
    CHECK_OK(kt__kube_list_query(&b, &o, NULL, KT__KUBE_QUERY_WATCH, &err));
    CHECK_CONTAINS(b.data, "&resourceVersion=12&watch=true&allowWatchBookmarks=true"
                           "&timeoutSeconds=30");
    CHECK(strstr(b.data, "limit=") == NULL);
    kt_buf_reset(&b);
    CHECK_OK(kt__kube_list_query(&b, NULL, NULL, KT__KUBE_QUERY_WATCH, &err));
    CHECK_EQ_STR(b.data, "?watch=true");
    kt_buf_reset(&b);
    CHECK_OK(kt__kube_list_query(&b, NULL, NULL, KT__KUBE_QUERY_LIST, &err));
    CHECK(b.data == NULL || b.len == 0);
    kt_buf_release(&b);
}

static void test_retry_policy(void)
{
    bool reread = false;
    long wait = -1;

    CHECK(kt__kube_should_retry(429, 2, 0, &reread, &wait));
    CHECK_EQ_INT(wait, 2);
    CHECK(kt__kube_should_retry(429, -1, 1, &reread, &wait));
    CHECK_EQ_INT(wait, 1);                                    /* no Retry-After: one second */
    CHECK(!kt__kube_should_retry(429, 1, 2, &reread, &wait)); /* bounded: 3 attempts */
    CHECK(kt__kube_should_retry(503, 3, 0, &reread, &wait));
    CHECK(!kt__kube_should_retry(503, -1, 0, &reread, &wait)); /* 5xx only with Retry-After */
    CHECK(!kt__kube_should_retry(500, -1, 0, &reread, &wait));
    CHECK(!kt__kube_should_retry(409, -1, 0, &reread, &wait));
    CHECK(!kt__kube_should_retry(404, 5, 0, &reread, &wait));
    CHECK(!reread);
    CHECK(kt__kube_should_retry(401, -1, 0, &reread, &wait));
    CHECK(reread);
    CHECK_EQ_INT(wait, 0);
    CHECK(!kt__kube_should_retry(401, -1, 1, &reread, &wait)); /* only once */
}

static void test_time(void)
{
    char t[40];

    kt_kube_time_now(t, KT_KUBE_TIME_SECONDS);
    CHECK_EQ_INT(strlen(t), 20);
    CHECK(t[10] == 'T' && t[19] == 'Z');
    kt_kube_time_now(t, KT_KUBE_TIME_MICRO);
    CHECK_EQ_INT(strlen(t), 27);
    CHECK(t[19] == '.' && t[26] == 'Z');
}

/* The merged rule list: the config's managedFields rule first (when it drops them), then the
 * caller's, ended at {NULL, NULL}, at most KT_JSON_CUT_RULES_MAX rules; NULL when none. */
static void test_cut_rules(void)
{
    static const struct kt_json_cut_rule js[] = {{"spec", "replicatedJobs"}, KT_JSON_CUT_END};
    static const struct kt_json_cut_rule none[] = {KT_JSON_CUT_END};
    struct kt_json_cut_rule room[KT__KUBE_CUT_ROOM], many[KT__KUBE_CUT_ROOM + 1];
    const struct kt_json_cut_rule *r;
    struct kt_err err = {0};
    struct kt_kube_config *cfg = parse_ctx("tok", &err);

    CHECK(cfg != NULL);
    if (!cfg) {
        return;
    }
    /* Negative: nothing dropped, nothing asked. */
    CHECK(kt__kube_cut_rules(cfg, NULL, room) == NULL);
    CHECK(kt__kube_cut_rules(cfg, none, room) == NULL);
    r = kt__kube_cut_rules(cfg, js, room);
    CHECK(r == room && r[0].member && strcmp(r[0].member, "replicatedJobs") == 0);
    CHECK(!r[1].parent && !r[1].member);
    kt_kube_config_drop_managed_fields(cfg, true);
    r = kt__kube_cut_rules(cfg, NULL, room);
    CHECK(r == room && strcmp(r[0].parent, "metadata") == 0 &&
          strcmp(r[0].member, "managedFields") == 0);
    CHECK(!r[1].parent && !r[1].member);
    r = kt__kube_cut_rules(cfg, js, room);
    CHECK(r && strcmp(r[0].member, "managedFields") == 0 &&
          strcmp(r[1].member, "replicatedJobs") == 0 && !r[2].member);
    /* The bound: a caller's KT_JSON_CUT_RULES_MAX rules keep their first MAX - 1 after the
     * config's. */
    for (size_t i = 0; i < KT_JSON_CUT_RULES_MAX; i++) {
        many[i] = js[0];
    }
    many[KT_JSON_CUT_RULES_MAX] = (struct kt_json_cut_rule)KT_JSON_CUT_END;
    r = kt__kube_cut_rules(cfg, many, room);
    CHECK(r && strcmp(r[0].member, "managedFields") == 0);
    CHECK(r && r[KT_JSON_CUT_RULES_MAX - 1].member &&
          strcmp(r[KT_JSON_CUT_RULES_MAX - 1].member, "replicatedJobs") == 0);
    CHECK(r && !r[KT_JSON_CUT_RULES_MAX].parent && !r[KT_JSON_CUT_RULES_MAX].member);
    kt_kube_config_free(cfg);
}

int main(void)
{
    kt_mem_init();
    test_kubeconfig_data_files();
    test_kubeconfig_token_and_paths();
    test_kubeconfig_errors();
    test_in_cluster_token_rotation();
    test_status_decode();
    test_watch_decode();
    test_lines();
    test_ratelimit();
    test_paths_and_queries();
    test_retry_policy();
    test_time();
    test_cut_rules();
    return test_report();
}
