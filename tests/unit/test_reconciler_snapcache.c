/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_snapcache.c - reconciler/snapcache.c: the same text parses once
 * and every caller gets its own object equal to kt_snapshot_parse's; a text differing in one
 * byte is another entry; failures are not kept and carry kt_snapshot_parse's error; more
 * than KT_SNAPCACHE_MAX texts replace the oldest. Compiled in directly (reconciler/ is not
 * part of libkt.a). */
#include "tests/test.h"

#include <stdio.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "reconciler/snapcache.c"

static const char RT[] =
    "apiVersion: trainer.kubeflow.org/v1alpha1\n"
    "kind: ClusterTrainingRuntime\n"
    "metadata:\n  name: torch-distributed\n"
    "spec:\n  mlPolicy:\n    numNodes: 1\n    torch:\n      numProcPerNode: auto\n"
    "  template:\n    spec:\n      x: 0.1\n";

static void check_hits(struct kt_snapcache *c, size_t hits, size_t misses)
{
    size_t h, m;
    kt_snapcache_stats(c, &h, &m);
    CHECK_EQ_INT((int)h, (int)hits);
    CHECK_EQ_INT((int)m, (int)misses);
}

static void test_same_text_parsed_once(void)
{
    struct kt_snapcache *c = kt_snapcache_new();
    struct kt_err err = {0};
    json_t *want = kt_snapshot_parse(RT, &err);
    json_t *a = kt_snapcache_parse(c, RT, &err);
    json_t *b = kt_snapcache_parse(c, RT, &err);

    CHECK(want != NULL && a != NULL && b != NULL);
    CHECK(a != b); /* each caller owns its copy */
    CHECK(json_equal(a, want) && json_equal(b, want));
    check_hits(c, 1, 1);
    /* Changing a caller's copy leaves the cached object alone. */
    json_object_del(a, "spec");
    json_t *d = kt_snapcache_parse(c, RT, &err);
    CHECK(json_equal(d, want));
    check_hits(c, 2, 1);
    char *text = kt_json_dump(d), *wtext = kt_json_dump(want);
    CHECK_EQ_STR(text, wtext); /* member order and reals too */
    free(text);
    free(wtext);
    json_decref(a);
    json_decref(b);
    json_decref(d);
    json_decref(want);
    kt_snapcache_free(c);
}

static void test_other_text_and_failures(void)
{
    struct kt_snapcache *c = kt_snapcache_new();
    struct kt_err err = {0}, want_err = {0};
    char other[sizeof(RT)];
    memcpy(other, RT, sizeof(RT));
    other[sizeof(RT) - 3] = '2'; /* x: 0.2 */
    json_t *a = kt_snapcache_parse(c, RT, &err), *b = kt_snapcache_parse(c, other, &err);
    CHECK(a && b && !json_equal(a, b));
    check_hits(c, 0, 2);

    CHECK(kt_snapshot_parse("- a list", &want_err) == NULL);
    CHECK(kt_snapcache_parse(c, "- a list", &err) == NULL);
    CHECK_EQ_STR(err.msg, want_err.msg);
    CHECK(kt_snapcache_parse(c, "- a list", &err) == NULL); /* parsed again: not kept */
    check_hits(c, 0, 4);
    json_decref(a);
    json_decref(b);
    kt_snapcache_free(c);
}

static void test_bounded(void)
{
    struct kt_snapcache *c = kt_snapcache_new();
    struct kt_err err = {0};
    char text[64];
    for (int i = 0; i <= KT_SNAPCACHE_MAX; i++) { /* one more than fits: the first goes */
        snprintf(text, sizeof(text), "kind: R\nmetadata:\n  name: r%d\n", i);
        json_decref(kt_snapcache_parse(c, text, &err));
    }
    check_hits(c, 0, KT_SNAPCACHE_MAX + 1);
    snprintf(text, sizeof(text), "kind: R\nmetadata:\n  name: r%d\n", KT_SNAPCACHE_MAX);
    json_decref(kt_snapcache_parse(c, text, &err)); /* the newest is kept */
    check_hits(c, 1, KT_SNAPCACHE_MAX + 1);
    json_decref(kt_snapcache_parse(c, "kind: R\nmetadata:\n  name: r0\n", &err));
    check_hits(c, 1, KT_SNAPCACHE_MAX + 2);
    kt_snapcache_free(c);
}

int main(void)
{
    kt_mem_init();
    test_same_text_parsed_once();
    test_other_text_and_failures();
    test_bounded();
    return test_report();
}
