/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_crypto.c - common/crypto against published and independently computed
 * vectors.
 *
 * Sources: SHA-256 FIPS 180-2 "abc"; base64 RFC 4648 §10; Z85 ZeroMQ RFC 32 "HelloWorld";
 * X25519 RFC 7748 §6.1; the Flux curve.cert keys computed with python3 `cryptography`
 * (X25519PrivateKey) and Go crypto/ecdh; the SSH keys written by Go x509.MarshalECPrivateKey
 * (P-521) and `openssl genpkey` (P-256, PKCS#8) with their public lines from
 * `ssh-keygen -y`. The keys below are throwaway test keys. */
#include "tests/test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/crypto/crypto.h"
#include "common/base/mem.h"
#include "common/base/str.h"

static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        for (int j = 0; j < 2; j++) {
            char c = hex[2 * i + (size_t)j];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        out[i] = (uint8_t)v;
    }
}

static void test_sha256(void)
{
    char hex[65];
    uint8_t raw[KT_SHA256_SIZE];
    uint8_t want[KT_SHA256_SIZE];

    kt_crypto_sha256_hex("abc", 3, hex);
    CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    kt_crypto_sha256_hex("", 0, hex);
    CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    kt_crypto_sha256("abc", 3, raw);
    hex_to_bytes("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", want, 32);
    CHECK(memcmp(raw, want, 32) == 0);
}

static void test_random(void)
{
    uint8_t a[32] = {0};
    uint8_t b[32] = {0};
    struct kt_err err = {0};

    CHECK_OK(kt_crypto_random(a, sizeof(a), &err));
    CHECK_OK(kt_crypto_random(b, sizeof(b), &err));
    CHECK(memcmp(a, b, sizeof(a)) != 0);
}

