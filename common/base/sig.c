/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/sig.c - see sig.h. */
#include "common/base/sig.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
}

void kt_sig_block(void)
{
    sigset_t set;
    stop_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int kt_sig_wait(int timeout_ms)
{
    sigset_t set;
    stop_set(&set);
    for (;;) {
        int sig;
        if (timeout_ms < 0) {
            if (sigwait(&set, &sig) == 0) {
                return sig;
            }
            continue;
        }
        struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
        sig = sigtimedwait(&set, NULL, &ts);
        if (sig > 0) {
            return sig;
        }
        if (errno == EAGAIN) {
            return 0;
        }
        /* EINTR (another signal's handler ran): wait again; the time left is not tracked, a
         * tick of the caller's loop is at most one timeout longer. */
    }
}

void kt_sig_stop(void)
{
    kill(getpid(), SIGTERM);
}
