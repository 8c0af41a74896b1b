/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_rotator_thread.c - certs/rotator_run.c's thread (TSan tier): a follower
 * never ticks but keeps asking whether it leads; a leader whose passes fail (no API server)
 * counts no pass; kt_certs_rotator_free wakes and joins the thread from either wait, and
 * accepts NULL. Bounded polls on conditions only; nothing asserts on time. */
#include "tests/test.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "certs/certs.h"
#include "certs/rotator.h"
#include "common/crypto/crypto.h"
#include "common/kube/kube.h"
#include "common/base/mem.h"

struct probe {
    atomic_int asked;
    atomic_bool leader;
};

static bool leads(void *arg)
{
    struct probe *p = arg;
    atomic_fetch_add(&p->asked, 1);
    return atomic_load(&p->leader);
}

static void nap(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Poll (at most ~10 s) until *counter reaches want. */
static bool reaches(atomic_int *counter, int want)
{
    for (int i = 0; i < 1000; i++) {
        if (atomic_load(counter) >= want) {
            return true;
        }
        nap();
    }
    return false;
}

/* A kubeconfig for a server nobody listens on (port 1), trusting a fresh CA. */
static struct kt_kube_config *dead_server(void)
{
    struct kt_certs c = {0};
    struct kt_err err = {0};
    CHECK_EQ_INT(kt_certs_generate(NULL, 1800000000LL, &c, &err), 0);
    char *ca = kt_crypto_base64_encode(c.ca_crt, strlen(c.ca_crt));
    char *text = kt_xasprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n"
                              "    server: https://127.0.0.1:1\n"
                              "    certificate-authority-data: %s\nusers:\n- name: u\n  user:\n"
                              "    token: t\ncontexts:\n- name: x\n  context:\n    cluster: x\n"
                              "    user: u\ncurrent-context: x\n",
                              ca);
    struct kt_kube_config *cfg =
        kt_kube_config_parse_kubeconfig(text, strlen(text), NULL, NULL, &err);
    if (!cfg) {
        fprintf(stderr, "kubeconfig: %s\n", err.msg);
    }
    CHECK(cfg != NULL);
    free(text);
    free(ca);
    kt_certs_release(&c);
    return cfg;
}

static void test_follower(struct kt_kube_config *cfg)
{
    struct probe p;
    struct kt_err err = {0};
    struct kt_rotator_opts o = {.mode = KT_ROTATOR_MANAGED, .namespace = "ns"};

    atomic_init(&p.asked, 0);
    atomic_init(&p.leader, false);
    struct kt_certs_rotator *r = kt_certs_rotator_new(cfg, &o, 10, leads, &p);
    CHECK_EQ_INT(kt_certs_rotator_start(r, &err), 0);
    CHECK(reaches(&p.asked, 2)); /* it keeps asking */
    CHECK_EQ_INT(kt_certs_rotator_passes(r), 0);
    kt_certs_rotator_free(r); /* wakes it from the follower wait */
}

static void test_failing_leader(struct kt_kube_config *cfg)
{
    struct probe p;
    struct kt_err err = {0};
    const char *sans[] = {"IP:127.0.0.1", "DNS:localhost"};
    struct kt_rotator_opts o = {
        .mode = KT_ROTATOR_MANAGED, .namespace = "ns", .extra_sans = sans, .n_extra_sans = 2};

    atomic_init(&p.asked, 0);
    atomic_init(&p.leader, true);
    struct kt_certs_rotator *r = kt_certs_rotator_new(cfg, &o, 10, leads, &p);
    CHECK_EQ_INT(kt_certs_rotator_start(r, &err), 0);
    CHECK(reaches(&p.asked, 1));
    CHECK_EQ_INT(kt_certs_rotator_passes(r), 0); /* connection refused: no pass */
    kt_certs_rotator_free(r);                    /* wakes it from the retry wait */
}

static void test_local_missing_dir(struct kt_kube_config *cfg)
{
    struct kt_err err = {0};
    struct kt_rotator_opts o = {.mode = KT_ROTATOR_LOCAL, .dir = "/nonexistent/kt-certs"};
    struct kt_certs_rotator *r = kt_certs_rotator_new(cfg, &o, 10, NULL, NULL);

    CHECK_EQ_INT(kt_certs_rotator_start(r, &err), 0);
    kt_certs_rotator_free(r);
    /* Never started: free only releases. */
    r = kt_certs_rotator_new(cfg, &o, 0, NULL, NULL);
    kt_certs_rotator_free(r);
    kt_certs_rotator_free(NULL);
    CHECK(true);
}

int main(void)
{
    kt_mem_init();
    struct kt_kube_config *cfg = dead_server();
    if (cfg) {
        test_follower(cfg);
        test_failing_leader(cfg);
        test_local_missing_dir(cfg);
    }
    kt_kube_config_free(cfg);
    return test_report();
}
