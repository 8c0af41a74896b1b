/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/leader.c - see leader.h. */
#include "leader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/json.h"
#include "common/base/log.h"
#include "common/base/mem.h"

#define LOG "leader"
#define LEASE_TIMEOUT_MIN_MS 200L
#define LEASE_TIMEOUT_MAX_MS 5000L

struct kt_leader {
    struct kt_kube_config *cfg;
    char *ns, *name, *identity;
    double lease_s, renew_s, retry_s;
    void (*on_lost)(void *arg);
    void *on_lost_arg;
    pthread_t thread, watchdog;
    bool started, watchdog_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, leader, lost;
    double last_renew; /* when the last successful renewal was sent (monotonic s) */
    /* election thread only: */
    char *observed; /* "holder|renewTime" of the last record seen */
    double observed_at;
    json_t *mine; /* the Lease as our last successful write returned it, or NULL */
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *default_identity(void)
{
    char host[256] = "kt-reconciler";
    unsigned char rnd[8] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd)) {
            memset(rnd, 0, sizeof(rnd));
        }
        fclose(f);
    }
    if (gethostname(host, sizeof(host) - 1) != 0) {
        snprintf(host, sizeof(host), "kt-reconciler");
    }
    return kt_xasprintf("%s_%02x%02x%02x%02x%02x%02x%02x%02x", host, rnd[0], rnd[1], rnd[2], rnd[3],
                        rnd[4], rnd[5], rnd[6], rnd[7]);
}

struct kt_leader *kt_leader_new(struct kt_kube_config *cfg, const struct kt_leader_opts *o)
{
    struct kt_leader *l = kt_xcalloc(1, sizeof(*l));
    pthread_condattr_t ca;
    l->cfg = cfg;
    l->ns = kt_xstrdup(o->ns);
    l->name = kt_xstrdup(o->name);
    l->identity = o->identity ? kt_xstrdup(o->identity) : default_identity();
    l->lease_s = o->lease_s;
    l->renew_s = o->renew_s;
    l->retry_s = o->retry_s;
    l->on_lost = o->on_lost;
    l->on_lost_arg = o->on_lost_arg;
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    return l;
}

const char *kt_leader_identity(const struct kt_leader *l)
{
    return l->identity;
}

/* What an attempt on the Lease does: take or renew it, or give it up. */
enum lease_op { LEASE_HOLD, LEASE_RELEASE };

/* The spec we write: holder = identity, renewTime = now, acquireTime and leaseTransitions
 * carried over while we keep holding it. */
static json_t *lease_spec(struct kt_leader *l, const json_t *old_spec, enum lease_op op)
{
    bool release = op == LEASE_RELEASE;
    char now[40];
    kt_kube_time_now(now, KT_KUBE_TIME_MICRO);
    bool ours = strcmp(kt_json_str(old_spec, "holderIdentity", ""), l->identity) == 0;
    int64_t transitions = kt_json_int(old_spec, "leaseTransitions", 0);
    json_t *spec =
        json_pack("{s:s, s:I, s:s, s:s, s:I}", "holderIdentity", release ? "" : l->identity,
                  "leaseDurationSeconds", (json_int_t)(release ? 1 : (int64_t)l->lease_s),
                  "renewTime", now, "acquireTime", now, "leaseTransitions",
                  (json_int_t)(old_spec && !ours && !release ? transitions + 1 : transitions));
    if (ours && !release && json_object_get(old_spec, "acquireTime")) {
        json_object_set(spec, "acquireTime", json_object_get(old_spec, "acquireTime"));
    }
    return spec;
}

static int create_lease(struct kt_leader *l, struct kt_kube_client *c)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "coordination.k8s.io/v1",
                            "kind", "Lease", "metadata", "name", l->name, "namespace", l->ns,
                            "spec", lease_spec(l, NULL, LEASE_HOLD));
    struct kt_err err = {0};
    int rc = kt_kube_create(c, &KT_GVR_LEASES, l->ns, obj, NULL, &err);
    if (rc != 0) {
        kt_log_info(LOG, "creating lease %s/%s: %s", l->ns, l->name, err.msg);
    }
    json_decref(obj);
    return rc;
}

/* Note a change of the record; true when the current holder's lease has expired. */
static bool observe(struct kt_leader *l, const json_t *spec)
{
    char *rec = kt_xasprintf("%s|%s", kt_json_str(spec, "holderIdentity", ""),
                             kt_json_str(spec, "renewTime", ""));
    if (!l->observed || strcmp(l->observed, rec) != 0) {
        free(l->observed);
        l->observed = rec;
        l->observed_at = mono_now();
    } else {
        free(rec);
    }
    return l->observed_at + l->lease_s <= mono_now();
}

