/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_base.c - err, buf, str, strv and the FNV-1a hash: the base every module uses. */
#include "tests/test.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/base/buf.h"
#include "common/base/err.h"
#include "common/base/hash.h"
#include "common/base/log.h"
#include "common/base/mem.h"
#include "common/base/str.h"

static void test_buf_cap(void)
{
    struct kt_buf b;
    struct kt_err err = {0};

    kt_buf_init(&b, 4);
    CHECK_OK(kt_buf_append(&b, "abc", 3, &err));
    CHECK_EQ_STR(b.data, "abc");
    CHECK_EQ_INT(kt_buf_append(&b, "de", 2, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK(b.data == NULL);
    kt_buf_release(&b);
}

/* kt_buf_recycle keeps an allocation up to keep bytes under the same max, and frees one that
 * grew past keep or whose max changes. */
static void test_buf_recycle(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    char *kept;

    kt_buf_init(&b, 1000);
    CHECK_OK(kt_buf_append(&b, "abc", 3, &err));
    kept = b.data;
    kt_buf_recycle(&b, 1000, 128); /* 64 bytes allocated: kept, emptied */
    CHECK(b.data == kept);
    CHECK_EQ_INT((int)b.len, 0);
    CHECK_OK(kt_buf_try_reserve(&b, 500, &err));
    kt_buf_recycle(&b, 1000, 128); /* grew past keep: freed */
    CHECK(b.data == NULL);
    CHECK_EQ_INT((int)b.cap, 0);
    CHECK_OK(kt_buf_append(&b, "x", 1, &err));
    kt_buf_recycle(&b, 2000, 128); /* another max: freed, the new max in force */
    CHECK(b.data == NULL);
    CHECK_EQ_INT((int)b.max, 2000);
    kt_buf_release(&b);
}

/* The request path's growth: the allocation is known before it happens (the body budget
 * charges it), reserving never reallocates an append that fits, and past max it fails. */
static void test_buf_try_reserve(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    char *before;

    kt_buf_init(&b, 1000);
    CHECK_EQ_INT((int)kt_buf_cap_for(&b, 10), 64);
    CHECK_EQ_INT((int)kt_buf_cap_for(&b, 700), 1001); /* clamped to max + NUL */
    CHECK_OK(kt_buf_try_reserve(&b, 700, &err));
    CHECK_EQ_INT((int)b.cap, 1001);
    CHECK_EQ_STR(b.data, "");
    before = b.data;
    CHECK_OK(kt_buf_append(&b, "abc", 3, &err));
    CHECK(b.data == before);
    CHECK_EQ_INT((int)kt_buf_cap_for(&b, 1000), 1001);
    CHECK_EQ_INT(kt_buf_try_reserve(&b, 1001, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK(b.data == NULL);
    kt_buf_release(&b);
}

/* One record is one line: control characters in a message are escaped. */
static void test_log_one_line(void)
{
    char path[] = "/tmp/kt-test-log-XXXXXX";
    char got[512] = {0};
    int fd = mkstemp(path), saved = dup(2);
    size_t lines = 0;

    CHECK(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    kt_log_error("test", "a\nb\rc\x01"
                         "d\te");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK(pread(fd, got, sizeof(got) - 1, 0) > 0);
    close(fd);
    unlink(path);
    for (const char *p = got; *p; p++) {
        lines += *p == '\n';
    }
    CHECK_EQ_INT((int)lines, 1);
    CHECK(strstr(got, " error test a\\nb\\rc\\x01d\te\n") != NULL);
}

static void test_buf_printf_take(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    char big[600];
    size_t len = 0;
    char *s;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    kt_buf_init(&b, 1 << 20);
    CHECK_OK(kt_buf_printf(&b, &err, "%d-%s", 42, "y"));
    CHECK_OK(kt_buf_printf(&b, &err, "%s", big));
    s = kt_buf_take(&b, &len);
    CHECK_EQ_INT(len, 4 + 599);
    CHECK(strncmp(s, "42-yxxx", 7) == 0);
    CHECK(b.data == NULL);
    free(s);
    s = kt_buf_take(&b, NULL);
    CHECK_EQ_STR(s, "");
    free(s);
}

static void test_buf_read_file(void)
{
    struct kt_buf b;
    struct kt_err err = {0};

    kt_buf_init(&b, 10);
    CHECK_EQ_INT(kt_buf_read_file(&b, "/nonexistent/kt", &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
    CHECK_CONTAINS(err.msg, "/nonexistent/kt");
    kt_buf_init(&b, 10);
    CHECK_EQ_INT(kt_buf_read_file(&b, "Makefile", &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK_EQ_STR(err.msg, "Makefile: exceeds the limit of 10 bytes"); /* the path once */
    kt_buf_release(&b);
}

static void test_str_to_i64(void)
{
    struct kt_err err = {0};
    int64_t v = 7;

    CHECK_OK(kt_str_to_i64(kt_str_c("-42"), -100, 100, &v, &err));
    CHECK_EQ_INT(v, -42);
    CHECK_OK(kt_str_to_i64(kt_str_c("9223372036854775807"), INT64_MIN, INT64_MAX, &v, &err));
    CHECK(v == INT64_MAX);
    CHECK_OK(kt_str_to_i64(kt_str_c("-9223372036854775808"), INT64_MIN, INT64_MAX, &v, &err));
    CHECK(v == INT64_MIN);
    v = 7;
    CHECK_EQ_INT(kt_str_to_i64(kt_str_c("9223372036854775808"), INT64_MIN, INT64_MAX, &v, &err),
                 -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    CHECK_EQ_INT(v, 7);
    CHECK_EQ_INT(kt_str_to_i64(kt_str_c("12a"), 0, 100, &v, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK_EQ_INT(kt_str_to_i64(kt_str_c(""), 0, 100, &v, &err), -1);
    CHECK_EQ_INT(kt_str_to_i64(kt_str_c("-"), 0, 100, &v, &err), -1);
    CHECK_EQ_INT(kt_str_to_i64(kt_str_c("101"), 0, 100, &v, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
}

static void test_str_cut_and_strv(void)
{
    struct kt_str head;
    struct kt_str rest = kt_str_cut(kt_str_c("key=value=x"), '=', &head);
    struct kt_strv v;

    CHECK(kt_str_eq(head, "key"));
    CHECK(kt_str_eq(rest, "value=x"));
    rest = kt_str_cut(kt_str_c("novalue"), '=', &head);
    CHECK(kt_str_eq(head, "novalue"));
    CHECK(rest.ptr == NULL);
    kt_strv_init(&v);
    kt_strv_push(&v, "b");
    kt_strv_push(&v, "a");
    kt_strv_sort(&v);
    CHECK_EQ_STR(v.items[0], "a");
    CHECK(kt_strv_contains(&v, "b"));
    CHECK(!kt_strv_contains(&v, "c"));
    CHECK(!kt_strv_sorted_contains(&v, "c"));
    kt_strv_push(&v, "a");
    kt_strv_push(&v, "c");
    kt_strv_sort(&v);
    kt_strv_uniq(&v);
    CHECK_EQ_INT(v.len, 3); /* a, b, c: the repeated "a" dropped */
    CHECK(kt_strv_sorted_contains(&v, "a") && kt_strv_sorted_contains(&v, "c"));
    CHECK(!kt_strv_sorted_contains(&v, "bb"));
    kt_strv_release(&v);
    kt_strv_release(&v);
    CHECK(!kt_strv_sorted_contains(&v, "a")); /* empty */
}

static void test_err(void)
{
    struct kt_err err = {0};

    CHECK_EQ_INT(kt_err_set(&err, KT_EINVAL, "bad %s", "thing"), -1);
    CHECK_EQ_STR(err.msg, "bad thing");
    CHECK_EQ_INT(kt_err_prefix(&err, "file.yaml:%d", 3), -1);
    CHECK_EQ_STR(err.msg, "file.yaml:3: bad thing");
    CHECK_EQ_INT(kt_err_set(NULL, KT_EINVAL, "ignored"), -1);
    CHECK_EQ_STR(kt_err_code_str(KT_ETOOBIG), "too big");
    CHECK_EQ_STR(kt_err_code_str((enum kt_code)999), "unknown error");
}

/* The published FNV-1a test vectors (32 and 64 bit), the string and memory forms agreeing, and
 * the separator telling ("ab","c") from ("a","bc"). */
static void test_fnv(void)
{
    CHECK(kt_fnv64_str(KT_FNV64_BASIS, "") == KT_FNV64_BASIS);
    CHECK(kt_fnv64_str(KT_FNV64_BASIS, "a") == 0xaf63dc4c8601ec8cull);
    CHECK(kt_fnv64_str(KT_FNV64_BASIS, "foobar") == 0x85944171f73967e8ull);
    CHECK(kt_fnv64_mem(KT_FNV64_BASIS, "foobar", 6) == 0x85944171f73967e8ull);
    CHECK(kt_fnv64_mem(KT_FNV64_BASIS, "foobar", 3) == kt_fnv64_str(KT_FNV64_BASIS, "foo"));
    CHECK(kt_fnv64_str(kt_fnv64_sep(kt_fnv64_str(KT_FNV64_BASIS, "a")), "b") ==
          0xe57da31903de37b1ull);
    uint64_t ab_c = kt_fnv64_str(kt_fnv64_sep(kt_fnv64_str(KT_FNV64_BASIS, "ab")), "c");
    uint64_t a_bc = kt_fnv64_str(kt_fnv64_sep(kt_fnv64_str(KT_FNV64_BASIS, "a")), "bc");
    CHECK(ab_c != a_bc);
    CHECK(kt_fnv32_str("") == KT_FNV32_BASIS);
    CHECK(kt_fnv32_str("a") == 0xe40c292cu);
    CHECK(kt_fnv32_str("foobar") == 0xbf9cf968u);
    CHECK(kt_fnv32_mem("foobar", 6) == 0xbf9cf968u);
    CHECK(kt_fnv32_mem("foobar", 0) == KT_FNV32_BASIS);
}

int main(void)
{
    kt_mem_init();
    test_buf_cap();
    test_buf_try_reserve();
    test_buf_recycle();
    test_log_one_line();
    test_buf_printf_take();
    test_buf_read_file();
    test_str_to_i64();
    test_str_cut_and_strv();
    test_err();
    test_fnv();
    return test_report();
}
