/* SPDX-License-Identifier: Apache-2.0 */
/* common/net/httpd.h - the HTTP(S) server both daemons use (the only libmicrohttpd user).
 *
 * HTTP/1.1 over plain TCP or TLS 1.2+/modern AEAD ciphers (GnuTLS), method+path routing
 * (exact, or a prefix ending in '*'; kt_httpd_route), a hard request body cap, a budget for body
 * bytes held across all connections (503 past it; a failed allocation fails the one request),
 * connection limit, a first-request deadline and a keep-alive idle limit, an epoll thread pool,
 * certificate files reloaded without dropping requests, graceful shutdown, and the built-in
 * /healthz, /readyz and /metrics. It knows nothing about AdmissionReview: the webhook registers a
 * handler. */
#ifndef KT_HTTPD_H
#define KT_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/err.h"
#include "common/net/metrics.h"

#define KT_HTTPD_DEFAULT_MAX_BODY (3u * 1024 * 1024) /* bytes, like the API server's limit */
/* Request body bytes held at once across all connections of one server; past it a new body
 * is refused with 503 (never buffered). 32 MiB: ten full-size bodies; with 1024 connections'
 * own buffers the webhook stays well inside its 128Mi limit (docs/operating.md "Limits and
 * timeouts"). */
#define KT_HTTPD_DEFAULT_MAX_INFLIGHT_BODY (32u * 1024 * 1024)
#define KT_HTTPD_DEFAULT_MAX_CONNS 1024u
/* A connection's first request (accept, TLS handshake, headers) must be in within this, and a
 * connection in a request may be silent at most this long (httpd.c, "the header deadline"). */
#define KT_HTTPD_DEFAULT_TIMEOUT_S 10u
/* How long a connection that has completed a request may wait idle for its next one. Longer than
 * the API server keeps an idle connection in its pool (Go's Transport, 90 s), so the client always
 * gives up on a connection first and never sends a review into one we are closing. */
#define KT_HTTPD_DEFAULT_IDLE_S 120u
/* Fair accepting: past max_conns - max_conns/KT_HTTPD_EVICT_HEADROOM live connections, each
 * new one cuts a connection waiting for a request (httpd.c: silent ones first, idle keep-alive
 * ones last). */
#define KT_HTTPD_EVICT_HEADROOM 8u
#define KT_HTTPD_DEFAULT_RELOAD_MS 1000u /* certificate file check period */
#define KT_HTTPD_DEFAULT_GRACE_MS 10000u /* kt_httpd_stop's wait for in-flight requests */
#define KT_HTTPD_MAX_EXTRA_HEADERS 8
/* GnuTLS priorities: TLS 1.3 and 1.2 only; AES-GCM and ChaCha20-Poly1305 (AEAD only);
 * ECDHE key exchange only (no static RSA, no finite-field DHE, and no ffdhe groups in TLS 1.3,
 * whose key exchange is chosen by group); server picks the order. */
#define KT_HTTPD_TLS_PRIORITIES                                                                    \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"            \
    "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-RSA:+ECDHE-ECDSA:-GROUP-DH-ALL:"             \
    "%SERVER_PRECEDENCE"

/* Built-in routes (bit flags for kt_httpd_opts.builtins). */
#define KT_HTTPD_HEALTH 1u  /* GET /healthz and GET /readyz */
#define KT_HTTPD_METRICS 2u /* GET /metrics (needs opts.metrics) */

/* One request as a handler sees it. Every pointer is borrowed from the server; valid until
 * the handler returns. */
struct kt_httpd_request {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* the URL path, without the query */
    const char *content_type; /* Content-Type header or NULL */
    const char *body;         /* NUL-terminated copy of the whole body ("" when none) */
    size_t body_len;
    void *priv_; /* private */
};

/* The value of request header name (case-insensitive) or NULL. Borrowed from req. */
const char *kt_httpd_request_header(const struct kt_httpd_request *req, const char *name);

