/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/kube.h - the Kubernetes REST client: config, verbs, Status errors, watches.
 *
 * The only module that talks HTTP to the API server (common/kube*.c and informer*.c are the
 * only libcurl users). TLS verification is always on. It does no caching (see informer.h) and
 * no business rules.
 *
 * Thread model (docs/internals/architecture.md#threads): a struct kt_kube_config is immutable once
 * loaded and may be shared by any number of threads (its token cache and QPS limiter lock
 * internally). A struct kt_kube_client (one curl easy handle, keep-alive) belongs to ONE thread at
 * a time; make one per thread. Everything else here is pure and thread-safe. */
#ifndef KT_KUBE_H
#define KT_KUBE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/buf.h"
#include "common/base/err.h"
#include "common/base/jsoncut.h"

/* ---- configuration ---------------------------------------------------------------------- */

struct kt_kube_config;

/* Load a kubeconfig file (YAML or JSON). context NULL = current-context. Relative file paths
 * in it are resolved against the file's directory. *-data fields are written to 0600 files
 * that are unlinked at once and read through /proc/self/fd (Linux) until
 * kt_kube_config_free() closes them, so nothing is left on disk even after a SIGKILL.
 * insecure-skip-tls-verify is refused (KT_EUNSUPPORTED). Caller owns the result; free with
 * kt_kube_config_free(). NULL + err (KT_EIO, KT_EPARSE, KT_EINVAL, KT_ENOENT for a missing context)
 * on failure. */
KT_MUST_CHECK struct kt_kube_config *
kt_kube_config_from_kubeconfig(const char *path, const char *context, struct kt_err *err);

/* Same from bytes already read; base_dir resolves relative paths (NULL = cwd). Does not retain
 * data. */
KT_MUST_CHECK struct kt_kube_config *kt_kube_config_parse_kubeconfig(const char *data, size_t len,
                                                                     const char *context,
                                                                     const char *base_dir,
                                                                     struct kt_err *err);

/* In-cluster config: KUBERNETES_SERVICE_HOST/PORT, sa_dir/token (re-read whenever the file
 * changes) and sa_dir/ca.crt. sa_dir NULL = /var/run/secrets/kubernetes.io/serviceaccount.
 * Caller owns the result; free with kt_kube_config_free(). */
KT_MUST_CHECK struct kt_kube_config *kt_kube_config_in_cluster(const char *sa_dir,
                                                               struct kt_err *err);

/* kubeconfig_path non-NULL: kt_kube_config_from_kubeconfig(path, NULL); else in-cluster.
 * Caller owns the result; free with kt_kube_config_free(). */
KT_MUST_CHECK struct kt_kube_config *kt_kube_config_load(const char *kubeconfig_path,
                                                         struct kt_err *err);

/* Tuning; call before the config is shared. qps <= 0 disables limiting. Defaults: qps 50,
 * burst 100 (clientConnection, docs/internals/upstream.md#configuration-file), request timeout 30
 * s, connect timeout 10 s, response body cap 64 MiB, watch line cap 16 MiB. */
void kt_kube_config_set_rate(struct kt_kube_config *cfg, double qps, int burst);
/* kt_kube_config_load, then kt_kube_config_set_rate: a config with its own QPS budget (each
 * load has its own limiter, so a caller that must not queue behind others loads its own).
 * Caller owns the result; NULL with err set on failure. */
KT_MUST_CHECK struct kt_kube_config *
kt_kube_config_load_rated(const char *kubeconfig_path, double qps, int burst, struct kt_err *err);
void kt_kube_config_set_timeouts(struct kt_kube_config *cfg, long request_ms, long connect_ms);
void kt_kube_config_set_caps(struct kt_kube_config *cfg, size_t body_max, size_t line_max);
/* drop true: the objects of responses, list pages and watch events of this config's clients,
 * streams and informers arrive without metadata.managedFields, cut from the text before it is
 * parsed (common/base/jsoncut.h): for a process that never reads them. Default false. */
void kt_kube_config_drop_managed_fields(struct kt_kube_config *cfg, bool drop);

/* The server URL ("https://host:port", no trailing slash). Borrowed from cfg. */
const char *kt_kube_config_server(const struct kt_kube_config *cfg);
/* The namespace the kubeconfig context names (or the in-cluster namespace file), "" when
 * none. Borrowed from cfg. */
const char *kt_kube_config_namespace(const struct kt_kube_config *cfg);

/* Free everything, removing the temporary *-data files. Accepts NULL. Every client made from
 * cfg must be freed first. */
void kt_kube_config_free(struct kt_kube_config *cfg);

/* ---- QPS/burst token bucket (pure; the config holds one behind a mutex) ------------------ */

struct kt_kube_ratelimit {
    double qps;    /* tokens per second; <= 0 = unlimited */
    double burst;  /* bucket size */
    double tokens; /* tokens available at time last (may go negative: reserved) */
    double last;   /* seconds, caller's monotonic clock */
};

void kt_kube_ratelimit_init(struct kt_kube_ratelimit *rl, double qps, int burst, double now);
/* Take one token at time now; returns how many seconds the caller must wait first (0 when a
 * token was available). Reservations queue up: N callers at once get increasing waits. */
double kt_kube_ratelimit_reserve(struct kt_kube_ratelimit *rl, double now);

/* ---- resources and paths (pure) --------------------------------------------------------- */

/* A resource type: group "" is the core group (/api/v1). Strings are static. */
struct kt_kube_gvr {
    const char *group;
    const char *version;
    const char *resource; /* plural, lower case */
};

extern const struct kt_kube_gvr KT_GVR_CONFIGMAPS;
extern const struct kt_kube_gvr KT_GVR_SECRETS;
extern const struct kt_kube_gvr KT_GVR_NAMESPACES;
extern const struct kt_kube_gvr KT_GVR_EVENTS;          /* core/v1 */
extern const struct kt_kube_gvr KT_GVR_EVENTS_V1;       /* events.k8s.io/v1 */
extern const struct kt_kube_gvr KT_GVR_LEASES;          /* coordination.k8s.io/v1 */
extern const struct kt_kube_gvr KT_GVR_JOBSETS;         /* jobset.x-k8s.io/v1alpha2 */
extern const struct kt_kube_gvr KT_GVR_PRIORITYCLASSES; /* scheduling.k8s.io/v1 */
extern const struct kt_kube_gvr KT_GVR_TRAINJOBS;       /* trainer.kubeflow.org/v1alpha1 */
extern const struct kt_kube_gvr KT_GVR_TRAININGRUNTIMES;
extern const struct kt_kube_gvr KT_GVR_CLUSTERTRAININGRUNTIMES;

/* Append the URL path of gvr [in namespace ns] [/name [/subresource]] to b. ns NULL or "" =
 * cluster scope (or all namespaces for a list). Names must be non-empty path segments without
 * '/', '%', '?', '#' and not "." or ".." (KT_EINVAL). Does not retain its arguments. */
KT_MUST_CHECK int kt_kube_path(struct kt_buf *b, const struct kt_kube_gvr *gvr, const char *ns,
                               const char *name, const char *subresource, struct kt_err *err);

/* Append s percent-encoded for a query value (RFC 3986 unreserved kept). */
KT_MUST_CHECK int kt_kube_query_escape(struct kt_buf *b, const char *s, struct kt_err *err);

/* ---- Status errors (pure) --------------------------------------------------------------- */

/* What a failed response said. */
struct kt_kube_status {
    long http;          /* HTTP status of the response */
    long code;          /* Status.code, or http when the body was no Status */
    char reason[64];    /* Status.reason ("NotFound", "AlreadyExists", "Conflict", ...) or "" */
    char message[200];  /* Status.message, or the start of a non-Status body */
    long retry_after_s; /* Status.details.retryAfterSeconds, 0 when absent */
};

/* Decode a response body as a metav1.Status (JSON). Always fills st (falling back to the
 * HTTP status and the first bytes of the body); returns 0 when the body was a Status, -1
 * (KT_EPARSE) when not. Does not retain body. */
int kt_kube_status_decode(long http, const char *body, size_t len, struct kt_kube_status *st,
                          struct kt_err *err);

/* Map an HTTP/Status code: 404 KT_ENOENT, 409 KT_ECONFLICT, 410 KT_EGONE, 400/422 KT_EINVAL,
 * 401/403 KT_EFORBIDDEN, 408/504 KT_ETIMEOUT, 415 KT_EUNSUPPORTED, other KT_EHTTP. */
enum kt_code kt_kube_code_of(long http);

/* Fill err from st: code from kt_kube_code_of(st->code), message "HTTP 403 Forbidden:
 * <Status.message>". Always returns -1. */
int kt_kube_status_err(const struct kt_kube_status *st, struct kt_err *err);

/* ---- the client ------------------------------------------------------------------------- */

struct kt_kube_client;

/* A client for one thread. Does not retain ownership of cfg: cfg must outlive the client.
 * Caller owns the result; free with kt_kube_client_free(). Cannot fail (aborts on OOM). */
struct kt_kube_client *kt_kube_client_new(struct kt_kube_config *cfg);
/* Accepts NULL. */
void kt_kube_client_free(struct kt_kube_client *c);

/* The Status of the client's last failed request (http 0 when the last one succeeded or never
 * reached the server). Borrowed from c; valid until its next request. Lets callers tell
 * "AlreadyExists" from "Conflict" (both 409). */
const struct kt_kube_status *kt_kube_client_last_status(const struct kt_kube_client *c);

/* Per-client timeouts for non-watch requests (ms; 0 = the config's), for callers that must
 * give up sooner than everyone else (the leader elector's Lease calls). */
void kt_kube_client_set_timeouts(struct kt_kube_client *c, long request_ms, long connect_ms);

/* How many attempts the retry policy of kt_kube_request has repeated on c so far (for
 * metrics and tests). The only client function that may be called from another thread. */
unsigned long kt_kube_client_retries(const struct kt_kube_client *c);

/* One raw request; callers fill it with designated initialisers. Every pointer is borrowed
 * for the call; nothing is retained. */
struct kt_kube_http_req {
    const char *method;       /* "GET", "POST", "PUT", "PATCH" or "DELETE" */
    const char *path_query;   /* the URL path plus an optional "?query" */
    const char *content_type; /* NULL without a body */
    const char *body;         /* NULL: none */
    size_t body_len;
    /* Members cut from a 2xx body's text before it is parsed (jsoncut.h), besides the
     * managedFields the config drops: a rule list (ends at {NULL, NULL}; NULL: none; at most
     * KT_JSON_CUT_RULES_MAX rules with the config's). */
    const struct kt_json_cut_rule *cut;
};

/* One raw request (req). On 2xx *out (may be NULL) gets the parsed JSON
 * body (NULL for an empty body). Non-2xx: -1 with the decoded Status (kt_kube_status_err).
 * 429, and 5xx responses that carry Retry-After, are retried up to 3 times after
 * min(Retry-After, 10 s). A 401 with a token file re-reads the file and retries once.
 * Network failures: KT_EIO; timeouts: KT_ETIMEOUT; body over the cap: KT_ETOOBIG.
 * Caller owns *out; free with json_decref(). Does not retain its other arguments. */
KT_MUST_CHECK int kt_kube_request(struct kt_kube_client *c, const struct kt_kube_http_req *req,
                                  json_t **out, struct kt_err *err);

/* GET one object. Caller owns *out; free with json_decref(). */
KT_MUST_CHECK int kt_kube_get(struct kt_kube_client *c, const struct kt_kube_gvr *gvr,
                              const char *ns, const char *name, json_t **out, struct kt_err *err);

/* List options; zero = none. Every pointer is borrowed for the call. */
struct kt_kube_list_opts {
    const char *label_selector;
    const char *field_selector;
    const char *resource_version; /* list: "0" = from the watch cache; watch: start point */
    long limit;                   /* page size (list); 0 = no paging */
    long timeout_seconds;         /* watch: server-side timeout; 0 = the server's default */
    bool allow_bookmarks;         /* watch: allowWatchBookmarks=true */
    /* list: ask for a PartialObjectMetadataList (each item is apiVersion meta.k8s.io/v1, kind
     * PartialObjectMetadata and the object's metadata only); a server or kind that cannot
     * serve it fails the LIST (406). */
    bool metadata_only;
    /* list: applied to every item as its page arrives (steals item, returns what to keep in
     * its place), so a paged LIST holds one page of full objects at a time; NULL = none. */
    json_t *(*each)(json_t *item, void *ud);
    void *each_ud;
    /* Members cut from each object's text before it is parsed (jsoncut.h), besides the
     * managedFields the config drops: list pages and watch events. A rule list (ends at
     * {NULL, NULL}; NULL: none; at most KT_JSON_CUT_RULES_MAX rules with the config's). */
    const struct kt_json_cut_rule *cut;
};

/* LIST every page (following metadata.continue) into one object {"kind":"<X>List",
 * "metadata":{"resourceVersion":...},"items":[...]}; the resourceVersion is the one to watch
 * from. A continue token that expired (410) restarts the list once without paging.
 * ns NULL = all namespaces (or cluster scope). Caller owns *out; free with json_decref(). */
KT_MUST_CHECK int kt_kube_list(struct kt_kube_client *c, const struct kt_kube_gvr *gvr,
                               const char *ns, const struct kt_kube_list_opts *opts, json_t **out,
                               struct kt_err *err);

/* POST obj (its metadata.namespace is ignored; ns decides). Caller owns *out (may be NULL:
 * not wanted); free with json_decref(). Does not retain obj. */
KT_MUST_CHECK int kt_kube_create(struct kt_kube_client *c, const struct kt_kube_gvr *gvr,
                                 const char *ns, const json_t *obj, json_t **out,
                                 struct kt_err *err);

/* Which object a verb is about; callers fill it with designated initialisers (a compound
 * literal at the call). Nothing is retained. */
struct kt_kube_ref {
    const struct kt_kube_gvr *gvr;
    const char *ns; /* NULL for a cluster-scoped object */
    const char *name;
    const char *subresource; /* NULL or e.g. "status" */
};

/* PUT obj to name[/subresource] (an update; metadata.resourceVersion, when set, is the
 * optimistic-lock precondition and a mismatch is KT_ECONFLICT). Caller owns *out (may be
 * NULL). Does not retain obj. */
KT_MUST_CHECK int kt_kube_update(struct kt_kube_client *c, const struct kt_kube_ref *ref,
                                 const json_t *obj, json_t **out, struct kt_err *err);

/* What kt_kube_apply sends where; callers fill it with designated initialisers. Every
 * pointer is borrowed for the call. */
struct kt_kube_apply_req {
    const struct kt_kube_gvr *gvr;
    const char *ns; /* NULL for a cluster-scoped object */
    const char *name;
    const char *subresource;   /* NULL or "status" */
    const json_t *obj;         /* the applied configuration */
    const char *field_manager; /* required */
    bool force;                /* take over the fields other managers own */
    /* Members cut from the answer's text before it is parsed (jsoncut.h), besides the
     * managedFields the config drops: a rule list (ends at {NULL, NULL}; NULL: none; at most
     * KT_JSON_CUT_RULES_MAX rules with the config's). */
    const struct kt_json_cut_rule *cut;
};

/* Server-side apply: PATCH application/apply-patch+yaml (the JSON body is valid YAML) with
 * fieldManager and force. Caller owns *out (may be NULL). Does not retain req or its
 * pointers. */
KT_MUST_CHECK int kt_kube_apply(struct kt_kube_client *c, const struct kt_kube_apply_req *req,
                                json_t **out, struct kt_err *err);

/* JSON merge patch (RFC 7386) to name[/subresource]. Caller owns *out (may be NULL). Does
 * not retain patch. */
KT_MUST_CHECK int kt_kube_merge_patch(struct kt_kube_client *c, const struct kt_kube_ref *ref,
                                      const json_t *patch, json_t **out, struct kt_err *err);

/* Delete options; zero = none. */
struct kt_kube_delete_opts {
    const char *uid;                /* preconditions.uid */
    const char *resource_version;   /* preconditions.resourceVersion */
    const char *propagation_policy; /* "Background", "Foreground", "Orphan" or NULL */
};

/* DELETE name. A failed precondition is KT_ECONFLICT; a missing object KT_ENOENT. */
KT_MUST_CHECK int kt_kube_delete(struct kt_kube_client *c, const struct kt_kube_gvr *gvr,
                                 const char *ns, const char *name,
                                 const struct kt_kube_delete_opts *opts, struct kt_err *err);

/* A core/v1 Event about an object (as a recorder would write it). */
struct kt_kube_event {
    const json_t *involved; /* the object: apiVersion, kind, metadata.{namespace,name,uid,
                               resourceVersion} are referenced */
    const char *type;       /* "Normal" or "Warning" */
    const char *reason;     /* UpperCamelCase */
    const char *message;
    const char *component; /* source.component / reportingComponent */
    const char *instance;  /* reportingInstance; NULL = none */
};

/* POST a core/v1 Event named "<object>.<16 hex digits>" in the object's namespace ("default"
 * for cluster-scoped objects). Does not retain ev. */
KT_MUST_CHECK int kt_kube_event_create(struct kt_kube_client *c, const struct kt_kube_event *ev,
                                       struct kt_err *err);

enum kt_kube_time_prec {
    KT_KUBE_TIME_SECONDS, /* "2026-01-02T03:04:05Z", metav1.Time */
    KT_KUBE_TIME_MICRO,   /* "2026-01-02T03:04:05.123456Z", metav1.MicroTime as Leases use */
};

/* Write the current UTC time as RFC 3339 at precision prec into out. */
void kt_kube_time_now(char out[40], enum kt_kube_time_prec prec);

/* ---- watch ------------------------------------------------------------------------------ */

enum kt_kube_event_type {
    KT_WATCH_ADDED,
    KT_WATCH_MODIFIED,
    KT_WATCH_DELETED,
    KT_WATCH_BOOKMARK,
    KT_WATCH_ERROR,
};

/* One decoded watch event. */
struct kt_kube_watch_event {
    enum kt_kube_event_type type;
    json_t *object; /* owned: the object, or the Status of an ERROR event */
    const char *rv; /* object's metadata.resourceVersion; borrowed from object; or NULL */
    struct kt_kube_status status; /* filled for ERROR events */
};

/* Decode one line of a watch stream ({"type":"ADDED","object":{...}}). Pure. On success the
 * caller owns ev->object; release with kt_kube_watch_event_release(). On failure (KT_EPARSE,
 * KT_EINVAL for an unknown type or a missing object) ev holds nothing. Does not retain line. */
KT_MUST_CHECK int kt_kube_watch_decode_line(const char *line, size_t len,
                                            struct kt_kube_watch_event *ev, struct kt_err *err);
/* Accepts a zeroed or released event. */
void kt_kube_watch_event_release(struct kt_kube_watch_event *ev);

/* Splits a byte stream into lines with a per-line cap. Touch only through the API. */
struct kt_kube_lines {
    struct kt_buf line;
    bool overflow; /* a line exceeded the cap; the stream is unusable */
};
void kt_kube_lines_init(struct kt_kube_lines *l, size_t max_line);
/* Feed n bytes; calls fn(ud, line, len) for each complete non-empty line (without '\n'; not
 * NUL-terminated: a line whole in data is passed in place, without a copy).
 * fn returns 0 to go on, non-zero to stop (the value is returned). A line over the cap is
 * -1 with KT_ETOOBIG. Does not retain data. */
int kt_kube_lines_feed(struct kt_kube_lines *l, const char *data, size_t n,
                       int (*fn)(void *ud, const char *line, size_t len), void *ud,
                       struct kt_err *err);
void kt_kube_lines_release(struct kt_kube_lines *l);

/* Called for each event of kt_kube_watch; ev is borrowed for the call (take a reference to
 * ev->object to keep it). Return 0 to continue, non-zero to end the watch (kt_kube_watch then
 * returns 0). */
typedef int (*kt_kube_watch_fn)(void *ud, const struct kt_kube_watch_event *ev);

/* What kt_kube_watch watches and where its events go; callers fill it with designated
 * initialisers. Nothing is retained after the call. */
struct kt_kube_watch_req {
    const struct kt_kube_gvr *gvr;
    const char *ns;                       /* NULL: every namespace */
    const struct kt_kube_list_opts *opts; /* NULL: none */
    kt_kube_watch_fn fn;                  /* NULL: events are decoded and dropped */
    void *ud;                             /* fn's first argument */
    const atomic_int *stop;               /* NULL, or set non-zero from another thread to end */
    char **last_rv;                       /* NULL, or where the newest resourceVersion goes */
};

/* Blocking WATCH of req->gvr in req->ns from opts->resource_version (with bookmarks when asked).
 * Returns 0 when the server ends the stream (timeoutSeconds, --min-request-timeout) or fn asks to
 * stop; -1 with KT_EGONE for HTTP 410 or an in-stream ERROR with code 410 (the caller must relist),
 * other codes for other failures (an in-stream ERROR's Status is decoded like a response's). *stop
 * (may be NULL), when it becomes non-zero from another thread, ends the watch within about a second
 * (returns 0). *last_rv (may be NULL) is replaced by the newest resourceVersion seen (events and
 * bookmarks); caller owns it, free with free(). */
KT_MUST_CHECK int kt_kube_watch(struct kt_kube_client *c, const struct kt_kube_watch_req *req,
                                struct kt_err *err);

#endif
