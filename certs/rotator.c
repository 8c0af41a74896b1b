/* SPDX-License-Identifier: Apache-2.0 */
/* certs/rotator.c - Secret storage, rotation and caBundle injection
 * (docs/internals/upstream.md#certificates).
 *
 * Mirrors open-policy-agent cert-controller's rotator (fill the Secret, rotate inside the
 * lookahead, set every caBundle with a plain Update) as one stateless pass over GETs and
 * PUTs, run by the reconciler's leader. It does not watch; the caller ticks it. The old CA
 * rides along in caBundle while it is valid so a CA rotation never fails an admission. */
#include "rotator.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base/buf.h"
#include "common/crypto/crypto.h"
#include "common/base/json.h"
#include "common/base/mem.h"

#define RETRIES 5
#define FILE_MAX (64 * 1024)

static const struct kt_kube_gvr GVR_VALIDATING = {.group = "admissionregistration.k8s.io",
                                                  .version = "v1",
                                                  .resource = "validatingwebhookconfigurations"};
static const struct kt_kube_gvr GVR_MUTATING = {.group = "admissionregistration.k8s.io",
                                                .version = "v1",
                                                .resource = "mutatingwebhookconfigurations"};

static const char *or_default(const char *s, const char *def)
{
    return s && *s ? s : def;
}

static void wipe_free(char *s)
{
    if (s) {
        memset(s, 0, strlen(s));
    }
    free(s);
}

char *kt_certs_pod_namespace(const char *path)
{
    struct kt_buf b;
    char *text = NULL;
    size_t len = 0;

    kt_buf_init(&b, 4096);
    if (kt_buf_read_file(&b, path ? path : KT_CERTS_SA_NAMESPACE_FILE, NULL) == 0) {
        text = kt_buf_take(&b, &len);
    }
    kt_buf_release(&b);
    if (text) {
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r' ||
                           text[len - 1] == '\t')) {
            text[--len] = '\0';
        }
        if (len > 0) {
            return text;
        }
    }
    free(text);
    return kt_xstrdup(KT_CERTS_DEFAULT_NAMESPACE);
}

/* ---- pure parts ---- */

char *kt_certs_bundle_pem(const char *ca_crt, const char *previous, int64_t now, struct kt_err *err)
{
    struct kt_crypto_cert *ca = NULL, *prev = NULL;
    char *out = NULL;

    if (!ca_crt) {
        kt_err_set(err, KT_EINVAL, "no CA certificate");
        return NULL;
    }
    ca = kt_crypto_cert_from_pem(ca_crt, strlen(ca_crt), err);
    if (!ca) {
        kt_err_prefix(err, "ca.crt");
        return NULL;
    }
    if (previous) {
        prev = kt_crypto_cert_from_pem(previous, strlen(previous), NULL);
    }
    /* An expired (or unparseable) previous CA is dropped: nothing it signed can still be
     * served, so trusting it would only widen the bundle. */
    if (prev && kt_crypto_cert_not_after(prev) > now && strcmp(previous, ca_crt) != 0) {
        size_t n = strlen(ca_crt);
        const char *sep = n > 0 && ca_crt[n - 1] == '\n' ? "" : "\n";
        out = kt_xasprintf("%s%s%s", ca_crt, sep, previous);
    } else {
        out = kt_xstrdup(ca_crt);
    }
    kt_crypto_cert_free(prev);
    kt_crypto_cert_free(ca);
    return out;
}

/* Decode data[key] (base64) into *out; a missing key leaves *out NULL. */
static int data_get(const json_t *data, const char *key, char **out, struct kt_err *err)
{
    const json_t *v = json_object_get(data, key);
    uint8_t *raw = NULL;
    size_t len = 0;

    *out = NULL;
    if (!v) {
        return 0;
    }
    if (!json_is_string(v)) {
        return kt_err_set(err, KT_EINVAL, "data.%s: not a string", key);
    }
    if (kt_crypto_base64_decode(json_string_value(v), json_string_length(v), &raw, &len, err) !=
        0) {
        return kt_err_prefix(err, "data.%s", key);
    }
    if (len == 0 || memchr(raw, '\0', len)) {
        /* An empty value (or binary junk) counts as absent: the rotator fills it. */
        wipe_free((char *)raw);
        return 0;
    }
    *out = (char *)raw;
    return 0;
}

