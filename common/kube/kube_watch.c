/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/kube_watch.c - watch streams: line splitting, event decoding, the blocking watch.
 *
 * A watch response is newline-delimited JSON events. Decoding is pure (fuzzed); the stream
 * state machine is shared with the informer loop, which drives the same easy-handle setup
 * from a curl multi handle. Reconnecting and relisting are the caller's (informer.c). */
#include "common/kube/kube.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/jsoncut.h"
#include "common/kube/kube_internal.h"
#include "common/base/mem.h"

/* ---- lines ------------------------------------------------------------------------------ */

void kt_kube_lines_init(struct kt_kube_lines *l, size_t max_line)
{
    kt_buf_init(&l->line, max_line);
    l->overflow = false;
}

void kt_kube_lines_release(struct kt_kube_lines *l)
{
    kt_buf_release(&l->line);
}

static bool blank(const char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (p[i] != ' ' && p[i] != '\r' && p[i] != '\t') {
            return false;
        }
    }
    return true;
}

int kt_kube_lines_feed(struct kt_kube_lines *l, const char *data, size_t n,
                       int (*fn)(void *ud, const char *line, size_t len), void *ud,
                       struct kt_err *err)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl ? (size_t)(nl - data) : n;
        int rc;

        if (l->overflow) {
            return kt_err_set(err, KT_ETOOBIG, "watch line over %zu bytes", l->line.max);
        }
        if (nl && l->line.len == 0 && take <= l->line.max) {
            /* A whole line in this chunk: read it where it is, no copy. */
            rc = take > 0 && !blank(data, take) ? fn(ud, data, take) : 0;
            data += take + 1;
            n -= take + 1;
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (kt_buf_append(&l->line, data, take, err) < 0) {
            l->overflow = true;
            return kt_err_set(err, KT_ETOOBIG, "watch line over %zu bytes", l->line.max);
        }
        data += take;
        n -= take;
        if (!nl) {
            break;
        }
        data++;
        n--;
        rc = 0;
        if (l->line.len > 0 && !blank(l->line.data, l->line.len)) {
            rc = fn(ud, l->line.data, l->line.len);
        }
        kt_buf_reset(&l->line);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- events ----------------------------------------------------------------------------- */

static const struct {
    const char *name;
    enum kt_kube_event_type type;
} event_types[] = {
    {"ADDED", KT_WATCH_ADDED},       {"MODIFIED", KT_WATCH_MODIFIED}, {"DELETED", KT_WATCH_DELETED},
    {"BOOKMARK", KT_WATCH_BOOKMARK}, {"ERROR", KT_WATCH_ERROR},
};

void kt_kube_watch_event_release(struct kt_kube_watch_event *ev)
{
    if (!ev) {
        return;
    }
    json_decref(ev->object);
    ev->object = NULL;
    ev->rv = NULL;
}

static int event_type_of(const char *s, enum kt_kube_event_type *out)
{
    size_t i;

    for (i = 0; i < KT_ARRAY_SIZE(event_types); i++) {
        if (strcmp(s, event_types[i].name) == 0) {
            *out = event_types[i].type;
            return 0;
        }
    }
    return -1;
}

int kt_kube_watch_decode_line(const char *line, size_t len, struct kt_kube_watch_event *ev,
                              struct kt_err *err)
{
    json_t *root;
    json_t *obj;
    const char *type;
    int rc = -1;

    memset(ev, 0, sizeof(*ev));
    root = kt_json_parse(line, len, err);
    if (!root) {
        return kt_err_prefix(err, "watch event");
    }
    type = kt_json_str(root, "type", NULL);
    obj = json_object_get(root, "object");
    if (!json_is_object(root) || !type) {
        kt_err_set(err, KT_EINVAL, "watch event without a type");
        goto out;
    }
    if (event_type_of(type, &ev->type) < 0) {
        kt_err_set(err, KT_EINVAL, "unknown watch event type \"%.40s\"", type);
        goto out;
    }
    if (!json_is_object(obj)) {
        kt_err_set(err, KT_EINVAL, "watch event %s without an object", type);
        goto out;
    }
    ev->object = json_incref(obj);
    if (ev->type == KT_WATCH_ERROR) {
        int64_t code = kt_json_int(obj, "code", 500);
        ev->status.http = 200;
        ev->status.code = code > 0 && code < 1000 ? (long)code : 500;
        kt__kube_status_from_json(obj, &ev->status);
    } else {
        ev->rv = kt_json_str(json_object_get(obj, "metadata"), "resourceVersion", NULL);
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* ---- the stream state machine ----------------------------------------------------------- */

/* line without the members s->rules name (metadata.managedFields when the config drops them,
 * the stream's own rules), when it has any (in s->cut, a copy; line itself may be curl's).
 * The byte search first: a line that cannot hold one is neither copied nor walked. */
static const char *cut_line(struct kt__kube_stream *s, const char *line, size_t *len)
{
    if (!kt_json_may_cut(line, *len, s->rules)) {
        return line;
    }
    kt_buf_reset(&s->cut);
    if (kt_buf_try_reserve(&s->cut, *len, NULL) < 0 ||
        !kt_json_cut_members_to(line, *len, s->rules, s->cut.data, &s->cut.len)) {
        return line;
    }
    *len = s->cut.len;
    return s->cut.data;
}

/* kt_kube_lines_feed's callback: decode one event and hand it to fn. */
static int on_line(void *ud, const char *line, size_t len)
{
    struct kt__kube_stream *s = ud;
    struct kt_kube_watch_event ev;
    int rc;

    line = cut_line(s, line, &len);
    if (kt_kube_watch_decode_line(line, len, &ev, &s->err) < 0) {
        s->failed = true;
        return -1;
    }
    if (ev.type == KT_WATCH_ERROR) {
        s->error_event = true;
        s->status = ev.status;
        kt_kube_watch_event_release(&ev);
        return -1;
    }
    if (ev.rv && *ev.rv) {
        free(s->last_rv);
        s->last_rv = kt_xstrdup(ev.rv);
    }
    rc = s->fn ? s->fn(s->ud, &ev) : 0;
    kt_kube_watch_event_release(&ev);
    if (rc != 0) {
        s->fn_stopped = true;
        return -1;
    }
    return 0;
}

static size_t on_stream(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct kt__kube_stream *s = ud;
    size_t n = size * nmemb;

    if (s->http == 0) {
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->http);
    }
    if (s->http != 200) {
        /* An error body is a Status; keep its start only. */
        if (kt_buf_append(&s->errbody, ptr, n, NULL) < 0) {
            kt_buf_init(&s->errbody, 64 * 1024);
        }
        return n;
    }
    if (kt_kube_lines_feed(&s->lines, ptr, n, on_line, s, &s->err) != 0) {
        if (s->lines.overflow) {
            s->failed = true;
        }
        return 0;
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct kt__kube_stream *s = ud;

    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return s->stop && atomic_load(s->stop) ? 1 : 0;
}

void kt__kube_stream_init(struct kt__kube_stream *s, struct kt_kube_config *cfg, CURL *easy,
                          const struct kt__kube_stream_opts *o)
{
    long timeout_seconds = o->timeout_seconds;
    char *auth = kt__kube_auth_header(cfg, false);
    /* A safety net above the server-side timeout; the API server's own default is at most
     * twice --min-request-timeout (1800 s). */
    long client_s = timeout_seconds > 0 ? timeout_seconds + 60 : 2 * 1800 + 60;

    memset(s, 0, sizeof(*s));
    kt_kube_lines_init(&s->lines, cfg->line_max);
    kt_buf_init(&s->errbody, 64 * 1024);
    s->easy = easy;
    s->fn = o->fn;
    s->ud = o->ud;
    s->stop = o->stop;
    s->rules = o->rules;
    kt_buf_init(&s->cut, cfg->line_max);
    s->url = kt_xasprintf("%s%s", cfg->server, o->path_query);
    s->headers = curl_slist_append(NULL, "Accept: application/json");
    if (auth) {
        s->headers = curl_slist_append(s->headers, auth);
        free(auth);
    }
    curl_easy_reset(easy);
    kt__kube_easy_tls(cfg, easy);
    curl_easy_setopt(easy, CURLOPT_URL, s->url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, client_s * 1000);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, 10L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, s);
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, s->errbuf);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, s);
}

