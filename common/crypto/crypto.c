/* SPDX-License-Identifier: Apache-2.0 */
/* common/crypto/crypto.c - GnuTLS and nettle/hogweed behind one API
 * (docs/internals/style.md#one-file-per-library).
 *
 * The SSH key's SEC1 PEM and OpenSSH line are encoded here by hand so that their bytes
 * match Go's encoders (GnuTLS shortens the SEC1 private scalar). Certificates are built
 * with GnuTLS; validity checks take the time as a parameter instead of reading a clock. */
#include "common/crypto/crypto.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <nettle/base64.h>
#include <nettle/curve25519.h>
#include <nettle/sha2.h>

#include "common/base/buf.h"
#include "common/base/mem.h"

#define PEM_MAX (1u << 20) /* longest PEM text we hand to GnuTLS */

struct kt_crypto_key {
    gnutls_x509_privkey_t k;
};

struct kt_crypto_cert {
    gnutls_x509_crt_t c;
};

/* A NUL-terminated private copy of PEM text for GnuTLS: its PEM readers may look past the
 * end of the datum for a terminator (found by fuzz_pem in gnutls_x509_privkey_import_openssl).
 * Free d.data with free_pem_copy(). */
static gnutls_datum_t pem_copy(const char *pem, size_t len)
{
    gnutls_datum_t d;

    d.data = (unsigned char *)kt_xstrndup(pem, len);
    d.size = (unsigned int)len;
    return d;
}

static void free_pem_copy(gnutls_datum_t *d)
{
    memset(d->data, 0, d->size);
    free(d->data);
    d->data = NULL;
}

/* Copy a GnuTLS-allocated datum into a NUL-terminated string we own, and free it. */
static char *take_datum(gnutls_datum_t *d)
{
    char *s = kt_xstrndup((const char *)d->data, d->size);

    gnutls_free(d->data);
    d->data = NULL;
    d->size = 0;
    return s;
}

/* ---- hashes, randomness, encodings ---- */

void kt_crypto_sha256(const void *data, size_t len, uint8_t out[KT_SHA256_SIZE])
{
    struct sha256_ctx ctx;

    sha256_init(&ctx);
    sha256_update(&ctx, len, data);
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void kt_crypto_sha256_hex(const void *data, size_t len, char out[2 * KT_SHA256_SIZE + 1])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t sum[KT_SHA256_SIZE];

    kt_crypto_sha256(data, len, sum);
    for (size_t i = 0; i < KT_SHA256_SIZE; i++) {
        out[2 * i] = hex[sum[i] >> 4];
        out[2 * i + 1] = hex[sum[i] & 0xf];
    }
    out[2 * KT_SHA256_SIZE] = '\0';
}

int kt_crypto_random(void *out, size_t len, struct kt_err *err)
{
    int rc = gnutls_rnd(GNUTLS_RND_KEY, out, len);

    if (rc < 0) {
        return kt_err_set(err, KT_EINTERNAL, "random generator: %s", gnutls_strerror(rc));
    }
    return 0;
}

char *kt_crypto_base64_encode(const void *data, size_t len)
{
    size_t n = BASE64_ENCODE_RAW_LENGTH(len);
    char *s = kt_xmalloc(n + 1);

    base64_encode_raw(s, len, data);
    s[n] = '\0';
    return s;
}

int kt_crypto_base64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len,
                            struct kt_err *err)
{
    struct base64_decode_ctx ctx;
    uint8_t *buf;
    size_t n = BASE64_DECODE_LENGTH(len);

    *out = NULL;
    *out_len = 0;
    if (len % 4 != 0) {
        return kt_err_set(err, KT_EPARSE, "base64: length %zu is not a multiple of 4", len);
    }
    buf = kt_xmalloc(n + 1);
    base64_decode_init(&ctx);
    if (!base64_decode_update(&ctx, &n, buf, len, s) || !base64_decode_final(&ctx)) {
        free(buf);
        return kt_err_set(err, KT_EPARSE, "base64: invalid input");
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return 0;
}

static const char z85_chars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

char *kt_crypto_z85_encode(const uint8_t *data, size_t len, struct kt_err *err)
{
    char *s;
    size_t o = 0;

    if (len % 4 != 0) {
        kt_err_set(err, KT_EINVAL, "z85: length %zu is not a multiple of 4", len);
        return NULL;
    }
    s = kt_xmalloc(len / 4 * 5 + 1);
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = (uint32_t)data[i] << 24 | (uint32_t)data[i + 1] << 16 |
                     (uint32_t)data[i + 2] << 8 | (uint32_t)data[i + 3];
        for (int d = 4; d >= 0; d--) {
            s[o + (size_t)d] = z85_chars[v % 85];
            v /= 85;
        }
        o += 5;
    }
    s[o] = '\0';
    return s;
}

