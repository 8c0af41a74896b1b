/* SPDX-License-Identifier: Apache-2.0 */
/* common/net/httpd.c - libmicrohttpd + GnuTLS behind httpd.h
 * (docs/internals/style.md#one-file-per-library: the only file that includes microhttpd.h).
 *
 * Certificates are served through a GnuTLS retrieve callback from a reference-counted
 * snapshot: each TLS connection takes a reference at its handshake and drops it when it
 * closes, so a reload swaps the pointer without disturbing connections in flight. A small
 * watcher thread stats the files. No routing beyond exact method+path; no HTTP/2 (the API
 * server's webhook client speaks HTTP/1.1 to a server that offers only that, as upstream's
 * webhook server, which turns HTTP/2 off). */
#include "common/net/httpd.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/base/buf.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/base/str.h"

#define LOG "httpd"
#define MAX_CHAIN 8            /* certificates in tls.crt */
#define MAX_PEM (256u * 1024)  /* cap for a certificate or key file */
#define CONN_MAGIC 0x6b744344u /* "ktCD": sanity check of the socket context */
#define TEXT "text/plain; charset=utf-8"
#define DISCARD_FACTOR 4 /* bytes read and dropped past the body cap, in caps */

/* A loaded certificate chain + key. Immutable once published; freed at refs == 0. */
struct creds {
    atomic_uint refs;
    gnutls_pcert_st pcert[MAX_CHAIN];
    unsigned n_pcert;
    gnutls_privkey_t key;
};

/* What we last saw of a file, to notice replacement (inode), rewrite (mtime) or growth. */
struct file_sig {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int err; /* errno of stat(), 0 when it existed */
};

struct route {
    char *method;
    char *path;
    kt_httpd_handler_fn *fn;
    void *arg;
};

struct kt_httpd {
    char *name;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    bool tls;        /* certificate files, or a PEM pair given in memory */
    char *cert_file; /* NULL in plain HTTP mode and with an in-memory pair (never reloaded) */
    char *key_file;
    char *priority; /* GnuTLS priority string (TLS mode) */
    size_t max_body;
    size_t max_inflight_body;
    atomic_size_t body_bytes; /* charged by requests buffering a body (req_ctx.charged) */
    unsigned max_conns, max_conns_per_ip, timeout_s, idle_s, threads, reload_ms, builtins;
    struct kt_metric *m_requests; /* NULL without a registry */
    struct kt_metric *m_latency;
    struct kt_metrics *metrics;
    kt_httpd_ready_fn *ready;
    void *ready_arg;
    struct route *routes;
    size_t n_routes;
    struct MHD_Daemon *daemon;
    uint16_t port;
    atomic_bool quiesced;
    atomic_bool draining; /* kt_httpd_drain(): every response says Connection: close */
    atomic_bool serving;  /* MHD_start_daemon returned */
    bool short_slice;     /* opts.short_slice */
    int listen_fd;        /* handed back by MHD_quiesce_daemon; closed after the stop */
    bool stopped;
    pthread_mutex_t mu;        /* guards everything below */
    pthread_cond_t cond_watch; /* wakes the watcher early (stop) */
    pthread_cond_t cond_idle;  /* inflight dropped */
    struct creds *creds;       /* the served pair; NULL until one loads */
    struct file_sig cert_sig, key_sig;
    unsigned inflight; /* requests started and not yet completed */
    bool watcher_running, watcher_stop;
    pthread_t watcher;
    pthread_mutex_t conn_mu;       /* guards conns and the conn_ctx fields it names */
    struct conn_ctx *conns;        /* open connections, newest first (header deadline) */
    struct conn_ctx *conns_oldest; /* the list's tail */
    unsigned n_live;               /* tracked and not cut */
    unsigned long evicted;         /* connections cut by fair accepting (logged by the watcher) */
};

/* Per TCP connection (MHD socket context). */
struct conn_ctx {
    uint32_t magic;
    struct kt_httpd *h;
    struct creds *creds; /* the snapshot this connection's handshake used, referenced */
    /* guarded by h->conn_mu: */
    struct conn_ctx *prev, *next;
    int fd;
    struct timespec since; /* accepted, or the previous request ended (monotonic) */
    bool in_request;       /* a request's headers are in and it is not finished */
    bool keepalive;        /* between requests after a completed one (idle_s applies) */
    bool hello;            /* a TLS ClientHello arrived (the client has said something) */
    bool cut;              /* shut down by a deadline, fair accepting or a drain */
};

/* Per HTTP request (MHD con_cls); one owner, released in request_completed(). */
struct req_ctx {
    struct kt_buf body;
    const struct route *route; /* NULL when the path matched nothing */
    struct timespec t0;
    unsigned status;  /* what we answered; 0 = nothing queued */
    bool too_big;     /* the body passed max_body; body is released */
    bool refused;     /* no budget or no memory for the body: 503; body is released */
    size_t charged;   /* bytes of h->body_bytes this request holds (its buffer's allocation) */
    size_t discarded; /* bytes dropped after too_big or refused */
};

/* ---- credentials ---- */

static void creds_unref(struct creds *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1) {
        return;
    }
    for (unsigned i = 0; i < c->n_pcert; i++) {
        gnutls_pcert_deinit(&c->pcert[i]);
    }
    gnutls_privkey_deinit(c->key);
    free(c);
}

static struct creds *creds_ref(struct creds *c)
{
    if (c) {
        atomic_fetch_add(&c->refs, 1);
    }
    return c;
}

/* The key id (SHA-256 of the public key) of a public key, for the pair check. */
static int pubkey_id(gnutls_pubkey_t pub, unsigned char *id, size_t *len)
{
    return gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, id, len);
}

static int key_matches(struct creds *c, struct kt_err *err)
{
    unsigned char a[64], b[64];
    size_t alen = sizeof(a), blen = sizeof(b);
    gnutls_pubkey_t pub = NULL;
    int rc = -1;

    if (gnutls_pubkey_init(&pub) < 0 || gnutls_pubkey_import_privkey(pub, c->key, 0, 0) < 0) {
        kt_err_set(err, KT_EPARSE, "cannot derive the public key from the private key");
        goto out;
    }
    if (pubkey_id(pub, a, &alen) < 0 || pubkey_id(c->pcert[0].pubkey, b, &blen) < 0) {
        kt_err_set(err, KT_EPARSE, "cannot compute key ids");
        goto out;
    }
    if (alen != blen || memcmp(a, b, alen) != 0) {
        kt_err_set(err, KT_EINVAL, "private key does not match the certificate");
        goto out;
    }
    rc = 0;
out:
    gnutls_pubkey_deinit(pub);
    return rc;
}

/* Parse a certificate chain and key into a fresh snapshot (refs = 1), or NULL. */
static struct creds *creds_parse(const struct kt_buf *crt, const struct kt_buf *key,
                                 struct kt_err *err)
{
    struct creds *c = kt_xcalloc(1, sizeof(*c));
    gnutls_datum_t dc = {.data = (unsigned char *)crt->data, .size = (unsigned)crt->len};
    gnutls_datum_t dk = {.data = (unsigned char *)key->data, .size = (unsigned)key->len};
    unsigned n = MAX_CHAIN;
    int rc;

