/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/main.c - kt-reconciler: flags, signals, wiring
 * (docs/internals/style.md#mainc-only-wires).
 *
 *   kt-reconciler [--config FILE] [--kubeconfig FILE] [--health-listen ADDR:PORT]
 *                 [--metrics-listen ADDR:PORT] [--portfile FILE] [--log-level LEVEL]
 *                 [--workers N] [--cert-dir DIR] [--cert-sans SAN,...]
 *                 [--metrics-cert-dir DIR] [--namespaces NS,...]
 *                 [--status-batch-seconds N]
 *   kt-reconciler --help | --version
 *
 * usage_to() is the one source of the flags' text: --help prints it and `make man` turns it
 * into kt-reconciler.8 (docs/man/build.sh), so keep it in help2man's layout: "  --flag ARG"
 * then two or more spaces and the description, continuation lines indented.
 *
 * --namespaces (or the Configuration's watchNamespaces; the flag wins, "" = all) restricts the
 * reconciler to those namespaces: a namespace-scoped install (docs/install.md), kt's own knob.
 *
 * Metrics (upstream's metrics.* in the Configuration): TLS when metrics.secureServing (the
 * default), with --metrics-cert-dir's tls.crt/tls.key, else --cert-dir's when it has them,
 * else a self-signed certificate made at start (as controller-runtime does); TokenReview +
 * SubjectAccessReview in front of every request when metrics.auth.enabled
 * (common/authz/metrics_auth.h).
 *
 * Threads: main (signals, readiness, gauges), the informer loop, the leader elector (when
 * the Configuration enables it), N workers (started once the caches are synced and, with
 * leader election, once this replica leads), the health and metrics servers. */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/types.h"
#include "certs/certs.h"
#include "certs/rotator.h"
#include "common/config/config.h"
#include "common/net/httpd.h"
#include "common/net/metrics.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/base/sig.h"
#include "common/plugins/plugin_loader.h"
#include "common/base/str.h"
#include "common/authz/metrics_auth.h"
#include "common/net/tlsopts.h"
#include "leader.h"
#include "queue.h"
#include "reconcile.h"

#define LOG "main"
#define DEFAULT_NAMESPACE "kubeflow-system"
#define DEFAULT_LEASE "trainer.kubeflow.org"
#define MAX_WORKERS 64
#define DEFAULT_STATUS_BATCH_S 30
#define MAX_STATUS_BATCH_S 600

struct flags {
    const char *config, *kubeconfig, *health, *metrics, *portfile, *log_level, *cert_dir;
    const char *cert_sans, *gates, *metrics_cert_dir, *namespaces;
    long workers;
    long status_batch_s;            /* --status-batch-seconds + 1; 0 = not given */
    struct kt_plugin_flags plugins; /* --plugin, --trainjob-status-plugin */
};

struct app {
    struct flags fl;
    struct kt_config conf;
    struct kt_kube_config *kcfg;
    struct kt_metrics *metrics;
    struct kt_queue *queue;
    struct kt_rec rec;
    struct kt_plugin_set plugins;
    struct kt_leader *leader;
    struct kt_certs_rotator *rotator;
    struct kt_httpd *health_srv, *metrics_srv;
    struct kt_mauth *mauth;           /* metrics.auth.enabled */
    struct kt_kube_config *mauth_cfg; /* its own QPS budget (common/authz/metrics_auth.h) */
    struct kt_kube_config *lease_cfg; /* the elector's own QPS budget: renewals never queue
                                       * behind the workers' requests (client-go's elector
                                       * has its own client and limiter too) */
    struct kt_certs metrics_self;     /* owned: a self-signed metrics pair in memory (tls_crt and
                                       * tls_key set only when used) */
    char *tls_priority; /* owned: GnuTLS priorities from the Configuration's tls options */
    struct kt_status_server status; /* feature gate TrainJobStatus: where trainer pods report */
    pthread_t loop_thread, workers[MAX_WORKERS];
    bool loop_started;
    long nworkers, started_workers;
    atomic_int ready;
};

static int usage_to(FILE *f, int rc)
{
    fprintf(f, "Usage: kt-reconciler [options]\n"
               "  --config FILE           Configuration (config.trainer.kubeflow.org/v1alpha1;\n"
               "                          default: every default, leader election off)\n"
               "  --kubeconfig FILE       API server access (default: in-cluster)\n"
               "  --health-listen ADDR:PORT  /healthz /readyz (default: config, :8081)\n"
               "  --metrics-listen ADDR:PORT  /metrics (default: config, :8443; \"0\" = off)\n"
               "  --metrics-cert-dir DIR  tls.crt/tls.key of the metrics port (default:\n"
               "                          --cert-dir when it holds a pair, else self-signed)\n"
               "  --portfile FILE         write the bound ports as JSON once listening\n"
               "  --workers N             reconcile workers (default: config\n"
               "                          groupKindConcurrency for TrainJob, else 4)\n"
               "  --cert-dir DIR          local certificate mode: inject DIR/ca.crt as\n"
               "                          caBundle, write no Secret\n"
               "  --cert-sans DNS:x,IP:y  extra SANs of the managed serving certificate\n"
               "  --feature-gates K=V,...  override the Configuration's featureGates\n"
               "  --namespaces NS,...     namespaces to watch (default: config\n"
               "                          watchNamespaces; \"\" = every namespace)\n"
               "  --status-batch-seconds N  hold a status write that only adds startTime or\n"
               "                          moves jobsStatus up to N seconds to fold it into\n"
               "                          the next (default: 30; 0 = write each at once)\n"
               "  --log-level LEVEL       debug|info|warn|error (default: info)\n"
               "  -h, --help              print this usage and exit\n"
               "  --version               print the version and exit\n"
               "Port 0 picks a free port.\n");
    fputs(kt_plugin_flags_usage(), f);
    return rc;
}

static int usage(void)
{
    return usage_to(stderr, 2);
}

static int parse_flags(int argc, char **argv, struct flags *fl)
{
    static const char *const names[] = {"--config",           "--kubeconfig", "--health-listen",
                                        "--metrics-listen",   "--portfile",   "--log-level",
                                        "--cert-dir",         "--cert-sans",  "--feature-gates",
                                        "--metrics-cert-dir", "--namespaces"};
    const char **slots[] = {&fl->config,   &fl->kubeconfig,       &fl->health,    &fl->metrics,
                            &fl->portfile, &fl->log_level,        &fl->cert_dir,  &fl->cert_sans,
                            &fl->gates,    &fl->metrics_cert_dir, &fl->namespaces};
    for (int i = 1; i < argc; i++) {
        if (kt_plugin_flags_parse(&fl->plugins, argc, argv, &i) > 0) {
            continue;
        }
        const char *a = argv[i], *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        bool known = false;
        for (size_t k = 0; k < KT_ARRAY_SIZE(names) && !known; k++) {
            if (strlen(names[k]) == n && strncmp(a, names[k], n) == 0) {
                *slots[k] = val;
                known = true;
            }
        }
        if (!known && n == 9 && strncmp(a, "--workers", 9) == 0) {
            int64_t w = 0;
            known = val && kt_str_to_i64(kt_str_c(val), 1, MAX_WORKERS, &w, NULL) == 0;
            fl->workers = (long)w;
        }
        if (!known && n == 22 && strncmp(a, "--status-batch-seconds", 22) == 0) {
            int64_t b = 0;
            known = val && kt_str_to_i64(kt_str_c(val), 0, MAX_STATUS_BATCH_S, &b, NULL) == 0;
            fl->status_batch_s = (long)b + 1;
        }
        if (!known || !val) {
            fprintf(stderr, "kt-reconciler: bad flag %s\n", a);
            return -1;
        }
        i += eq ? 0 : 1;
    }
    return 0;
}

/* ---- metrics ---- */

static void metrics_init(struct app *a)
{
    static const char *const ctl[] = {"controller"};
    static const char *const ctl_res[] = {"controller", "result"};
    static const char *const name[] = {"name"};
    struct kt_metrics *m = a->metrics;
    a->rec.m_total =
        kt_metrics_counter(m, "controller_runtime_reconcile_total",
                           "Total number of reconciliations per controller", ctl_res, 2);
    a->rec.m_errors =
        kt_metrics_counter(m, "controller_runtime_reconcile_errors_total",
                           "Total number of reconciliation errors per controller", ctl, 1);
    a->rec.m_time =
        kt_metrics_histogram(m, "controller_runtime_reconcile_time_seconds",
                             "Length of time per reconciliation per controller", ctl, 1, NULL);
    a->rec.m_depth = kt_metrics_gauge(m, "workqueue_depth", "Current depth of workqueue", name, 1);
    a->rec.m_adds = kt_metrics_counter(m, "workqueue_adds_total",
                                       "Total number of adds handled by workqueue", name, 1);
    kt_metrics_build_info(m, "reconciler");
    kt_metrics_process(m);
    /* controller-runtime's initMetrics: the controller's result and error series exist at 0
     * before its first reconcile, so rate() sees the first one. */
    static const char *const results[] = {"error", "requeue", "requeue_after", "success"};
    for (size_t i = 0; i < KT_ARRAY_SIZE(results); i++) {
        const char *lv[] = {"trainjob_controller", results[i]};
        kt_metric_add(a->rec.m_total, lv, 0);
    }
    const char *lv[] = {"trainjob_controller"};
    kt_metric_add(a->rec.m_errors, lv, 0);
}

/* Refresh the gauges that are read, not pushed: queue depth, informer counters, leadership. */
static void metrics_refresh(struct app *a)
{
    static const char *const res[] = {"resource"};
    struct kt_metric *restarts = kt_metrics_gauge(
        a->metrics, "kt_informer_watch_restarts",
        "Watches started after the first one (server timeouts, restarts, 410 relists)", res, 1);
    struct kt_metric *relists = kt_metrics_gauge(a->metrics, "kt_informer_relists_gone",
                                                 "Relists caused by 410 Gone", res, 1);
    struct kt_metric *objects =
        kt_metrics_gauge(a->metrics, "kt_informer_objects", "Objects cached", res, 1);
    struct kt_metric *leader =
        kt_metrics_gauge(a->metrics, "leader_election_master_status", "1 when this replica leads",
                         (const char *[]){"name"}, 1);
    const char *wq[] = {"trainjob_controller"};
    kt_metric_set(a->rec.m_depth, wq, (double)kt_queue_len(a->queue));
    struct kt_informer *infs[] = {
        a->rec.trainjobs,    a->rec.runtimes,          a->rec.cluster_runtimes,
        a->rec.jobsets,      a->rec.configmaps,        a->rec.secrets,
        a->rec.podgroups_sp, a->rec.podgroups_volcano, a->rec.pods};
    const char *names[] = {"trainjobs",
                           "trainingruntimes",
                           "clustertrainingruntimes",
                           "jobsets",
                           "configmaps",
                           "secrets",
                           "podgroups.scheduling.x-k8s.io",
                           "podgroups.scheduling.volcano.sh",
                           "pods"};
    for (size_t i = 0; i < KT_ARRAY_SIZE(infs); i++) {
        struct kt_informer_stats st;
        if (!infs[i]) {
            continue;
        }
        kt_informer_stats(infs[i], &st);
        const char *lv[] = {names[i]};
        kt_metric_set(restarts, lv, st.watches > 0 ? (double)(st.watches - 1) : 0);
        kt_metric_set(relists, lv, (double)st.relists_gone);
        kt_metric_set(objects, lv, (double)st.objects);
    }
    const char *ln[] = {DEFAULT_LEASE};
    kt_metric_set(leader, ln, a->leader ? (kt_leader_is_leader(a->leader) ? 1 : 0) : 1);
}

/* ---- threads ---- */

static void *loop_main(void *arg)
{
    struct app *a = arg;
    struct kt_err err = {0};
    if (kt_informer_loop_run(a->rec.loop, &err) != 0) {
        kt_log_error(LOG, "informer loop failed: %s", err.msg);
        kt_sig_stop();
    }
    return NULL;
}

static void *worker_main(void *arg)
{
    struct app *a = arg;
    struct kt_kube_client *c = kt_kube_client_new(a->kcfg);
    for (;;) {
        char *key = kt_queue_get(a->queue);
        if (!key) {
            break;
        }
        kt_rec_process(&a->rec, c, key);
        kt_queue_done(a->queue, key);
        free(key);
    }
    kt_kube_client_free(c);
    return NULL;
}

/* NULL when ready, else why in buf, naming the first informer (and namespace) that has not
 * listed and the failure that keeps it so (an operator's first question). */
static const char *ready_fn(void *arg, char *buf, size_t n)
{
    static const char prefix[] = "informers not synced: ";
    struct app *a = arg;
    if (atomic_load(&a->ready)) {
        return NULL;
    }
    snprintf(buf, n, "%s", prefix);
    if (!kt_rec_unsynced_reason(&a->rec, buf + sizeof(prefix) - 1, n - (sizeof(prefix) - 1))) {
        return "informers not synced";
    }
    return buf;
}

/* ---- setup ---- */

static long workers_of(const struct app *a)
{
    if (a->fl.workers > 0) {
        return a->fl.workers;
    }
    for (size_t i = 0; i < a->conf.group_kind_concurrency.len; i++) {
        const struct kt_config_gk *gk = &a->conf.group_kind_concurrency.items[i];
        if (strcmp(gk->group_kind, "TrainJob.trainer.kubeflow.org") == 0) {
            return gk->concurrency > MAX_WORKERS ? MAX_WORKERS : gk->concurrency;
        }
    }
    return 4;
}

/* --namespaces over watchNamespaces, then both checked alike. */
static int set_namespaces(struct app *a, struct kt_err *err)
{
    struct kt_strv *ns = &a->conf.watch_namespaces;
    struct kt_ferrs fe;
    if (a->fl.namespaces) {
        kt_strv_release(ns);
        kt_strv_init(ns);
        /* "" = every namespace; otherwise every comma separates two entries ("a," is an
         * error: an empty name). */
        for (const char *p = a->fl.namespaces; *a->fl.namespaces;) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            char *one = kt_xstrndup(p, n);
            kt_strv_push(ns, one);
            free(one);
            if (!comma) {
                break;
            }
            p = comma + 1;
        }
    }
    kt_ferrs_init(&fe);
    if (kt_config_check_namespaces(ns, &fe) > 0) {
        char *msg = kt_ferrs_string(&fe);
        kt_err_set(err, KT_EINVAL, "%s%s", a->fl.namespaces ? "--namespaces: " : "", msg);
        free(msg);
    }
    size_t bad = fe.len;
    kt_ferrs_release(&fe);
    if (bad > 0) {
        return -1;
    }
    a->rec.namespaces = (const char *const *)ns->items;
    a->rec.n_namespaces = ns->len;
    if (ns->len == 0) {
        kt_log_info(LOG, "watching all namespaces");
    }
    for (size_t i = 0; i < ns->len; i++) {
        kt_log_info(LOG, "watching namespace %s (namespace-scoped)", ns->items[i]);
    }
    return 0;
}

static int load_config(struct app *a, struct kt_err *err)
{
    if (!a->fl.config) {
        kt_config_default(&a->conf);
    } else if (kt_config_load(a->fl.config, &a->conf, err) != 0) {
        return -1;
    }
    for (size_t i = 0; i < a->conf.warnings.len; i++) {
        kt_log_warn(LOG, "%s", a->conf.warnings.items[i]);
    }
    if (a->fl.gates && kt_config_set_gates(&a->conf, a->fl.gates, err) != 0) {
        return kt_err_prefix(err, "--feature-gates");
    }
    if (set_namespaces(a, err) != 0) {
        return -1;
    }
    a->kcfg = kt_kube_config_load_rated(a->fl.kubeconfig, a->conf.client_connection.qps,
                                        a->conf.client_connection.burst, err);
    if (a->kcfg) {
        /* Nothing here reads managedFields: cut them before parsing (the informers dropped
         * them after; docs/benchmarks.md "Reconciler CPU: the decoder"). */
        kt_kube_config_drop_managed_fields(a->kcfg, true);
    }
    return a->kcfg ? 0 : -1;
}

static struct kt_httpd *serve(const struct kt_httpd_opts *o, struct kt_mauth *mauth,
                              struct kt_err *err)
{
    struct kt_httpd *h = kt_httpd_new(o, err);
    if (h && mauth) {
        kt_httpd_route(h, "*", "/*", kt_mauth_handle, mauth);
    }
    if (h && kt_httpd_start(h, err) != 0) {
        kt_httpd_free(h);
        return NULL;
    }
    return h;
}

static bool has_pair(const char *dir)
{
    char *crt = kt_xasprintf("%s/tls.crt", dir), *key = kt_xasprintf("%s/tls.key", dir);
    bool ok = access(crt, R_OK) == 0 && access(key, R_OK) == 0;
    free(crt);
    free(key);
    return ok;
}

/* A self-signed CA and serving certificate (the webhook Service's name, localhost and
 * 127.0.0.1), kept in memory for metrics.secureServing without a certificate folder, as
 * controller-runtime does: nothing on disk to leave behind, no TMPDIR needed. */
static int self_signed(struct app *a, struct kt_err *err)
{
    static const char *const sans[] = {"DNS:localhost", "IP:127.0.0.1"};
    const char *ns = kt_kube_config_namespace(a->kcfg);
    struct kt_certs_opts o = {.service = a->conf.cert_management.webhook_service_name,
                              .namespace = *ns ? ns : DEFAULT_NAMESPACE,
                              .extra_sans = sans,
                              .n_extra_sans = 2};

    if (kt_certs_generate(&o, (int64_t)time(NULL), &a->metrics_self, err) != 0) {
        kt_certs_release(&a->metrics_self);
        return -1;
    }
    explicit_bzero(a->metrics_self.ca_key, strlen(a->metrics_self.ca_key)); /* not needed */
    free(a->metrics_self.ca_key);
    a->metrics_self.ca_key = NULL;
    return 0;
}

/* The folder of the metrics certificate pair (see the file comment; borrowed from a), or
 * NULL when a self-signed pair in memory serves instead (then in a->metrics_self; when it
 * could not be made, a->metrics_self.tls_crt stays NULL and err says why). */
static const char *metrics_cert_dir(struct app *a, struct kt_err *err)
{
    if (a->fl.metrics_cert_dir) {
        return a->fl.metrics_cert_dir;
    }
    if (a->fl.cert_dir && has_pair(a->fl.cert_dir)) {
        return a->fl.cert_dir;
    }
    (void)self_signed(a, err);
    return NULL;
}

/* The metrics server: TLS with metrics.secureServing; with metrics.auth.enabled every
 * request goes through common/authz/metrics_auth.h (no built-in routes then). */
static struct kt_httpd *serve_metrics(struct app *a, const char *listen, struct kt_err *err)
{
    struct kt_httpd_opts o = {
        .name = "metrics",
        .listen = listen,
        .builtins = KT_HTTPD_METRICS | KT_HTTPD_HEALTH,
        .metrics = a->metrics,
        .ready = ready_fn,
        .ready_arg = a,
    };
    char *crt = NULL, *key = NULL;
    if (a->conf.metrics.secure_serving) {
        const char *dir = metrics_cert_dir(a, err);
        if (!dir && !a->metrics_self.tls_crt) {
            return NULL;
        }
        if (dir) {
            crt = kt_xasprintf("%s/tls.crt", dir);
            key = kt_xasprintf("%s/tls.key", dir);
            o.cert_file = crt;
            o.key_file = key;
        } else {
            o.cert_pem = a->metrics_self.tls_crt;
            o.key_pem = a->metrics_self.tls_key;
        }
        struct kt_strv warn;
        kt_strv_init(&warn);
        a->tls_priority = kt_tls_priority(&a->conf.tls, &warn);
        for (size_t i = 0; i < warn.len; i++) {
            kt_log_warn(LOG, "%s", warn.items[i]);
        }
        kt_strv_release(&warn);
        o.https_priority = a->tls_priority;
        o.threads = 2; /* a scrape's handshake need not queue behind a flood's handshakes */
        if (dir) {
            kt_log_info(LOG, "metrics over TLS with %s/tls.crt", dir);
        } else {
            kt_log_info(LOG, "metrics over TLS with a self-signed certificate (in memory)");
        }
    }
    if (a->conf.metrics.auth_enabled) {
        a->mauth_cfg = kt_kube_config_load_rated(a->fl.kubeconfig, a->conf.client_connection.qps,
                                                 a->conf.client_connection.burst, err);
        if (!a->mauth_cfg) {
            free(crt);
            free(key);
            return NULL;
        }
        a->mauth = kt_mauth_new(a->mauth_cfg, a->metrics);
        o.builtins = 0;
        o.threads = 2; /* cached answers keep flowing while a review is in flight */
        kt_log_info(LOG, "metrics: TokenReview and SubjectAccessReview on every request");
    }
    struct kt_httpd *h = serve(&o, a->mauth, err);
    free(crt);
    free(key);
    return h;
}

static int start_servers(struct app *a, struct kt_err *err)
{
    const char *health = a->fl.health ? a->fl.health : a->conf.health.probe_bind_address;
    const char *metrics = a->fl.metrics ? a->fl.metrics : a->conf.metrics.bind_address;
    const char *names[2];
    uint16_t ports[2];
    size_t n = 0;
    struct kt_httpd_opts ho = {
        .name = "health",
        .listen = health,
        .builtins = KT_HTTPD_HEALTH,
        .metrics = a->metrics,
        .ready = ready_fn,
        .ready_arg = a,
    };
    a->health_srv = serve(&ho, NULL, err);
    if (!a->health_srv) {
        return kt_err_prefix(err, "health server on %s", health);
    }
    names[n] = "health";
    ports[n++] = kt_httpd_port(a->health_srv);
    if (strcmp(metrics, "0") != 0) {
        a->metrics_srv = serve_metrics(a, metrics, err);
        if (!a->metrics_srv) {
            return kt_err_prefix(err, "metrics server on %s", metrics);
        }
        names[n] = "metrics";
        ports[n++] = kt_httpd_port(a->metrics_srv);
    }
    if (a->fl.portfile && kt_httpd_write_portfile(a->fl.portfile, names, ports, n, err) != 0) {
        return -1;
    }
    kt_log_info(LOG, "serving health=%u metrics=%u", (unsigned)ports[0],
                n > 1 ? (unsigned)ports[1] : 0u);
    return 0;
}

/* Leadership ended (the leader watchdog, renewDeadline passed): stop acting at once, whatever
 * the workers are doing, by ending the process as controller-runtime's manager does; a
 * graceful shutdown would let in-flight reconciles write while a standby takes the Lease. */
static void leadership_lost(void *arg)
{
    (void)arg;
    kt_log_error(LOG, "leadership lost: exiting now, abandoning work in flight");
    _exit(1);
}

static int start_leader(struct app *a, struct kt_err *err)
{
    const struct kt_config_leader *le = &a->conf.leader_election;
    if (!le->present || !le->leader_elect) {
        kt_log_info(LOG, "leader election disabled");
        return 0;
    }
    const char *ns =
        *le->resource_namespace ? le->resource_namespace : kt_kube_config_namespace(a->kcfg);
    struct kt_leader_opts o = {
        .ns = *ns ? ns : DEFAULT_NAMESPACE,
        .name = *le->resource_name ? le->resource_name : DEFAULT_LEASE,
        .lease_s = (double)le->lease_duration_ms / 1000.0,
        .renew_s = (double)le->renew_deadline_ms / 1000.0,
        .retry_s = (double)le->retry_period_ms / 1000.0,
        .on_lost = leadership_lost,
    };
    a->lease_cfg = kt_kube_config_load_rated(a->fl.kubeconfig, a->conf.client_connection.qps,
                                             a->conf.client_connection.burst, err);
    if (!a->lease_cfg) {
        return -1;
    }
    a->leader = kt_leader_new(a->lease_cfg, &o);
    kt_log_info(LOG, "leader election on lease=%s/%s identity=%s", o.ns, o.name,
                kt_leader_identity(a->leader));
    return kt_leader_start(a->leader, err);
}

/* The certificate rotator runs on the leader only (a single writer:
 * docs/operating.md#certificates). */
static bool leads(void *arg)
{
    struct app *a = arg;
    return !a->leader || kt_leader_is_leader(a->leader);
}

/* certs/rotator.h: --cert-dir = local mode (inject that folder's CA), else the
 * Configuration's certManagement (enable: own the Secret; disabled: nothing to run).
 * --cert-sans adds serving-certificate SANs in managed mode (local and test use). */
static int start_rotator(struct app *a, struct kt_err *err)
{
    struct kt_rotator_opts o;
    const char *ns = kt_kube_config_namespace(a->kcfg);
    struct kt_strv sans;

    kt_certs_rotator_opts_from_config(&o, &a->conf, *ns ? ns : DEFAULT_NAMESPACE, a->fl.cert_dir);
    if (o.mode == KT_ROTATOR_EXTERNAL) {
        kt_log_info(LOG, "certManagement disabled: certificates and caBundle are external");
        return 0;
    }
    kt_strv_init(&sans);
    for (const char *p = a->fl.cert_sans; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n > 0) {
            char *one = kt_xstrndup(p, n);
            kt_strv_push(&sans, one);
            free(one);
        }
        p += n + (comma ? 1 : 0);
    }
    o.extra_sans = (const char *const *)sans.items;
    o.n_extra_sans = sans.len;
    a->rotator = kt_certs_rotator_new(a->kcfg, &o, KT_CERTS_ROTATOR_PERIOD_S, leads, a);
    kt_strv_release(&sans);
    return kt_certs_rotator_start(a->rotator, err);
}

