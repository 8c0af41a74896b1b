/* SPDX-License-Identifier: Apache-2.0 */
/* certs/certs.c - issue, check and store the webhook certificates
 * (docs/internals/upstream.md#certificates).
 *
 * Follows open-policy-agent cert-controller's rotator (names, validity, the
 * "valid through the lookahead" test) on top of common/crypto. Serials are random rather
 * than upstream's fixed 0 and 1. No Kubernetes I/O and no clock here. */
#include "certs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/buf.h"
#include "common/crypto/crypto.h"
#include "common/base/mem.h"
#include "common/base/str.h"

#define CERT_FILE_MAX (64 * 1024)

/* Free a key text, wiping it first. Accepts NULL. */
static void free_secret(char *s)
{
    if (s) {
        memset(s, 0, strlen(s));
    }
    free(s);
}

/* The serving certificate's SANs: server name first, then extras, as DNS and IP lists. */
struct sans {
    struct kt_strv dns;
    struct kt_strv ips; /* canonical text (inet_ntop) */
};

static const char *service_of(const struct kt_certs_opts *o)
{
    return o && o->service && *o->service ? o->service : KT_CERTS_DEFAULT_SERVICE;
}

static const char *namespace_of(const struct kt_certs_opts *o)
{
    return o && o->namespace && *o->namespace ? o->namespace : KT_CERTS_DEFAULT_NAMESPACE;
}

char *kt_certs_server_name(const struct kt_certs_opts *opts)
{
    return kt_xasprintf("%s.%s.svc", service_of(opts), namespace_of(opts));
}

/* Canonical text of an IP address, or -1 if s is not one. */
static int canonical_ip(const char *s, char out[INET6_ADDRSTRLEN])
{
    uint8_t ip[16];

    if (inet_pton(AF_INET, s, ip) == 1) {
        return inet_ntop(AF_INET, ip, out, INET6_ADDRSTRLEN) ? 0 : -1;
    }
    if (inet_pton(AF_INET6, s, ip) == 1) {
        return inet_ntop(AF_INET6, ip, out, INET6_ADDRSTRLEN) ? 0 : -1;
    }
    return -1;
}

static bool valid_dns(const char *s)
{
    if (!*s || strlen(s) > 253) {
        return false;
    }
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '.' || c == '*';
        if (!ok) {
            return false;
        }
    }
    return true;
}

static int add_san(struct sans *s, const char *san, struct kt_err *err)
{
    char ip[INET6_ADDRSTRLEN];
    struct kt_str v = kt_str_c(san);

    if (kt_str_has_prefix(v, "IP:")) {
        if (canonical_ip(san + 3, ip) < 0) {
            return kt_err_set(err, KT_EINVAL, "extra SAN \"%s\": not an IP address", san);
        }
        kt_strv_push(&s->ips, ip);
        return 0;
    }
    if (kt_str_has_prefix(v, "DNS:")) {
        san += 4;
    } else if (canonical_ip(san, ip) == 0) {
        kt_strv_push(&s->ips, ip);
        return 0;
    }
    if (!valid_dns(san)) {
        return kt_err_set(err, KT_EINVAL, "extra SAN \"%s\": not a DNS name", san);
    }
    kt_strv_push(&s->dns, san);
    return 0;
}

static int sans_init(struct sans *s, const struct kt_certs_opts *opts, struct kt_err *err)
{
    char *name = kt_certs_server_name(opts);

    kt_strv_init(&s->dns);
    kt_strv_init(&s->ips);
    kt_strv_push(&s->dns, name);
    free(name);
    for (size_t i = 0; opts && i < opts->n_extra_sans; i++) {
        if (add_san(s, opts->extra_sans[i], err) < 0) {
            kt_strv_release(&s->dns);
            kt_strv_release(&s->ips);
            return -1;
        }
    }
    return 0;
}

static void sans_release(struct sans *s)
{
    kt_strv_release(&s->dns);
    kt_strv_release(&s->ips);
}

/* Issue a fresh key and certificate; *key_out and the result are owned by the caller. */
static struct kt_crypto_cert *issue(const struct kt_crypto_cert_opts *co,
                                    const struct kt_crypto_cert *ca,
                                    const struct kt_crypto_key *ca_key,
                                    struct kt_crypto_key **key_out, struct kt_err *err)
{
    struct kt_crypto_key *key = kt_crypto_rsa_generate(KT_CERTS_RSA_BITS, err);
    struct kt_crypto_cert *cert;

    *key_out = NULL;
    if (!key) {
        return NULL;
    }
    cert = kt_crypto_cert_create(co, key, ca, ca_key, err);
    if (!cert) {
        kt_crypto_key_free(key);
        return NULL;
    }
    *key_out = key;
    return cert;
}