static int z85_value(char c)
{
    const char *p = c ? strchr(z85_chars, c) : NULL;

    return p ? (int)(p - z85_chars) : -1;
}

int kt_crypto_z85_decode(const char *s, size_t len, uint8_t **out, size_t *out_len,
                         struct kt_err *err)
{
    uint8_t *buf;

    *out = NULL;
    *out_len = 0;
    if (len % 5 != 0) {
        return kt_err_set(err, KT_EPARSE, "z85: length %zu is not a multiple of 5", len);
    }
    buf = kt_xmalloc(len / 5 * 4 + 1);
    for (size_t i = 0; i < len; i += 5) {
        uint64_t v = 0;
        for (size_t j = 0; j < 5; j++) {
            int d = z85_value(s[i + j]);
            if (d < 0) {
                free(buf);
                return kt_err_set(err, KT_EPARSE, "z85: invalid character at offset %zu", i + j);
            }
            v = v * 85 + (uint64_t)d;
        }
        if (v > UINT32_MAX) {
            free(buf);
            return kt_err_set(err, KT_EPARSE, "z85: group at offset %zu overflows", i);
        }
        for (size_t j = 0; j < 4; j++) {
            buf[i / 5 * 4 + j] = (uint8_t)(v >> (24 - 8 * j));
        }
    }
    *out_len = len / 5 * 4;
    buf[*out_len] = '\0';
    *out = buf;
    return 0;
}

/* ---- X25519 and the Flux CURVE certificate ---- */

void kt_crypto_x25519_public(const uint8_t priv[KT_X25519_SIZE], uint8_t pub[KT_X25519_SIZE])
{
    /* nettle clamps the scalar itself (NaCl crypto_scalarmult_base semantics). */
    curve25519_mul_g(pub, priv);
}

char *kt_crypto_flux_curve_cert(const char *name, const char *uid)
{
    uint8_t secret[KT_SHA256_SIZE];
    uint8_t public[KT_X25519_SIZE];
    char *z_secret;
    char *z_public;
    char *text;

    kt_crypto_sha256(uid, strlen(uid), secret);
    kt_crypto_x25519_public(secret, public);
    z_secret = kt_crypto_z85_encode(secret, sizeof(secret), NULL);
    z_public = kt_crypto_z85_encode(public, sizeof(public), NULL);
    KT_ASSERT(z_secret && z_public);
    text = kt_xasprintf("#  ZeroMQ CURVE Secret Certificate\n"
                        "#  Generated by Kubeflow Trainer\n"
                        "\n"
                        "metadata\n"
                        "    name = \"%s\"\n"
                        "curve\n"
                        "    public-key = \"%s\"\n"
                        "    secret-key = \"%s\"\n",
                        name, z_public, z_secret);
    free(z_secret);
    free(z_public);
    return text;
}

/* ---- the MPI plugin's SSH key ---- */

#define EC_FIELD_MAX 66 /* bytes of a P-521 coordinate or scalar */
#define DER_MAX 512

struct ec_curve {
    gnutls_ecc_curve_t id;
    size_t size;     /* bytes per coordinate and scalar */
    const char *ssh; /* curve name in the SSH wire format */
    uint8_t oid[10]; /* DER-encoded OBJECT IDENTIFIER, tag and length included */
    size_t oid_len;
};

static const struct ec_curve ec_curves[] = {
    {GNUTLS_ECC_CURVE_SECP256R1,
     32,
     "nistp256",
     {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07},
     10},
    {GNUTLS_ECC_CURVE_SECP384R1, 48, "nistp384", {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22}, 7},
    {GNUTLS_ECC_CURVE_SECP521R1, 66, "nistp521", {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23}, 7},
};

/* The raw parts of an EC private key, each left-padded to the curve size. */
struct ec_raw {
    const struct ec_curve *curve;
    uint8_t k[EC_FIELD_MAX];
    uint8_t point[1 + 2 * EC_FIELD_MAX]; /* 0x04 || X || Y */
    size_t point_len;
};