/* Feature gate TrainJobStatus (docs/internals/upstream.md#trainjobstatus-plugin): trainer pods are
 * pointed at the status server behind certManagement.webhookServiceName in this namespace, with its
 * CA copied from certManagement.webhookSecretName. */
static void set_status_server(struct app *a)
{
    if (!kt_config_gate(&a->conf, KT_GATE_TRAINJOB_STATUS, false)) {
        return;
    }
    const char *ns = kt_kube_config_namespace(a->kcfg);
    a->status = (struct kt_status_server){
        .service = a->conf.cert_management.webhook_service_name,
        .namespace_ = *ns ? ns : DEFAULT_NAMESPACE,
        .secret = a->conf.cert_management.webhook_secret_name,
        .port = a->conf.status_server.port,
    };
    a->rec.fw.status_server = &a->status;
    kt_log_info(LOG, "feature gate TrainJobStatus: trainer pods report to %s.%s.svc:%d",
                a->status.service, a->status.namespace_, (int)a->status.port);
}

/* Feature gate DynamicResourceAllocation (docs/api.md#dynamic-resource-allocation): build the
 * KEP-2782 claims; a claim's device count is read live (ResourceClaimTemplate, ResourceClaim). */
static void set_dra(struct app *a)
{
    a->rec.fw.dra = kt_config_gate(&a->conf, KT_GATE_DRA, false);
    if (a->rec.fw.dra) {
        kt_log_info(LOG, "feature gate DynamicResourceAllocation: resourceClaimsPerNode is built");
    }
}

