/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/status_server.c - the TrainJobStatus status server; see status_server.h. */
#include "webhook/status_server.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/types.h"
#include "common/base/fielderr.h"
#include "common/base/godecode.h"
#include "common/net/httpd.h"
#include "common/base/json.h"
#include "common/base/log.h"
#include "common/base/mem.h"

#define LOG "status-server"
#define JSON_TYPE "application/json"
#define PATH_PREFIX "/apis/" KT_API_VERSION "/namespaces/"
#define SA_PREFIX "system:serviceaccount:"
#define GRACE_MS 5000u
#define TOKEN_MAX 16384

struct kt_status_srv {
    struct kt_httpd *h;
    struct kt_kube_client *c; /* used only on the server's one HTTP thread */
    char token[TOKEN_MAX];    /* the request's bearer token; that thread only, wiped after use */
};

/* One path segment [p, '/' or NUL) into out (< 254 bytes, non-empty); the end in *end. */
static int segment(const char *p, char *out, const char **end)
{
    size_t n = strcspn(p, "/");
    if (n == 0 || n > 253) {
        return -1;
    }
    memcpy(out, p, n);
    out[n] = '\0';
    *end = p + n;
    return 0;
}

int kt_status_parse_path(const char *path, char *ns, char *name)
{
    const char *p;
    if (strncmp(path, PATH_PREFIX, strlen(PATH_PREFIX)) != 0 ||
        segment(path + strlen(PATH_PREFIX), ns, &p) != 0 || strncmp(p, "/trainjobs/", 11) != 0 ||
        segment(p + 11, name, &p) != 0) {
        return -1;
    }
    return strcmp(p, "/status") == 0 ? 0 : -1;
}

int kt_status_bearer(const char *header, char *out, size_t n)
{
    const char *p = header ? header : "";
    while (isspace((unsigned char)*p)) {
        p++;
    }
    size_t s = strcspn(p, " \t\r\n");
    if (s != 6 || strncasecmp(p, "bearer", 6) != 0) {
        return -1;
    }
    p += s;
    while (isspace((unsigned char)*p)) {
        p++;
    }
    size_t t = strcspn(p, " \t\r\n");
    const char *rest = p + t;
    while (isspace((unsigned char)*rest)) {
        rest++;
    }
    if (t == 0 || t >= n || *rest != '\0') {
        return -1;
    }
    memcpy(out, p, t);
    out[t] = '\0';
    return 0;
}

int kt_status_normalize(json_t *ts)
{
    json_t *t = json_object_get(ts, "lastUpdatedTime");
    char text[32];
    if (!t || json_is_null(t)) {
        return 0;
    }
    if (!json_is_string(t)) {
        return -1;
    }
    char *bad = kt_go_time_error(json_string_value(t));
    if (bad) {
        free(bad);
        return -1;
    }
    /* A time Go parses that kt_go_time_parse does not (a one-digit hour) is kept as sent. */
    if (kt_go_time_text(json_string_value(t), text)) {
        json_object_set_new(ts, "lastUpdatedTime", json_string(text));
    }
    return 0;
}

/* A metav1.Status failure body. */
static void fail(struct kt_httpd_response *resp, unsigned code, const char *reason,
                 const char *message)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                           "v1", "metadata", "status", "Failure", "message", message, "reason",
                           reason, "code", (int)code);
    char *body = st ? kt_json_dump_go(st) : kt_xstrdup("{}");
    json_decref(st);
    kt_httpd_response_take(resp, code, JSON_TYPE, body, strlen(body));
}

/* TokenReview of token for the audience of ns/name. 0 authenticated as a service account of
 * ns with that audience, 1 not, -1 the review itself failed (err). */
static int authenticate(struct kt_status_srv *s, const char *token, const char *ns,
                        const char *name, struct kt_err *err)
{
    char *aud = kt_xasprintf(KT_API_VERSION "/namespaces/%s/trainjobs/%s/status", ns, name);
    json_t *req = json_pack("{s:s, s:s, s:{s:s, s:[s]}}", "apiVersion", "authentication.k8s.io/v1",
                            "kind", "TokenReview", "spec", "token", token, "audiences", aud);
    char *body = req ? kt_json_dump_go(req) : NULL;
    json_t *out = NULL;
    int rc = -1;
    json_decref(req);
    if (!body) {
        rc = 1; /* a token that is not valid UTF-8 */
    } else if (kt_kube_request(s->c,
                               &(struct kt_kube_http_req){
                                   .method = "POST",
                                   .path_query = "/apis/authentication.k8s.io/v1/tokenreviews",
                                   .content_type = JSON_TYPE,
                                   .body = body,
                                   .body_len = strlen(body)},
                               &out, err) == 0) {
        const json_t *st = json_object_get(out, "status");
        const char *user = kt_json_str(json_object_get(st, "user"), "username", "");
        char *want = kt_xasprintf(SA_PREFIX "%s:", ns);
        bool aud_ok = false;
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(st, "audiences"), i, a)
        {
            aud_ok = aud_ok || (json_string_value(a) && strcmp(json_string_value(a), aud) == 0);
        }
        bool ok = json_is_true(json_object_get(st, "authenticated")) && aud_ok &&
                  strncmp(user, want, strlen(want)) == 0 &&
                  strchr(user + strlen(want), ':') == NULL;
        rc = ok ? 0 : 1;
        free(want);
    }
    json_decref(out);
    free(body);
    free(aud);
    return rc;
}

