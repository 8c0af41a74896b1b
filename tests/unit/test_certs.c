/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_certs.c - certs/: docs/internals/upstream.md#certificates names and validity, the
 * rotation decision at its boundaries, the folder layout, and an OpenSSL cross-check when `openssl`
 * is installed.
 *
 * Every time is a fixed instant passed in (T0); OpenSSL is told the same instant with
 * -attime, so nothing depends on the clock. */
#include "tests/test.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "certs/certs.h"
#include "common/crypto/crypto.h"
#include "common/base/mem.h"
#include "common/base/str.h"

#define T0 1800000000LL /* 2027-01-15T08:00:00Z */
#define DAY (24LL * 60 * 60)
#define SERVER_NAME "kubeflow-trainer-controller-manager.kubeflow-system.svc"

static struct kt_crypto_cert *cert_of(const char *pem)
{
    struct kt_err err = {0};
    struct kt_crypto_cert *c = pem ? kt_crypto_cert_from_pem(pem, strlen(pem), &err) : NULL;

    CHECK(c != NULL);
    return c;
}

static void check_sans(const char *pem, const char *const *want, size_t n)
{
    struct kt_crypto_cert *c = cert_of(pem);
    struct kt_strv sans;

    kt_strv_init(&sans);
    if (c) {
        kt_crypto_cert_sans(c, &sans);
    }
    CHECK_EQ_INT(sans.len, n);
    for (size_t i = 0; i < n && i < sans.len; i++) {
        CHECK_EQ_STR(sans.items[i], want[i]);
    }
    kt_strv_release(&sans);
    kt_crypto_cert_free(c);
}

static void check_key_matches(const char *key_pem, const char *crt_pem)
{
    struct kt_err err = {0};
    struct kt_crypto_key *k = kt_crypto_key_from_pem(key_pem, strlen(key_pem), &err);
    struct kt_crypto_cert *c = cert_of(crt_pem);

    CHECK(strncmp(key_pem, "-----BEGIN RSA PRIVATE KEY-----\n", 32) == 0);
    CHECK(k && c && kt_crypto_key_matches_cert(k, c));
    kt_crypto_key_free(k);
    kt_crypto_cert_free(c);
}

static void test_generate_defaults(const struct kt_certs *c)
{
    static const char *const ca_sans[] = {"DNS:kubeflow-trainer-ca"};
    static const char *const tls_sans[] = {"DNS:" SERVER_NAME};
    struct kt_crypto_cert *ca = cert_of(c->ca_crt);
    struct kt_crypto_cert *tls = cert_of(c->tls_crt);
    struct kt_err err = {0};
    char *s;

    if (!ca || !tls) {
        goto out;
    }
    s = kt_crypto_cert_subject(ca);
    CHECK_EQ_STR(s, "CN=kubeflow-trainer-ca,O=kubeflow-trainer");
    free(s);
    s = kt_crypto_cert_subject(tls);
    CHECK_EQ_STR(s, "CN=" SERVER_NAME);
    free(s);
    CHECK(kt_crypto_cert_is_ca(ca));
    CHECK(!kt_crypto_cert_is_ca(tls));
    CHECK(kt_crypto_cert_has_server_auth(tls));
    CHECK_EQ_INT(kt_crypto_cert_not_before(ca), T0 - 3600);
    CHECK_EQ_INT(kt_crypto_cert_not_after(ca), T0 + 3650 * DAY);
    CHECK_EQ_INT(kt_crypto_cert_not_before(tls), T0 - 3600);
    CHECK_EQ_INT(kt_crypto_cert_not_after(tls), T0 + 365 * DAY);
    CHECK_OK(kt_crypto_cert_verify(tls, ca, SERVER_NAME, T0, &err));
    CHECK_OK(kt_crypto_cert_verify(ca, ca, "kubeflow-trainer-ca", T0, &err));
    check_sans(c->ca_crt, ca_sans, 1);
    check_sans(c->tls_crt, tls_sans, 1);
    check_key_matches(c->ca_key, c->ca_crt);
    check_key_matches(c->tls_key, c->tls_crt);
out:
    kt_crypto_cert_free(ca);
    kt_crypto_cert_free(tls);
}