static int setup(struct app *a, struct kt_err *err)
{
    if (kt_plugin_set_load(&a->plugins, &a->fl.plugins, err) != 0) {
        return -1;
    }
    if (load_config(a, err) != 0) {
        return -1;
    }
    a->metrics = kt_metrics_new();
    a->queue = kt_queue_new(0.005, 1000.0, NULL);
    a->rec.cfg = a->kcfg;
    a->rec.queue = a->queue;
    a->rec.metrics = a->metrics;
    a->rec.status_batch_s =
        a->fl.status_batch_s > 0 ? (double)(a->fl.status_batch_s - 1) : DEFAULT_STATUS_BATCH_S;
    metrics_init(a);
    a->rec.fw = a->plugins.fw; /* kt_rec_init starts the plugins' watches */
    struct kt_kube_client *c = kt_kube_client_new(a->kcfg);
    int rc = kt_rec_init(&a->rec, c, err);
    a->rec.fw = a->plugins.fw;
    /* With leader election, count lifecycle events only once this replica leads (run()). */
    kt_tjm_set_counting(a->rec.tjm,
                        !a->conf.leader_election.present || !a->conf.leader_election.leader_elect);
    set_status_server(a);
    set_dra(a);
    kt_kube_client_free(c);
    if (rc != 0 || start_servers(a, err) != 0) {
        return -1;
    }
    if (pthread_create(&a->loop_thread, NULL, loop_main, a) != 0) {
        return kt_err_set(err, KT_EINTERNAL, "cannot start the informer thread");
    }
    a->loop_started = true;
    a->nworkers = workers_of(a);
    if (start_leader(a, err) != 0) {
        return -1;
    }
    return start_rotator(a, err);
}

