/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/kube_internal.h - what kube.c, kube_config.c, kube_watch.c and informer.c share.
 *
 * Not part of the library's interface (kt__ names:
 * docs/internals/style.md#double-underscore-for-shared-internals). Includes curl.h, so only the
 * kube client files may include it. */
#ifndef KT_KUBE_INTERNAL_H
#define KT_KUBE_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "common/kube/kube.h"

struct kt_kube_config {
    char *server;     /* https://host:port, no trailing slash */
    char *ca_file;    /* PEM bundle path; NULL = system store */
    char *cert_file;  /* client certificate PEM, or NULL */
    char *key_file;   /* client key PEM, or NULL */
    char *token;      /* static bearer token, or NULL */
    char *token_file; /* bearer token file re-read when it changes, or NULL */
    int data_fds[3];  /* unlinked files holding *-data fields (ca, cert, key) */
    size_t n_data_fds;
    char *ns;        /* default namespace from the context; "" when none */
    long request_ms; /* whole-request timeout for non-watch calls */
    long connect_ms;
    size_t body_max;          /* response body cap */
    size_t line_max;          /* watch line cap */
    bool drop_managed_fields; /* kt_kube_config_drop_managed_fields */

    pthread_mutex_t lock;        /* guards the fields below */
    struct kt_kube_ratelimit rl; /* process-wide QPS/burst for clients of this config */
    char *cached_token;          /* token_file contents (trimmed) */
    struct timespec token_mtime;
    off_t token_size;
    ino_t token_ino;
};

/* A per-thread client (kube.c). */
struct kt_kube_client {
    struct kt_kube_config *cfg; /* not owned */
    CURL *easy;
    struct kt_buf body;    /* the response; kept between requests (kube.c body_reset) */
    struct kt_buf sendbuf; /* the request object serialised; kept the same way */
    bool body_too_big;
    struct kt_kube_status last;
    atomic_ulong retries; /* attempts repeated by the retry policy */
    long request_ms;      /* this client's request timeout; 0 = the config's */
    long connect_ms;      /* this client's connect timeout; 0 = the config's */
    char errbuf[CURL_ERROR_SIZE];
};

/* Retry policy of kt_kube_request after a response with status http (retry_after: the
 * Retry-After header in seconds, capped at 10, or -1) on attempt (0-based): 401 once with the
 * token file re-read (*reread set), 429 always and 5xx when Retry-After is present, at most 3
 * attempts in all. *wait_s gets the pause before the next attempt. */
bool kt__kube_should_retry(long http, long retry_after, int attempt, bool *reread, long *wait_s);

/* curl_global_init once per process. */
void kt__kube_global_init(void);

/* What a query string is for. */
enum kt__kube_query { KT__KUBE_QUERY_LIST, KT__KUBE_QUERY_WATCH };

/* Append the query string for a list (cont = continue token or NULL) or a watch. */
KT_MUST_CHECK int kt__kube_list_query(struct kt_buf *b, const struct kt_kube_list_opts *o,
                                      const char *cont, enum kt__kube_query q, struct kt_err *err);

/* Fill st from a decoded Status object (st->http/code preset by the caller). */
void kt__kube_status_from_json(const json_t *o, struct kt_kube_status *st);

/* Allocate a config with defaults (no server). Caller owns it; kt_kube_config_free(). */
struct kt_kube_config *kt__kube_config_alloc(void);

/* Caller owns the result ("Authorization: Bearer ..." header) or NULL when there is no
 * token; free with free(). force_reread drops the token-file cache first. */
char *kt__kube_auth_header(struct kt_kube_config *cfg, bool force_reread);

/* Block until the config's rate limiter grants a request. */
void kt__kube_rate_wait(struct kt_kube_config *cfg);

/* Monotonic seconds. */
double kt__kube_now(void);

/* Set TLS, auth-independent and timeout options on a (reset) easy handle. Does not retain
 * cfg beyond the handle's use. */
void kt__kube_easy_tls(const struct kt_kube_config *cfg, CURL *easy);

/* The state of one streaming watch on an easy handle (blocking or in a multi). */
struct kt__kube_stream {
    struct kt_kube_lines lines;
    CURL *easy;
    long http;             /* response status, read at the first body bytes */
    struct kt_buf errbody; /* body of a non-200 response */
    kt_kube_watch_fn fn;
    void *ud;
    const atomic_int *stop;
    char *last_rv;    /* owned; newest resourceVersion seen */
    bool fn_stopped;  /* fn returned non-zero */
    bool error_event; /* an ERROR event arrived; see status */
    struct kt_kube_status status;
    bool failed; /* decode or line-cap failure; see err */
    struct kt_err err;
    struct curl_slist *headers;
    char *url;
    char errbuf[CURL_ERROR_SIZE];
    /* What is cut from each event line before it is parsed: the opts' merged rules (borrowed
     * from the opener until kt__kube_stream_release; NULL: none). */
    const struct kt_json_cut_rule *rules;
    struct kt_buf cut; /* an event line without those members */
};

/* What a watch stream reads and whom it tells. The pointers marked retained are borrowed
 * until kt__kube_stream_release. */
struct kt__kube_stream_opts {
    const char *path_query; /* already holds watch=true; copied */
    long timeout_seconds;   /* the server-side timeout, sizing the client-side safety one */
    kt_kube_watch_fn fn;    /* NULL: events are decoded and dropped */
    void *ud;               /* fn's first argument; retained */
    const atomic_int *stop; /* NULL, or set non-zero from another thread to end; retained */
    /* What is cut from each event line: a merged rule list (kt__kube_cut_rules, so the
     * config's managedFields rule included; ends at {NULL, NULL}; NULL: none); retained. */
    const struct kt_json_cut_rule *rules;
};

/* Room for a merged rule list: KT_JSON_CUT_RULES_MAX rules and the {NULL, NULL} end. */
#define KT__KUBE_CUT_ROOM (KT_JSON_CUT_RULES_MAX + 1)

/* The rule list a response or event of cfg is cut by, merged once into out: managedFields
 * when cfg drops them, then cut's rules (as many as fit in KT_JSON_CUT_RULES_MAX). Returns
 * out, or NULL when there is no rule. Does not retain cut (its strings are borrowed by out). */
const struct kt_json_cut_rule *kt__kube_cut_rules(const struct kt_kube_config *cfg,
                                                  const struct kt_json_cut_rule *cut,
                                                  struct kt_json_cut_rule out[KT__KUBE_CUT_ROOM]);

/* kt_kube_list with rules (a merged rule list, kt__kube_cut_rules; NULL: none) in place of
 * opts->cut and the config's rule: for a caller that keeps its merged list. Does not retain
 * rules. */
KT_MUST_CHECK int kt__kube_list(struct kt_kube_client *c, const struct kt_kube_gvr *gvr,
                                const char *ns, const struct kt_kube_list_opts *opts,
                                const struct kt_json_cut_rule *rules, json_t **out,
                                struct kt_err *err);

/* Prepare s and set every option of easy for the watch o describes. Steals nothing. */
void kt__kube_stream_init(struct kt__kube_stream *s, struct kt_kube_config *cfg, CURL *easy,
                          const struct kt__kube_stream_opts *o);
/* Turn the transfer's outcome into 0 (clean end or stop) or -1 with err. */
int kt__kube_stream_result(struct kt__kube_stream *s, CURLcode rc, struct kt_err *err);
/* Free what s owns (not last_rv when taken). Accepts a released stream. */
void kt__kube_stream_release(struct kt__kube_stream *s);

#endif
