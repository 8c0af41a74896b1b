/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/itest_certs_rotator.c ENV_FILE - certs/rotator against the real API
 * server: the Secret is created and filled, caBundle is injected into webhook configurations
 * (only when it differs: resourceVersions stay put), drift is repaired, a CA rotation keeps
 * the old CA in the bundle until it expires, a serving-certificate renewal keeps the bundle,
 * the kustomize-shipped empty Secret is filled, external mode only reads, local mode injects
 * a folder's CA, and an identity without rights gets KT_EFORBIDDEN. Everything lives in a
 * fresh namespace and in webhook configurations with unique names whose rules match a group
 * that does not exist, so no other test is affected. Times are passed in. */
#include "tests/integration/kube_itest.h"

#include <sys/stat.h>

#include "certs/certs.h"
#include "certs/rotator.h"
#include "common/crypto/crypto.h"

#define YEAR (365LL * 24 * 60 * 60)
#define DAY (24LL * 60 * 60)

static const struct kt_kube_gvr GVR_VWC = {"admissionregistration.k8s.io", "v1",
                                           "validatingwebhookconfigurations"};
static const struct kt_kube_gvr GVR_MWC = {"admissionregistration.k8s.io", "v1",
                                           "mutatingwebhookconfigurations"};

struct ctx {
    struct itest_env env;
    struct kt_kube_config *admin_cfg;
    struct kt_kube_client *c;
    char *ns, *vname, *mname;
    struct kt_rotator_opts o;
    int64_t now;
};

static json_t *hook(const char *name)
{
    return json_pack("{s:s, s:[s], s:{s:s}, s:s, s:s, s:[{s:[s], s:[s], s:[s], s:[s]}]}", "name",
                     name, "admissionReviewVersions", "v1", "clientConfig", "url",
                     "https://127.0.0.1:1/never", "sideEffects", "None", "failurePolicy", "Ignore",
                     "rules", "apiGroups", "kt-rotator.invalid", "apiVersions", "v1", "operations",
                     "CREATE", "resources", "nothings");
}

static void create_configs(struct ctx *x)
{
    struct kt_err err = {0};
    json_t *v =
        json_pack("{s:s, s:s, s:{s:s}, s:[o, o]}", "apiVersion", "admissionregistration.k8s.io/v1",
                  "kind", "ValidatingWebhookConfiguration", "metadata", "name", x->vname,
                  "webhooks", hook("a.kt-rotator.invalid"), hook("b.kt-rotator.invalid"));
    json_t *m = json_pack("{s:s, s:s, s:{s:s}, s:[o]}", "apiVersion",
                          "admissionregistration.k8s.io/v1", "kind", "MutatingWebhookConfiguration",
                          "metadata", "name", x->mname, "webhooks", hook("m.kt-rotator.invalid"));

    CHECK_OK(kt_kube_create(x->c, &GVR_VWC, NULL, v, NULL, &err));
    CHECK_OK(kt_kube_create(x->c, &GVR_MWC, NULL, m, NULL, &err));
    json_decref(v);
    json_decref(m);
}

static json_t *get(struct ctx *x, const struct kt_kube_gvr *gvr, const char *ns, const char *name)
{
    struct kt_err err = {0};
    json_t *o = NULL;

    if (kt_kube_get(x->c, gvr, ns, name, &o, &err) != 0) {
        fprintf(stderr, "get %s: %s\n", name, err.msg);
    }
    return o;
}

static char *rv_of(struct ctx *x, const struct kt_kube_gvr *gvr, const char *ns, const char *name)
{
    json_t *o = get(x, gvr, ns, name);
    char *rv = kt_xstrdup(kt_json_str(json_object_get(o, "metadata"), "resourceVersion", ""));

    json_decref(o);
    return rv;
}

/* The Secret's certificates and previous CA. */
static void secret_certs(struct ctx *x, struct kt_certs *out, char **prev)
{
    struct kt_err err = {0};
    json_t *s = get(x, &KT_GVR_SECRETS, x->ns, KT_CERTS_SECRET_NAME);

    CHECK_OK(kt_certs_from_secret(s, out, prev, &err));
    json_decref(s);
}