    atomic_init(&c->refs, 1);
    rc = gnutls_pcert_list_import_x509_raw(c->pcert, &n, &dc, GNUTLS_X509_FMT_PEM,
                                           GNUTLS_X509_CRT_LIST_FAIL_IF_UNSORTED);
    if (rc < 0 || n == 0) {
        kt_err_set(err, KT_EPARSE, "certificate: %s", rc < 0 ? gnutls_strerror(rc) : "empty");
        goto fail;
    }
    c->n_pcert = n;
    if (gnutls_privkey_init(&c->key) < 0) {
        kt_err_set(err, KT_EINTERNAL, "gnutls_privkey_init failed");
        goto fail;
    }
    rc = gnutls_privkey_import_x509_raw(c->key, &dk, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (rc < 0) {
        kt_err_set(err, KT_EPARSE, "private key: %s", gnutls_strerror(rc));
        goto fail;
    }
    if (key_matches(c, err) < 0) {
        goto fail;
    }
    return c;
fail:
    creds_unref(c);
    return NULL;
}

static void file_stat(const char *path, struct file_sig *sig)
{
    struct stat st;

    memset(sig, 0, sizeof(*sig));
    if (stat(path, &st) < 0) {
        sig->err = errno ? errno : EIO;
        return;
    }
    sig->dev = st.st_dev;
    sig->ino = st.st_ino;
    sig->size = st.st_size;
    sig->mtime = st.st_mtim;
}

static bool sig_eq(const struct file_sig *a, const struct file_sig *b)
{
    return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Read both files and publish the pair if it is good. The files are read without the lock;
 * the swap happens under it. */
/* Release a buffer that held a private key, zeroing it first. */
static void key_buf_release(struct kt_buf *key)
{
    if (key->data) {
        memset(key->data, 0, key->len);
    }
    kt_buf_release(key);
}

static int creds_load(struct kt_httpd *h, struct kt_err *err)
{
    struct kt_buf crt, key;
    struct creds *c = NULL, *old = NULL;
    int rc = -1;

    kt_buf_init(&crt, MAX_PEM);
    kt_buf_init(&key, MAX_PEM);
    if (kt_buf_read_file(&crt, h->cert_file, err) < 0 ||
        kt_buf_read_file(&key, h->key_file, err) < 0) {
        goto out; /* the message names the file */
    }
    c = creds_parse(&crt, &key, err);
    if (!c) {
        kt_err_prefix(err, "%s, %s", h->cert_file, h->key_file);
        goto out;
    }
    pthread_mutex_lock(&h->mu);
    old = h->creds;
    h->creds = c;
    pthread_mutex_unlock(&h->mu);
    creds_unref(old);
    kt_log_info(LOG, "loaded certificate server=%s cert=%s", h->name, h->cert_file);
    rc = 0;
out:
    kt_buf_release(&crt);
    key_buf_release(&key);
    return rc;
}

/* The in-memory pair of kt_httpd_opts.cert_pem/key_pem, loaded once. */
static int creds_from_pem(struct kt_httpd *h, const char *crt_pem, const char *key_pem,
                          struct kt_err *err)
{
    struct kt_buf crt, key;
    struct creds *c = NULL;

    kt_buf_init(&crt, MAX_PEM);
    kt_buf_init(&key, MAX_PEM);
    if (kt_buf_append(&crt, crt_pem, strlen(crt_pem), err) == 0 &&
        kt_buf_append(&key, key_pem, strlen(key_pem), err) == 0) {
        c = creds_parse(&crt, &key, err);
    }
    kt_buf_release(&crt);
    key_buf_release(&key);
    if (!c) {
        kt_err_prefix(err, "%s: the certificate pair given in memory", h->name);
        return -1;
    }
    h->creds = c;
    return 0;
}

/* Stat both files, remember what was seen, and say whether it differs from the last look. */
static bool creds_changed(struct kt_httpd *h)
{
    struct file_sig cs, ks;
    bool same;

    file_stat(h->cert_file, &cs);
    file_stat(h->key_file, &ks);
    pthread_mutex_lock(&h->mu);
    same = sig_eq(&cs, &h->cert_sig) && sig_eq(&ks, &h->key_sig);
    h->cert_sig = cs;
    h->key_sig = ks;
    pthread_mutex_unlock(&h->mu);
    return !same;
}

/* Reload when either file changed since the last attempt (good or bad), so a broken pair is
 * reported once, not every period. A rotation that replaces the key before the certificate
 * may log one mismatch in between; the next check loads the finished pair. */
static void creds_check(struct kt_httpd *h)
{
    struct kt_err err = {0};

    if (creds_changed(h) && creds_load(h, &err) < 0) {
        kt_log_error(LOG,
                     "cannot load the certificate pair, serving the previous one if any: "
                     "server=%s %s",
                     h->name, err.msg);
    }
}

static void conns_sweep(struct kt_httpd *h);

static void *watcher_main(void *arg)
{
    struct kt_httpd *h = arg;
    struct timespec until;

    pthread_mutex_lock(&h->mu);
    while (!h->watcher_stop) {
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(h->reload_ms / 1000);
        until.tv_nsec += (long)(h->reload_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->cond_watch, &h->mu, &until);
        if (h->watcher_stop) {
            break;
        }
        pthread_mutex_unlock(&h->mu);
        if (h->cert_file) {
            creds_check(h);
        }
        conns_sweep(h);
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* GnuTLS asks for our certificate. libmicrohttpd sets the session pointer to its connection,
 * whose socket context is our conn_ctx; the connection keeps a reference to the snapshot it
 * gets until it closes. */
static int cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *algos, int n_algos, gnutls_pcert_st **pcert,
                         unsigned int *pcert_len, gnutls_privkey_t *key)
{
    struct MHD_Connection *conn = gnutls_session_get_ptr(session);
    const union MHD_ConnectionInfo *ci = NULL;
    struct conn_ctx *cc = NULL;

    (void)req_ca_dn;
    (void)nreqs;
    (void)algos;
    (void)n_algos;
    if (conn) {
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    }
    if (ci) {
        cc = ci->socket_context;
    }
    if (!cc || cc->magic != CONN_MAGIC) {
        kt_log_error(LOG, "TLS handshake without a connection context");
        return -1;
    }
    pthread_mutex_lock(&cc->h->conn_mu);
    cc->hello = true; /* fair accepting spares it while silent connections remain */
    pthread_mutex_unlock(&cc->h->conn_mu);
    if (!cc->creds) {
        pthread_mutex_lock(&cc->h->mu);
        cc->creds = creds_ref(cc->h->creds);
        pthread_mutex_unlock(&cc->h->mu);
    }
    if (!cc->creds) {
        kt_log_debug(LOG, "TLS handshake refused: no certificate loaded server=%s", cc->h->name);
        return -1;
    }
    *pcert = cc->creds->pcert;
    *pcert_len = cc->creds->n_pcert;
    *key = cc->creds->key;
    return 0;
}

/* ---- fair accepting ----
 * A flood of connections that never send a request (idle TCP, stalled handshakes, dripped
 * headers) from many addresses would otherwise fill the connection table, and new
 * connections, the API server's among them, would wait in the listen queue until the flood's
 * connections time out. Instead, once the live connections pass evict_at() (7/8) of the
 * table, each new connection makes room by shutting down the oldest connection that is not in
 * a request: first among those that never said a word (no TLS ClientHello; reopening them
 * costs nothing), then among those still before their first request, and only then an idle
 * keep-alive one (the one idle longest): those are the API server's pool, which it reuses
 * without a handshake, and since they may idle for idle_s they would otherwise be the oldest
 * and the first cut. The new connection itself is never the one cut, so the API server's
 * handshake and request (milliseconds) complete while a flooder's connections only replace
 * each other. Requests in progress are never cut. Upstream's Go servers have no connection
 * limit and so never cut early: a deliberate difference (docs/compatibility.md, Connections). */

/* The live count above which a new connection evicts the oldest waiting one. */
static unsigned evict_at(const struct kt_httpd *h)
{
    return h->max_conns - h->max_conns / KT_HTTPD_EVICT_HEADROOM;
}

/* Called with conn_mu held: shut the connection's socket down (libmicrohttpd then closes it
 * as if the client had gone) and stop counting it. */
static void conn_cut(struct kt_httpd *h, struct conn_ctx *cc)
{
    shutdown(cc->fd, SHUT_RDWR);
    cc->cut = true;
    h->n_live--;
}

/* Fair accepting's order among waiting connections: the lowest rank goes first. */
static int evict_rank(const struct kt_httpd *h, const struct conn_ctx *cc)
{
    if (cc->keepalive) {
        return 2; /* idle keep-alive */
    }
    return h->tls && !cc->hello ? 0 : 1; /* silent, or before its first request */
}

/* Whether cand goes before best (same rank: the older, or for keep-alive the longer idle). */
static bool evict_before(const struct kt_httpd *h, const struct conn_ctx *cand,
                         const struct conn_ctx *best)
{
    int rc = evict_rank(h, cand), rb = evict_rank(h, best);

    if (rc != rb) {
        return rc < rb;
    }
    return rc == 2 &&
           (cand->since.tv_sec < best->since.tv_sec || (cand->since.tv_sec == best->since.tv_sec &&
                                                        cand->since.tv_nsec < best->since.tv_nsec));
}

/* Called with conn_mu held: cut the first waiting connection in fair accepting's order other
 * than fresh (the one just accepted), if any. */
static bool conns_evict_one(struct kt_httpd *h, const struct conn_ctx *fresh)
{
    struct conn_ctx *best = NULL;

    for (struct conn_ctx *cc = h->conns_oldest; cc; cc = cc->prev) {
        if (cc == fresh || cc->in_request || cc->cut || cc->fd < 0) {
            continue;
        }
        if (!best || evict_before(h, cc, best)) {
            best = cc;
        }
        if (evict_rank(h, best) == 0) {
            break; /* the oldest silent one */
        }
    }
    if (best) {
        conn_cut(h, best);
    }
    return best != NULL;
}

/* ---- the header deadline and the keep-alive idle limit ----
 * libmicrohttpd's timeout is an idle timeout: a client sending one header byte every few seconds
 * never trips it. So a new connection must deliver its first request's headers within timeout_s of
 * being accepted (TLS handshake included), however it trickles them, and a later request's within
 * timeout_s of its request line (on_request_line); the watcher thread shuts the socket down (the
 * descriptor stays libmicrohttpd's, which then closes the connection as if the client had gone).
 *
 * A connection that has completed a request is a keep-alive one: it may wait idle_s for its next
 * request. The API server's webhook client (Go's Transport) keeps idle connections for up to 90 s
 * and does not resend a POST whose connection was reset under it; a server that closes idle
 * connections sooner races the client's reuse, and the review it loses fails the user's request
 * ("connection reset by peer"). With idle_s past 90 s the client always closes first. Upstream's
 * Go server sets no idle timeout at all (a deliberate difference, docs/compatibility.md,
 * Connections); ours stays bounded: idle keep-alive connections count against the connection
 * limits, fair accepting cuts them when it needs room (after the connections that have not
 * completed a request), and a drain closes them at once. While a request is in, libmicrohttpd's
 * idle timeout is timeout_s (conn_mhd_timeout), so a stalled body or a client that stops reading
 * its answer is still cut after timeout_s of silence. */

/* libmicrohttpd's timeout for this connection: timeout_s while a request is in, else the
 * daemon's default (idle_s; the watcher enforces the shorter first-request deadline). Called
 * from the connection's own thread (libmicrohttpd's callbacks). */
static void conn_mhd_timeout(struct kt_httpd *h, struct MHD_Connection *conn, bool in_request)
{
    (void)MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
                                    in_request ? h->timeout_s : h->idle_s);
}

static void conn_track(struct conn_ctx *cc, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct kt_httpd *h = cc->h;

    cc->fd = ci ? (int)ci->connect_fd : -1;
    clock_gettime(CLOCK_MONOTONIC, &cc->since);
    pthread_mutex_lock(&h->conn_mu);
    cc->next = h->conns;
    if (h->conns) {
        h->conns->prev = cc;
    } else {
        h->conns_oldest = cc;
    }
    h->conns = cc;
    h->n_live++;
    if (h->n_live > evict_at(h) && conns_evict_one(h, cc)) {
        h->evicted++;
    }
    pthread_mutex_unlock(&h->conn_mu);
}

static void conn_untrack(struct conn_ctx *cc)
{
    struct kt_httpd *h = cc->h;

    pthread_mutex_lock(&h->conn_mu);
    if (cc->prev) {
        cc->prev->next = cc->next;
    } else {
        h->conns = cc->next;
    }
    if (cc->next) {
        cc->next->prev = cc->prev;
    } else {
        h->conns_oldest = cc->prev;
    }
    if (!cc->cut) {
        h->n_live--;
    }
    cc->prev = cc->next = NULL;
    pthread_mutex_unlock(&h->conn_mu);
}

static struct conn_ctx *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct conn_ctx *cc = ci ? ci->socket_context : NULL;

    return cc && cc->magic == CONN_MAGIC ? cc : NULL;
}

/* A request's headers are in (in_request) or it ended (the keep-alive idle clock starts; while
 * draining the connection is closed instead: its response may have gone out before the drain
 * began, without Connection: close, and the client would keep it). */
static void conn_mark(struct MHD_Connection *conn, bool in_request)
{
    struct conn_ctx *cc = conn_of(conn);

    if (!cc) {
        return;
    }
    pthread_mutex_lock(&cc->h->conn_mu);
    cc->in_request = in_request;
    if (!in_request) {
        cc->keepalive = true;
        clock_gettime(CLOCK_MONOTONIC, &cc->since);
        if (atomic_load(&cc->h->draining) && !cc->cut && cc->fd >= 0) {
            conn_cut(cc->h, cc);
        }
    }
    pthread_mutex_unlock(&cc->h->conn_mu);
}

/* The request line of a request is in (libmicrohttpd's URI log callback). On a keep-alive
 * connection the idle wait is over: the rest of the headers are due within timeout_s, as a new
 * connection's are, so a client cannot trickle them for idle_s after one good request. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct conn_ctx *cc = conn_of(conn);

    (void)cls;
    (void)uri;
    if (cc) {
        pthread_mutex_lock(&cc->h->conn_mu);
        if (cc->keepalive) {
            cc->keepalive = false;
            clock_gettime(CLOCK_MONOTONIC, &cc->since);
        }
        pthread_mutex_unlock(&cc->h->conn_mu);
    }
    return NULL; /* the request's context stays NULL until request_begin */
}