int kt_certs_from_secret(const json_t *secret, struct kt_certs *out, char **previous,
                         struct kt_err *err)
{
    const json_t *data = json_object_get(secret, "data");
    struct kt_certs c = {0};
    char *prev = NULL;

    memset(out, 0, sizeof(*out));
    *previous = NULL;
    if (!data || json_is_null(data)) {
        return 0;
    }
    if (!json_is_object(data)) {
        return kt_err_set(err, KT_EINVAL, "data: not an object");
    }
    if (data_get(data, "ca.crt", &c.ca_crt, err) != 0 ||
        data_get(data, "ca.key", &c.ca_key, err) != 0 ||
        data_get(data, "tls.crt", &c.tls_crt, err) != 0 ||
        data_get(data, "tls.key", &c.tls_key, err) != 0 ||
        data_get(data, KT_CERTS_PREVIOUS_KEY, &prev, err) != 0) {
        kt_certs_release(&c);
        free(prev);
        return -1;
    }
    *out = c;
    *previous = prev;
    return 0;
}

json_t *kt_certs_secret_data(const struct kt_certs *certs, const char *previous)
{
    json_t *data = json_object();
    char *s;
    const char *keys[] = {"ca.crt", "ca.key", "tls.crt", "tls.key", KT_CERTS_PREVIOUS_KEY};
    const char *vals[] = {certs->ca_crt, certs->ca_key, certs->tls_crt, certs->tls_key, previous};

    for (size_t i = 0; i < KT_ARRAY_SIZE(keys); i++) {
        if (!vals[i]) {
            continue;
        }
        s = kt_crypto_base64_encode(vals[i], strlen(vals[i]));
        json_object_set_new(data, keys[i], json_string(s));
        free(s);
    }
    return data;
}

int kt_certs_inject_bundle(json_t *config, const char *bundle_b64)
{
    json_t *hooks = json_object_get(config, "webhooks");
    json_t *hook;
    size_t i;
    int changed = 0;

    if (!json_is_array(hooks)) {
        return 0;
    }
    json_array_foreach(hooks, i, hook)
    {
        json_t *cc;
        if (!json_is_object(hook)) {
            continue;
        }
        cc = kt_json_obj_ensure(hook, "clientConfig");
        if (strcmp(kt_json_str(cc, "caBundle", ""), bundle_b64) != 0) {
            json_object_set_new(cc, "caBundle", json_string(bundle_b64));
            changed++;
        }
    }
    return changed;
}

/* ---- cluster I/O ---- */

/* err is optional (NULL allowed) in every public function. */
static void copy_err(struct kt_err *err, const struct kt_err *e)
{
    if (err) {
        *err = *e;
    }
}

/* Make every caBundle of one configuration equal bundle_b64 (GET, compare, PUT; a 409 is
 * retried with a fresh GET). A missing configuration is counted, not an error. */
static int inject_one(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *name,
                      const char *bundle_b64, struct kt_rotator_report *rep, struct kt_err *err)
{
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        json_t *obj = NULL;
        struct kt_err e = {0};
        int rc;

        if (kt_kube_get(c, gvr, NULL, name, &obj, &e) != 0) {
            if (e.code == KT_ENOENT) {
                rep->webhooks_missing++;
                return 0;
            }
            copy_err(err, &e);
            return kt_err_prefix(err, "get %s %s", gvr->resource, name);
        }
        if (kt_certs_inject_bundle(obj, bundle_b64) == 0) {
            json_decref(obj);
            return 0;
        }
        rc = kt_kube_update(c, &(struct kt_kube_ref){.gvr = gvr, .name = name}, obj, NULL, &e);
        json_decref(obj);
        if (rc == 0) {
            rep->webhooks_updated++;
            return 0;
        }
        if (e.code != KT_ECONFLICT) {
            copy_err(err, &e);
            return kt_err_prefix(err, "update %s %s", gvr->resource, name);
        }
        rep->conflicts++;
    }
    return kt_err_set(err, KT_ECONFLICT, "update %s %s: still conflicting after %d tries",
                      gvr->resource, name, RETRIES);
}

