/* tests/cluster/images/pause/pause.c - the sandbox ("pause") process of the test node's pods:
 * holds the pod's namespaces, reaps the zombies of a shared PID namespace, and exits 0 on
 * SIGTERM or SIGINT. Built static (`cc -static -O2`) so the image holds this one file.
 * It does not log, read files or handle any other signal (SIGHUP etc. keep their defaults,
 * which PID 1 ignores). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

/* Reap every child that has exited; never blocks. */
static void reap(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
    /* Blocked signals stay pending for sigwaitinfo, also as PID 1 (which ignores
     * signals that have the default action). */
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
        perror("pause: sigprocmask");
        return 1;
    }
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);

        if (sig < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("pause: sigwaitinfo");
            return 1;
        }
        switch (sig) {
        case SIGCHLD:
            reap();
            break;
        case SIGTERM:
        case SIGINT:
            return 0;
        default:
            break;
        }
    }
}