/* Every caBundle of both configurations decoded and equal; caller owns the PEM. */
static char *bundle_of(struct ctx *x)
{
    const struct kt_kube_gvr *gvrs[] = {&GVR_VWC, &GVR_MWC};
    const char *names[] = {x->vname, x->mname};
    char *first = NULL;

    for (size_t i = 0; i < 2; i++) {
        json_t *cfg = get(x, gvrs[i], NULL, names[i]), *h;
        size_t j;
        json_array_foreach(json_object_get(cfg, "webhooks"), j, h)
        {
            const char *b = kt_json_str(json_object_get(h, "clientConfig"), "caBundle", "");
            if (!first) {
                first = kt_xstrdup(b);
            }
            CHECK_EQ_STR(b, first);
        }
        json_decref(cfg);
    }
    uint8_t *pem = NULL;
    size_t len = 0;
    struct kt_err err = {0};
    if (!first || kt_crypto_base64_decode(first, strlen(first), &pem, &len, &err) != 0) {
        free(first);
        return kt_xstrdup("");
    }
    free(first);
    return (char *)pem;
}

static size_t n_certs(const char *pem)
{
    size_t n = 0;
    for (const char *p = strstr(pem, "BEGIN CERTIFICATE"); p; p = strstr(p + 1, "BEGIN CERT")) {
        n++;
    }
    return n;
}

static int tick(struct ctx *x, int64_t now, int64_t lookahead, struct kt_rotator_report *rep)
{
    struct kt_err err = {0};
    x->o.lookahead = lookahead;
    int rc = kt_certs_rotator_tick(x->c, &x->o, now, rep, &err);
    if (rc != 0) {
        fprintf(stderr, "tick: %s\n", err.msg);
    }
    return rc;
}

static void test_fill_and_inject(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_certs certs = {0};
    char *prev = NULL, *bundle, *rv_v, *rv_m, *rv_s, *rv;

    /* Nothing exists: the Secret is created, the missing configurations are skipped. */
    CHECK_OK(tick(x, x->now, 0, &rep));
    CHECK(rep.secret_created && rep.secret_ready);
    CHECK_EQ_INT(rep.verdict, KT_CERTS_RENEW_ALL);
    CHECK_EQ_INT(rep.webhooks_missing, 2);
    CHECK_EQ_INT(rep.webhooks_updated, 0);
    secret_certs(x, &certs, &prev);
    struct kt_certs_opts co = {.namespace = x->ns};
    CHECK_EQ_INT(kt_certs_needs_rotation(&certs, &co, x->now, KT_CERTS_LOOKAHEAD_S, NULL),
                 KT_CERTS_VALID);
    CHECK(prev == NULL);

    /* The configurations appear: both get the CA, in every webhook. */
    create_configs(x);
    CHECK_OK(tick(x, x->now, 0, &rep));
    CHECK_EQ_INT(rep.verdict, KT_CERTS_VALID);
    CHECK(!rep.secret_created && !rep.secret_updated);
    CHECK_EQ_INT(rep.webhooks_updated, 2);
    bundle = bundle_of(x);
    CHECK_EQ_STR(bundle, certs.ca_crt);
    free(bundle);

    /* Nothing to do: nothing is written. */
    rv_v = rv_of(x, &GVR_VWC, NULL, x->vname);
    rv_m = rv_of(x, &GVR_MWC, NULL, x->mname);
    rv_s = rv_of(x, &KT_GVR_SECRETS, x->ns, KT_CERTS_SECRET_NAME);
    CHECK_OK(tick(x, x->now, 0, &rep));
    CHECK_EQ_INT(rep.webhooks_updated, 0);
    CHECK(!rep.secret_updated);
    rv = rv_of(x, &GVR_VWC, NULL, x->vname);
    CHECK_EQ_STR(rv, rv_v);
    free(rv);
    rv = rv_of(x, &GVR_MWC, NULL, x->mname);
    CHECK_EQ_STR(rv, rv_m);
    free(rv);
    rv = rv_of(x, &KT_GVR_SECRETS, x->ns, KT_CERTS_SECRET_NAME);
    CHECK_EQ_STR(rv, rv_s);
    free(rv);
    free(rv_v);
    free(rv_m);
    free(rv_s);
    kt_certs_release(&certs);
    free(prev);
}

static void test_drift(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_err err = {0};
    json_t *cfg = get(x, &GVR_MWC, NULL, x->mname);
    struct kt_certs certs = {0};
    char *prev = NULL, *bundle;

    /* Someone overwrites one caBundle: the next tick puts the CA back. */
    CHECK(kt_certs_inject_bundle(cfg, "QUJD") == 1);
    CHECK_OK(kt_kube_update(x->c, &(struct kt_kube_ref){.gvr = &GVR_MWC, .name = x->mname}, cfg,
                            NULL, &err));
    json_decref(cfg);
    CHECK_OK(tick(x, x->now, 0, &rep));
    CHECK_EQ_INT(rep.webhooks_updated, 1);
    secret_certs(x, &certs, &prev);
    bundle = bundle_of(x);
    CHECK_EQ_STR(bundle, certs.ca_crt);
    free(bundle);
    kt_certs_release(&certs);
    free(prev);
}

