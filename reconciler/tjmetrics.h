/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/tjmetrics.h - TrainJob-level Prometheus metrics in the kubeflow_trainer_
 * namespace (docs/metrics.md): lifecycle counters, TrainJobs by state, the time from creation
 * to the JobSet, to its first ready Job and to Complete/Failed, and per-phase reconcile
 * duration and errors.
 *
 * Names and labels follow upstream's proposal (kubeflow/trainer PR #3433): label `runtime` is
 * the runtime kind, as there; `runtime_name` and `framework` are added. Label values come
 * from bounded sets only (namespaces, runtime kinds and names, frameworks, condition
 * reasons, states): never a TrainJob, JobSet or pod name.
 *
 * Events come from the TrainJob and JobSet informers' handlers, which all run on the
 * informer loop thread: kt_tjm_trainjob_* and kt_tjm_jobset_* must be called from that one
 * thread only. kt_tjm_phase and kt_tjm_set_counting may be called from any thread. Every
 * function but kt_tjm_new accepts a NULL t and then does nothing. Lifecycle
 * counters and histograms count only while counting is on (the replica leads, or there is no
 * leader election), so two replicas never count the same event; the state gauge is kept on
 * every replica. Transitions are taken from the informer's old and new objects, so a
 * reconcile that reads a stale cache or a restart never counts one twice; TrainJobs created
 * before this process started are not counted as created. */
#ifndef KT_RECONCILER_TJMETRICS_H
#define KT_RECONCILER_TJMETRICS_H

#include <jansson.h>
#include <stdbool.h>

#include "common/net/metrics.h"

#define KT_TJM_PHASE_BUILD "Build"
#define KT_TJM_PHASE_POST "PostExecution"

/* The framework of runtime kind/ns/name into buf (n bytes), e.g. "torch"; "" when unknown.
 * Called on the informer loop thread. */
typedef void kt_tjm_framework_fn(void *ctx, const char *kind, const char *ns, const char *name,
                                 char *buf, size_t n);

struct kt_tjm;

/* Register the families in m (borrowed; must outlive the result), start_time = this
 * process's start in epoch seconds. framework may be NULL ("" for every TrainJob). Caller
 * owns the result; free with kt_tjm_free(). Never returns NULL. */
struct kt_tjm *kt_tjm_new(struct kt_metrics *m, double start_time, kt_tjm_framework_fn *framework,
                          void *ctx);
/* Accepts NULL. */
void kt_tjm_free(struct kt_tjm *t);

/* Turn the lifecycle counters and histograms on or off (on after kt_tjm_new). Any thread. */
void kt_tjm_set_counting(struct kt_tjm *t, bool on);

/* A TrainJob informer add (initial list included) at epoch time now. Does not retain obj. */
void kt_tjm_trainjob_add(struct kt_tjm *t, const json_t *obj, double now);
/* A TrainJob informer update: counts Complete, Failed, Suspended and resumed transitions. */
void kt_tjm_trainjob_update(struct kt_tjm *t, const json_t *old_obj, const json_t *new_obj,
                            double now);
/* A TrainJob informer delete. */
void kt_tjm_trainjob_delete(struct kt_tjm *t, const json_t *obj);
/* A JobSet informer add: observes creation -> JobSet for its TrainJob (once per TrainJob,
 * only for JobSets created after this process started). A JobSet already ready when added
 * (the list at our start) marks its TrainJob's first ready Job as past, unobserved. */
void kt_tjm_jobset_add(struct kt_tjm *t, const json_t *jobset, double now);
/* A JobSet informer update: when no replicated job of old_js had a ready Job and one of
 * new_js has (kt_tjm_jobset_ready), observes creation -> first Job ready for its TrainJob:
 * once per TrainJob (per uid), only for JobSets created after this process started, only
 * while counting. Pods are not watched: JobSet's `ready` is the number of child Jobs whose
 * ready plus succeeded pods reach the Job's pod count, so this is the first moment every pod
 * of one child Job was Ready (or already done), not the first pod's. Does not retain either. */
void kt_tjm_jobset_update(struct kt_tjm *t, const json_t *old_js, const json_t *new_js, double now);
/* A replicated job of jobset reports ready >= 1 in status.replicatedJobsStatus. */
bool kt_tjm_jobset_ready(const json_t *jobset);

/* One reconcile phase (KT_TJM_PHASE_*) took seconds; failed counts an error. Any thread. */
void kt_tjm_phase(struct kt_tjm *t, const char *phase, double seconds, bool failed);

/* The state a TrainJob is in: "Failed", "Complete", "Suspended", "Running" (a job of its
 * JobSet has active pods) or "Created". Borrowed from a static table. */
const char *kt_tjm_state(const json_t *trainjob);

#endif