/* PEM texts of a certificate and its key. On failure nothing is allocated. */
static int to_pem(const struct kt_crypto_cert *cert, const struct kt_crypto_key *key,
                  char **crt_pem, char **key_pem, struct kt_err *err)
{
    *crt_pem = kt_crypto_cert_pem(cert, err);
    *key_pem = *crt_pem ? kt_crypto_key_pem(key, err) : NULL;
    if (!*key_pem) {
        free(*crt_pem);
        *crt_pem = NULL;
        return -1;
    }
    return 0;
}

/* A certificate and its key in PEM (owned). */
struct pem_pair {
    char *crt, *key;
};

/* A serving certificate signed by ca; PEM texts into *out on success. */
static int issue_server(const struct kt_certs_opts *opts, int64_t now,
                        const struct kt_crypto_cert *ca, const struct kt_crypto_key *ca_key,
                        struct pem_pair *out, struct kt_err *err)
{
    struct sans s;
    struct kt_crypto_cert_opts co = {0};
    struct kt_crypto_cert *cert;
    struct kt_crypto_key *key = NULL;
    int rc;

    if (sans_init(&s, opts, err) < 0) {
        return -1;
    }
    co.common_name = s.dns.items[0];
    co.dns = (const char *const *)s.dns.items;
    co.n_dns = s.dns.len;
    co.ips = (const char *const *)s.ips.items;
    co.n_ips = s.ips.len;
    co.server_auth = true;
    co.not_before = now - KT_CERTS_BACKDATE_S;
    co.not_after = now + KT_CERTS_SERVER_VALIDITY_S;
    cert = issue(&co, ca, ca_key, &key, err);
    rc = cert ? to_pem(cert, key, &out->crt, &out->key, err) : -1;
    kt_crypto_cert_free(cert);
    kt_crypto_key_free(key);
    sans_release(&s);
    return rc < 0 ? kt_err_prefix(err, "serving certificate") : 0;
}

int kt_certs_generate(const struct kt_certs_opts *opts, int64_t now, struct kt_certs *out,
                      struct kt_err *err)
{
    static const char *const ca_dns[] = {KT_CERTS_CA_NAME};
    struct kt_crypto_cert_opts co = {0};
    struct kt_crypto_cert *ca = NULL;
    struct kt_crypto_key *ca_key = NULL;
    struct kt_certs c = {0};
    struct pem_pair tls = {0};
    int rc = -1;

    memset(out, 0, sizeof(*out));
    co.common_name = KT_CERTS_CA_NAME;
    co.organization = KT_CERTS_CA_ORG;
    co.dns = ca_dns;
    co.n_dns = 1;
    co.is_ca = true;
    co.not_before = now - KT_CERTS_BACKDATE_S;
    co.not_after = now + KT_CERTS_CA_VALIDITY_S;
    ca = issue(&co, NULL, NULL, &ca_key, err);
    if (!ca || to_pem(ca, ca_key, &c.ca_crt, &c.ca_key, err) < 0) {
        kt_err_prefix(err, "CA certificate");
        goto out;
    }
    if (issue_server(opts, now, ca, ca_key, &tls, err) < 0) {
        goto out;
    }
    c.tls_crt = tls.crt;
    c.tls_key = tls.key;
    *out = c;
    memset(&c, 0, sizeof(c));
    rc = 0;
out:
    kt_certs_release(&c);
    kt_crypto_cert_free(ca);
    kt_crypto_key_free(ca_key);
    return rc;
}

int kt_certs_renew_server(const struct kt_certs_opts *opts, int64_t now, struct kt_certs *certs,
                          struct kt_err *err)
{
    struct kt_crypto_cert *ca = NULL;
    struct kt_crypto_key *ca_key = NULL;
    struct pem_pair tls = {0};
    int rc = -1;

    if (!certs->ca_crt || !certs->ca_key) {
        return kt_err_set(err, KT_EINVAL, "renewing the serving certificate needs the CA key");
    }
    ca = kt_crypto_cert_from_pem(certs->ca_crt, strlen(certs->ca_crt), err);
    ca_key = ca ? kt_crypto_key_from_pem(certs->ca_key, strlen(certs->ca_key), err) : NULL;
    if (!ca_key) {
        kt_err_prefix(err, "CA");
        goto out;
    }
    if (issue_server(opts, now, ca, ca_key, &tls, err) < 0) {
        goto out;
    }
    free(certs->tls_crt);
    free_secret(certs->tls_key);
    certs->tls_crt = tls.crt;
    certs->tls_key = tls.key;
    rc = 0;
out:
    kt_crypto_cert_free(ca);
    kt_crypto_key_free(ca_key);
    return rc;
}

/* ---- the rotation decision ---- */