/* The value of query argument key (decoded) or NULL; "" for `?key`. Borrowed from req. */
const char *kt_httpd_request_query(const struct kt_httpd_request *req, const char *key);

/* What a handler answers. The server pre-fills status 500 and no body; touch the fields
 * directly or use the helpers; the server frees body and the header copies. */
struct kt_httpd_response {
    unsigned status;          /* HTTP status code */
    const char *content_type; /* must be a string literal or outlive the server; NULL = none */
    char *body;               /* owned by the response (free()); NULL = empty */
    size_t body_len;
    size_t n_headers;
    char *headers[KT_HTTPD_MAX_EXTRA_HEADERS][2]; /* owned name/value copies */
};

/* Set status, content type (see the field's rule) and a copy of text (NULL = empty).
 * Replaces any earlier body. Does not retain text. */
void kt_httpd_response_set(struct kt_httpd_response *resp, unsigned status,
                           const char *content_type, const char *text);

/* Hand a body to the response. Steals body (allocated with kt_xmalloc), also on failure. */
void kt_httpd_response_take(struct kt_httpd_response *resp, unsigned status,
                            const char *content_type, char *body, size_t len);

/* Add a header (copied). Past KT_HTTPD_MAX_EXTRA_HEADERS it is dropped with an error log. */
void kt_httpd_response_header(struct kt_httpd_response *resp, const char *name, const char *value);

/* A route handler. Runs on one of the server's threads, concurrently with other requests:
 * it must be thread-safe and must not block for long. arg is the route's argument. */
typedef void kt_httpd_handler_fn(const struct kt_httpd_request *req, struct kt_httpd_response *resp,
                                 void *arg);

/* Readiness: NULL when ready, else the reason for the 503 body: a string literal, or text the
 * callback wrote into buf (n bytes, KT_HTTPD_READY_MAX; the caller's, per request) and
 * returns. Called from the server's threads; must be thread-safe. */
#define KT_HTTPD_READY_MAX 512
typedef const char *kt_httpd_ready_fn(void *arg, char *buf, size_t n);

/* How to run a server. Does not own any pointer; kt_httpd_new() copies what it keeps, except
 * metrics and the callbacks' arguments, which must outlive the server. */
struct kt_httpd_opts {
    const char *name;           /* for logs and the `server` metric label; NULL = "http" */
    const char *listen;         /* "ADDR:PORT", ":PORT" (all IPv4), "[V6ADDR]:PORT"; port 0 = any */
    const char *cert_file;      /* PEM certificate (chain); with key_file enables TLS */
    const char *key_file;       /* PEM private key */
    const char *cert_pem;       /* or, instead of the files, the PEM certificate (chain) and */
    const char *key_pem;        /* key themselves: parsed by kt_httpd_new(), never reloaded */
    size_t max_body;            /* 0 = KT_HTTPD_DEFAULT_MAX_BODY */
    size_t max_inflight_body;   /* body bytes buffered across connections; 0 = the default */
    unsigned max_conns;         /* 0 = KT_HTTPD_DEFAULT_MAX_CONNS */
    unsigned max_conns_per_ip;  /* from one address; 0 = max_conns/4 (>= 16) */
    unsigned timeout_s;         /* 0 = KT_HTTPD_DEFAULT_TIMEOUT_S */
    unsigned idle_s;            /* keep-alive idle; 0 = KT_HTTPD_DEFAULT_IDLE_S; >= timeout_s */
    unsigned threads;           /* worker threads (epoll each); 0 or 1 = one thread */
    unsigned reload_ms;         /* 0 = KT_HTTPD_DEFAULT_RELOAD_MS */
    unsigned builtins;          /* KT_HTTPD_HEALTH | KT_HTTPD_METRICS */
    struct kt_metrics *metrics; /* request counter and latency histogram; NULL = none */
    kt_httpd_ready_fn *ready;   /* NULL = ready when certificates are loaded (or plain HTTP) */
    void *ready_arg;
    const char *https_priority; /* GnuTLS priority string (TLS mode); NULL = the default
                                 * KT_HTTPD_TLS_PRIORITIES; see kt_tls_priority() */
    bool short_slice; /* worker threads ask for the fair scheduler's shortest slice (Linux 6.12+
                       * EEVDF; ignored elsewhere), so a request that wakes one is served before
                       * CPU-bound work finishes its slice (docs/internals/architecture.md) */
};

