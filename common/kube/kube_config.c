/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/kube_config.c - client configuration from a kubeconfig or the in-cluster files.
 *
 * Supports certificate-authority(-data), client-certificate/-key(-data), token and tokenFile.
 * *-data fields go to unlinked 0600 files read through /proc/self/fd because Debian's libcurl
 * (GnuTLS backend) has no in-memory certificate options. Refuses exec/auth-provider plugins,
 * basic auth and insecure-skip-tls-verify. Also holds the token cache and the rate limiter. */
#include "common/kube/kube.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/json.h"
#include "common/kube/kube_internal.h"
#include "common/base/mem.h"
#include "common/base/yaml.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define TOKEN_MAX (64 * 1024)

struct kt_kube_config *kt__kube_config_alloc(void)
{
    struct kt_kube_config *cfg = kt_xcalloc(1, sizeof(*cfg));

    pthread_mutex_init(&cfg->lock, NULL);
    cfg->request_ms = 30000;
    cfg->connect_ms = 10000;
    cfg->body_max = 64u * 1024 * 1024;
    cfg->line_max = 16u * 1024 * 1024;
    cfg->ns = kt_xstrdup("");
    kt_kube_ratelimit_init(&cfg->rl, 50, 100, kt__kube_now());
    return cfg;
}

void kt_kube_config_free(struct kt_kube_config *cfg)
{
    if (!cfg) {
        return;
    }
    for (size_t i = 0; i < cfg->n_data_fds; i++) {
        close(cfg->data_fds[i]);
    }
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->cert_file);
    free(cfg->key_file);
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->ns);
    free(cfg->cached_token);
    pthread_mutex_destroy(&cfg->lock);
    free(cfg);
}

void kt_kube_config_set_rate(struct kt_kube_config *cfg, double qps, int burst)
{
    kt_kube_ratelimit_init(&cfg->rl, qps, burst, kt__kube_now());
}

struct kt_kube_config *kt_kube_config_load_rated(const char *kubeconfig_path, double qps, int burst,
                                                 struct kt_err *err)
{
    struct kt_kube_config *cfg = kt_kube_config_load(kubeconfig_path, err);

    if (cfg) {
        kt_kube_config_set_rate(cfg, qps, burst);
    }
    return cfg;
}

void kt_kube_config_set_timeouts(struct kt_kube_config *cfg, long request_ms, long connect_ms)
{
    cfg->request_ms = request_ms;
    cfg->connect_ms = connect_ms;
}

void kt_kube_config_set_caps(struct kt_kube_config *cfg, size_t body_max, size_t line_max)
{
    cfg->body_max = body_max;
    cfg->line_max = line_max;
}

void kt_kube_config_drop_managed_fields(struct kt_kube_config *cfg, bool drop)
{
    cfg->drop_managed_fields = drop;
}

const char *kt_kube_config_server(const struct kt_kube_config *cfg)
{
    return cfg->server;
}

const char *kt_kube_config_namespace(const struct kt_kube_config *cfg)
{
    return cfg->ns;
}

/* ---- base64 and temporary files --------------------------------------------------------- */

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

/* Standard base64 with optional padding; whitespace is skipped. */
static int b64_decode(const char *s, struct kt_buf *out, struct kt_err *err)
{
    unsigned acc = 0;
    int bits = 0;

    for (; *s && *s != '='; s++) {
        unsigned char c = (unsigned char)*s;
        int v;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            continue;
        }
        v = b64_val(c);
        if (v < 0) {
            return kt_err_set(err, KT_EPARSE, "invalid base64");
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            char byte = (char)((acc >> (bits - 8)) & 0xff);
            bits -= 8;
            if (kt_buf_append(out, &byte, 1, err) < 0) {
                return -1;
            }
        }
    }
    if (!out->data) {
        return kt_err_set(err, KT_EPARSE, "empty base64 data");
    }
    return 0;
}

/* Decode base64 data into an anonymous 0600 file and return "/proc/self/fd/N" as its path.
 * The file is unlinked at once, so nothing is left behind even when the process is killed;
 * the descriptor keeps it alive until kt_kube_config_free(). (curl re-reads certificate
 * files by path for every new connection.) Caller owns *path; free with free(). */