/* Shut down every connection that has not sent a request's headers within timeout_s (of being
 * accepted, or of its request line on a keep-alive connection), and every keep-alive one idle
 * for longer than idle_s. */
static void conns_sweep(struct kt_httpd *h)
{
    struct timespec now;
    unsigned cut = 0, cut_idle = 0;
    unsigned long evicted;

    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&h->conn_mu);
    for (struct conn_ctx *cc = h->conns; cc; cc = cc->next) {
        unsigned limit = cc->keepalive ? h->idle_s : h->timeout_s;
        if (!cc->in_request && !cc->cut && cc->fd >= 0 &&
            now.tv_sec - cc->since.tv_sec > (time_t)limit) {
            conn_cut(h, cc);
            if (cc->keepalive) {
                cut_idle++;
            } else {
                cut++;
            }
        }
    }
    evicted = h->evicted;
    h->evicted = 0;
    pthread_mutex_unlock(&h->conn_mu);
    if (cut || cut_idle) {
        kt_log_debug(LOG,
                     "closed %u connections without request headers after %us and %u idle "
                     "keep-alive connections after %us server=%s",
                     cut, h->timeout_s, cut_idle, h->idle_s, h->name);
    }
    if (evicted) {
        /* at most once per watcher period: a flood cannot flood the log */
        kt_log_info(LOG,
                    "connection table near full: closed %lu waiting connections to make room "
                    "server=%s",
                    evicted, h->name);
    }
}

