/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/written.h - the TrainJob statuses this process wrote that its cache does not
 * show yet, so that a reconcile reading the cache right after a status write starts from the
 * status the server holds, not from the one before the write.
 *
 * A status patch returns the TrainJob at a new resourceVersion W. Until the TrainJob watch
 * delivers W, the cache still shows the revision R the patch was computed from. A reconcile
 * in that window (the JobSet, a ConfigMap or the TrainJob's own events arrive in any order)
 * would start from R's status: it computes the status already written and patches it again
 * (a request that changes nothing), or, for a field that takes the clock (startTime, a
 * condition's lastTransitionTime), writes it again one second later. With this record it
 * starts from W's status instead, exactly as it will once the cache shows W.
 *
 * An entry holds the server's answer (the status at W, a reference) and the revisions it
 * supersedes: R and any earlier W of a chain of writes the cache has not caught up with yet.
 * It is used only while the cache shows one of those; the cache showing W (caught up) or any
 * other revision (someone else wrote since) drops it. So entries live only between a write
 * and its watch event: a handful, not one per TrainJob. The TrainJob informer's handler reports
 * each revision it stores (kt_written_seen) and the writer looks at the cache once more after
 * recording its write, so an entry goes when its watch event comes, not at the owner's next
 * reconcile: under a backlog that can be minutes away, and thousands of entries waiting for it
 * raised the heap's peak and left it fragmented. Thread-safe (one mutex). */
#ifndef KT_RECONCILER_WRITTEN_H
#define KT_RECONCILER_WRITTEN_H

#include <jansson.h>
#include <stddef.h>

struct kt_written;

/* Caller owns the result; free with kt_written_free(). */
struct kt_written *kt_written_new(void);
/* Accepts NULL. */
void kt_written_free(struct kt_written *w);

/* The status this process last wrote to TrainJob owner ("ns/name") with uid uid, when the
 * cache (showing cached_rv) has not caught up with it: a new reference the caller owns and
 * must not modify (the entry shares it; copy it to change it). NULL otherwise, and an entry
 * that no longer applies is dropped. */
json_t *kt_written_get(struct kt_written *w, const char *owner, const char *uid,
                       const char *cached_rv);
/* Record a status write to owner/uid computed from the cache at cached_rv: the server
 * answered resp (the whole TrainJob; its status and resourceVersion are kept, resp is not
 * retained). An entry that kt_written_get just returned for the same cached_rv is extended
 * (the chain of superseded revisions grows by its last write); at most KT_WRITTEN_CHAIN
 * revisions, beyond that the entry is dropped (the next reconcile reads the cache as
 * before). */
#define KT_WRITTEN_CHAIN 16
void kt_written_put(struct kt_written *w, const char *owner, const char *uid, const char *cached_rv,
                    const json_t *resp);
/* The cache now shows owner at cached_rv: drop its entry unless cached_rv is one of the
 * revisions the entry supersedes (the cache caught up with the write, someone else wrote, or
 * the TrainJob was re-created). */
void kt_written_seen(struct kt_written *w, const char *owner, const char *cached_rv);
/* Drop owner's entry, if any. */
void kt_written_forget(struct kt_written *w, const char *owner);
/* Entries held (tests, metrics). */
size_t kt_written_len(struct kt_written *w);

#endif