/* PUT lease with spec as our record; on success l->mine is what the server stored. */
static bool write_lease(struct kt_leader *l, struct kt_kube_client *c, json_t *lease,
                        enum lease_op op, struct kt_err *err)
{
    json_t *stored = NULL;
    bool ok;

    json_object_set_new(lease, "spec", lease_spec(l, json_object_get(lease, "spec"), op));
    ok = kt_kube_update(c,
                        &(struct kt_kube_ref){.gvr = &KT_GVR_LEASES, .ns = l->ns, .name = l->name},
                        lease, &stored, err) == 0;
    if (!ok || op != LEASE_HOLD) { /* failed or released: no last write to renew from */
        json_decref(stored);
        stored = NULL;
    }
    json_decref(l->mine);
    l->mine = stored; /* owned by l */
    return ok;
}

/* The leader's renewal in one request, as client-go's fast path: our last write, with its
 * resourceVersion as the precondition, renewed. Any error (a conflict: someone else wrote the
 * Lease) leaves the full read-then-write attempt to the caller. */
static bool renew_in_place(struct kt_leader *l, struct kt_kube_client *c)
{
    struct kt_err err = {0};
    json_t *lease;
    bool ok;

    if (!l->mine || !kt_leader_is_leader(l)) {
        return false;
    }
    lease = json_deep_copy(l->mine);
    ok = write_lease(l, c, lease, LEASE_HOLD, &err);
    if (!ok) {
        kt_log_info(LOG, "renewing lease %s/%s in place: %s; reading it", l->ns, l->name, err.msg);
    }
    json_decref(lease);
    return ok;
}

/* One attempt to acquire or renew (or release); true on success. */
static bool try_lease(struct kt_leader *l, struct kt_kube_client *c, enum lease_op op)
{
    bool release = op == LEASE_RELEASE;
    json_t *lease = NULL;
    struct kt_err err = {0};
    bool ok = false;
    if (op == LEASE_HOLD && renew_in_place(l, c)) {
        return true;
    }
    if (kt_kube_get(c, &KT_GVR_LEASES, l->ns, l->name, &lease, &err) != 0) {
        if (err.code == KT_ENOENT && !release) {
            return create_lease(l, c) == 0;
        }
        kt_log_info(LOG, "reading lease %s/%s: %s", l->ns, l->name, err.msg);
        return false;
    }
    json_t *spec = json_object_get(lease, "spec");
    const char *holder = kt_json_str(spec, "holderIdentity", "");
    bool expired = observe(l, spec);
    bool ours = strcmp(holder, l->identity) == 0;
    if ((release && !ours) || (!ours && *holder && !expired)) {
        goto out;
    }
    if (!write_lease(l, c, lease, op, &err)) {
        kt_log_info(LOG, "updating lease %s/%s: %s", l->ns, l->name, err.msg);
        goto out;
    }
    ok = true;
out:
    json_decref(lease);
    return ok;
}

/* With mu held: leading and renewed within renew_deadline as of now. */
static bool leading_locked(const struct kt_leader *l, double now)
{
    return l->leader && !l->lost && now < l->last_renew + l->renew_s;
}

/* With mu held: leadership is over for good. */
static void lose_locked(struct kt_leader *l)
{
    l->leader = false;
    l->lost = true;
    pthread_cond_broadcast(&l->cv);
}

/* A renewal (or the acquisition) sent at t0 succeeded. False when leadership was already
 * lost (the watchdog fired, or renew_deadline passed before this success arrived). */
static bool note_renewal(struct kt_leader *l, double t0)
{
    bool was_leader, ok = true;

    pthread_mutex_lock(&l->mu);
    was_leader = l->leader;
    if (l->lost || (was_leader && !leading_locked(l, mono_now()))) {
        ok = false;
    } else {
        l->last_renew = t0;
        l->leader = true;
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    if (ok && !was_leader) {
        kt_log_info(LOG, "became leader lease=%s/%s identity=%s", l->ns, l->name, l->identity);
    }
    return ok;
}

/* The watchdog: ends leadership renew_deadline after the last successful renewal. */
static void *watchdog_main(void *arg)
{
    struct kt_leader *l = arg;
    bool fired = false;

    pthread_mutex_lock(&l->mu);
    while (!l->stop && !l->lost) {
        if (!l->leader) {
            pthread_cond_wait(&l->cv, &l->mu);
            continue;
        }
        double deadline = l->last_renew + l->renew_s;
        if (mono_now() >= deadline) {
            lose_locked(l);
            fired = true;
            break;
        }
        struct timespec ts = {.tv_sec = (time_t)deadline,
                              .tv_nsec = (long)((deadline - (double)(time_t)deadline) * 1e9)};
        pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    }
    pthread_mutex_unlock(&l->mu);
    if (fired) {
        kt_log_error(LOG,
                     "leader election lost lease=%s/%s: not renewed within renewDeadline %.3gs",
                     l->ns, l->name, l->renew_s);
        if (l->on_lost) {
            l->on_lost(l->on_lost_arg);
        }
    }
    return NULL;
}

/* Wait retry_s unless stopped; true when stopping. */
static bool pause_retry(struct kt_leader *l)
{
    pthread_mutex_lock(&l->mu);
    double t = mono_now() + l->retry_s;
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - (double)(time_t)t) * 1e9)};
    while (!l->stop && mono_now() < t) {
        pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    }
    bool stop = l->stop;
    pthread_mutex_unlock(&l->mu);
    return stop;
}

