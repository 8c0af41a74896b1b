/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/held.h - the TrainJob status writes held back to be folded into a later one
 * (docs/operating.md#status-writes).
 *
 * A reconcile whose status change only adds startTime or moves jobsStatus
 * (kt_rec_status_write_can_wait) does not write it at once: the first such reconcile records
 * when it began holding, and the startTime it chose, here; the change is written by the first
 * reconcile that has anything else to write (a condition: Complete, Failed, Suspended ...),
 * or by the one that finds the batch window passed since then (the reconcile requeues itself
 * for that moment). So startTime goes out with the first JobSet status, and a JobSet's
 * created/active/ready steps within the window go out as one write, as upstream's slower
 * queue folds them. The startTime written is the held one, so holding changes when it is
 * written, not its value.
 *
 * An entry lives from the first held change to the write that carries it: a few seconds, not
 * one per TrainJob. Thread-safe (one mutex). */
#ifndef KT_RECONCILER_HELD_H
#define KT_RECONCILER_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kt_held;

/* Caller owns the result; free with kt_held_free(). */
struct kt_held *kt_held_new(void);
/* Accepts NULL. */
void kt_held_free(struct kt_held *h);

/* Whether owner ("ns/name") with uid has a held write: *since = when the holding began (epoch
 * seconds), *start = the startTime it chose (epoch seconds, -1 = none). An entry of another
 * uid (a re-created TrainJob) is dropped. Without an entry *since = *start = -1. */
bool kt_held_get(struct kt_held *h, const char *owner, const char *uid, double *since,
                 int64_t *start);
/* Begin holding owner's write at now with startTime start (-1 = none); an entry already there
 * for uid is kept as it is (the window counts from the first held change). */
void kt_held_hold(struct kt_held *h, const char *owner, const char *uid, double now, int64_t start);
/* Drop owner's entry (its write went out, or the TrainJob is gone). */
void kt_held_forget(struct kt_held *h, const char *owner);
/* Entries held (tests). */
size_t kt_held_len(struct kt_held *h);

#endif