int kt__kube_stream_result(struct kt__kube_stream *s, CURLcode rc, struct kt_err *err)
{
    if (s->error_event) {
        kt_kube_status_err(&s->status, err);
        return kt_err_prefix(err, "watch ERROR event");
    }
    if (s->failed) {
        if (err) {
            *err = s->err;
        }
        return -1;
    }
    if (s->fn_stopped || (s->stop && atomic_load(s->stop))) {
        return 0;
    }
    if (rc != CURLE_OK) {
        return kt_err_set(err, rc == CURLE_OPERATION_TIMEDOUT ? KT_ETIMEOUT : KT_EIO, "watch: %s",
                          s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc));
    }
    if (s->http == 0) {
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->http);
    }
    if (s->http != 200) {
        struct kt_kube_status st;
        kt_kube_status_decode(s->http, s->errbody.data, s->errbody.len, &st, NULL);
        kt_kube_status_err(&st, err);
        return kt_err_prefix(err, "watch");
    }
    return 0;
}

void kt__kube_stream_release(struct kt__kube_stream *s)
{
    if (s->easy) {
        curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, NULL);
    }
    kt_kube_lines_release(&s->lines);
    kt_buf_release(&s->errbody);
    kt_buf_release(&s->cut);
    curl_slist_free_all(s->headers);
    s->headers = NULL;
    free(s->url);
    s->url = NULL;
    free(s->last_rv);
    s->last_rv = NULL;
}

/* ---- the blocking watch ----------------------------------------------------------------- */

int kt_kube_watch(struct kt_kube_client *c, const struct kt_kube_watch_req *req, struct kt_err *err)
{
    const struct kt_kube_list_opts *opts = req->opts;
    struct kt_json_cut_rule rules[KT__KUBE_CUT_ROOM]; /* merged at open, kept for the watch */
    struct kt__kube_stream s;
    struct kt_buf p;
    CURLcode rc;
    int ret = -1;

    kt_buf_init(&p, 8192);
    if (kt_kube_path(&p, req->gvr, req->ns, NULL, NULL, err) < 0 ||
        kt__kube_list_query(&p, opts, NULL, KT__KUBE_QUERY_WATCH, err) < 0) {
        kt_buf_release(&p);
        return -1;
    }
    kt__kube_stream_init(&s, c->cfg, c->easy,
                         &(struct kt__kube_stream_opts){
                             .path_query = p.data,
                             .timeout_seconds = opts ? opts->timeout_seconds : 0,
                             .fn = req->fn,
                             .ud = req->ud,
                             .stop = req->stop,
                             .rules = kt__kube_cut_rules(c->cfg, opts ? opts->cut : NULL, rules),
                         });
    kt__kube_rate_wait(c->cfg);
    rc = curl_easy_perform(c->easy);
    ret = kt__kube_stream_result(&s, rc, err);
    if (req->last_rv && s.last_rv) {
        free(*req->last_rv);
        *req->last_rv = s.last_rv;
        s.last_rv = NULL;
    }
    kt__kube_stream_release(&s);
    kt_buf_release(&p);
    return ret;
}
