/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/routes.c - the four admission webhooks; see routes.h. */
#include "webhook/routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/types.h"
#include "common/base/godecode.h"
#include "common/base/gotypes.h"
#include "common/base/json.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/plugins/plugins.h"
#include "common/validate/validate.h"

#define LOG "webhook"
#define JSON_TYPE "application/json"

typedef const char *review_fn(struct kt_wroutes *r, struct kt_admission_ctx *ctx);

/* The object must be apiVersion trainer.kubeflow.org/v1alpha1 of kind; else a 400 error. */
static bool object_is(struct kt_admission_ctx *ctx, const char *kind)
{
    const json_t *o = ctx->object;

    if (o && strcmp(kt_json_str(o, "apiVersion", ""), KT_API_VERSION) == 0 &&
        strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
        (!ctx->old_object || strcmp(kt_json_str(ctx->old_object, "kind", ""), kind) == 0)) {
        return true;
    }
    char *msg = kt_xasprintf("request.object must be a %s of apiVersion " KT_API_VERSION, kind);
    kt_admission_error(ctx, 400, msg);
    free(msg);
    return false;
}

/* Upstream decodes the object (and, for a validator's UPDATE, the old object) into its Go type
 * before anything else: a value that does not decode gets 400 with the decoder's text. */
static bool decodes(struct kt_admission_ctx *ctx, const struct kt_godesc *type, bool old_too)
{
    char *msg = kt_go_decode_error(ctx->object, type);
    if (!msg && old_too && ctx->op == KT_OP_UPDATE && ctx->old_object) {
        msg = kt_go_decode_error(ctx->old_object, type);
    }
    if (!msg) {
        return true;
    }
    kt_admission_error(ctx, 400, msg);
    kt_log_warn(LOG, "review failed uid=%s code=400: %s", ctx->uid, msg);
    free(msg);
    return false;
}

/* Deny with the aggregate of res, or allow; warnings either way. */
static const char *verdict(struct kt_admission_ctx *ctx, const struct kt_vresult *res)
{
    for (size_t i = 0; i < res->warnings.len; i++) {
        kt_admission_warn(ctx, res->warnings.items[i]);
    }
    if (res->len == 0) {
        kt_admission_allow(ctx);
        return "allowed";
    }
    char *msg = kt_vresult_string(res);
    kt_admission_deny(ctx, msg);
    free(msg);
    return "denied";
}

static const char *internal_error(struct kt_admission_ctx *ctx, const struct kt_err *err)
{
    int code = err->code == KT_EINVAL || err->code == KT_EPARSE ? 400 : 500;

    kt_admission_error(ctx, code, err->msg);
    kt_log_warn(LOG, "review failed uid=%s code=%d: %s", ctx->uid, code, err->msg);
    return "error";
}

/* ------------------------------------------------------------------ defaulter
 * (docs/internals/upstream.md#trainjob-defaulter) */

static const char *review_default_trainjob(struct kt_wroutes *r, struct kt_admission_ctx *ctx)
{
    if (ctx->op != KT_OP_CREATE && ctx->op != KT_OP_UPDATE) {
        kt_admission_allow(ctx);
        return "allowed";
    }
    if (!object_is(ctx, "TrainJob") || !decodes(ctx, &kt_go_TrainJob, false)) {
        return "error";
    }
    json_t *ops =
        kt_validate_default_patch(ctx->object, ctx->op == KT_OP_UPDATE ? ctx->old_object : NULL,
                                  r->now ? r->now() : time(NULL));
    const char *v = json_array_size(ops) > 0 ? "patched" : "allowed";
    kt_admission_patch(ctx, ops);
    return v;
}

/* ------------------------------------------------------------------ TrainJob
 * (docs/internals/upstream.md#trainjob-validator) */

/* The TrainJob's namespace; fills metadata.namespace from request.namespace when absent. */
static const char *trainjob_ns(struct kt_admission_ctx *ctx)
{
    json_t *md = kt_json_obj_ensure(ctx->object, "metadata");
    const char *ns = kt_json_str(md, "namespace", "");
    const char *req_ns = kt_json_str(json_object_get(ctx->review, "request"), "namespace", "");

    if (!ns[0] && req_ns[0] && md) {
        json_object_set_new(md, "namespace", json_string(req_ns));
        ns = kt_json_str(md, "namespace", "");
    }
    return ns[0] ? ns : "default";
}

