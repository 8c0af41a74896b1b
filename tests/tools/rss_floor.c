/* SPDX-License-Identifier: Apache-2.0 */
/* tests/tools/rss_floor.c - the memory a process linked like kt-reconciler costs before any
 * kt code runs: the shared libraries loaded (the same pkg-config set as the daemons) and
 * their global initialisation done as the daemons do it (kt__kube_global_init: libcurl, with
 * libssh2's OpenSSL setup skipped; gnutls_global_init). Prints one line,
 * "VmRSS=<kB> RssFile=<kB> RssAnon=<kB>", for `make bench` (tests/bench/bench_reconcile.sh):
 * the floor under every RSS figure of the daemons. Exits 1 when /proc cannot be read. */
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/kube/kube.h"

void kt__kube_global_init(void);

/* Value in kB of the /proc/self/status line starting with key, or -1. */
static long status_kb(const char *key)
{
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            kb = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

int main(void)
{
    yaml_parser_t parser;
    kt__kube_global_init();
    if (gnutls_global_init() < 0) {
        return 1;
    }
    json_decref(json_object());
    (void)MHD_is_feature_supported(MHD_FEATURE_TLS);
    if (yaml_parser_initialize(&parser)) {
        yaml_parser_delete(&parser);
    }
    long rss = status_kb("VmRSS"), file = status_kb("RssFile"), anon = status_kb("RssAnon");
    if (rss < 0 || file < 0 || anon < 0) {
        return 1;
    }
    printf("VmRSS=%ld RssFile=%ld RssAnon=%ld\n", rss, file, anon);
    gnutls_global_deinit();
    return 0;
}
