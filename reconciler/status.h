/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/status.h - the pure status steps of the TrainJob reconcile
 * (docs/internals/upstream.md#trainjob-reconcile steps 6-9, docs/internals/upstream.md#conditions):
 * conditions, the active deadline, the status merge patch and the event note. No I/O and no clock:
 * "now" is always an argument (epoch seconds), so the deadline logic is testable without waiting.
 */
#ifndef KT_RECONCILER_STATUS_H
#define KT_RECONCILER_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/types.h"

#define KT_COND_COMPLETE "Complete"
#define KT_COND_FAILED "Failed"
#define KT_COND_SUSPENDED "Suspended"
#define KT_REASON_DEADLINE "DeadlineExceeded"
#define KT_REASON_NOT_SUPPORTED "TrainingRuntimeNotSupported"
#define KT_MSG_DEADLINE "TrainJob exceeded its active deadline"
#define KT_EVENT_REASON_FAILED "TrainJobResourcesCreationFailed"
/* kt addition (upstream #3671): a non-terminal condition saying why the TrainJob's objects
 * cannot be built or applied; removed by the next successful build. */
#define KT_COND_CREATION_FAILED "ResourcesCreationFailed"

/* "2026-01-02T03:04:05Z" for epoch seconds t (UTC, second precision like metav1.Time). */
void kt_rec_format_time(int64_t t, char out[32]);
/* Epoch seconds of an RFC 3339 time (fraction ignored, "Z" or +hh:mm), or -1. */
int64_t kt_rec_parse_time(const char *s);

/* True when status.conditions has type with status "True". status may be NULL. */
bool kt_rec_cond_true(const json_t *status, const char *type);
/* The condition of that type, or NULL. Borrowed from status. */
json_t *kt_rec_cond_find(const json_t *status, const char *type);
/* meta.SetStatusCondition: add the condition (lastTransitionTime = now) or update reason,
 * message and status in place, moving lastTransitionTime only when status changes.
 * Creates status.conditions when needed. */
void kt_rec_set_condition(json_t *status, const char *type, const char *cond_status,
                          const char *reason, const char *message, int64_t now);
/* meta.RemoveStatusCondition: drop the condition of that type, if any. */
void kt_rec_remove_condition(json_t *status, const char *type);
/* After a failed build or apply (err): ResourcesCreationFailed=True, reason
 * TrainJobResourcesCreationFailed (the Warning event's reason), message the event's note
 * (kt_rec_event_note). A conflict (KT_ECONFLICT) is a race the retry resolves, not a reason
 * the user must see: status is left as it is. */
void kt_rec_set_creation_failed(json_t *status, const struct kt_err *err, int64_t now);
/* Complete=True or Failed=True. */
bool kt_rec_finished(const json_t *status);

/* docs/internals/upstream.md#trainjob-reconcile step 6: Suspended/True when suspend,
 * Suspended/False/Resumed when it was True. */
void kt_rec_set_suspended(json_t *status, bool suspend, int64_t now);

/* docs/internals/upstream.md#trainjob-reconcile step 7: status becomes plugin_status (when not
 * NULL) with an existing Failed/DeadlineExceeded condition kept. Steals plugin_status; returns the
 * status to use (status itself or plugin_status). Caller owns the result. Steals status too. */
json_t *kt_rec_take_plugin_status(json_t *status, json_t *plugin_status);

enum kt_rec_deadline {
    KT_DEADLINE_NONE,     /* no deadline applies now */
    KT_DEADLINE_PENDING,  /* *remaining_s set (>= 1) */
    KT_DEADLINE_EXCEEDED, /* Failed/DeadlineExceeded was set in status */
};
/* docs/internals/upstream.md#trainjob-reconcile step 8 at time now (epoch seconds, fraction
 * allowed) with deadline the activeDeadlineSeconds that applies (the TrainJob's own, or its
 * runtime's runPolicy default: kt_rec_resolve). tj gives suspend and metadata.creationTimestamp;
 * status is the status being built (its Suspended=False lastTransitionTime restarts the clock). */
enum kt_rec_deadline kt_rec_check_deadline(const struct kt_trainjob *tj, struct kt_opt_i64 deadline,
                                           json_t *status, double now, double *remaining_s);

/* ---- provisional lifecycle fields (KEP-2899, tracker kubeflow/trainer#4052) ---- */

/* The value that applies to a TrainJob: its own field when set, else the runtime's
 * spec.runPolicy default (runtime NULL = no runtime known), else absent. */
struct kt_opt_i64 kt_rec_resolve(struct kt_opt_i64 job, const struct kt_opt_i64 *runtime);

/* status.startTime / status.completionTime with Job/JobSet semantics at time now:
 * finished (Complete or Failed True) -> completionTime set once, to the terminal condition's
 * lastTransitionTime when that is not after now (else now: a skewed clock cannot push it into
 * the future), startTime left as it is or, when absent, set to start when start >= 0 (a start
 * held back until the finish: it ran); suspended -> startTime removed (the clock stops);
 * running -> startTime set when absent (the first start, and again after a resume), to start
 * when start >= 0 (the value an earlier reconcile chose and held back: held.h), else to now. */
void kt_rec_set_times(json_t *status, bool suspend, int64_t now, int64_t start);

/* Whether the status write turning orig into st may be held back and folded into a later one
 * (docs/operating.md#status-writes): true when all it does is add startTime and/or change
 * jobsStatus. Anything else - a condition (Complete, Failed, Suspended, Resumed,
 * ResourcesCreationFailed), completionTime, startTime removed or moved, any other field - is
 * written at once. False when orig and st are equal (nothing to write). NULL counts as {}. */
bool kt_rec_status_write_can_wait(json_t *orig, json_t *st);

enum kt_rec_ttl {
    KT_TTL_NONE,    /* not finished, or no TTL applies: never deleted */
    KT_TTL_PENDING, /* *remaining_s set (> 0) */
    KT_TTL_EXPIRED, /* the TrainJob is due for deletion */
};
/* Whether a finished TrainJob's TTL (ttl, already resolved) has passed at now. The finish
 * time is the earliest lastTransitionTime of a True Complete/Failed condition, bounded by
 * status.completionTime (written with our clock) and by now, so clock skew between the
 * JobSet controller and kt cannot postpone the deletion past completionTime + ttl. ttl 0 =
 * expired at once; an unparsable time counts as now. */
enum kt_rec_ttl kt_rec_check_ttl(const json_t *status, struct kt_opt_i64 ttl, double now,
                                 double *remaining_s);

/* The RFC 7386 merge patch turning from into to (objects recursed, everything else
 * replaced, removed members null). NULL from/to count as {}. Caller owns the result. */
json_t *kt_rec_merge_patch(json_t *from, json_t *to);

/* "TrainJob resources reconciliation failed: <msg>" with msg cut to 950 characters and
 * " ..." appended when msg is longer than 950 bytes (upstream's %.950v rule). Caller owns the
 * result; free with free(). */
char *kt_rec_event_note(const char *msg);

#endif
