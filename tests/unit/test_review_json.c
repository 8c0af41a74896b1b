/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_review_json.c - webhook/review_json.c, the fast AdmissionReview reader,
 * against jansson: every body it takes must come out as jansson's tree (the kept members,
 * same types, values and key order); every body outside its subset (and every malformed
 * one) must be declined so that kt_json_parse answers. Runs over hand-written edge cases and
 * every request.json / request.raw under tests/admission and the fuzz seeds. */
#include "tests/test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/base/mem.h"
#include "webhook/review_json.c"
#include "tests/review_diff.h"

#define HEAD "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"

/* body (NUL-terminated) is taken (want 1) or declined (want 0), never different (-1). */
static void expect(const char *body, int want)
{
    int got = review_diff(body, strlen(body));

    if (got == want) {
        test_passed++;
    } else {
        TEST_FAIL_("review_diff(%s) = %d, want %d", body, got, want);
    }
}

static void test_taken(void)
{
    expect(HEAD "{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{\"a\":1}}}", 1);
    expect(" \t\r\n" HEAD "{} } \n", 1);
    expect("{}", 1);
    expect(HEAD "null}", 1);
    expect(HEAD "[1,\"x\",true,false,null,{},[]]}", 1);
    /* escapes, raw UTF-8 of every length, surrogate pairs */
    expect(HEAD "{\"uid\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\"}}", 1);
    expect(HEAD "{\"uid\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f\"}}", 1);
    /* escaped keys, kept or not */
    expect(HEAD "{\"u\\u0069d\":\"x\",\"\\u006f\\u0062ject\":{\"k\\n\":1},\"n\\u00e9\":2}}", 1);
    /* duplicates: the last wins, the first one's position stays */
    expect(HEAD "{\"uid\":\"a\"},\"request\":{\"uid\":\"b\",\"uid\":\"c\"}}", 1);
    expect(HEAD "{\"object\":{\"a\":1,\"b\":2,\"a\":3},\"object\":{\"z\":1,\"y\":{\"x\":[]}}}}", 1);
    expect("{\"kind\":1,\"kind\":\"AdmissionReview\",\"apiVersion\":[true]}", 1);
    /* integers: 18 digits, zero, negative zero, the extremes */
    expect(HEAD "{\"object\":[0,-0,-1,123456789012345678,-999999999999999999]}}", 1);
    /* the unread members are checked but not built */
    expect(HEAD "{\"userInfo\":{\"extra\":{\"k\":[\"v\\u00e9\"]}},\"options\":null}}", 1);
}

static void test_declined(void)
{
    /* outside the subset (jansson takes them) */
    expect(HEAD "{\"object\":{\"r\":1.5}}}", 0);
    expect(HEAD "{\"object\":{\"r\":1e3}}}", 0);
    expect(HEAD "{\"userInfo\":{\"r\":-2E-3}}}", 0);
    expect(HEAD "{\"object\":1234567890123456789}}", 0);
    expect("[1]", 0);
    expect("\"x\"", 0);
    /* jansson refuses them */
    expect("", 0);
    expect("{", 0);
    expect("{\"a\":1,}", 0);
    expect("{\"a\" 1}", 0);
    expect("{\"a\":1}x", 0);
    expect("{\"a\":01}", 0);
    expect("{\"a\":-}", 0);
    expect("{\"a\":truex}", 0);
    expect("{\"a\":nul}", 0);
    expect("{\"a\":\"\\u0000\"}", 0);
    expect("{\"a\":\"\\ud800\"}", 0);
    expect("{\"a\":\"\\udc00\\ud800\"}", 0);
    expect("{\"a\":\"\\ud800\\u0041\"}", 0);
    expect("{\"a\":\"\\x\"}", 0);
    expect("{\"a\":\"\\u12g4\"}", 0);
    expect("{\"a\":\"\x01\"}", 0);
    expect("{\"a\":\"\xc0\x80\"}", 0);         /* overlong */
    expect("{\"a\":\"\xed\xa0\x80\"}", 0);     /* surrogate */
    expect("{\"a\":\"\xf4\x90\x80\x80\"}", 0); /* past U+10FFFF */
    expect("{\"a\":\"\xe2\x82\"}", 0);         /* cut short */
    expect("{\"a\":\"\x80\"}", 0);
    expect("{\"a\":\"abc}", 0);
    expect("\xef\xbb\xbf{}", 0); /* a BOM */
}

/* Nesting past the reader's limit is jansson's (it allows 2048). */
static void test_depth(void)
{
    struct kt_buf b;
    int ok = 0;

    kt_buf_init(&b, 1 << 20);
    ok |= kt_buf_puts(&b, HEAD "{\"userInfo\":", NULL);
    for (int i = 0; i < 300; i++) {
        ok |= kt_buf_puts(&b, "[", NULL);
    }
    for (int i = 0; i < 300; i++) {
        ok |= kt_buf_puts(&b, "]", NULL);
    }
    ok |= kt_buf_puts(&b, "}}", NULL);
    CHECK_EQ_INT(ok, 0);
    CHECK_EQ_INT(review_diff(b.data, b.len), 0);
    CHECK(kt_review_json_parse(b.data, b.len) == NULL);
    kt_buf_release(&b);
}

/* Every review body in dir/<case>/name: taken when want_taken, and never different. */
static void test_dir(const char *dir, const char *name, bool want_taken)
{
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort), seen = 0;

    for (int i = 0; i < n; i++) {
        char *path = kt_xasprintf("%s/%s%s%s", dir, ents[i]->d_name, name[0] ? "/" : "", name);
        struct kt_buf b;
        kt_buf_init(&b, 16u << 20);
        if (ents[i]->d_name[0] != '.' && kt_buf_read_file(&b, path, NULL) == 0) {
            int got = review_diff(b.data ? b.data : "", b.len);
            seen++;
            if (got < 0 || (want_taken && got == 0)) {
                TEST_FAIL_("%s: review_diff = %d", path, got);
            } else {
                test_passed++;
            }
        }
        kt_buf_release(&b);
        free(path);
        free(ents[i]);
    }
    free(ents);
    CHECK(seen > 0);
}

int main(void)
{
    kt_mem_init();
    test_taken();
    test_declined();
    test_depth();
    test_dir("tests/admission", "request.json", true);
    test_dir("tests/admission", "request.raw", false);
    test_dir("tests/fuzz/corpus/admission", "", false);
    return test_report();
}