static void test_generate_options(void)
{
    static const char *const extra[] = {"IP:127.0.0.1", "localhost", "DNS:kt.local", "::1"};
    static const char *const want[] = {"DNS:hook.team.svc", "DNS:localhost", "DNS:kt.local",
                                       "IP:127.0.0.1", "IP:::1"};
    static const char *const bad_ip[] = {"IP:nope"};
    static const char *const bad_dns[] = {"bad name!"};
    struct kt_certs_opts o = {"hook", "team", extra, 4};
    struct kt_certs c = {0};
    struct kt_err err = {0};
    char *name = kt_certs_server_name(&o);

    CHECK_EQ_STR(name, "hook.team.svc");
    free(name);
    CHECK_OK(kt_certs_generate(&o, T0, &c, &err));
    check_sans(c.tls_crt, want, 5);
    CHECK_EQ_INT(kt_certs_needs_rotation(&c, &o, T0, KT_CERTS_LOOKAHEAD_S, &err), KT_CERTS_VALID);
    kt_certs_release(&c);

    o.extra_sans = bad_ip;
    o.n_extra_sans = 1;
    CHECK_EQ_INT(kt_certs_generate(&o, T0, &c, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK_CONTAINS(err.msg, "IP:nope");
    CHECK(c.ca_crt == NULL && c.tls_crt == NULL);
    o.extra_sans = bad_dns;
    CHECK_EQ_INT(kt_certs_generate(&o, T0, &c, &err), -1);
    CHECK_CONTAINS(err.msg, "not a DNS name");
}

static enum kt_certs_verdict verdict_at(const struct kt_certs *c, int64_t now, struct kt_err *why)
{
    return kt_certs_needs_rotation(c, NULL, now, KT_CERTS_LOOKAHEAD_S, why);
}

static void test_rotation_boundaries(const struct kt_certs *c)
{
    struct kt_err why = {0};

    CHECK_EQ_INT(verdict_at(c, T0, &why), KT_CERTS_VALID);
    /* Serving cert: notAfter T0+365d must be >= now+90d. */
    CHECK_EQ_INT(verdict_at(c, T0 + 275 * DAY, &why), KT_CERTS_VALID);
    CHECK_EQ_INT(verdict_at(c, T0 + 275 * DAY + 1, &why), KT_CERTS_RENEW_SERVER);
    CHECK_CONTAINS(why.msg, "tls.crt: not valid for the whole lookahead");
    /* Expired serving cert, CA still fine. */
    CHECK_EQ_INT(verdict_at(c, T0 + 366 * DAY, &why), KT_CERTS_RENEW_SERVER);
    /* CA: notAfter T0+3650d must be >= now+90d. */
    CHECK_EQ_INT(verdict_at(c, T0 + 3560 * DAY, &why), KT_CERTS_RENEW_SERVER);
    CHECK_EQ_INT(verdict_at(c, T0 + 3560 * DAY + 1, &why), KT_CERTS_RENEW_ALL);
    CHECK_CONTAINS(why.msg, "ca.crt");
    /* Before notBefore (a clock far behind): not usable now. */
    CHECK_EQ_INT(verdict_at(c, T0 - 3601, &why), KT_CERTS_RENEW_ALL);
    CHECK_EQ_INT(kt_certs_needs_rotation(c, NULL, T0, 0, NULL), KT_CERTS_VALID);
}

static void test_rotation_mismatches(const struct kt_certs *a, const struct kt_certs *b)
{
    static const char *const extra[] = {"IP:127.0.0.1"};
    struct kt_certs_opts other_ns = {NULL, "elsewhere", NULL, 0};
    struct kt_certs_opts more_sans = {NULL, NULL, extra, 1};
    struct kt_certs mix;
    struct kt_certs none = {0};
    struct kt_err why = {0};

    CHECK_EQ_INT(kt_certs_needs_rotation(a, &other_ns, T0, KT_CERTS_LOOKAHEAD_S, &why),
                 KT_CERTS_RENEW_SERVER);
    CHECK_CONTAINS(why.msg, "not valid for kubeflow-trainer-controller-manager.elsewhere.svc");
    CHECK_EQ_INT(kt_certs_needs_rotation(a, &more_sans, T0, KT_CERTS_LOOKAHEAD_S, &why),
                 KT_CERTS_RENEW_SERVER);
    CHECK_CONTAINS(why.msg, "lacks IP SAN 127.0.0.1");
    mix = (struct kt_certs){a->ca_crt, a->ca_key, b->tls_crt, b->tls_key};
    CHECK_EQ_INT(verdict_at(&mix, T0, &why), KT_CERTS_RENEW_SERVER);
    CHECK_CONTAINS(why.msg, "does not chain");
    mix = (struct kt_certs){a->ca_crt, a->ca_key, a->tls_crt, b->tls_key};
    CHECK_EQ_INT(verdict_at(&mix, T0, &why), KT_CERTS_RENEW_SERVER);
    CHECK_CONTAINS(why.msg, "key does not match");
    mix = (struct kt_certs){a->ca_crt, b->ca_key, a->tls_crt, a->tls_key};
    CHECK_EQ_INT(verdict_at(&mix, T0, &why), KT_CERTS_RENEW_ALL);
    CHECK_CONTAINS(why.msg, "CA: the key does not match");
    mix = (struct kt_certs){a->tls_crt, a->tls_key, a->tls_crt, a->tls_key};
    CHECK_EQ_INT(verdict_at(&mix, T0, &why), KT_CERTS_RENEW_ALL);
    CHECK_CONTAINS(why.msg, "not a CA");
    mix = (struct kt_certs){(char *)(uintptr_t) "junk", a->ca_key, a->tls_crt, a->tls_key};
    CHECK_EQ_INT(verdict_at(&mix, T0, &why), KT_CERTS_RENEW_ALL);
    mix = (struct kt_certs){a->ca_crt, a->ca_key, NULL, a->tls_key};
    CHECK_EQ_INT(verdict_at(&mix, T0, &why), KT_CERTS_RENEW_SERVER);
    CHECK_EQ_INT(verdict_at(&none, T0, &why), KT_CERTS_RENEW_ALL);
    CHECK_EQ_INT(why.code, KT_ENOENT);
}

static void test_rotate(void)
{
    struct kt_certs c = {0};
    struct kt_err err = {0};
    enum kt_certs_verdict done = KT_CERTS_VALID;
    char *ca_before;
    char *tls_before;

    CHECK_OK(kt_certs_rotate(NULL, T0, KT_CERTS_LOOKAHEAD_S, &c, &done, &err));
    CHECK_EQ_INT(done, KT_CERTS_RENEW_ALL);
    CHECK_OK(kt_certs_rotate(NULL, T0, KT_CERTS_LOOKAHEAD_S, &c, &done, &err));
    CHECK_EQ_INT(done, KT_CERTS_VALID);
    ca_before = kt_xstrdup(c.ca_crt);
    tls_before = kt_xstrdup(c.tls_crt);
    CHECK_OK(kt_certs_rotate(NULL, T0 + 300 * DAY, KT_CERTS_LOOKAHEAD_S, &c, &done, &err));
    CHECK_EQ_INT(done, KT_CERTS_RENEW_SERVER);
    CHECK_EQ_STR(c.ca_crt, ca_before);
    CHECK(strcmp(c.tls_crt, tls_before) != 0);
    CHECK_EQ_INT(verdict_at(&c, T0 + 300 * DAY, NULL), KT_CERTS_VALID);
    CHECK_OK(kt_certs_rotate(NULL, T0 + 3600 * DAY, KT_CERTS_LOOKAHEAD_S, &c, &done, &err));
    CHECK_EQ_INT(done, KT_CERTS_RENEW_ALL);
    CHECK(strcmp(c.ca_crt, ca_before) != 0);
    free(ca_before);
    free(tls_before);

    /* Without the CA key (external certificates) the serving cert cannot be renewed. */
    free(c.ca_key);
    c.ca_key = NULL;
    tls_before = c.tls_crt;
    CHECK_EQ_INT(kt_certs_renew_server(NULL, T0, &c, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK(c.tls_crt == tls_before);
    kt_certs_release(&c);
    kt_certs_release(&c);
    kt_certs_release(NULL);
}

static void test_ca_bundle(const struct kt_certs *c)
{
    struct kt_certs none = {0};
    struct kt_err err = {0};
    char *b = kt_certs_ca_bundle(c);
    uint8_t *pem = NULL;
    size_t n = 0;

    CHECK(b && strchr(b, '\n') == NULL);
    CHECK_OK(kt_crypto_base64_decode(b, strlen(b), &pem, &n, &err));
    CHECK_EQ_STR((const char *)pem, c->ca_crt);
    free(pem);
    free(b);
    CHECK(kt_certs_ca_bundle(&none) == NULL);
}

static int mode_of(const char *dir, const char *name)
{
    char *p = kt_xasprintf("%s/%s", dir, name);
    struct stat st;
    int m = stat(p, &st) == 0 ? (int)(st.st_mode & 0777) : -1;

    free(p);
    return m;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d) {
        return -1;
    }
    for (;;) {
        e = readdir(d);
        if (!e) {
            break;
        }
        if (e->d_name[0] != '.') {
            n++;
        }
    }
    closedir(d);
    return n;
}

static void rm_dir(const char *dir)
{
    static const char *const names[] = {"ca.crt", "ca.key", "tls.crt", "tls.key", "file"};

    for (size_t i = 0; i < KT_ARRAY_SIZE(names); i++) {
        char *p = kt_xasprintf("%s/%s", dir, names[i]);
        unlink(p);
        free(p);
    }
    rmdir(dir);
}

static void write_text(const char *dir, const char *name, const char *text, size_t n)
{
    char *p = kt_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(p, "w");

    CHECK(f != NULL);
    if (f) {
        CHECK_EQ_INT(fwrite(text, 1, n, f), n);
        fclose(f);
    }
    free(p);
}

static void test_dir_roundtrip(const struct kt_certs *c, const char *dir)
{
    struct kt_certs back = {0};
    struct kt_err err = {0};

    CHECK_OK(kt_certs_write_dir(c, dir, &err));
    CHECK_OK(kt_certs_write_dir(c, dir, &err)); /* replacing works too */
    CHECK_EQ_INT(mode_of(dir, "ca.crt"), 0644);
    CHECK_EQ_INT(mode_of(dir, "tls.crt"), 0644);
    CHECK_EQ_INT(mode_of(dir, "ca.key"), 0600);
    CHECK_EQ_INT(mode_of(dir, "tls.key"), 0600);
    CHECK_EQ_INT(entries(dir), 4); /* no temporary files left behind */
    CHECK_OK(kt_certs_load_dir(dir, &back, &err));
    CHECK_EQ_STR(back.ca_crt, c->ca_crt);
    CHECK_EQ_STR(back.ca_key, c->ca_key);
    CHECK_EQ_STR(back.tls_crt, c->tls_crt);
    CHECK_EQ_STR(back.tls_key, c->tls_key);
    CHECK_EQ_INT(verdict_at(&back, T0, NULL), KT_CERTS_VALID);
    kt_certs_release(&back);
}

static void test_dir_errors(const struct kt_certs *c, const char *dir)
{
    struct kt_certs back = {0};
    struct kt_certs partial = {c->ca_crt, NULL, c->tls_crt, NULL};
    struct kt_err err = {0};
    char *p = kt_xasprintf("%s/ca.key", dir);
    char *file = kt_xasprintf("%s/file", dir);
    char *big = kt_xmalloc(70000);

    /* External certificates: no ca.key is fine when loading. */
    unlink(p);
    CHECK_OK(kt_certs_load_dir(dir, &back, &err));
    CHECK(back.ca_key == NULL && back.tls_key != NULL);
    CHECK_EQ_INT(verdict_at(&back, T0, &err), KT_CERTS_RENEW_ALL);
    kt_certs_release(&back);
    CHECK_EQ_INT(kt_certs_write_dir(&partial, dir, &err), -1);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    free(p);
    p = kt_xasprintf("%s/tls.crt", dir);
    unlink(p);
    CHECK_EQ_INT(kt_certs_load_dir(dir, &back, &err), -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    CHECK(back.ca_crt == NULL);
    memset(big, 'A', 70000);
    write_text(dir, "tls.crt", big, 70000);
    CHECK_EQ_INT(kt_certs_load_dir(dir, &back, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK_EQ_INT(kt_certs_load_dir("/nonexistent-kt-dir", &back, &err), -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    /* Unwritable targets: a missing folder and a regular file (both fail even as root). */
    CHECK_EQ_INT(kt_certs_write_dir(c, "/nonexistent-kt-dir", &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
    write_text(dir, "file", "x", 1);
    CHECK_EQ_INT(kt_certs_write_dir(c, file, &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
    if (geteuid() != 0) {
        CHECK_OK(chmod(dir, 0500));
        CHECK_EQ_INT(kt_certs_write_dir(c, dir, &err), -1);
        CHECK_EQ_INT(err.code, KT_EIO);
        CHECK_OK(chmod(dir, 0700));
    }
    free(big);
    free(file);
    free(p);
}

/* Run a shell command and return its first output line (empty on failure). */
static void first_line(const char *cmd, char *out, size_t n)
{
    FILE *p = popen(cmd, "r");

    out[0] = '\0';
    if (!p) {
        return;
    }
    if (!fgets(out, (int)n, p)) {
        out[0] = '\0';
    }
    pclose(p);
}

static bool output_contains(const char *cmd, const char *needle)
{
    FILE *p = popen(cmd, "r");
    char line[1024];
    bool found = false;

    if (!p) {
        return false;
    }
    while (fgets(line, sizeof(line), p)) {
        if (strstr(line, needle)) {
            found = true;
        }
    }
    pclose(p);
    return found;
}

static void test_openssl(const char *dir)
{
    char cmd[512];
    char line[512];

    if (system("command -v openssl >/dev/null 2>&1") != 0) {
        printf("openssl not installed; skipping the OpenSSL cross-check\n");
        return;
    }
    snprintf(cmd, sizeof(cmd), "cd %s && openssl verify -attime %lld -CAfile ca.crt tls.crt 2>&1",
             dir, (long long)T0);
    first_line(cmd, line, sizeof(line));
    CHECK_EQ_STR(line, "tls.crt: OK\n");
    snprintf(cmd, sizeof(cmd),
             "cd %s && openssl verify -attime %lld -CAfile ca.crt tls.crt 2>&1 | tail -n 1", dir,
             (long long)(T0 + 366 * DAY));
    first_line(cmd, line, sizeof(line));
    CHECK_CONTAINS(line, "error");
    snprintf(cmd, sizeof(cmd), "openssl x509 -noout -subject -in %s/ca.crt", dir);
    first_line(cmd, line, sizeof(line));
    CHECK_EQ_STR(line, "subject=O = kubeflow-trainer, CN = kubeflow-trainer-ca\n");
    snprintf(cmd, sizeof(cmd), "openssl x509 -noout -text -in %s/ca.crt", dir);
    CHECK(output_contains(cmd, "CA:TRUE"));
    CHECK(output_contains(cmd, "Certificate Sign"));
    CHECK(output_contains(cmd, "DNS:kubeflow-trainer-ca"));
    CHECK(output_contains(cmd, "sha256WithRSAEncryption"));
    snprintf(cmd, sizeof(cmd), "openssl x509 -noout -text -in %s/tls.crt", dir);
    CHECK(output_contains(cmd, "TLS Web Server Authentication"));
    CHECK(output_contains(cmd, "CA:FALSE"));
    CHECK(output_contains(cmd, "DNS:" SERVER_NAME));
    CHECK(output_contains(cmd, "Public-Key: (2048 bit)"));
    snprintf(cmd, sizeof(cmd), "openssl rsa -check -noout -in %s/tls.key 2>&1", dir);
    first_line(cmd, line, sizeof(line));
    CHECK_EQ_STR(line, "RSA key ok\n");
}

int main(void)
{
    struct kt_certs a = {0};
    struct kt_certs b = {0};
    struct kt_err err = {0};
    char dir[] = "/tmp/kt-test-certs-XXXXXX";

    kt_mem_init();
    CHECK_OK(kt_certs_generate(NULL, T0, &a, &err));
    CHECK_OK(kt_certs_generate(NULL, T0, &b, &err));
    if (!a.ca_crt || !b.ca_crt) {
        fprintf(stderr, "generate: %s\n", err.msg);
        return test_report();
    }
    test_generate_defaults(&a);
    test_generate_options();
    test_rotation_boundaries(&a);
    test_rotation_mismatches(&a, &b);
    test_rotate();
    test_ca_bundle(&a);
    CHECK(mkdtemp(dir) != NULL);
    test_dir_roundtrip(&a, dir);
    test_openssl(dir);
    test_dir_errors(&a, dir);
    rm_dir(dir);
    kt_certs_release(&a);
    kt_certs_release(&b);
    return test_report();
}