/* ---- run and stop ---- */

/* The start-up scan for unlabelled objects (kt_rec_scan_unlabelled), then the workers: the
 * scan runs once this replica may work, so it sees what a previous leader left. */
static void start_workers(struct app *a)
{
    struct kt_kube_client *c = kt_kube_client_new(a->kcfg);
    kt_rec_scan_unlabelled(&a->rec, c);
    kt_kube_client_free(c);
    for (long i = 0; i < a->nworkers; i++) {
        if (pthread_create(&a->workers[i], NULL, worker_main, a) != 0) {
            kt_log_error(LOG, "cannot start worker %ld", i);
            break;
        }
        a->started_workers++;
    }
    kt_log_info(LOG, "started %ld workers", a->started_workers);
}

/* Watch for a stop signal (common/base/sig.h), readiness and leadership until a signal or a
 * lost lease. Returns the exit status. A signal cuts the 100 ms wait short; every 100 ms, not 20:
 * at 20 the ticks and their metrics refresh took ~5% of the CPU of a busy reconciler (make scale,
 * perf). */
static int run(struct app *a)
{
    int status = 0, sig = kt_sig_wait(0); /* one that came during setup */
    while (sig == 0) {
        if (!atomic_load(&a->ready) && kt_rec_synced(&a->rec)) {
            atomic_store(&a->ready, 1);
            kt_log_info(LOG, "caches synced");
        }
        bool may_work = !a->leader || kt_leader_is_leader(a->leader);
        kt_tjm_set_counting(a->rec.tjm, may_work);
        if (atomic_load(&a->ready) && may_work && a->started_workers == 0) {
            start_workers(a);
        }
        if (a->leader && kt_leader_lost(a->leader)) {
            status = 1;
            break;
        }
        metrics_refresh(a);
        kt_rec_trim_idle(&a->rec);
        sig = kt_sig_wait(100);
    }
    if (sig) {
        kt_log_info(LOG, "signal %d: shutting down", sig);
    }
    return status;
}