struct kt_httpd; /* opaque */

/* Create a server (not yet listening). KT_EINVAL for a bad listen address, only one of
 * cert_file/key_file (or of cert_pem/key_pem, or both kinds) or an https_priority GnuTLS
 * rejects; KT_EPARSE for a cert_pem/key_pem pair that does not parse. Caller owns the result; free
 * with kt_httpd_free(). Does not retain opts' strings. */
struct kt_httpd *kt_httpd_new(const struct kt_httpd_opts *opts, struct kt_err *err);

/* Route method+path to fn: an exact path, or a prefix ending in '*'. Call before kt_httpd_start().
 * A second handler for the same method+path replaces the first. A path ending in '*' matches every
 * path with that prefix ("/" followed by "*" = all), method "*" every method (the handler then
 * answers 404/405 itself); routes are tried in registration order. Does not retain method or path.
 */
void kt_httpd_route(struct kt_httpd *h, const char *method, const char *path,
                    kt_httpd_handler_fn *fn, void *arg);

/* Load the certificates (TLS mode; a failure is logged and leaves the server not ready:
 * handshakes fail until good files appear), bind, listen and start the threads. When it
 * returns 0 the socket accepts connections and kt_httpd_port() is valid. KT_EIO when the
 * address cannot be bound, KT_EINTERNAL when libmicrohttpd refuses the options. */
KT_MUST_CHECK int kt_httpd_start(struct kt_httpd *h, struct kt_err *err);

/* The bound TCP port (0 before start). */
uint16_t kt_httpd_port(const struct kt_httpd *h);

/* True in plain HTTP mode, or when a certificate/key pair is loaded. Thread-safe. */
bool kt_httpd_certs_ready(struct kt_httpd *h);

/* Re-read the certificate files now. A matching, parseable pair replaces the served one
 * (connections in flight keep theirs); otherwise the old pair stays and -1 is returned
 * (KT_EPARSE, KT_EIO, KT_EINVAL on a key that does not match). Thread-safe. KT_EINVAL in
 * plain HTTP mode. */
KT_MUST_CHECK int kt_httpd_reload_now(struct kt_httpd *h, struct kt_err *err);

/* Stop accepting connections (the listening socket is closed); requests in flight go on and
 * their responses carry `Connection: close`.
 * Idempotent; a no-op before start. */
void kt_httpd_quiesce(struct kt_httpd *h);

/* Start draining (shutting down while still listening): from now on every response carries
 * `Connection: close`, and every connection waiting between requests (an idle keep-alive one)
 * is closed, now or when its request in flight ends. New connections are still accepted and
 * served, one request each. Clients reconnect, to another replica once this one has left the
 * Service's endpoints. Idempotent; thread-safe. */
void kt_httpd_drain(struct kt_httpd *h);

/* True once kt_httpd_drain() or kt_httpd_quiesce() was called. Thread-safe. */
bool kt_httpd_draining(struct kt_httpd *h);

/* Graceful stop: quiesce, wait up to grace_ms for requests in flight to be answered, then
 * close every connection and join the threads. Idempotent. */
void kt_httpd_stop(struct kt_httpd *h, unsigned grace_ms);

/* Stop (with KT_HTTPD_DEFAULT_GRACE_MS) if still running and free. Accepts NULL. */
void kt_httpd_free(struct kt_httpd *h);

/* Write `{"name0":port0,"name1":port1,...}` plus a newline to path atomically (a temporary
 * file in the same directory, fsync, rename). KT_EIO on failure. Does not retain arguments. */
KT_MUST_CHECK int kt_httpd_write_portfile(const char *path, const char *const *names,
                                          const uint16_t *ports, size_t n, struct kt_err *err);

#endif