/* A small DER writer; the SEC1 structure of P-521 is 223 bytes. */
struct der {
    uint8_t b[DER_MAX];
    size_t len;
};

static void der_put(struct der *d, const void *p, size_t n)
{
    KT_ASSERT(d->len + n <= sizeof(d->b));
    memcpy(d->b + d->len, p, n);
    d->len += n;
}

static void der_tlv(struct der *d, uint8_t tag, const void *p, size_t n)
{
    uint8_t h[4] = {tag};
    size_t hl = 2;

    KT_ASSERT(n <= 0xffff);
    if (n < 0x80) {
        h[1] = (uint8_t)n;
    } else if (n <= 0xff) {
        h[1] = 0x81;
        h[2] = (uint8_t)n;
        hl = 3;
    } else {
        h[1] = 0x82;
        h[2] = (uint8_t)(n >> 8);
        h[3] = (uint8_t)n;
        hl = 4;
    }
    der_put(d, h, hl);
    der_put(d, p, n);
}

/* Right-align a big-endian integer in size bytes, dropping leading zeros. */
static int pad_be(const gnutls_datum_t *v, uint8_t *dst, size_t size)
{
    size_t skip = 0;

    while (skip < v->size && v->data[skip] == 0) {
        skip++;
    }
    if (v->size - skip > size) {
        return -1;
    }
    memset(dst, 0, size);
    memcpy(dst + size - (v->size - skip), v->data + skip, v->size - skip);
    return 0;
}

static int ec_raw_from_key(gnutls_x509_privkey_t key, struct ec_raw *raw, struct kt_err *err)
{
    gnutls_ecc_curve_t curve;
    gnutls_datum_t x = {0}, y = {0}, k = {0};
    int rc = gnutls_x509_privkey_export_ecc_raw(key, &curve, &x, &y, &k);
    size_t n;

    if (rc < 0) {
        return kt_err_set(err, KT_EINTERNAL, "export EC key: %s", gnutls_strerror(rc));
    }
    raw->curve = NULL;
    for (size_t i = 0; i < KT_ARRAY_SIZE(ec_curves); i++) {
        if (ec_curves[i].id == curve) {
            raw->curve = &ec_curves[i];
        }
    }
    rc = -1;
    if (!raw->curve) {
        kt_err_set(err, KT_EUNSUPPORTED, "EC curve %s is not supported for SSH keys",
                   gnutls_ecc_curve_get_name(curve));
        goto out;
    }
    n = raw->curve->size;
    raw->point[0] = 0x04;
    raw->point_len = 1 + 2 * n;
    if (pad_be(&k, raw->k, n) < 0 || pad_be(&x, raw->point + 1, n) < 0 ||
        pad_be(&y, raw->point + 1 + n, n) < 0) {
        kt_err_set(err, KT_EINTERNAL, "EC key component longer than the curve size");
        goto out;
    }
    rc = 0;
out:
    gnutls_free(x.data);
    gnutls_free(y.data);
    gnutls_free(k.data);
    return rc;
}

/* PEM with 64-column lines and a final newline, as Go's pem.EncodeToMemory writes it. */
static char *pem_wrap(const char *type, const uint8_t *der, size_t len)
{
    char *b64 = kt_crypto_base64_encode(der, len);
    size_t n = strlen(b64);
    struct kt_buf out;
    char *s;

    kt_buf_init(&out, 4 * n + 256);
    KT_ASSERT(kt_buf_printf(&out, NULL, "-----BEGIN %s-----\n", type) == 0);
    for (size_t i = 0; i < n; i += 64) {
        size_t line = n - i < 64 ? n - i : 64;
        KT_ASSERT(kt_buf_append(&out, b64 + i, line, NULL) == 0);
        KT_ASSERT(kt_buf_puts(&out, "\n", NULL) == 0);
    }
    KT_ASSERT(kt_buf_printf(&out, NULL, "-----END %s-----\n", type) == 0);
    free(b64);
    s = kt_buf_take(&out, NULL);
    return s;
}

/* SEC1 ECPrivateKey (RFC 5915) with the scalar padded to the curve size, the named curve
 * and the public point: what Go's x509.MarshalECPrivateKey writes. */