/* A quarter of renew_deadline: a candidate's request timeout, everyone's connect timeout. */
static long lease_timeout_ms(const struct kt_leader *l)
{
    long ms = (long)(l->renew_s * 1000.0 / 4.0);

    return ms < LEASE_TIMEOUT_MIN_MS   ? LEASE_TIMEOUT_MIN_MS
           : ms > LEASE_TIMEOUT_MAX_MS ? LEASE_TIMEOUT_MAX_MS
                                       : ms;
}

/* How long one request of an attempt may take. A leader's may run until its renew deadline,
 * as client-go's do: the watchdog ends leadership then whatever the request is doing, and an
 * API server slow under load but still answering within the deadline keeps its leader (with a
 * quarter of renew_deadline per request, a server that took 3 s a request lost every renewal).
 * A candidate's: a quarter of renew_deadline, so that a few attempts fit in one. */
static long attempt_timeout_ms(struct kt_leader *l)
{
    long ms = lease_timeout_ms(l);

    pthread_mutex_lock(&l->mu);
    if (l->leader && !l->lost) {
        long left = (long)((l->last_renew + l->renew_s - mono_now()) * 1000.0);
        ms = left > ms ? left : ms;
    }
    pthread_mutex_unlock(&l->mu);
    return ms;
}

static void *run(void *arg)
{
    struct kt_leader *l = arg;
    struct kt_kube_client *c = kt_kube_client_new(l->cfg);

    /* Once leadership is lost no Lease call is made again; the thread only waits for
     * kt_leader_stop (the reconciler exits from on_lost meanwhile). */
    do {
        double t0 = mono_now();
        kt_kube_client_set_timeouts(c, attempt_timeout_ms(l), lease_timeout_ms(l));
        if (!kt_leader_lost(l) && try_lease(l, c, LEASE_HOLD)) {
            (void)note_renewal(l, t0); /* false: lost meanwhile, seen on the next turn */
        }
    } while (!pause_retry(l));
    kt_kube_client_set_timeouts(c, lease_timeout_ms(l), lease_timeout_ms(l));
    if (kt_leader_is_leader(l) && try_lease(l, c, LEASE_RELEASE)) {
        kt_log_info(LOG, "released lease %s/%s", l->ns, l->name);
    }
    kt_kube_client_free(c);
    return NULL;
}

int kt_leader_start(struct kt_leader *l, struct kt_err *err)
{
    if (pthread_create(&l->watchdog, NULL, watchdog_main, l) != 0) {
        return kt_err_set(err, KT_EINTERNAL, "cannot start the leader watchdog thread");
    }
    l->watchdog_started = true;
    if (pthread_create(&l->thread, NULL, run, l) != 0) {
        return kt_err_set(err, KT_EINTERNAL, "cannot start the leader election thread");
    }
    l->started = true;
    return 0;
}

bool kt_leader_wait(struct kt_leader *l)
{
    pthread_mutex_lock(&l->mu);
    while (!l->leader && !l->stop && !l->lost) {
        pthread_cond_wait(&l->cv, &l->mu);
    }
    bool leader = l->leader;
    pthread_mutex_unlock(&l->mu);
    return leader;
}

bool kt_leader_is_leader(struct kt_leader *l)
{
    pthread_mutex_lock(&l->mu);
    bool v = leading_locked(l, mono_now());
    pthread_mutex_unlock(&l->mu);
    return v;
}

bool kt_leader_lost(struct kt_leader *l)
{
    pthread_mutex_lock(&l->mu);
    bool v = l->lost;
    pthread_mutex_unlock(&l->mu);
    return v;
}

void kt_leader_stop(struct kt_leader *l)
{
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (l->started) {
        pthread_join(l->thread, NULL);
        l->started = false;
    }
    if (l->watchdog_started) {
        pthread_join(l->watchdog, NULL);
        l->watchdog_started = false;
    }
}

void kt_leader_free(struct kt_leader *l)
{
    if (!l) {
        return;
    }
    kt_leader_stop(l);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->observed);
    json_decref(l->mine);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
}
