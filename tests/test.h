/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test.h - the unit-test checks: print expression, both values and file:line.
 *
 * Each test binary calls its tests from main() and returns test_report(), which
 * prints "N passed, N failed". Header-only; no registration. */
#ifndef KT_TEST_H
#define KT_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_passed;
static int test_failed;

#define TEST_FAIL_(...)                                                                            \
    do {                                                                                           \
        test_failed++;                                                                             \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                       \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed++;                                                                         \
        } else {                                                                                   \
            TEST_FAIL_("CHECK(%s)", #cond);                                                        \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ == b_) {                                                                            \
            test_passed++;                                                                         \
        } else {                                                                                   \
            TEST_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);                                  \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ && b_ && strcmp(a_, b_) == 0) {                                                     \
            test_passed++;                                                                         \
        } else {                                                                                   \
            TEST_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",                   \
                       b_ ? b_ : "(null)");                                                        \
        }                                                                                          \
    } while (0)

/* Check that a string contains a substring. */
#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ && n_ && strstr(h_, n_)) {                                                          \
            test_passed++;                                                                         \
        } else {                                                                                   \
            TEST_FAIL_("%s contains %s: \"%s\" lacks \"%s\"", #hay, #needle, h_ ? h_ : "(null)",   \
                       n_ ? n_ : "(null)");                                                        \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        if ((call) == 0) {                                                                         \
            test_passed++;                                                                         \
        } else {                                                                                   \
            TEST_FAIL_("%s failed", #call);                                                        \
        }                                                                                          \
    } while (0)

static inline int test_report(void)
{
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}

#endif