/* SSA of status.trainerStatus; on failure answers resp with upstream's mapping. */
static int apply_status(struct kt_status_srv *s, const char *ns, const char *name, const json_t *ts,
                        struct kt_httpd_response *resp)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:O}}", "apiVersion", KT_API_VERSION,
                            "kind", "TrainJob", "metadata", "name", name, "namespace", ns, "status",
                            "trainerStatus", ts);
    struct kt_err err = {0};
    struct kt_kube_apply_req req = {.gvr = &KT_GVR_TRAINJOBS,
                                    .ns = ns,
                                    .name = name,
                                    .subresource = "status",
                                    .obj = obj,
                                    .field_manager = KT_STATUS_FIELD_MANAGER,
                                    .force = true};
    int rc = kt_kube_apply(s->c, &req, NULL, &err);
    json_decref(obj);
    if (rc == 0) {
        return 0;
    }
    const struct kt_kube_status *st = kt_kube_client_last_status(s->c);
    if (err.code == KT_EINVAL && st->http) {
        fail(resp, 422, "Invalid", st->message);
    } else if (err.code == KT_ENOENT) {
        fail(resp, 404, "NotFound", "Train job not found");
    } else {
        kt_log_warn(LOG, "applying the status of %s/%s: %s", ns, name, err.msg);
        fail(resp, 500, "InternalError", "Internal error");
    }
    return -1;
}

static void handle(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg)
{
    struct kt_status_srv *s = arg;
    char ns[254], name[254];
    struct kt_err err = {0};

    if (strcmp(req->method, "POST") != 0 || kt_status_parse_path(req->path, ns, name) != 0) {
        fail(resp, 404, "NotFound", "Not found");
        return;
    }
    if (req->body_len > KT_STATUS_MAX_BODY) {
        fail(resp, 413, "RequestEntityTooLarge", "Payload too large");
        return;
    }
    if (kt_status_bearer(kt_httpd_request_header(req, "Authorization"), s->token,
                         sizeof(s->token)) != 0) {
        fail(resp, 403, "Forbidden", "Forbidden");
        return;
    }
    int auth = authenticate(s, s->token, ns, name, &err);
    memset(s->token, 0, sizeof(s->token));
    if (auth != 0) {
        if (auth < 0) {
            kt_log_warn(LOG, "token review for %s/%s failed: %s", ns, name, err.msg);
        }
        fail(resp, auth < 0 ? 500 : 403, auth < 0 ? "InternalError" : "Forbidden",
             auth < 0 ? "Internal error" : "Forbidden");
        return;
    }
    json_t *body = kt_json_parse(req->body, req->body_len, NULL);
    json_t *ts = json_object_get(body, "trainerStatus");
    if (!json_is_object(body) || (ts && !json_is_object(ts) && !json_is_null(ts)) ||
        (json_is_object(ts) && kt_status_normalize(ts) != 0)) {
        json_decref(body);
        fail(resp, 422, "Invalid", "Invalid payload");
        return;
    }
    json_t *echo = json_object();
    if (json_is_object(ts)) {
        json_object_set(echo, "trainerStatus", ts);
        if (apply_status(s, ns, name, ts, resp) != 0) {
            json_decref(echo);
            json_decref(body);
            return;
        }
        kt_log_debug(LOG, "trainerStatus of %s/%s updated", ns, name);
    }
    char *text = kt_json_dump_go(echo);
    kt_httpd_response_take(resp, 200, JSON_TYPE, text, strlen(text));
    json_decref(echo);
    json_decref(body);
}

struct kt_status_srv *kt_status_srv_new(const struct kt_status_server_opts *o, struct kt_err *err)
{
    struct kt_httpd_opts ho = {.name = "status-server",
                               .listen = o->listen,
                               .cert_file = o->cert_file,
                               .key_file = o->key_file,
                               /* up to 1 MiB reaches the handler, which answers upstream's 413
                                  above 64 KiB; beyond that the HTTP layer's own 413 */
                               .max_body = 16 * KT_STATUS_MAX_BODY,
                               .threads = 1,
                               .metrics = o->metrics,
                               .https_priority = o->tls_priority};
    struct kt_status_srv *s = kt_xcalloc(1, sizeof(*s));
    s->h = kt_httpd_new(&ho, err);
    if (!s->h) {
        free(s);
        kt_err_prefix(err, "status server");
        return NULL;
    }
    s->c = kt_kube_client_new(o->kube);
    kt_httpd_route(s->h, "*", "/*", handle, s);
    return s;
}

int kt_status_srv_start(struct kt_status_srv *s, struct kt_err *err)
{
    if (kt_httpd_start(s->h, err) != 0) {
        return kt_err_prefix(err, "status server");
    }
    return 0;
}

uint16_t kt_status_srv_port(const struct kt_status_srv *s)
{
    return kt_httpd_port(s->h);
}

bool kt_status_srv_ready(struct kt_status_srv *s)
{
    return kt_httpd_certs_ready(s->h);
}

void kt_status_srv_free(struct kt_status_srv *s)
{
    if (!s) {
        return;
    }
    kt_httpd_quiesce(s->h);
    kt_httpd_stop(s->h, GRACE_MS);
    kt_httpd_free(s->h);
    kt_kube_client_free(s->c);
    free(s);
}