/* ---- short slices ----
 * Linux 6.12's fair scheduler (EEVDF) lets a thread ask for a shorter slice than the default
 * (1.4 ms on a 2-core machine) with sched_setattr's sched_runtime, no privilege needed; a woken
 * thread whose slice is shorter than the running one's may preempt it instead of queueing behind
 * it. Measured with kt-webhook alone on a loaded 2-core machine: a worker's wait for a CPU after
 * each wake-up fell from 0.9-1.7 ms to 0.2-0.6 ms; on a whole control plane the API server's
 * timing of the calls did not move beyond its noise (docs/benchmarks.md, "The webhook as the API
 * server sees it"). Kernels without custom slices accept and ignore the value; a failure changes
 * nothing and is not logged. */

struct sched_attr_v0 { /* the system call's first layout (SCHED_ATTR_SIZE_VER0, 48 bytes) */
    uint32_t size;
    uint32_t policy;
    uint64_t flags; /* SCHED_FLAG_KEEP_POLICY: the thread's policy stays (normal or batch) */
    int32_t nice;
    uint32_t priority;
    uint64_t runtime; /* ns: the slice asked for; the kernel clamps it to 0.1-100 ms */
    uint64_t deadline;
    uint64_t period;
};

#define SHORT_SLICE_NS 100000u /* the shortest the kernel grants */
#define SCHED_FLAG_KEEP_POLICY_ 0x08u

/* Ask for the shortest slice for the calling thread, keeping its policy and nice value (the
 * call sets both, and lowering nice would need a privilege). */
static void thread_short_slice(void)
{
#ifdef SYS_sched_setattr
    struct sched_attr_v0 a;

    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.flags = SCHED_FLAG_KEEP_POLICY_;
    errno = 0;
    a.nice = getpriority(PRIO_PROCESS, 0); /* this thread's (Linux: PRIO_PROCESS 0 = caller) */
    if (errno != 0) {
        return;
    }
    a.runtime = SHORT_SLICE_NS;
    (void)syscall(SYS_sched_setattr, 0, &a, 0);
#endif
}

static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                              enum MHD_ConnectionNotificationCode toe)
{
    struct conn_ctx *cc;
    struct kt_httpd *h = cls;

    (void)conn;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        /* This runs on the worker that will serve the connection; the call is cheap and
         * idempotent, so each new connection repeats it rather than tracking threads. */
        if (h->short_slice) {
            thread_short_slice();
        }
        cc = kt_try_malloc(sizeof(*cc)); /* NULL: this connection's handshake fails */
        if (!cc) {
            *socket_ctx = NULL;
            return;
        }
        memset(cc, 0, sizeof(*cc));
        cc->magic = CONN_MAGIC;
        cc->h = cls;
        conn_track(cc, conn);
        *socket_ctx = cc;
        return;
    }
    cc = *socket_ctx;
    if (cc) {
        conn_untrack(cc);
        creds_unref(cc->creds);
        cc->magic = 0;
        free(cc);
        *socket_ctx = NULL;
    }
}

/* ---- responses ---- */

void kt_httpd_response_take(struct kt_httpd_response *resp, unsigned status,
                            const char *content_type, char *body, size_t len)
{
    free(resp->body);
    resp->status = status;
    resp->content_type = content_type;
    resp->body = body;
    resp->body_len = body ? len : 0;
}

void kt_httpd_response_set(struct kt_httpd_response *resp, unsigned status,
                           const char *content_type, const char *text)
{
    char *copy = text ? kt_xstrdup(text) : NULL;

    kt_httpd_response_take(resp, status, content_type, copy, copy ? strlen(copy) : 0);
}

void kt_httpd_response_header(struct kt_httpd_response *resp, const char *name, const char *value)
{
    if (resp->n_headers >= KT_HTTPD_MAX_EXTRA_HEADERS) {
        kt_log_error(LOG, "too many response headers, dropping %s", name);
        return;
    }
    resp->headers[resp->n_headers][0] = kt_xstrdup(name);
    resp->headers[resp->n_headers][1] = kt_xstrdup(value);
    resp->n_headers++;
}

static void response_release(struct kt_httpd_response *resp)
{
    free(resp->body);
    for (size_t i = 0; i < resp->n_headers; i++) {
        free(resp->headers[i][0]);
        free(resp->headers[i][1]);
    }
    memset(resp, 0, sizeof(*resp));
}

