/* SPDX-License-Identifier: Apache-2.0 */
/* tests/tools/flood.c - a connection flood against a server, for the reliability tier's
 * flood drill (docs/development.md#the-reliability-tier).
 *
 * Usage: flood PORT IDLE_SRC N_IDLE SLOW_SRC N_SLOW SECONDS [plain]
 * For SECONDS, keeps N_IDLE TCP connections from IDLE_SRC open to 127.0.0.1:PORT (never
 * sending a byte; each one the server closes is reopened, at most 500 a second), and N_SLOW
 * connections from SLOW_SRC that send an HTTP request one byte a second over TLS (plain: over
 * TCP), reopened when the server closes them. A source is a loopback address (127.0.0.2) or
 * ADDR/K: K consecutive addresses from ADDR, the connections spread round-robin over them
 * (so a per-address limit alone does not stop the flood). Prints "flood: started" once every
 * connection was tried and "flood: opened N reopened R" at the end. Exits 0 unless the
 * arguments are bad, 3 when the descriptor limit cannot hold N_IDLE + N_SLOW connections. */
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

/* A source spec: K consecutive IPv4 addresses from base (host order). */
struct srcs {
    uint32_t base;
    unsigned k;
};

struct slow {
    int fd;
    gnutls_session_t s;
    size_t sent;
    bool shaken; /* the TLS handshake is done (always, in plain mode) */
};

static unsigned long g_opened, g_reopened;
static bool g_plain;
static double g_end;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_srcs(const char *spec, struct srcs *out)
{
    char addr[64];
    const char *slash = strchr(spec, '/');
    size_t n = slash ? (size_t)(slash - spec) : strlen(spec);
    struct in_addr in;

    if (n >= sizeof(addr)) {
        return -1;
    }
    memcpy(addr, spec, n);
    addr[n] = '\0';
    if (inet_pton(AF_INET, addr, &in) != 1) {
        return -1;
    }
    out->base = ntohl(in.s_addr);
    out->k = slash ? (unsigned)strtoul(slash + 1, NULL, 10) : 1;
    return out->k >= 1 && out->k <= 250 ? 0 : -1;
}

/* Connection i's source address. */
static uint32_t src_of(const struct srcs *s, unsigned i)
{
    return s->base + i % s->k;
}

static int open_from(uint32_t src, unsigned port, bool nonblock)
{
    struct sockaddr_in a = {0}, b = {0};
    struct timeval tv = {2, 0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        return -1;
    }
    b.sin_family = AF_INET;
    b.sin_addr.s_addr = htonl(src);
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

/* Start a slow connection: a non-blocking connect; the handshake advances in slow_step(). */
static void slow_open(struct slow *c, gnutls_certificate_credentials_t cred, uint32_t src,
                      unsigned port)
{
    c->fd = open_from(src, port, true);
    c->s = NULL;
    c->sent = 0;
    c->shaken = g_plain;
    if (c->fd < 0 || g_plain) {
        return;
    }
    gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
    gnutls_set_default_priority(c->s);
    gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_transport_set_int(c->s, c->fd);
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

/* Advance the handshake (never blocks): 0 going on or done, -1 failed. */
static int slow_handshake(struct slow *c)
{
    int r;

    if (c->shaken) {
        return 0;
    }
    r = gnutls_handshake(c->s);
    if (r == GNUTLS_E_SUCCESS) {
        c->shaken = true;
        return 0;
    }
    return gnutls_error_is_fatal(r) ? -1 : 0;
}

/* One more byte: 1 sent, 0 not now (socket full), -1 closed or failed. */
static int slow_send_byte(struct slow *c)
{
    ssize_t w;

    if (c->sent >= sizeof(REQUEST) - 1) {
        return -1; /* the whole request went out and the server still holds it: start over */
    }
    if (g_plain) {
        w = send(c->fd, REQUEST + c->sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        return w == 1 ? 1 : (w < 0 && (errno == EAGAIN || errno == ENOTCONN)) ? 0 : -1;
    }
    w = gnutls_record_send(c->s, REQUEST + c->sent, 1);
    return w == 1 ? 1 : (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED) ? 0 : -1;
}

/* The server closed or answered this connection (readable: EOF, reset or a response). */
static bool slow_gone(const struct slow *c)
{
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};

    return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLIN | POLLHUP | POLLERR)) &&
           (c->shaken || (pf.revents & (POLLHUP | POLLERR)));
}

/* Every 100 ms: advance handshakes; once a second (drip) one more byte on each. */
static void slow_step(struct slow *cs, unsigned n, gnutls_certificate_credentials_t cred,
                      const struct srcs *src, unsigned port, bool drip)
{
    for (unsigned i = 0; i < n; i++) {
        struct slow *c = &cs[i];
        int r = c->fd < 0 ? -1 : slow_handshake(c);
        if (r == 0 && c->shaken && slow_gone(c)) {
            r = -1;
        }
        if (r == 0 && c->shaken && drip) {
            r = slow_send_byte(c);
            c->sent += r == 1;
        }
        if (r < 0) {
            slow_close(c);
            slow_open(c, cred, src_of(src, i), port);
            g_reopened++;
        }
    }
}

/* Reopen the idle connections the server closed (readable = EOF or reset). */
static void idle_check(int *fds, unsigned n, const struct srcs *src, unsigned port)
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
            fds[i] = open_from(src_of(src, i), port, true);
            g_reopened++;
            reopened++;
        }
    }
}

int main(int argc, char **argv)
{
    static int idle[MAX_IDLE];
    static struct slow slow[MAX_SLOW];
    gnutls_certificate_credentials_t cred;
    struct rlimit rl;
    struct srcs idle_src, slow_src;
    unsigned port, n_idle, n_slow;
    double next_tick;

    if (argc != 7 && !(argc == 8 && strcmp(argv[7], "plain") == 0)) {
        fprintf(stderr, "usage: flood PORT IDLE_SRC N_IDLE SLOW_SRC N_SLOW SECONDS [plain]\n");
        return 2;
    }
    g_plain = argc == 8;
    port = (unsigned)strtoul(argv[1], NULL, 10);
    n_idle = (unsigned)strtoul(argv[3], NULL, 10);
    n_slow = (unsigned)strtoul(argv[5], NULL, 10);
    g_end = now_s() + strtod(argv[6], NULL);
    if (!port || n_idle > MAX_IDLE || n_slow > MAX_SLOW || parse_srcs(argv[2], &idle_src) < 0 ||
        parse_srcs(argv[4], &slow_src) < 0) {
        fprintf(stderr, "flood: bad arguments\n");
        return 2;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < n_idle + n_slow + 64) {
        fprintf(stderr, "flood: the descriptor limit (%llu) cannot hold %u connections\n",
                (unsigned long long)rl.rlim_cur, n_idle + n_slow);
        return 3;
    }
    signal(SIGPIPE, SIG_IGN);
    gnutls_global_init();
    gnutls_certificate_allocate_credentials(&cred);
    for (unsigned i = 0; i < n_idle; i++) {
        idle[i] = open_from(src_of(&idle_src, i), port, true);
    }
    for (unsigned i = 0; i < n_slow; i++) {
        slow[i].fd = -1;
    }
    for (unsigned i = 0; i < n_slow; i++) {
        slow_open(&slow[i], cred, src_of(&slow_src, i), port);
    }
    printf("flood: started\n");
    fflush(stdout);
    next_tick = now_s();
    while (now_s() < g_end) {
        idle_check(idle, n_idle, &idle_src, port);
        bool drip = now_s() >= next_tick;
        slow_step(slow, n_slow, cred, &slow_src, port, drip);
        if (drip) {
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
