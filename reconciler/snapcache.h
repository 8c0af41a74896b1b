/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/snapcache.h - runtime snapshots parsed once, not on every reconcile.
 *
 * Each reconcile of a TrainJob reads the runtime back from its snapshot ConfigMap, whose
 * data.runtime is YAML: parsing it took 9% of kt-reconciler's CPU under `make scale N=300`
 * (perf; docs/benchmarks.md). TrainJobs of one runtime carry the same text, so the parsed
 * object is kept per distinct text (compared in full, not by hash) and each caller gets a
 * deep copy of it, about a quarter of the parse's cost. At most KT_SNAPCACHE_MAX texts are
 * kept; a new one beyond that replaces the oldest. Failures are not kept. Thread-safe (one
 * mutex). */
#ifndef KT_RECONCILER_SNAPCACHE_H
#define KT_RECONCILER_SNAPCACHE_H

#include <jansson.h>
#include <stddef.h>

#include "common/base/err.h"

#define KT_SNAPCACHE_MAX 64

struct kt_snapcache;

/* Caller owns the result; free with kt_snapcache_free(). */
struct kt_snapcache *kt_snapcache_new(void);
/* Accepts NULL. */
void kt_snapcache_free(struct kt_snapcache *c);

/* kt_snapshot_parse(text) from the cache (a kt_view snapshot_parse): a new object the caller
 * owns, or NULL + err as kt_snapshot_parse. text is borrowed. */
json_t *kt_snapcache_parse(struct kt_snapcache *c, const char *text, struct kt_err *err);

/* Lookups answered from the cache and parses made, since kt_snapcache_new. */
void kt_snapcache_stats(struct kt_snapcache *c, size_t *hits, size_t *misses);

#endif
