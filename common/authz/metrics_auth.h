/* SPDX-License-Identifier: Apache-2.0 */
/* common/authz/metrics_auth.h - authentication and authorization of the metrics endpoint, as
 * controller-runtime's filters.WithAuthenticationAndAuthorization does (upstream's
 * `metrics.auth.enabled`, docs/internals/upstream.md#configuration-file).
 *
 * Every request to the metrics server must carry `Authorization: Bearer TOKEN`. The token is
 * checked with a TokenReview (authentication.k8s.io/v1), then the user it names must be
 * allowed `get` (the lower-cased method) on the nonResourceURL of the request path by a
 * SubjectAccessReview (authorization.k8s.io/v1). Answers, with upstream's texts:
 *   no token, a malformed header, or a token the API server does not authenticate
 *                                  -> 401 "Unauthorized"
 *   the TokenReview itself failed  -> 500 "Authentication failed"
 *   the SubjectAccessReview failed -> 500 "Authorization for user NAME failed"
 *   not allowed                    -> 403 "Authorization denied for user NAME"
 *   allowed                        -> GET /metrics: the metrics text; other paths 404.
 * Results are cached (keyed by a SHA-256 of the token, never the token) like the delegating
 * authenticator/authorizer controller-runtime configures: TokenReview results 1 min,
 * allowed 5 min, denied 30 s; failed reviews are not cached. The cache holds at most
 * KT_MAUTH_CACHE_MAX entries (expired ones go first, then the oldest), so a scrape loop costs
 * the API server one review pair per TTL and a flood of made-up tokens cannot grow memory.
 * kt_metrics_auth_reviews_total{kind="tokenreview"|"subjectaccessreview"} counts the reviews.
 * Thread-safe: cached answers are served from any thread while one review is in flight (one
 * client under a mutex). Give it a kube config of its own: the QPS budget is per config, and
 * requests with made-up tokens must not spend the daemon's. Used by both daemons' metrics
 * servers (kt-reconciler and kt-webhook). */
#ifndef KT_AUTHZ_METRICS_AUTH_H
#define KT_AUTHZ_METRICS_AUTH_H

#include "common/net/httpd.h"
#include "common/kube/kube.h"
#include "common/net/metrics.h"

#define KT_MAUTH_CACHE_MAX 1024
#define KT_MAUTH_AUTHN_TTL_S 60.0
#define KT_MAUTH_ALLOW_TTL_S 300.0
#define KT_MAUTH_DENY_TTL_S 30.0
#define KT_MAUTH_REVIEW_TIMEOUT_MS 10000L /* controller-runtime's TokenAccessReviewTimeout */

struct kt_mauth; /* opaque */

/* A filter for the metrics of m, reviewing through cfg (see above: not the reconciler's).
 * Borrows cfg and m: both must outlive the result. Caller owns the result; free with
 * kt_mauth_free(). Cannot fail (aborts on OOM). */
struct kt_mauth *kt_mauth_new(struct kt_kube_config *cfg, struct kt_metrics *m);

/* Accepts NULL. */
void kt_mauth_free(struct kt_mauth *a);

/* The route handler (kt_httpd_handler_fn; arg is a struct kt_mauth *): register it for every
 * method and path ("*", "/" "*") on a server without built-in routes. */
void kt_mauth_handle(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg);

/* Reviews sent to the API server so far (TokenReviews + SubjectAccessReviews), for tests and
 * logs. Thread-safe. */
unsigned long kt_mauth_reviews(struct kt_mauth *a);

#endif
