/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/kube.c - REST verbs over one curl easy handle per client, and Status decoding.
 *
 * Builds paths and queries, rate-limits, sends, caps the response body, retries 429 (and
 * 5xx with Retry-After) a bounded number of times, and turns metav1.Status into a kt_err.
 * Watches live in kube_watch.c; configuration in kube_config.c. */
#include "common/kube/kube.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/json.h"
#include "common/base/jsoncut.h"
#include "common/kube/kube_internal.h"
#include "common/base/mem.h"

#define RETRY_MAX 3
#define RETRY_AFTER_MAX_S 10

const struct kt_kube_gvr KT_GVR_CONFIGMAPS = {
    .group = "", .version = "v1", .resource = "configmaps"};
const struct kt_kube_gvr KT_GVR_SECRETS = {.group = "", .version = "v1", .resource = "secrets"};
const struct kt_kube_gvr KT_GVR_NAMESPACES = {
    .group = "", .version = "v1", .resource = "namespaces"};
const struct kt_kube_gvr KT_GVR_EVENTS = {.group = "", .version = "v1", .resource = "events"};
const struct kt_kube_gvr KT_GVR_EVENTS_V1 = {
    .group = "events.k8s.io", .version = "v1", .resource = "events"};
const struct kt_kube_gvr KT_GVR_LEASES = {
    .group = "coordination.k8s.io", .version = "v1", .resource = "leases"};
const struct kt_kube_gvr KT_GVR_JOBSETS = {
    .group = "jobset.x-k8s.io", .version = "v1alpha2", .resource = "jobsets"};
const struct kt_kube_gvr KT_GVR_PRIORITYCLASSES = {
    .group = "scheduling.k8s.io", .version = "v1", .resource = "priorityclasses"};
const struct kt_kube_gvr KT_GVR_TRAINJOBS = {
    .group = "trainer.kubeflow.org", .version = "v1alpha1", .resource = "trainjobs"};
const struct kt_kube_gvr KT_GVR_TRAININGRUNTIMES = {
    .group = "trainer.kubeflow.org", .version = "v1alpha1", .resource = "trainingruntimes"};
const struct kt_kube_gvr KT_GVR_CLUSTERTRAININGRUNTIMES = {
    .group = "trainer.kubeflow.org", .version = "v1alpha1", .resource = "clustertrainingruntimes"};

/* ---- paths ------------------------------------------------------------------------------ */

static bool segment_ok(const char *s)
{
    if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
        return false;
    }
    return strpbrk(s, "/%?# ") == NULL;
}

int kt_kube_path(struct kt_buf *b, const struct kt_kube_gvr *gvr, const char *ns, const char *name,
                 const char *subresource, struct kt_err *err)
{
    if (!segment_ok(gvr->version) || !segment_ok(gvr->resource) ||
        (gvr->group && *gvr->group && !segment_ok(gvr->group))) {
        return kt_err_set(err, KT_EINVAL, "invalid resource type");
    }
    if ((ns && *ns && !segment_ok(ns)) || (name && !segment_ok(name)) ||
        (subresource && !segment_ok(subresource))) {
        return kt_err_set(err, KT_EINVAL, "invalid namespace, name or subresource \"%s\"",
                          name ? name : (ns ? ns : ""));
    }
    if (subresource && !name) {
        return kt_err_set(err, KT_EINVAL, "a subresource needs a name");
    }
    if (gvr->group && *gvr->group) {
        if (kt_buf_printf(b, err, "/apis/%s/%s", gvr->group, gvr->version) < 0) {
            return -1;
        }
    } else if (kt_buf_printf(b, err, "/api/%s", gvr->version) < 0) {
        return -1;
    }
    if (ns && *ns && kt_buf_printf(b, err, "/namespaces/%s", ns) < 0) {
        return -1;
    }
    if (kt_buf_printf(b, err, "/%s", gvr->resource) < 0) {
        return -1;
    }
    if (name && kt_buf_printf(b, err, "/%s", name) < 0) {
        return -1;
    }
    if (subresource && kt_buf_printf(b, err, "/%s", subresource) < 0) {
        return -1;
    }
    return 0;
}