static const char *validate_trainjob(struct kt_wroutes *r, struct kt_admission_ctx *ctx,
                                     const struct kt_wsnap *snap)
{
    const char *ns = trainjob_ns(ctx);
    const json_t *ref = kt_json_path(ctx->object, "spec.runtimeRef");
    const json_t *runtimes = NULL;
    json_t *owned = NULL;
    struct kt_err err = {0};
    struct kt_vresult res;
    struct kt_wview wv;
    const char *v;

    /* The CRD defaults apiGroup and kind; the same defaults for a request that lacks them. */
    struct kt_wstore_runtime_ref want = {
        .api_group = kt_json_str(ref, "apiGroup", KT_GROUP),
        .kind = kt_json_str(ref, "kind", "ClusterTrainingRuntime"),
        .name = kt_json_str(ref, "name", ""),
        .ns = ns,
    };
    if (kt_wstore_runtimes_for(r->store, snap, &want, &runtimes, &owned, &err) != 0) {
        return internal_error(ctx, &err);
    }
    kt_wview_init(&wv, r->store, snap);
    kt_vresult_init(&res);
    /* The snapshot's runtimes come decoded; a live-read runtime (owned) is decoded here. */
    const struct kt_vruntimes rts = {
        .runtimes = runtimes, .view = &wv.view, .decoded = owned ? NULL : snap->decoded};
    const json_t *old = ctx->op == KT_OP_UPDATE ? ctx->old_object : NULL;
    int rc = kt_validate_trainjob_webhook(&r->fw, ctx->object, old, &rts, &res, &err);
    if (wv.err_set) {
        v = internal_error(ctx, &wv.err);
    } else if (rc != 0) {
        v = internal_error(ctx, &err);
    } else {
        v = verdict(ctx, &res);
    }
    kt_vresult_release(&res);
    kt_wview_release(&wv);
    json_decref(owned);
    return v;
}

static const char *review_validate_trainjob(struct kt_wroutes *r, struct kt_admission_ctx *ctx)
{
    if (ctx->op != KT_OP_CREATE && ctx->op != KT_OP_UPDATE) {
        kt_admission_allow(ctx);
        return "allowed";
    }
    if (!object_is(ctx, "TrainJob") || !decodes(ctx, &kt_go_TrainJob, true)) {
        return "error";
    }
    struct kt_wsnap *snap = kt_wstore_acquire(r->store);
    const char *v = validate_trainjob(r, ctx, snap);
    kt_wsnap_release(snap);
    return v;
}

/* ------------------------------------------------------------------ runtimes
 * (docs/internals/upstream.md#runtime-validators) */

static const char *review_runtime(struct kt_admission_ctx *ctx, const char *kind,
                                  const struct kt_godesc *type)
{
    struct kt_vresult res;

    if (ctx->op != KT_OP_CREATE && ctx->op != KT_OP_UPDATE) {
        kt_admission_allow(ctx);
        return "allowed";
    }
    if (!object_is(ctx, kind) || !decodes(ctx, type, true)) {
        return "error";
    }
    kt_vresult_init(&res);
    kt_validate_runtime_webhook(ctx->object, ctx->op == KT_OP_UPDATE ? ctx->old_object : NULL,
                                &res);
    const char *v = verdict(ctx, &res);
    kt_vresult_release(&res);
    return v;
}

static const char *review_validate_tr(struct kt_wroutes *r, struct kt_admission_ctx *ctx)
{
    (void)r;
    return review_runtime(ctx, "TrainingRuntime", &kt_go_TrainingRuntime);
}

static const char *review_validate_ctr(struct kt_wroutes *r, struct kt_admission_ctx *ctx)
{
    (void)r;
    return review_runtime(ctx, "ClusterTrainingRuntime", &kt_go_ClusterTrainingRuntime);
}

/* ------------------------------------------------------------------ HTTP */

struct route {
    const char *path;
    const char *webhook; /* metric label: upstream's webhook name */
    review_fn *fn;
    const char *resource; /* metric label: the resource the webhook admits */
};

static const struct route routes[] = {
    {KT_PATH_MUTATE_TRAINJOB, "defaulter.trainjob.trainer.kubeflow.org", review_default_trainjob,
     "trainjobs"},
    {KT_PATH_VALIDATE_TRAINJOB, "validator.trainjob.trainer.kubeflow.org", review_validate_trainjob,
     "trainjobs"},
    {KT_PATH_VALIDATE_TR, "validator.trainingruntime.trainer.kubeflow.org", review_validate_tr,
     "trainingruntimes"},
    {KT_PATH_VALIDATE_CTR, "validator.clustertrainingruntime.trainer.kubeflow.org",
     review_validate_ctr, "clustertrainingruntimes"},
};
#define N_ROUTES (KT_ARRAY_SIZE(routes))
_Static_assert(N_ROUTES == KT_WROUTES_N, "one binding per route");

