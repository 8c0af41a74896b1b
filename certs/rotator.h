/* SPDX-License-Identifier: Apache-2.0 */
/* certs/rotator.h - the cluster side of the webhook certificates
 * (docs/internals/upstream.md#certificates).
 *
 * One stateless pass (a "tick") that the reconciler's leader runs periodically: keep the
 * Secret `kubeflow-trainer-webhook-cert` filled with a valid CA and serving certificate
 * (creating it when missing, rotating before expiry), and keep every
 * webhooks[].clientConfig.caBundle of `validator.trainer.kubeflow.org` and
 * `defaulter.trainer.kubeflow.org` equal to the CA bundle. It is the single writer; webhook
 * replicas only reload their mounted files. No threads and no clock of its own: the caller
 * passes `now` and a client it owns.
 *
 * Rotation without failed admissions (a documented addition to upstream): when the CA is
 * replaced, the old CA is kept in the Secret under `ca-previous.crt` and stays in caBundle
 * while it is still valid, and the new caBundle is injected BEFORE the Secret changes, so
 * the API server trusts both the serving certificate a replica still has and the one it
 * reloads next. */
#ifndef KT_CERTS_ROTATOR_H
#define KT_CERTS_ROTATOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "certs/certs.h"
#include "common/config/config.h"
#include "common/base/err.h"
#include "common/kube/kube.h"

#define KT_CERTS_VALIDATING_NAME "validator.trainer.kubeflow.org"
#define KT_CERTS_MUTATING_NAME "defaulter.trainer.kubeflow.org"
#define KT_CERTS_PREVIOUS_KEY "ca-previous.crt" /* Secret key of the CA being retired */
#define KT_CERTS_SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
#define KT_CERTS_ROTATOR_PERIOD_S 10 /* suggested tick period: injection repairs drift fast */

enum kt_rotator_mode {
    /* certManagement.enable (the default): own the Secret, rotate, inject caBundle. */
    KT_ROTATOR_MANAGED,
    /* certManagement.enable=false: certificates and caBundle belong to someone else (e.g.
     * cert-manager and its CA injector): only read the Secret and report what is there. */
    KT_ROTATOR_EXTERNAL,
    /* Local runs (no kubelet mounts Secrets): the CA comes from a folder written by
     * `ktctl certs` (ca.crt, optional ca-previous.crt); only caBundle is injected. */
    KT_ROTATOR_LOCAL,
};

/* What to manage. Does not own any pointer; NULL strings take the defaults. */
struct kt_rotator_opts {
    enum kt_rotator_mode mode;
    const char *namespace;   /* Secret and Service namespace; NULL = KT_CERTS_DEFAULT_NAMESPACE */
    const char *secret_name; /* NULL = KT_CERTS_SECRET_NAME */
    const char *service;     /* NULL = KT_CERTS_DEFAULT_SERVICE */
    const char *const *extra_sans; /* extra serving-certificate SANs (see certs.h) */
    size_t n_extra_sans;
    const char *dir;        /* KT_ROTATOR_LOCAL: the folder with ca.crt */
    const char *validating; /* NULL = KT_CERTS_VALIDATING_NAME */
    const char *mutating;   /* NULL = KT_CERTS_MUTATING_NAME */
    int64_t lookahead;      /* seconds; 0 = KT_CERTS_LOOKAHEAD_S */
};

/* What one tick did. Filled on success and on failure (as far as it got). */
struct kt_rotator_report {
    enum kt_certs_verdict verdict; /* what the Secret needed (VALID outside MANAGED mode) */
    bool secret_created;           /* the Secret did not exist and was created */
    bool secret_updated;           /* new certificates were written to the Secret */
    bool secret_ready;             /* the Secret holds tls.crt and tls.key (all modes) */
    int webhooks_updated;          /* configurations whose caBundle was rewritten (0..2) */
    int webhooks_missing;          /* configurations not found (not installed yet) */
    int conflicts;                 /* 409s retried */
    char why[256];                 /* the reason of a rotation, or "" */
};

