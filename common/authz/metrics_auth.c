/* SPDX-License-Identifier: Apache-2.0 */
/* common/authz/metrics_auth.c - TokenReview + SubjectAccessReview in front of /metrics. */
#include "common/authz/metrics_auth.h"

#include <ctype.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/crypto.h"
#include "common/base/log.h"
#include "common/base/mem.h"

#define LOG "metrics-auth"
#define TEXT "text/plain; charset=utf-8"
#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SARS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

/* One cached review: a TokenReview (user != NULL when authenticated) or a decision. */
struct entry {
    uint8_t key[KT_SHA256_SIZE];
    double expires, added; /* monotonic seconds */
    bool used;
    bool ok;      /* authenticated / allowed */
    json_t *user; /* TokenReview status.user when authenticated; owned */
};

struct kt_mauth {
    struct kt_metrics *metrics; /* borrowed */
    pthread_mutex_t cache_mu;   /* guards cache */
    pthread_mutex_t client_mu;  /* guards client: one review in flight */
    struct kt_kube_client *client;
    struct entry cache[KT_MAUTH_CACHE_MAX];
    atomic_ulong reviews;
    struct kt_metric *m_reviews; /* kt_metrics_auth_reviews_total{kind} */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct kt_mauth *kt_mauth_new(struct kt_kube_config *cfg, struct kt_metrics *m)
{
    struct kt_mauth *a = kt_xcalloc(1, sizeof(*a));
    a->metrics = m;
    a->m_reviews = kt_metrics_counter(m, "kt_metrics_auth_reviews_total",
                                      "TokenReviews and SubjectAccessReviews sent for metrics "
                                      "requests (cache misses)",
                                      (const char *[]){"kind"}, 1);
    pthread_mutex_init(&a->cache_mu, NULL);
    pthread_mutex_init(&a->client_mu, NULL);
    a->client = kt_kube_client_new(cfg);
    kt_kube_client_set_timeouts(a->client, KT_MAUTH_REVIEW_TIMEOUT_MS, 0);
    return a;
}

void kt_mauth_free(struct kt_mauth *a)
{
    if (!a) {
        return;
    }
    for (size_t i = 0; i < KT_MAUTH_CACHE_MAX; i++) {
        json_decref(a->cache[i].user);
    }
    kt_kube_client_free(a->client);
    pthread_mutex_destroy(&a->cache_mu);
    pthread_mutex_destroy(&a->client_mu);
    free(a);
}

unsigned long kt_mauth_reviews(struct kt_mauth *a)
{
    return atomic_load(&a->reviews);
}

/* ---- the cache (callers hold a->cache_mu) ---- */

static struct entry *cache_find(struct kt_mauth *a, const uint8_t key[KT_SHA256_SIZE], double now)
{
    for (size_t i = 0; i < KT_MAUTH_CACHE_MAX; i++) {
        struct entry *e = &a->cache[i];
        if (e->used && e->expires > now && memcmp(e->key, key, KT_SHA256_SIZE) == 0) {
            return e;
        }
    }
    return NULL;
}

/* Store a result; steals user. A free or expired slot first, else the oldest. */
static void cache_put(struct kt_mauth *a, const uint8_t key[KT_SHA256_SIZE], bool ok, json_t *user,
                      double ttl, double now)
{
    struct entry *slot = NULL;
    for (size_t i = 0; i < KT_MAUTH_CACHE_MAX && !slot; i++) {
        if (!a->cache[i].used || a->cache[i].expires <= now) {
            slot = &a->cache[i];
        }
    }
    for (size_t i = 0; i < KT_MAUTH_CACHE_MAX && !slot; i++) {
        if (i == 0 || a->cache[i].added < slot->added) {
            slot = &a->cache[i];
        }
    }
    json_decref(slot->user);
    memcpy(slot->key, key, KT_SHA256_SIZE);
    slot->used = true;
    slot->ok = ok;
    slot->user = user;
    slot->added = now;
    slot->expires = now + ttl;
}

/* key = SHA-256 of the parts joined by NUL bytes. */
static void make_key(const char *const *parts, size_t n, uint8_t out[KT_SHA256_SIZE])
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        len += strlen(parts[i]) + 1;
    }
    char *buf = kt_xmalloc(len), *p = buf;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(parts[i]) + 1;
        memcpy(p, parts[i], l);
        p += l;
    }
    kt_crypto_sha256(buf, len, out);
    explicit_bzero(buf, len);
    free(buf);
}