/* The CA bundle to inject: the current CA and, while still valid at now, the previous one. */
struct ca_bundle {
    const char *ca_crt, *previous; /* PEM; previous may be NULL */
    int64_t now;
};

static int inject_all(struct kt_kube_client *c, const struct kt_rotator_opts *o,
                      const struct ca_bundle *b, struct kt_rotator_report *rep, struct kt_err *err)
{
    char *pem = kt_certs_bundle_pem(b->ca_crt, b->previous, b->now, err);
    char *b64;
    int rc;

    if (!pem) {
        return -1;
    }
    b64 = kt_crypto_base64_encode(pem, strlen(pem));
    free(pem);
    rc = inject_one(c, &GVR_VALIDATING, or_default(o->validating, KT_CERTS_VALIDATING_NAME), b64,
                    rep, err);
    if (rc == 0) {
        rc = inject_one(c, &GVR_MUTATING, or_default(o->mutating, KT_CERTS_MUTATING_NAME), b64, rep,
                        err);
    }
    free(b64);
    return rc;
}

/* The Secret object to PUT (secret non-NULL: the one read, keeping its metadata and
 * resourceVersion as the optimistic lock) or POST. Caller owns the result. */
static json_t *secret_object(const json_t *secret, const struct kt_rotator_opts *o,
                             const struct kt_certs *certs, const char *previous)
{
    json_t *obj;

    if (secret) {
        obj = json_deep_copy(secret);
    } else {
        obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s}", "apiVersion", "v1", "kind", "Secret",
                        "metadata", "name", or_default(o->secret_name, KT_CERTS_SECRET_NAME),
                        "namespace", or_default(o->namespace, KT_CERTS_DEFAULT_NAMESPACE), "type",
                        "Opaque");
    }
    json_object_set_new(obj, "data", kt_certs_secret_data(certs, previous));
    return obj;
}

/* The state of the Secret during one attempt. */
struct secret_state {
    json_t *secret; /* as read; NULL when it does not exist */
    struct kt_certs certs;
    char *previous;
};

static void state_release(struct secret_state *s)
{
    json_decref(s->secret);
    kt_certs_release(&s->certs);
    free(s->previous);
    memset(s, 0, sizeof(*s));
}

static int state_read(struct kt_kube_client *c, const struct kt_rotator_opts *o,
                      struct secret_state *s, struct kt_err *err)
{
    const char *ns = or_default(o->namespace, KT_CERTS_DEFAULT_NAMESPACE);
    const char *name = or_default(o->secret_name, KT_CERTS_SECRET_NAME);
    struct kt_err e = {0};

    memset(s, 0, sizeof(*s));
    if (kt_kube_get(c, &KT_GVR_SECRETS, ns, name, &s->secret, &e) != 0) {
        if (e.code != KT_ENOENT) {
            copy_err(err, &e);
            return kt_err_prefix(err, "get secret %s/%s", ns, name);
        }
        return 0;
    }
    if (kt_certs_from_secret(s->secret, &s->certs, &s->previous, err) != 0) {
        state_release(s);
        return kt_err_prefix(err, "secret %s/%s", ns, name);
    }
    return 0;
}

/* True when pem is a certificate valid after now (a CA worth keeping in the bundle). */
static bool still_valid(const char *pem, int64_t now)
{
    struct kt_crypto_cert *cert = pem ? kt_crypto_cert_from_pem(pem, strlen(pem), NULL) : NULL;
    bool ok = cert && kt_crypto_cert_not_after(cert) > now;

    kt_crypto_cert_free(cert);
    return ok;
}

/* What a rotation issues and when. */
struct rotation {
    const struct kt_certs_opts *co;
    int64_t now;
};

