/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_applied.c - reconciler/applied.c: an apply is skipped only for
 * the same owner, object, content and the resourceVersion the server answered; forgetting an
 * owner drops its objects and no other's. Compiled in directly (reconciler/ is not part of
 * libkt.a). */
#include "tests/test.h"

#include "common/base/mem.h"
#include "reconciler/applied.c"

static void test_same(void)
{
    struct kt_applied *a = kt_applied_new();
    json_t *o = json_pack("{s:s, s:{s:s}}", "kind", "JobSet", "metadata", "name", "a");
    json_t *o2 = json_pack("{s:s, s:{s:s}}", "kind", "JobSet", "metadata", "name", "b");
    uint64_t h = kt_applied_hash_obj(o), h2 = kt_applied_hash_obj(o2);

    CHECK(h != h2);
    CHECK(!kt_applied_same(a, "ns/tj", "js", h, "10")); /* nothing applied yet */
    kt_applied_put(a, "ns/tj", "js", h, "10");
    CHECK(kt_applied_same(a, "ns/tj", "js", h, "10"));
    CHECK(!kt_applied_same(a, "ns/tj", "js", h, "11"));  /* written since */
    CHECK(!kt_applied_same(a, "ns/tj", "js", h2, "10")); /* other desired content */
    CHECK(!kt_applied_same(a, "ns/tj", "cm", h, "10"));  /* other object */
    CHECK(!kt_applied_same(a, "ns/tj2", "js", h, "10")); /* other owner */
    CHECK(!kt_applied_same(a, "ns/tj", "js", h, ""));    /* not in the cache */
    kt_applied_put(a, "ns/tj", "js", h2, "12");          /* replaced, not added */
    CHECK_EQ_INT(kt_applied_len(a), 1);
    CHECK(kt_applied_same(a, "ns/tj", "js", h2, "12"));
    CHECK(!kt_applied_same(a, "ns/tj", "js", h, "10"));
    json_decref(o);
    json_decref(o2);
    kt_applied_free(a);
}

static void test_forget(void)
{
    struct kt_applied *a = kt_applied_new();
    char owner[32], key[32];

    for (int i = 0; i < 500; i++) { /* grows past the first table size */
        snprintf(owner, sizeof(owner), "ns/tj%d", i);
        kt_applied_put(a, owner, "cm", 1, "5");
        kt_applied_put(a, owner, "js", 2, "6");
    }
    CHECK_EQ_INT(kt_applied_len(a), 1000);
    kt_applied_forget(a, "ns/tj7");
    kt_applied_forget(a, "ns/absent");
    CHECK_EQ_INT(kt_applied_len(a), 998);
    CHECK(!kt_applied_same(a, "ns/tj7", "cm", 1, "5"));
    CHECK(!kt_applied_same(a, "ns/tj7", "js", 2, "6"));
    for (int i = 0; i < 500; i++) {
        if (i == 7) {
            continue;
        }
        snprintf(owner, sizeof(owner), "ns/tj%d", i);
        snprintf(key, sizeof(key), "%s", i % 2 ? "cm" : "js");
        if (!kt_applied_same(a, owner, key, i % 2 ? 1 : 2, i % 2 ? "5" : "6")) {
            TEST_FAIL_("%s %s lost", owner, key);
        }
    }
    kt_applied_free(a);
    kt_applied_free(NULL);
}

/* Terminal is terminal: a finished TrainJob is remembered per uid until it is forgotten. */
static void test_finished(void)
{
    struct kt_applied *a = kt_applied_new();
    CHECK(!kt_applied_finished(a, "ns/tj", "uid-1"));
    kt_applied_mark_finished(a, "ns/tj", "uid-1");
    CHECK(kt_applied_finished(a, "ns/tj", "uid-1"));
    kt_applied_mark_finished(a, "ns/tj", "uid-1"); /* idempotent */
    CHECK_EQ_INT(kt_applied_len(a), 1);
    /* negative: another TrainJob, or a new one of the same name (another uid) */
    CHECK(!kt_applied_finished(a, "ns/other", "uid-1"));
    CHECK(!kt_applied_finished(a, "ns/tj", "uid-2"));
    /* the mark is no applied object: it never makes an apply look done */
    CHECK(!kt_applied_same(a, "ns/tj", "uid-1", 0, ""));
    kt_applied_forget(a, "ns/tj"); /* the TrainJob was deleted */
    CHECK(!kt_applied_finished(a, "ns/tj", "uid-1"));
    kt_applied_free(a);
}

/* An object applied a moment ago and absent from the cache counts as not yet delivered for
 * KT_APPLY_SETTLE_S-like windows only: same content, a known apply time, within the window. */
static void test_recent(void)
{
    struct kt_applied *a = kt_applied_new();
    double left = -1;
    CHECK(!kt_applied_recent(a, "ns/tj", "js", 7, 100.0, 2.0, &left)); /* never applied */
    CHECK(left == 0);
    kt_applied_put_at(a, "ns/tj", "js", 7, "11", 100.0);
    CHECK(kt_applied_recent(a, "ns/tj", "js", 7, 100.5, 2.0, &left));
    CHECK(left == 1.5);
    CHECK(!kt_applied_recent(a, "ns/tj", "js", 8, 100.5, 2.0, &left)); /* other content */
    CHECK(!kt_applied_recent(a, "ns/tj", "cm", 7, 100.5, 2.0, &left)); /* other object */
    CHECK(!kt_applied_recent(a, "ns/x", "js", 7, 100.5, 2.0, &left));  /* other owner */
    CHECK(!kt_applied_recent(a, "ns/tj", "js", 7, 102.0, 2.0, &left)); /* window passed */
    CHECK(left == 0);
    kt_applied_put(a, "ns/tj", "js", 7, "12"); /* no time known: never recent */
    CHECK(!kt_applied_recent(a, "ns/tj", "js", 7, 100.5, 2.0, &left));
    CHECK(kt_applied_same(a, "ns/tj", "js", 7, "12")); /* the rv rule is unchanged */
    kt_applied_free(a);
}

int main(void)
{
    kt_mem_init();
    test_same();
    test_recent();
    test_forget();
    test_finished();
    return test_report();
}