int kt_kube_query_escape(struct kt_buf *b, const char *s, struct kt_err *err)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_' || c == '.' || c == '~';
        char enc[3] = {'%', hex[c >> 4], hex[c & 15]};
        if (kt_buf_append(b, plain ? (const char *)s : enc, plain ? 1 : 3, err) < 0) {
            return -1;
        }
    }
    return 0;
}

/* ---- Status ----------------------------------------------------------------------------- */

enum kt_code kt_kube_code_of(long http)
{
    switch (http) {
    case 400:
    case 422:
        return KT_EINVAL;
    case 401:
    case 403:
        return KT_EFORBIDDEN;
    case 404:
        return KT_ENOENT;
    case 408:
    case 504:
        return KT_ETIMEOUT;
    case 409:
        return KT_ECONFLICT;
    case 410:
        return KT_EGONE;
    case 413:
        return KT_ETOOBIG;
    case 415:
        return KT_EUNSUPPORTED;
    default:
        return KT_EHTTP;
    }
}

static void copy_str(char *dst, size_t cap, const char *src, size_t len)
{
    size_t i;
    size_t n = len < cap - 1 ? len : cap - 1;

    /* Control bytes would corrupt one-line logs. */
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c < 0x20 ? ' ' : (char)c;
    }
    dst[n] = '\0';
}

void kt__kube_status_from_json(const json_t *o, struct kt_kube_status *st)
{
    const char *reason = kt_json_str(o, "reason", "");
    const char *msg = kt_json_str(o, "message", "");
    json_t *details = json_object_get(o, "details");
    int64_t code = kt_json_int(o, "code", 0);
    int64_t ra = kt_json_int(details, "retryAfterSeconds", 0);

    if (code > 0 && code < 1000) {
        st->code = (long)code;
    }
    copy_str(st->reason, sizeof(st->reason), reason, strlen(reason));
    copy_str(st->message, sizeof(st->message), msg, strlen(msg));
    st->retry_after_s = ra > 0 && ra < 86400 ? (long)ra : 0;
}

int kt_kube_status_decode(long http, const char *body, size_t len, struct kt_kube_status *st,
                          struct kt_err *err)
{
    json_t *o;
    int rc = -1;

    memset(st, 0, sizeof(*st));
    st->http = http;
    st->code = http;
    o = len > 0 ? kt_json_parse(body, len, NULL) : NULL;
    if (json_is_object(o) && strcmp(kt_json_str(o, "kind", ""), "Status") == 0) {
        kt__kube_status_from_json(o, st);
        rc = 0;
    } else {
        copy_str(st->message, sizeof(st->message), body ? body : "", body ? len : 0);
        kt_err_set(err, KT_EPARSE, "response body is not a Status");
    }
    json_decref(o);
    return rc;
}

int kt_kube_status_err(const struct kt_kube_status *st, struct kt_err *err)
{
    const char *reason = st->reason[0] ? st->reason : "";

    return kt_err_set(err, kt_kube_code_of(st->code), "HTTP %ld%s%s: %s", st->code,
                      *reason ? " " : "", reason, st->message[0] ? st->message : "(no message)");
}

/* ---- the client ------------------------------------------------------------------------- */

/* Debian's libcurl links libssh2, whose initialisation (run unconditionally by
 * curl_global_init) initialises all of OpenSSL's libcrypto: ciphers, digests, engines and
 * its configuration file, about 2.9 MB of touched pages and 400 KB of private memory for a
 * library we never use (the clients speak https only). libssh2 skips that when it was first
 * initialised with LIBSSH2_INIT_NO_CRYPTO (0x1; a count, so curl's later libssh2_init(0)
 * only increments it). Reached through the already-loaded library (RTLD_NOLOAD): a libcurl
 * without libssh2 makes this a no-op. */
