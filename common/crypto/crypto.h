/* SPDX-License-Identifier: Apache-2.0 */
/* common/crypto/crypto.h - the one module behind GnuTLS and nettle/hogweed
 * (docs/internals/style.md#one-file-per-library).
 *
 * Hashes, randomness, base64/Z85, the MPI plugin's ECDSA SSH key, the Flux plugin's
 * X25519 CURVE certificate, RSA keys and X.509 certificates for certs/. Pure apart from
 * the random generator: no files, no clock (times come in as Unix seconds). Nothing else
 * in the tree includes gnutls/ or nettle/ headers. */
#ifndef KT_CRYPTO_H
#define KT_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/err.h"
#include "common/base/str.h"

#define KT_SHA256_SIZE 32
#define KT_X25519_SIZE 32

/* ---- hashes, randomness, encodings ---- */

/* SHA-256 of len bytes (nettle). Cannot fail. Does not retain data. */
void kt_crypto_sha256(const void *data, size_t len, uint8_t out[KT_SHA256_SIZE]);

/* SHA-256 as 64 lower-case hex digits plus a NUL. Cannot fail. Does not retain data. */
void kt_crypto_sha256_hex(const void *data, size_t len, char out[2 * KT_SHA256_SIZE + 1]);

/* Fill out with len bytes from GnuTLS's key-grade generator (KT_EINTERNAL on failure). */
KT_MUST_CHECK int kt_crypto_random(void *out, size_t len, struct kt_err *err);

/* Standard base64 with padding and no line breaks (Go's base64.StdEncoding), as used for
 * caBundle. Caller owns the result; free with free(). Never returns NULL. */
char *kt_crypto_base64_encode(const void *data, size_t len);

/* Decode standard base64 (padding required, len a multiple of 4; nettle skips embedded
 * whitespace). On success *out (NUL-terminated
 * for convenience) and *out_len are set; caller owns *out; free with free(). KT_EPARSE on
 * bad input, and then *out stays NULL. */
KT_MUST_CHECK int kt_crypto_base64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len,
                                          struct kt_err *err);

/* Z85 (ZeroMQ RFC 32) of len bytes; len must be a multiple of 4 (else KT_EINVAL, NULL).
 * Caller owns the result; free with free(). */
char *kt_crypto_z85_encode(const uint8_t *data, size_t len, struct kt_err *err);

/* Decode Z85; len must be a multiple of 5 and every character in the alphabet, and each
 * group must fit 32 bits (else KT_EPARSE). On success caller owns *out; free with free();
 * *out_len = len / 5 * 4. On failure *out stays NULL. */
KT_MUST_CHECK int kt_crypto_z85_decode(const char *s, size_t len, uint8_t **out, size_t *out_len,
                                       struct kt_err *err);

/* ---- X25519 and the Flux CURVE certificate ---- */

/* The X25519 public key of a 32-byte private key (RFC 7748: the scalar is clamped, the
 * private bytes themselves are not changed). nettle curve25519_mul_g. Cannot fail. */
void kt_crypto_x25519_public(const uint8_t priv[KT_X25519_SIZE], uint8_t pub[KT_X25519_SIZE]);

/* The `curve.cert` text of the Flux plugin's `<trainjob>-flux-curve` Secret: the private
 * key is SHA-256(uid) used as is, the public key its X25519 point, both Z85-encoded, in the
 * ZeroMQ zcert text layout upstream writes (matches
 * `pkg/runtime/framework/plugins/flux/curve.go`: two header comments, a blank line,
 * `metadata` with `name = "<trainjob name>"`, `curve` with `public-key` and `secret-key`,
 * 4-space indents). Deterministic. Caller owns the result; free with free().
 * Does not retain name or uid. */
char *kt_crypto_flux_curve_cert(const char *name, const char *uid);

/* ---- the MPI plugin's SSH key ---- */

/* An SSH key pair as the MPI Secret stores it. Touch the fields, free with the API. */
struct kt_ssh_key {
    char *private_pem; /* SEC1 `-----BEGIN EC PRIVATE KEY-----` PEM (Go x509.MarshalECPrivateKey) */
    char *public_line; /* `ecdsa-sha2-nistp521 <base64>\n` (Go ssh.MarshalAuthorizedKey) */
};

/* Generate a fresh ECDSA P-521 key (matches upstream `plugins/mpi` buildSSHAuthSecret).
 * On success out owns two strings; release with kt_crypto_ssh_key_release(). On failure
 * (KT_EINTERNAL) out is zeroed. */
KT_MUST_CHECK int kt_crypto_ssh_key_generate(struct kt_ssh_key *out, struct kt_err *err);

/* Import an unencrypted ECDSA key (P-256, P-384 or P-521) from PEM: SEC1 `EC PRIVATE KEY`
 * or PKCS#8 `PRIVATE KEY` (for `ktctl render --ssh-key`). private_pem is the canonical SEC1
 * re-encoding (identical bytes for a key written by Go or by kt), public_line the matching
 * authorized_keys line. KT_EPARSE for anything else (OpenSSH-format keys included: convert
 * with `ssh-keygen -p -m PEM`), KT_EUNSUPPORTED for non-ECDSA keys or other curves.
 * Does not retain pem. On failure out is zeroed. */
KT_MUST_CHECK int kt_crypto_ssh_key_from_pem(const char *pem, size_t len, struct kt_ssh_key *out,
                                             struct kt_err *err);

/* Free both strings and zero the struct. Accepts a zeroed or released struct. */
void kt_crypto_ssh_key_release(struct kt_ssh_key *key);