static void test_rotations(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_certs before = {0}, after = {0}, later = {0};
    char *prev = NULL, *prev2 = NULL, *prev3 = NULL, *bundle;

    secret_certs(x, &before, &prev);
    /* A lookahead past the CA's ten years: new CA, the old one kept as previous and in the
     * bundle after the new one. */
    CHECK_OK(tick(x, x->now, 11 * YEAR, &rep));
    CHECK_EQ_INT(rep.verdict, KT_CERTS_RENEW_ALL);
    CHECK(rep.secret_updated && !rep.secret_created);
    CHECK(*rep.why != '\0');
    CHECK_EQ_INT(rep.webhooks_updated, 2);
    secret_certs(x, &after, &prev2);
    CHECK(after.ca_crt && before.ca_crt && strcmp(after.ca_crt, before.ca_crt) != 0);
    CHECK_EQ_STR(prev2, before.ca_crt);
    bundle = bundle_of(x);
    CHECK_EQ_INT(n_certs(bundle), 2);
    CHECK(strncmp(bundle, after.ca_crt, strlen(after.ca_crt)) == 0);
    CHECK(strstr(bundle, before.ca_crt) != NULL);
    free(bundle);

    /* 400 days on, the serving certificate (one year) is renewed; the CA and bundle stay. */
    CHECK_OK(tick(x, x->now + 400 * DAY, 0, &rep));
    CHECK_EQ_INT(rep.verdict, KT_CERTS_RENEW_SERVER);
    CHECK_EQ_INT(rep.webhooks_updated, 0);
    secret_certs(x, &later, &prev3);
    CHECK_EQ_STR(later.ca_crt, after.ca_crt);
    CHECK(later.tls_crt && after.tls_crt && strcmp(later.tls_crt, after.tls_crt) != 0);
    CHECK_EQ_STR(prev3, before.ca_crt);
    kt_certs_release(&later);
    free(prev3);

    /* Past the old CA's end: it leaves the bundle (the CA itself is renewed too, and an
     * expired previous is not kept). */
    CHECK_OK(tick(x, x->now + 10 * YEAR + DAY, 0, &rep));
    CHECK_EQ_INT(rep.verdict, KT_CERTS_RENEW_ALL);
    secret_certs(x, &later, &prev3);
    CHECK(prev3 == NULL);
    bundle = bundle_of(x);
    CHECK_EQ_INT(n_certs(bundle), 1);
    CHECK_EQ_STR(bundle, later.ca_crt);
    free(bundle);
    kt_certs_release(&later);
    free(prev3);
    kt_certs_release(&before);
    kt_certs_release(&after);
    free(prev);
    free(prev2);
}

static void test_empty_secret(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_err err = {0};
    struct kt_rotator_opts o = x->o;
    json_t *s = json_pack("{s:s, s:s, s:{s:s}, s:s}", "apiVersion", "v1", "kind", "Secret",
                          "metadata", "name", "shipped-empty", "type", "Opaque");

    /* The Secret kustomize ships has no data: it is filled in place, not re-created. */
    CHECK_OK(kt_kube_create(x->c, &KT_GVR_SECRETS, x->ns, s, NULL, &err));
    json_decref(s);
    o.secret_name = "shipped-empty";
    o.lookahead = 0;
    CHECK_OK(kt_certs_rotator_tick(x->c, &o, x->now, &rep, &err));
    CHECK(rep.secret_updated && !rep.secret_created && rep.secret_ready);
    CHECK_EQ_INT(rep.verdict, KT_CERTS_RENEW_ALL);
}

