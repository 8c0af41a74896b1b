/* SPDX-License-Identifier: Apache-2.0 */
/* certs/rotator_run.c - the thread that ticks certs/rotator.c for a daemon.
 *
 * Only scheduling and logging: each pass is kt_certs_rotator_tick with the wall clock. It
 * waits on a condition variable so kt_certs_rotator_free stops it at once. */
#include "rotator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/log.h"
#include "common/base/mem.h"

#define LOG "certs"
#define RETRY_S 2.0
#define FOLLOWER_POLL_S 1.0

struct kt_certs_rotator {
    struct kt_kube_config *cfg;
    struct kt_rotator_opts o; /* its strings point into owned[] and sans */
    char *owned[6];
    char **sans;
    double period_s;
    bool (*leads)(void *arg);
    void *arg;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop; /* under mu */
    atomic_ulong passes;
};

static char *dup_or_null(const char *s)
{
    return s ? kt_xstrdup(s) : NULL;
}

struct kt_certs_rotator *kt_certs_rotator_new(struct kt_kube_config *cfg,
                                              const struct kt_rotator_opts *o, double period_s,
                                              bool (*leads)(void *arg), void *arg)
{
    struct kt_certs_rotator *r = kt_xcalloc(1, sizeof(*r));
    pthread_condattr_t ca;

    r->cfg = cfg;
    r->o = *o;
    r->o.namespace = r->owned[0] = dup_or_null(o->namespace);
    r->o.secret_name = r->owned[1] = dup_or_null(o->secret_name);
    r->o.service = r->owned[2] = dup_or_null(o->service);
    r->o.dir = r->owned[3] = dup_or_null(o->dir);
    r->o.validating = r->owned[4] = dup_or_null(o->validating);
    r->o.mutating = r->owned[5] = dup_or_null(o->mutating);
    r->sans = kt_xcalloc(o->n_extra_sans + 1, sizeof(char *));
    for (size_t i = 0; i < o->n_extra_sans; i++) {
        r->sans[i] = kt_xstrdup(o->extra_sans[i]);
    }
    r->o.extra_sans = (const char *const *)r->sans;
    r->period_s = period_s > 0 ? period_s : KT_CERTS_ROTATOR_PERIOD_S;
    r->leads = leads;
    r->arg = arg;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&r->passes, 0);
    return r;
}

static const char *verdict_name(enum kt_certs_verdict v)
{
    switch (v) {
    case KT_CERTS_RENEW_SERVER:
        return "renewed the serving certificate";
    case KT_CERTS_RENEW_ALL:
        return "issued a new CA and serving certificate";
    default:
        return "valid";
    }
}

static const char *mode_name(enum kt_rotator_mode m)
{
    return m == KT_ROTATOR_LOCAL ? "local" : m == KT_ROTATOR_EXTERNAL ? "external" : "managed";
}

static void log_pass(const struct kt_certs_rotator *r, const struct kt_rotator_report *rep)
{
    if (rep->secret_created || rep->secret_updated) {
        kt_log_info(LOG, "secret %s/%s %s: %s (%s)",
                    r->o.namespace ? r->o.namespace : KT_CERTS_DEFAULT_NAMESPACE,
                    r->o.secret_name ? r->o.secret_name : KT_CERTS_SECRET_NAME,
                    rep->secret_created ? "created" : "updated", verdict_name(rep->verdict),
                    rep->why);
    }
    if (rep->webhooks_updated > 0) {
        kt_log_info(LOG, "caBundle injected into %d webhook configuration(s) mode=%s",
                    rep->webhooks_updated, mode_name(r->o.mode));
    }
    if (rep->webhooks_missing > 0) {
        kt_log_debug(LOG, "%d webhook configuration(s) not installed yet", rep->webhooks_missing);
    }
}

/* Wait up to s seconds or until stopped. Returns true when stopped. */
static bool wait_s(struct kt_certs_rotator *r, double s)
{
    struct timespec until;
    bool stop;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)s;
    until.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) != 0) {
            break;
        }
    }
    stop = r->stop;
    pthread_mutex_unlock(&r->mu);
    return stop;
}

static void *run(void *arg)
{
    struct kt_certs_rotator *r = arg;
    struct kt_kube_client *c = kt_kube_client_new(r->cfg);
    double next = FOLLOWER_POLL_S;

    kt_log_info(LOG, "certificate rotator started mode=%s period=%.0fs", mode_name(r->o.mode),
                r->period_s);
    do {
        struct kt_rotator_report rep;
        struct kt_err err = {0};

        if (r->leads && !r->leads(r->arg)) {
            next = FOLLOWER_POLL_S;
            continue;
        }
        if (kt_certs_rotator_tick(c, &r->o, (int64_t)time(NULL), &rep, &err) != 0) {
            kt_log_warn(LOG, "certificate pass failed mode=%s: %s", mode_name(r->o.mode), err.msg);
            next = RETRY_S;
            continue;
        }
        log_pass(r, &rep);
        atomic_fetch_add(&r->passes, 1);
        /* Configurations not installed yet: look again soon, so installing them (or a
         * local run registering them) gets its caBundle within seconds. */
        next = rep.webhooks_missing > 0 ? RETRY_S : r->period_s;
    } while (!wait_s(r, next));
    kt_kube_client_free(c);
    return NULL;
}

int kt_certs_rotator_start(struct kt_certs_rotator *r, struct kt_err *err)
{
    if (pthread_create(&r->thread, NULL, run, r) != 0) {
        return kt_err_set(err, KT_EINTERNAL, "cannot start the certificate rotator thread");
    }
    r->started = true;
    return 0;
}

unsigned long kt_certs_rotator_passes(struct kt_certs_rotator *r)
{
    return atomic_load(&r->passes);
}

void kt_certs_rotator_free(struct kt_certs_rotator *r)
{
    if (!r) {
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (r->started) {
        pthread_join(r->thread, NULL);
    }
    for (size_t i = 0; i < r->o.n_extra_sans; i++) {
        free(r->sans[i]);
    }
    free(r->sans);
    for (size_t i = 0; i < KT_ARRAY_SIZE(r->owned); i++) {
        free(r->owned[i]);
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
