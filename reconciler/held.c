/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/held.c - see held.h. The entries live in one JSON object keyed by owner:
 * {"uid": ..., "since": epoch seconds, "start": epoch seconds or -1}. */
#include "held.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

struct kt_held {
    pthread_mutex_t mu;
    json_t *by_owner; /* owned */
};

struct kt_held *kt_held_new(void)
{
    struct kt_held *h = kt_xcalloc(1, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    h->by_owner = json_object();
    return h;
}

void kt_held_free(struct kt_held *h)
{
    if (!h) {
        return;
    }
    json_decref(h->by_owner);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* owner's entry for uid, else NULL (an entry of another uid dropped). Borrowed. Locked. */
static json_t *entry(struct kt_held *h, const char *owner, const char *uid)
{
    json_t *e = json_object_get(h->by_owner, owner);
    if (e && strcmp(kt_json_str(e, "uid", ""), uid) != 0) {
        json_object_del(h->by_owner, owner);
        e = NULL;
    }
    return e;
}

bool kt_held_get(struct kt_held *h, const char *owner, const char *uid, double *since,
                 int64_t *start)
{
    pthread_mutex_lock(&h->mu);
    json_t *e = entry(h, owner, uid);
    *since = e ? json_real_value(json_object_get(e, "since")) : -1;
    *start = e ? (int64_t)json_integer_value(json_object_get(e, "start")) : -1;
    pthread_mutex_unlock(&h->mu);
    return e != NULL;
}

void kt_held_hold(struct kt_held *h, const char *owner, const char *uid, double now, int64_t start)
{
    pthread_mutex_lock(&h->mu);
    if (!entry(h, owner, uid)) {
        json_object_set_new(
            h->by_owner, owner,
            json_pack("{s:s, s:f, s:I}", "uid", uid, "since", now, "start", (json_int_t)start));
    }
    pthread_mutex_unlock(&h->mu);
}

void kt_held_forget(struct kt_held *h, const char *owner)
{
    pthread_mutex_lock(&h->mu);
    json_object_del(h->by_owner, owner);
    pthread_mutex_unlock(&h->mu);
}

size_t kt_held_len(struct kt_held *h)
{
    pthread_mutex_lock(&h->mu);
    size_t n = json_object_size(h->by_owner);
    pthread_mutex_unlock(&h->mu);
    return n;
}
