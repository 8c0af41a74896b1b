/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/admission.h - AdmissionReview v1 decoding and encoding
 * (docs/internals/upstream.md#webhook-configurations, #error-text).
 *
 * One request = one struct kt_admission_ctx (docs/internals/style.md#one-owner-per-unit-of-work):
 * it owns the decoded review, borrowed views into it (object, oldObject) and the response being
 * built, and has a single release. Nothing here knows a business rule: the routes
 * (webhook/routes.c) call the shared validators and fill the response through the kt_admission_*
 * setters. Pure: no I/O, no clock, no globals; safe on any number of threads with one context each.
 */
#ifndef KT_WEBHOOK_ADMISSION_H
#define KT_WEBHOOK_ADMISSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/base/err.h"
#include "common/base/str.h"

#define KT_ADMISSION_API_VERSION "admission.k8s.io/v1"
#define KT_ADMISSION_KIND "AdmissionReview"

/* What the decoder found wrong with a request body; the HTTP status to answer with. */
enum kt_admission_bad {
    KT_ADMISSION_OK = 0,
    KT_ADMISSION_BAD_CONTENT_TYPE, /* 415 */
    KT_ADMISSION_BAD_BODY          /* 400: empty, malformed JSON, wrong kind/version, no request */
};

enum kt_admission_op { KT_OP_CREATE, KT_OP_UPDATE, KT_OP_DELETE, KT_OP_CONNECT };

/* The response fields of an AdmissionResponse. */
struct kt_admission_resp {
    bool allowed;
    int code;           /* status.code: 200, 403, 400, 500 */
    const char *reason; /* status.reason: "Forbidden" or NULL; static */
    char *message;      /* owned; status.message or NULL */
    json_t *patch;      /* owned JSONPatch array, NULL = none */
    struct kt_strv warnings;
};

/* One request's state. Fill with kt_admission_decode(), release with
 * kt_admission_release(). Touch fields read-only except through the setters. */
struct kt_admission_ctx {
    json_t *review;  /* owned: the whole decoded AdmissionReview (NULL when undecodable) */
    const char *uid; /* borrowed from review: request.uid */
    enum kt_admission_op op;
    const char *kind;   /* borrowed: request.kind.kind ("" when absent) */
    json_t *object;     /* borrowed from review: request.object (NULL when absent/null) */
    json_t *old_object; /* borrowed from review: request.oldObject (NULL when absent/null) */
    bool dry_run;
    struct kt_admission_resp resp;
};

/* Decode body (len bytes, NUL-terminated by the caller is not required) sent with
 * content_type (NULL = none). On KT_ADMISSION_OK ctx is filled. Otherwise the returned code
 * says which HTTP status to send and err holds the message (ctx holds nothing to answer with
 * but must still be released). ctx starts zeroed. Does not retain body. */
enum kt_admission_bad kt_admission_decode(struct kt_admission_ctx *ctx, const char *content_type,
                                          const char *body, size_t len, struct kt_err *err);

/* Response setters. Each replaces what an earlier call set (warnings accumulate). */
void kt_admission_allow(struct kt_admission_ctx *ctx);
/* allowed=false, code 403, reason Forbidden, message (copied). */
void kt_admission_deny(struct kt_admission_ctx *ctx, const char *message);
/* allowed=false, code (400 bad object, 500 internal), message (copied), no reason. */
void kt_admission_error(struct kt_admission_ctx *ctx, int code, const char *message);
/* allowed=true with a JSONPatch; steals patch (an array; an empty one means no patch). */
void kt_admission_patch(struct kt_admission_ctx *ctx, json_t *patch);
/* Append a warning (copied). */
void kt_admission_warn(struct kt_admission_ctx *ctx, const char *warning);

/* The response AdmissionReview as JSON text with a trailing newline, in controller-runtime's
 * field order: {"kind","apiVersion","response":{"uid","allowed","status":{"metadata":{},
 * "message","reason","code"},"patch","patchType","warnings"}}. Caller owns it; free(). *len
 * gets its length. */
char *kt_admission_encode(const struct kt_admission_ctx *ctx, size_t *len);

/* The body for a request that could not be decoded: an AdmissionReview whose response has an
 * empty uid, allowed=false and status {code, message}. Caller owns it; free(). */
char *kt_admission_encode_error(int code, const char *message, size_t *len);

/* Free everything ctx owns and zero it. Accepts a zeroed context. */
void kt_admission_release(struct kt_admission_ctx *ctx);

#endif