static char *sec1_pem(const struct ec_raw *raw)
{
    static const uint8_t version[] = {0x02, 0x01, 0x01};
    struct der body = {.b = {0}};
    struct der bits = {.b = {0}};
    struct der tmp = {.b = {0}};
    struct der whole = {.b = {0}};

    der_put(&body, version, sizeof(version));
    der_tlv(&body, 0x04, raw->k, raw->curve->size);
    der_tlv(&body, 0xa0, raw->curve->oid, raw->curve->oid_len);
    der_put(&bits, "\0", 1); /* no unused bits */
    der_put(&bits, raw->point, raw->point_len);
    der_tlv(&tmp, 0x03, bits.b, bits.len);
    der_tlv(&body, 0xa1, tmp.b, tmp.len);
    der_tlv(&whole, 0x30, body.b, body.len);
    return pem_wrap("EC PRIVATE KEY", whole.b, whole.len);
}

static void ssh_string(struct der *d, const void *p, size_t n)
{
    uint8_t len[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};

    der_put(d, len, sizeof(len));
    der_put(d, p, n);
}

/* `ecdsa-sha2-<curve> <base64 of the RFC 5656 public key blob>\n`, no comment. */
static char *ssh_public_line(const struct ec_raw *raw)
{
    struct der blob = {.b = {0}};
    char type[32];
    char *b64;
    char *line;

    snprintf(type, sizeof(type), "ecdsa-sha2-%s", raw->curve->ssh);
    ssh_string(&blob, type, strlen(type));
    ssh_string(&blob, raw->curve->ssh, strlen(raw->curve->ssh));
    ssh_string(&blob, raw->point, raw->point_len);
    b64 = kt_crypto_base64_encode(blob.b, blob.len);
    line = kt_xasprintf("%s %s\n", type, b64);
    free(b64);
    return line;
}

static int ssh_key_from_gnutls(gnutls_x509_privkey_t key, struct kt_ssh_key *out,
                               struct kt_err *err)
{
    struct ec_raw raw;

    if (ec_raw_from_key(key, &raw, err) < 0) {
        return -1;
    }
    out->private_pem = sec1_pem(&raw);
    out->public_line = ssh_public_line(&raw);
    memset(raw.k, 0, sizeof(raw.k));
    return 0;
}

int kt_crypto_ssh_key_generate(struct kt_ssh_key *out, struct kt_err *err)
{
    gnutls_x509_privkey_t key = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = gnutls_x509_privkey_init(&key);
    if (rc >= 0) {
        rc = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                          GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP521R1), 0);
    }
    if (rc < 0) {
        gnutls_x509_privkey_deinit(key);
        return kt_err_set(err, KT_EINTERNAL, "generate P-521 key: %s", gnutls_strerror(rc));
    }
    rc = ssh_key_from_gnutls(key, out, err);
    gnutls_x509_privkey_deinit(key);
    return rc;
}

static bool contains(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= len; i++) {
        if (memcmp(hay + i, needle, n) == 0) {
            return true;
        }
    }
    return false;
}

/* Import an unencrypted PEM private key (PKCS#1, SEC1 or PKCS#8) and check its
 * parameters. NULL and KT_EPARSE on failure. */
static gnutls_x509_privkey_t import_privkey(const char *pem, size_t len, struct kt_err *err)
{
    gnutls_x509_privkey_t key = NULL;
    gnutls_datum_t d;
    int rc;

    if (len == 0 || len > PEM_MAX) {
        kt_err_set(err, KT_EPARSE, "private key: empty or longer than %u bytes", PEM_MAX);
        return NULL;
    }
    if (contains(pem, len, "ENCRYPTED")) {
        kt_err_set(err, KT_EPARSE, "private key: encrypted keys are not supported");
        return NULL;
    }
    d = pem_copy(pem, len);
    rc = gnutls_x509_privkey_init(&key);
    if (rc >= 0) {
        rc = gnutls_x509_privkey_import2(key, &d, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN);
    }
    if (rc >= 0) {
        rc = gnutls_x509_privkey_verify_params(key);
    }
    free_pem_copy(&d);
    if (rc < 0) {
        gnutls_x509_privkey_deinit(key);
        kt_err_set(err, KT_EPARSE, "private key: %s", gnutls_strerror(rc));
        return NULL;
    }
    return key;
}

int kt_crypto_ssh_key_from_pem(const char *pem, size_t len, struct kt_ssh_key *out,
                               struct kt_err *err)
{
    gnutls_x509_privkey_t key;
    int rc;