/* Rotate s->certs as verdict asks; for a new CA, keep the old one as previous and inject
 * the new bundle before the Secret changes. */
static int rotate_state(struct kt_kube_client *c, const struct kt_rotator_opts *o,
                        const struct rotation *r, struct secret_state *s,
                        struct kt_rotator_report *rep, struct kt_err *err)
{
    const struct kt_certs_opts *co = r->co;
    int64_t now = r->now;
    int64_t lookahead = o->lookahead > 0 ? o->lookahead : KT_CERTS_LOOKAHEAD_S;
    char *old_ca = s->certs.ca_crt ? kt_xstrdup(s->certs.ca_crt) : NULL;
    enum kt_certs_verdict done = KT_CERTS_VALID;
    int rc = kt_certs_rotate(co, now, lookahead, &s->certs, &done, err);

    if (rc == 0 && done == KT_CERTS_RENEW_ALL) {
        free(s->previous);
        s->previous = NULL;
        if (still_valid(old_ca, now)) {
            s->previous = old_ca;
            old_ca = NULL;
        }
        /* The tick's final injection reports what is missing; count only writes here. */
        struct kt_rotator_report pre = {0};
        struct ca_bundle b = {.ca_crt = s->certs.ca_crt, .previous = s->previous, .now = now};
        rc = inject_all(c, o, &b, &pre, err);
        rep->webhooks_updated += pre.webhooks_updated;
        rep->conflicts += pre.conflicts;
    }
    free(old_ca);
    return rc;
}

/* Write s->certs to the Secret (PUT over what was read, or POST). 1 = lost a race (409). */
static int state_write(struct kt_kube_client *c, const struct kt_rotator_opts *o,
                       struct secret_state *s, struct kt_rotator_report *rep, struct kt_err *err)
{
    const char *ns = or_default(o->namespace, KT_CERTS_DEFAULT_NAMESPACE);
    const char *name = or_default(o->secret_name, KT_CERTS_SECRET_NAME);
    json_t *obj = secret_object(s->secret, o, &s->certs, s->previous);
    struct kt_err e = {0};
    int rc;

    if (s->secret) {
        rc =
            kt_kube_update(c, &(struct kt_kube_ref){.gvr = &KT_GVR_SECRETS, .ns = ns, .name = name},
                           obj, NULL, &e);
    } else {
        rc = kt_kube_create(c, &KT_GVR_SECRETS, ns, obj, NULL, &e);
    }
    json_decref(obj);
    if (rc == 0) {
        rep->secret_created = rep->secret_created || !s->secret;
        rep->secret_updated = rep->secret_updated || s->secret;
        return 0;
    }
    if (e.code == KT_ECONFLICT) {
        rep->conflicts++;
        return 1;
    }
    copy_err(err, &e);
    return kt_err_prefix(err, "%s secret %s/%s", s->secret ? "update" : "create", ns, name);
}

/* MANAGED: bring the Secret to a valid state; on success *out holds what it now stores. */
static int managed_secret(struct kt_kube_client *c, const struct kt_rotator_opts *o, int64_t now,
                          struct secret_state *out, struct kt_rotator_report *rep,
                          struct kt_err *err)
{
    int64_t lookahead = o->lookahead > 0 ? o->lookahead : KT_CERTS_LOOKAHEAD_S;
    struct kt_certs_opts co = {.service = o->service,
                               .namespace = o->namespace,
                               .extra_sans = o->extra_sans,
                               .n_extra_sans = o->n_extra_sans};

    for (int attempt = 0; attempt < RETRIES; attempt++) {
        struct secret_state s;
        struct kt_err why = {0};
        int rc;

        if (state_read(c, o, &s, err) != 0) {
            return -1;
        }
        rep->verdict = kt_certs_needs_rotation(&s.certs, &co, now, lookahead, &why);
        if (rep->verdict == KT_CERTS_VALID) {
            *out = s;
            return 0;
        }
        size_t wn = strnlen(why.msg, sizeof(rep->why) - 1);
        memcpy(rep->why, why.msg, wn);
        rep->why[wn] = '\0';
        rc = rotate_state(c, o, &(struct rotation){.co = &co, .now = now}, &s, rep, err);
        if (rc == 0) {
            rc = state_write(c, o, &s, rep, err);
        }
        if (rc == 0) {
            *out = s;
            return 0;
        }
        state_release(&s);
        if (rc < 0) {
            return -1;
        }
    }
    return kt_err_set(err, KT_ECONFLICT, "secret: still conflicting after %d tries", RETRIES);
}

