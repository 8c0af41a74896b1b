/* SPDX-License-Identifier: Apache-2.0 */
/* tests/tools/hold_bodies.c - hold many unfinished request bodies open on a TLS server, for
 * the admission tier's memory check (the reliability drills: the body budget).
 *
 * Usage: hold_bodies PORT CONNECTIONS BODY_BYTES SENT_BYTES PATH
 * Opens CONNECTIONS TLS connections to 127.0.0.1:PORT (the certificate is not checked: this
 * is a load generator), sends on each a POST of PATH announcing Content-Length BODY_BYTES and
 * then SENT_BYTES (< BODY_BYTES) bytes of it, so the server must either hold the body or
 * refuse it. Then it reads what comes back (until a second passes without an answer) and prints
 *   holding H refused R failed F
 * (refused: answered (503) or closed; failed: could not connect or handshake), flushes, and
 * keeps every connection open until stdin reaches EOF. A line "release K" on stdin closes K of
 * the held connections first (the last ones opened) and prints "released K". Sends are bounded
 * by a 20 s socket timeout, so a stuck server cannot hang the tier. Exits 0 unless the
 * arguments are bad. */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_CONNS 2000
#define CHUNK 16384
#define IO_TIMEOUT_S 20

enum state { FAILED, SENT, REFUSED };

struct conn {
    int fd;
    gnutls_session_t s;
    enum state state;
};

static int tcp_connect(unsigned port)
{
    struct sockaddr_in a = {0};
    struct timeval tv = {IO_TIMEOUT_S, 0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        return -1;
    }
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(gnutls_session_t s, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = gnutls_record_send(s, p, n);
        if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Connect, handshake and send the headers plus sent bytes of the body. */
static enum state open_one(struct conn *c, gnutls_certificate_credentials_t cred, unsigned port,
                           const char *path, size_t body, size_t sent)
{
    static char zeros[CHUNK];
    char head[512];
    int n;

    c->fd = tcp_connect(port);
    if (c->fd < 0 || gnutls_init(&c->s, GNUTLS_CLIENT) < 0) {
        return FAILED;
    }
    gnutls_set_default_priority(c->s);
    gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_transport_set_int(c->s, c->fd);
    if (gnutls_handshake(c->s) < 0) {
        return FAILED;
    }
    n = snprintf(head, sizeof(head),
                 "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 path, body);
    if (send_all(c->s, head, (size_t)n) < 0) {
        return REFUSED;
    }
    memset(zeros, ' ', sizeof(zeros));
    while (sent > 0) {
        size_t k = sent < CHUNK ? sent : CHUNK;
        if (send_all(c->s, zeros, k) < 0) {
            return REFUSED; /* the server answered and closed */
        }
        sent -= k;
    }
    return SENT;
}

/* Read the answers that come back: poll until a whole second passes without one (held bodies
 * never get an answer; refused ones get 503 or a close). */
static void collect_answers(struct conn *cs, unsigned n)
{
    static struct pollfd pf[MAX_CONNS];
    char buf[256];

    for (;;) {
        for (unsigned i = 0; i < n; i++) {
            pf[i].fd = cs[i].state == SENT ? cs[i].fd : -1;
            pf[i].events = POLLIN;
            pf[i].revents = 0;
        }
        if (poll(pf, n, 1000) <= 0) {
            return;
        }
        for (unsigned i = 0; i < n; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            ssize_t r = gnutls_record_recv(cs[i].s, buf, sizeof(buf) - 1);
            if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
                cs[i].state = REFUSED; /* a held body gets no answer at all */
            }
        }
    }
}

static int parse_args(int argc, char **argv, unsigned *port, unsigned *n, size_t *body,
                      size_t *sent)
{
    if (argc != 6) {
        return -1;
    }
    *port = (unsigned)strtoul(argv[1], NULL, 10);
    *n = (unsigned)strtoul(argv[2], NULL, 10);
    *body = (size_t)strtoull(argv[3], NULL, 10);
    *sent = (size_t)strtoull(argv[4], NULL, 10);
    return *port && *n && *n <= MAX_CONNS && *sent < *body ? 0 : -1;
}

static void close_one(struct conn *c)
{
    if (c->s) {
        gnutls_deinit(c->s);
        c->s = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

/* "release K": close up to K held connections, the last opened first; prints how many. */
static void release_held(struct conn *cs, unsigned n, const char *line)
{
    unsigned want = (unsigned)strtoul(line + strlen("release "), NULL, 10), done = 0;

    for (unsigned i = n; i-- > 0 && done < want;) {
        if (cs[i].state == SENT && cs[i].fd >= 0) {
            close_one(&cs[i]);
            done++;
        }
    }
    printf("released %u\n", done);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static struct conn cs[MAX_CONNS];
    gnutls_certificate_credentials_t cred;
    unsigned port, n, count[3] = {0};
    size_t body, sent;
    char line[64];

    if (parse_args(argc, argv, &port, &n, &body, &sent) < 0) {
        fprintf(stderr, "usage: hold_bodies PORT CONNECTIONS BODY_BYTES SENT_BYTES PATH\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    gnutls_global_init();
    gnutls_certificate_allocate_credentials(&cred);
    for (unsigned i = 0; i < n; i++) {
        cs[i].state = open_one(&cs[i], cred, port, argv[5], body, sent);
    }
    collect_answers(cs, n);
    for (unsigned i = 0; i < n; i++) {
        count[cs[i].state]++;
    }
    printf("holding %u refused %u failed %u\n", count[SENT], count[REFUSED], count[FAILED]);
    fflush(stdout);
    while (fgets(line, sizeof(line), stdin)) {
        if (strncmp(line, "release ", strlen("release ")) == 0) {
            release_held(cs, n, line);
        }
    }
    for (unsigned i = 0; i < n; i++) {
        close_one(&cs[i]);
    }
    gnutls_certificate_free_credentials(cred);
    gnutls_global_deinit();
    return 0;
}
