/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_held.c - reconciler/held.c: a held status write keeps the time
 * its holding began and the startTime it chose across reconciles (holding again does not move
 * either), only for the same TrainJob uid; forgetting drops it. Compiled in directly
 * (reconciler/ is not part of libkt.a). */
#include "tests/test.h"

#include "common/base/mem.h"
#include "reconciler/held.c"

static void test_hold_keeps_first(void)
{
    struct kt_held *h = kt_held_new();
    double since;
    int64_t start;

    CHECK(!kt_held_get(h, "ns/tj", "u1", &since, &start)); /* nothing held */
    CHECK(since == -1 && start == -1);
    kt_held_hold(h, "ns/tj", "u1", 100.5, 100);
    CHECK(kt_held_get(h, "ns/tj", "u1", &since, &start));
    CHECK(since == 100.5);
    CHECK_EQ_INT(start, 100);
    kt_held_hold(h, "ns/tj", "u1", 104.0, 104); /* a later held change: the first one counts */
    CHECK(kt_held_get(h, "ns/tj", "u1", &since, &start));
    CHECK(since == 100.5);
    CHECK_EQ_INT(start, 100);
    CHECK(!kt_held_get(h, "ns/other", "u1", &since, &start)); /* other owner */
    CHECK_EQ_INT(kt_held_len(h), 1);

    kt_held_forget(h, "ns/tj"); /* written */
    CHECK(!kt_held_get(h, "ns/tj", "u1", &since, &start));
    CHECK_EQ_INT(kt_held_len(h), 0);
    kt_held_hold(h, "ns/tj", "u1", 110.0, -1); /* a step with startTime already written */
    CHECK(kt_held_get(h, "ns/tj", "u1", &since, &start));
    CHECK(since == 110.0);
    CHECK_EQ_INT(start, -1);
    kt_held_forget(h, "ns/gone"); /* forgetting nothing is fine */
    CHECK_EQ_INT(kt_held_len(h), 1);
    kt_held_free(h);
}

static void test_recreated(void)
{
    struct kt_held *h = kt_held_new();
    double since;
    int64_t start;
    kt_held_hold(h, "ns/tj", "u1", 100.0, 100);
    CHECK(!kt_held_get(h, "ns/tj", "u2", &since, &start)); /* re-created: dropped */
    CHECK_EQ_INT(kt_held_len(h), 0);
    kt_held_hold(h, "ns/tj", "u1", 100.0, 100);
    kt_held_hold(h, "ns/tj", "u2", 200.0, 200); /* the new uid replaces the old entry */
    CHECK(kt_held_get(h, "ns/tj", "u2", &since, &start));
    CHECK(since == 200.0);
    CHECK_EQ_INT(start, 200);
    kt_held_free(h);
    kt_held_free(NULL);
}

int main(void)
{
    kt_mem_init();
    test_hold_keeps_first();
    test_recreated();
    return test_report();
}