/* ---- private keys and X.509 certificates (certs/) ---- */

struct kt_crypto_key;  /* a private key (RSA or ECDSA); opaque */
struct kt_crypto_cert; /* a parsed X.509 certificate; opaque */

/* Generate an RSA key of bits bits (2048 for the webhook certificates). Caller owns the
 * result; free with kt_crypto_key_free(). NULL (KT_EINVAL, KT_EINTERNAL) on failure. */
struct kt_crypto_key *kt_crypto_rsa_generate(unsigned bits, struct kt_err *err);

/* Parse a PEM private key (PKCS#1 `RSA PRIVATE KEY`, SEC1 `EC PRIVATE KEY` or unencrypted
 * PKCS#8). Does not retain pem. Caller owns the result; free with kt_crypto_key_free().
 * NULL and KT_EPARSE on bad input. */
struct kt_crypto_key *kt_crypto_key_from_pem(const char *pem, size_t len, struct kt_err *err);

/* The key as PEM; RSA keys as PKCS#1 `-----BEGIN RSA PRIVATE KEY-----` (Go
 * x509.MarshalPKCS1PrivateKey). Caller owns the result; free with free(). NULL on failure. */
char *kt_crypto_key_pem(const struct kt_crypto_key *key, struct kt_err *err);

/* Accepts NULL. */
void kt_crypto_key_free(struct kt_crypto_key *key);

/* What to put in a new certificate. Does not own any pointer. */
struct kt_crypto_cert_opts {
    const char *common_name;  /* subject CN; required */
    const char *organization; /* subject O; NULL = none */
    const char *const *dns;   /* DNS SANs */
    size_t n_dns;
    const char *const *ips; /* IP SANs in text form (IPv4 or IPv6) */
    size_t n_ips;
    bool is_ca;         /* basicConstraints CA:TRUE and keyUsage certSign (else CA:FALSE) */
    bool server_auth;   /* extKeyUsage serverAuth */
    int64_t not_before; /* Unix seconds */
    int64_t not_after;  /* Unix seconds, > not_before */
};

/* Create and sign a certificate for key's public half: self-signed when issuer is NULL,
 * else signed by issuer_key as issuer. keyUsage is digitalSignature|keyEncipherment (plus
 * keyCertSign for a CA), the serial a random positive 128-bit number, signature
 * SHA-256. Does not retain its arguments. Caller owns the result; free with
 * kt_crypto_cert_free(). NULL and KT_EINVAL (bad options, an IP that does not parse,
 * issuer without issuer_key) or KT_EINTERNAL on failure. */
struct kt_crypto_cert *kt_crypto_cert_create(const struct kt_crypto_cert_opts *opts,
                                             const struct kt_crypto_key *key,
                                             const struct kt_crypto_cert *issuer,
                                             const struct kt_crypto_key *issuer_key,
                                             struct kt_err *err);

/* Parse the first `CERTIFICATE` block of a PEM text. Does not retain pem. Caller owns the
 * result; free with kt_crypto_cert_free(). NULL and KT_EPARSE on bad input. */
struct kt_crypto_cert *kt_crypto_cert_from_pem(const char *pem, size_t len, struct kt_err *err);

/* The certificate as PEM. Caller owns the result; free with free(). NULL on failure. */
char *kt_crypto_cert_pem(const struct kt_crypto_cert *cert, struct kt_err *err);

/* Accepts NULL. */
void kt_crypto_cert_free(struct kt_crypto_cert *cert);

/* Validity bounds in Unix seconds. */
int64_t kt_crypto_cert_not_before(const struct kt_crypto_cert *cert);
int64_t kt_crypto_cert_not_after(const struct kt_crypto_cert *cert);

/* Subject CN (empty string if none). Caller owns the result; free with free(). */
char *kt_crypto_cert_common_name(const struct kt_crypto_cert *cert);

/* Subject DN in RFC 4514 form, e.g. `CN=kubeflow-trainer-ca,O=kubeflow-trainer`.
 * Caller owns the result; free with free(). */
char *kt_crypto_cert_subject(const struct kt_crypto_cert *cert);

/* Append the subject alternative names to out in certificate order, as `DNS:<name>` and
 * `IP:<address>` (other kinds are skipped). out must be initialized. */
void kt_crypto_cert_sans(const struct kt_crypto_cert *cert, struct kt_strv *out);

/* basicConstraints CA:TRUE. */
bool kt_crypto_cert_is_ca(const struct kt_crypto_cert *cert);

/* extKeyUsage contains serverAuth. */
bool kt_crypto_cert_has_server_auth(const struct kt_crypto_cert *cert);

/* The key's public half is the one in cert. */
bool kt_crypto_key_matches_cert(const struct kt_crypto_key *key, const struct kt_crypto_cert *cert);

/* Check cert the way a TLS client would at time at: its signature chains to ca (which may
 * be cert itself for a self-signed CA), both are within their validity at `at`, and, when
 * hostname is not NULL, cert is valid for it (DNS or IP SAN). Returns 0 or -1 with a reason
 * (KT_EINVAL). Like Go's x509 Verify with CurrentTime, which upstream's rotator uses. */
KT_MUST_CHECK int kt_crypto_cert_verify(const struct kt_crypto_cert *cert,
                                        const struct kt_crypto_cert *ca, const char *hostname,
                                        int64_t at, struct kt_err *err);

/* True when cert is not valid at some instant of [now, now + lookahead]: it expires
 * before now + lookahead, or is not yet valid at now. */
bool kt_crypto_cert_expires_within(const struct kt_crypto_cert *cert, int64_t now,
                                   int64_t lookahead);

#endif
