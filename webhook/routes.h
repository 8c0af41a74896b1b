/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/routes.h - the four admission webhooks at upstream's paths
 * (docs/internals/upstream.md#webhook-configurations).
 *
 * Each route decodes the AdmissionReview (admission.h), hands the object to the shared
 * validators and defaulter (common/validate/validate.h) with the runtimes and JobSets of the store
 * (store.h), and encodes the verdict. No business rule lives here. */
#ifndef KT_WEBHOOK_ROUTES_H
#define KT_WEBHOOK_ROUTES_H

#include <stdatomic.h>
#include <time.h>

#include "common/framework/framework.h"
#include "common/net/httpd.h"
#include "common/net/metrics.h"
#include "webhook/admission.h"
#include "webhook/store.h"

#define KT_PATH_MUTATE_TRAINJOB "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
#define KT_PATH_VALIDATE_TRAINJOB "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define KT_PATH_VALIDATE_TR "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime"
#define KT_PATH_VALIDATE_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"

#define KT_WROUTES_N 4

struct kt_wroutes;
/* One route's handler argument (private). */
struct kt_wroute_binding {
    struct kt_wroutes *r;
    size_t index;
    atomic_long inflight;
};

/* Shared by every request thread; read-only after kt_wroutes_register. */
struct kt_wroutes {
    struct kt_wstore *store; /* borrowed */
    struct kt_framework fw;
    struct kt_metric *m_reviews; /* kt_webhook_admission_reviews_total{webhook,verdict} */
    /* kubeflow_trainer_webhook_validation_total{resource,operation,result} */
    struct kt_metric *m_decisions;
    /* controller-runtime's webhook metrics, same names and labels (webhook = the path) */
    struct kt_metric *m_cr_total;    /* controller_runtime_webhook_requests_total{code,webhook} */
    struct kt_metric *m_cr_latency;  /* controller_runtime_webhook_latency_seconds{webhook} */
    struct kt_metric *m_cr_inflight; /* controller_runtime_webhook_requests_in_flight{webhook} */
    time_t (*now)(void);             /* clock; NULL = time() */
    struct kt_wroute_binding bind[KT_WROUTES_N];
};

/* Prepare the routes over store; metrics may be NULL. Does not retain anything but store
 * and the metrics registry (which must outlive r). */
void kt_wroutes_init(struct kt_wroutes *r, struct kt_wstore *store, struct kt_metrics *metrics);

/* POST handlers for the four paths on h. r must outlive h. */
void kt_wroutes_register(struct kt_wroutes *r, struct kt_httpd *h);

/* Run one review on an already decoded context (for tests and the fuzzer): path selects the
 * webhook; fills ctx's response. Returns the verdict label ("allowed", "denied", "patched",
 * "error"), a static string. */
const char *kt_wroutes_review(struct kt_wroutes *r, const char *path, struct kt_admission_ctx *ctx);

#endif