/* ---- reviews ---- */

/* Look key up; on a hit *ok gets the result and *user (NULL allowed) a copy of the cached
 * user (caller decrefs): jansson's reference counts are not safe to share between threads. */
static bool lookup(struct kt_mauth *a, const uint8_t key[KT_SHA256_SIZE], bool *ok, json_t **user)
{
    pthread_mutex_lock(&a->cache_mu);
    struct entry *e = cache_find(a, key, now_s());
    if (e) {
        *ok = e->ok;
        if (user) {
            *user = e->user ? json_deep_copy(e->user) : NULL; /* never shared across threads */
        }
    }
    pthread_mutex_unlock(&a->cache_mu);
    return e != NULL;
}

static void store(struct kt_mauth *a, const uint8_t key[KT_SHA256_SIZE], bool ok, json_t *user,
                  double ttl)
{
    pthread_mutex_lock(&a->cache_mu);
    cache_put(a, key, ok, user, ttl, now_s());
    pthread_mutex_unlock(&a->cache_mu);
}

/* POST obj (stolen) to path with the one client; *out as kt_kube_request. */
static int post(struct kt_mauth *a, const char *path, json_t *obj, json_t **out, struct kt_err *err)
{
    char *body = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!body) {
        return kt_err_set(err, KT_EINTERNAL, "cannot encode the review");
    }
    atomic_fetch_add(&a->reviews, 1);
    const char *kind[] = {strcmp(path, TOKENREVIEWS) == 0 ? "tokenreview" : "subjectaccessreview"};
    kt_metric_inc(a->m_reviews, kind);
    pthread_mutex_lock(&a->client_mu);
    int rc = kt_kube_request(a->client,
                             &(struct kt_kube_http_req){.method = "POST",
                                                        .path_query = path,
                                                        .content_type = "application/json",
                                                        .body = body,
                                                        .body_len = strlen(body)},
                             out, err);
    pthread_mutex_unlock(&a->client_mu);
    explicit_bzero(body, strlen(body));
    free(body);
    return rc;
}

/* 1 authenticated (*user: a new reference; caller decrefs), 0 not, -1 the review failed. */
static int authenticate(struct kt_mauth *a, const char *token, json_t **user, struct kt_err *err)
{
    uint8_t key[KT_SHA256_SIZE];
    const char *parts[] = {"authn", token};
    bool ok = false;
    make_key(parts, 2, key);
    *user = NULL;
    if (lookup(a, key, &ok, user)) {
        return ok ? 1 : 0;
    }
    json_t *out = NULL;
    json_t *req = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                            "TokenReview", "spec", "token", token);
    if (!req) {
        return kt_err_set(err, KT_EINTERNAL, "cannot build the TokenReview");
    }
    if (post(a, TOKENREVIEWS, req, &out, err) != 0) {
        return -1;
    }
    json_t *st = json_object_get(out, "status");
    json_t *u = json_object_get(st, "user");
    ok = json_is_true(json_object_get(st, "authenticated")) && json_is_object(u);
    if (ok) {
        *user = json_incref(u);
        store(a, key, true, json_deep_copy(u), KT_MAUTH_AUTHN_TTL_S);
    } else {
        store(a, key, false, NULL, KT_MAUTH_AUTHN_TTL_S);
    }
    json_decref(out);
    return ok ? 1 : 0;
}

/* The SubjectAccessReview for user on path+verb. Caller owns the result. */
static json_t *sar_of(const json_t *user, const char *path, const char *verb)
{
    json_t *spec = json_object();
    const char *name = json_string_value(json_object_get(user, "username"));
    const char *uid = json_string_value(json_object_get(user, "uid"));
    json_object_set_new(spec, "user", json_string(name ? name : ""));
    if (uid && *uid) {
        json_object_set_new(spec, "uid", json_string(uid));
    }
    json_t *groups = json_object_get(user, "groups"), *extra = json_object_get(user, "extra");
    if (json_is_array(groups)) {
        json_object_set_new(spec, "groups", json_deep_copy(groups));
    }
    if (json_is_object(extra)) {
        json_object_set_new(spec, "extra", json_deep_copy(extra));
    }
    json_object_set_new(spec, "nonResourceAttributes",
                        json_pack("{s:s, s:s}", "path", path, "verb", verb));
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "authorization.k8s.io/v1", "kind",
                     "SubjectAccessReview", "spec", spec);
}

