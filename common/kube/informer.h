/* SPDX-License-Identifier: Apache-2.0 */
/* common/kube/informer.h - list+watch caches of Kubernetes objects with event handlers.
 *
 * An informer keeps a store (namespace/name -> object) of what its selectors select, fed by
 * a LIST then a WATCH from the list's resourceVersion. A loop runs any number of informers on
 * ONE thread (curl multi); it re-watches from the last resourceVersion when the server ends a
 * watch (timeoutSeconds, --min-request-timeout), relists on 410 Gone (HTTP or in-stream ERROR),
 * and retries other failures (API server restart, network) with jittered exponential backoff.
 * An informer may be restricted to a list of namespaces (a LIST+WATCH each, one store).
 * Relists diff against the store, so handlers see each object's final state exactly once:
 * unchanged objects (same resourceVersion) are not reported again and objects gone meanwhile
 * get a delete. No resync timer, no work queue (the reconciler's).
 *
 * The store keeps each object as its compact JSON text (after strip_managed_fields and the
 * transform), so a cached object costs about its serialised size. During a LIST, handlers
 * run as each page arrives; deletes for objects the LIST no longer returns come after it.
 *
 * Threads: handlers run on the loop's thread and get the object as stored (borrowed,
 * read-only; old_obj and a relist's deletes are parsed back from the store for the call).
 * kt_informer_get/_snapshot/_synced/_stats and kt_informer_loop_stop may be called from any
 * thread; get and snapshot return private objects parsed from the store, never shared ones,
 * because jansson's inline reference counting is not atomic. */
#ifndef KT_INFORMER_H
#define KT_INFORMER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/base/err.h"
#include "common/kube/kube.h"

/* Callbacks; any may be NULL. Objects are borrowed for the call (json_incref to keep one).
 * old_obj is the previously stored object. on_delete gets the last known state. on_synced
 * runs once, after the first LIST has been delivered. */
struct kt_informer_handlers {
    void (*on_add)(void *ud, const json_t *obj);
    void (*on_update)(void *ud, const json_t *old_obj, const json_t *new_obj);
    void (*on_delete)(void *ud, const json_t *obj);
    void (*on_synced)(void *ud);
    void *ud;
};

struct kt_informer_opts {
    const struct kt_kube_gvr *gvr; /* required; the struct is copied, its strings must be static */
    const char *ns;                /* NULL or "" = all namespaces / cluster scope; copied */
    /* When n_namespaces > 0: watch only these namespaces (ns is ignored), with one LIST+WATCH
     * per namespace feeding the one store (controller-runtime's DefaultNamespaces); synced
     * once every namespace has listed. The strings are copied. */
    const char *const *namespaces;
    size_t n_namespaces;
    const char *label_selector; /* NULL = everything; copied */
    const char *field_selector; /* NULL = everything; copied */
    long page_size;             /* LIST limit; 0 = 500 */
    long watch_timeout_s;       /* each watch asks for a random timeout in [t, 2t); 0 = 300;
                                   < 0 = none (the server's --min-request-timeout rule) */
    bool strip_managed_fields;  /* drop metadata.managedFields before storing */
    /* Called on every object before it is stored (after managedFields stripping). Steals obj;
     * returns the object to store (may be obj itself). obj's nested values may be shared with
     * a LIST page: copy one before changing it. NULL = none. */
    json_t *(*transform)(json_t *obj, void *ud);
    void *transform_ud; /* borrowed: kept for the informer's life */
    /* Members cut from each object's text before it is parsed (jsoncut.h; LIST pages and
     * watch events), for what neither the transform nor the handlers read: cheaper than
     * parsing them to drop them. A rule list (ends at {NULL, NULL}; NULL: none; at most
     * KT_JSON_CUT_RULES_MAX rules with the config's managedFields rule), static: kept, and
     * merged with the config's rule once, by kt_informer_loop_add. */
    const struct kt_json_cut_rule *cut;
};

/* Counters for tests and metrics. */
struct kt_informer_stats {
    unsigned long lists;        /* LISTs completed (the first one included) */
    unsigned long relists_gone; /* relists caused by 410 Gone */
    unsigned long watches;      /* watch requests started */
    unsigned long watch_ends;   /* watches the server ended cleanly */
    unsigned long failures;     /* failed LISTs or watches (each followed by a backoff) */
    size_t objects;             /* objects in the store */
};

struct kt_informer;

/* Copies opts' strings and h. Caller owns the result; free with kt_informer_free() after the
 * loop that ran it is freed. */
struct kt_informer *kt_informer_new(const struct kt_informer_opts *opts,
                                    const struct kt_informer_handlers *h);
/* Accepts NULL. */
void kt_informer_free(struct kt_informer *inf);

/* True once the first LIST has been delivered to the handlers. Any thread. */
bool kt_informer_synced(const struct kt_informer *inf);
/* When not synced: writes why into buf (n bytes, NUL-terminated, may be cut) and returns
 * true; the first source still without a completed LIST is named with the failure that
 * keeps it so, e.g. "jobsets namespace=team-a: list: HTTP 403 Forbidden: ...". Else false
 * and buf is untouched. Any thread. */
bool kt_informer_unsynced_reason(struct kt_informer *inf, char *buf, size_t n);

/* A copy of the stored object ns/name (ns NULL or "" for cluster scope), or NULL. Any
 * thread. Caller owns the result; free with json_decref(). */
json_t *kt_informer_get(struct kt_informer *inf, const char *ns, const char *name);

/* The resourceVersion of the stored object ns/name into buf (n bytes, NUL-terminated,
 * truncated to fit); false, buf untouched, when none is stored. Any thread; parses nothing. */
bool kt_informer_rv(struct kt_informer *inf, const char *ns, const char *name, char *buf, size_t n);

/* Copies of every stored object in an array (order unspecified). Any thread. Caller owns the
 * result; free with json_decref(). */
json_t *kt_informer_snapshot(struct kt_informer *inf);

void kt_informer_stats(struct kt_informer *inf, struct kt_informer_stats *out);

/* The loop: informers on one thread. */
struct kt_informer_loop;

/* Does not take ownership of cfg (it must outlive the loop). Caller owns the result; free
 * with kt_informer_loop_free(). */
struct kt_informer_loop *kt_informer_loop_new(struct kt_kube_config *cfg);
/* Add inf before kt_informer_loop_run. Does not take ownership of inf; an informer belongs to
 * at most one loop. Merges inf's cut rules with the loop's config's (set the config's
 * kt_kube_config_drop_managed_fields before). */
void kt_informer_loop_add(struct kt_informer_loop *loop, struct kt_informer *inf);
/* Run until kt_informer_loop_stop. Returns 0 after a stop; -1 only on a setup failure. */
KT_MUST_CHECK int kt_informer_loop_run(struct kt_informer_loop *loop, struct kt_err *err);
/* Ask the loop to return soon (within about a second; a LIST in progress ends first). Any
 * thread; not async-signal-safe (it writes curl's wakeup pipe): call it from a watcher of the
 * signal flag. */
void kt_informer_loop_stop(struct kt_informer_loop *loop);
/* Accepts NULL. The loop must not be running. */
void kt_informer_loop_free(struct kt_informer_loop *loop);

#endif
