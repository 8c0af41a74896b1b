/* SPDX-License-Identifier: Apache-2.0 */
/* common/net/tlsopts.c - the Configuration's tls options as a GnuTLS priority string. */
#include "common/net/tlsopts.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

#define VERS_12 "+VERS-TLS1.3:+VERS-TLS1.2"
#define VERS_13 "+VERS-TLS1.3"
#define DEF_CIPHERS "+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"
#define DEF_KX "+ECDHE-RSA:+ECDHE-ECDSA"

/* A TLS 1.2 suite we serve: its GnuTLS key exchange and cipher. */
struct suite {
    const char *go_name;
    const char *kx;
    const char *cipher;
};

static const struct suite SUITES[] = {
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305"},
};

/* Go names we refuse: CBC modes, static RSA key exchange (no forward secrecy), 3DES, RC4. */
static const char *const INSECURE[] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
};

static const char *const TLS13_SUITES[] = {
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
};

static bool in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, list[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* A SUITES entry by Go name, or NULL. */
static const struct suite *find_suite(const char *name)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(SUITES); i++) {
        if (strcmp(name, SUITES[i].go_name) == 0) {
            return &SUITES[i];
        }
    }
    return NULL;
}

bool kt__tls_suite_known(const char *name)
{
    return find_suite(name) || in_list(name, INSECURE, KT_ARRAY_SIZE(INSECURE)) ||
           in_list(name, TLS13_SUITES, KT_ARRAY_SIZE(TLS13_SUITES));
}

static void add_warning(struct kt_strv *warnings, const char *text, const char *value)
{
    char *msg = kt_xasprintf("%s\"%s\"", text, value);
    kt_strv_push(warnings, msg);
    free(msg);
}

/* Append "+item" to the ':'-separated list in buf unless it is already there. */
static void add_once(char *buf, size_t cap, const char *item)
{
    char tok[64];
    size_t len = strlen(buf);

    snprintf(tok, sizeof(tok), "+%s", item);
    for (const char *p = strstr(buf, tok); p; p = strstr(p + 1, tok)) {
        size_t end = (size_t)(p - buf) + strlen(tok);
        if (buf[end] == '\0' || buf[end] == ':') {
            return;
        }
    }
    snprintf(buf + len, cap - len, "%s%s", len ? ":" : "", tok);
}

/* The cipher and key exchange lists for the configured TLS 1.2 suites, with warnings for the
 * names left out. Both stay empty when no suite is usable. */
static void pick_suites(const struct kt_strv *names, char *ciphers, char *kx, size_t cap,
                        struct kt_strv *warnings)
{
    for (size_t i = 0; i < names->len; i++) {
        const char *name = names->items[i];
        const struct suite *s = find_suite(name);
        if (s) {
            add_once(ciphers, cap, s->cipher);
            add_once(kx, cap, s->kx);
        } else if (in_list(name, INSECURE, KT_ARRAY_SIZE(INSECURE))) {
            add_warning(warnings, "tls.cipherSuites: insecure cipher suite refused: ", name);
        } else if (in_list(name, TLS13_SUITES, KT_ARRAY_SIZE(TLS13_SUITES))) {
            add_warning(warnings,
                        "tls.cipherSuites: TLS 1.3 suites are always enabled and not "
                        "configurable, ignored: ",
                        name);
        } else {
            add_warning(warnings, "tls.cipherSuites: unknown cipher suite, ignored: ", name);
        }
    }
}

static const char *pick_versions(const char *min, struct kt_strv *warnings)
{
    if (strcmp(min, "1.3") == 0) {
        return VERS_13;
    }
    if (strcmp(min, "1.0") == 0 || strcmp(min, "1.1") == 0) {
        add_warning(warnings,
                    "tls.minVersion: TLS 1.2 is the lowest version served, using 1.2: ", min);
    } else if (min[0] != '\0' && strcmp(min, "1.2") != 0) {
        add_warning(warnings, "tls.minVersion: unknown TLS version, using the default: ", min);
    }
    return VERS_12;
}

static void check_protos(const struct kt_strv *protos, struct kt_strv *warnings)
{
    for (size_t i = 0; i < protos->len; i++) {
        const char *p = protos->items[i];
        if (strcmp(p, "http/1.1") == 0) {
            continue;
        }
        add_warning(warnings,
                    strcmp(p, "h2") == 0
                        ? "tls.nextProtos: HTTP/2 is not supported, serving http/1.1 only: "
                        : "tls.nextProtos: unsupported protocol, serving http/1.1 only: ",
                    p);
    }
}

char *kt_tls_priority(const struct kt_tls_options *tls, struct kt_strv *warnings)
{
    const char *min = tls->min_version ? tls->min_version : "";
    const char *vers = pick_versions(min, warnings);
    char ciphers[128] = "";
    char kx[128] = "";

    check_protos(&tls->next_protos, warnings);
    if (strcmp(vers, VERS_13) == 0 && tls->cipher_suites.len > 0) {
        /* Go ignores CipherSuites for TLS 1.3; so do we, but say so. */
        add_warning(warnings, "tls.cipherSuites: no effect with tls.minVersion ", min);
    } else {
        pick_suites(&tls->cipher_suites, ciphers, kx, sizeof(kx), warnings);
        if (tls->cipher_suites.len > 0 && ciphers[0] == '\0') {
            kt_strv_push(warnings, "tls.cipherSuites: no usable cipher suite, using the defaults");
        }
    }
    return kt_xasprintf("NORMAL:-VERS-ALL:%s:-CIPHER-ALL:%s:-MAC-ALL:+AEAD:-KX-ALL:%s:"
                        "-GROUP-DH-ALL:%%SERVER_PRECEDENCE",
                        vers, ciphers[0] ? ciphers : DEF_CIPHERS, kx[0] ? kx : DEF_KX);
}
