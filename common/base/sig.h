/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/sig.h - how both daemons stop: SIGTERM and SIGINT are blocked in every thread
 * and taken by the main thread alone, synchronously (sigtimedwait), so no handler runs at an
 * arbitrary point of another thread and no system call elsewhere sees EINTR. SIGPIPE is
 * ignored (a closed peer is an EPIPE, not a death). docs/internals/architecture.md#threads.
 *
 * Thread-safety: kt_sig_block before any thread is created (threads inherit the mask);
 * kt_sig_wait from the main thread only; kt_sig_stop from any thread. Nothing is allocated. */
#ifndef KT_SIG_H
#define KT_SIG_H

/* Block SIGTERM and SIGINT in the calling thread and ignore SIGPIPE. */
void kt_sig_block(void);

/* Wait up to timeout_ms (0: just look; < 0: no limit) for SIGTERM or SIGINT. The signal's
 * number, or 0 when none came in time. */
int kt_sig_wait(int timeout_ms);

/* Ask the main thread to stop as a SIGTERM would (e.g. a thread whose work failed). */
void kt_sig_stop(void);

#endif
