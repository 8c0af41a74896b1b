/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_pem.c - libFuzzer target for the PEM and text decoders of common/crypto.
 *
 * Target: kt_crypto_cert_from_pem, kt_crypto_key_from_pem, kt_crypto_ssh_key_from_pem,
 * kt_crypto_z85_decode, kt_crypto_base64_decode
 * Properties: no crash or leak on any input; an accepted SSH key re-imports to the same
 * bytes (the encoding is canonical); an accepted certificate exports PEM that parses again;
 * accepted Z85 encodes back to the input. Inputs are capped at 16 KiB (PEM files we read
 * are small, and RSA parameter checks on huge keys only measure GnuTLS's speed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/crypto.h"
#include "common/base/mem.h"
#include "common/base/str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_ssh(const char *s, size_t n)
{
    struct kt_ssh_key k = {0};
    struct kt_ssh_key again = {0};

    if (kt_crypto_ssh_key_from_pem(s, n, &k, NULL) < 0) {
        return;
    }
    if (kt_crypto_ssh_key_from_pem(k.private_pem, strlen(k.private_pem), &again, NULL) < 0 ||
        strcmp(k.private_pem, again.private_pem) != 0 ||
        strcmp(k.public_line, again.public_line) != 0) {
        abort();
    }
    kt_crypto_ssh_key_release(&k);
    kt_crypto_ssh_key_release(&again);
}

static void fuzz_cert(const char *s, size_t n)
{
    struct kt_crypto_cert *c = kt_crypto_cert_from_pem(s, n, NULL);
    struct kt_crypto_cert *back;
    struct kt_strv sans;
    char *pem;

    if (!c) {
        return;
    }
    kt_strv_init(&sans);
    kt_crypto_cert_sans(c, &sans);
    free(kt_crypto_cert_subject(c));
    free(kt_crypto_cert_common_name(c));
    (void)kt_crypto_cert_is_ca(c);
    (void)kt_crypto_cert_has_server_auth(c);
    (void)kt_crypto_cert_expires_within(c, 1800000000, 90 * 86400);
    /* A self-signed input may verify or not; only the absence of crashes matters. */
    (void)!kt_crypto_cert_verify(c, c, "localhost", 1800000000, NULL);
    pem = kt_crypto_cert_pem(c, NULL);
    back = pem ? kt_crypto_cert_from_pem(pem, strlen(pem), NULL) : NULL;
    if (pem && !back) {
        abort();
    }
    kt_crypto_cert_free(back);
    free(pem);
    kt_strv_release(&sans);
    kt_crypto_cert_free(c);
}

static void fuzz_key(const char *s, size_t n)
{
    struct kt_crypto_key *k = kt_crypto_key_from_pem(s, n, NULL);

    if (k) {
        free(kt_crypto_key_pem(k, NULL));
    }
    kt_crypto_key_free(k);
}

static void fuzz_text(const char *s, size_t n)
{
    uint8_t *out = NULL;
    size_t len = 0;
    char *again;

    if (kt_crypto_z85_decode(s, n, &out, &len, NULL) == 0) {
        again = kt_crypto_z85_encode(out, len, NULL);
        if (!again || strlen(again) != n || memcmp(again, s, n) != 0) {
            abort();
        }
        free(again);
        free(out);
    }
    if (kt_crypto_base64_decode(s, n, &out, &len, NULL) == 0) {
        free(out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;

    kt_mem_init();
    if (size > 16384) {
        return 0;
    }
    fuzz_ssh(s, size);
    fuzz_cert(s, size);
    fuzz_key(s, size);
    fuzz_text(s, size);
    return 0;
}
