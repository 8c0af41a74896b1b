/* tests/tools/flood.c - a connection flood against a TLS server, for the admission tier's
 * flood check (issue 20).
 *
 * Usage: flood PORT IDLE_SRC N_IDLE SLOW_SRC N_SLOW SECONDS
 * For SECONDS, keeps N_IDLE plain TCP connections from address IDLE_SRC open to
 * 127.0.0.1:PORT (never sending a byte; each one the server closes is reopened), and N_SLOW
 * TLS connections from SLOW_SRC that send an HTTP request one byte a second (reopened when
 * the server closes them; idle ones at most 500 a second). Source addresses are loopback
 * addresses (127.0.0.2, ...). Prints "flood: started" once every connection was tried and
 * "flood: opened N reopened R" at the end. Exits 0 unless the arguments are bad. Raises its
 * own descriptor limit to the hard limit. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_IDLE 5000
#define MAX_SLOW 1000
#define REOPEN_PER_CHECK 50 /* idle reconnects per 100 ms: 500/s, enough pressure, bounded CPU */

static const char REQUEST[] = "POST /validate-trainer-kubeflow-org-v1alpha1-trainjob HTTP/1.1\r\n"
                              "Host: 127.0.0.1\r\nContent-Type: application/json\r\n";

struct slow {
    int fd;
    gnutls_session_t s;
    size_t sent;
};

static unsigned long g_opened, g_reopened;

static int open_from(const char *src, unsigned port, bool nonblock)
{
    struct sockaddr_in a = {0}, b = {0};
    struct timeval tv = {5, 0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        return -1;
    }
    b.sin_family = AF_INET;
    inet_pton(AF_INET, src, &b.sin_addr);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (bind(fd, (struct sockaddr *)&b, sizeof(b)) < 0) {
        close(fd);
        return -1;
    }
    if (nonblock) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    g_opened++;
    return fd;
}

static void slow_open(struct slow *c, gnutls_certificate_credentials_t cred, const char *src,
                      unsigned port)
{
    c->fd = open_from(src, port, false);
    c->s = NULL;
    c->sent = 0;
    if (c->fd < 0) {
        return;
    }
    gnutls_init(&c->s, GNUTLS_CLIENT);
    gnutls_set_default_priority(c->s);
    gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_transport_set_int(c->s, c->fd);
    if (gnutls_handshake(c->s) < 0) {
        gnutls_deinit(c->s);
        c->s = NULL;
        close(c->fd);
        c->fd = -1;
    }
}

static void slow_close(struct slow *c)
{
    if (c->s) {
        gnutls_deinit(c->s);
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    c->s = NULL;
    c->fd = -1;
}

/* One more byte on every slow connection; reopen the ones that failed. */
static void slow_tick(struct slow *cs, unsigned n, gnutls_certificate_credentials_t cred,
                      const char *src, unsigned port)
{
    for (unsigned i = 0; i < n; i++) {
        struct slow *c = &cs[i];
        if (c->fd >= 0 && c->sent < sizeof(REQUEST) - 1 &&
            gnutls_record_send(c->s, REQUEST + c->sent, 1) == 1) {
            c->sent++;
            continue;
        }
        slow_close(c);
        slow_open(c, cred, src, port);
        g_reopened++;
    }
}

/* Reopen the idle connections the server closed (readable = EOF or reset). */
static void idle_check(int *fds, unsigned n, const char *src, unsigned port)
{
    static struct pollfd pf[MAX_IDLE];
    unsigned reopened = 0;
    char b;

    for (unsigned i = 0; i < n; i++) {
        pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    }
    poll(pf, n, 0);
    for (unsigned i = 0; i < n && reopened < REOPEN_PER_CHECK; i++) {
        if (fds[i] < 0 || (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
            if (fds[i] >= 0 && read(fds[i], &b, 1) > 0) {
                continue;
            }
            if (fds[i] >= 0) {
                close(fds[i]);
            }
            fds[i] = open_from(src, port, true);
            g_reopened++;
            reopened++;
        }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static int idle[MAX_IDLE];
    static struct slow slow[MAX_SLOW];
    gnutls_certificate_credentials_t cred;
    struct rlimit rl;
    unsigned port, n_idle, n_slow;
    double end, next_tick;

    if (argc != 7) {
        fprintf(stderr, "usage: flood PORT IDLE_SRC N_IDLE SLOW_SRC N_SLOW SECONDS\n");
        return 2;
    }
    port = (unsigned)strtoul(argv[1], NULL, 10);
    n_idle = (unsigned)strtoul(argv[3], NULL, 10);
    n_slow = (unsigned)strtoul(argv[5], NULL, 10);
    end = now_s() + strtod(argv[6], NULL);
    if (!port || n_idle > MAX_IDLE || n_slow > MAX_SLOW) {
        fprintf(stderr, "flood: bad arguments\n");
        return 2;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    gnutls_global_init();
    gnutls_certificate_allocate_credentials(&cred);
    for (unsigned i = 0; i < n_idle; i++) {
        idle[i] = open_from(argv[2], port, true);
    }
    for (unsigned i = 0; i < n_slow; i++) {
        slow_open(&slow[i], cred, argv[4], port);
    }
    printf("flood: started\n");
    fflush(stdout);
    next_tick = now_s();
    while (now_s() < end) {
        idle_check(idle, n_idle, argv[2], port);
        if (now_s() >= next_tick) {
            slow_tick(slow, n_slow, cred, argv[4], port);
            next_tick += 1.0;
        }
        usleep(100 * 1000);
    }
    printf("flood: opened %lu reopened %lu\n", g_opened, g_reopened);
    for (unsigned i = 0; i < n_slow; i++) {
        slow_close(&slow[i]);
    }
    for (unsigned i = 0; i < n_idle; i++) {
        if (idle[i] >= 0) {
            close(idle[i]);
        }
    }
    gnutls_certificate_free_credentials(cred);
    gnutls_global_deinit();
    return 0;
}