    memset(out, 0, sizeof(*out));
    if (contains(pem, len, "OPENSSH PRIVATE KEY")) {
        return kt_err_set(err, KT_EPARSE,
                          "SSH key: OpenSSH key format is not supported; convert it with "
                          "`ssh-keygen -p -m PEM -f FILE`");
    }
    key = import_privkey(pem, len, err);
    if (!key) {
        return kt_err_prefix(err, "SSH key");
    }
    if (gnutls_x509_privkey_get_pk_algorithm(key) != GNUTLS_PK_ECDSA) {
        gnutls_x509_privkey_deinit(key);
        return kt_err_set(err, KT_EUNSUPPORTED, "SSH key: only ECDSA keys are supported");
    }
    rc = ssh_key_from_gnutls(key, out, err);
    gnutls_x509_privkey_deinit(key);
    if (rc < 0) {
        return kt_err_prefix(err, "SSH key");
    }
    return 0;
}

void kt_crypto_ssh_key_release(struct kt_ssh_key *key)
{
    if (!key) {
        return;
    }
    if (key->private_pem) {
        memset(key->private_pem, 0, strlen(key->private_pem));
    }
    free(key->private_pem);
    free(key->public_line);
    key->private_pem = NULL;
    key->public_line = NULL;
}

/* ---- private keys ---- */

struct kt_crypto_key *kt_crypto_rsa_generate(unsigned bits, struct kt_err *err)
{
    struct kt_crypto_key *key;
    int rc;

    if (bits < 2048 || bits > 8192) {
        kt_err_set(err, KT_EINVAL, "RSA key size %u is outside [2048, 8192]", bits);
        return NULL;
    }
    key = kt_xcalloc(1, sizeof(*key));
    rc = gnutls_x509_privkey_init(&key->k);
    if (rc >= 0) {
        rc = gnutls_x509_privkey_generate(key->k, GNUTLS_PK_RSA, bits, 0);
    }
    if (rc < 0) {
        kt_crypto_key_free(key);
        kt_err_set(err, KT_EINTERNAL, "generate RSA key: %s", gnutls_strerror(rc));
        return NULL;
    }
    return key;
}

struct kt_crypto_key *kt_crypto_key_from_pem(const char *pem, size_t len, struct kt_err *err)
{
    gnutls_x509_privkey_t k = import_privkey(pem, len, err);
    struct kt_crypto_key *key;

    if (!k) {
        return NULL;
    }
    key = kt_xcalloc(1, sizeof(*key));
    key->k = k;
    return key;
}

char *kt_crypto_key_pem(const struct kt_crypto_key *key, struct kt_err *err)
{
    gnutls_datum_t d = {0};
    int rc = gnutls_x509_privkey_export2(key->k, GNUTLS_X509_FMT_PEM, &d);

    if (rc < 0) {
        kt_err_set(err, KT_EINTERNAL, "export private key: %s", gnutls_strerror(rc));
        return NULL;
    }
    return take_datum(&d);
}

void kt_crypto_key_free(struct kt_crypto_key *key)
{
    if (!key) {
        return;
    }
    if (key->k) {
        gnutls_x509_privkey_deinit(key->k);
    }
    free(key);
}

/* ---- certificates ---- */

static int set_names(gnutls_x509_crt_t c, const struct kt_crypto_cert_opts *o, struct kt_err *err)
{
    int rc = 0;

    /* O before CN: the RDN order Go's pkix.Name produces. */
    if (o->organization) {
        rc = gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, o->organization,
                                           (unsigned)strlen(o->organization));
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, o->common_name,
                                           (unsigned)strlen(o->common_name));
    }
    for (size_t i = 0; rc >= 0 && i < o->n_dns; i++) {
        rc = gnutls_x509_crt_set_subject_alt_name(c, GNUTLS_SAN_DNSNAME, o->dns[i],
                                                  (unsigned)strlen(o->dns[i]), GNUTLS_FSAN_APPEND);
    }
    if (rc < 0) {
        return kt_err_set(err, KT_EINVAL, "certificate names: %s", gnutls_strerror(rc));
    }
    for (size_t i = 0; i < o->n_ips; i++) {
        uint8_t ip[16];
        unsigned n = 16;
        if (inet_pton(AF_INET, o->ips[i], ip) == 1) {
            n = 4;
        } else if (inet_pton(AF_INET6, o->ips[i], ip) != 1) {
            return kt_err_set(err, KT_EINVAL, "certificate IP SAN \"%s\" is not an address",
                              o->ips[i]);
        }
        rc = gnutls_x509_crt_set_subject_alt_name(c, GNUTLS_SAN_IPADDRESS, ip, n,
                                                  GNUTLS_FSAN_APPEND);
        if (rc < 0) {
            return kt_err_set(err, KT_EINTERNAL, "certificate IP SAN: %s", gnutls_strerror(rc));
        }
    }
    return 0;
}