/* Queue resp on conn and release it. Returns MHD's verdict. */
static enum MHD_Result send_response(struct kt_httpd *h, struct MHD_Connection *conn,
                                     struct req_ctx *rc, struct kt_httpd_response *resp)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (resp->body) {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        resp->body = NULL;
    } else {
        r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    if (!r) {
        response_release(resp);
        return MHD_NO;
    }
    if (resp->content_type) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
    }
    for (size_t i = 0; i < resp->n_headers; i++) {
        MHD_add_response_header(r, resp->headers[i][0], resp->headers[i][1]);
    }
    if (atomic_load(&h->draining)) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    }
    rc->status = resp->status;
    ret = MHD_queue_response(conn, resp->status, r);
    MHD_destroy_response(r);
    response_release(resp);
    return ret;
}

static enum MHD_Result send_text(struct kt_httpd *h, struct MHD_Connection *conn,
                                 struct req_ctx *rc, unsigned status, const char *text)
{
    struct kt_httpd_response resp = {0};

    kt_httpd_response_set(&resp, status, TEXT, text);
    return send_response(h, conn, rc, &resp);
}

static enum MHD_Result send_too_big(struct kt_httpd *h, struct MHD_Connection *conn,
                                    struct req_ctx *rc)
{
    char msg[96];

    snprintf(msg, sizeof(msg), "request body too large: the limit is %zu bytes\n", h->max_body);
    return send_text(h, conn, rc, MHD_HTTP_CONTENT_TOO_LARGE, msg);
}

static enum MHD_Result send_busy(struct kt_httpd *h, struct MHD_Connection *conn,
                                 struct req_ctx *rc)
{
    struct kt_httpd_response resp = {0};

    kt_httpd_response_set(&resp, MHD_HTTP_SERVICE_UNAVAILABLE, TEXT,
                          "server busy: too many request bytes in flight, retry later\n");
    kt_httpd_response_header(&resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    return send_response(h, conn, rc, &resp);
}

/* ---- the body budget ---- */

/* Take n bytes of the server's body budget; false (nothing taken) when it would overflow. */
static bool budget_take(struct kt_httpd *h, size_t n)
{
    size_t cur = atomic_load(&h->body_bytes);

    do {
        if (n > h->max_inflight_body || cur > h->max_inflight_body - n) {
            return false;
        }
    } while (!atomic_compare_exchange_weak(&h->body_bytes, &cur, cur + n));
    return true;
}

/* Free the request's body and give its share of the budget back. */
static void body_drop(struct kt_httpd *h, struct req_ctx *rc)
{
    kt_buf_release(&rc->body);
    if (rc->charged) {
        atomic_fetch_sub(&h->body_bytes, rc->charged);
        rc->charged = 0;
    }
}

/* Grow the body buffer to hold need bytes (<= max_body), charging the allocation to the budget
 * first. -1 when the budget is spent or the allocation fails: the caller refuses the request
 * (503); nothing else is affected. */
static int body_reserve(struct kt_httpd *h, struct req_ctx *rc, size_t need)
{
    size_t cap = kt_buf_cap_for(&rc->body, need);
    struct kt_err err = {0};

    if (cap > rc->charged) {
        if (!budget_take(h, cap - rc->charged)) {
            kt_log_debug(LOG, "body budget of %zu bytes spent, refusing a request server=%s",
                         h->max_inflight_body, h->name);
            return -1;
        }
        rc->charged = cap;
    }
    if (kt_buf_try_reserve(&rc->body, need, &err) < 0) {
        kt_log_warn(LOG, "cannot buffer a request body server=%s: %s", h->name, err.msg);
        return -1;
    }
    return 0;
}

/* ---- requests ---- */

const char *kt_httpd_request_header(const struct kt_httpd_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->priv_, MHD_HEADER_KIND, name);
}

const char *kt_httpd_request_query(const struct kt_httpd_request *req, const char *key)
{
    const char *value = NULL;
    size_t len = 0;

    if (MHD_lookup_connection_value_n(req->priv_, MHD_GET_ARGUMENT_KIND, key, strlen(key), &value,
                                      &len) != MHD_YES) {
        return NULL;
    }
    return value ? value : "";
}

static const struct route *route_find(const struct kt_httpd *h, const char *method,
                                      const char *path, bool *path_known)
{
    *path_known = false;
    for (size_t i = 0; i < h->n_routes; i++) {
        const char *rp = h->routes[i].path;
        size_t n = strlen(rp);
        bool prefix = n > 0 && rp[n - 1] == '*';
        if (prefix ? strncmp(rp, path, n - 1) != 0 : strcmp(rp, path) != 0) {
            continue;
        }
        *path_known = true;
        if (strcmp(h->routes[i].method, "*") == 0 || strcmp(h->routes[i].method, method) == 0) {
            return &h->routes[i];
        }
    }
    return NULL;
}

/* 405 with the Allow header listing the path's methods. */
static enum MHD_Result send_not_allowed(struct kt_httpd *h, struct MHD_Connection *conn,
                                        struct req_ctx *rc, const char *path)
{
    struct kt_httpd_response resp = {0};
    struct kt_buf allow;

    kt_buf_init(&allow, 1024);
    for (size_t i = 0; i < h->n_routes; i++) {
        if (strcmp(h->routes[i].path, path) == 0) {
            int ok =
                kt_buf_printf(&allow, NULL, "%s%s", allow.len ? ", " : "", h->routes[i].method);
            KT_ASSERT(ok == 0);
        }
    }
    kt_httpd_response_set(&resp, MHD_HTTP_METHOD_NOT_ALLOWED, TEXT, "405 method not allowed\n");
    kt_httpd_response_header(&resp, MHD_HTTP_HEADER_ALLOW, allow.data ? allow.data : "");
    kt_buf_release(&allow);
    return send_response(h, conn, rc, &resp);
}

/* The announced Content-Length, or 0 when absent (chunked) or unparseable (left to
 * libmicrohttpd, which answers 400). */
static uint64_t announced_length(struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    int64_t n = 0;

    if (!cl || kt_str_to_i64(kt_str_c(cl), 0, INT64_MAX, &n, NULL) < 0) {
        return 0;
    }
    return (uint64_t)n;
}

/* First call for a request: the headers are in. Answer 404/405/413 at once, else accept. */
static enum MHD_Result request_begin(struct kt_httpd *h, struct MHD_Connection *conn,
                                     const char *url, const char *method, void **con_cls)
{
    struct req_ctx *rc = kt_try_malloc(sizeof(*rc));
    bool path_known = false;
    uint64_t announced;

    conn_mark(conn, true);
    conn_mhd_timeout(h, conn, true);
    if (!rc) {
        return MHD_NO; /* out of memory: this connection is closed, nothing else */
    }
    memset(rc, 0, sizeof(*rc));
    clock_gettime(CLOCK_MONOTONIC, &rc->t0);
    kt_buf_init(&rc->body, h->max_body);
    pthread_mutex_lock(&h->mu);
    h->inflight++;
    pthread_mutex_unlock(&h->mu);
    *con_cls = rc;
    rc->route = route_find(h, method, url, &path_known);
    if (!rc->route && !path_known) {
        return send_text(h, conn, rc, MHD_HTTP_NOT_FOUND, "404 page not found\n");
    }
    if (!rc->route) {
        return send_not_allowed(h, conn, rc, url);
    }
    announced = announced_length(conn);
    if (announced > h->max_body) {
        return send_too_big(h, conn, rc);
    }
    /* A known length is reserved (and charged) whole, up front: one allocation, and a busy
     * server says so before the client sends the body. */
    if (announced > 0 && body_reserve(h, rc, (size_t)announced) < 0) {
        body_drop(h, rc);
        return send_busy(h, conn, rc);
    }
    return MHD_YES;
}