static void test_external(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_err err = {0};
    struct kt_rotator_opts o = x->o;
    struct kt_certs certs = {0};
    char *rv_before, *rv_after;

    o.mode = KT_ROTATOR_EXTERNAL;
    o.secret_name = "cert-manager-made";
    o.lookahead = 0;
    CHECK_EQ_INT(kt_certs_rotator_tick(x->c, &o, x->now, &rep, &err), -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    CHECK(!rep.secret_created);

    /* An issuer's Secret (tls.crt/tls.key only): ready, read-only, caBundle left alone. */
    CHECK_OK(kt_certs_generate(NULL, x->now, &certs, &err));
    json_t *s = json_pack(
        "{s:s, s:s, s:{s:s}, s:s, s:o}", "apiVersion", "v1", "kind", "Secret", "metadata", "name",
        "cert-manager-made", "type", "kubernetes.io/tls", "data",
        kt_certs_secret_data(&(struct kt_certs){.tls_crt = certs.tls_crt, .tls_key = certs.tls_key},
                             NULL));
    CHECK_OK(kt_kube_create(x->c, &KT_GVR_SECRETS, x->ns, s, NULL, &err));
    json_decref(s);
    rv_before = rv_of(x, &GVR_VWC, NULL, x->vname);
    CHECK_OK(kt_certs_rotator_tick(x->c, &o, x->now, &rep, &err));
    CHECK(rep.secret_ready && !rep.secret_updated);
    CHECK_EQ_INT(rep.webhooks_updated, 0);
    rv_after = rv_of(x, &GVR_VWC, NULL, x->vname);
    CHECK_EQ_STR(rv_after, rv_before);
    free(rv_before);
    free(rv_after);
    kt_certs_release(&certs);
}

static void test_local(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_err err = {0};
    struct kt_rotator_opts o = x->o;
    struct kt_certs certs = {0};
    char dir[] = "/tmp/kt-rot-local-XXXXXX";
    char *bundle;

    CHECK(mkdtemp(dir) != NULL);
    o.mode = KT_ROTATOR_LOCAL;
    o.dir = dir;
    o.lookahead = 0;
    /* No ca.crt yet: an error, nothing injected. */
    CHECK_EQ_INT(kt_certs_rotator_tick(x->c, &o, x->now, &rep, &err), -1);
    CHECK_EQ_INT(err.code, KT_ENOENT);
    CHECK_EQ_INT(rep.webhooks_updated, 0);

    const char *sans[] = {"IP:127.0.0.1"};
    struct kt_certs_opts co = {.extra_sans = sans, .n_extra_sans = 1};
    CHECK_OK(kt_certs_generate(&co, x->now, &certs, &err));
    CHECK_OK(kt_certs_write_dir(&certs, dir, &err));
    CHECK_OK(kt_certs_rotator_tick(x->c, &o, x->now, &rep, &err));
    CHECK_EQ_INT(rep.webhooks_updated, 2);
    bundle = bundle_of(x);
    CHECK_EQ_STR(bundle, certs.ca_crt);
    free(bundle);
    kt_certs_release(&certs);
    itest_sh("rm -rf %s", dir);
}

static void test_forbidden(struct ctx *x)
{
    struct kt_rotator_report rep;
    struct kt_err err = {0};
    struct kt_kube_config *cfg = itest_config(&x->env, "KT_WEBHOOK_KUBECONFIG");
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    struct kt_rotator_opts o = x->o;

    o.lookahead = 0;
    CHECK_EQ_INT(kt_certs_rotator_tick(c, &o, x->now, &rep, &err), -1);
    CHECK_EQ_INT(err.code, KT_EFORBIDDEN);
    CHECK_CONTAINS(err.msg, "secret");
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
}

int main(int argc, char **argv)
{
    struct ctx x = {0};
    struct kt_err err = {0};

    kt_mem_init();
    if (argc != 2 || itest_env_load(&x.env, argv[1]) < 0) {
        fprintf(stderr, "usage: %s ENV_FILE\n", argv[0]);
        return 2;
    }
    x.admin_cfg = itest_config(&x.env, "KT_ADMIN_KUBECONFIG");
    x.c = kt_kube_client_new(x.admin_cfg);
    x.ns = itest_namespace(x.c, "kt-rotator");
    x.vname = kt_xasprintf("kt-rotator-%d.validating.invalid", (int)getpid());
    x.mname = kt_xasprintf("kt-rotator-%d.mutating.invalid", (int)getpid());
    x.o = (struct kt_rotator_opts){
        .mode = KT_ROTATOR_MANAGED, .namespace = x.ns, .validating = x.vname, .mutating = x.mname};
    x.now = (int64_t)time(NULL);
    test_fill_and_inject(&x);
    test_drift(&x);
    test_rotations(&x);
    test_empty_secret(&x);
    test_external(&x);
    test_local(&x);
    test_forbidden(&x);
    CHECK_OK(kt_kube_delete(x.c, &GVR_VWC, NULL, x.vname, NULL, &err));
    CHECK_OK(kt_kube_delete(x.c, &GVR_MWC, NULL, x.mname, NULL, &err));
    kt_kube_client_free(x.c);
    kt_kube_config_free(x.admin_cfg);
    itest_env_release(&x.env);
    free(x.ns);
    free(x.vname);
    free(x.mname);
    return test_report();
}