/* Version, serial, validity, key, constraints and usages. */
static int set_body(gnutls_x509_crt_t c, const struct kt_crypto_cert_opts *o,
                    const struct kt_crypto_key *key, struct kt_err *err)
{
    uint8_t serial[16];
    unsigned usage = GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT;
    uint8_t id[64];
    size_t id_len = sizeof(id);
    int rc;

    if (kt_crypto_random(serial, sizeof(serial), err) < 0) {
        return -1;
    }
    serial[0] = (uint8_t)((serial[0] & 0x7f) | 0x40); /* positive, minimal DER, non-zero */
    if (o->is_ca) {
        usage |= GNUTLS_KEY_KEY_CERT_SIGN;
    }
    rc = gnutls_x509_crt_set_version(c, 3);
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_serial(c, serial, sizeof(serial));
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_activation_time(c, (time_t)o->not_before);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_expiration_time(c, (time_t)o->not_after);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_key(c, key->k);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_basic_constraints(c, o->is_ca ? 1 : 0, -1);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_key_usage(c, usage);
    }
    if (rc >= 0 && o->server_auth) {
        rc = gnutls_x509_crt_set_key_purpose_oid(c, GNUTLS_KP_TLS_WWW_SERVER, 0);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_get_key_id(c, 0, id, &id_len);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_set_subject_key_id(c, id, id_len);
    }
    if (rc < 0) {
        return kt_err_set(err, KT_EINTERNAL, "certificate fields: %s", gnutls_strerror(rc));
    }
    return 0;
}

static int check_cert_opts(const struct kt_crypto_cert_opts *o, const struct kt_crypto_cert *issuer,
                           const struct kt_crypto_key *issuer_key, struct kt_err *err)
{
    if (!o->common_name || !*o->common_name) {
        return kt_err_set(err, KT_EINVAL, "certificate: a common name is required");
    }
    if (o->not_after <= o->not_before) {
        return kt_err_set(err, KT_EINVAL, "certificate: notAfter must be after notBefore");
    }
    if (issuer && !issuer_key) {
        return kt_err_set(err, KT_EINVAL, "certificate: an issuer needs its key");
    }
    return 0;
}

/* A freshly signed gnutls_x509_crt_t does not answer every getter (SANs, hostname checks)
 * until it is parsed again, so hand out the parsed DER. Steals cert, also on failure. */
static struct kt_crypto_cert *reparse(struct kt_crypto_cert *cert, struct kt_err *err)
{
    gnutls_datum_t der = {0};
    gnutls_x509_crt_t c = NULL;
    int rc = gnutls_x509_crt_export2(cert->c, GNUTLS_X509_FMT_DER, &der);

    if (rc >= 0) {
        rc = gnutls_x509_crt_init(&c);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_import(c, &der, GNUTLS_X509_FMT_DER);
    }
    gnutls_free(der.data);
    gnutls_x509_crt_deinit(cert->c);
    cert->c = c;
    if (rc < 0) {
        kt_crypto_cert_free(cert);
        kt_err_set(err, KT_EINTERNAL, "re-read certificate: %s", gnutls_strerror(rc));
        return NULL;
    }
    return cert;
}

struct kt_crypto_cert *kt_crypto_cert_create(const struct kt_crypto_cert_opts *opts,
                                             const struct kt_crypto_key *key,
                                             const struct kt_crypto_cert *issuer,
                                             const struct kt_crypto_key *issuer_key,
                                             struct kt_err *err)
{
    struct kt_crypto_cert *cert;
    uint8_t id[64];
    size_t id_len = sizeof(id);
    unsigned critical = 0;
    int rc;

