/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_tlsopts.c - the Configuration's tls options as a GnuTLS priority string
 * (common/net/tlsopts.c), and end to end: an HTTPS server built with that string refuses the
 * TLS versions and TLS 1.2 ciphers the Configuration excludes. */
#include "tests/test.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "certs/certs.h"
#include "common/config/config.h"
#include "common/net/httpd.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/net/tlsopts.h"

#define HEAD "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n"
#define SAFETY_S 20 /* socket timeouts so a bug cannot hang the test; never asserted */

/* A default config with the given tls values (ciphers: NULL-terminated). */
static void cfg_with(struct kt_config *cfg, const char *min, const char *const *ciphers)
{
    kt_config_default(cfg);
    free(cfg->tls.min_version);
    cfg->tls.min_version = kt_xstrdup(min);
    for (size_t i = 0; ciphers && ciphers[i]; i++) {
        kt_strv_push(&cfg->tls.cipher_suites, ciphers[i]);
    }
}

/* The priority for (min, ciphers); *n_warn gets the warning count, *warn0 a copy of the first. */
static char *prio_of(const char *min, const char *const *ciphers, size_t *n_warn, char **warn0)
{
    struct kt_config cfg;
    struct kt_strv w;
    char *p;

    cfg_with(&cfg, min, ciphers);
    kt_strv_init(&w);
    p = kt_tls_priority(&cfg.tls, &w);
    *n_warn = w.len;
    *warn0 = kt_xstrdup(w.len ? w.items[0] : "");
    kt_strv_release(&w);
    kt_config_release(&cfg);
    return p;
}

#define BASE12 "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:"
#define TAIL_RSA ":-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-RSA:-GROUP-DH-ALL:%SERVER_PRECEDENCE"

static void test_defaults(void)
{
    size_t n;
    char *w0;
    char *p = prio_of("", NULL, &n, &w0);

    CHECK_EQ_STR(p, KT_HTTPD_TLS_PRIORITIES); /* empty config = today's string */
    CHECK_EQ_INT(n, 0);
    free(p);
    free(w0);
    p = prio_of("1.2", NULL, &n, &w0); /* explicit 1.2 is the floor itself: no warning */
    CHECK_EQ_STR(p, KT_HTTPD_TLS_PRIORITIES);
    CHECK_EQ_INT(n, 0);
    free(p);
    free(w0);
}

static void test_min_version(void)
{
    static const char *const old[] = {"1.0", "1.1"};
    size_t n;
    char *w0;
    char *p = prio_of("1.3", NULL, &n, &w0);

    CHECK_EQ_STR(p, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
                    "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-RSA:+ECDHE-ECDSA:"
                    "-GROUP-DH-ALL:%SERVER_PRECEDENCE");
    CHECK_EQ_INT(n, 0);
    free(p);
    free(w0);
    for (size_t i = 0; i < 2; i++) { /* below our floor: 1.2 with a warning */
        p = prio_of(old[i], NULL, &n, &w0);
        CHECK_EQ_STR(p, KT_HTTPD_TLS_PRIORITIES);
        CHECK_EQ_INT(n, 1);
        CHECK_CONTAINS(w0, "tls.minVersion: TLS 1.2 is the lowest version served");
        CHECK_CONTAINS(w0, old[i]);
        free(p);
        free(w0);
    }
    p = prio_of("1.9", NULL, &n, &w0); /* not via the loader: still a warning */
    CHECK_EQ_STR(p, KT_HTTPD_TLS_PRIORITIES);
    CHECK_EQ_INT(n, 1);
    CHECK_CONTAINS(w0, "unknown TLS version");
    free(p);
    free(w0);
}

