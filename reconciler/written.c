/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/written.c - see written.h. The entries live in one JSON object keyed by owner:
 * {"uid": ..., "rv": W, "old": [R, ...], "status": {...}}; there are only ever a few. */
#include "written.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

struct kt_written {
    pthread_mutex_t mu;
    json_t *by_owner; /* owned */
};

struct kt_written *kt_written_new(void)
{
    struct kt_written *w = kt_xcalloc(1, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    w->by_owner = json_object();
    return w;
}

void kt_written_free(struct kt_written *w)
{
    if (!w) {
        return;
    }
    json_decref(w->by_owner);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* Whether rv is one of the revisions entry e supersedes. */
static bool supersedes(const json_t *e, const char *rv)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(e, "old"), i, r)
    {
        if (strcmp(json_string_value(r), rv) == 0) {
            return true;
        }
    }
    return false;
}

/* owner's entry when it applies to uid with the cache at cached_rv, else NULL (and a stale
 * entry dropped). Borrowed. Locked. */
static json_t *applicable(struct kt_written *w, const char *owner, const char *uid,
                          const char *cached_rv)
{
    json_t *e = json_object_get(w->by_owner, owner);
    if (!e) {
        return NULL;
    }
    if (*cached_rv && strcmp(kt_json_str(e, "uid", ""), uid) == 0 && supersedes(e, cached_rv)) {
        return e;
    }
    json_object_del(w->by_owner, owner); /* caught up, written by someone else, or re-created */
    return NULL;
}

json_t *kt_written_get(struct kt_written *w, const char *owner, const char *uid,
                       const char *cached_rv)
{
    pthread_mutex_lock(&w->mu);
    json_t *e = applicable(w, owner, uid, cached_rv);
    json_t *st = e ? json_incref(json_object_get(e, "status")) : NULL;
    pthread_mutex_unlock(&w->mu);
    return st;
}

void kt_written_put(struct kt_written *w, const char *owner, const char *uid, const char *cached_rv,
                    const json_t *resp)
{
    const char *rv = kt_json_str(json_object_get(resp, "metadata"), "resourceVersion", "");
    json_t *st = json_object_get(resp, "status");
    pthread_mutex_lock(&w->mu);
    json_t *e = applicable(w, owner, uid, cached_rv);
    json_t *old = e ? json_incref(json_object_get(e, "old")) : json_array();
    if (e) {
        json_array_append(old, json_object_get(e, "rv"));
    } else if (*cached_rv) {
        json_array_append_new(old, json_string(cached_rv));
    }
    if (*rv && json_is_object(st) && json_array_size(old) > 0 &&
        json_array_size(old) <= KT_WRITTEN_CHAIN) {
        json_object_set_new(
            w->by_owner, owner,
            json_pack("{s:s, s:s, s:o, s:O}", "uid", uid, "rv", rv, "old", old, "status", st));
    } else {
        json_decref(old);
        json_object_del(w->by_owner, owner);
    }
    pthread_mutex_unlock(&w->mu);
}

void kt_written_seen(struct kt_written *w, const char *owner, const char *cached_rv)
{
    pthread_mutex_lock(&w->mu);
    const json_t *e = json_object_get(w->by_owner, owner);
    if (e && !(*cached_rv && supersedes(e, cached_rv))) {
        json_object_del(w->by_owner, owner);
    }
    pthread_mutex_unlock(&w->mu);
}

void kt_written_forget(struct kt_written *w, const char *owner)
{
    pthread_mutex_lock(&w->mu);
    json_object_del(w->by_owner, owner);
    pthread_mutex_unlock(&w->mu);
}

size_t kt_written_len(struct kt_written *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = json_object_size(w->by_owner);
    pthread_mutex_unlock(&w->mu);
    return n;
}