/* Read dir/name (NULL out when optional and missing). */
static int read_text(const char *dir, const char *name, bool optional, char **out,
                     struct kt_err *err)
{
    char *path = kt_xasprintf("%s/%s", dir, name);
    struct kt_buf b;
    struct stat st;
    int rc = 0;

    *out = NULL;
    kt_buf_init(&b, FILE_MAX);
    if (stat(path, &st) != 0 && errno == ENOENT) {
        rc = optional ? 0 : kt_err_set(err, KT_ENOENT, "%s: no such file", path);
    } else if (kt_buf_read_file(&b, path, err) != 0) {
        rc = -1;
    } else {
        *out = kt_buf_take(&b, NULL);
    }
    kt_buf_release(&b);
    free(path);
    return rc;
}

static int local_tick(struct kt_kube_client *c, const struct kt_rotator_opts *o, int64_t now,
                      struct kt_rotator_report *rep, struct kt_err *err)
{
    char *ca = NULL, *prev = NULL;
    int rc = -1;

    if (!o->dir) {
        return kt_err_set(err, KT_EINVAL, "local mode needs a certificate folder");
    }
    if (read_text(o->dir, "ca.crt", false, &ca, err) == 0 &&
        read_text(o->dir, KT_CERTS_PREVIOUS_KEY, true, &prev, err) == 0) {
        rep->secret_ready = true;
        rc = inject_all(c, o, &(struct ca_bundle){.ca_crt = ca, .previous = prev, .now = now}, rep,
                        err);
    }
    free(ca);
    free(prev);
    return rc;
}

int kt_certs_rotator_tick(struct kt_kube_client *c, const struct kt_rotator_opts *o, int64_t now,
                          struct kt_rotator_report *rep, struct kt_err *err)
{
    struct secret_state s = {0};
    int rc;

    memset(rep, 0, sizeof(*rep));
    if (o->mode == KT_ROTATOR_LOCAL) {
        return local_tick(c, o, now, rep, err);
    }
    if (o->mode == KT_ROTATOR_EXTERNAL) {
        if (state_read(c, o, &s, err) != 0) {
            return -1;
        }
        rc = s.secret ? 0
                      : kt_err_set(err, KT_ENOENT, "secret %s/%s not found",
                                   or_default(o->namespace, KT_CERTS_DEFAULT_NAMESPACE),
                                   or_default(o->secret_name, KT_CERTS_SECRET_NAME));
        rep->secret_ready = s.certs.tls_crt && s.certs.tls_key;
        state_release(&s);
        return rc;
    }
    if (managed_secret(c, o, now, &s, rep, err) != 0) {
        return -1;
    }
    rep->secret_ready = s.certs.tls_crt && s.certs.tls_key;
    struct ca_bundle b = {.ca_crt = s.certs.ca_crt, .previous = s.previous, .now = now};
    rc = inject_all(c, o, &b, rep, err);
    state_release(&s);
    return rc;
}

void kt_certs_rotator_opts_from_config(struct kt_rotator_opts *o, const struct kt_config *cfg,
                                       const char *ns, const char *cert_dir)
{
    memset(o, 0, sizeof(*o));
    o->mode = cfg->cert_management.enable ? KT_ROTATOR_MANAGED : KT_ROTATOR_EXTERNAL;
    if (cert_dir) {
        o->mode = KT_ROTATOR_LOCAL;
        o->dir = cert_dir;
    }
    o->namespace = ns;
    o->service = cfg->cert_management.webhook_service_name;
    o->secret_name = cfg->cert_management.webhook_secret_name;
}
