/* SPDX-License-Identifier: Apache-2.0 */
/* common/net/tlsopts.h - the Configuration's tls options
 * (docs/internals/upstream.md#configuration-file) as a GnuTLS priority string.
 *
 * Upstream applies tls.minVersion, tls.cipherSuites and tls.nextProtos through Go's
 * crypto/tls; the HTTPS servers here use GnuTLS via libmicrohttpd, so the options become a
 * priority string for kt_httpd_opts.https_priority. Our floor is TLS 1.2 with ECDHE key
 * exchange and AEAD ciphers only: what the Configuration cannot get within that floor is a
 * warning, never an error. */
#ifndef KT_TLSOPTS_H
#define KT_TLSOPTS_H

#include <stdbool.h>

#include "common/base/str.h"

/* The Configuration's tls block (docs/internals/upstream.md#configuration-file); struct kt_config
 * (config/config.h) embeds it as cfg.tls. Strings and lists are owned by the struct that embeds it.
 */
struct kt_tls_options {
    char *min_version;            /* owned; "" = library default, else "1.0".."1.3" */
    struct kt_strv cipher_suites; /* Go names we know, in file order */
    struct kt_strv next_protos;   /* ["http/1.1"] */
};

/* The GnuTLS priority string for tls (a Configuration's cfg.tls). With the defaults (minVersion "",
 * no cipherSuites) it equals KT_HTTPD_TLS_PRIORITIES. Appends one "tls.<field>: ..." text to
 * warnings per value that is not applied as written: minVersion 1.0/1.1 (raised to 1.2),
 * cipher suites refused as insecure (CBC, static RSA key exchange, 3DES, RC4), TLS 1.3
 * suite names (not configurable, like Go), names unknown here, suites that have no effect
 * with minVersion 1.3, and nextProtos other than "http/1.1". Names the loader already
 * dropped with a warning never reach this function. Caller owns the result (free());
 * does not retain tls. */
char *kt_tls_priority(const struct kt_tls_options *tls, struct kt_strv *warnings);

/* Internal to common/ (config.c's loader): whether name is a Go crypto/tls cipher suite name
 * (TLS 1.2 suites served or refused as insecure, and TLS 1.3 suites). name is borrowed. */
bool kt__tls_suite_known(const char *name);

#endif