static void test_base64(void)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const enc[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    struct kt_err err = {0};
    uint8_t *out = NULL;
    size_t n = 0;

    for (size_t i = 0; i < KT_ARRAY_SIZE(plain); i++) {
        char *s = kt_crypto_base64_encode(plain[i], strlen(plain[i]));
        CHECK_EQ_STR(s, enc[i]);
        free(s);
        CHECK_OK(kt_crypto_base64_decode(enc[i], strlen(enc[i]), &out, &n, &err));
        CHECK_EQ_INT(n, strlen(plain[i]));
        CHECK_EQ_STR((const char *)out, plain[i]);
        free(out);
    }
    CHECK_EQ_INT(kt_crypto_base64_decode("Zg=", 3, &out, &n, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK(out == NULL);
    CHECK_EQ_INT(kt_crypto_base64_decode("Z!==", 4, &out, &n, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK(out == NULL);
}

static void test_z85(void)
{
    static const uint8_t hello[] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    static const uint8_t zeros[4] = {0};
    struct kt_err err = {0};
    uint8_t *out = NULL;
    size_t n = 0;
    char *s = kt_crypto_z85_encode(hello, sizeof(hello), &err);

    CHECK_EQ_STR(s, "HelloWorld");
    free(s);
    s = kt_crypto_z85_encode(zeros, 4, &err);
    CHECK_EQ_STR(s, "00000");
    free(s);
    CHECK_OK(kt_crypto_z85_decode("HelloWorld", 10, &out, &n, &err));
    CHECK_EQ_INT(n, 8);
    CHECK(out && memcmp(out, hello, 8) == 0);
    free(out);

    CHECK(kt_crypto_z85_encode(hello, 3, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK_EQ_INT(kt_crypto_z85_decode("Hello", 4, &out, &n, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK_EQ_INT(kt_crypto_z85_decode("Hell~", 5, &out, &n, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK_EQ_INT(kt_crypto_z85_decode("Hel\0o", 5, &out, &n, &err), -1);
    CHECK_EQ_INT(kt_crypto_z85_decode("#####", 5, &out, &n, &err), -1); /* 85^5-1 > 2^32-1 */
    CHECK_CONTAINS(err.msg, "overflows");
    CHECK(out == NULL);
}

static void check_x25519(const char *priv_hex, const char *pub_hex)
{
    uint8_t priv[32];
    uint8_t want[32];
    uint8_t pub[32];

    hex_to_bytes(priv_hex, priv, 32);
    hex_to_bytes(pub_hex, want, 32);
    kt_crypto_x25519_public(priv, pub);
    CHECK(memcmp(pub, want, 32) == 0);
}

static void test_x25519(void)
{
    /* RFC 7748 §6.1, Alice and Bob (both private keys need clamping). */
    check_x25519("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
                 "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    check_x25519("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
                 "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
    /* SHA-256("12345-67890") and its public key (python cryptography, Go crypto/ecdh). */
    check_x25519("1d2a6691b22d53c03b154961c007327d6bd8c264438e926cf6ef0a51fd0822f6",
                 "cd8c4e98d151544258a81f8171e3ae05e29731010718c61658897bf14ea08578");
}

static void test_flux_curve_cert(void)
{
    char *a = kt_crypto_flux_curve_cert("test-job", "12345-67890");
    char *b = kt_crypto_flux_curve_cert("test-job", "12345-67890");
    char *c = kt_crypto_flux_curve_cert("test-job", "different-uid");
    char *e = kt_crypto_flux_curve_cert("x", "");

    CHECK_EQ_STR(a, "#  ZeroMQ CURVE Secret Certificate\n"
                    "#  Generated by Kubeflow Trainer\n"
                    "\n"
                    "metadata\n"
                    "    name = \"test-job\"\n"
                    "curve\n"
                    "    public-key = \"=5tz+^nr>fsG0r)APsh9&*hw22n>C@sC.y{pn0q=\"\n"
                    "    secret-key = \"9v+V-VmP1<i#7s}ZY#SyyUlHmlYNsC{u@t=@rKRv\"\n");
    CHECK_EQ_STR(a, b);
    CHECK(strcmp(a, c) != 0);
    /* SHA-256("") = e3b0c442..., public 18656ba6... (python cryptography). */
    CHECK_CONTAINS(e, "    public-key = \"7?EGW/m>&Y9HQagaISXu)D$eAd5[-hYZ)hT8q:j&\"\n");
    CHECK_CONTAINS(e, "    secret-key = \"<flD*Nev{rN!#-#NqYRYc:2+@wsF=RQ)mt!CV84K\"\n");
    free(a);
    free(b);
    free(c);
    free(e);
}

/* Written by Go's x509.MarshalECPrivateKey: the scalar and X both start with 0x00 0x00,
 * which exercises the padding GnuTLS's own SEC1 export drops. */
static const char go_p521[] = "-----BEGIN EC PRIVATE KEY-----\n"
                              "MIHcAgEBBEIAANF3a9AAb4lwmfwN/R/DE1u+OlKrm7uY3iseDQjq91O2Vd+AQlGw\n"
                              "tieSRaQljCi0Kb6Idid4c7O+dyL9qtuTGWugBwYFK4EEACOhgYkDgYYABAAAl6qK\n"
                              "rkMAz5/oXORP5JfF6HumL9y0Kmk2JzOkGpLPW1Bspc8LTgSBljkub0/80slSaUmS\n"
                              "brPd9akgzQEQg/uaSQA1fl5GpGLXjsgQnewRVJbXn7GG07E1K9w0MraHfxnWxPGl\n"
                              "FAK3uUO2FvqCpWEp0DCyTw0B7gcQ1yCWIMClmCzj9Q==\n"
                              "-----END EC PRIVATE KEY-----\n";
static const char go_p521_pub[] =
    "ecdsa-sha2-nistp521 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBAAAl6qKrkMAz5/oXORP5JfF6HumL9y0Kmk2"
    "JzOkGpLPW1Bspc8LTgSBljkub0/80slSaUmSbrPd9akgzQEQg/uaSQA1fl5GpGLXjsgQnewRVJbXn7GG07E1K9w0"
    "MraHfxnWxPGlFAK3uUO2FvqCpWEp0DCyTw0B7gcQ1yCWIMClmCzj9Q==\n";

/* `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` (PKCS#8) and the same
 * key as `openssl ec` writes it (SEC1). */
static const char openssl_p256_pkcs8[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7Ac6BL8sqcu8DhpL\n"
    "+yJV2CXEPaQmIOEnxaML9ituVRmhRANCAASeUHLS23Wzhcp5mhg8jGVKrCefVdBu\n"
    "DhOsoBwdv64e0asLNggdf9Cea6G8DBTAvVL1AiJSj12L7mW9uADkyVhi\n"
    "-----END PRIVATE KEY-----\n";
static const char openssl_p256_sec1[] =
    "-----BEGIN EC PRIVATE KEY-----\n"
    "MHcCAQEEIOwHOgS/LKnLvA4aS/siVdglxD2kJiDhJ8WjC/YrblUZoAoGCCqGSM49\n"
    "AwEHoUQDQgAEnlBy0tt1s4XKeZoYPIxlSqwnn1XQbg4TrKAcHb+uHtGrCzYIHX/Q\n"
    "nmuhvAwUwL1S9QIiUo9di+5lvbgA5MlYYg==\n"
    "-----END EC PRIVATE KEY-----\n";
static const char openssl_p256_pub[] =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBJ5QctLbdbOFynmaGDyMZUqsJ59V0G4OE6ygHB2/"
    "rh7Rqws2CB1/0J5robwMFMC9UvUCIlKPXYvuZb24AOTJWGI=\n";

static const char openssl_ed25519[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEINp89LjbKbxQZDIwJtsG7/uOVmiKWl7Q8dk+nEkbnbzZ\n"
    "-----END PRIVATE KEY-----\n";

static void test_ssh_key_import_vectors(void)
{
    struct kt_ssh_key k = {0};
    struct kt_err err = {0};

    CHECK_OK(kt_crypto_ssh_key_from_pem(go_p521, strlen(go_p521), &k, &err));
    CHECK_EQ_STR(k.private_pem, go_p521);
    CHECK_EQ_STR(k.public_line, go_p521_pub);
    kt_crypto_ssh_key_release(&k);
    CHECK(k.private_pem == NULL && k.public_line == NULL);

    CHECK_OK(kt_crypto_ssh_key_from_pem(openssl_p256_pkcs8, strlen(openssl_p256_pkcs8), &k, &err));
    CHECK_EQ_STR(k.private_pem, openssl_p256_sec1);
    CHECK_EQ_STR(k.public_line, openssl_p256_pub);
    kt_crypto_ssh_key_release(&k);
    kt_crypto_ssh_key_release(&k); /* twice is fine */
    kt_crypto_ssh_key_release(NULL);
}

/* Parse the authorized_keys line back: type, curve name and an uncompressed 133-byte point. */
static void check_p521_line(const char *line)
{
    static const char prefix[] = "ecdsa-sha2-nistp521 ";
    struct kt_err err = {0};
    uint8_t *blob = NULL;
    size_t n = 0;
    size_t b64_len;

    CHECK(strncmp(line, prefix, strlen(prefix)) == 0);
    CHECK(strchr(line, '\n') == line + strlen(line) - 1);
    b64_len = strlen(line) - strlen(prefix) - 1;
    CHECK_OK(kt_crypto_base64_decode(line + strlen(prefix), b64_len, &blob, &n, &err));
    CHECK_EQ_INT(n, 4 + 19 + 4 + 8 + 4 + 133);
    if (blob && n == 172) {
        CHECK(memcmp(blob,
                     "\0\0\0\x13"
                     "ecdsa-sha2-nistp521",
                     23) == 0);
        CHECK(memcmp(blob + 23,
                     "\0\0\0\x08"
                     "nistp521",
                     12) == 0);
        CHECK(memcmp(blob + 35, "\0\0\0\x85\x04", 5) == 0);
    }
    free(blob);
}

/* Independent check with OpenSSH when installed: derive the public key from the private PEM. */
static void check_with_ssh_keygen(const struct kt_ssh_key *k)
{
    char path[] = "/tmp/kt-test-ssh-XXXXXX";
    char cmd[256];
    char line[1024] = {0};
    FILE *p;
    int fd;

    if (system("command -v ssh-keygen >/dev/null 2>&1") != 0) {
        printf("ssh-keygen not installed; skipping the OpenSSH cross-check\n");
        return;
    }
    fd = mkstemp(path); /* mode 0600, as ssh-keygen requires */
    CHECK(fd >= 0);
    if (fd < 0) {
        return;
    }
    CHECK(write(fd, k->private_pem, strlen(k->private_pem)) == (ssize_t)strlen(k->private_pem));
    close(fd);
    snprintf(cmd, sizeof(cmd), "ssh-keygen -y -f %s 2>&1", path);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    if (p) {
        CHECK(fgets(line, sizeof(line), p) != NULL);
        CHECK_EQ_INT(pclose(p), 0);
    }
    CHECK_EQ_STR(line, k->public_line);
    unlink(path);
}

static void test_ssh_key_generate(void)
{
    struct kt_ssh_key a = {0};
    struct kt_ssh_key b = {0};
    struct kt_ssh_key again = {0};
    struct kt_err err = {0};

    CHECK_OK(kt_crypto_ssh_key_generate(&a, &err));
    CHECK_OK(kt_crypto_ssh_key_generate(&b, &err));
    CHECK(strncmp(a.private_pem, "-----BEGIN EC PRIVATE KEY-----\nMIHcAgEBBEI", 42) == 0);
    CHECK_CONTAINS(a.private_pem, "\n-----END EC PRIVATE KEY-----\n");
    check_p521_line(a.public_line);
    CHECK(strcmp(a.public_line, b.public_line) != 0);
    CHECK(strcmp(a.private_pem, b.private_pem) != 0);
    /* Re-import gives the same bytes: the encoding is canonical. */
    CHECK_OK(kt_crypto_ssh_key_from_pem(a.private_pem, strlen(a.private_pem), &again, &err));
    CHECK_EQ_STR(again.private_pem, a.private_pem);
    CHECK_EQ_STR(again.public_line, a.public_line);
    check_with_ssh_keygen(&a);
    kt_crypto_ssh_key_release(&a);
    kt_crypto_ssh_key_release(&b);
    kt_crypto_ssh_key_release(&again);
}

static void expect_ssh_fail(const char *pem, enum kt_code code, const char *msg)
{
    struct kt_ssh_key k = {0};
    struct kt_err err = {0};

    CHECK_EQ_INT(kt_crypto_ssh_key_from_pem(pem, strlen(pem), &k, &err), -1);
    CHECK_EQ_INT(err.code, code);
    CHECK_CONTAINS(err.msg, msg);
    CHECK(k.private_pem == NULL && k.public_line == NULL);
}

static void test_ssh_key_import_errors(void)
{
    struct kt_err err = {0};
    struct kt_crypto_key *rsa = kt_crypto_rsa_generate(2048, &err);
    char *rsa_pem = rsa ? kt_crypto_key_pem(rsa, &err) : NULL;
    char *tampered = kt_xstrdup(go_p521);

    expect_ssh_fail("", KT_EPARSE, "SSH key");
    expect_ssh_fail("not a key", KT_EPARSE, "SSH key");
    expect_ssh_fail("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
                    "-----END OPENSSH PRIVATE KEY-----\n",
                    KT_EPARSE, "ssh-keygen -p -m PEM");
    expect_ssh_fail(openssl_ed25519, KT_EUNSUPPORTED, "only ECDSA");
    expect_ssh_fail("-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
                    "DEK-Info: AES-128-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n",
                    KT_EPARSE, "encrypted keys are not supported");
    CHECK(rsa_pem != NULL);
    if (rsa_pem) {
        expect_ssh_fail(rsa_pem, KT_EUNSUPPORTED, "only ECDSA");
    }
    /* Truncated after the first base64 line. */
    tampered[100] = '\0';
    expect_ssh_fail(tampered, KT_EPARSE, "SSH key");
    free(tampered);
    /* A flipped character inside the private scalar: the public point no longer matches. */
    tampered = kt_xstrdup(go_p521);
    tampered[60] = tampered[60] == 'A' ? 'B' : 'A';
    expect_ssh_fail(tampered, KT_EPARSE, "SSH key");
    free(tampered);
    free(rsa_pem);
    kt_crypto_key_free(rsa);
}

#define T0 1800000000LL /* 2027-01-15; any fixed instant works, nothing reads the clock */

static struct kt_crypto_cert *make_ca(struct kt_crypto_key *key, const char *cn)
{
    static const char *const dns[] = {"ca.example"};
    struct kt_crypto_cert_opts o = {0};
    struct kt_err err = {0};
    struct kt_crypto_cert *c;

    o.common_name = cn;
    o.organization = "kt-test";
    o.dns = dns;
    o.n_dns = 1;
    o.is_ca = true;
    o.not_before = T0 - 3600;
    o.not_after = T0 + 1000000;
    c = kt_crypto_cert_create(&o, key, NULL, NULL, &err);
    CHECK(c != NULL);
    return c;
}

static void check_sans(const struct kt_crypto_cert *c, const char *const *want, size_t n)
{
    struct kt_strv sans;

    kt_strv_init(&sans);
    kt_crypto_cert_sans(c, &sans);
    CHECK_EQ_INT(sans.len, n);
    for (size_t i = 0; i < n && i < sans.len; i++) {
        CHECK_EQ_STR(sans.items[i], want[i]);
    }
    kt_strv_release(&sans);
}

static struct kt_crypto_cert *make_server(const struct kt_crypto_key *key,
                                          const struct kt_crypto_cert *ca,
                                          const struct kt_crypto_key *ca_key)
{
    static const char *const dns[] = {"svc.ns.svc", "localhost"};
    static const char *const ips[] = {"127.0.0.1", "::1"};
    struct kt_crypto_cert_opts o = {0};
    struct kt_err err = {0};
    struct kt_crypto_cert *c;

    o.common_name = "svc.ns.svc";
    o.dns = dns;
    o.n_dns = 2;
    o.ips = ips;
    o.n_ips = 2;
    o.server_auth = true;
    o.not_before = T0 - 3600;
    o.not_after = T0 + 500000;
    c = kt_crypto_cert_create(&o, key, ca, ca_key, &err);
    CHECK(c != NULL);
    return c;
}

static void test_rsa_key_pem(const struct kt_crypto_key *key)
{
    struct kt_err err = {0};
    char *pem = kt_crypto_key_pem(key, &err);
    struct kt_crypto_key *back = pem ? kt_crypto_key_from_pem(pem, strlen(pem), &err) : NULL;
    char *again = back ? kt_crypto_key_pem(back, &err) : NULL;

    CHECK(pem && strncmp(pem, "-----BEGIN RSA PRIVATE KEY-----\n", 32) == 0);
    CHECK_CONTAINS(pem, "-----END RSA PRIVATE KEY-----\n");
    CHECK_EQ_STR(again, pem);
    free(pem);
    free(again);
    kt_crypto_key_free(back);
    kt_crypto_key_free(NULL);
}

static void test_cert_fields(const struct kt_crypto_cert *ca, const struct kt_crypto_cert *srv)
{
    static const char *const ca_sans[] = {"DNS:ca.example"};
    static const char *const srv_sans[] = {"DNS:svc.ns.svc", "DNS:localhost", "IP:127.0.0.1",
                                           "IP:::1"};
    struct kt_err err = {0};
    char *cn = kt_crypto_cert_common_name(ca);
    char *pem = kt_crypto_cert_pem(srv, &err);
    struct kt_crypto_cert *back = pem ? kt_crypto_cert_from_pem(pem, strlen(pem), &err) : NULL;

    CHECK_EQ_STR(cn, "test-ca");
    CHECK(kt_crypto_cert_is_ca(ca));
    CHECK(!kt_crypto_cert_has_server_auth(ca));
    CHECK_EQ_INT(kt_crypto_cert_not_before(ca), T0 - 3600);
    CHECK_EQ_INT(kt_crypto_cert_not_after(ca), T0 + 1000000);
    check_sans(ca, ca_sans, 1);
    CHECK(pem && strncmp(pem, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
    CHECK(back != NULL);
    if (back) {
        CHECK(!kt_crypto_cert_is_ca(back));
        CHECK(kt_crypto_cert_has_server_auth(back));
        CHECK_EQ_INT(kt_crypto_cert_not_after(back), T0 + 500000);
        check_sans(back, srv_sans, 4);
    }
    free(cn);
    free(pem);
    kt_crypto_cert_free(back);
    kt_crypto_cert_free(NULL);
}

static void test_cert_verify(const struct kt_crypto_cert *ca, const struct kt_crypto_cert *srv,
                             const struct kt_crypto_cert *other_ca,
                             const struct kt_crypto_cert *same_key_ca)
{
    struct kt_err err = {0};

    CHECK_OK(kt_crypto_cert_verify(ca, ca, "ca.example", T0, &err));
    CHECK_OK(kt_crypto_cert_verify(srv, ca, "svc.ns.svc", T0, &err));
    CHECK_OK(kt_crypto_cert_verify(srv, ca, "localhost", T0, &err));
    CHECK_OK(kt_crypto_cert_verify(srv, ca, "127.0.0.1", T0, &err));
    CHECK_OK(kt_crypto_cert_verify(srv, ca, NULL, T0 + 500000, &err));
    CHECK_EQ_INT(kt_crypto_cert_verify(srv, ca, "other.ns.svc", T0, &err), -1);
    CHECK_CONTAINS(err.msg, "not valid for other.ns.svc");
    CHECK_EQ_INT(kt_crypto_cert_verify(srv, ca, NULL, T0 + 500001, &err), -1);
    CHECK_CONTAINS(err.msg, "expired");
    CHECK_EQ_INT(kt_crypto_cert_verify(srv, ca, NULL, T0 - 3601, &err), -1);
    CHECK_CONTAINS(err.msg, "not valid yet");
    CHECK_EQ_INT(kt_crypto_cert_verify(srv, other_ca, NULL, T0, &err), -1);
    CHECK_CONTAINS(err.msg, "does not chain");
    /* Same key, other name: Go refuses it, so do we. */
    CHECK_EQ_INT(kt_crypto_cert_verify(srv, same_key_ca, NULL, T0, &err), -1);
    CHECK_CONTAINS(err.msg, "does not chain");
    /* A leaf is not a CA: nothing chains to it. */
    CHECK_EQ_INT(kt_crypto_cert_verify(other_ca, srv, NULL, T0, &err), -1);
}

static void test_cert_expiry(const struct kt_crypto_cert *srv)
{
    /* notAfter = T0 + 500000; valid through now + lookahead means notAfter >= now + la. */
    CHECK(!kt_crypto_cert_expires_within(srv, T0, 500000));
    CHECK(kt_crypto_cert_expires_within(srv, T0, 500001));
    CHECK(kt_crypto_cert_expires_within(srv, T0 + 1, 500000));
    CHECK(!kt_crypto_cert_expires_within(srv, T0 - 3600, 0));
    CHECK(kt_crypto_cert_expires_within(srv, T0 - 3601, 0)); /* not valid yet */
}

static void test_cert_errors(const struct kt_crypto_key *key, const struct kt_crypto_cert *ca)
{
    static const char *const bad_ip[] = {"300.1.1.1"};
    struct kt_crypto_cert_opts o = {0};
    struct kt_err err = {0};

    o.not_before = T0;
    o.not_after = T0 + 1;
    CHECK(kt_crypto_cert_create(&o, key, NULL, NULL, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    o.common_name = "x";
    o.not_after = T0;
    CHECK(kt_crypto_cert_create(&o, key, NULL, NULL, &err) == NULL);
    CHECK_CONTAINS(err.msg, "notAfter");
    o.not_after = T0 + 1;
    CHECK(kt_crypto_cert_create(&o, key, ca, NULL, &err) == NULL);
    CHECK_CONTAINS(err.msg, "issuer needs its key");
    o.ips = bad_ip;
    o.n_ips = 1;
    CHECK(kt_crypto_cert_create(&o, key, NULL, NULL, &err) == NULL);
    CHECK_CONTAINS(err.msg, "300.1.1.1");
    CHECK(kt_crypto_rsa_generate(1024, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK(kt_crypto_cert_from_pem("", 0, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK(kt_crypto_cert_from_pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                                  59, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK(kt_crypto_key_from_pem("garbage", 7, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EPARSE);
}

static void test_x509(void)
{
    struct kt_err err = {0};
    struct kt_crypto_key *ca_key = kt_crypto_rsa_generate(2048, &err);
    struct kt_crypto_key *key = kt_crypto_rsa_generate(2048, &err);
    struct kt_crypto_key *other_key = kt_crypto_rsa_generate(2048, &err);
    struct kt_crypto_cert *ca = ca_key ? make_ca(ca_key, "test-ca") : NULL;
    struct kt_crypto_cert *other = other_key ? make_ca(other_key, "other-ca") : NULL;
    struct kt_crypto_cert *same = ca_key ? make_ca(ca_key, "same-key-ca") : NULL;
    struct kt_crypto_cert *srv = ca && key ? make_server(key, ca, ca_key) : NULL;

    CHECK(ca && other && same && srv);
    if (!ca || !other || !same || !srv) {
        goto out;
    }
    test_rsa_key_pem(key);
    test_cert_fields(ca, srv);
    CHECK(kt_crypto_key_matches_cert(key, srv));
    CHECK(kt_crypto_key_matches_cert(ca_key, ca));
    CHECK(!kt_crypto_key_matches_cert(key, ca));
    test_cert_verify(ca, srv, other, same);
    test_cert_expiry(srv);
    test_cert_errors(key, ca);
out:
    kt_crypto_cert_free(srv);
    kt_crypto_cert_free(other);
    kt_crypto_cert_free(same);
    kt_crypto_cert_free(ca);
    kt_crypto_key_free(key);
    kt_crypto_key_free(other_key);
    kt_crypto_key_free(ca_key);
}

int main(void)
{
    kt_mem_init();
    test_sha256();
    test_random();
    test_base64();
    test_z85();
    test_x25519();
    test_flux_curve_cert();
    test_ssh_key_import_vectors();
    test_ssh_key_generate();
    test_ssh_key_import_errors();
    test_x509();
    return test_report();
}