/* Buffer n more body bytes; -1 (and the body dropped, too_big or refused set) when they do
 * not fit the cap, the budget or memory. */
static int body_store(struct kt_httpd *h, struct req_ctx *rc, const char *data, size_t n)
{
    int ok;

    if (n > h->max_body || rc->body.len > h->max_body - n) {
        rc->too_big = true;
        kt_log_warn(LOG, "request body over %zu bytes server=%s", h->max_body, h->name);
    } else if (body_reserve(h, rc, rc->body.len + n) < 0) {
        rc->refused = true;
    } else {
        ok = kt_buf_append(&rc->body, data, n, NULL); /* fits: reserved above */
        KT_ASSERT(ok == 0);
        return 0;
    }
    body_drop(h, rc);
    return -1;
}

/* A piece of the body. libmicrohttpd 0.9.75 cannot queue a response in the middle of an
 * upload, so past the cap (or without budget) the rest is read and dropped and 413 (503) goes
 * out once the body ends; a body that keeps coming past DISCARD_FACTOR times the cap gets its
 * connection cut. */
static enum MHD_Result request_body(struct kt_httpd *h, struct req_ctx *rc, const char *data,
                                    size_t n)
{
    if (rc->status) {
        return MHD_YES; /* already answered; libmicrohttpd discards the rest */
    }
    if (!rc->too_big && !rc->refused && body_store(h, rc, data, n) == 0) {
        return MHD_YES;
    }
    rc->discarded += n;
    return rc->discarded / DISCARD_FACTOR > h->max_body ? MHD_NO : MHD_YES;
}

static enum MHD_Result request_dispatch(struct kt_httpd *h, struct MHD_Connection *conn,
                                        struct req_ctx *rc, const char *url, const char *method)
{
    struct kt_httpd_response resp = {0};
    struct kt_httpd_request req = {0};

    req.method = method;
    req.path = url;
    req.content_type =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    req.body = rc->body.data ? rc->body.data : "";
    req.body_len = rc->body.len;
    req.priv_ = conn;
    resp.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    rc->route->fn(&req, &resp, rc->route->arg);
    return send_response(h, conn, rc, &resp);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *data_size, void **con_cls)
{
    struct kt_httpd *h = cls;
    struct req_ctx *rc = *con_cls;
    size_t n = *data_size;

    (void)version;
    if (!rc) {
        return request_begin(h, conn, url, method, con_cls);
    }
    if (n > 0) {
        *data_size = 0;
        return request_body(h, rc, data, n);
    }
    if (rc->status) {
        return MHD_YES;
    }
    if (rc->too_big) {
        return send_too_big(h, conn, rc);
    }
    if (rc->refused) {
        return send_busy(h, conn, rc);
    }
    return request_dispatch(h, conn, rc, url, method);
}

static double elapsed_s(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    struct kt_httpd *h = cls;
    struct req_ctx *rc = *con_cls;

    conn_mark(conn, false);
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) { /* else the connection is closing */
        conn_mhd_timeout(h, conn, false);
    }
    if (!rc) {
        return;
    }
    if (h->m_requests && rc->status) {
        char code[16];
        const char *method = rc->route ? rc->route->method : "other";
        const char *path = rc->route ? rc->route->path : "unmatched";
        snprintf(code, sizeof(code), "%u", rc->status);
        const char *labels[] = {h->name, method, path, code};
        kt_metric_inc(h->m_requests, labels);
        kt_metric_observe(h->m_latency, labels, elapsed_s(&rc->t0));
    }
    body_drop(h, rc);
    free(rc);
    *con_cls = NULL;
    pthread_mutex_lock(&h->mu);
    h->inflight--;
    pthread_cond_broadcast(&h->cond_idle);
    pthread_mutex_unlock(&h->mu);
}

/* ---- built-in routes ---- */

static void builtin_healthz(const struct kt_httpd_request *req, struct kt_httpd_response *resp,
                            void *arg)
{
    (void)req;
    (void)arg;
    kt_httpd_response_set(resp, MHD_HTTP_OK, TEXT, "ok");
}

static void builtin_readyz(const struct kt_httpd_request *req, struct kt_httpd_response *resp,
                           void *arg)
{
    struct kt_httpd *h = arg;
    const char *why;
    char buf[KT_HTTPD_READY_MAX];

    (void)req;
    if (h->ready) {
        why = h->ready(h->ready_arg, buf, sizeof(buf));
    } else {
        why = kt_httpd_certs_ready(h) ? NULL : "certificates are not ready";
    }
    if (why) {
        kt_httpd_response_set(resp, MHD_HTTP_SERVICE_UNAVAILABLE, TEXT, why);
        return;
    }
    kt_httpd_response_set(resp, MHD_HTTP_OK, TEXT, "ok");
}

static void builtin_metrics(const struct kt_httpd_request *req, struct kt_httpd_response *resp,
                            void *arg)
{
    struct kt_httpd *h = arg;
    size_t len = 0;
    char *text;

    (void)req;
    text = kt_metrics_expose(h->metrics, &len);
    kt_httpd_response_take(resp, MHD_HTTP_OK, KT_METRICS_CONTENT_TYPE, text, len);
}

/* ---- lifecycle ---- */

/* "ADDR:PORT", ":PORT" or "[V6]:PORT" into h->addr. */
static int parse_listen(struct kt_httpd *h, const char *listen, struct kt_err *err)
{
    const char *colon = listen ? strrchr(listen, ':') : NULL;
    struct addrinfo hints = {0}, *res = NULL;
    int64_t port = 0;
    char *host = NULL;
    int rc = -1;

    if (!colon || kt_str_to_i64(kt_str_c(colon + 1), 0, 65535, &port, NULL) < 0) {
        return kt_err_set(err, KT_EINVAL, "listen address %s: want ADDR:PORT",
                          listen ? listen : "(null)");
    }
    host = kt_xstrndup(listen, (size_t)(colon - listen));
    if (host[0] == '[' && colon > listen + 1 && colon[-1] == ']') {
        memmove(host, host + 1, strlen(host) - 2);
        host[strlen(host) - 2] = '\0';
    }
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    if (getaddrinfo(host[0] ? host : "0.0.0.0", NULL, &hints, &res) != 0 || !res) {
        kt_err_set(err, KT_EINVAL, "listen address %s: cannot resolve %s", listen, host);
        goto out;
    }
    memcpy(&h->addr, res->ai_addr, res->ai_addrlen);
    h->addrlen = res->ai_addrlen;
    if (h->addr.ss_family == AF_INET6) {
        ((struct sockaddr_in6 *)&h->addr)->sin6_port = htons((uint16_t)port);
    } else {
        ((struct sockaddr_in *)&h->addr)->sin_port = htons((uint16_t)port);
    }
    rc = 0;
out:
    if (res) {
        freeaddrinfo(res);
    }
    free(host);
    return rc;
}

