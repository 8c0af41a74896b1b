/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/podevents.h - "why is my TrainJob Pending?": the scheduler's verdict on a
 * TrainJob's pods, re-posted as a Warning event on the TrainJob itself.
 *
 * Beyond upstream (upstream issue #2713; docs/compatibility.md): no condition
 * and no API change, only core/v1 Events. When kube-scheduler marks a pod of a JobSet that a
 * TrainJob owns PodScheduled=False with reason Unschedulable, the TrainJob gets
 *
 *   type Warning, reason FailedScheduling (the scheduler's own event reason on the pod),
 *   message: replicatedJob "<name>": <the scheduler's condition message>
 *
 * de-duplicated per (TrainJob uid, message) for KT_SCHED_EVENT_DEDUP_S and rate-limited per
 * TrainJob (a token bucket: KT_SCHED_EVENT_BURST events, then one per
 * KT_SCHED_EVENT_REFILL_S).
 *
 * The pod informer (reconcile.c) selects only unbound JobSet pods (label
 * KT_JOBSET_NAME_LABEL, field selector KT_POD_FIELD_SELECTOR: a pod that binds leaves the
 * selection) and stores what kt_pod_slim keeps. Its handlers enqueue "pod:ns/name" keys; a
 * worker calls kt_rec_pod_event, which reads the caches again (level-based: a pod that has
 * scheduled meanwhile posts nothing). */
#ifndef KT_RECONCILER_PODEVENTS_H
#define KT_RECONCILER_PODEVENTS_H

#include <jansson.h>
#include <stdbool.h>

#include "common/base/err.h"
#include "common/kube/informer.h"
#include "common/kube/kube.h"

/* Labels JobSet v0.12.0 puts on every pod it creates (api/jobset/v1alpha2 JobSetNameKey,
 * JobSetUIDKey, ReplicatedJobNameKey). */
#define KT_JOBSET_NAME_LABEL "jobset.sigs.k8s.io/jobset-name"
#define KT_JOBSET_UID_LABEL "jobset.sigs.k8s.io/jobset-uid"
#define KT_JOBSET_RJOB_LABEL "jobset.sigs.k8s.io/replicatedjob-name"
#define KT_POD_FIELD_SELECTOR "spec.nodeName="
/* The reporting component of every Event the reconciler posts (here and reconcile.c). */
#define KT_EVENT_COMPONENT "trainer-controller-manager"
#define KT_POD_KEY_PREFIX "pod:"
#define KT_EVENT_REASON_FAILED_SCHEDULING "FailedScheduling"

#define KT_SCHED_EVENT_DEDUP_S 600.0
#define KT_SCHED_EVENT_BURST 5.0
#define KT_SCHED_EVENT_REFILL_S 60.0
#define KT_SCHED_NOTE_MAX 1024 /* bytes; the events.k8s.io note limit */

/* Informer transform: keep apiVersion, kind, metadata.{name,namespace,uid,resourceVersion},
 * the three JobSet labels above and the PodScheduled condition. Steals pod; returns the
 * slim object (caller owns it). */
json_t *kt_pod_slim(json_t *pod, void *ud);

/* The message of pod's PodScheduled condition when it is status False with reason
 * Unschedulable ("" when it has none), else NULL. Borrowed from pod. */
const char *kt_pod_unschedulable(const json_t *pod);

/* The event message for a pod of replicated job rjob (NULL or "": left out) that the
 * scheduler could not place with message msg, cut to at most KT_SCHED_NOTE_MAX bytes on a
 * UTF-8 boundary (" ..." marks a cut). Caller owns the result; free with free(). */
char *kt_pod_sched_note(const char *rjob, const char *msg);

/* The de-duplicating rate limiter. Fixed-size tables indexed by hashes: a collision forgets
 * the older entry (at worst one repeated event), memory stays bounded. Thread-safe. */
struct kt_evlimit;

/* Caller owns the result; free with kt_evlimit_free(). */
struct kt_evlimit *kt_evlimit_new(void);
/* Accepts NULL. */
void kt_evlimit_free(struct kt_evlimit *l);
/* True when an event with msg may be posted for the object uid at time now (seconds, any
 * epoch, non-decreasing): not posted in the last KT_SCHED_EVENT_DEDUP_S and a token is left
 * in uid's bucket. A true answer records the post and takes the token. */
bool kt_evlimit_allow(struct kt_evlimit *l, const char *uid, const char *msg, double now);

/* Post the FailedScheduling event for the cached pod ns/name if it is still unschedulable,
 * its JobSet is cached (so labelled by us) with the uid the pod names, that JobSet's
 * controller is the cached TrainJob of the same name and uid, and the limiter allows it.
 * Best effort: failures are logged, never retried. */
struct kt_evlimit;
/* What kt_rec_pod_event reads of the reconciler (reconcile.h fills it per call; podevents.c
 * does not know struct kt_rec, so the two files do not include each other). All borrowed. */
struct kt_podevent_src {
    struct kt_informer *pods; /* NULL: no pod cache, nothing to do */
    struct kt_informer *jobsets;
    struct kt_informer *trainjobs;
    struct kt_evlimit *sched_limit;
};
void kt_rec_pod_event(const struct kt_podevent_src *r, struct kt_kube_client *c, const char *ns,
                      const char *name, double now);

#endif
