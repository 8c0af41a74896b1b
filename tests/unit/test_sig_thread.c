/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_sig_thread.c - the daemons' stop signals (common/base/sig.h): taken synchronously
 * once blocked, nothing when none is pending, kt_sig_stop from another thread, SIGPIPE
 * ignored, and a timed wait that ends although other signals' handlers keep interrupting it. */
#include "tests/test.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "common/base/sig.h"

static void *stopper(void *arg)
{
    (void)arg;
    kt_sig_stop();
    return NULL;
}

static atomic_int interrupts;
static atomic_bool waited;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&interrupts, 1);
}

/* Interrupts the main thread with SIGUSR1 every 2 ms until its wait has returned: a wait that
 * restarted its whole timeout on each EINTR would never end. */
static void *interrupter(void *arg)
{
    pthread_t main_thread = *(pthread_t *)arg;
    while (!atomic_load(&waited)) {
        pthread_kill(main_thread, SIGUSR1);
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 2000000L}, NULL);
    }
    return NULL;
}

static void check_bounded_under_interrupts(void)
{
    struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: the wait sees EINTR */
    sigemptyset(&sa.sa_mask);
    CHECK_EQ_INT(sigaction(SIGUSR1, &sa, NULL), 0);
    pthread_t self = pthread_self(), t;
    CHECK_EQ_INT(pthread_create(&t, NULL, interrupter, &self), 0);
    CHECK_EQ_INT(kt_sig_wait(100), 0); /* returns, with no stop signal, despite the interrupts */
    atomic_store(&waited, true);
    pthread_join(t, NULL);
    CHECK(atomic_load(&interrupts) > 0);
    kill(getpid(), SIGTERM); /* and a stop signal still wins over the interrupts */
    CHECK_EQ_INT(kt_sig_wait(100), SIGTERM);
    signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
    kt_sig_block();
    CHECK_EQ_INT(kt_sig_wait(0), 0);  /* nothing pending */
    CHECK_EQ_INT(kt_sig_wait(20), 0); /* nothing in 20 ms */
    kill(getpid(), SIGTERM);
    CHECK_EQ_INT(kt_sig_wait(1000), SIGTERM);
    CHECK_EQ_INT(kt_sig_wait(0), 0); /* taken once */
    kill(getpid(), SIGINT);
    CHECK_EQ_INT(kt_sig_wait(-1), SIGINT);
    pthread_t t;
    CHECK_EQ_INT(pthread_create(&t, NULL, stopper, NULL), 0);
    pthread_join(t, NULL);
    CHECK_EQ_INT(kt_sig_wait(1000), SIGTERM);
    kill(getpid(), SIGPIPE); /* ignored: the process lives on */
    CHECK_EQ_INT(kt_sig_wait(0), 0);
    check_bounded_under_interrupts();
    return test_report();
}