static void test_each_suite(void)
{
    static const struct {
        const char *name, *cipher, *kx;
    } cases[] = {
        {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "AES-128-GCM", "ECDHE-RSA"},
        {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "AES-256-GCM", "ECDHE-RSA"},
        {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305", "ECDHE-RSA"},
        {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "AES-128-GCM", "ECDHE-ECDSA"},
        {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "AES-256-GCM", "ECDHE-ECDSA"},
        {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305", "ECDHE-ECDSA"},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(cases); i++) {
        const char *const list[] = {cases[i].name, NULL};
        size_t n;
        char *w0;
        char *p = prio_of("", list, &n, &w0);
        char *want =
            kt_xasprintf(BASE12 "+%s:-MAC-ALL:+AEAD:-KX-ALL:+%s:-GROUP-DH-ALL:%%SERVER_PRECEDENCE",
                         cases[i].cipher, cases[i].kx);
        CHECK_EQ_STR(p, want);
        CHECK_EQ_INT(n, 0);
        free(want);
        free(p);
        free(w0);
    }
}

static void test_suite_lists(void)
{
    static const char *const two[] = {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                                      "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                                      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", NULL};
    static const char *const mixed[] = {"TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_NOPE",
                                        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                                        "TLS_AES_128_GCM_SHA256", NULL};
    size_t n;
    char *w0;
    char *p = prio_of("", two, &n, &w0);

    /* file order, each cipher and key exchange once */
    CHECK_EQ_STR(p, BASE12 "+AES-256-GCM:+AES-128-GCM:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-RSA:"
                           "+ECDHE-ECDSA:-GROUP-DH-ALL:%SERVER_PRECEDENCE");
    CHECK_EQ_INT(n, 0);
    free(p);
    free(w0);
    p = prio_of("", mixed, &n, &w0); /* refused, unknown and TLS 1.3 names are left out */
    CHECK_EQ_STR(p, BASE12 "+CHACHA20-POLY1305" TAIL_RSA);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_STR(w0, "tls.cipherSuites: insecure cipher suite refused: "
                     "\"TLS_RSA_WITH_AES_128_GCM_SHA256\"");
    free(p);
    free(w0);
}

static void test_refused_only(void)
{
    static const char *const bad[] = {
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        "TLS_ECDHE_RSA_WITH_RC4_128_SHA", "TLS_RSA_WITH_AES_256_CBC_SHA", NULL};
    static const char *const one[] = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", NULL};
    size_t n;
    char *w0;
    char *p = prio_of("", bad, &n, &w0);

    /* nothing usable: the defaults, never the insecure ones */
    CHECK_EQ_STR(p, KT_HTTPD_TLS_PRIORITIES);
    CHECK_EQ_INT(n, 5);
    CHECK_CONTAINS(w0, "insecure cipher suite refused");
    CHECK(strstr(p, "CBC") == NULL && strstr(p, "3DES") == NULL && strstr(p, "ARCFOUR") == NULL);
    free(p);
    free(w0);
    p = prio_of("1.3", one, &n, &w0); /* Go ignores the list for TLS 1.3; so do we */
    CHECK_CONTAINS(p, ":+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:");
    CHECK(strstr(p, "VERS-TLS1.2") == NULL);
    CHECK_EQ_INT(n, 1);
    CHECK_CONTAINS(w0, "tls.cipherSuites: no effect with tls.minVersion \"1.3\"");
    free(p);
    free(w0);
}

static void test_next_protos(void)
{
    struct kt_config cfg;
    struct kt_strv w;
    char *p;

    kt_config_default(&cfg);
    kt_strv_push(&cfg.tls.next_protos, "h2");
    kt_strv_push(&cfg.tls.next_protos, "spdy/3");
    kt_strv_init(&w);
    p = kt_tls_priority(&cfg.tls, &w);
    CHECK_EQ_STR(p, KT_HTTPD_TLS_PRIORITIES);
    CHECK_EQ_INT(w.len, 2);
    if (w.len == 2) {
        CHECK_EQ_STR(w.items[0],
                     "tls.nextProtos: HTTP/2 is not supported, serving http/1.1 only: \"h2\"");
        CHECK_CONTAINS(w.items[1], "unsupported protocol");
    }
    free(p);
    kt_strv_release(&w);
    kt_config_release(&cfg);
}

/* Through the loader: a name it drops is warned about once, not twice. */
static void test_loader_no_double_warning(void)
{
    static const char yaml[] = HEAD "tls:\n  minVersion: \"1.3\"\n  cipherSuites:\n"
                                    "  - TLS_NOPE\n  nextProtos:\n  - http/1.1\n";
    struct kt_config cfg = {0};
    struct kt_err err = {0};
    char *p;

    CHECK_EQ_INT(kt_config_load_data("cfg.yaml", yaml, strlen(yaml), &cfg, &err), 0);
    CHECK_EQ_INT(cfg.warnings.len, 1);
    size_t before = cfg.warnings.len;
    p = kt_tls_priority(&cfg.tls, &cfg.warnings);
    CHECK_EQ_INT(cfg.warnings.len, before); /* the list is now empty: nothing more to say */
    CHECK(strstr(p, "+VERS-TLS1.3:-CIPHER-ALL") != NULL);
    free(p);
    kt_config_release(&cfg);
}

/* ---- end to end ---- */

static char dir[64], cert_path[128], key_path[128];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    KT_ASSERT(f != NULL);
    fputs(text, f);
    KT_ASSERT(fclose(f) == 0);
}

/* Handshake with client priority prio. 0 on success; *ver and *cipher get what was agreed. */
static int handshake(uint16_t port, const char *prio, int *ver, int *cipher)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct timeval tv = {SAFETY_S, 0};
    gnutls_certificate_credentials_t cred;
    gnutls_session_t s;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    KT_ASSERT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    gnutls_certificate_allocate_credentials(&cred);
    gnutls_init(&s, GNUTLS_CLIENT);
    KT_ASSERT(gnutls_priority_set_direct(s, prio, NULL) == 0);
    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_transport_set_int(s, fd);
    do {
        rc = gnutls_handshake(s);
    } while (rc < 0 && !gnutls_error_is_fatal(rc));
    *ver = rc < 0 ? -1 : (int)gnutls_protocol_get_version(s);
    *cipher = rc < 0 ? -1 : (int)gnutls_cipher_get(s);
    if (rc == 0) {
        gnutls_bye(s, GNUTLS_SHUT_WR);
    }
    gnutls_deinit(s);
    gnutls_certificate_free_credentials(cred);
    close(fd);
    return rc < 0 ? -1 : 0;
}