/* One pass as described above. c belongs to the calling thread; now is Unix seconds.
 * MANAGED: GET the Secret (create it if missing), rotate per kt_certs_needs_rotation(), then
 * inject; EXTERNAL: GET only; LOCAL: read opts->dir and inject. Webhook configurations that
 * do not exist yet are skipped (counted in webhooks_missing), not errors; a configuration is
 * only updated when some caBundle differs; 409s are retried a few times with a fresh GET.
 * Returns 0, or -1 with the kube client's codes (KT_EFORBIDDEN, KT_EIO, ...), KT_ENOENT
 * (EXTERNAL: no Secret; LOCAL: no ca.crt), KT_EINVAL (a Secret whose data is not base64).
 * Does not retain its arguments. */
KT_MUST_CHECK int kt_certs_rotator_tick(struct kt_kube_client *c, const struct kt_rotator_opts *o,
                                        int64_t now, struct kt_rotator_report *rep,
                                        struct kt_err *err);

/* The operator namespace as upstream finds it: the trimmed contents of path (NULL =
 * KT_CERTS_SA_NAMESPACE_FILE), else KT_CERTS_DEFAULT_NAMESPACE. Caller owns the result;
 * free with free(). */
char *kt_certs_pod_namespace(const char *path);

/* Options for a daemon: certManagement.enable picks MANAGED (else EXTERNAL), with its
 * webhookServiceName and webhookSecretName; cert_dir non-NULL picks LOCAL. ns is the
 * install namespace (NULL = KT_CERTS_DEFAULT_NAMESPACE). o borrows from cfg, ns and
 * cert_dir: they must outlive it (kt_certs_rotator_new copies). */
void kt_certs_rotator_opts_from_config(struct kt_rotator_opts *o, const struct kt_config *cfg,
                                       const char *ns, const char *cert_dir);

/* ---- the periodic runner (certs/rotator_run.c) ---- */

/* A thread that runs kt_certs_rotator_tick every period_s while leads(arg) is true (leads
 * NULL = always), every 2 s after a failure, and checks leads every second otherwise, so a
 * new leader injects at once. Logs what each pass changed (component "certs"). */
struct kt_certs_rotator;

/* Copies o (strings included). Does not take cfg: it must outlive the runner. leads is
 * called from the runner's thread and must be thread-safe. Caller owns the result; free with
 * kt_certs_rotator_free(). Cannot fail (aborts on OOM). */
struct kt_certs_rotator *kt_certs_rotator_new(struct kt_kube_config *cfg,
                                              const struct kt_rotator_opts *o, double period_s,
                                              bool (*leads)(void *arg), void *arg);

/* Start the thread. KT_EINTERNAL when it cannot start. */
KT_MUST_CHECK int kt_certs_rotator_start(struct kt_certs_rotator *r, struct kt_err *err);

/* Passes that succeeded so far (for readiness, metrics and tests). Thread-safe. */
unsigned long kt_certs_rotator_passes(struct kt_certs_rotator *r);

/* Stop the thread (waking it at once), join it and free. Accepts NULL. */
void kt_certs_rotator_free(struct kt_certs_rotator *r);

/* ---- pure parts (exposed for tests) ---- */

/* The PEM caBundle: ca_crt, followed by previous when that is a certificate still valid at
 * now (previous may be NULL). Caller owns the result; free with free(). NULL (KT_EINVAL)
 * when ca_crt is NULL or not a certificate. */
char *kt_certs_bundle_pem(const char *ca_crt, const char *previous, int64_t now,
                          struct kt_err *err);

/* Decode a Secret's data (ca.crt, ca.key, tls.crt, tls.key, ca-previous.crt; all optional)
 * into out and *previous. On success out owns what was present and caller owns *previous
 * (NULL when absent; free with free()); on failure (KT_EINVAL: a value is not base64 or not
 * a string) out is zeroed and *previous NULL. Does not retain secret. */
KT_MUST_CHECK int kt_certs_from_secret(const json_t *secret, struct kt_certs *out, char **previous,
                                       struct kt_err *err);

/* The Secret's `data` object for certs and previous (NULL = omitted), values base64.
 * Caller owns the result; free with json_decref(). Does not retain its arguments. */
json_t *kt_certs_secret_data(const struct kt_certs *certs, const char *previous);

/* Set every webhooks[].clientConfig.caBundle of a webhook configuration object to
 * bundle_b64 and return how many were changed (0 = already equal). Does not retain
 * bundle_b64. */
int kt_certs_inject_bundle(json_t *config, const char *bundle_b64);

#endif
