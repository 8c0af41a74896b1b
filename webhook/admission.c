/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/admission.c - AdmissionReview v1 decoding and encoding; see admission.h. */
#include "webhook/admission.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/crypto/crypto.h"
#include "common/base/buf.h"
#include "common/base/err.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "webhook/review_json.h"

/* True for "application/json", any case, optionally followed by parameters. */
static bool is_json_type(const char *ct)
{
    static const char want[] = "application/json";
    const size_t n = sizeof(want) - 1;

    if (!ct || strncasecmp(ct, want, n) != 0) {
        return false;
    }
    return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

static int parse_op(const char *s, enum kt_admission_op *op)
{
    static const char *const names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

    for (size_t i = 0; s && i < KT_ARRAY_SIZE(names); i++) {
        if (strcmp(s, names[i]) == 0) {
            *op = (enum kt_admission_op)i;
            return 0;
        }
    }
    return -1;
}

/* request.object / request.oldObject: an object, or absent/null. */
static int get_object(const json_t *req, const char *key, json_t **out, struct kt_err *err)
{
    json_t *o = json_object_get(req, key);

    *out = NULL;
    if (!o || json_is_null(o)) {
        return 0;
    }
    if (!json_is_object(o)) {
        return kt_err_set(err, KT_EINVAL, "request.%s must be an object", key);
    }
    *out = o;
    return 0;
}

static int decode_request(struct kt_admission_ctx *ctx, const json_t *req, struct kt_err *err)
{
    const char *uid = json_string_value(json_object_get(req, "uid"));
    const char *op = json_string_value(json_object_get(req, "operation"));
    const json_t *kind = json_object_get(req, "kind");

    if (!uid || !uid[0]) {
        return kt_err_set(err, KT_EINVAL, "request.uid is required");
    }
    ctx->uid = uid;
    if (parse_op(op, &ctx->op) != 0) {
        return kt_err_set(err, KT_EINVAL,
                          "request.operation must be CREATE, UPDATE, DELETE or "
                          "CONNECT");
    }
    ctx->kind = kt_json_str(kind, "kind", "");
    ctx->dry_run = kt_json_bool(req, "dryRun", false);
    if (get_object(req, "object", &ctx->object, err) != 0 ||
        get_object(req, "oldObject", &ctx->old_object, err) != 0) {
        return -1;
    }
    return 0;
}

enum kt_admission_bad kt_admission_decode(struct kt_admission_ctx *ctx, const char *content_type,
                                          const char *body, size_t len, struct kt_err *err)
{
    if (!is_json_type(content_type)) {
        kt_err_set(err, KT_EUNSUPPORTED, "contentType=%s, expected application/json",
                   content_type ? content_type : "");
        return KT_ADMISSION_BAD_CONTENT_TYPE;
    }
    if (len == 0) {
        kt_err_set(err, KT_EINVAL, "request body is empty");
        return KT_ADMISSION_BAD_BODY;
    }
    /* The fast reader builds only what is read here; anything it does not handle exactly like
     * jansson (and every malformed body) goes through kt_json_parse for jansson's answer. */
    ctx->review = kt_review_json_parse(body, len);
    if (!ctx->review) {
        ctx->review = kt_json_parse(body, len, err);
    }
    if (!ctx->review) {
        kt_err_prefix(err, "couldn't decode AdmissionReview");
        return KT_ADMISSION_BAD_BODY;
    }
    const char *av = kt_json_str(ctx->review, "apiVersion", "");
    const char *kind = kt_json_str(ctx->review, "kind", "");
    if (!json_is_object(ctx->review) || strcmp(av, KT_ADMISSION_API_VERSION) != 0 ||
        strcmp(kind, KT_ADMISSION_KIND) != 0) {
        kt_err_set(err, KT_EINVAL,
                   "unsupported AdmissionReview apiVersion \"%s\" kind \"%s\": want "
                   "apiVersion " KT_ADMISSION_API_VERSION " kind " KT_ADMISSION_KIND,
                   av, kind);
        return KT_ADMISSION_BAD_BODY;
    }
    const json_t *req = json_object_get(ctx->review, "request");
    if (!json_is_object(req)) {
        kt_err_set(err, KT_EINVAL, "AdmissionReview has no request");
        return KT_ADMISSION_BAD_BODY;
    }
    if (decode_request(ctx, req, err) != 0) {
        return KT_ADMISSION_BAD_BODY;
    }
    return KT_ADMISSION_OK;
}

/* ------------------------------------------------------------------ setters */

static void set_result(struct kt_admission_ctx *ctx, bool allowed, int code, const char *reason,
                       const char *message)
{
    free(ctx->resp.message);
    json_decref(ctx->resp.patch);
    ctx->resp.patch = NULL;
    ctx->resp.allowed = allowed;
    ctx->resp.code = code;
    ctx->resp.reason = reason;
    ctx->resp.message = message && message[0] ? kt_xstrdup(message) : NULL;
}

void kt_admission_allow(struct kt_admission_ctx *ctx)
{
    set_result(ctx, true, 200, NULL, NULL);
}

void kt_admission_deny(struct kt_admission_ctx *ctx, const char *message)
{
    set_result(ctx, false, 403, "Forbidden", message);
}

void kt_admission_error(struct kt_admission_ctx *ctx, int code, const char *message)
{
    set_result(ctx, false, code, NULL, message);
}

void kt_admission_patch(struct kt_admission_ctx *ctx, json_t *patch)
{
    set_result(ctx, true, 200, NULL, NULL);
    if (json_array_size(patch) > 0) {
        ctx->resp.patch = patch;
    } else {
        json_decref(patch);
    }
}

void kt_admission_warn(struct kt_admission_ctx *ctx, const char *warning)
{
    kt_strv_push(&ctx->resp.warnings, warning);
}

/* ------------------------------------------------------------------ encoding */

/* A JSON string of s; text that is not valid UTF-8 (a truncated error message) gets its
 * non-ASCII bytes replaced by '?'. */
static json_t *jstr(const char *s)
{
    json_t *j = json_string(s);

    if (j) {
        return j;
    }
    char *c = kt_xstrdup(s);
    for (char *p = c; *p; p++) {
        if ((unsigned char)*p >= 0x80) {
            *p = '?';
        }
    }
    j = json_string(c);
    free(c);
    return j;
}

/* The response is written straight into one buffer, in controller-runtime's field order (no
 * JSON tree: a review's answer is a few fixed keys). Appends fail only past the cap, which a
 * response never reaches. */
#define OUT_MAX ((size_t)-1 / 2)

static void put(struct kt_buf *b, const char *s)
{
    int ok = kt_buf_append(b, s, strlen(s), NULL);
    KT_ASSERT(ok == 0);
}

/* s as a JSON string escaped like Go's encoding/json (see jstr for text that is not UTF-8). */
static void put_str(struct kt_buf *b, const char *s)
{
    json_t *j = jstr(s);
    int ok = kt_json_dump_go_buf(j, b, NULL);

    KT_ASSERT(ok == 0);
    json_decref(j);
}

/* "status":{"metadata":{},"message":...,"reason":...,"code":N} */
static void put_status(struct kt_buf *b, int code, const char *reason, const char *message)
{
    char num[32];

    put(b, "\"status\":{\"metadata\":{}");
    if (message) {
        put(b, ",\"message\":");
        put_str(b, message);
    }
    if (reason) {
        put(b, ",\"reason\":");
        put_str(b, reason);
    }
    snprintf(num, sizeof(num), ",\"code\":%d}", code);
    put(b, num);
}

/* The review's opening through "response":{"uid":...,"allowed":...,"status":{...} */
static void put_head(struct kt_buf *b, const char *uid, bool allowed, int code, const char *reason,
                     const char *message)
{
    kt_buf_init(b, OUT_MAX);
    put(b, "{\"kind\":\"" KT_ADMISSION_KIND "\",\"apiVersion\":\"" KT_ADMISSION_API_VERSION
           "\",\"response\":{\"uid\":");
    put_str(b, uid);
    put(b, allowed ? ",\"allowed\":true," : ",\"allowed\":false,");
    put_status(b, code, reason, message);
}

static char *put_end(struct kt_buf *b, size_t *len)
{
    put(b, "}}\n");
    return kt_buf_take(b, len);
}

static void put_patch(struct kt_buf *b, const json_t *patch)
{
    char *text = kt_json_dump_go(patch);
    char *b64 = kt_crypto_base64_encode(text, strlen(text));

    put(b, ",\"patch\":");
    put_str(b, b64);
    put(b, ",\"patchType\":\"JSONPatch\"");
    free(b64);
    free(text);
}

char *kt_admission_encode(const struct kt_admission_ctx *ctx, size_t *len)
{
    const struct kt_admission_resp *rs = &ctx->resp;
    struct kt_buf b;

    put_head(&b, ctx->uid ? ctx->uid : "", rs->allowed, rs->code ? rs->code : 200, rs->reason,
             rs->message);
    if (rs->patch) {
        put_patch(&b, rs->patch);
    }
    if (rs->warnings.len > 0) {
        put(&b, ",\"warnings\":[");
        for (size_t i = 0; i < rs->warnings.len; i++) {
            put(&b, i ? "," : "");
            put_str(&b, rs->warnings.items[i]);
        }
        put(&b, "]");
    }
    return put_end(&b, len);
}

char *kt_admission_encode_error(int code, const char *message, size_t *len)
{
    struct kt_buf b;

    put_head(&b, "", false, code, NULL, message);
    return put_end(&b, len);
}

void kt_admission_release(struct kt_admission_ctx *ctx)
{
    free(ctx->resp.message);
    json_decref(ctx->resp.patch);
    kt_strv_release(&ctx->resp.warnings);
    json_decref(ctx->review);
    memset(ctx, 0, sizeof(*ctx));
}
