/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/main.c - kt-webhook: flags, configuration and wiring only
 * (docs/configuration.md#kt-webhook-flags).
 *
 * Three servers: the admission webhook over TLS (--listen), plain-HTTP health probes
 * (--health-listen: /healthz, /readyz) and Prometheus metrics (--metrics-listen; TLS with
 * the webhook certificate when the Configuration says metrics.secureServing, as upstream;
 * with metrics.auth.enabled every metrics request is checked with a TokenReview and a
 * SubjectAccessReview, common/authz/metrics_auth.h, as kt-reconciler's).
 * /readyz is ready once the certificate pair is loaded and, with a cluster, the runtime cache
 * has synced. With the feature gate TrainJobStatus (the Configuration's featureGates or
 * --feature-gates) a fourth server, the status server (webhook/status_server.h), listens on
 * statusServer.port with the webhook certificate. SIGTERM/SIGINT stop gracefully: the webhook
 * server drains first (kt_httpd_drain: Connection: close on every response, idle keep-alive
 * connections closed, still listening) for --drain-seconds, then stops listening and waits
 * for the requests in flight; a second signal ends the drain early (docs/operating.md).
 *
 * usage() is the one source of the flags' text: --help prints it and `make man` turns it into
 * kt-webhook.8 (docs/man/build.sh), so keep it in help2man's layout: "  --flag ARG", two or
 * more spaces, the description; continuation lines indented. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/types.h"
#include "common/authz/metrics_auth.h"
#include "common/config/config.h"
#include "common/net/httpd.h"
#include "common/kube/kube.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/base/sig.h"
#include "common/net/metrics.h"
#include "common/plugins/plugin_loader.h"
#include "common/net/tlsopts.h"
#include "webhook/routes.h"
#include "webhook/status_server.h"
#include "webhook/store.h"

#define LOG "webhook"
#define EXIT_USAGE 2

struct flags {
    const char *config, *kubeconfig, *cert, *key, *listen, *health, *metrics, *portfile;
    const char *log_level, *objects, *status_listen, *gates;
    unsigned threads;
    unsigned drain_s;               /* --drain-seconds */
    size_t max_inflight_body;       /* --max-inflight-body-bytes; 0 = the httpd default */
    struct kt_plugin_flags plugins; /* --plugin, --trainjob-status-plugin */
};

struct app {
    struct flags f;
    struct kt_config cfg;
    struct kt_kube_config *kube;
    struct kt_kube_config *status_kube; /* the status server's own (statusServer.qps/burst) */
    struct kt_wstore *store;
    struct kt_metrics *metrics;
    struct kt_wroutes routes;
    struct kt_plugin_set plugins;
    struct kt_httpd *web, *health, *mon;
    struct kt_status_srv *status;     /* NULL unless the feature gate TrainJobStatus is on */
    struct kt_mauth *mauth;           /* metrics.auth.enabled */
    struct kt_kube_config *mauth_cfg; /* its own QPS budget (common/authz/metrics_auth.h) */
    char *listen, *health_listen, *metrics_listen, *status_listen; /* owned effective addresses */
    char *tls_priority; /* owned GnuTLS priorities from the Configuration's tls options */
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: kt-webhook --tls-cert-file FILE --tls-key-file FILE [options]\n"
               "  --config FILE           Configuration (config.trainer.kubeflow.org/v1alpha1)\n"
               "  --kubeconfig FILE       API server access (default: in-cluster)\n"
               "  --objects PATH          serve runtimes/JobSets from files, no cluster\n"
               "  --listen ADDR:PORT      webhook (default: config webhook host:port, :9443)\n"
               "  --health-listen ADDR:PORT  /healthz /readyz (default: config, :8081)\n"
               "  --metrics-listen ADDR:PORT  /metrics (default: config, :8443; \"0\" = off)\n"
               "  --status-listen ADDR:PORT  status server, with the feature gate TrainJobStatus\n"
               "                          (default: config statusServer.port, :10443)\n"
               "  --feature-gates K=V,...  override the Configuration's featureGates\n"
               "  --portfile FILE         write the bound ports as JSON once listening\n"
               "  --threads N             webhook worker threads (default: 4)\n"
               "  --drain-seconds N       on SIGTERM keep serving N seconds (0-60) with\n"
               "                          Connection: close before the listener closes\n"
               "                          (default: 0)\n"
               "  --max-inflight-body-bytes N  request body bytes buffered at once across all\n"
               "                          connections; past it 503 (default: 33554432)\n"
               "  --log-level LEVEL       debug|info|warn|error (default: info)\n"
               "  -h, --help              print this usage and exit\n"
               "  --version               print the version and exit\n"
               "Port 0 picks a free port.\n");
    fputs(kt_plugin_flags_usage(), f);
}

/* --threads N (1..256), --drain-seconds N (0..60) or --max-inflight-body-bytes N (at least
 * one full body): 0 when argv[*i] is one of them with a good value. */
static int parse_number_flag(int argc, char **argv, int *i, struct flags *f)
{
    const char *v = kt_flag_value(argc, argv, i, "--threads", NULL);
    int64_t n = 0;

    if (v) {
        if (kt_str_to_i64(kt_str_c(v), 1, 256, &n, NULL) < 0) {
            return -1;
        }
        f->threads = (unsigned)n;
        return 0;
    }
    v = kt_flag_value(argc, argv, i, "--drain-seconds", NULL);
    if (v) {
        if (kt_str_to_i64(kt_str_c(v), 0, 60, &n, NULL) < 0) {
            return -1;
        }
        f->drain_s = (unsigned)n;
        return 0;
    }
    v = kt_flag_value(argc, argv, i, "--max-inflight-body-bytes", NULL);
    if (!v || kt_str_to_i64(kt_str_c(v), KT_HTTPD_DEFAULT_MAX_BODY, INT64_MAX / 2, &n, NULL) < 0) {
        return -1;
    }
    f->max_inflight_body = (size_t)n;
    return 0;
}

static int parse_flags(int argc, char **argv, struct flags *f)
{
    struct {
        const char *name;
        const char **dst;
    } table[] = {
        {"--config", &f->config},
        {"--kubeconfig", &f->kubeconfig},
        {"--tls-cert-file", &f->cert},
        {"--tls-key-file", &f->key},
        {"--listen", &f->listen},
        {"--health-listen", &f->health},
        {"--metrics-listen", &f->metrics},
        {"--portfile", &f->portfile},
        {"--log-level", &f->log_level},
        {"--objects", &f->objects},
        {"--status-listen", &f->status_listen},
        {"--feature-gates", &f->gates},
    };
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        size_t k;
        for (k = 0; k < KT_ARRAY_SIZE(table) && !v; k++) {
            v = kt_flag_value(argc, argv, &i, table[k].name, NULL);
            if (v) {
                *table[k].dst = v;
            }
        }
        if (v) {
            continue;
        }
        if (kt_plugin_flags_parse(&f->plugins, argc, argv, &i) > 0) {
            continue;
        }
        if (parse_number_flag(argc, argv, &i, f) == 0) {
            continue;
        }
        fprintf(stderr, "kt-webhook: bad argument \"%s\"\n", argv[i]);
        return -1;
    }
    if (!f->cert || !f->key) {
        fprintf(stderr, "kt-webhook: --tls-cert-file and --tls-key-file are required\n");
        return -1;
    }
    return 0;
}

