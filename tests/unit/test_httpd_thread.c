/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_httpd_thread.c - common/httpd over real sockets and real TLS.
 *
 * A small HTTP/1.1 client (GnuTLS or plain TCP) lives here so the tests control every byte:
 * routing, 404/405, the body cap, malformed requests, TLS versions and ciphers, a client that
 * never handshakes, certificate reload (good and bad pairs), /readyz, /metrics, fair accepting,
 * the first-request deadline and the keep-alive idle limit, concurrent clients (run under TSan
 * too, hence the file name) and graceful shutdown. Certificates are generated with
 * kt_certs_generate into a temporary directory. */
#include "tests/test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "certs/certs.h"
#include "common/base/buf.h"
#include "common/net/httpd.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/net/metrics.h"

#define TLS13 "NORMAL"
#define TLS12_GCM "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM"
#define TLS12_CBC "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-CBC:+AES-256-CBC"
#define TLS11 "NORMAL:-VERS-ALL:+VERS-TLS1.1"
#define SAFETY_S 20 /* socket timeouts so a bug cannot hang the test; never asserted */

static char dir[64];
static char cert_path[128];
static char key_path[128];

/* ---- a tiny client ---- */

struct cli {
    int fd;
    gnutls_session_t s; /* NULL for plain TCP */
    gnutls_certificate_credentials_t cred;
};

struct resp {
    int status; /* -1 when no complete response arrived */
    char *head; /* status line and headers */
    char *body;
    size_t body_len;
};

