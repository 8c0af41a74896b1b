/* SPDX-License-Identifier: Apache-2.0 */
/* tests/tools/tcp_relay.c - a TCP relay that can go silent, for the silent-partition drill
 * (tests/integration/leader_partition.sh).
 *
 * Usage: tcp_relay TARGET_PORT PORTFILE
 * Listens on 127.0.0.1 (port 0), writes the bound port to PORTFILE (written to PORTFILE.tmp,
 * then renamed) and forwards every accepted connection to 127.0.0.1:TARGET_PORT, byte for
 * byte in both directions. SIGUSR1 partitions silently: from then on no byte is forwarded
 * in either direction and new connections are accepted but never connected onward, while
 * every socket stays open (no FIN, no RST), as a dead network path looks to both ends.
 * SIGTERM ends it. Single-threaded; at most MAX_PAIRS connections. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PAIRS 256
#define HELD_MAX 1024

static volatile sig_atomic_t g_silent, g_stop;

static void on_signal(int sig)
{
    if (sig == SIGUSR1) {
        g_silent = 1;
    } else {
        g_stop = 1;
    }
}

static int listen_any(unsigned *port)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static int connect_target(unsigned port)
{
    struct sockaddr_in a = {0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    return fd;
}

static int write_portfile(const char *path, unsigned port)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f) {
        return -1;
    }
    fprintf(f, "%u\n", port);
    if (fclose(f) != 0) {
        return -1;
    }
    return rename(tmp, path);
}

/* Copy what is readable on from to to; -1 when either side is done. */
static int pump(int from, int to)
{
    char buf[16384];
    ssize_t n = read(from, buf, sizeof(buf));
    char *p = buf;

    if (n <= 0) {
        return -1;
    }
    while (n > 0) {
        ssize_t w = write(to, p, (size_t)n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        p += w;
        n -= w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static int pairs[MAX_PAIRS][2];
    struct pollfd pf[1 + 2 * MAX_PAIRS];
    unsigned target, port = 0, n_pairs = 0, n_held = 0;
    int lfd;

    if (argc != 3 || (target = (unsigned)strtoul(argv[1], NULL, 10)) == 0) {
        fprintf(stderr, "usage: tcp_relay TARGET_PORT PORTFILE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, on_signal);
    signal(SIGTERM, on_signal);
    lfd = listen_any(&port);
    if (lfd < 0 || write_portfile(argv[2], port) < 0) {
        perror("tcp_relay");
        return 1;
    }
    while (!g_stop) {
        unsigned n = 1;
        pf[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (unsigned i = 0; i < n_pairs && !g_silent; i++) {
            pf[n++] = (struct pollfd){.fd = pairs[i][0], .events = POLLIN};
            pf[n++] = (struct pollfd){.fd = pairs[i][1], .events = POLLIN};
        }
        if (poll(pf, n, 200) <= 0) {
            continue;
        }
        if (pf[0].revents & POLLIN) {
            int c = accept(lfd, NULL, NULL);
            int t = c >= 0 && !g_silent ? connect_target(target) : -1;
            if (c >= 0 && t >= 0 && n_pairs < MAX_PAIRS) {
                pairs[n_pairs][0] = c;
                pairs[n_pairs++][1] = t;
            } else if (c >= 0 && g_silent && n_held < HELD_MAX) {
                n_held++; /* accepted and kept open, never answered */
            } else if (c >= 0) {
                close(c);
                if (t >= 0) {
                    close(t);
                }
            }
        }
        for (unsigned i = 0; i < n_pairs && !g_silent; i++) {
            short r0 = pf[1 + 2 * i].revents, r1 = pf[2 + 2 * i].revents;
            if (((r0 & (POLLIN | POLLHUP)) && pump(pairs[i][0], pairs[i][1]) < 0) ||
                ((r1 & (POLLIN | POLLHUP)) && pump(pairs[i][1], pairs[i][0]) < 0)) {
                close(pairs[i][0]);
                close(pairs[i][1]);
                pairs[i][0] = pairs[n_pairs - 1][0];
                pairs[i][1] = pairs[n_pairs - 1][1];
                n_pairs--;
                break; /* the poll set no longer matches; poll again */
            }
        }
    }
    return 0;
}
