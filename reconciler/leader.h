/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/leader.h - leader election with a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection does (docs/internals/upstream.md#manager-process: Lease `trainer.kubeflow.org`, 15
 * s / 10 s / 2 s).
 *
 * A background thread tries to acquire the Lease every retry period; a Lease held by another
 * identity is taken over only when its record has not changed for lease_duration (measured on
 * our own monotonic clock, as client-go does). The leader renews every retry period; its Lease
 * requests time out after a quarter of renew_deadline, and a watchdog thread ends leadership
 * (kt_leader_lost, then opts.on_lost) the moment renew_deadline has passed since the last
 * successful renewal was sent, whatever the election thread's requests are doing: a standby
 * takes the Lease only lease_duration after it saw that renewal, so two replicas never lead at
 * once (lease_duration > renew_deadline, as the Configuration requires). On a graceful stop
 * the leader releases the Lease (empty holder, duration 1 s) so a standby takes over at once.
 * Thread-safe. */
#ifndef KT_RECONCILER_LEADER_H
#define KT_RECONCILER_LEADER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "common/base/err.h"
#include "common/kube/kube.h"

struct kt_leader_opts {
    const char *ns;       /* Lease namespace */
    const char *name;     /* Lease name */
    const char *identity; /* holderIdentity; NULL = "<hostname>_<random hex>" */
    double lease_s, renew_s, retry_s;
    /* Called once, from the watchdog thread, when leadership is lost; NULL = none. The
     * reconciler exits there (controller-runtime's manager stops at once too). */
    void (*on_lost)(void *arg);
    void *on_lost_arg;
};

struct kt_leader;

/* Copies opts. Does not take cfg (it must outlive the elector). Caller owns the result; free
 * with kt_leader_free(). */
struct kt_leader *kt_leader_new(struct kt_kube_config *cfg, const struct kt_leader_opts *opts);
/* Start the election thread. KT_EINTERNAL when the thread cannot start. */
KT_MUST_CHECK int kt_leader_start(struct kt_leader *l, struct kt_err *err);
/* Block until this process leads (true) or kt_leader_stop / a lost lease (false). */
bool kt_leader_wait(struct kt_leader *l);
/* True while this process leads: it acquired the Lease and renewed it within renew_deadline. */
bool kt_leader_is_leader(struct kt_leader *l);
/* True once leadership was held and then lost (the process should exit). */
bool kt_leader_lost(struct kt_leader *l);
/* The identity in use. Borrowed from l. */
const char *kt_leader_identity(const struct kt_leader *l);
/* Stop the thread; a leader releases the Lease first (so a successor need not wait for it to
 * expire). Idempotent. */
void kt_leader_stop(struct kt_leader *l);
/* Stop (releasing) if needed and free. Accepts NULL. */
void kt_leader_free(struct kt_leader *l);

#endif