void kt_wroutes_init(struct kt_wroutes *r, struct kt_wstore *store, struct kt_metrics *metrics)
{
    static const char *const labels[] = {"webhook", "verdict"};
    static const char *const cr_total[] = {"code", "webhook"};
    static const char *const cr_hook[] = {"webhook"};
    static const char *const decision[] = {"resource", "operation", "result"};

    memset(r, 0, sizeof(*r));
    r->store = store;
    kt_framework_default(&r->fw);
    if (!metrics) {
        return;
    }
    r->m_reviews =
        kt_metrics_counter(metrics, "kt_webhook_admission_reviews_total",
                           "AdmissionReviews answered, by webhook and verdict.", labels, 2);
    r->m_decisions = kt_metrics_counter(
        metrics, "kubeflow_trainer_webhook_validation_total",
        "Admission decisions by resource, operation and result (allowed, denied, error, "
        "bad-request).",
        decision, 3);
    kt_metrics_build_info(metrics, "webhook");
    kt_metrics_process(metrics);
    r->m_cr_total =
        kt_metrics_counter(metrics, "controller_runtime_webhook_requests_total",
                           "Total number of admission requests by HTTP status code.", cr_total, 2);
    r->m_cr_latency = kt_metrics_histogram(
        metrics, "controller_runtime_webhook_latency_seconds",
        "Histogram of the latency of processing admission requests", cr_hook, 1, NULL);
    r->m_cr_inflight =
        kt_metrics_gauge(metrics, "controller_runtime_webhook_requests_in_flight",
                         "Current number of admission requests being served.", cr_hook, 1);
}

const char *kt_wroutes_review(struct kt_wroutes *r, const char *path, struct kt_admission_ctx *ctx)
{
    for (size_t i = 0; i < N_ROUTES; i++) {
        if (strcmp(routes[i].path, path) == 0) {
            return routes[i].fn(r, ctx);
        }
    }
    kt_admission_error(ctx, 404, "no webhook at this path");
    return "error";
}

static const char *op_name(const struct kt_admission_ctx *ctx)
{
    static const char *const names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
    return ctx->review && (size_t)ctx->op < KT_ARRAY_SIZE(names) ? names[ctx->op] : "UNKNOWN";
}

static void count(struct kt_wroutes *r, const struct route *rt, const struct kt_admission_ctx *ctx,
                  const char *verdict_label)
{
    if (r->m_reviews) {
        const char *lv[] = {rt->webhook, verdict_label};
        kt_metric_inc(r->m_reviews, lv);
        const char *dv[] = {rt->resource, op_name(ctx), verdict_label};
        kt_metric_inc(r->m_decisions, dv);
    }
}

/* Decode, review, encode; returns the HTTP status sent. */
static unsigned answer(struct kt_wroute_binding *b, const struct kt_httpd_request *req,
                       struct kt_httpd_response *resp)
{
    const struct route *rt = &routes[b->index];
    struct kt_admission_ctx ctx = {0};
    struct kt_err err = {0};
    size_t len = 0;
    char *body;

    enum kt_admission_bad bad =
        kt_admission_decode(&ctx, req->content_type, req->body, req->body_len, &err);
    if (bad != KT_ADMISSION_OK) {
        unsigned status = bad == KT_ADMISSION_BAD_CONTENT_TYPE ? 415 : 400;
        body = kt_admission_encode_error((int)status, err.msg, &len);
        kt_httpd_response_take(resp, status, JSON_TYPE, body, len);
        count(b->r, rt, &ctx, "bad-request");
        kt_log_debug(LOG, "bad request path=%s: %s", req->path, err.msg);
        kt_admission_release(&ctx);
        return status;
    }
    const char *v = rt->fn(b->r, &ctx);
    body = kt_admission_encode(&ctx, &len);
    kt_httpd_response_take(resp, 200, JSON_TYPE, body, len);
    count(b->r, rt, &ctx, v);
    kt_log_debug(LOG, "review path=%s uid=%s verdict=%s", req->path, ctx.uid, v);
    kt_admission_release(&ctx);
    return 200;
}

static void handle(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg)
{
    struct kt_wroute_binding *b = arg;
    const char *path[] = {routes[b->index].path};
    struct timespec t0, t1;
    char code[16];

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (b->r->m_cr_inflight) {
        kt_metric_set(b->r->m_cr_inflight, path, (double)(atomic_fetch_add(&b->inflight, 1) + 1));
    }
    unsigned status = answer(b, req, resp);
    if (b->r->m_cr_inflight) {
        kt_metric_set(b->r->m_cr_inflight, path, (double)(atomic_fetch_sub(&b->inflight, 1) - 1));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        snprintf(code, sizeof(code), "%u", status);
        const char *lv[] = {code, path[0]};
        kt_metric_inc(b->r->m_cr_total, lv);
        kt_metric_observe(b->r->m_cr_latency, path,
                          (double)(t1.tv_sec - t0.tv_sec) +
                              (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
}

void kt_wroutes_register(struct kt_wroutes *r, struct kt_httpd *h)
{
    for (size_t i = 0; i < N_ROUTES; i++) {
        r->bind[i].r = r;
        r->bind[i].index = i;
        atomic_init(&r->bind[i].inflight, 0);
        kt_httpd_route(h, "POST", routes[i].path, handle, &r->bind[i]);
    }
}
