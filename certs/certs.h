/* SPDX-License-Identifier: Apache-2.0 */
/* certs/certs.h - the webhook's CA and serving certificate
 * (docs/internals/upstream.md#certificates).
 *
 * Generation, the rotation decision and the four-file folder layout of the
 * `kubeflow-trainer-webhook-cert` Secret (`ca.crt`, `ca.key`, `tls.crt`, `tls.key`). Pure
 * apart from the folder functions: the clock comes in as a parameter; no Kubernetes I/O
 * (storing the Secret and injecting caBundle belong to the reconciler's leader). */
#ifndef KT_CERTS_H
#define KT_CERTS_H

#include <stdint.h>

#include "common/base/err.h"

#define KT_CERTS_CA_NAME "kubeflow-trainer-ca"                         /* CA CN and DNS SAN */
#define KT_CERTS_CA_ORG "kubeflow-trainer"                             /* CA O */
#define KT_CERTS_DEFAULT_SERVICE "kubeflow-trainer-controller-manager" /* webhook Service */
#define KT_CERTS_DEFAULT_NAMESPACE "kubeflow-system"
#define KT_CERTS_SECRET_NAME "kubeflow-trainer-webhook-cert"
#define KT_CERTS_RSA_BITS 2048
#define KT_CERTS_BACKDATE_S (60 * 60)                      /* notBefore = now - 1h */
#define KT_CERTS_CA_VALIDITY_S (10LL * 365 * 24 * 60 * 60) /* notAfter = now + 10 * 365 days */
#define KT_CERTS_SERVER_VALIDITY_S (365LL * 24 * 60 * 60)  /* notAfter = now + 365 days */
#define KT_CERTS_LOOKAHEAD_S (90LL * 24 * 60 * 60)         /* rotate 90 days before expiry */
#define KT_CERTS_CHECK_INTERVAL_S (12 * 60 * 60)           /* upstream's rotation check period */

/* What to issue. Does not own any pointer. */
struct kt_certs_opts {
    const char *service;   /* webhook Service name; NULL = KT_CERTS_DEFAULT_SERVICE */
    const char *namespace; /* its namespace; NULL = KT_CERTS_DEFAULT_NAMESPACE */
    /* Extra serving-certificate SANs (a documented addition for local use): `DNS:name`,
     * `IP:address`, or a bare value (an address if it parses as one, else a DNS name). */
    const char *const *extra_sans;
    size_t n_extra_sans;
};

/* The four PEM texts, each NUL-terminated and owned by the struct. Touch the fields, free
 * with kt_certs_release(). ca_key is NULL for externally managed certificates. */
struct kt_certs {
    char *ca_crt;  /* `CERTIFICATE` of the self-signed CA */
    char *ca_key;  /* PKCS#1 `RSA PRIVATE KEY` of the CA */
    char *tls_crt; /* `CERTIFICATE` of the serving certificate, signed by the CA */
    char *tls_key; /* PKCS#1 `RSA PRIVATE KEY` of the serving certificate */
};

/* What kt_certs_needs_rotation() found, mirroring upstream's rotator: an unusable CA
 * regenerates everything, an unusable serving certificate only itself. */
enum kt_certs_verdict {
    KT_CERTS_VALID,        /* both certificates good for the whole lookahead */
    KT_CERTS_RENEW_SERVER, /* keep the CA, issue a new serving certificate */
    KT_CERTS_RENEW_ALL     /* new CA and new serving certificate */
};

/* `<service>.<namespace>.svc`, the serving certificate's CN and first DNS SAN.
 * Caller owns the result; free with free(). */
char *kt_certs_server_name(const struct kt_certs_opts *opts);

/* Issue a new CA (CN/DNS SAN `kubeflow-trainer-ca`, O `kubeflow-trainer`, valid
 * [now - 1h, now + 10 * 365 days]) and a serving certificate signed by it (CN and DNS SAN
 * kt_certs_server_name(), then the extra SANs; serverAuth; valid [now - 1h, now + 365
 * days]), each with a fresh RSA 2048 key. `now` is Unix seconds. On success out owns four
 * strings; on failure (KT_EINVAL for a bad extra SAN, KT_EINTERNAL) out is zeroed.
 * Does not retain opts. */
KT_MUST_CHECK int kt_certs_generate(const struct kt_certs_opts *opts, int64_t now,
                                    struct kt_certs *out, struct kt_err *err);

/* Replace certs->tls_crt and tls_key with a new serving certificate signed by the CA in
 * certs (which needs ca_key). On failure certs is unchanged. Does not retain opts. */
KT_MUST_CHECK int kt_certs_renew_server(const struct kt_certs_opts *opts, int64_t now,
                                        struct kt_certs *certs, struct kt_err *err);

/* Decide whether certs must be rotated at `now`: each certificate must parse, match its
 * key, chain to the CA and stay valid through now + lookahead (Unix seconds, normally
 * KT_CERTS_LOOKAHEAD_S); the serving certificate must also be valid for
 * kt_certs_server_name(), carry every extra SAN and serverAuth. Missing or broken parts
 * count as "renew". why (NULL allowed) receives the reason when the verdict is not
 * KT_CERTS_VALID. Does not retain its arguments. */
enum kt_certs_verdict kt_certs_needs_rotation(const struct kt_certs *certs,
                                              const struct kt_certs_opts *opts, int64_t now,
                                              int64_t lookahead, struct kt_err *why);

/* kt_certs_needs_rotation() followed by what it asks for; *done (NULL allowed) gets the
 * verdict that was acted on. certs may be zeroed (then everything is generated). On
 * failure certs is unchanged. */
KT_MUST_CHECK int kt_certs_rotate(const struct kt_certs_opts *opts, int64_t now, int64_t lookahead,
                                  struct kt_certs *certs, enum kt_certs_verdict *done,
                                  struct kt_err *err);

/* base64 of ca.crt, the caBundle of our webhook configurations. Caller owns the result;
 * free with free(). NULL when certs has no CA. */
char *kt_certs_ca_bundle(const struct kt_certs *certs);

/* Write ca.crt and tls.crt (0644) and ca.key and tls.key (0600) into an existing dir. Each
 * file is written to a temporary name, flushed and renamed over the old one, so a reader
 * never sees half a file; tls.key is replaced before tls.crt, so a reloader should act on
 * tls.crt and check that the pair matches (kt_crypto_key_matches_cert). ca.key is skipped
 * when NULL. KT_EIO on failure. Does not retain its arguments. */
KT_MUST_CHECK int kt_certs_write_dir(const struct kt_certs *certs, const char *dir,
                                     struct kt_err *err);

/* Read the four files from dir (64 KiB cap each); a missing ca.key leaves out->ca_key NULL.
 * Contents are not validated (see kt_certs_needs_rotation). On success out owns the texts;
 * on failure (KT_ENOENT, KT_EIO, KT_ETOOBIG) out is zeroed. */
KT_MUST_CHECK int kt_certs_load_dir(const char *dir, struct kt_certs *out, struct kt_err *err);

/* Free the texts (wiping the keys) and zero the struct. Accepts a zeroed struct. */
void kt_certs_release(struct kt_certs *certs);

#endif