/* KT_EINVAL unless GnuTLS accepts prio (NULL = the default, always accepted). */
static int check_priority(const char *prio, struct kt_err *err)
{
    gnutls_priority_t p;
    const char *bad = NULL;

    if (!prio) {
        return 0;
    }
    if (gnutls_priority_init(&p, prio, &bad) < 0) {
        return kt_err_set(err, KT_EINVAL, "bad TLS priority string near \"%s\"", bad ? bad : prio);
    }
    gnutls_priority_deinit(p);
    return 0;
}

/* A quarter of the connection limit, but never below 16 (or the limit itself). */
static unsigned default_per_ip(unsigned max_conns)
{
    unsigned per = max_conns / 4;

    if (per < 16) {
        per = max_conns < 16 ? max_conns : 16;
    }
    return per;
}

struct kt_httpd *kt_httpd_new(const struct kt_httpd_opts *opts, struct kt_err *err)
{
    struct kt_httpd *h = kt_xcalloc(1, sizeof(*h));

    h->name = kt_xstrdup(opts->name ? opts->name : "http");
    h->listen_fd = MHD_INVALID_SOCKET;
    pthread_mutex_init(&h->mu, NULL);
    pthread_mutex_init(&h->conn_mu, NULL);
    pthread_cond_init(&h->cond_watch, NULL);
    pthread_cond_init(&h->cond_idle, NULL);
    if (parse_listen(h, opts->listen, err) < 0) {
        goto fail;
    }
    if (!opts->cert_file != !opts->key_file || !opts->cert_pem != !opts->key_pem) {
        kt_err_set(err, KT_EINVAL, "a TLS server needs both a certificate and a key file");
        goto fail;
    }
    if (opts->cert_file && opts->cert_pem) {
        kt_err_set(err, KT_EINVAL, "a TLS server takes certificate files or a PEM pair, not both");
        goto fail;
    }
    h->cert_file = opts->cert_file ? kt_xstrdup(opts->cert_file) : NULL;
    h->key_file = opts->key_file ? kt_xstrdup(opts->key_file) : NULL;
    if (opts->cert_pem && creds_from_pem(h, opts->cert_pem, opts->key_pem, err) < 0) {
        goto fail;
    }
    h->tls = h->cert_file || h->creds;
    if (check_priority(opts->https_priority, err) < 0) {
        goto fail;
    }
    h->priority = kt_xstrdup(opts->https_priority ? opts->https_priority : KT_HTTPD_TLS_PRIORITIES);
    h->max_body = opts->max_body ? opts->max_body : KT_HTTPD_DEFAULT_MAX_BODY;
    h->max_inflight_body =
        opts->max_inflight_body ? opts->max_inflight_body : KT_HTTPD_DEFAULT_MAX_INFLIGHT_BODY;
    atomic_init(&h->body_bytes, 0);
    h->max_conns = opts->max_conns ? opts->max_conns : KT_HTTPD_DEFAULT_MAX_CONNS;
    /* One address cannot take every slot: a flood from one pod leaves room for the API
     * server (which connects from its own address). */
    h->max_conns_per_ip =
        opts->max_conns_per_ip ? opts->max_conns_per_ip : default_per_ip(h->max_conns);
    h->timeout_s = opts->timeout_s ? opts->timeout_s : KT_HTTPD_DEFAULT_TIMEOUT_S;
    h->idle_s = opts->idle_s ? opts->idle_s : KT_HTTPD_DEFAULT_IDLE_S;
    if (h->idle_s < h->timeout_s) {
        h->idle_s = h->timeout_s; /* libmicrohttpd's default must not undercut the deadline */
    }
    h->threads = opts->threads;
    h->short_slice = opts->short_slice;
    h->reload_ms = opts->reload_ms ? opts->reload_ms : KT_HTTPD_DEFAULT_RELOAD_MS;
    h->ready = opts->ready;
    h->ready_arg = opts->ready_arg;
    h->metrics = opts->metrics;
    if (h->metrics) {
        const char *labels[] = {"server", "method", "path", "code"};
        h->m_requests = kt_metrics_counter(h->metrics, "kt_http_requests_total",
                                           "HTTP requests answered.", labels, 4);
        h->m_latency = kt_metrics_histogram(h->metrics, "kt_http_request_duration_seconds",
                                            "HTTP request latency in seconds.", labels, 4, NULL);
    }
    if (opts->builtins & KT_HTTPD_HEALTH) {
        kt_httpd_route(h, "GET", "/healthz", builtin_healthz, h);
        kt_httpd_route(h, "GET", "/readyz", builtin_readyz, h);
    }
    if ((opts->builtins & KT_HTTPD_METRICS) && h->metrics) {
        kt_httpd_route(h, "GET", "/metrics", builtin_metrics, h);
    }
    return h;
fail:
    kt_httpd_free(h);
    return NULL;
}

void kt_httpd_route(struct kt_httpd *h, const char *method, const char *path,
                    kt_httpd_handler_fn *fn, void *arg)
{
    KT_ASSERT(!h->daemon);
    for (size_t i = 0; i < h->n_routes; i++) {
        if (strcmp(h->routes[i].method, method) == 0 && strcmp(h->routes[i].path, path) == 0) {
            h->routes[i].fn = fn;
            h->routes[i].arg = arg;
            return;
        }
    }
    h->routes = kt_xrealloc(h->routes, (h->n_routes + 1) * sizeof(*h->routes));
    h->routes[h->n_routes].method = kt_xstrdup(method);
    h->routes[h->n_routes].path = kt_xstrdup(path);
    h->routes[h->n_routes].fn = fn;
    h->routes[h->n_routes].arg = arg;
    h->n_routes++;
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct kt_httpd *h = cls;
    char msg[512];
    size_t n;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) {
        msg[--n] = '\0';
    }
    /* Once serving, these are about misbehaving clients: keep them out of the default log. */
    if (atomic_load(&h->serving)) {
        kt_log_debug(LOG, "%s server=%s", msg, h->name);
        return;
    }
    kt_log_warn(LOG, "%s server=%s", msg, h->name);
}

/* Start libmicrohttpd. In plain mode the TLS options are cut off by an early MHD_OPTION_END. */
static struct MHD_Daemon *daemon_start(struct kt_httpd *h)
{
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    bool tls = h->tls;