static struct kt_httpd *serve(const char *min, const char *const *ciphers)
{
    struct kt_config cfg;
    struct kt_strv w;
    struct kt_err err = {0};
    char *prio;

    cfg_with(&cfg, min, ciphers);
    kt_strv_init(&w);
    prio = kt_tls_priority(&cfg.tls, &w);
    struct kt_httpd_opts o = {.name = "tlsopts",
                              .listen = "127.0.0.1:0",
                              .cert_file = cert_path,
                              .key_file = key_path,
                              .timeout_s = 2,
                              .https_priority = prio};
    struct kt_httpd *h = kt_httpd_new(&o, &err);
    KT_ASSERT(h != NULL);
    KT_ASSERT(kt_httpd_start(h, &err) == 0);
    free(prio);
    kt_strv_release(&w);
    kt_config_release(&cfg);
    return h;
}

#define C12 "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:"

static void test_tls13_only(void)
{
    struct kt_httpd *h = serve("1.3", NULL);
    uint16_t port = kt_httpd_port(h);
    int ver, cipher;

    CHECK_EQ_INT(handshake(port, "NORMAL:-VERS-ALL:+VERS-TLS1.2", &ver, &cipher), -1);
    CHECK_EQ_INT(handshake(port, "NORMAL", &ver, &cipher), 0);
    CHECK_EQ_INT(ver, GNUTLS_TLS1_3);
    kt_httpd_free(h);
    h = serve("1.0", NULL); /* below the floor: 1.2 and 1.3 served, 1.1 refused */
    port = kt_httpd_port(h);
    CHECK_EQ_INT(handshake(port, "NORMAL:-VERS-ALL:+VERS-TLS1.2", &ver, &cipher), 0);
    CHECK_EQ_INT(ver, GNUTLS_TLS1_2);
    CHECK_EQ_INT(handshake(port, "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0", &ver, &cipher), -1);
    /* no cipherSuites: every default TLS 1.2 cipher is served (the control for the next test) */
    CHECK_EQ_INT(handshake(port, C12 "+AES-128-GCM", &ver, &cipher), 0);
    CHECK_EQ_INT(cipher, GNUTLS_CIPHER_AES_128_GCM);
    CHECK_EQ_INT(handshake(port, C12 "+CHACHA20-POLY1305", &ver, &cipher), 0);
    CHECK_EQ_INT(cipher, GNUTLS_CIPHER_CHACHA20_POLY1305);
    kt_httpd_free(h);
}

