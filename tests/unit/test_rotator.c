/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_rotator.c - certs/rotator's pure parts: the caBundle with and without a
 * retiring CA, Secret data round trips (including broken data), caBundle injection into a
 * webhook configuration, and the operator namespace file. The cluster I/O is covered by
 * tests/integration/itest_certs_rotator.c on the real API server. Times are fixed. */
#include "tests/test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "certs/certs.h"
#include "certs/rotator.h"
#include "common/crypto/crypto.h"
#include "common/base/json.h"
#include "common/base/mem.h"

#define T0 1800000000LL /* 2027-01-15T08:00:00Z */
#define DAY (24LL * 60 * 60)

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

static void test_bundle(const struct kt_certs *a, const struct kt_certs *b)
{
    struct kt_err err = {0};
    char *pem = kt_certs_bundle_pem(a->ca_crt, NULL, T0, &err);

    CHECK_EQ_STR(pem, a->ca_crt);
    free(pem);
    /* A previous CA still valid rides along, after the current one. */
    pem = kt_certs_bundle_pem(a->ca_crt, b->ca_crt, T0, &err);
    CHECK(pem && strncmp(pem, a->ca_crt, strlen(a->ca_crt)) == 0);
    CHECK(pem && strstr(pem, b->ca_crt) != NULL);
    CHECK_EQ_INT(pem ? count(pem, "BEGIN CERTIFICATE") : 0, 2);
    free(pem);
    /* Expired (b's CA ends a year after T0), the same as the current one, or junk: dropped. */
    pem = kt_certs_bundle_pem(a->ca_crt, b->ca_crt, T0 + 11 * 365 * DAY, &err);
    CHECK_EQ_STR(pem, a->ca_crt);
    free(pem);
    pem = kt_certs_bundle_pem(a->ca_crt, a->ca_crt, T0, &err);
    CHECK_EQ_STR(pem, a->ca_crt);
    free(pem);
    pem = kt_certs_bundle_pem(a->ca_crt, "not a certificate", T0, &err);
    CHECK_EQ_STR(pem, a->ca_crt);
    free(pem);
    /* No CA, or a CA that is not a certificate: an error. */
    CHECK(kt_certs_bundle_pem(NULL, b->ca_crt, T0, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    err.code = KT_OK;
    CHECK(kt_certs_bundle_pem("junk", NULL, T0, &err) == NULL);
    CHECK(err.code != KT_OK);
}

static void test_secret_roundtrip(const struct kt_certs *a, const struct kt_certs *b)
{
    struct kt_err err = {0};
    json_t *data = kt_certs_secret_data(a, b->ca_crt);
    json_t *secret = json_pack("{s:s, s:O}", "kind", "Secret", "data", data);
    struct kt_certs got = {0};
    char *prev = NULL;

    CHECK_EQ_INT(json_object_size(data), 5);
    CHECK_EQ_INT(kt_certs_from_secret(secret, &got, &prev, &err), 0);
    CHECK_EQ_STR(got.ca_crt, a->ca_crt);
    CHECK_EQ_STR(got.ca_key, a->ca_key);
    CHECK_EQ_STR(got.tls_crt, a->tls_crt);
    CHECK_EQ_STR(got.tls_key, a->tls_key);
    CHECK_EQ_STR(prev, b->ca_crt);
    kt_certs_release(&got);
    free(prev);
    json_decref(data);

    /* Without previous: four keys. */
    data = kt_certs_secret_data(a, NULL);
    CHECK_EQ_INT(json_object_size(data), 4);
    CHECK(json_object_get(data, KT_CERTS_PREVIOUS_KEY) == NULL);
    json_decref(data);

    /* The empty Secret kustomize ships, and empty values: nothing, no error. */
    json_object_set_new(secret, "data", json_pack("{s:s}", "tls.crt", ""));
    CHECK_EQ_INT(kt_certs_from_secret(secret, &got, &prev, &err), 0);
    CHECK(got.tls_crt == NULL && got.ca_crt == NULL && prev == NULL);
    json_object_del(secret, "data");
    CHECK_EQ_INT(kt_certs_from_secret(secret, &got, &prev, &err), 0);
    CHECK(got.ca_crt == NULL);

    /* Broken data: an error and nothing owned. */
    json_object_set_new(secret, "data", json_pack("{s:s}", "ca.crt", "@@@not base64@@@"));
    CHECK_EQ_INT(kt_certs_from_secret(secret, &got, &prev, &err), -1);
    CHECK(got.ca_crt == NULL && prev == NULL);
    CHECK_CONTAINS(err.msg, "data.ca.crt");
    json_object_set_new(secret, "data", json_pack("{s:i}", "tls.key", 3));
    CHECK_EQ_INT(kt_certs_from_secret(secret, &got, &prev, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    json_object_set_new(secret, "data", json_string("x"));
    CHECK_EQ_INT(kt_certs_from_secret(secret, &got, &prev, &err), -1);
    json_decref(secret);
}

static const json_t *hook_cc(const json_t *cfg, size_t i)
{
    return json_object_get(json_array_get(json_object_get(cfg, "webhooks"), i), "clientConfig");
}

static void test_inject(void)
{
    const char *text = "{\"kind\":\"ValidatingWebhookConfiguration\",\"webhooks\":["
                       "{\"name\":\"a\",\"clientConfig\":{\"url\":\"https://127.0.0.1:1/x\"}},"
                       "{\"name\":\"b\",\"clientConfig\":{\"caBundle\":\"QUJD\",\"service\":{}}},"
                       "{\"name\":\"c\"}]}";
    struct kt_err err = {0};
    json_t *cfg = kt_json_parse(text, strlen(text), &err);

    CHECK(cfg != NULL);
    CHECK_EQ_INT(kt_certs_inject_bundle(cfg, "QUJD"), 2); /* a and c change, b was equal */
    CHECK_EQ_STR(kt_json_str(hook_cc(cfg, 0), "caBundle", ""), "QUJD");
    CHECK_EQ_STR(kt_json_str(hook_cc(cfg, 2), "caBundle", ""), "QUJD");
    /* The rest of clientConfig is kept. */
    CHECK_EQ_STR(kt_json_str(hook_cc(cfg, 0), "url", ""), "https://127.0.0.1:1/x");
    CHECK_EQ_INT(kt_certs_inject_bundle(cfg, "QUJD"), 0); /* idempotent: no update needed */
    CHECK_EQ_INT(kt_certs_inject_bundle(cfg, "REVG"), 3);
    json_decref(cfg);
    /* No webhooks (or not an array): nothing to do. */
    cfg = json_pack("{s:s}", "kind", "MutatingWebhookConfiguration");
    CHECK_EQ_INT(kt_certs_inject_bundle(cfg, "QUJD"), 0);
    json_object_set_new(cfg, "webhooks", json_string("x"));
    CHECK_EQ_INT(kt_certs_inject_bundle(cfg, "QUJD"), 0);
    json_decref(cfg);
}

static void test_namespace(void)
{
    char path[] = "/tmp/kt-ns-XXXXXX";
    int fd = mkstemp(path);
    char *ns;

    CHECK(fd >= 0);
    CHECK(write(fd, "team-a\n", 7) == 7);
    close(fd);
    ns = kt_certs_pod_namespace(path);
    CHECK_EQ_STR(ns, "team-a");
    free(ns);
    fd = open(path, O_WRONLY | O_TRUNC);
    close(fd);
    ns = kt_certs_pod_namespace(path); /* empty file: the default */
    CHECK_EQ_STR(ns, KT_CERTS_DEFAULT_NAMESPACE);
    free(ns);
    unlink(path);
    ns = kt_certs_pod_namespace(path); /* missing file: the default */
    CHECK_EQ_STR(ns, KT_CERTS_DEFAULT_NAMESPACE);
    free(ns);
}

int main(void)
{
    struct kt_certs a = {0}, b = {0};
    struct kt_err err = {0};

    kt_mem_init();
    CHECK_EQ_INT(kt_certs_generate(NULL, T0, &a, &err), 0);
    CHECK_EQ_INT(kt_certs_generate(NULL, T0 - 9 * 365 * DAY, &b, &err), 0);
    test_bundle(&a, &b);
    test_secret_roundtrip(&a, &b);
    test_inject();
    test_namespace();
    kt_certs_release(&a);
    kt_certs_release(&b);
    return test_report();
}
