/* SPDX-License-Identifier: Apache-2.0 */
/* tests/review_diff.h - is webhook/review_json.c's tree the one jansson builds?
 *
 * Header-only, for tests/unit/test_review_json.c and tests/fuzz/fuzz_admission.c, which
 * compile webhook/review_json.c in. review_diff() parses a body both ways and compares every
 * member the fast reader keeps: same types, same values, same key order. */
#ifndef KT_TESTS_REVIEW_DIFF_H
#define KT_TESTS_REVIEW_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"

/* Equal types and values (json_equal: an integer never equals a real) and the same text
 * (kt_json_dump keeps key order). Both NULL is equal. */
static bool review_diff_same(const json_t *a, const json_t *b)
{
    if (!a || !b) {
        return !a && !b;
    }
    char *da = kt_json_dump(a), *db = kt_json_dump(b);
    bool same = json_equal(kt__json_unconst(a), kt__json_unconst(b)) && strcmp(da, db) == 0;
    free(da);
    free(db);
    return same;
}

/* Every member of a is named in names. */
static bool review_diff_only(const json_t *a, const char *const *names)
{
    const char *key;
    json_t *v;

    json_object_foreach(kt__json_unconst(a), key, v)
    {
        bool listed = false;
        for (const char *const *n = names; *n; n++) {
            listed = listed || strcmp(*n, key) == 0;
        }
        if (!listed) {
            return false;
        }
    }
    return true;
}

/* Each member named in names is the same in a and b. */
static bool review_diff_members(const json_t *a, const json_t *b, const char *const *names)
{
    for (const char *const *n = names; *n; n++) {
        if (!review_diff_same(json_object_get(a, *n), json_object_get(b, *n))) {
            return false;
        }
    }
    return true;
}

/* 1: the fast reader took body and its tree matches jansson's; 0: it declined (NULL);
 * -1: it took a body jansson refuses, or built something else. */
static int review_diff(const char *body, size_t len)
{
    static const char *const top[] = {"apiVersion", "kind", NULL};
    static const char *const top_all[] = {"apiVersion", "kind", "request", NULL};
    static const char *const req[] = {"uid",       "operation", "kind",      "dryRun",
                                      "namespace", "object",    "oldObject", NULL};
    json_t *fast = kt_review_json_parse(body, len);
    json_t *full = kt_json_parse(body, len, NULL);
    const json_t *fr = json_object_get(fast, "request");
    const json_t *jr = json_object_get(full, "request");
    int rc = 1;

    if (!fast) {
        rc = 0;
    } else if (!json_is_object(full) || !review_diff_only(fast, top_all) ||
               !review_diff_members(fast, full, top)) {
        rc = -1;
    } else if (json_is_object(jr)) {
        rc = json_is_object(fr) && review_diff_only(fr, req) && review_diff_members(fr, jr, req)
                 ? 1
                 : -1;
    } else {
        rc = review_diff_same(fr, jr) ? 1 : -1;
    }
    json_decref(fast);
    json_decref(full);
    return rc;
}

#endif