static int write_data_file(struct kt_kube_config *cfg, const char *name, const char *b64,
                           char **path, struct kt_err *err)
{
    const char *base = getenv("TMPDIR");
    struct kt_buf raw;
    char *tmpl = NULL;
    int fd = -1;
    int rc = -1;

    kt_buf_init(&raw, 1024 * 1024);
    if (cfg->n_data_fds >= KT_ARRAY_SIZE(cfg->data_fds)) {
        kt_err_set(err, KT_EINTERNAL, "too many data files");
        goto out;
    }
    if (b64_decode(b64, &raw, err) < 0) {
        kt_err_prefix(err, "%s", name);
        goto out;
    }
    tmpl = kt_xasprintf("%s/kt-kube-XXXXXX", base && *base ? base : "/tmp");
    fd = mkstemp(tmpl); /* mode 0600 */
    if (fd < 0) {
        kt_err_set(err, KT_EIO, "%s: %s", tmpl, strerror(errno));
        goto out;
    }
    unlink(tmpl);
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || write(fd, raw.data, raw.len) != (ssize_t)raw.len) {
        kt_err_set(err, KT_EIO, "%s data: %s", name, strerror(errno));
        goto out;
    }
    cfg->data_fds[cfg->n_data_fds++] = fd;
    *path = kt_xasprintf("/proc/self/fd/%d", fd);
    fd = -1;
    rc = 0;
out:
    if (fd >= 0) {
        close(fd);
    }
    free(tmpl);
    kt_buf_release(&raw);
    return rc;
}

/* ---- kubeconfig ------------------------------------------------------------------------- */

/* The "inner" object of the named entry in list key (contexts/clusters/users). */
static json_t *named_entry(const json_t *root, const char *list, const char *inner,
                           const char *name)
{
    json_t *arr = json_object_get(root, list);
    json_t *item = kt_json_arr_find(arr, "name", name, NULL);

    if (!json_is_object(item)) {
        return NULL;
    }
    return json_object_get(item, inner);
}

static char *resolve_path(const char *base_dir, const char *p)
{
    if (p[0] == '/' || !base_dir || !*base_dir) {
        return kt_xstrdup(p);
    }
    return kt_xasprintf("%s/%s", base_dir, p);
}

/* A kubeconfig file/data pair, and the file the data is written to. */
struct file_or_data_keys {
    const char *file_key, *data_key, *tmpname;
};
static const struct file_or_data_keys CA_KEYS = {.file_key = "certificate-authority",
                                                 .data_key = "certificate-authority-data",
                                                 .tmpname = "ca.crt"};
static const struct file_or_data_keys CERT_KEYS = {.file_key = "client-certificate",
                                                   .data_key = "client-certificate-data",
                                                   .tmpname = "client.crt"};
static const struct file_or_data_keys KEY_KEYS = {
    .file_key = "client-key", .data_key = "client-key-data", .tmpname = "client.key"};

/* file/data pair: data wins (as client-go). *out unchanged when neither is set. */
static int file_or_data(struct kt_kube_config *cfg, const json_t *obj,
                        const struct file_or_data_keys *k, const char *base_dir, char **out,
                        struct kt_err *err)
{
    const char *data = kt_json_str(obj, k->data_key, NULL);
    const char *file = kt_json_str(obj, k->file_key, NULL);

    if (data && *data) {
        return write_data_file(cfg, k->tmpname, data, out, err);
    }
    if (file && *file) {
        *out = resolve_path(base_dir, file);
    }
    return 0;
}

static int load_cluster(struct kt_kube_config *cfg, const json_t *cl, const char *base_dir,
                        struct kt_err *err)
{
    const char *server = kt_json_str(cl, "server", NULL);
    size_t n;

    if (!server || strncmp(server, "https://", 8) != 0) {
        return kt_err_set(err, KT_EINVAL, "cluster.server must be an https:// URL");
    }
    if (kt_json_bool(cl, "insecure-skip-tls-verify", false)) {
        return kt_err_set(err, KT_EUNSUPPORTED, "insecure-skip-tls-verify is not supported");
    }
    cfg->server = kt_xstrdup(server);
    n = strlen(cfg->server);
    while (n > 8 && cfg->server[n - 1] == '/') {
        cfg->server[--n] = '\0';
    }
    return file_or_data(cfg, cl, &CA_KEYS, base_dir, &cfg->ca_file, err);
}

static int load_user(struct kt_kube_config *cfg, const json_t *u, const char *base_dir,
                     struct kt_err *err)
{
    const char *token = kt_json_str(u, "token", NULL);
    const char *token_file = kt_json_str(u, "tokenFile", NULL);

