/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_written.c - reconciler/written.c: a written status is offered
 * only while the cache shows a revision the write superseded, for the same TrainJob uid; the
 * cache catching up (seen by a reconcile or reported by the informer's handler), another
 * writer, a re-created TrainJob or forgetting drops it. Compiled
 * in directly (reconciler/ is not part of libkt.a). */
#include "tests/test.h"

#include "common/base/mem.h"
#include "reconciler/written.c"

/* A patch answer: the TrainJob at resourceVersion rv with status {"startTime": t}. */
static json_t *answer(const char *rv, const char *t)
{
    return json_pack("{s:{s:s}, s:{s:s}}", "metadata", "resourceVersion", rv, "status", "startTime",
                     t);
}

static void check_start(json_t *st, const char *want)
{
    CHECK(st != NULL);
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), want);
    json_decref(st);
}

static void test_stale_until_caught_up(void)
{
    struct kt_written *w = kt_written_new();
    json_t *a = answer("11", "T1"), *b = answer("12", "T2");

    CHECK(kt_written_get(w, "ns/tj", "u1", "10") == NULL); /* nothing written */
    kt_written_put(w, "ns/tj", "u1", "10", a);             /* patched from 10, answer 11 */
    check_start(kt_written_get(w, "ns/tj", "u1", "10"), "T1");
    CHECK(kt_written_get(w, "ns/tj2", "u1", "10") == NULL); /* other owner */
    CHECK(kt_written_get(w, "ns/tj", "u2", "10") == NULL);  /* re-created: dropped */
    CHECK_EQ_INT(kt_written_len(w), 0);

    /* a chain: 10 -> 11 -> 12 while the cache lags; both 10 and 11 are superseded */
    kt_written_put(w, "ns/tj", "u1", "10", a);
    kt_written_put(w, "ns/tj", "u1", "10", b);
    check_start(kt_written_get(w, "ns/tj", "u1", "10"), "T2");
    check_start(kt_written_get(w, "ns/tj", "u1", "11"), "T2");
    CHECK(kt_written_get(w, "ns/tj", "u1", "12") == NULL); /* caught up: dropped */
    CHECK_EQ_INT(kt_written_len(w), 0);

    kt_written_put(w, "ns/tj", "u1", "10", a);
    CHECK(kt_written_get(w, "ns/tj", "u1", "13") == NULL); /* someone else wrote */
    CHECK(kt_written_get(w, "ns/tj", "u1", "10") == NULL); /* and it stays dropped */
    kt_written_put(w, "ns/tj", "u1", "", a);               /* not in the cache: not kept */
    CHECK_EQ_INT(kt_written_len(w), 0);
    kt_written_put(w, "ns/tj", "u1", "10", a);
    kt_written_forget(w, "ns/tj");
    CHECK(kt_written_get(w, "ns/tj", "u1", "10") == NULL);
    json_decref(a);
    json_decref(b);
    kt_written_free(w);
}

static void test_chain_bound(void)
{
    struct kt_written *w = kt_written_new();
    char rv[16];
    for (int i = 1; i <= KT_WRITTEN_CHAIN; i++) {
        snprintf(rv, sizeof(rv), "%d", 100 + i);
        json_t *a = answer(rv, "T");
        kt_written_put(w, "ns/tj", "u1", "100", a);
        json_decref(a);
    }
    CHECK_EQ_INT(kt_written_len(w), 1); /* KT_WRITTEN_CHAIN revisions superseded */
    json_t *a = answer("999", "T");
    kt_written_put(w, "ns/tj", "u1", "100", a); /* one more: dropped */
    CHECK_EQ_INT(kt_written_len(w), 0);
    json_decref(a);
    kt_written_free(w);
}

/* The informer's handler reports each revision it stores: the write's own revision (or any
 * other not superseded) drops the entry at once, with no reconcile; a superseded one (an
 * older event delivered late) keeps it. */
static void test_seen(void)
{
    struct kt_written *w = kt_written_new();
    json_t *a = answer("11", "T1"), *b = answer("12", "T2");

    kt_written_seen(w, "ns/tj", "11"); /* no entry: nothing happens */
    kt_written_put(w, "ns/tj", "u1", "10", a);
    kt_written_put(w, "ns/tj2", "u1", "10", a);
    kt_written_seen(w, "ns/tj", "10"); /* the revision it superseded: kept */
    check_start(kt_written_get(w, "ns/tj", "u1", "10"), "T1");
    kt_written_seen(w, "ns/tj", "11"); /* its own revision: dropped */
    CHECK_EQ_INT(kt_written_len(w), 1);
    CHECK(kt_written_get(w, "ns/tj", "u1", "10") == NULL);
    check_start(kt_written_get(w, "ns/tj2", "u1", "10"), "T1"); /* another owner's: kept */

    kt_written_put(w, "ns/tj", "u1", "10", a); /* a chain 10 -> 11 -> 12 */
    kt_written_put(w, "ns/tj", "u1", "10", b);
    kt_written_seen(w, "ns/tj", "11"); /* the chain's middle, late: kept */
    check_start(kt_written_get(w, "ns/tj", "u1", "11"), "T2");
    kt_written_seen(w, "ns/tj", "13"); /* someone else's write: dropped */
    CHECK(kt_written_get(w, "ns/tj", "u1", "11") == NULL);
    kt_written_seen(w, "ns/tj2", ""); /* no revision: dropped */
    CHECK_EQ_INT(kt_written_len(w), 0);
    json_decref(a);
    json_decref(b);
    kt_written_free(w);
}

int main(void)
{
    kt_mem_init();
    test_stale_until_caught_up();
    test_chain_bound();
    test_seen();
    return test_report();
}