static void libssh2_without_crypto(void)
{
    void *lib = dlopen("libssh2.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void *sym = lib ? dlsym(lib, "libssh2_init") : NULL;
    int (*init)(int) = NULL;

    if (sym) {
        memcpy(&init, &sym, sizeof(init)); /* object to function pointer, as POSIX allows */
        init(0x1);
    }
    if (lib) {
        dlclose(lib);
    }
}

static void global_init(void)
{
    libssh2_without_crypto();
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void kt__kube_global_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, global_init);
}

struct kt_kube_client *kt_kube_client_new(struct kt_kube_config *cfg)
{
    struct kt_kube_client *c = kt_xcalloc(1, sizeof(*c));

    kt__kube_global_init();
    c->cfg = cfg;
    atomic_init(&c->retries, 0);
    c->easy = curl_easy_init();
    KT_ASSERT(c->easy != NULL);
    kt_buf_init(&c->body, cfg->body_max);
    kt_buf_init(&c->sendbuf, cfg->body_max);
    return c;
}

void kt_kube_client_free(struct kt_kube_client *c)
{
    if (!c) {
        return;
    }
    curl_easy_cleanup(c->easy);
    kt_buf_release(&c->body);
    kt_buf_release(&c->sendbuf);
    free(c);
}

const struct kt_kube_status *kt_kube_client_last_status(const struct kt_kube_client *c)
{
    return &c->last;
}

void kt_kube_client_set_timeouts(struct kt_kube_client *c, long request_ms, long connect_ms)
{
    c->request_ms = request_ms;
    c->connect_ms = connect_ms;
}

unsigned long kt_kube_client_retries(const struct kt_kube_client *c)
{
    return atomic_load(&c->retries);
}

void kt__kube_easy_tls(const struct kt_kube_config *cfg, CURL *easy)
{
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    if (cfg->ca_file) {
        curl_easy_setopt(easy, CURLOPT_CAINFO, cfg->ca_file);
        /* Trust only the cluster CA: without this libcurl-gnutls also loads the whole system
         * store into every handle (about 1.1 MB of trust-list memory each). */
        curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    }
    if (cfg->cert_file) {
        curl_easy_setopt(easy, CURLOPT_SSLCERT, cfg->cert_file);
        curl_easy_setopt(easy, CURLOPT_SSLKEY, cfg->key_file);
    }
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, cfg->connect_ms);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "kt/0.1");
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct kt_kube_client *c = ud;
    size_t n = size * nmemb;

    if (kt_buf_append(&c->body, ptr, n, NULL) < 0) {
        c->body_too_big = true;
        return 0;
    }
    return n;
}

struct req {
    const char *method;
    const char *path_query;
    const char *content_type;
    const char *body;
    size_t body_len;
    const char *accept; /* NULL = application/json */
    /* Cut from a 2xx body: a merged rule list (kt__kube_cut_rules; borrowed; NULL: none). */
    const struct kt_json_cut_rule *rules;
};

static struct curl_slist *make_headers(struct kt_kube_client *c, const struct req *r, bool reread)
{
    struct curl_slist *h = NULL;
    char *auth = kt__kube_auth_header(c->cfg, reread);
    char *ct;

    if (r->accept) {
        char *acc = kt_xasprintf("Accept: %s", r->accept);
        h = curl_slist_append(h, acc);
        free(acc);
    } else {
        h = curl_slist_append(h, "Accept: application/json");
    }
    /* Never send "Expect: 100-continue": one round trip less for large bodies. */
    h = curl_slist_append(h, "Expect:");
    if (r->content_type) {
        ct = kt_xasprintf("Content-Type: %s", r->content_type);
        h = curl_slist_append(h, ct);
        free(ct);
    }
    if (auth) {
        h = curl_slist_append(h, auth);
        free(auth);
    }
    return h;
}

/* The response buffer and the request's (sendbuf) stay from one request to the next: one
 * allocation per client instead of a doubling series (64 bytes .. the body's size) per
 * request, whose large chunks made glibc consolidate its free lists (malloc_consolidate) on
 * every request. One grown past BODY_KEEP (a LIST page) is given back. */