/* Effective listen addresses: the flags, else the Configuration. */
static void pick_addresses(struct app *a)
{
    if (a->f.listen) {
        a->listen = kt_xstrdup(a->f.listen);
    } else {
        const char *host = a->cfg.webhook.host ? a->cfg.webhook.host : "";
        bool v6 = strchr(host, ':') != NULL;
        a->listen = kt_xasprintf(v6 ? "[%s]:%d" : "%s:%d", host, (int)a->cfg.webhook.port);
    }
    a->health_listen = kt_xstrdup(a->f.health ? a->f.health : a->cfg.health.probe_bind_address);
    a->metrics_listen = kt_xstrdup(a->f.metrics ? a->f.metrics : a->cfg.metrics.bind_address);
    a->status_listen = a->f.status_listen ? kt_xstrdup(a->f.status_listen)
                                          : kt_xasprintf(":%d", (int)a->cfg.status_server.port);
}

/* NULL when ready, else why; an unsynced runtime cache names the informer and its failure
 * (in buf). */
static const char *readiness(void *arg, char *buf, size_t n)
{
    static const char prefix[] = "runtime cache is not synced: ";
    struct app *a = arg;

    if (kt_httpd_draining(a->web)) {
        return "shutting down";
    }
    if (!kt_httpd_certs_ready(a->web)) {
        return "certificates are not ready";
    }
    snprintf(buf, n, "%s", prefix);
    if (kt_wstore_unsynced_reason(a->store, buf + sizeof(prefix) - 1, n - (sizeof(prefix) - 1))) {
        return buf;
    }
    if (a->status && !kt_status_srv_ready(a->status)) {
        return "status server certificates are not ready";
    }
    return NULL;
}

/* metrics.auth.enabled: every metrics request goes through common/authz/metrics_auth.h (no
 * built-in routes then), reviewing with a kube config of its own. */