    if (json_object_get(u, "exec") || json_object_get(u, "auth-provider")) {
        return kt_err_set(err, KT_EUNSUPPORTED, "exec and auth-provider users are not supported");
    }
    if (json_object_get(u, "username") || json_object_get(u, "password")) {
        return kt_err_set(err, KT_EUNSUPPORTED, "basic authentication is not supported");
    }
    if (file_or_data(cfg, u, &CERT_KEYS, base_dir, &cfg->cert_file, err) < 0 ||
        file_or_data(cfg, u, &KEY_KEYS, base_dir, &cfg->key_file, err) < 0) {
        return -1;
    }
    if (!cfg->cert_file != !cfg->key_file) {
        return kt_err_set(err, KT_EINVAL, "client certificate and key must be given together");
    }
    if (token && *token) {
        cfg->token = kt_xstrdup(token);
    } else if (token_file && *token_file) {
        cfg->token_file = resolve_path(base_dir, token_file);
    }
    return 0;
}

static int load_context(struct kt_kube_config *cfg, const json_t *root, const char *context,
                        const char *base_dir, struct kt_err *err)
{
    const json_t *ctx;
    const json_t *cl;
    const json_t *u;
    const char *ns;

    if (!context || !*context) {
        context = kt_json_str(root, "current-context", NULL);
    }
    if (!context || !*context) {
        return kt_err_set(err, KT_EINVAL, "no context given and no current-context");
    }
    ctx = named_entry(root, "contexts", "context", context);
    if (!json_is_object(ctx)) {
        return kt_err_set(err, KT_ENOENT, "context \"%s\" not found", context);
    }
    cl = named_entry(root, "clusters", "cluster", kt_json_str(ctx, "cluster", ""));
    if (!json_is_object(cl)) {
        return kt_err_set(err, KT_ENOENT, "cluster \"%s\" of context \"%s\" not found",
                          kt_json_str(ctx, "cluster", ""), context);
    }
    u = named_entry(root, "users", "user", kt_json_str(ctx, "user", ""));
    if (load_cluster(cfg, cl, base_dir, err) < 0) {
        return kt_err_prefix(err, "context \"%s\"", context);
    }
    if (json_is_object(u) && load_user(cfg, u, base_dir, err) < 0) {
        return kt_err_prefix(err, "context \"%s\"", context);
    }
    ns = kt_json_str(ctx, "namespace", "");
    free(cfg->ns);
    cfg->ns = kt_xstrdup(ns);
    return 0;
}

struct kt_kube_config *kt_kube_config_parse_kubeconfig(const char *data, size_t len,
                                                       const char *context, const char *base_dir,
                                                       struct kt_err *err)
{
    struct kt_yaml_limits lim;
    struct kt_yaml_stream st = {0};
    struct kt_kube_config *cfg = NULL;
    const json_t *root;

    kt_yaml_limits_default(&lim);
    if (kt_yaml_parse(data, len, &lim, &st, err) < 0) {
        kt_err_prefix(err, "kubeconfig");
        goto out;
    }
    root = st.len > 0 ? st.docs[0].root : NULL;
    if (!json_is_object(root)) {
        kt_err_set(err, KT_EPARSE, "kubeconfig: not a mapping");
        goto out;
    }
    cfg = kt__kube_config_alloc();
    if (load_context(cfg, root, context, base_dir, err) < 0) {
        kt_kube_config_free(cfg);
        cfg = NULL;
    }
out:
    kt_yaml_stream_release(&st);
    return cfg;
}

struct kt_kube_config *kt_kube_config_from_kubeconfig(const char *path, const char *context,
                                                      struct kt_err *err)
{
    struct kt_buf b;
    struct kt_kube_config *cfg = NULL;
    char *dir = NULL;
    char *slash;

    kt_buf_init(&b, 8u * 1024 * 1024);
    if (kt_buf_read_file(&b, path, err) < 0) {
        goto out;
    }
    dir = kt_xstrdup(path);
    slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
    } else {
        dir[0] = '\0';
    }
    cfg = kt_kube_config_parse_kubeconfig(b.data, b.len, context, dir, err);
    if (!cfg) {
        kt_err_prefix(err, "%s", path);
    }
out:
    free(dir);
    kt_buf_release(&b);
    return cfg;
}

/* ---- in-cluster ------------------------------------------------------------------------- */

static char *read_trimmed(const char *path, size_t max, struct kt_err *err)
{
    struct kt_buf b;
    char *s;
    size_t n;

    kt_buf_init(&b, max);
    if (kt_buf_read_file(&b, path, err) < 0) {
        return NULL;
    }
    s = kt_buf_take(&b, &n);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) {
        s[--n] = '\0';
    }
    return s;
}

