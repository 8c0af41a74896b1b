/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/status_server.h - the TrainJobStatus status server
 * (docs/internals/upstream.md#status-server; upstream feature gate TrainJobStatus, alpha, off by
 * default): training code POSTs its progress to
 *   /apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status
 * with `Authorization: Bearer <projected service-account token>` and a body
 * {"trainerStatus": {...}}, and the server applies status.trainerStatus to the TrainJob
 * (server-side apply on trainjobs/status, field manager `trainer-status`, force).
 *
 * It runs in kt-webhook, on every replica, behind the Service that already routes the
 * webhook (`<certManagement.webhookServiceName>`, port statusServer.port), with the
 * webhook's certificate files (hot-reloaded). Answers are upstream's: 404 `Not found`,
 * 403 `Forbidden`, 413 `Payload too large` (body over 64 KiB), 422 `Invalid payload` or the
 * API server's Invalid message, 404 `Train job not found`, 500 `Internal error`, each a
 * metav1.Status; 200 echoes the request. trainerStatus.lastUpdatedTime is stored and echoed
 * as upstream's decoded metav1.Time writes it (kt_status_normalize); one that is not RFC 3339
 * is an `Invalid payload`.
 *
 * Deliberate difference (docs/compatibility.md): upstream verifies the token itself by OIDC
 * discovery against the cluster issuer; kt asks the API server with a TokenReview whose
 * audiences are the TrainJob's status resource, and requires the authenticated user to be a
 * service account of the TrainJob's namespace. The same tokens pass and fail; kt-webhook's
 * ServiceAccount needs `create` on tokenreviews.
 *
 * Threads: the server runs one HTTP thread; its kube client (own rate limit statusServer.qps /
 * burst) is used only there. */
#ifndef KT_WEBHOOK_STATUS_SERVER_H
#define KT_WEBHOOK_STATUS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/base/err.h"
#include "common/kube/kube.h"
#include "common/net/metrics.h"

#define KT_STATUS_MAX_BODY (64u << 10)
#define KT_STATUS_FIELD_MANAGER "trainer-status"

struct kt_status_server_opts {
    const char *listen;          /* "ADDR:PORT" */
    const char *cert_file;       /* the webhook's serving certificate */
    const char *key_file;        /* and key */
    const char *tls_priority;    /* GnuTLS priorities from the Configuration, NULL = default */
    struct kt_kube_config *kube; /* borrowed; must outlive the server */
    struct kt_metrics *metrics;  /* borrowed, may be NULL */
};

struct kt_status_srv;

/* Create (not yet listening). NULL + err for a bad address or TLS options. Caller owns the
 * result; free with kt_status_srv_free(). Does not retain opts' strings. */
struct kt_status_srv *kt_status_srv_new(const struct kt_status_server_opts *opts,
                                        struct kt_err *err);
KT_MUST_CHECK int kt_status_srv_start(struct kt_status_srv *s, struct kt_err *err);
uint16_t kt_status_srv_port(const struct kt_status_srv *s);
bool kt_status_srv_ready(struct kt_status_srv *s);
/* Stop accepting, finish requests in flight (5 s grace, as upstream) and free. Accepts NULL. */
void kt_status_srv_free(struct kt_status_srv *s);

/* Pure helpers, exposed for tests. */

/* Split path into namespace and name (copied into ns/name, each at least 254 bytes). 0 on a
 * status path, -1 otherwise. */
int kt_status_parse_path(const char *path, char *ns, char *name);
/* The token of an Authorization header: "Bearer <token>", scheme case-insensitive, exactly
 * two whitespace-separated fields. Copied into out (size n); 0, or -1 when malformed. */
int kt_status_bearer(const char *header, char *out, size_t n);
/* trainerStatus (an object; modified) as upstream's handler stores and echoes it, having
 * decoded it into its Go type: lastUpdatedTime, a metav1.Time, written back as one serialises
 * (RFC 3339, UTC, whole seconds: "...16:02:42.858523+00:00" becomes "...16:02:42Z"). -1 when
 * lastUpdatedTime is neither null nor an RFC 3339 string (upstream's decoder fails: 422
 * Invalid payload); else 0. Does not retain ts. */
int kt_status_normalize(json_t *ts);

#endif
