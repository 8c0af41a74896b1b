/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/store.h - what the webhook knows about the cluster: runtimes and JobSets.
 *
 * Two sources (docs/internals/architecture.md#threads):
 *  - a cluster: TrainingRuntimes and ClusterTrainingRuntimes from two informers (one thread,
 *    list+watch), published after every change as an immutable, reference-counted snapshot
 *    that request threads acquire without ever waiting for the watcher; a runtime missing
 *    from the snapshot gets one live GET before the validator says "must be created"; a
 *    JobSet is read live, only when the validator asks for it (a runtimePatches change);
 *  - files (--objects PATH): runtimes and any other objects (JobSets) read once at start.
 *
 * Thread model: kt_wstore_start/stop/free from the main thread; everything else from any
 * thread. JSON handed to request threads is never shared with another thread while it is
 * mutable, and no request thread touches its reference counts. */
#ifndef KT_WEBHOOK_STORE_H
#define KT_WEBHOOK_STORE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/base/err.h"
#include "common/framework/framework.h"
#include "common/kube/kube.h"

/* An immutable view of the cached objects. Read-only for everyone; do not json_incref or
 * json_decref anything inside (request threads share it). */
struct kt_wsnap {
    atomic_long refs;
    json_t *runtimes; /* array of TrainingRuntime / ClusterTrainingRuntime objects */
    json_t *objects;  /* array of other objects (files mode only; empty with a cluster) */
    /* runtimes[i] decoded once when the snapshot is built (kt_validate_decode_runtime), so
     * requests do not copy and decode it again; an entry whose obj is NULL failed to decode
     * and is decoded per request (which reports the error). */
    struct kt_runtime *decoded;
};

struct kt_wstore;

/* Read runtimes and other objects from PATH (a YAML/JSON file, or a directory searched
 * recursively for *.yaml, *.yml, *.json); runtimes get the CRD defaults. Caller owns the
 * result; free with kt_wstore_free(). NULL + err (KT_EIO, KT_EPARSE) on failure. */
struct kt_wstore *kt_wstore_from_files(const char *path, struct kt_err *err);

/* A store fed from the cluster cfg points at (cfg must outlive the store). Not running until
 * kt_wstore_start(). Caller owns the result; free with kt_wstore_free(). */
struct kt_wstore *kt_wstore_from_cluster(struct kt_kube_config *cfg);

/* Start the watcher thread (cluster mode; a no-op for files). */
KT_MUST_CHECK int kt_wstore_start(struct kt_wstore *s, struct kt_err *err);

/* Stop and join the watcher thread. Idempotent. */
void kt_wstore_stop(struct kt_wstore *s);

/* Stops the store if needed and frees it. Every snapshot must have been released. Accepts
 * NULL. */
void kt_wstore_free(struct kt_wstore *s);

/* True once both runtime informers delivered their first LIST (always true for files). */
bool kt_wstore_synced(struct kt_wstore *s);
/* When not synced: which runtime informer has not listed and why into buf (n bytes,
 * NUL-terminated, may be cut; see kt_informer_unsynced_reason) and true. Any thread. */
bool kt_wstore_unsynced_reason(struct kt_wstore *s, char *buf, size_t n);

/* The current snapshot, with a reference the caller owns; release with kt_wsnap_release().
 * Never NULL. */
struct kt_wsnap *kt_wstore_acquire(struct kt_wstore *s);
void kt_wsnap_release(struct kt_wsnap *snap);

/* A TrainJob's runtimeRef, read in the TrainJob's namespace. Strings borrowed for the call. */
struct kt_wstore_runtime_ref {
    const char *api_group, *kind, *name;
    const char *ns; /* the TrainJob's; unused for a ClusterTrainingRuntime */
};

/* The runtimes the TrainJob validator should see for a TrainJob referencing ref:
 * snap->runtimes when the runtime is there; else (cluster mode) the result of one live GET as a
 * one-element array, or an empty array when the API server says it does not exist (never for a
 * group other than trainer.kubeflow.org). *owned gets the array the caller must json_decref
 * (NULL when the snapshot's own array is returned). -1 + err when the GET failed otherwise. */
KT_MUST_CHECK int kt_wstore_runtimes_for(struct kt_wstore *s, const struct kt_wsnap *snap,
                                         const struct kt_wstore_runtime_ref *ref,
                                         const json_t **runtimes, json_t **owned,
                                         struct kt_err *err);

/* A per-request framework view over the store (JobSets and other objects). Fill with
 * kt_wview_init, release with kt_wview_release; the objects it returns are valid until then.
 * An API error other than NotFound is kept in err_set/err for the caller to report. */
struct kt_wview {
    struct kt_view view;
    struct kt_wstore *store;
    const struct kt_wsnap *snap;
    json_t *fetched; /* owned array of live GET results */
    bool err_set;
    struct kt_err err;
};
void kt_wview_init(struct kt_wview *v, struct kt_wstore *s, const struct kt_wsnap *snap);
void kt_wview_release(struct kt_wview *v);

#endif