static int metrics_auth(struct app *a, struct kt_httpd_opts *m, struct kt_err *err)
{
    if (a->f.objects) {
        return kt_err_set(err, KT_EINVAL,
                          "metrics.auth.enabled: reviewing tokens needs a cluster, not --objects");
    }
    a->mauth_cfg = kt_kube_config_load_rated(a->f.kubeconfig, a->cfg.client_connection.qps,
                                             a->cfg.client_connection.burst, err);
    if (!a->mauth_cfg) {
        return -1;
    }
    a->mauth = kt_mauth_new(a->mauth_cfg, a->metrics);
    m->builtins = 0;
    m->threads = 2; /* cached answers keep flowing while a review is in flight */
    kt_log_info(LOG, "metrics: TokenReview and SubjectAccessReview on every request");
    return 0;
}

static int make_servers(struct app *a, struct kt_err *err)
{
    struct kt_httpd_opts w = {.name = "webhook",
                              .listen = a->listen,
                              .cert_file = a->f.cert,
                              .key_file = a->f.key,
                              .threads = a->f.threads ? a->f.threads : 4,
                              .max_inflight_body = a->f.max_inflight_body,
                              .metrics = a->metrics,
                              .https_priority = a->tls_priority,
                              .short_slice = true};
    struct kt_httpd_opts h = {.name = "health",
                              .listen = a->health_listen,
                              .builtins = KT_HTTPD_HEALTH,
                              .ready = readiness,
                              .ready_arg = a};

    a->web = kt_httpd_new(&w, err);
    if (!a->web) {
        return kt_err_prefix(err, "webhook server");
    }
    kt_wroutes_register(&a->routes, a->web);
    a->health = kt_httpd_new(&h, err);
    if (!a->health) {
        return kt_err_prefix(err, "health server");
    }
    if (strcmp(a->metrics_listen, "0") == 0) {
        return 0;
    }
    struct kt_httpd_opts m = {.name = "metrics",
                              .listen = a->metrics_listen,
                              .builtins = KT_HTTPD_METRICS,
                              .metrics = a->metrics};
    if (a->cfg.metrics.secure_serving) {
        m.cert_file = a->f.cert;
        m.key_file = a->f.key;
        m.https_priority = a->tls_priority;
        m.threads = 2; /* a scrape's handshake need not queue behind a flood's handshakes */
    }
    if (a->cfg.metrics.auth_enabled && metrics_auth(a, &m, err) != 0) {
        return kt_err_prefix(err, "metrics server");
    }
    a->mon = kt_httpd_new(&m, err);
    if (a->mon && a->mauth) {
        kt_httpd_route(a->mon, "*", "/*", kt_mauth_handle, a->mauth);
    }
    return a->mon ? 0 : kt_err_prefix(err, "metrics server");
}

/* The status server (docs/internals/upstream.md#status-server), only with the feature gate and a
 * cluster to write to. Its kube configuration is its own, with statusServer.qps/burst as upstream's
 * own client. */
static int make_status_server(struct app *a, struct kt_err *err)
{
    if (!kt_config_gate(&a->cfg, KT_GATE_TRAINJOB_STATUS, false)) {
        return 0;
    }
    if (a->f.objects) {
        return kt_err_set(err, KT_EINVAL,
                          "feature gate TrainJobStatus: the status server needs a cluster, not "
                          "--objects");
    }
    a->status_kube = kt_kube_config_load_rated(a->f.kubeconfig, a->cfg.status_server.qps,
                                               a->cfg.status_server.burst, err);
    if (!a->status_kube) {
        return -1;
    }
    struct kt_status_server_opts o = {.listen = a->status_listen,
                                      .cert_file = a->f.cert,
                                      .key_file = a->f.key,
                                      .tls_priority = a->tls_priority,
                                      .kube = a->status_kube,
                                      .metrics = a->metrics};
    a->status = kt_status_srv_new(&o, err);
    return a->status ? 0 : -1;
}

static int write_portfile(struct app *a, struct kt_err *err)
{
    const char *names[4] = {"webhook", "health"};
    uint16_t ports[4] = {kt_httpd_port(a->web), kt_httpd_port(a->health)};
    size_t n = 2;

    if (!a->f.portfile) {
        return 0;
    }
    if (a->mon) {
        names[n] = "metrics";
        ports[n++] = kt_httpd_port(a->mon);
    }
    if (a->status) {
        names[n] = "status";
        ports[n++] = kt_status_srv_port(a->status);
    }
    return kt_httpd_write_portfile(a->f.portfile, names, ports, n, err);
}