#define BODY_KEEP (256u * 1024)

/* One attempt. Returns the CURLcode; *http gets the status (0 when none). */
static CURLcode perform_once(struct kt_kube_client *c, const struct req *r, bool reread, long *http,
                             long *retry_after)
{
    CURL *e = c->easy;
    struct curl_slist *h = make_headers(c, r, reread);
    char *url = kt_xasprintf("%s%s", c->cfg->server, r->path_query);
    curl_off_t ra = -1;
    CURLcode rc;

    curl_easy_reset(e);
    kt__kube_easy_tls(c->cfg, e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
    /* HTTP/1.1: a client sends one request at a time on its own connection, so HTTP/2's
     * streams would buy nothing here and its framing and header compression cost CPU on
     * every request (docs/benchmarks.md "Reconciler CPU: the decoder"). Watches keep HTTP/2
     * (informer.c: one connection for all of a loop's watches). */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    if (strcmp(r->method, "GET") != 0 && r->body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    }
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->request_ms ? c->request_ms : c->cfg->request_ms);
    if (c->connect_ms) {
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf);
    c->errbuf[0] = '\0';
    kt_buf_recycle(&c->body, c->cfg->body_max, BODY_KEEP);
    c->body_too_big = false;
    kt__kube_rate_wait(c->cfg);
    rc = curl_easy_perform(e);
    *http = 0;
    *retry_after = -1;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, http);
    if (curl_easy_getinfo(e, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra >= 0) {
        *retry_after = ra > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S : (long)ra;
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(h);
    free(url);
    return rc;
}

static int curl_err(struct kt_kube_client *c, CURLcode rc, struct kt_err *err)
{
    const char *detail = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);

    if (c->body_too_big) {
        return kt_err_set(err, KT_ETOOBIG, "response body over %zu bytes", c->cfg->body_max);
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        return kt_err_set(err, KT_ETIMEOUT, "%s", detail);
    }
    return kt_err_set(err, KT_EIO, "%s", detail);
}

