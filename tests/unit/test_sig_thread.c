/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_sig_thread.c - the daemons' stop signals (common/base/sig.h): taken synchronously
 * once blocked, nothing when none is pending, kt_sig_stop from another thread, SIGPIPE
 * ignored. */
#include "tests/test.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "common/base/sig.h"

static void *stopper(void *arg)
{
    (void)arg;
    kt_sig_stop();
    return NULL;
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
    return test_report();
}