static int tcp_connect(uint16_t port)
{
    struct sockaddr_in sa = {0};
    struct timeval tv = {SAFETY_S, 0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void cli_close(struct cli *c)
{
    if (c->s) {
        gnutls_deinit(c->s);
        gnutls_certificate_free_credentials(c->cred);
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

/* cli_close each of the n clients of c. */
static void cli_close_all(struct cli *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cli_close(&c[i]);
    }
}

/* Connect, and with prio (a GnuTLS priority string) handshake. 0 on success. */
static int cli_open(struct cli *c, uint16_t port, const char *prio)
{
    int rc;

    memset(c, 0, sizeof(*c));
    c->fd = tcp_connect(port);
    if (c->fd < 0 || !prio) {
        return c->fd < 0 ? -1 : 0;
    }
    gnutls_certificate_allocate_credentials(&c->cred);
    gnutls_init(&c->s, GNUTLS_CLIENT);
    gnutls_priority_set_direct(c->s, prio, NULL);
    gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, c->cred);
    gnutls_transport_set_int(c->s, c->fd);
    do {
        rc = gnutls_handshake(c->s);
    } while (rc < 0 && !gnutls_error_is_fatal(rc));
    return rc < 0 ? -1 : 0;
}

static int cli_send(struct cli *c, const void *p, size_t n)
{
    const char *q = p;

    while (n > 0) {
        ssize_t w = c->s ? gnutls_record_send(c->s, q, n) : send(c->fd, q, n, MSG_NOSIGNAL);
        if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        q += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read some bytes: > 0 data, 0 orderly close, < 0 error. */
static ssize_t cli_recv(struct cli *c, char *p, size_t n)
{
    ssize_t r;

    do {
        r = c->s ? gnutls_record_recv(c->s, p, n) : recv(c->fd, p, n, 0);
    } while (c->s && (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED));
    if (c->s && r == GNUTLS_E_PREMATURE_TERMINATION) {
        return 0;
    }
    return r;
}

/* Leading decimal digits after optional spaces (test input only; no overflow concerns). */
static size_t digits(const char *p)
{
    size_t v = 0;

    while (*p == ' ') {
        p++;
    }
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (size_t)(*p++ - '0');
    }
    return v;
}

static size_t content_length(const char *head)
{
    for (const char *p = head; *p; p++) {
        if (strncasecmp(p, "\r\nContent-Length:", 17) == 0) {
            return digits(p + 17);
        }
    }
    return 0;
}

/* Read one response (headers + Content-Length body). */
static void cli_read(struct cli *c, struct resp *r)
{
    struct kt_buf b;
    char chunk[16384];
    char *end = NULL;

    memset(r, 0, sizeof(*r));
    r->status = -1;
    kt_buf_init(&b, 64u * 1024 * 1024);
    for (;;) {
        end = b.data ? strstr(b.data, "\r\n\r\n") : NULL;
        if (end && b.len >= (size_t)(end + 4 - b.data) + content_length(b.data)) {
            break;
        }
        ssize_t n = cli_recv(c, chunk, sizeof(chunk));
        if (n <= 0 || kt_buf_append(&b, chunk, (size_t)n, NULL) < 0) {
            kt_buf_release(&b);
            return;
        }
    }
    size_t hlen = (size_t)(end - b.data);
    r->head = kt_xstrndup(b.data, hlen);
    r->body_len = content_length(r->head);
    r->body = kt_xstrndup(end + 4, r->body_len);
    r->status = b.len > 12 ? (int)digits(b.data + 9) : -1;
    kt_buf_release(&b);
}

static void resp_release(struct resp *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

/* One request on a fresh connection. prio NULL = plain HTTP. */
static void request(uint16_t port, const char *prio, const char *raw, struct resp *r)
{
    struct cli c;

    memset(r, 0, sizeof(*r));
    r->status = -1;
    if (cli_open(&c, port, prio) == 0 && cli_send(&c, raw, strlen(raw)) == 0) {
        cli_read(&c, r);
    }
    cli_close(&c);
}

/* Like request(), for a request the server answers before reading it all (a 431 for a
 * header too big). The server closes with our bytes unread, which draws a TCP reset; the
 * answer is still readable if the whole request was queued in the kernel before it came
 * and we read after a failed send. So: a send buffer that holds the request, one write
 * (TLS records corked), and a read whatever the send said. */
static void request_refused_early(uint16_t port, const char *prio, const char *raw, struct resp *r)
{
    struct cli c;
    int big = 1 << 20;

    memset(r, 0, sizeof(*r));
    r->status = -1;
    if (cli_open(&c, port, prio) == 0) {
        setsockopt(c.fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
        if (c.s) {
            gnutls_record_cork(c.s);
        }
        int sent = cli_send(&c, raw, strlen(raw));
        if (c.s && sent == 0) {
            int rc;
            do {
                rc = gnutls_record_uncork(c.s, GNUTLS_RECORD_WAIT);
            } while (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED);
        }
        cli_read(&c, r);
    }
    cli_close(&c);
}

static int get_status(uint16_t port, const char *prio, const char *path, char **body)
{
    struct resp r;
    char raw[512];

    snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    request(port, prio, raw, &r);
    if (body) {
        *body = r.body ? kt_xstrdup(r.body) : NULL;
    }
    int st = r.status;
    resp_release(&r);
    return st;
}

/* The serial number (hex) of the server's certificate as a new connection sees it. */
static char *peer_serial(struct cli *c)
{
    unsigned n = 0;
    const gnutls_datum_t *der = gnutls_certificate_get_peers(c->s, &n);
    gnutls_x509_crt_t crt;
    unsigned char serial[64];
    size_t len = sizeof(serial);
    char *hex;

    if (!der || n == 0) {
        return kt_xstrdup("(none)");
    }
    gnutls_x509_crt_init(&crt);
    gnutls_x509_crt_import(crt, &der[0], GNUTLS_X509_FMT_DER);
    gnutls_x509_crt_get_serial(crt, serial, &len);
    gnutls_x509_crt_deinit(crt);
    hex = kt_xcalloc(1, 2 * len + 1);
    for (size_t i = 0; i < len; i++) {
        snprintf(hex + 2 * i, 3, "%02x", serial[i]);
    }
    return hex;
}

static char *new_conn_serial(uint16_t port)
{
    struct cli c;
    char *s = cli_open(&c, port, TLS13) == 0 ? peer_serial(&c) : kt_xstrdup("(handshake)");

    cli_close(&c);
    return s;
}

/* ---- certificates ---- */

static void write_file(const char *path, const char *text)
{
    char tmp[160];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    KT_ASSERT(f != NULL);
    fputs(text, f);
    KT_ASSERT(fclose(f) == 0);
    KT_ASSERT(rename(tmp, path) == 0);
}

static void gen(struct kt_certs *out)
{
    static const char *const sans[] = {"IP:127.0.0.1"};
    struct kt_certs_opts opts = {.extra_sans = sans, .n_extra_sans = 1};
    struct kt_err err = {0};

    KT_ASSERT(kt_certs_generate(&opts, (int64_t)time(NULL), out, &err) == 0);
}

/* Serial (hex) of the serving certificate in certs. */
static char *pem_serial(const char *pem)
{
    gnutls_datum_t d = {(unsigned char *)(uintptr_t)pem, (unsigned)strlen(pem)};
    gnutls_x509_crt_t crt;
    unsigned char serial[64];
    size_t len = sizeof(serial);
    char *hex;

    gnutls_x509_crt_init(&crt);
    KT_ASSERT(gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) == 0);
    gnutls_x509_crt_get_serial(crt, serial, &len);
    gnutls_x509_crt_deinit(crt);
    hex = kt_xcalloc(1, 2 * len + 1);
    for (size_t i = 0; i < len; i++) {
        snprintf(hex + 2 * i, 3, "%02x", serial[i]);
    }
    return hex;
}

static void install(const struct kt_certs *c)
{
    write_file(key_path, c->tls_key);
    write_file(cert_path, c->tls_crt);
}

/* ---- handlers ---- */

static void echo(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg)
{
    const char *q = kt_httpd_request_query(req, "x");
    const char *ua = kt_httpd_request_header(req, "x-test");
    char *text = kt_xasprintf("%s %s ct=%s q=%s h=%s len=%zu body=%.20s", req->method, req->path,
                              req->content_type ? req->content_type : "-", q ? q : "-",
                              ua ? ua : "-", req->body_len, req->body);

    (void)arg;
    kt_httpd_response_take(resp, 200, "text/plain", text, strlen(text));
    kt_httpd_response_header(resp, "X-Kt", "yes");
}

static struct kt_httpd *start(const struct kt_httpd_opts *o)
{
    struct kt_err err = {0};
    struct kt_httpd *h = kt_httpd_new(o, &err);

    KT_ASSERT(h != NULL);
    kt_httpd_route(h, "GET", "/echo", echo, NULL);
    kt_httpd_route(h, "POST", "/echo", echo, NULL);
    if (kt_httpd_start(h, &err) < 0) {
        fprintf(stderr, "start: %s\n", err.msg);
        KT_ASSERT(0);
    }
    CHECK(kt_httpd_port(h) != 0);
    return h;
}

/* ---- tests ---- */

static void test_routing(uint16_t port, const char *prio)
{
    struct resp r;

    request(port, prio, "GET /echo?x=1%202 HTTP/1.1\r\nHost: a\r\nX-Test: t1\r\n\r\n", &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_STR(r.body, "GET /echo ct=- q=1 2 h=t1 len=0 body=");
    CHECK_CONTAINS(r.head, "X-Kt: yes");
    resp_release(&r);
    request(port, prio,
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            "Content-Length: 7\r\n\r\n{\"a\":1}",
            &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_STR(r.body, "POST /echo ct=application/json q=- h=- len=7 body={\"a\":1}");
    resp_release(&r);
    request(port, prio, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n", &r);
    CHECK_EQ_INT(r.status, 404);
    CHECK_EQ_STR(r.body, "404 page not found\n");
    resp_release(&r);
    request(port, prio, "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", &r);
    CHECK_EQ_INT(r.status, 405);
    CHECK_CONTAINS(r.head, "Allow: GET, POST");
    resp_release(&r);
    /* Malformed requests get libmicrohttpd's 4xx/5xx (or a close) and never reach a handler. */
    static const struct {
        const char *raw;
        int status;
    } bad[] = {
        {"GET /echo HTTP/1.1 extra\r\nHost: a\r\n\r\n", 400},
        {"GET /echo HTTP/1.1\r\n\r\n", 400}, /* no Host */
        {"GET /echo HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n", 400},
        {"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n", 400},
        {"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        {"GET /echo HTTP/9.9\r\nHost: a\r\n\r\n", 505},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(bad); i++) {
        request(port, prio, bad[i].raw, &r);
        CHECK_EQ_INT(r.status, bad[i].status);
        resp_release(&r);
    }
    request(port, prio, "GARBAGE\r\n\r\n", &r);
    CHECK(r.status == 400 || r.status == -1); /* not HTTP: closed */
    resp_release(&r);
    char *huge = kt_xasprintf("GET /echo HTTP/1.1\r\nHost: a\r\nX: %070000d\r\n\r\n", 0);
    request_refused_early(port, prio, huge, &r);
    CHECK_EQ_INT(r.status, 431);
    resp_release(&r);
    free(huge);
    CHECK_EQ_INT(get_status(port, prio, "/echo", NULL), 200);
}

/* POST n chunks of 64 KiB from data; -1 when the server closed before all were sent. */
static int send_chunked(uint16_t port, const char *prio, const char *data, int n, struct resp *r)
{
    const char *head = "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
    struct cli c;
    int sent;

    memset(r, 0, sizeof(*r));
    r->status = -1;
    sent = cli_open(&c, port, prio);
    sent = sent == 0 ? cli_send(&c, head, strlen(head)) : sent;
    for (int i = 0; i < n && sent == 0; i++) {
        sent = cli_send(&c, "10000\r\n", 7);
        sent = sent == 0 ? cli_send(&c, data, 65536) : sent;
        sent = sent == 0 ? cli_send(&c, "\r\n", 2) : sent;
    }
    sent = sent == 0 ? cli_send(&c, "0\r\n\r\n", 5) : sent;
    if (sent == 0) {
        cli_read(&c, r);
    }
    cli_close(&c);
    return sent;
}

static void test_body_cap(uint16_t port, const char *prio)
{
    size_t cap = KT_HTTPD_DEFAULT_MAX_BODY;
    char *big = kt_xmalloc(10u * 1024 * 1024);
    char head[256];
    struct resp r;
    struct cli c;

    memset(big, 'a', 10u * 1024 * 1024);
    /* Exactly the cap is accepted. */
    snprintf(head, sizeof(head), "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n",
             cap);
    CHECK_OK(cli_open(&c, port, prio));
    CHECK_OK(cli_send(&c, head, strlen(head)));
    CHECK_OK(cli_send(&c, big, cap));
    cli_read(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "len=3145728 ");
    resp_release(&r);
    cli_close(&c);
    /* A 10 MB Content-Length is refused from the headers alone, before any body is sent. */
    request(port, prio,
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10485760\r\n"
            "Expect: 100-continue\r\n\r\n",
            &r);
    CHECK_EQ_INT(r.status, 413);
    CHECK_EQ_STR(r.body, "request body too large: the limit is 3145728 bytes\n");
    resp_release(&r);
    /* Chunked (no length): 10 MB streamed; the handler never sees it, the answer is 413. */
    CHECK_EQ_INT(send_chunked(port, prio, big, 160, &r), 0);
    CHECK_EQ_INT(r.status, 413);
    CHECK_CONTAINS(r.body, "request body too large");
    resp_release(&r);
    /* A body that never ends is cut (the send fails) long before 64 MB. */
    CHECK_EQ_INT(send_chunked(port, prio, big, 1024, &r), -1);
    resp_release(&r);
    CHECK_EQ_INT(get_status(port, prio, "/echo", NULL), 200); /* still healthy */
    free(big);
}

static void test_tls_versions(uint16_t port)
{
    struct cli c;

    CHECK_OK(cli_open(&c, port, TLS13));
    CHECK_EQ_INT(gnutls_protocol_get_version(c.s), GNUTLS_TLS1_3);
    cli_close(&c);
    CHECK_OK(cli_open(&c, port, TLS12_GCM));
    CHECK_EQ_INT(gnutls_protocol_get_version(c.s), GNUTLS_TLS1_2);
    CHECK_EQ_INT(gnutls_cipher_get(c.s), GNUTLS_CIPHER_AES_128_GCM);
    cli_close(&c);
    CHECK_EQ_INT(cli_open(&c, port, TLS11), -1); /* TLS 1.1 refused */
    cli_close(&c);
    CHECK_EQ_INT(cli_open(&c, port, TLS12_CBC), -1); /* CBC ciphers refused */
    cli_close(&c);
    CHECK_EQ_INT(get_status(port, TLS13, "/echo", NULL), 200); /* unaffected */
}

/* A client that connects and never sends a byte (no TLS ClientHello, no request line) is
 * disconnected by the server after its timeout while other clients are served. */
static void test_silent_client(uint16_t port, const char *prio)
{
    char byte;
    int fd = tcp_connect(port);
    int fd2 = tcp_connect(port);

    CHECK(fd >= 0 && fd2 >= 0);
    CHECK_OK(send(fd2, "GET /ec", 7, MSG_NOSIGNAL) < 0); /* half a request line */
    CHECK_EQ_INT(get_status(port, prio, "/echo", NULL), 200);
    CHECK_EQ_INT(get_status(port, prio, "/echo", NULL), 200);
    /* Read until the server closes (EOF or reset; a TLS server may send an alert first).
     * Bounded by SO_RCVTIMEO, which would show up as EAGAIN. */
    ssize_t n;
    do {
        n = recv(fd, &byte, 1, 0);
    } while (n > 0);
    CHECK(n == 0 || errno == ECONNRESET);
    char buf[512];
    ssize_t m;
    do {
        m = recv(fd2, buf, sizeof(buf), 0);
    } while (m > 0);
    CHECK(m == 0 || errno == ECONNRESET);
    close(fd);
    close(fd2);
}

static void test_reload(struct kt_httpd *h, uint16_t port, struct kt_certs *a)
{
    struct kt_certs b = {0};
    struct kt_err err = {0};
    struct cli keep;
    struct resp r;
    char *sa = pem_serial(a->tls_crt), *sb = NULL, *got;

    got = new_conn_serial(port);
    CHECK_EQ_STR(got, sa);
    free(got);
    /* A connection opened with A stays usable across the swap (keep-alive; this server's
     * idle timeout is 1 s, so nothing slow happens between its requests). */
    gen(&b);
    sb = pem_serial(b.tls_crt);
    const char *req = "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n";
    CHECK_OK(cli_open(&keep, port, TLS13));
    CHECK_OK(cli_send(&keep, req, strlen(req)));
    cli_read(&keep, &r);
    CHECK_EQ_INT(r.status, 200);
    resp_release(&r);
    install(&b);
    CHECK_OK(kt_httpd_reload_now(h, &err));
    got = new_conn_serial(port);
    CHECK_EQ_STR(got, sb);
    free(got);
    got = peer_serial(&keep);
    CHECK_EQ_STR(got, sa);
    free(got);
    CHECK_OK(cli_send(&keep, req, strlen(req)));
    cli_read(&keep, &r);
    CHECK_EQ_INT(r.status, 200);
    resp_release(&r);
    cli_close(&keep);
    /* A mismatched pair (A's certificate, B's key) is refused; B keeps serving. */
    write_file(cert_path, a->tls_crt);
    CHECK_EQ_INT(kt_httpd_reload_now(h, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK_CONTAINS(err.msg, "does not match");
    /* Garbage is refused too. */
    write_file(cert_path, "not a certificate\n");
    CHECK_EQ_INT(kt_httpd_reload_now(h, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    got = new_conn_serial(port);
    CHECK_EQ_STR(got, sb);
    free(got);
    CHECK(kt_httpd_certs_ready(h));
    install(a); /* leave A in place for later tests */
    CHECK_OK(kt_httpd_reload_now(h, &err));
    free(sa);
    free(sb);
    kt_certs_release(&b);
}

static atomic_bool ready_flag;

/* The watcher picks up a good pair by itself (reload_ms is short in this server). */
static void test_reload_watcher(struct kt_httpd *h, uint16_t port, struct kt_certs *a)
{
    struct kt_certs c = {0};
    struct kt_err err = {0};
    char *sc, *got;

    gen(&c);
    sc = pem_serial(c.tls_crt);
    install(&c);
    got = new_conn_serial(port);
    for (int i = 0; i < 2000 && strcmp(got, sc) != 0; i++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL); /* waiting for the watcher's next stat, bounded */
        free(got);
        got = new_conn_serial(port);
    }
    CHECK_EQ_STR(got, sc);
    free(got);
    free(sc);
    install(a);
    CHECK_OK(kt_httpd_reload_now(h, &err));
    kt_certs_release(&c);
}

static const char *ready_cb(void *arg, char *buf, size_t n)
{
    (void)arg;
    snprintf(buf, n, "caches are %s", "not synced"); /* text in the caller's buffer */
    return atomic_load(&ready_flag) ? NULL : buf;
}

static const char *certs_ready_cb(void *arg, char *buf, size_t n)
{
    (void)buf;
    (void)n;
    return kt_httpd_certs_ready(arg) ? NULL : "certificates are not ready";
}

static void test_readyz_and_metrics(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_httpd_opts o = {.name = "health",
                              .listen = "127.0.0.1:0",
                              .builtins = KT_HTTPD_HEALTH | KT_HTTPD_METRICS,
                              .metrics = m,
                              .ready = ready_cb};
    struct kt_httpd *h = start(&o);
    uint16_t port = kt_httpd_port(h);
    char *body = NULL;
    struct resp r;

    CHECK_EQ_INT(get_status(port, NULL, "/healthz", &body), 200);
    CHECK_EQ_STR(body, "ok");
    free(body);
    CHECK_EQ_INT(get_status(port, NULL, "/readyz", &body), 503);
    CHECK_EQ_STR(body, "caches are not synced");
    free(body);
    atomic_store(&ready_flag, true);
    CHECK_EQ_INT(get_status(port, NULL, "/readyz", &body), 200);
    CHECK_EQ_STR(body, "ok");
    free(body);
    CHECK_EQ_INT(get_status(port, NULL, "/nothing", NULL), 404);
    request(port, NULL, "GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "Content-Type: text/plain; version=0.0.4");
    CHECK_CONTAINS(r.body, "# TYPE kt_http_requests_total counter\n");
    CHECK_CONTAINS(r.body, "kt_http_requests_total{server=\"health\",method=\"GET\","
                           "path=\"/healthz\",code=\"200\"} 1\n");
    CHECK_CONTAINS(r.body, "kt_http_requests_total{server=\"health\",method=\"GET\","
                           "path=\"/readyz\",code=\"503\"} 1\n");
    CHECK_CONTAINS(r.body, "kt_http_requests_total{server=\"health\",method=\"other\","
                           "path=\"unmatched\",code=\"404\"} 1\n");
    CHECK_CONTAINS(r.body, "kt_http_request_duration_seconds_bucket{server=\"health\","
                           "method=\"GET\",path=\"/readyz\",code=\"200\",le=\"+Inf\"} 1\n");
    resp_release(&r);
    kt_httpd_free(h);
    kt_metrics_free(m);
}

/* A TLS server started before its certificate files exist is not ready and refuses
 * handshakes; once the files appear it serves. */
static void test_certs_later(void)
{
    char c2[160], k2[160];
    struct kt_err err = {0};

    snprintf(c2, sizeof(c2), "%s/late.crt", dir);
    snprintf(k2, sizeof(k2), "%s/late.key", dir);
    struct kt_httpd_opts o = {
        .name = "late", .listen = "127.0.0.1:0", .cert_file = c2, .key_file = k2};
    struct kt_httpd *tls = start(&o);
    struct kt_httpd_opts ho = {.name = "health2",
                               .listen = "127.0.0.1:0",
                               .builtins = KT_HTTPD_HEALTH,
                               .ready = certs_ready_cb,
                               .ready_arg = tls};
    struct kt_httpd *health = start(&ho);
    char *body = NULL;
    struct cli c;

    CHECK(!kt_httpd_certs_ready(tls));
    CHECK_EQ_INT(get_status(kt_httpd_port(health), NULL, "/readyz", &body), 503);
    CHECK_EQ_STR(body, "certificates are not ready");
    free(body);
    CHECK_EQ_INT(cli_open(&c, kt_httpd_port(tls), TLS13), -1);
    cli_close(&c);
    CHECK_EQ_INT(kt_httpd_reload_now(tls, &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
    CHECK_CONTAINS(err.msg, "late.crt");
    struct kt_certs a = {0};
    gen(&a);
    write_file(k2, a.tls_key);
    write_file(c2, a.tls_crt);
    CHECK_OK(kt_httpd_reload_now(tls, &err));
    CHECK(kt_httpd_certs_ready(tls));
    CHECK_EQ_INT(get_status(kt_httpd_port(health), NULL, "/readyz", NULL), 200);
    CHECK_EQ_INT(get_status(kt_httpd_port(tls), TLS13, "/echo", NULL), 200);
    kt_certs_release(&a);
    kt_httpd_free(health);
    kt_httpd_free(tls);
}

/* At max_conns the server stops accepting: a further client waits in the listen backlog
 * (no answer while the others hold their slots) and is served once a slot frees. */
static void test_conn_limit(void)
{
    struct kt_httpd_opts o = {.listen = "127.0.0.1:0", .max_conns = 2, .builtins = KT_HTTPD_HEALTH};
    struct kt_httpd *h = start(&o);
    uint16_t port = kt_httpd_port(h);
    struct cli a, b, c;
    struct resp r;
    const char *req = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n";

    CHECK_OK(cli_open(&a, port, NULL));
    CHECK_OK(cli_open(&b, port, NULL));
    CHECK_OK(cli_send(&a, req, strlen(req))); /* both slots proven taken */
    cli_read(&a, &r);
    CHECK_EQ_INT(r.status, 200);
    resp_release(&r);
    CHECK_OK(cli_send(&b, req, strlen(req)));
    cli_read(&b, &r);
    CHECK_EQ_INT(r.status, 200);
    resp_release(&r);
    CHECK_OK(cli_open(&c, port, NULL));
    CHECK_OK(cli_send(&c, req, strlen(req)));
    struct pollfd pfd = {.fd = c.fd, .events = POLLIN};
    CHECK_EQ_INT(poll(&pfd, 1, 200), 0); /* not served while the slots are held */
    cli_close(&a);
    cli_read(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    resp_release(&r);
    cli_close(&b);
    cli_close(&c);
    kt_httpd_free(h);
}

/* Fair accepting: past max_conns - max_conns/8 live connections a new one cuts the oldest
 * connection waiting for a request (in TLS mode the silent ones first); a connection in a
 * request and the newer ones are left alone. max_conns 8: the 8th connection cuts one. */
static void expect_cut(struct cli *c)
{
    char b[64];
    ssize_t n = recv(c->fd, b, sizeof(b), 0); /* bounded by SO_RCVTIMEO */
    CHECK(n == 0 || (n < 0 && errno == ECONNRESET));
}

static void expect_served(struct cli *c)
{
    const char *get = "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n";
    struct resp r;

    CHECK_OK(cli_send(c, get, strlen(get)));
    cli_read(c, &r);
    CHECK_EQ_INT(r.status, 200);
    resp_release(&r);
}

static void test_fair_accepting(const char *prio)
{
    struct kt_httpd_opts o = {.listen = "127.0.0.1:0", .max_conns = 8};
    if (prio) {
        o.cert_file = cert_path;
        o.key_file = key_path;
    }
    struct kt_httpd *h = start(&o);
    uint16_t port = kt_httpd_port(h);
    const char *head =
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
    struct cli busy, spoke, idle[5], fresh;
    char buf[64];
    struct resp r;

    /* busy: in a request (its headers are in: the server said 100 Continue) */
    CHECK_OK(cli_open(&busy, port, prio));
    CHECK_OK(cli_send(&busy, head, strlen(head)));
    ssize_t n = cli_recv(&busy, buf, sizeof(buf) - 1);
    CHECK(n >= 12 && strncmp(buf, "HTTP/1.1 100", 12) == 0);
    /* spoke: handshake done (TLS) or just connected (plain), no request */
    CHECK_OK(cli_open(&spoke, port, prio));
    for (int i = 0; i < 5; i++) {
        CHECK_OK(cli_open(&idle[i], port, NULL)); /* silent TCP */
    }
    /* 7 live = the threshold; the 8th cuts one: plain the oldest waiting (spoke), TLS the
     * oldest silent one (idle[0]) */
    CHECK_OK(cli_open(&fresh, port, prio));
    expect_served(&fresh);
    if (prio) {
        expect_cut(&idle[0]);
        expect_served(&spoke);
    } else {
        expect_cut(&spoke);
        struct pollfd pfd = {.fd = idle[0].fd, .events = POLLIN};
        CHECK_EQ_INT(poll(&pfd, 1, 100), 0); /* the next oldest stays */
    }
    CHECK_OK(cli_send(&busy, "12345", 5)); /* never cut in a request */
    cli_read(&busy, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.body && strstr(r.body, "len=5") != NULL);
    resp_release(&r);
    cli_close(&busy);
    cli_close(&spoke);
    cli_close(&fresh);
    cli_close_all(idle, KT_ARRAY_SIZE(idle));
    kt_httpd_free(h);
}

/* ---- keep-alive and deadlines ----
 * A server with a 1 s first-request deadline and a 6 s keep-alive idle limit. The sleeps below
 * are the behaviour under test (how long a connection may stay silent), never readiness. */

#define KA_TIMEOUT_S 1
#define KA_IDLE_S 6

static double mono_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Seconds until the server closes c (EOF or reset); -1 when it stayed open for SAFETY_S. */
static double secs_until_closed(struct cli *c)
{
    double t0 = mono_s();
    char b[64];
    ssize_t n;

    do {
        n = recv(c->fd, b, sizeof(b), 0); /* a TLS server may send an alert first */
    } while (n > 0);
    if (n < 0 && errno != ECONNRESET) {
        return -1;
    }
    return mono_s() - t0;
}

static struct kt_httpd *start_keepalive(const char *prio, unsigned max_conns)
{
    struct kt_httpd_opts o = {.name = "keepalive",
                              .listen = "127.0.0.1:0",
                              .timeout_s = KA_TIMEOUT_S,
                              .idle_s = KA_IDLE_S,
                              .max_conns = max_conns,
                              .reload_ms = 50};
    if (prio) {
        o.cert_file = cert_path;
        o.key_file = key_path;
    }
    return start(&o);
}

/* A keep-alive connection idle for longer than the first-request deadline (but within idle_s)
 * is still served on the same socket; idle past idle_s, the server closes it (not sooner than
 * idle_s, so it was not the first-request deadline). */
static void test_keepalive_idle(const char *prio)
{
    struct kt_httpd *h = start_keepalive(prio, 0);
    uint16_t port = kt_httpd_port(h);
    struct timespec idle = {2 * KA_TIMEOUT_S + 1, 0}; /* 3 s: past the deadline and a sweep */
    struct cli c;

    CHECK_OK(cli_open(&c, port, prio));
    expect_served(&c);
    nanosleep(&idle, NULL);
    expect_served(&c); /* the same connection, after 3 s of silence */
    double t = secs_until_closed(&c);
    CHECK(t >= KA_IDLE_S - 1); /* idle_s (6 s) with a second of slack for the clocks */
    if (t < KA_IDLE_S - 1) {
        fprintf(stderr, "  keep-alive connection closed after %.1f s idle (want ~%d s)\n", t,
                KA_IDLE_S);
    }
    cli_close(&c);
    kt_httpd_free(h);
}

/* Trickle headers one byte every 250 ms from the current position; -1 once the server closed
 * the connection (sending all of drip takes 12 s). */
static int drip_headers(struct cli *c, const char *drip)
{
    struct timespec pause = {0, 250 * 1000 * 1000};
    int sent = 0;

    for (size_t i = 0; i < strlen(drip) && sent == 0; i++) {
        sent = cli_send(c, drip + i, 1);
        nanosleep(&pause, NULL);
    }
    return sent;
}

/* Before its first request a connection still has timeout_s, idle (TLS handshake done, no
 * request) or dripping its headers; a keep-alive connection that starts a request has timeout_s
 * from its request line to finish the headers; a request whose body stalls, timeout_s of
 * silence. Each is cut well before idle_s. */
static void test_header_deadline(const char *prio)
{
    struct kt_httpd *h = start_keepalive(prio, 0);
    uint16_t port = kt_httpd_port(h);
    const char *stall = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
    const char *drip = "GET /echo HTTP/1.1\r\nHost: a\r\nX-Drip: aaaaaaaaaaaaaaaaaaaa";
    const char *line = "GET /echo HTTP/1.1\r\n";
    struct cli quiet, dripper, stalled, again;
    double t;

    CHECK_OK(cli_open(&quiet, port, prio));
    t = secs_until_closed(&quiet);
    CHECK(t >= 0 && t < KA_IDLE_S - 1);
    cli_close(&quiet);
    /* a header byte every 250 ms: never idle for libmicrohttpd, cut by the deadline */
    double t0 = mono_s();
    CHECK_OK(cli_open(&dripper, port, prio));
    CHECK_EQ_INT(drip_headers(&dripper, drip), -1); /* closed before the last byte */
    CHECK(mono_s() - t0 < KA_IDLE_S - 1);
    cli_close(&dripper);
    /* the same after one good request: the request line ends the keep-alive wait */
    CHECK_OK(cli_open(&again, port, prio));
    expect_served(&again);
    t0 = mono_s();
    CHECK_OK(cli_send(&again, line, strlen(line)));
    CHECK_EQ_INT(drip_headers(&again, drip + strlen(line)), -1);
    CHECK(mono_s() - t0 < KA_IDLE_S - 1);
    cli_close(&again);
    CHECK_OK(cli_open(&stalled, port, prio));
    expect_served(&stalled); /* a keep-alive connection from now on */
    CHECK_OK(cli_send(&stalled, stall, strlen(stall)));
    t = secs_until_closed(&stalled);
    CHECK(t >= 0 && t < KA_IDLE_S - 1);
    cli_close(&stalled);
    kt_httpd_free(h);
}

/* Fair accepting with keep-alive connections (TLS, max_conns 8: the 8th connection cuts one):
 * a connection before its first request goes before an idle keep-alive one, which is not spared
 * when it is all there is (the one idle longest goes); the new connection is never the one cut.
 * A drain closes an idle keep-alive connection at once. */
static void test_keepalive_evict_and_drain(void)
{
    struct kt_httpd *h = start_keepalive(TLS13, 8);
    uint16_t port = kt_httpd_port(h);
    struct cli keep, spoke[6], fresh, ka[7], fresh2;

    CHECK_OK(cli_open(&keep, port, TLS13));
    expect_served(&keep);
    for (int i = 0; i < 6; i++) {
        CHECK_OK(cli_open(&spoke[i], port, TLS13)); /* handshake done, no request */
    }
    CHECK_OK(cli_open(&fresh, port, TLS13)); /* the 8th */
    expect_served(&fresh);
    expect_cut(&spoke[0]);
    expect_served(&keep);
    cli_close(&keep);
    cli_close(&fresh);
    cli_close_all(spoke, KT_ARRAY_SIZE(spoke));
    kt_httpd_free(h);

    h = start_keepalive(TLS13, 8);
    port = kt_httpd_port(h);
    for (int i = 0; i < 7; i++) {
        CHECK_OK(cli_open(&ka[i], port, TLS13));
        expect_served(&ka[i]);
    }
    expect_served(&ka[0]); /* now idle for the shortest time; ka[1] the longest */
    CHECK_OK(cli_open(&fresh2, port, TLS13));
    expect_served(&fresh2);
    expect_cut(&ka[1]);
    expect_served(&ka[0]);
    kt_httpd_drain(h);
    expect_cut(&ka[2]); /* idle keep-alive: closed by the drain, long before idle_s */
    cli_close(&fresh2);
    cli_close_all(ka, KT_ARRAY_SIZE(ka));
    kt_httpd_free(h);
}

/* ---- concurrency ---- */

#define N_CLIENTS 8
#define N_REQS 15

static atomic_int handled;

static void counting(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg)
{
    (void)arg;
    atomic_fetch_add(&handled, 1);
    kt_httpd_response_set(resp, 200, "application/json", req->body);
}

struct worker {
    uint16_t port;
    int ok;
};

static void *client_main(void *arg)
{
    struct worker *w = arg;
    struct cli c;
    struct resp r;
    char raw[256];

    if (cli_open(&c, w->port, TLS13) < 0) {
        return NULL;
    }
    for (int i = 0; i < N_REQS; i++) { /* keep-alive: one connection, many requests */
        snprintf(raw, sizeof(raw),
                 "POST /count HTTP/1.1\r\nHost: a\r\nContent-Length: 8\r\n\r\n{\"i\":%02d}", i);
        if (cli_send(&c, raw, strlen(raw)) < 0) {
            break;
        }
        cli_read(&c, &r);
        char want[32];
        snprintf(want, sizeof(want), "{\"i\":%02d}", i);
        if (r.status == 200 && r.body && strcmp(r.body, want) == 0) {
            w->ok++;
        }
        resp_release(&r);
    }
    cli_close(&c);
    return NULL;
}

static void test_concurrent(void)
{
    struct kt_metrics *m = kt_metrics_new();
    struct kt_httpd_opts o = {.name = "pool",
                              .listen = "127.0.0.1:0",
                              .cert_file = cert_path,
                              .key_file = key_path,
                              .threads = 4,
                              .metrics = m};
    struct kt_err err = {0};
    struct kt_httpd *h = kt_httpd_new(&o, &err);
    pthread_t t[N_CLIENTS];
    struct worker w[N_CLIENTS];

    KT_ASSERT(h != NULL);
    kt_httpd_route(h, "POST", "/count", counting, NULL);
    CHECK_OK(kt_httpd_start(h, &err));
    for (int i = 0; i < N_CLIENTS; i++) {
        w[i] = (struct worker){.port = kt_httpd_port(h)};
        pthread_create(&t[i], NULL, client_main, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < N_CLIENTS; i++) {
        pthread_join(t[i], NULL);
        ok += w[i].ok;
    }
    CHECK_EQ_INT(ok, N_CLIENTS * N_REQS);
    CHECK_EQ_INT(atomic_load(&handled), N_CLIENTS * N_REQS);
    kt_httpd_stop(h, 1000);
    const char *labels[] = {"pool", "POST", "/count", "200"};
    struct kt_metric *req = kt_metrics_counter(
        m, "kt_http_requests_total", NULL, (const char *[]){"server", "method", "path", "code"}, 4);
    CHECK_EQ_INT((long long)kt_metric_value(req, labels), N_CLIENTS * N_REQS);
    kt_httpd_free(h);
    kt_metrics_free(m);
}

/* ---- graceful shutdown ---- */

static pthread_mutex_t slow_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cv = PTHREAD_COND_INITIALIZER;
static bool slow_entered, slow_release;

static void slow(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg)
{
    (void)req;
    (void)arg;
    pthread_mutex_lock(&slow_mu);
    slow_entered = true;
    pthread_cond_broadcast(&slow_cv);
    while (!slow_release) {
        pthread_cond_wait(&slow_cv, &slow_mu);
    }
    pthread_mutex_unlock(&slow_mu);
    kt_httpd_response_set(resp, 200, "text/plain", "finished");
}

struct slow_client {
    uint16_t port;
    struct resp r;
};

static void *slow_client_main(void *arg)
{
    struct slow_client *s = arg;

    request(s->port, TLS13, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", &s->r);
    return NULL;
}

struct stopper {
    struct kt_httpd *h;
};

static void *stopper_main(void *arg)
{
    kt_httpd_stop(((struct stopper *)arg)->h, 30000);
    return NULL;
}

static void test_graceful_stop(void)
{
    struct kt_httpd_opts o = {.name = "graceful",
                              .listen = "127.0.0.1:0",
                              .cert_file = cert_path,
                              .key_file = key_path,
                              .threads = 2};
    struct kt_err err = {0};
    struct kt_httpd *h = kt_httpd_new(&o, &err);
    struct slow_client sc = {0};
    struct stopper st = {h};
    pthread_t tc, ts;

    KT_ASSERT(h != NULL);
    kt_httpd_route(h, "GET", "/slow", slow, NULL);
    CHECK_OK(kt_httpd_start(h, &err));
    sc.port = kt_httpd_port(h);
    pthread_create(&tc, NULL, slow_client_main, &sc);
    pthread_mutex_lock(&slow_mu);
    while (!slow_entered) {
        pthread_cond_wait(&slow_cv, &slow_mu);
    }
    pthread_mutex_unlock(&slow_mu);
    kt_httpd_quiesce(h);
    CHECK_EQ_INT(tcp_connect(sc.port), -1); /* no new connections */
    pthread_create(&ts, NULL, stopper_main, &st);
    pthread_mutex_lock(&slow_mu);
    slow_release = true;
    pthread_cond_broadcast(&slow_cv);
    pthread_mutex_unlock(&slow_mu);
    pthread_join(tc, NULL);
    pthread_join(ts, NULL);
    CHECK_EQ_INT(sc.r.status, 200);
    CHECK_EQ_STR(sc.r.body, "finished");
    CHECK_CONTAINS(sc.r.head, "Connection: close");
    resp_release(&sc.r);
    kt_httpd_stop(h, 0); /* idempotent */
    kt_httpd_free(h);
}

/* ---- small things ---- */

static void test_portfile(void)
{
    char path[160];
    const char *names[] = {"listen", "health", "metrics"};
    const uint16_t ports[] = {9443, 8081, 0};
    struct kt_err err = {0};
    struct kt_buf b;

    snprintf(path, sizeof(path), "%s/ports.json", dir);
    CHECK_OK(kt_httpd_write_portfile(path, names, ports, 3, &err));
    kt_buf_init(&b, 4096);
    CHECK_OK(kt_buf_read_file(&b, path, &err));
    CHECK_EQ_STR(b.data, "{\"listen\":9443,\"health\":8081,\"metrics\":0}\n");
    kt_buf_release(&b);
    CHECK_EQ_INT(kt_httpd_write_portfile("/nonexistent-kt/ports.json", names, ports, 3, &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
}

static void test_bad_options(void)
{
    struct kt_err err = {0};
    struct kt_httpd_opts o = {.listen = "nonsense"};

    CHECK(kt_httpd_new(&o, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    o.listen = "127.0.0.1:70000";
    CHECK(kt_httpd_new(&o, &err) == NULL);
    o.listen = "127.0.0.1:0";
    o.cert_file = cert_path;
    CHECK(kt_httpd_new(&o, &err) == NULL);
    CHECK_CONTAINS(err.msg, "both");
    /* The port of a running server cannot be bound twice. */
    struct kt_httpd_opts p = {.listen = "127.0.0.1:0", .builtins = KT_HTTPD_HEALTH};
    struct kt_httpd *a = start(&p);
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)kt_httpd_port(a));
    p.listen = addr;
    struct kt_httpd *b = kt_httpd_new(&p, &err);
    KT_ASSERT(b != NULL);
    CHECK_EQ_INT(kt_httpd_start(b, &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
    kt_httpd_free(b);
    CHECK_EQ_INT(kt_httpd_reload_now(a, &err), -1); /* plain HTTP has nothing to reload */
    CHECK_EQ_INT(err.code, KT_EINVAL);
    kt_httpd_free(a);
    /* IPv6 and bracket syntax. */
    p.listen = "[::1]:0";
    struct kt_httpd *c = kt_httpd_new(&p, &err);
    KT_ASSERT(c != NULL);
    if (kt_httpd_start(c, &err) == 0) {
        CHECK(kt_httpd_port(c) != 0);
    }
    kt_httpd_free(c);
}

/* A PEM pair given in memory: TLS served from it, nothing to reload; a pair that does not
 * parse, half a pair, or files and a pair together are refused by kt_httpd_new(). */
static void test_pem_in_memory(const struct kt_certs *c)
{
    struct kt_err err = {0};
    struct kt_httpd_opts o = {.name = "mem",
                              .listen = "127.0.0.1:0",
                              .cert_pem = c->tls_crt,
                              .key_pem = c->tls_key,
                              .timeout_s = 1};
    struct kt_httpd *h = start(&o);
    struct cli cl;
    char *want = pem_serial(c->tls_crt), *got = NULL;

    CHECK(kt_httpd_certs_ready(h));
    CHECK_EQ_INT(get_status(kt_httpd_port(h), TLS13, "/echo", NULL), 200);
    if (cli_open(&cl, kt_httpd_port(h), TLS13) == 0) {
        got = peer_serial(&cl);
    }
    cli_close(&cl);
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(kt_httpd_reload_now(h, &err), -1);
    CHECK_CONTAINS(err.msg, "no certificate files");
    CHECK_EQ_INT(get_status(kt_httpd_port(h), NULL, "/echo", NULL), -1); /* TLS only */
    kt_httpd_free(h);
    free(want);
    free(got);

    o.key_pem = "-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----\n";
    CHECK(kt_httpd_new(&o, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK_CONTAINS(err.msg, "the certificate pair given in memory");
    o.key_pem = NULL;
    CHECK(kt_httpd_new(&o, &err) == NULL);
    CHECK_CONTAINS(err.msg, "both");
    o.key_pem = c->tls_key;
    o.cert_file = cert_path;
    o.key_file = key_path;
    CHECK(kt_httpd_new(&o, &err) == NULL);
    CHECK_CONTAINS(err.msg, "not both");
}

int main(void)
{
    struct kt_certs a = {0};

    kt_mem_init();
    signal(SIGPIPE, SIG_IGN);
    kt_log_set_level(KT_LOG_ERROR);
    snprintf(dir, sizeof(dir), "/tmp/kt-httpd-XXXXXX");
    KT_ASSERT(mkdtemp(dir) != NULL);
    snprintf(cert_path, sizeof(cert_path), "%s/tls.crt", dir);
    snprintf(key_path, sizeof(key_path), "%s/tls.key", dir);
    gen(&a);
    install(&a);

    struct kt_httpd_opts tls_o = {.name = "tls",
                                  .listen = "127.0.0.1:0",
                                  .cert_file = cert_path,
                                  .key_file = key_path,
                                  .timeout_s = 1,
                                  .threads = 2,
                                  .reload_ms = 20};
    struct kt_httpd *tls = start(&tls_o);
    struct kt_httpd_opts plain_o = {.name = "plain", .listen = ":0", .timeout_s = 1};
    struct kt_httpd *plain = start(&plain_o);

    test_routing(kt_httpd_port(plain), NULL);
    test_routing(kt_httpd_port(tls), TLS13);
    test_body_cap(kt_httpd_port(plain), NULL);
    test_body_cap(kt_httpd_port(tls), TLS13);
    test_tls_versions(kt_httpd_port(tls));
    test_silent_client(kt_httpd_port(tls), TLS13);
    test_silent_client(kt_httpd_port(plain), NULL);
    test_reload(tls, kt_httpd_port(tls), &a);
    test_reload_watcher(tls, kt_httpd_port(tls), &a);
    kt_httpd_free(tls);
    kt_httpd_free(plain);
    test_readyz_and_metrics();
    test_certs_later();
    test_conn_limit();
    test_fair_accepting(NULL);
    test_fair_accepting(TLS13);
    test_keepalive_idle(TLS13);
    test_header_deadline(TLS13);
    test_keepalive_evict_and_drain();
    test_concurrent();
    test_graceful_stop();
    test_portfile();
    test_bad_options();
    test_pem_in_memory(&a);
    kt_certs_release(&a);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_OK(system(cmd));
    return test_report();
}