static int setup(struct app *a, struct kt_err *err)
{
    if (kt_plugin_set_load(&a->plugins, &a->f.plugins, err) != 0) {
        return -1;
    }
    if (a->f.config) {
        kt_config_release(&a->cfg); /* kt_config_load() refills it without freeing */
    }
    if (a->f.config && kt_config_load(a->f.config, &a->cfg, err) != 0) {
        return -1;
    }
    if (a->f.gates && kt_config_set_gates(&a->cfg, a->f.gates, err) != 0) {
        return kt_err_prefix(err, "--feature-gates");
    }
    a->tls_priority = kt_tls_priority(&a->cfg.tls, &a->cfg.warnings);
    for (size_t i = 0; i < a->cfg.warnings.len; i++) {
        kt_log_warn(LOG, "%s", a->cfg.warnings.items[i]);
    }
    pick_addresses(a);
    a->metrics = kt_metrics_new();
    if (a->f.objects) {
        a->store = kt_wstore_from_files(a->f.objects, err);
    } else {
        a->kube = kt_kube_config_load_rated(a->f.kubeconfig, a->cfg.client_connection.qps,
                                            a->cfg.client_connection.burst, err);
        if (a->kube) {
            a->store = kt_wstore_from_cluster(a->kube);
        }
    }
    if (!a->store) {
        return -1;
    }
    kt_wroutes_init(&a->routes, a->store, a->metrics);
    a->routes.fw = a->plugins.fw;
    /* Feature gate DynamicResourceAllocation: admit the KEP-2782 fields (docs/api.md). */
    a->routes.fw.dra = kt_config_gate(&a->cfg, KT_GATE_DRA, false);
    return make_servers(a, err) != 0 ? -1 : make_status_server(a, err);
}

static int start(struct app *a, struct kt_err *err)
{
    if (kt_httpd_start(a->health, err) != 0 || kt_wstore_start(a->store, err) != 0 ||
        kt_httpd_start(a->web, err) != 0 || (a->mon && kt_httpd_start(a->mon, err) != 0) ||
        (a->status && kt_status_srv_start(a->status, err) != 0)) {
        return -1;
    }
    if (a->status) {
        kt_log_info(LOG, "feature gate TrainJobStatus: status server on port %u",
                    (unsigned)kt_status_srv_port(a->status));
    }
    kt_log_info(LOG, "listening webhook=%u health=%u metrics=%u mode=%s",
                (unsigned)kt_httpd_port(a->web), (unsigned)kt_httpd_port(a->health),
                a->mon ? (unsigned)kt_httpd_port(a->mon) : 0U, a->f.objects ? "files" : "cluster");
    return write_portfile(a, err);
}

static void shutdown_all(struct app *a)
{
    if (a->web) {
        kt_httpd_quiesce(a->web);
        kt_httpd_stop(a->web, KT_HTTPD_DEFAULT_GRACE_MS);
    }
    kt_status_srv_free(a->status);
    kt_httpd_free(a->web);
    kt_httpd_free(a->mon);
    kt_mauth_free(a->mauth);
    kt_kube_config_free(a->mauth_cfg);
    kt_httpd_free(a->health);
    kt_wstore_free(a->store);
    kt_plugin_set_release(&a->plugins);
    kt_plugin_flags_release(&a->f.plugins);
    kt_kube_config_free(a->kube);
    kt_kube_config_free(a->status_kube);
    kt_metrics_free(a->metrics);
    kt_config_release(&a->cfg);
    free(a->listen);
    free(a->health_listen);
    free(a->metrics_listen);
    free(a->status_listen);
    free(a->tls_priority);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    struct kt_err err = {0};
    enum kt_log_level lvl;
    int rc = 1, sig;

    kt_mem_init();
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("kt-webhook %s (API " KT_API_VERSION ", Kubeflow Trainer %s)\n", KT_BUILD_VERSION,
               KT_UPSTREAM_VERSION);
        return 0;
    }
    if (parse_flags(argc, argv, &a.f) != 0) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (a.f.log_level && kt_log_level_parse(a.f.log_level, &lvl) != 0) {
        fprintf(stderr, "kt-webhook: unknown --log-level \"%s\"\n", a.f.log_level);
        return EXIT_USAGE;
    }
    kt_log_set_level(a.f.log_level ? lvl : KT_LOG_INFO);
    kt_config_default(&a.cfg);
    kt_sig_block(); /* before any thread: every thread inherits the mask */
    if (setup(&a, &err) != 0 || start(&a, &err) != 0) {
        kt_log_error(LOG, "%s", err.msg);
        goto out;
    }
    sig = kt_sig_wait(-1); /* not inside kt_log_info: at --log-level warn it evaluates nothing */
    kt_log_info(LOG, "signal %d: shutting down, draining for %us", sig, a.f.drain_s);
    kt_httpd_drain(a.web);
    if (a.f.drain_s > 0 && kt_sig_wait((int)a.f.drain_s * 1000) > 0) {
        kt_log_info(LOG, "second signal: ending the drain");
    }
    rc = 0;
out:
    shutdown_all(&a);
    return rc;
}