    if (check_cert_opts(opts, issuer, issuer_key, err) < 0) {
        return NULL;
    }
    cert = kt_xcalloc(1, sizeof(*cert));
    rc = gnutls_x509_crt_init(&cert->c);
    if (rc < 0) {
        kt_err_set(err, KT_EINTERNAL, "certificate: %s", gnutls_strerror(rc));
        goto fail;
    }
    if (set_names(cert->c, opts, err) < 0 || set_body(cert->c, opts, key, err) < 0) {
        goto fail;
    }
    if (issuer && gnutls_x509_crt_get_subject_key_id(issuer->c, id, &id_len, &critical) >= 0) {
        rc = gnutls_x509_crt_set_authority_key_id(cert->c, id, id_len);
    }
    if (rc >= 0) {
        rc = gnutls_x509_crt_sign2(cert->c, issuer ? issuer->c : cert->c,
                                   issuer ? issuer_key->k : key->k, GNUTLS_DIG_SHA256, 0);
    }
    if (rc < 0) {
        kt_err_set(err, KT_EINTERNAL, "sign certificate: %s", gnutls_strerror(rc));
        goto fail;
    }
    return reparse(cert, err);
fail:
    kt_crypto_cert_free(cert);
    return NULL;
}

struct kt_crypto_cert *kt_crypto_cert_from_pem(const char *pem, size_t len, struct kt_err *err)
{
    struct kt_crypto_cert *cert;
    gnutls_datum_t d;
    int rc;

    if (len == 0 || len > PEM_MAX) {
        kt_err_set(err, KT_EPARSE, "certificate: empty or longer than %u bytes", PEM_MAX);
        return NULL;
    }
    d = pem_copy(pem, len);
    cert = kt_xcalloc(1, sizeof(*cert));
    rc = gnutls_x509_crt_init(&cert->c);
    if (rc >= 0) {
        rc = gnutls_x509_crt_import(cert->c, &d, GNUTLS_X509_FMT_PEM);
    }
    free_pem_copy(&d);
    if (rc < 0) {
        kt_crypto_cert_free(cert);
        kt_err_set(err, KT_EPARSE, "certificate: %s", gnutls_strerror(rc));
        return NULL;
    }
    return cert;
}

char *kt_crypto_cert_pem(const struct kt_crypto_cert *cert, struct kt_err *err)
{
    gnutls_datum_t d = {0};
    int rc = gnutls_x509_crt_export2(cert->c, GNUTLS_X509_FMT_PEM, &d);

    if (rc < 0) {
        kt_err_set(err, KT_EINTERNAL, "export certificate: %s", gnutls_strerror(rc));
        return NULL;
    }
    return take_datum(&d);
}

void kt_crypto_cert_free(struct kt_crypto_cert *cert)
{
    if (!cert) {
        return;
    }
    if (cert->c) {
        gnutls_x509_crt_deinit(cert->c);
    }
    free(cert);
}

int64_t kt_crypto_cert_not_before(const struct kt_crypto_cert *cert)
{
    return (int64_t)gnutls_x509_crt_get_activation_time(cert->c);
}

int64_t kt_crypto_cert_not_after(const struct kt_crypto_cert *cert)
{
    return (int64_t)gnutls_x509_crt_get_expiration_time(cert->c);
}

char *kt_crypto_cert_common_name(const struct kt_crypto_cert *cert)
{
    char buf[256];
    size_t n = sizeof(buf);

    if (gnutls_x509_crt_get_dn_by_oid(cert->c, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf, &n) < 0) {
        return kt_xstrdup("");
    }
    return kt_xstrndup(buf, n);
}

char *kt_crypto_cert_subject(const struct kt_crypto_cert *cert)
{
    gnutls_datum_t d = {0};

    if (gnutls_x509_crt_get_dn3(cert->c, &d, 0) < 0) {
        return kt_xstrdup("");
    }
    return take_datum(&d);
}

