/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/kube_itest.h - helpers shared by the kube client's integration tests:
 * read the cluster's env file, make clients, fresh namespaces, bounded waits, run the
 * cluster scripts. Header-only (static functions), included once per test binary. */
#ifndef KT_KUBE_ITEST_H
#define KT_KUBE_ITEST_H

#include "tests/test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/kube/kube.h"
#include "common/base/mem.h"

#define ENV_MAX 32

struct itest_env {
    char *keys[ENV_MAX];
    char *vals[ENV_MAX];
    size_t n;
};

/* Undo bash's printf %q for the simple cases up.sh writes (paths, URLs, numbers). */
static inline char *unquote(const char *v)
{
    size_t n = strlen(v);
    char *out = kt_xmalloc(n + 1);
    size_t i;
    size_t j = 0;

    if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
        memcpy(out, v + 1, n - 2);
        out[n - 2] = '\0';
        return out;
    }
    for (i = 0; i < n; i++) {
        if (v[i] == '\\' && i + 1 < n) {
            i++;
        }
        out[j++] = v[i];
    }
    out[j] = '\0';
    return out;
}

static inline int itest_env_load(struct itest_env *e, const char *path)
{
    struct kt_buf b;
    struct kt_err err = {0};
    char *line;
    char *save = NULL;

    memset(e, 0, sizeof(*e));
    kt_buf_init(&b, 1 << 20);
    if (kt_buf_read_file(&b, path, &err) < 0) {
        fprintf(stderr, "env: %s\n", err.msg);
        return -1;
    }
    for (line = strtok_r(b.data, "\n", &save); line && e->n < ENV_MAX;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (!eq || line[0] == '#') {
            continue;
        }
        *eq = '\0';
        e->keys[e->n] = kt_xstrdup(line);
        e->vals[e->n] = unquote(eq + 1);
        e->n++;
    }
    kt_buf_release(&b);
    return 0;
}

static inline const char *itest_env_get(const struct itest_env *e, const char *key)
{
    size_t i;

    for (i = 0; i < e->n; i++) {
        if (strcmp(e->keys[i], key) == 0) {
            return e->vals[i];
        }
    }
    return NULL;
}

static inline void itest_env_release(struct itest_env *e)
{
    size_t i;

    for (i = 0; i < e->n; i++) {
        free(e->keys[i]);
        free(e->vals[i]);
    }
    e->n = 0;
}

static inline struct kt_kube_config *itest_config(const struct itest_env *e, const char *key)
{
    struct kt_err err = {0};
    const char *path = itest_env_get(e, key);
    struct kt_kube_config *cfg;

    if (!path) {
        fprintf(stderr, "env: %s missing\n", key);
        exit(2);
    }
    cfg = kt_kube_config_from_kubeconfig(path, NULL, &err);
    if (!cfg) {
        fprintf(stderr, "config %s: %s\n", path, err.msg);
        exit(2);
    }
    return cfg;
}

static inline double itest_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void itest_nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

/* Create a fresh namespace "<prefix>-<pid>-<n>". Caller owns the name; free with free(). */
static inline char *itest_namespace(struct kt_kube_client *c, const char *prefix)
{
    static int seq;
    struct kt_err err = {0};
    char *name = kt_xasprintf("%s-%d-%d", prefix, (int)getpid(), seq++);
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", name);

    if (kt_kube_create(c, &KT_GVR_NAMESPACES, NULL, ns, NULL, &err) < 0) {
        fprintf(stderr, "create namespace %s: %s\n", name, err.msg);
        exit(2);
    }
    json_decref(ns);
    return name;
}

static inline json_t *itest_configmap(const char *name, const char *key, const char *val)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "name", name, "labels", "kt-test", "yes", "data", key,
                     val);
}

/* Run a shell command; returns its exit status. */
static inline int itest_sh(const char *fmt, ...) KT_PRINTF(1, 2);
static inline int itest_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    fprintf(stderr, "+ %s\n", cmd);
    rc = system(cmd);
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

#endif