/* 1 allowed, 0 denied, -1 the review failed. */
static int authorize(struct kt_mauth *a, const char *token, const json_t *user, const char *path,
                     const char *verb, struct kt_err *err)
{
    uint8_t key[KT_SHA256_SIZE];
    const char *parts[] = {"authz", token, verb, path};
    bool ok = false;
    make_key(parts, 4, key);
    if (lookup(a, key, &ok, NULL)) {
        return ok ? 1 : 0;
    }
    json_t *out = NULL, *req = sar_of(user, path, verb);
    if (!req) {
        return kt_err_set(err, KT_EINVAL, "cannot build the SubjectAccessReview");
    }
    if (post(a, SARS, req, &out, err) != 0) {
        return -1;
    }
    ok = json_is_true(json_object_get(json_object_get(out, "status"), "allowed"));
    json_decref(out);
    store(a, key, ok, NULL, ok ? KT_MAUTH_ALLOW_TTL_S : KT_MAUTH_DENY_TTL_S);
    return ok ? 1 : 0;
}

/* ---- the handler ---- */

/* The bearer token of req as Kubernetes reads it ("Bearer" in any case, one space, the token
 * trimmed), copied (caller frees), or NULL. */
static char *bearer(const struct kt_httpd_request *req)
{
    const char *h = kt_httpd_request_header(req, "Authorization");
    if (!h || strncasecmp(h, "bearer ", 7) != 0) {
        return NULL;
    }
    const char *p = h + 7, *end = p + strlen(p);
    while (*p && isspace((unsigned char)*p)) {
        p++;
    }
    while (end > p && isspace((unsigned char)end[-1])) {
        end--;
    }
    return end > p ? kt_xstrndup(p, (size_t)(end - p)) : NULL;
}

static void answer(struct kt_httpd_response *resp, unsigned status, const char *msg)
{
    char *text = kt_xasprintf("%s\n", msg);
    kt_httpd_response_set(resp, status, TEXT, text);
    kt_httpd_response_header(resp, "X-Content-Type-Options", "nosniff");
    free(text);
}

/* The verdict for token on req: 0 allowed (resp untouched), else resp is filled. */
static int check(struct kt_mauth *a, const char *token, const struct kt_httpd_request *req,
                 struct kt_httpd_response *resp)
{
    struct kt_err err = {0};
    json_t *user = NULL;
    char verb[16] = {0};
    for (size_t i = 0; req->method[i] && i + 1 < sizeof(verb); i++) {
        verb[i] = (char)tolower((unsigned char)req->method[i]);
    }
    int rc = authenticate(a, token, &user, &err);
    if (rc < 0) {
        kt_log_error(LOG, "Authentication failed: %s", err.msg);
        answer(resp, 500, "Authentication failed");
    } else if (rc == 0) {
        /* A refused token is 401 here; see docs/compatibility.md. */
        answer(resp, 401, "Unauthorized");
        rc = -1;
    } else {
        const char *name = json_string_value(json_object_get(user, "username"));
        char *who = kt_xstrdup(name ? name : "");
        rc = authorize(a, token, user, req->path, verb, &err);
        if (rc != 1) {
            char *msg = kt_xasprintf(rc < 0 ? "Authorization for user %s failed"
                                            : "Authorization denied for user %s",
                                     who);
            if (rc < 0) {
                kt_log_error(LOG, "%s: %s", msg, err.msg);
            } else {
                kt_log_debug(LOG, "%s on %s %s", msg, verb, req->path);
            }
            answer(resp, rc < 0 ? 500 : 403, msg);
            free(msg);
            rc = -1;
        } else {
            rc = 0;
        }
        free(who);
    }
    json_decref(user);
    return rc;
}

void kt_mauth_handle(const struct kt_httpd_request *req, struct kt_httpd_response *resp, void *arg)
{
    struct kt_mauth *a = arg;
    char *token = bearer(req);
    if (!token) {
        answer(resp, 401, "Unauthorized");
        return;
    }
    int rc = check(a, token, req, resp);
    explicit_bzero(token, strlen(token));
    free(token);
    if (rc != 0) {
        return;
    }
    if (strcmp(req->path, "/metrics") != 0) {
        answer(resp, 404, "404 page not found");
    } else if (strcmp(req->method, "GET") != 0) {
        answer(resp, 405, "Method Not Allowed");
    } else {
        size_t len = 0;
        char *text = kt_metrics_expose(a->metrics, &len);
        kt_httpd_response_take(resp, 200, KT_METRICS_CONTENT_TYPE, text, len);
    }
}
