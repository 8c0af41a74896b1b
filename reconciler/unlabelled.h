/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/unlabelled.h - the objects a TrainJob controls that lack our label, found once
 * before the workers start.
 *
 * The owned informers select KT_TRAINJOB_NAME_LABEL, so an object without it (upstream's
 * manager did not label what it created) is invisible to them. A TrainJob created before this
 * process started ("legacy") may control such objects: its reconcile reads them live and
 * labels them (adoption, reconcile.c). Instead of a live GET of every object such a TrainJob
 * could own (for a backlog whose objects do not exist yet: one 404 per kind per TrainJob),
 * kt_unlabelled_scan finds them with one paged, metadata-only LIST per kind and namespace
 * source (labelSelector !KT_TRAINJOB_NAME_LABEL) and keeps only the keys of the items whose
 * controller ownerReference is a TrainJob: a sorted array of "group/resource|ns|name".
 *
 * Threads: built on one thread before the workers start; read-only afterwards, then any
 * thread may call kt_unlabelled_has. */
#ifndef KT_RECONCILER_UNLABELLED_H
#define KT_RECONCILER_UNLABELLED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/base/err.h"
#include "common/kube/kube.h"

/* The name of the TrainJob that controls obj (a controller ownerReference of kind TrainJob
 * in trainer.kubeflow.org), or NULL. Reads only obj's metadata. Borrowed from obj. */
const char *kt_controller_trainjob(const json_t *obj);

struct kt_unlabelled;

/* An empty set. Caller owns the result; free with kt_unlabelled_free(). */
struct kt_unlabelled *kt_unlabelled_new(void);
/* Accepts NULL. */
void kt_unlabelled_free(struct kt_unlabelled *u);

/* Keep item's key (item: an object or PartialObjectMetadata of resource gvr) when a TrainJob
 * controls it; returns whether it was kept. Does not retain its arguments. Call
 * kt_unlabelled_seal after the last add, before any kt_unlabelled_has. */
bool kt_unlabelled_add(struct kt_unlabelled *u, const struct kt_kube_gvr *gvr, const json_t *item);
/* Sort and drop duplicates (a LIST restarted after an expired continue token repeats items). */
void kt_unlabelled_seal(struct kt_unlabelled *u);
/* Record that the LIST of gvr in ns (NULL = all namespaces) failed: nothing is known of that
 * source, so kt_unlabelled_has answers true for it (the caller reads live). Does not retain
 * its arguments. Call before kt_unlabelled_seal. */
void kt_unlabelled_mark_failed(struct kt_unlabelled *u, const struct kt_kube_gvr *gvr,
                               const char *ns);
/* How many sources were marked failed. */
size_t kt_unlabelled_failed(const struct kt_unlabelled *u);
/* True when the sealed set holds gvr ns/name (ns NULL = ""), or when gvr's LIST in ns or in
 * all namespaces failed (unknown: read live). */
bool kt_unlabelled_has(const struct kt_unlabelled *u, const struct kt_kube_gvr *gvr, const char *ns,
                       const char *name);
size_t kt_unlabelled_len(const struct kt_unlabelled *u);

/* LIST each of the n_gvrs resources (metadata only, paged, labelSelector
 * !KT_TRAINJOB_NAME_LABEL) in each of namespaces (n_namespaces 0 = all namespaces) and keep
 * the items a TrainJob controls; sealed. A LIST that fails marks only its own source failed
 * (kt_unlabelled_mark_failed: objects there are read live) and fills err with the first
 * failure; the others still count. Never NULL. Caller owns the result; free with
 * kt_unlabelled_free(). Does not retain its arguments. */
struct kt_unlabelled *kt_unlabelled_scan(struct kt_kube_client *c,
                                         const struct kt_kube_gvr *const *gvrs, size_t n_gvrs,
                                         const char *const *namespaces, size_t n_namespaces,
                                         struct kt_err *err);

#endif