    if (tls) {
        flags |= MHD_USE_TLS;
    }
    if (h->addr.ss_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
    }
    /* Options that do not apply are replaced by a harmless repeat (connection limit) or cut
     * off by an early MHD_OPTION_END, so one call covers every mode. */
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&h->addr, MHD_OPTION_NOTIFY_COMPLETED,
        request_completed, h, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, h, MHD_OPTION_CONNECTION_LIMIT, h->max_conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->max_conns_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
        h->idle_s, MHD_OPTION_STRICT_FOR_CLIENT, 1,
        h->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_CONNECTION_LIMIT,
        h->threads > 1 ? h->threads : h->max_conns,
        tls ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END, h->priority,
        MHD_OPTION_HTTPS_CERT_CALLBACK, cert_callback, MHD_OPTION_END);
}

int kt_httpd_start(struct kt_httpd *h, struct kt_err *err)
{
    const union MHD_DaemonInfo *info;

    KT_ASSERT(!h->daemon && !h->stopped);
    if (h->cert_file) {
        creds_check(h);
    }
    h->daemon = daemon_start(h);
    if (!h->daemon) {
        return kt_err_set(err, KT_EIO, "%s: cannot serve (address in use or bad options)", h->name);
    }
    atomic_store(&h->serving, true);
    info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : 0;
    if (pthread_create(&h->watcher, NULL, watcher_main, h) != 0) {
        kt_httpd_stop(h, 0);
        return kt_err_set(err, KT_EINTERNAL, "%s: cannot start the watcher thread", h->name);
    }
    h->watcher_running = true;
    kt_log_info(LOG, "listening server=%s port=%u tls=%s", h->name, (unsigned)h->port,
                h->tls ? "true" : "false");
    return 0;
}

uint16_t kt_httpd_port(const struct kt_httpd *h)
{
    return h->port;
}

bool kt_httpd_certs_ready(struct kt_httpd *h)
{
    bool ready;

    if (!h->tls) {
        return true;
    }
    pthread_mutex_lock(&h->mu);
    ready = h->creds != NULL;
    pthread_mutex_unlock(&h->mu);
    return ready;
}

int kt_httpd_reload_now(struct kt_httpd *h, struct kt_err *err)
{
    if (!h->cert_file) {
        return kt_err_set(err, KT_EINVAL, "%s %s", h->name,
                          h->tls ? "has no certificate files to reload" : "serves plain HTTP");
    }
    (void)creds_changed(h); /* the watcher need not load the same files again */
    return creds_load(h, err);
}

void kt_httpd_drain(struct kt_httpd *h)
{
    unsigned n = 0;

    if (!h->daemon || atomic_exchange(&h->draining, true)) {
        return;
    }
    pthread_mutex_lock(&h->conn_mu);
    for (struct conn_ctx *cc = h->conns; cc; cc = cc->next) {
        if (!cc->in_request && !cc->cut && cc->fd >= 0) {
            conn_cut(h, cc);
            n++;
        }
    }
    pthread_mutex_unlock(&h->conn_mu);
    kt_log_info(LOG,
                "draining: closed %u idle connections, answering with Connection: close server=%s",
                n, h->name);
}

bool kt_httpd_draining(struct kt_httpd *h)
{
    return atomic_load(&h->draining);
}

void kt_httpd_quiesce(struct kt_httpd *h)
{
    if (!h->daemon || atomic_exchange(&h->quiesced, true)) {
        return;
    }
    atomic_store(&h->draining, true); /* responses in flight: Connection: close */
    /* libmicrohttpd's workers drop the socket from their epoll sets asynchronously, so the
     * descriptor must stay allocated until they are joined; shutdown() makes Linux stop
     * listening now (new connections are refused), close() waits for kt_httpd_stop(). */
    h->listen_fd = MHD_quiesce_daemon(h->daemon);
    if (h->listen_fd != MHD_INVALID_SOCKET) {
        shutdown(h->listen_fd, SHUT_RDWR);
    }
}

static void wait_idle(struct kt_httpd *h, unsigned grace_ms)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(grace_ms / 1000);
    until.tv_nsec += (long)(grace_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&h->mu);
    while (h->inflight > 0) {
        if (pthread_cond_timedwait(&h->cond_idle, &h->mu, &until) == ETIMEDOUT) {
            kt_log_warn(LOG, "stopping with %u requests in flight server=%s", h->inflight, h->name);
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
}

void kt_httpd_stop(struct kt_httpd *h, unsigned grace_ms)
{
    if (!h || h->stopped || !h->daemon) {
        return;
    }
    kt_httpd_quiesce(h);
    wait_idle(h, grace_ms);
    MHD_stop_daemon(h->daemon);
    h->daemon = NULL;
    if (h->listen_fd != MHD_INVALID_SOCKET) {
        close(h->listen_fd);
        h->listen_fd = MHD_INVALID_SOCKET;
    }
    h->stopped = true;
    if (h->watcher_running) {
        pthread_mutex_lock(&h->mu);
        h->watcher_stop = true;
        pthread_cond_broadcast(&h->cond_watch);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->watcher, NULL);
        h->watcher_running = false;
    }
    kt_log_info(LOG, "stopped server=%s", h->name);
}

void kt_httpd_free(struct kt_httpd *h)
{
    if (!h) {
        return;
    }
    kt_httpd_stop(h, KT_HTTPD_DEFAULT_GRACE_MS);
    for (size_t i = 0; i < h->n_routes; i++) {
        free(h->routes[i].method);
        free(h->routes[i].path);
    }
    free(h->routes);
    creds_unref(h->creds);
    free(h->cert_file);
    free(h->key_file);
    free(h->priority);
    free(h->name);
    pthread_cond_destroy(&h->cond_watch);
    pthread_cond_destroy(&h->cond_idle);
    pthread_mutex_destroy(&h->mu);
    pthread_mutex_destroy(&h->conn_mu);
    free(h);
}

/* ---- portfile ---- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
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

int kt_httpd_write_portfile(const char *path, const char *const *names, const uint16_t *ports,
                            size_t n, struct kt_err *err)
{
    struct kt_buf json;
    char *tmp = kt_xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = -1, rc = -1;

    kt_buf_init(&json, 64 * 1024);
    int ok = kt_buf_puts(&json, "{", NULL);
    for (size_t i = 0; i < n && ok == 0; i++) {
        ok = kt_buf_printf(&json, NULL, "%s\"%s\":%u", i ? "," : "", names[i], (unsigned)ports[i]);
    }
    if (ok != 0 || kt_buf_puts(&json, "}\n", NULL) != 0) {
        kt_err_set(err, KT_ETOOBIG, "%s: too many ports", path);
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write_all(fd, json.data, json.len) < 0 || fsync(fd) < 0) {
        kt_err_set(err, KT_EIO, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    if (close(fd) < 0) {
        fd = -1;
        kt_err_set(err, KT_EIO, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        kt_err_set(err, KT_EIO, "rename %s: %s", path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0) {
        close(fd);
    }
    if (rc < 0) {
        unlink(tmp);
    }
    free(tmp);
    kt_buf_release(&json);
    return rc;
}