static void sleep_s(long s)
{
    struct timespec ts = {.tv_sec = s};

    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Whether to try again after a failed response, and after how long. */
bool kt__kube_should_retry(long http, long retry_after, int attempt, bool *reread, long *wait_s)
{
    if (attempt + 1 >= RETRY_MAX) {
        return false;
    }
    if (http == 401 && !*reread) {
        *reread = true;
        *wait_s = 0;
        return true;
    }
    if (http == 429 || (http >= 500 && retry_after >= 0)) {
        *wait_s = retry_after >= 0 ? retry_after : 1;
        return true;
    }
    return false;
}

const struct kt_json_cut_rule *kt__kube_cut_rules(const struct kt_kube_config *cfg,
                                                  const struct kt_json_cut_rule *cut,
                                                  struct kt_json_cut_rule out[KT__KUBE_CUT_ROOM])
{
    const struct kt_json_cut_rule *from[2] = {
        cfg->drop_managed_fields ? KT_JSON_CUT_MANAGED_FIELDS : NULL, cut};
    size_t n = 0;

    for (size_t k = 0; k < 2; k++) {
        for (const struct kt_json_cut_rule *r = from[k];
             r && r->parent && r->member && n < KT_JSON_CUT_RULES_MAX; r++) {
            out[n++] = *r;
        }
    }
    out[n] = (struct kt_json_cut_rule)KT_JSON_CUT_END;
    return n > 0 ? out : NULL;
}

static int finish(struct kt_kube_client *c, const struct req *r, long http, json_t **out,
                  struct kt_err *err)
{
    if (http >= 200 && http < 300) {
        if (out && c->body.len > 0 && r->rules) {
            kt_json_cut_members(c->body.data, &c->body.len, r->rules);
        }
        if (out && c->body.len > 0) {
            *out = kt_json_parse(c->body.data, c->body.len, err);
            if (!*out) {
                return kt_err_prefix(err, "response body");
            }
        }
        return 0;
    }
    kt_kube_status_decode(http, c->body.data, c->body.len, &c->last, NULL);
    return kt_kube_status_err(&c->last, err);
}

/* kt_kube_request with r (its own Accept when r->accept is set). */
static int request(struct kt_kube_client *c, const struct req *r, json_t **out, struct kt_err *err)
{
    bool reread = false;
    long http = 0;
    long retry_after = -1;
    long wait_s = 0;
    CURLcode rc;
    int attempt;

    if (out) {
        *out = NULL;
    }
    memset(&c->last, 0, sizeof(c->last));
    for (attempt = 0;; attempt++) {
        rc = perform_once(c, r, reread, &http, &retry_after);
        if (rc != CURLE_OK) {
            curl_err(c, rc, err);
            return kt_err_prefix(err, "%s %.*s", r->method, (int)strcspn(r->path_query, "?"),
                                 r->path_query);
        }
        if ((http >= 200 && http < 300) ||
            !kt__kube_should_retry(http, retry_after, attempt, &reread, &wait_s)) {
            break;
        }
        atomic_fetch_add(&c->retries, 1);
        sleep_s(wait_s);
    }
    if (finish(c, r, http, out, err) < 0) {
        /* The path without its query: the Status message matters more than selectors. */
        return kt_err_prefix(err, "%s %.*s", r->method, (int)strcspn(r->path_query, "?"),
                             r->path_query);
    }
    return 0;
}

int kt_kube_request(struct kt_kube_client *c, const struct kt_kube_http_req *req, json_t **out,
                    struct kt_err *err)
{
    struct kt_json_cut_rule rules[KT__KUBE_CUT_ROOM];
    struct req r = {.method = req->method,
                    .path_query = req->path_query,
                    .content_type = req->content_type,
                    .body = req->body,
                    .body_len = req->body_len,
                    .rules = kt__kube_cut_rules(c->cfg, req->cut, rules)};

    return request(c, &r, out, err);
}

/* ---- verbs ------------------------------------------------------------------------------ */

static int path_of(struct kt_buf *b, const struct kt_kube_gvr *gvr, const char *ns,
                   const char *name, const char *sub, struct kt_err *err)
{
    kt_buf_init(b, 8192);
    return kt_kube_path(b, gvr, ns, name, sub, err);
}

int kt_kube_get(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                const char *name, json_t **out, struct kt_err *err)
{
    struct kt_buf p;
    int rc = -1;

    *out = NULL;
    if (path_of(&p, gvr, ns, name, NULL, err) == 0) {
        rc = kt_kube_request(c, &(struct kt_kube_http_req){.method = "GET", .path_query = p.data},
                             out, err);
    }
    kt_buf_release(&p);
    return rc;
}

/* Send obj as the JSON body of req (its method, path and content type; body unset). */
static int send_obj(struct kt_kube_client *c, struct kt_kube_http_req req, const json_t *obj,
                    json_t **out, struct kt_err *err)
{
    struct kt_buf *body = &c->sendbuf;
    int rc = -1;

    kt_buf_recycle(body, c->cfg->body_max, BODY_KEEP);
    if (kt_json_dump_buf(obj, body, err) == 0) {
        req.body = body->data;
        req.body_len = body->len;
        rc = kt_kube_request(c, &req, out, err);
    }
    return rc;
}

/* A verb that sends an object: method with a body of ctype to ref's path, then query. */
struct obj_verb {
    const char *method, *ctype;
    struct kt_kube_ref ref;
    const char *query;                  /* "?..." or NULL */
    const struct kt_json_cut_rule *cut; /* a rule list cut from the answer; NULL: none */
};

static int obj_verb(struct kt_kube_client *c, const struct obj_verb *v, const json_t *obj,
                    json_t **out, struct kt_err *err)
{
    struct kt_buf p;
    int rc = -1;

    if (out) {
        *out = NULL;
    }
    if (path_of(&p, v->ref.gvr, v->ref.ns, v->ref.name, v->ref.subresource, err) < 0 ||
        (v->query && kt_buf_puts(&p, v->query, err) < 0)) {
        goto out;
    }
    rc = send_obj(
        c,
        (struct kt_kube_http_req){
            .method = v->method, .path_query = p.data, .content_type = v->ctype, .cut = v->cut},
        obj, out, err);
out:
    kt_buf_release(&p);
    return rc;
}

int kt_kube_create(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                   const json_t *obj, json_t **out, struct kt_err *err)
{
    struct obj_verb v = {
        .method = "POST", .ctype = "application/json", .ref = {.gvr = gvr, .ns = ns}};
    return obj_verb(c, &v, obj, out, err);
}

int kt_kube_update(struct kt_kube_client *c, const struct kt_kube_ref *ref, const json_t *obj,
                   json_t **out, struct kt_err *err)
{
    struct obj_verb v = {.method = "PUT", .ctype = "application/json", .ref = *ref};
    return obj_verb(c, &v, obj, out, err);
}

int kt_kube_merge_patch(struct kt_kube_client *c, const struct kt_kube_ref *ref,
                        const json_t *patch, json_t **out, struct kt_err *err)
{
    struct obj_verb v = {.method = "PATCH", .ctype = "application/merge-patch+json", .ref = *ref};
    return obj_verb(c, &v, patch, out, err);
}

int kt_kube_apply(struct kt_kube_client *c, const struct kt_kube_apply_req *req, json_t **out,
                  struct kt_err *err)
{
    const char *field_manager = req->field_manager;
    struct kt_buf q;
    int rc = -1;

    if (out) {
        *out = NULL;
    }
    if (!field_manager || !*field_manager) {
        return kt_err_set(err, KT_EINVAL, "server-side apply needs a field manager");
    }
    kt_buf_init(&q, 4096);
    if (kt_buf_puts(&q, "?fieldManager=", err) == 0 &&
        kt_kube_query_escape(&q, field_manager, err) == 0 &&
        (!req->force || kt_buf_puts(&q, "&force=true", err) == 0)) {
        struct obj_verb v = {.method = "PATCH",
                             .ctype = "application/apply-patch+yaml",
                             .ref = {.gvr = req->gvr,
                                     .ns = req->ns,
                                     .name = req->name,
                                     .subresource = req->subresource},
                             .query = q.data,
                             .cut = req->cut};
        rc = obj_verb(c, &v, req->obj, out, err);
    }
    kt_buf_release(&q);
    return rc;
}

int kt_kube_delete(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                   const char *name, const struct kt_kube_delete_opts *opts, struct kt_err *err)
{
    json_t *body = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "DeleteOptions");
    json_t *pre = json_object();
    int rc;

    if (opts && opts->uid) {
        json_object_set_new(pre, "uid", json_string(opts->uid));
    }
    if (opts && opts->resource_version) {
        json_object_set_new(pre, "resourceVersion", json_string(opts->resource_version));
    }
    if (json_object_size(pre) > 0) {
        json_object_set(body, "preconditions", pre);
    }
    if (opts && opts->propagation_policy) {
        json_object_set_new(body, "propagationPolicy", json_string(opts->propagation_policy));
    }
    json_decref(pre);
    struct obj_verb v = {.method = "DELETE",
                         .ctype = "application/json",
                         .ref = {.gvr = gvr, .ns = ns, .name = name}};
    rc = obj_verb(c, &v, body, NULL, err);
    json_decref(body);
    return rc;
}

