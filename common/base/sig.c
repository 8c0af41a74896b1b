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

/* Milliseconds from now to the CLOCK_MONOTONIC deadline; 0 once it has passed. */
static long ms_left(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (long)(deadline->tv_sec - now.tv_sec) * 1000L +
              (deadline->tv_nsec - now.tv_nsec) / 1000000L;
    return ms > 0 ? ms : 0;
}

int kt_sig_wait(int timeout_ms)
{
    sigset_t set;
    stop_set(&set);
    if (timeout_ms < 0) {
        int sig;
        while (sigwait(&set, &sig) != 0) {
        }
        return sig;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    long left = timeout_ms;
    for (;;) {
        struct timespec ts = {.tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000L};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig > 0) {
            return sig;
        }
        if (errno == EAGAIN) {
            return 0;
        }
        /* EINTR (another signal's handler ran): wait again for what is left of the timeout,
         * so the whole wait stays within timeout_ms however many handlers run. */
        left = ms_left(&deadline);
    }
}

void kt_sig_stop(void)
{
    kill(getpid(), SIGTERM);
}