/* A parsed certificate and its key. */
struct pair {
    struct kt_crypto_cert *cert;
    struct kt_crypto_key *key;
};

static void pair_release(struct pair *p)
{
    kt_crypto_cert_free(p->cert);
    kt_crypto_key_free(p->key);
    p->cert = NULL;
    p->key = NULL;
}

static int pair_load(const char *crt, const char *key, const char *what, struct pair *p,
                     struct kt_err *why)
{
    p->cert = NULL;
    p->key = NULL;
    if (!crt || !key) {
        return kt_err_set(why, KT_ENOENT, "%s: certificate or key missing", what);
    }
    p->cert = kt_crypto_cert_from_pem(crt, strlen(crt), why);
    p->key = p->cert ? kt_crypto_key_from_pem(key, strlen(key), why) : NULL;
    if (!p->key) {
        pair_release(p);
        return kt_err_prefix(why, "%s", what);
    }
    if (!kt_crypto_key_matches_cert(p->key, p->cert)) {
        pair_release(p);
        return kt_err_set(why, KT_EINVAL, "%s: the key does not match the certificate", what);
    }
    return 0;
}

static int check_lifetime(const struct kt_crypto_cert *cert, const char *what, int64_t now,
                          int64_t lookahead, struct kt_err *why)
{
    if (kt_crypto_cert_expires_within(cert, now, lookahead)) {
        return kt_err_set(why, KT_ERANGE,
                          "%s: not valid for the whole lookahead (notAfter %lld < %lld)", what,
                          (long long)kt_crypto_cert_not_after(cert), (long long)(now + lookahead));
    }
    return 0;
}

static int check_ca(const struct pair *ca, int64_t now, int64_t lookahead, struct kt_err *why)
{
    if (!kt_crypto_cert_is_ca(ca->cert)) {
        return kt_err_set(why, KT_EINVAL, "ca.crt: not a CA certificate");
    }
    if (kt_crypto_cert_verify(ca->cert, ca->cert, KT_CERTS_CA_NAME, now, why) < 0) {
        return kt_err_prefix(why, "ca.crt");
    }
    return check_lifetime(ca->cert, "ca.crt", now, lookahead, why);
}

static bool has_san(const struct kt_strv *present, const char *kind, const char *value)
{
    char *want = kt_xasprintf("%s:%s", kind, value);
    bool ok = kt_strv_contains(present, want);

    free(want);
    return ok;
}

static int check_sans(const struct kt_crypto_cert *cert, const struct kt_certs_opts *opts,
                      struct kt_err *why)
{
    struct sans s;
    struct kt_strv present;
    int rc = 0;

    if (sans_init(&s, opts, why) < 0) {
        return -1;
    }
    kt_strv_init(&present);
    kt_crypto_cert_sans(cert, &present);
    for (size_t i = 0; rc == 0 && i < s.dns.len; i++) {
        if (!has_san(&present, "DNS", s.dns.items[i])) {
            rc = kt_err_set(why, KT_EINVAL, "tls.crt: lacks DNS SAN %s", s.dns.items[i]);
        }
    }
    for (size_t i = 0; rc == 0 && i < s.ips.len; i++) {
        if (!has_san(&present, "IP", s.ips.items[i])) {
            rc = kt_err_set(why, KT_EINVAL, "tls.crt: lacks IP SAN %s", s.ips.items[i]);
        }
    }
    kt_strv_release(&present);
    sans_release(&s);
    return rc;
}

static int check_server(const struct pair *tls, const struct kt_crypto_cert *ca,
                        const struct kt_certs_opts *opts, int64_t now, int64_t lookahead,
                        struct kt_err *why)
{
    char *name = kt_certs_server_name(opts);
    int rc = kt_crypto_cert_verify(tls->cert, ca, name, now, why);

    free(name);
    if (rc < 0) {
        return kt_err_prefix(why, "tls.crt");
    }
    if (!kt_crypto_cert_has_server_auth(tls->cert)) {
        return kt_err_set(why, KT_EINVAL, "tls.crt: no serverAuth extended key usage");
    }
    if (check_lifetime(tls->cert, "tls.crt", now, lookahead, why) < 0) {
        return -1;
    }
    return check_sans(tls->cert, opts, why);
}