/* ---- list ------------------------------------------------------------------------------- */

/* Append "?a=b&c=d" for the set options of o (and cont, a continue token). */
int kt__kube_list_query(struct kt_buf *b, const struct kt_kube_list_opts *o, const char *cont,
                        enum kt__kube_query q, struct kt_err *err)
{
    bool watch = q == KT__KUBE_QUERY_WATCH;
    char sep = '?';
    const char *keys[] = {"labelSelector", "fieldSelector", "resourceVersion", "continue"};
    const char *vals[] = {o ? o->label_selector : NULL, o ? o->field_selector : NULL,
                          o ? o->resource_version : NULL, cont};
    size_t i;

    for (i = 0; i < 4; i++) {
        if (!vals[i] || !*vals[i]) {
            continue;
        }
        if (kt_buf_printf(b, err, "%c%s=", sep, keys[i]) < 0 ||
            kt_kube_query_escape(b, vals[i], err) < 0) {
            return -1;
        }
        sep = '&';
    }
    if (o && !watch && o->limit > 0 && kt_buf_printf(b, err, "%climit=%ld", sep, o->limit) < 0) {
        return -1;
    }
    if (o && !watch && o->limit > 0) {
        sep = '&';
    }
    if (watch) {
        if (kt_buf_printf(b, err, "%cwatch=true", sep) < 0) {
            return -1;
        }
        sep = '&';
        if (o && o->allow_bookmarks && kt_buf_puts(b, "&allowWatchBookmarks=true", err) < 0) {
            return -1;
        }
        if (o && o->timeout_seconds > 0 &&
            kt_buf_printf(b, err, "&timeoutSeconds=%ld", o->timeout_seconds) < 0) {
            return -1;
        }
    }
    return 0;
}