void kt_crypto_cert_sans(const struct kt_crypto_cert *cert, struct kt_strv *out)
{
    for (unsigned i = 0;; i++) {
        char buf[256];
        char text[300];
        char ip[INET6_ADDRSTRLEN];
        size_t n = sizeof(buf) - 1;
        unsigned critical = 0;
        int type = gnutls_x509_crt_get_subject_alt_name(cert->c, i, buf, &n, &critical);
        if (type == GNUTLS_E_SHORT_MEMORY_BUFFER) {
            continue; /* longer than any name we issue; skipped */
        }
        if (type < 0) {
            return;
        }
        if (type == GNUTLS_SAN_DNSNAME) {
            buf[n] = '\0';
            snprintf(text, sizeof(text), "DNS:%s", buf);
            kt_strv_push(out, text);
        } else if (type == GNUTLS_SAN_IPADDRESS && (n == 4 || n == 16) &&
                   inet_ntop(n == 4 ? AF_INET : AF_INET6, buf, ip, sizeof(ip))) {
            snprintf(text, sizeof(text), "IP:%s", ip);
            kt_strv_push(out, text);
        }
    }
}

bool kt_crypto_cert_is_ca(const struct kt_crypto_cert *cert)
{
    unsigned critical = 0;

    return gnutls_x509_crt_get_ca_status(cert->c, &critical) > 0;
}

bool kt_crypto_cert_has_server_auth(const struct kt_crypto_cert *cert)
{
    for (unsigned i = 0;; i++) {
        char oid[128];
        size_t n = sizeof(oid);
        unsigned critical = 0;
        int rc = gnutls_x509_crt_get_key_purpose_oid(cert->c, i, oid, &n, &critical);
        if (rc == GNUTLS_E_SHORT_MEMORY_BUFFER) {
            continue;
        }
        if (rc < 0) {
            return false;
        }
        if (strcmp(oid, GNUTLS_KP_TLS_WWW_SERVER) == 0) {
            return true;
        }
    }
}

bool kt_crypto_key_matches_cert(const struct kt_crypto_key *key, const struct kt_crypto_cert *cert)
{
    uint8_t a[64];
    uint8_t b[64];
    size_t na = sizeof(a);
    size_t nb = sizeof(b);

    if (gnutls_x509_privkey_get_key_id(key->k, GNUTLS_KEYID_USE_SHA256, a, &na) < 0 ||
        gnutls_x509_crt_get_key_id(cert->c, GNUTLS_KEYID_USE_SHA256, b, &nb) < 0) {
        return false;
    }
    return na == nb && memcmp(a, b, na) == 0;
}

static int check_time(const struct kt_crypto_cert *cert, const char *what, int64_t at,
                      struct kt_err *err)
{
    if (at < kt_crypto_cert_not_before(cert)) {
        return kt_err_set(err, KT_EINVAL, "%s is not valid yet", what);
    }
    if (at > kt_crypto_cert_not_after(cert)) {
        return kt_err_set(err, KT_EINVAL, "%s has expired", what);
    }
    return 0;
}

int kt_crypto_cert_verify(const struct kt_crypto_cert *cert, const struct kt_crypto_cert *ca,
                          const char *hostname, int64_t at, struct kt_err *err)
{
    unsigned status = 0;
    unsigned flags = GNUTLS_VERIFY_DISABLE_TIME_CHECKS | GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS;
    gnutls_datum_t why = {0};
    int rc = gnutls_x509_crt_verify(cert->c, &ca->c, 1, flags, &status);

    if (rc < 0) {
        return kt_err_set(err, KT_EINVAL, "certificate verification: %s", gnutls_strerror(rc));
    }
    /* GnuTLS also accepts an issuer found by key identifier; like Go, require the names. */
    if (status == 0 && !gnutls_x509_crt_check_issuer(cert->c, ca->c)) {
        status = GNUTLS_CERT_SIGNER_NOT_FOUND | GNUTLS_CERT_INVALID;
    }
    if (status != 0) {
        rc = gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0);
        kt_err_set(err, KT_EINVAL, "certificate does not chain to the CA: %s",
                   rc >= 0 ? (const char *)why.data : "untrusted");
        gnutls_free(why.data);
        return -1;
    }
    if (check_time(cert, "certificate", at, err) < 0 ||
        (ca != cert && check_time(ca, "CA certificate", at, err) < 0)) {
        return -1;
    }
    if (hostname && !gnutls_x509_crt_check_hostname2(cert->c, hostname, 0)) {
        return kt_err_set(err, KT_EINVAL, "certificate is not valid for %s", hostname);
    }
    return 0;
}

bool kt_crypto_cert_expires_within(const struct kt_crypto_cert *cert, int64_t now,
                                   int64_t lookahead)
{
    return kt_crypto_cert_not_before(cert) > now ||
           kt_crypto_cert_not_after(cert) < now + lookahead;
}
