/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/reconcile.h - the TrainJob controller: informers, event handlers and the
 * reconcile of one key (docs/internals/upstream.md#trainjob-reconcile to #runtime-finalizers).
 * Business rules live in the framework (common/); this module only reads the caches, calls the
 * pipeline, applies and writes status.
 *
 * Keys: "ns/name" for TrainJobs; "tr:ns/name" and "ctr:name" for runtimes (only the legacy
 * finalizer removal, docs/internals/upstream.md#runtime-finalizers); "pod:ns/name" for
 * unschedulable JobSet pods (a FailedScheduling event on their TrainJob, podevents.h).
 *
 * Threads: the informers' handlers run on the informer loop thread and only enqueue; any
 * number of workers may call kt_rec_reconcile concurrently, each with its own kube client
 * (the queue guarantees one worker per key). */
#ifndef KT_RECONCILER_RECONCILE_H
#define KT_RECONCILER_RECONCILE_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/framework/framework.h"
#include "common/kube/informer.h"
#include "common/kube/kube.h"
#include "common/net/metrics.h"
#include "applied.h"
#include "snapcache.h"
#include "written.h"
#include "apply.h"
#include "queue.h"
#include "tjmetrics.h"
#include "unlabelled.h"

#define KT_LEGACY_FINALIZER "trainer.kubeflow.org/resource-in-use"
#define KT_REC_EXTRA_MAX 16

/* Wall clock in epoch seconds (injected so the deadline logic is testable). */
struct kt_rec_clock {
    double (*now)(void *ctx);
    void *ctx;
};

struct kt_evlimit;

struct kt_rec {
    struct kt_kube_config *cfg; /* borrowed */
    struct kt_framework fw;
    struct kt_queue *queue; /* borrowed */
    /* Borrowed: watch only these namespaces (a namespace-scoped install: namespaced kinds get
     * one LIST+WATCH per namespace; ClusterTrainingRuntimes and RuntimeClasses stay
     * cluster-wide, read only). n_namespaces 0 = every namespace. */
    const char *const *namespaces;
    size_t n_namespaces;
    struct kt_rec_clock clock;
    double start_time; /* epoch seconds: TrainJobs created earlier may own unlabelled objects */
    struct kt_informer *trainjobs, *runtimes, *cluster_runtimes;
    struct kt_informer *jobsets, *configmaps, *secrets;
    struct kt_informer *podgroups_sp, *podgroups_volcano; /* NULL when the CRD is missing */
    /* Metadata only, and only when a PodGroup CRD is served
     * (docs/internals/upstream.md#coscheduling-and-volcano): their events enqueue the suspended
     * TrainJobs they affect. NULL otherwise. */
    struct kt_informer *limitranges, *runtimeclasses;
    /* Unbound pods of JobSets, slimmed (podevents.h); not part of readiness. */
    struct kt_informer *pods;
    struct kt_evlimit *sched_limit; /* owned; FailedScheduling de-duplication and rate */
    /* Owned kinds the plugins watch beyond the built-in ones (resolved by discovery). */
    struct kt_informer *extra[KT_REC_EXTRA_MAX];
    const struct kt_kube_gvr *extra_gvr[KT_REC_EXTRA_MAX]; /* borrowed from kinds */
    size_t n_extra;
    struct kt_rec_kinds *kinds; /* discovered kinds (plugin watches, applied objects) */
    struct kt_applied *applied; /* what this process applied last (applied.h) */
    struct kt_written *written; /* statuses written that the cache lacks yet (written.h) */
    struct kt_held *held;       /* status writes held back to be folded (held.h) */
    /* How long a status write that only adds startTime or moves jobsStatus may be held back
     * (held.h, docs/operating.md#status-writes); 0 = every change written at once. */
    double status_batch_s;
    struct kt_snapcache *snaps; /* runtime snapshots parsed (snapcache.h) */
    /* Owned: the unlabelled objects TrainJobs controlled when the workers started
     * (unlabelled.h, kt_rec_scan_unlabelled); NULL = no scan (or it failed): a legacy
     * TrainJob then reads live every object its informer lacks. */
    struct kt_unlabelled *unlabelled;
    _Atomic long long last_work_ms; /* monotonic ms of the last reconcile not yet trimmed after */
    struct kt_informer_loop *loop;
    /* metrics (borrowed from the registry) */
    struct kt_metric *m_total, *m_errors, *m_time, *m_depth, *m_adds;
    /* Borrowed: the registry for the TrainJob metrics (tjmetrics.h); NULL = none. */
    struct kt_metrics *metrics;
    struct kt_tjm *tjm; /* owned; made by kt_rec_init when metrics is set, else NULL */
    /* Event de-duplication (like client-go's correlator, simplified): a Warning identical to
     * the last one recorded for the same TrainJob within KT_EVENT_DEDUP_S is not re-posted,
     * so the retry backoff does not flood the namespace with events. */
    pthread_mutex_t ev_mu;
    struct kt_rec_event_slot {
        uint64_t key_hash, msg_hash;
        double at;
    } ev_slots[256];
};

#define KT_EVENT_DEDUP_S 600.0

/* Discover optional CRDs (PodGroups), create the informers and register them with a new
 * loop: the built-in ones, LimitRanges and RuntimeClasses when a PodGroup CRD is served, and
 * one label-selected informer per other kind a plugin of r->fw watches (a kind discovery
 * cannot resolve is logged and skipped). r->cfg, r->queue and the metrics must be set;
 * r->fw zeroed = the built-in plugins; r->clock NULL fn = real time. Returns -1 only when
 * discovery itself fails. */
KT_MUST_CHECK int kt_rec_init(struct kt_rec *r, struct kt_kube_client *c, struct kt_err *err);
/* Free the informers and the loop (the loop must have returned). */
void kt_rec_release(struct kt_rec *r);
/* True once every informer but the pod one has listed. Thread-safe. */
bool kt_rec_synced(struct kt_rec *r);
/* When some informer has not synced: its name, namespace and failure into buf (n bytes,
 * NUL-terminated, may be cut; see kt_informer_unsynced_reason) and true. Any thread. */
bool kt_rec_unsynced_reason(struct kt_rec *r, char *buf, size_t n);

/* Once, just before the workers start (r's loop running and synced): restart the "legacy"
 * clock (TrainJobs created before now may control unlabelled objects) and list the unlabelled
 * objects a TrainJob controls, for every kind an owned informer covers, in r's namespaces
 * (unlabelled.h). A failed LIST is logged and leaves r->unlabelled NULL: live reads as before.
 * c is used on this thread only. */
void kt_rec_scan_unlabelled(struct kt_rec *r, struct kt_kube_client *c);

/* Reconcile one key. *requeue_s gets a delay (> 0) when the key must be looked at again
 * later (active deadline). -1 + err asks for a rate-limited retry. */
KT_MUST_CHECK int kt_rec_reconcile(struct kt_rec *r, struct kt_kube_client *c, const char *key,
                                   double *requeue_s, struct kt_err *err);

/* Give freed heap back to the system (malloc_trim) once the queue has been empty for a second
 * after some work; cheap otherwise. Any thread (main's tick). */
void kt_rec_trim_idle(struct kt_rec *r);

/* Run one key through kt_rec_reconcile with metrics and requeueing; the worker loop body. */
void kt_rec_process(struct kt_rec *r, struct kt_kube_client *c, const char *key);

#endif