static void shutdown_all(struct app *a)
{
    if (a->health_srv) {
        kt_httpd_quiesce(a->health_srv);
    }
    if (a->queue) {
        kt_queue_shutdown(a->queue);
    }
    for (long i = 0; i < a->started_workers; i++) {
        pthread_join(a->workers[i], NULL);
    }
    kt_certs_rotator_free(a->rotator);
    a->rotator = NULL;
    if (a->leader) {
        kt_leader_stop(a->leader);
    }
    if (a->loop_started) {
        kt_informer_loop_stop(a->rec.loop);
        pthread_join(a->loop_thread, NULL);
    }
    kt_httpd_free(a->metrics_srv);
    kt_httpd_free(a->health_srv);
    kt_mauth_free(a->mauth);
    kt_kube_config_free(a->mauth_cfg);
    kt_certs_release(&a->metrics_self); /* zeroes the key */
    free(a->tls_priority);
    kt_leader_free(a->leader);
    kt_kube_config_free(a->lease_cfg);
    if (a->rec.loop) {
        kt_rec_release(&a->rec);
    }
    kt_queue_free(a->queue);
    kt_plugin_set_release(&a->plugins);
    kt_plugin_flags_release(&a->fl.plugins);
    kt_metrics_free(a->metrics);
    kt_kube_config_free(a->kcfg);
    kt_config_release(&a->conf);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    struct kt_err err = {0};
    enum kt_log_level lvl;
    int status = 1;

    /* Two malloc arenas, not glibc's 8 per core: each thread that allocates would otherwise
     * get its own, and the workers' short-lived reconcile garbage stays spread over them
     * (measured: idle RSS 12.0 -> 11.1 MB; the workers rarely contend, their time is spent
     * waiting for the API server). Before any thread starts. */
    mallopt(M_ARENA_MAX, 2);
    kt_mem_init();
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        return usage_to(stdout, 0);
    }
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("kt-reconciler %s (API " KT_API_VERSION ", Kubeflow Trainer %s)\n", KT_BUILD_VERSION,
               KT_UPSTREAM_VERSION);
        return 0;
    }
    if (parse_flags(argc, argv, &a.fl) != 0) {
        return usage();
    }
    if (a.fl.log_level) {
        if (kt_log_level_parse(a.fl.log_level, &lvl) != 0) {
            return usage();
        }
        kt_log_set_level(lvl);
    }
    kt_sig_block(); /* before any thread: every thread inherits the mask */
    if (setup(&a, &err) != 0) {
        kt_log_error(LOG, "startup failed: %s", err.msg);
    } else {
        status = run(&a);
    }
    shutdown_all(&a);
    kt_log_info(LOG, "stopped status=%d", status);
    return status;
}
