/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/applied.h - what this process last applied, so that an unchanged object is not
 * applied again.
 *
 * A server-side apply returns the object with a new resourceVersion R (a write's revision:
 * no other write of any object has it). While the cache still shows R for that object,
 * nobody, this process included, has written it since, so applying the same desired object
 * again (same hash of its compact JSON) would change nothing: the reconcile skips that
 * request. Any other writer (a controller updating status, a user's edit, a delete and
 * re-create) changes R, and the next reconcile applies as before. Nothing is written to the
 * objects themselves.
 *
 * Entries are 64-bit hashes only (owner, object, desired content, resourceVersion: 40 bytes
 * each), grouped by the owning TrainJob and forgotten when its reconcile finds it deleted.
 * A hash collision can at worst cost one apply more, or skip an apply whose object the cache
 * shows at exactly the revision this process wrote for another object, which cannot happen.
 * Thread-safe (one mutex). */
#ifndef KT_RECONCILER_APPLIED_H
#define KT_RECONCILER_APPLIED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kt_applied;

/* Caller owns the result; free with kt_applied_free(). */
struct kt_applied *kt_applied_new(void);
/* Accepts NULL. */
void kt_applied_free(struct kt_applied *a);

/* 64-bit FNV-1a of s. */
uint64_t kt_applied_hash_str(const char *s);
/* The hash of obj's compact JSON (keys in insertion order, as built). */
uint64_t kt_applied_hash_obj(const json_t *obj);

/* True when obj_key (of TrainJob owner) was last applied by this process with content hash
 * content and the server answered resourceVersion rv. */
bool kt_applied_same(struct kt_applied *a, const char *owner, const char *obj_key, uint64_t content,
                     const char *rv);
/* Record an apply of obj_key with content hash content; the server answered rv. */
void kt_applied_put(struct kt_applied *a, const char *owner, const char *obj_key, uint64_t content,
                    const char *rv);
/* The same, made at time at (the caller's monotonic clock, seconds; < 0 = unknown). */
void kt_applied_put_at(struct kt_applied *a, const char *owner, const char *obj_key,
                       uint64_t content, const char *rv, double at);
/* True when this process applied obj_key with content hash content less than within seconds
 * before now (kt_applied_put_at's clock); *left = the time until that is no longer so. Used
 * when the cache does not show the object at all: an object applied a moment ago is absent
 * because its watch event has not arrived yet, not because it is gone, so applying it again
 * would change nothing. Past the window an absent object is applied again (it may have been
 * deleted, even between two watches, where no delete event says so). */
bool kt_applied_recent(struct kt_applied *a, const char *owner, const char *obj_key,
                       uint64_t content, double now, double within, double *left);
/* Terminal is terminal: remember that the TrainJob owner with uid uid was seen Complete or
 * Failed, so that a reconcile reading a TrainJob cached before its finish was stored (the
 * TrainJob watch lagging behind the JobSet watch that reports the JobSet deleted) still builds
 * nothing. Forgotten with the owner's other entries; the uid keeps a new TrainJob of the same
 * name apart. */
void kt_applied_mark_finished(struct kt_applied *a, const char *owner, const char *uid);
bool kt_applied_finished(struct kt_applied *a, const char *owner, const char *uid);
/* Forget every object of owner. */
void kt_applied_forget(struct kt_applied *a, const char *owner);
/* Entries held (tests, metrics). */
size_t kt_applied_len(struct kt_applied *a);

#endif