/* What a metadata-only LIST asks for; a server that cannot serve it answers 406. */
#define ACCEPT_METADATA "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

/* One page of the list of where->gvr in where->ns (name and subresource unused), cut by
 * rules (a merged rule list; NULL: none). */
static int list_page(struct kt_kube_client *c, const struct kt_kube_ref *where,
                     const struct kt_kube_list_opts *o, const struct kt_json_cut_rule *rules,
                     const char *cont, json_t **page, struct kt_err *err)
{
    struct kt_buf p;
    int rc = -1;

    if (path_of(&p, where->gvr, where->ns, NULL, NULL, err) == 0 &&
        kt__kube_list_query(&p, o, cont, KT__KUBE_QUERY_LIST, err) == 0) {
        struct req r = {.method = "GET",
                        .path_query = p.data,
                        .accept = o->metadata_only ? ACCEPT_METADATA : NULL,
                        .rules = rules};
        rc = request(c, &r, page, err);
    }
    kt_buf_release(&p);
    if (rc == 0 && json_is_null(json_object_get(*page, "items"))) {
        /* a PartialObjectMetadataList says "items": null when nothing matched */
        json_object_set_new(*page, "items", json_array());
    }
    if (rc == 0 && !json_is_array(json_object_get(*page, "items"))) {
        json_decref(*page);
        *page = NULL;
        rc = kt_err_set(err, KT_EPARSE, "list response without items");
    }
    return rc;
}

/* Replace each item of items by each(item) (an item each returns NULL for becomes null). */
static void map_items(json_t *items, json_t *(*each)(json_t *, void *), void *ud)
{
    size_t i;
    json_t *v;

    json_array_foreach(items, i, v)
    {
        json_t *kept = each(json_incref(v), ud);
        json_array_set_new(items, i, kept ? kept : json_null());
    }
}

static int list_all(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                    const struct kt_kube_list_opts *o, const struct kt_json_cut_rule *rules,
                    json_t **out, struct kt_err *err)
{
    json_t *all = NULL;
    json_t *page = NULL;
    char *cont = NULL;
    int rc = -1;

    for (;;) {
        if (list_page(c, &(struct kt_kube_ref){.gvr = gvr, .ns = ns}, o, rules, cont, &page, err) <
            0) {
            goto out;
        }
        free(cont);
        cont = NULL;
        if (o->each) {
            map_items(json_object_get(page, "items"), o->each, o->each_ud);
        }
        if (!all) {
            all = json_incref(page);
        } else {
            json_array_extend(json_object_get(all, "items"), json_object_get(page, "items"));
            json_object_set(all, "metadata", json_object_get(page, "metadata"));
        }
        const char *next = kt_json_str(kt_json_path(page, "metadata"), "continue", "");
        if (*next) {
            cont = kt_xstrdup(next);
        }
        json_decref(page);
        page = NULL;
        if (!cont) {
            break;
        }
    }
    json_object_del(kt_json_path(all, "metadata"), "continue");
    *out = all;
    all = NULL;
    rc = 0;
out:
    free(cont);
    json_decref(all);
    return rc;
}