static void test_one_cipher(void)
{
    static const char *const one[] = {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", NULL};
    struct kt_httpd *h = serve("", one);
    uint16_t port = kt_httpd_port(h);
    int ver, cipher;

    CHECK_EQ_INT(handshake(port, C12 "+AES-256-GCM", &ver, &cipher), 0);
    CHECK_EQ_INT(ver, GNUTLS_TLS1_2);
    CHECK_EQ_INT(cipher, GNUTLS_CIPHER_AES_256_GCM);
    CHECK_EQ_INT(handshake(port, C12 "+AES-128-GCM", &ver, &cipher), -1);
    CHECK_EQ_INT(handshake(port, C12 "+CHACHA20-POLY1305", &ver, &cipher), -1);
    CHECK_EQ_INT(handshake(port, C12 "+AES-128-CBC:+AES-256-CBC", &ver, &cipher), -1);
    CHECK_EQ_INT(handshake(port, "NORMAL", &ver, &cipher), 0); /* TLS 1.3 still works */
    CHECK_EQ_INT(ver, GNUTLS_TLS1_3);
    kt_httpd_free(h);
}

static void test_bad_priority(void)
{
    struct kt_err err = {0};
    struct kt_httpd_opts o = {.listen = "127.0.0.1:0",
                              .cert_file = cert_path,
                              .key_file = key_path,
                              .https_priority = "NORMAL:+NO-SUCH-THING"};

    CHECK(kt_httpd_new(&o, &err) == NULL);
    CHECK_EQ_INT(err.code, KT_EINVAL);
    CHECK_CONTAINS(err.msg, "TLS priority");
}

static void end_to_end(void)
{
    static const char *const sans[] = {"IP:127.0.0.1"};
    struct kt_certs_opts opts = {.extra_sans = sans, .n_extra_sans = 1};
    struct kt_certs certs = {0};
    struct kt_err err = {0};

    snprintf(dir, sizeof(dir), "/tmp/kt-tlsopts-XXXXXX");
    KT_ASSERT(mkdtemp(dir) != NULL);
    snprintf(cert_path, sizeof(cert_path), "%s/tls.crt", dir);
    snprintf(key_path, sizeof(key_path), "%s/tls.key", dir);
    KT_ASSERT(kt_certs_generate(&opts, (int64_t)time(NULL), &certs, &err) == 0);
    write_file(cert_path, certs.tls_crt);
    write_file(key_path, certs.tls_key);
    kt_certs_release(&certs);
    test_tls13_only();
    test_one_cipher();
    test_bad_priority();
    unlink(cert_path);
    unlink(key_path);
    rmdir(dir);
}

int main(void)
{
    kt_mem_init();
    signal(SIGPIPE, SIG_IGN);
    kt_log_set_level(KT_LOG_ERROR);
    test_defaults();
    test_min_version();
    test_each_suite();
    test_suite_lists();
    test_refused_only();
    test_next_protos();
    test_loader_no_double_warning();
    end_to_end();
    return test_report();
}