enum kt_certs_verdict kt_certs_needs_rotation(const struct kt_certs *certs,
                                              const struct kt_certs_opts *opts, int64_t now,
                                              int64_t lookahead, struct kt_err *why)
{
    struct pair ca;
    struct pair tls;
    enum kt_certs_verdict v = KT_CERTS_RENEW_ALL;

    if (pair_load(certs->ca_crt, certs->ca_key, "CA", &ca, why) < 0) {
        return KT_CERTS_RENEW_ALL;
    }
    if (check_ca(&ca, now, lookahead, why) < 0) {
        goto out;
    }
    v = KT_CERTS_RENEW_SERVER;
    if (pair_load(certs->tls_crt, certs->tls_key, "serving certificate", &tls, why) < 0) {
        goto out;
    }
    if (check_server(&tls, ca.cert, opts, now, lookahead, why) == 0) {
        v = KT_CERTS_VALID;
    }
    pair_release(&tls);
out:
    pair_release(&ca);
    return v;
}

int kt_certs_rotate(const struct kt_certs_opts *opts, int64_t now, int64_t lookahead,
                    struct kt_certs *certs, enum kt_certs_verdict *done, struct kt_err *err)
{
    enum kt_certs_verdict v = kt_certs_needs_rotation(certs, opts, now, lookahead, NULL);
    struct kt_certs fresh;

    if (done) {
        *done = v;
    }
    switch (v) {
    case KT_CERTS_VALID:
        return 0;
    case KT_CERTS_RENEW_SERVER:
        return kt_certs_renew_server(opts, now, certs, err);
    case KT_CERTS_RENEW_ALL:
    default:
        if (kt_certs_generate(opts, now, &fresh, err) < 0) {
            return -1;
        }
        kt_certs_release(certs);
        *certs = fresh;
        return 0;
    }
}

char *kt_certs_ca_bundle(const struct kt_certs *certs)
{
    if (!certs->ca_crt) {
        return NULL;
    }
    return kt_crypto_base64_encode(certs->ca_crt, strlen(certs->ca_crt));
}

/* ---- the folder layout ---- */

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write dir/name atomically: temporary file, mode, data, fsync, rename. */
static int write_file(const char *dir, const char *name, const char *text, mode_t mode,
                      struct kt_err *err)
{
    char *path = kt_xasprintf("%s/%s", dir, name);
    char *tmp = kt_xasprintf("%s/.%s.XXXXXX", dir, name);
    int fd = mkstemp(tmp);
    int rc = -1;

    if (fd < 0) {
        kt_err_set(err, KT_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (fchmod(fd, mode) < 0 || write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
        kt_err_set(err, KT_EIO, "%s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        kt_err_set(err, KT_EIO, "%s: %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    free(path);
    free(tmp);
    return rc;
}

int kt_certs_write_dir(const struct kt_certs *certs, const char *dir, struct kt_err *err)
{
    if (!certs->ca_crt || !certs->tls_crt || !certs->tls_key) {
        return kt_err_set(err, KT_EINVAL, "certificates incomplete: nothing written");
    }
    if (write_file(dir, "ca.crt", certs->ca_crt, 0644, err) < 0) {
        return -1;
    }
    if (certs->ca_key && write_file(dir, "ca.key", certs->ca_key, 0600, err) < 0) {
        return -1;
    }
    if (write_file(dir, "tls.key", certs->tls_key, 0600, err) < 0) {
        return -1;
    }
    return write_file(dir, "tls.crt", certs->tls_crt, 0644, err);
}

/* Read dir/name into *out; a missing optional file leaves *out NULL. */
static int read_file(const char *dir, const char *name, bool optional, char **out,
                     struct kt_err *err)
{
    char *path = kt_xasprintf("%s/%s", dir, name);
    struct kt_buf b;
    struct stat st;
    int rc = 0;

    *out = NULL;
    kt_buf_init(&b, CERT_FILE_MAX);
    if (stat(path, &st) < 0 && errno == ENOENT) {
        rc = optional ? 0 : kt_err_set(err, KT_ENOENT, "%s: no such file", path);
    } else if (kt_buf_read_file(&b, path, err) < 0) {
        rc = -1;
    } else {
        *out = kt_buf_take(&b, NULL);
    }
    kt_buf_release(&b);
    free(path);
    return rc;
}

int kt_certs_load_dir(const char *dir, struct kt_certs *out, struct kt_err *err)
{
    struct kt_certs c = {0};

    memset(out, 0, sizeof(*out));
    if (read_file(dir, "ca.crt", false, &c.ca_crt, err) < 0 ||
        read_file(dir, "ca.key", true, &c.ca_key, err) < 0 ||
        read_file(dir, "tls.crt", false, &c.tls_crt, err) < 0 ||
        read_file(dir, "tls.key", false, &c.tls_key, err) < 0) {
        kt_certs_release(&c);
        return -1;
    }
    *out = c;
    return 0;
}

void kt_certs_release(struct kt_certs *certs)
{
    if (!certs) {
        return;
    }
    free(certs->ca_crt);
    free_secret(certs->ca_key);
    free(certs->tls_crt);
    free_secret(certs->tls_key);
    memset(certs, 0, sizeof(*certs));
}