struct kt_kube_config *kt_kube_config_in_cluster(const char *sa_dir, struct kt_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    struct kt_kube_config *cfg;
    char *nsfile;
    char *ns;

    if (!host || !*host || !port || !*port) {
        kt_err_set(err, KT_EINVAL,
                   "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset (use --kubeconfig)");
        return NULL;
    }
    if (!sa_dir) {
        sa_dir = SA_DIR;
    }
    cfg = kt__kube_config_alloc();
    /* An IPv6 service host needs brackets in a URL. */
    cfg->server = strchr(host, ':') ? kt_xasprintf("https://[%s]:%s", host, port)
                                    : kt_xasprintf("https://%s:%s", host, port);
    cfg->ca_file = kt_xasprintf("%s/ca.crt", sa_dir);
    cfg->token_file = kt_xasprintf("%s/token", sa_dir);
    if (access(cfg->token_file, R_OK) != 0) {
        kt_err_set(err, KT_EIO, "%s: %s", cfg->token_file, strerror(errno));
        kt_kube_config_free(cfg);
        return NULL;
    }
    nsfile = kt_xasprintf("%s/namespace", sa_dir);
    ns = read_trimmed(nsfile, 4096, NULL);
    free(nsfile);
    if (ns) {
        free(cfg->ns);
        cfg->ns = ns;
    }
    return cfg;
}

struct kt_kube_config *kt_kube_config_load(const char *kubeconfig_path, struct kt_err *err)
{
    if (kubeconfig_path && *kubeconfig_path) {
        return kt_kube_config_from_kubeconfig(kubeconfig_path, NULL, err);
    }
    return kt_kube_config_in_cluster(NULL, err);
}

/* ---- token cache and rate limiting ------------------------------------------------------ */

/* Re-read token_file when its inode, size or mtime changed. Called with cfg->lock held. */
static void refresh_token(struct kt_kube_config *cfg, bool force)
{
    struct stat st;
    char *tok;

    if (stat(cfg->token_file, &st) != 0) {
        return; /* keep the last token: a rotation may be mid-way */
    }
    if (!force && cfg->cached_token && st.st_ino == cfg->token_ino &&
        st.st_size == cfg->token_size && st.st_mtim.tv_sec == cfg->token_mtime.tv_sec &&
        st.st_mtim.tv_nsec == cfg->token_mtime.tv_nsec) {
        return;
    }
    tok = read_trimmed(cfg->token_file, TOKEN_MAX, NULL);
    if (!tok) {
        return;
    }
    free(cfg->cached_token);
    cfg->cached_token = tok;
    cfg->token_ino = st.st_ino;
    cfg->token_size = st.st_size;
    cfg->token_mtime = st.st_mtim;
}

char *kt__kube_auth_header(struct kt_kube_config *cfg, bool force_reread)
{
    char *hdr = NULL;

    if (cfg->token) {
        return kt_xasprintf("Authorization: Bearer %s", cfg->token);
    }
    if (!cfg->token_file) {
        return NULL;
    }
    pthread_mutex_lock(&cfg->lock);
    refresh_token(cfg, force_reread);
    if (cfg->cached_token && *cfg->cached_token) {
        hdr = kt_xasprintf("Authorization: Bearer %s", cfg->cached_token);
    }
    pthread_mutex_unlock(&cfg->lock);
    return hdr;
}

double kt__kube_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void kt_kube_ratelimit_init(struct kt_kube_ratelimit *rl, double qps, int burst, double now)
{
    rl->qps = qps;
    rl->burst = burst < 1 ? 1 : burst;
    rl->tokens = rl->burst;
    rl->last = now;
}

double kt_kube_ratelimit_reserve(struct kt_kube_ratelimit *rl, double now)
{
    if (rl->qps <= 0) {
        return 0;
    }
    if (now > rl->last) {
        rl->tokens += (now - rl->last) * rl->qps;
        if (rl->tokens > rl->burst) {
            rl->tokens = rl->burst;
        }
        rl->last = now;
    }
    rl->tokens -= 1;
    if (rl->tokens >= 0) {
        return 0;
    }
    return -rl->tokens / rl->qps;
}

void kt__kube_rate_wait(struct kt_kube_config *cfg)
{
    double wait;
    struct timespec ts;

    pthread_mutex_lock(&cfg->lock);
    wait = kt_kube_ratelimit_reserve(&cfg->rl, kt__kube_now());
    pthread_mutex_unlock(&cfg->lock);
    if (wait <= 0) {
        return;
    }
    ts.tv_sec = (time_t)wait;
    ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