int kt__kube_list(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                  const struct kt_kube_list_opts *opts, const struct kt_json_cut_rule *rules,
                  json_t **out, struct kt_err *err)
{
    struct kt_kube_list_opts o = {0};

    *out = NULL;
    if (opts) {
        o = *opts;
    }
    if (list_all(c, gvr, ns, &o, rules, out, err) == 0) {
        return 0;
    }
    if (err && err->code == KT_EGONE && o.limit > 0) {
        /* The continue token expired mid-way: one consistent list without paging. */
        o.limit = 0;
        return list_all(c, gvr, ns, &o, rules, out, err);
    }
    return -1;
}

int kt_kube_list(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                 const struct kt_kube_list_opts *opts, json_t **out, struct kt_err *err)
{
    struct kt_json_cut_rule rules[KT__KUBE_CUT_ROOM];

    return kt__kube_list(c, gvr, ns, opts,
                         kt__kube_cut_rules(c->cfg, opts ? opts->cut : NULL, rules), out, err);
}

/* ---- events and time -------------------------------------------------------------------- */

void kt_kube_time_now(char out[40], enum kt_kube_time_prec prec)
{
    struct timespec ts;
    struct tm tm;
    char base[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    if (prec == KT_KUBE_TIME_MICRO) {
        snprintf(out, 40, "%.20s.%06uZ", base, (unsigned)(ts.tv_nsec / 1000) % 1000000u);
    } else {
        snprintf(out, 40, "%.20sZ", base);
    }
}

static json_t *object_ref(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    json_t *ref = json_object();
    const char *keys[] = {"namespace", "name", "uid", "resourceVersion"};
    size_t i;

    json_object_set_new(ref, "apiVersion", json_string(kt_json_str(obj, "apiVersion", "")));
    json_object_set_new(ref, "kind", json_string(kt_json_str(obj, "kind", "")));
    for (i = 0; i < 4; i++) {
        const char *v = kt_json_str(md, keys[i], NULL);
        if (v) {
            json_object_set_new(ref, keys[i], json_string(v));
        }
    }
    return ref;
}

int kt_kube_event_create(struct kt_kube_client *c, const struct kt_kube_event *ev,
                         struct kt_err *err)
{
    const json_t *md = json_object_get(ev->involved, "metadata");
    const char *name = kt_json_str(md, "name", NULL);
    const char *ns = kt_json_str(md, "namespace", "");
    struct timespec ts;
    char now[40];
    char *evname;
    json_t *e;
    int rc;

    if (!name || !ev->reason || !ev->type || !ev->component) {
        return kt_err_set(err, KT_EINVAL, "event needs an object name, type, reason, component");
    }
    if (!*ns) {
        ns = "default";
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    evname = kt_xasprintf("%s.%016llx", name,
                          (unsigned long long)ts.tv_sec * 1000000000ull +
                              (unsigned long long)ts.tv_nsec);
    kt_kube_time_now(now, KT_KUBE_TIME_SECONDS);
    e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:i, s:s}",
                  "apiVersion", "v1", "kind", "Event", "metadata", "name", evname, "namespace", ns,
                  "involvedObject", object_ref(ev->involved), "type", ev->type, "reason",
                  ev->reason, "message", ev->message ? ev->message : "", "source", "component",
                  ev->component, "firstTimestamp", now, "lastTimestamp", now, "count", 1,
                  "reportingComponent", ev->component);
    if (ev->instance) {
        json_object_set_new(e, "reportingInstance", json_string(ev->instance));
    }
    rc = kt_kube_create(c, &KT_GVR_EVENTS, ns, e, NULL, err);
    json_decref(e);
    free(evname);
    return rc;
}
