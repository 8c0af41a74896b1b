/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_json.c - kt_json_*: parse, Go-compatible serialization, getters, equality. */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"

static json_t *parse(const char *s)
{
    return kt_json_parse(s, strlen(s), NULL);
}

/* Dump and compare in one go; frees everything. */
static void check_dump(const char *in, const char *want)
{
    json_t *v = parse(in);
    char *s = kt_json_dump(v);

    CHECK_EQ_STR(s, want);
    free(s);
    json_decref(v);
}

static void test_parse(void)
{
    struct kt_err err = {0};
    json_t *v;

    v = kt_json_parse("{\"a\":1,\"b\":2,\"a\":3}", 19, &err);
    CHECK(v != NULL);
    CHECK_EQ_INT(kt_json_int(v, "a", 0), 3); /* duplicate keys: last wins, like Go */
    json_decref(v);

    v = kt_json_parse("42", 2, &err); /* any value at the top level */
    CHECK(json_is_integer(v));
    json_decref(v);

    v = kt_json_parse("{\"a\":\n  [1,}", 12, &err);
    CHECK(v == NULL);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK_CONTAINS(err.msg, "line 2");

    CHECK(kt_json_parse("", 0, &err) == NULL);
    CHECK(kt_json_parse("{} x", 4, &err) == NULL);     /* trailing garbage */
    CHECK(kt_json_parse("\"\xff\"", 3, &err) == NULL); /* invalid UTF-8 */
    CHECK(kt_json_parse(NULL, 0, &err) == NULL);

    /* Integers beyond int64 become reals (Go reads every number as a float64); what we
     * print for 1e20 must therefore read back. */
    v = parse("{\"s\":\"99999999999999999999 \\\" 1\",\"n\":-99999999999999999999,"
              "\"m\":9223372036854775807,\"f\":100000000000000000000}");
    CHECK(v != NULL);
    CHECK_EQ_STR(kt_json_str(v, "s", NULL), "99999999999999999999 \" 1");
    CHECK(json_is_real(json_object_get(v, "n")));
    CHECK(json_real_value(json_object_get(v, "n")) == -1e20);
    CHECK(json_is_integer(json_object_get(v, "m")));
    CHECK(json_is_real(json_object_get(v, "f")));
    json_decref(v);
    CHECK(kt_json_parse("[99999999999999999999,", 22, &err) == NULL);
    CHECK_CONTAINS(err.msg, "line 1");
}

static void test_reals(void)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0.1, "0.1"},
        {1.5, "1.5"},
        {1e-7, "1e-7"},
        {1e-6, "0.000001"},
        {1e21, "1e+21"},
        {1e20, "100000000000000000000"},
        {100.0, "100"}, /* Go prints float64 100 as 100; it reads back as an integer */
        {-0.0, "-0"},
        {0.1 + 0.2, "0.30000000000000004"},
        {123456.789, "123456.789"},
        {-2.5e-10, "-2.5e-10"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {5e-324, "5e-324"},
    };
    char buf[KT_JSON_REAL_MAX];
    size_t i;

    for (i = 0; i < KT_ARRAY_SIZE(cases); i++) {
        kt_json_format_real(cases[i].v, buf);
        CHECK_EQ_STR(buf, cases[i].want);
    }
    kt_json_format_real(NAN, buf);
    CHECK_EQ_STR(buf, "null");
    kt_json_format_float32_key(1e6, buf);
    CHECK_EQ_STR(buf, "1e+06");
    kt_json_format_float32_key(0.1, buf);
    CHECK_EQ_STR(buf, "0.1");
    kt_json_format_float32_key(123456, buf);
    CHECK_EQ_STR(buf, "123456");
    kt_json_format_float32_key(1e-5, buf);
    CHECK_EQ_STR(buf, "1e-05");
    kt_json_format_float32_key(INFINITY, buf);
    CHECK_EQ_STR(buf, ".inf");
    kt_json_format_float32_key(-INFINITY, buf);
    CHECK_EQ_STR(buf, "-.inf");
}

static void test_dump(void)
{
    json_t *v;
    char *s;

    check_dump("{\"b\":1,\"a\":[1.0,0.1,1e3,-5],\"c\":{},\"d\":[]}",
               "{\"b\":1,\"a\":[1,0.1,1000,-5],\"c\":{},\"d\":[]}");
    check_dump("\"q\\\" \\\\ \\n\\t\\r\\b\\f\\u0001 <&> \\u2028\"",
               "\"q\\\" \\\\ \\n\\t\\r\\b\\f\\u0001 <&> \xe2\x80\xa8\"");
    check_dump("[true,false,null]", "[true,false,null]");

    v = parse("{\"m\":\"<a&b>\\u2029\"}");
    s = kt_json_dump_go(v);
    CHECK_EQ_STR(s, "{\"m\":\"\\u003ca\\u0026b\\u003e\\u2029\"}");
    free(s);
    s = kt_json_dump_pretty(v);
    CHECK_EQ_STR(s, "{\n  \"m\": \"<a&b>\xe2\x80\xa9\"\n}");
    free(s);
    json_decref(v);

    v = parse("{\"a\":[1,{\"b\":null}],\"e\":{}}");
    s = kt_json_dump_pretty(v);
    CHECK_EQ_STR(s, "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"e\": {}\n}");
    free(s);
    json_decref(v);

    s = kt_json_dump(NULL);
    CHECK_EQ_STR(s, "null");
    free(s);

    /* A string with an embedded NUL keeps its length. */
    v = json_stringn("a\0b", 3);
    s = kt_json_dump(v);
    CHECK_EQ_STR(s, "\"a\\u0000b\"");
    free(s);
    json_decref(v);
}

static void test_dump_buf_cap(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    json_t *v = parse("{\"key\":\"a long enough value\"}");

    kt_buf_init(&b, 1 << 20);
    CHECK_OK(kt_json_dump_buf(v, &b, &err));
    CHECK_EQ_STR(b.data, "{\"key\":\"a long enough value\"}");
    CHECK_OK(kt_json_dump_go_buf(v, &b, &err));
    CHECK_EQ_INT(b.len, 2 * strlen("{\"key\":\"a long enough value\"}"));
    kt_buf_release(&b);

    kt_buf_init(&b, 10);
    CHECK_EQ_INT(kt_json_dump_buf(v, &b, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK(b.data == NULL);
    kt_buf_release(&b);
    json_decref(v);
}

static void test_getters(void)
{
    json_t *v = parse("{\"spec\":{\"trainer\":{\"numNodes\":4,\"image\":\"x\",\"on\":true},"
                      "\"list\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"n\":null,\"s\":\"str\"}}");
    json_t *spec = kt_json_path(v, "spec");
    size_t idx = 99;

    CHECK_EQ_INT(json_integer_value(kt_json_path(v, "spec.trainer.numNodes")), 4);
    CHECK(kt_json_path(v, "spec.trainer.missing") == NULL);
    CHECK(kt_json_path(v, "spec.trainer.image.deeper") == NULL);
    CHECK(kt_json_path(v, "") == NULL);
    CHECK_EQ_STR(kt_json_str(kt_json_path(v, "spec.trainer"), "image", "d"), "x");
    CHECK_EQ_STR(kt_json_str(kt_json_path(v, "spec.trainer"), "numNodes", "d"), "d");
    CHECK_EQ_INT(kt_json_int(kt_json_path(v, "spec.trainer"), "image", -1), -1);
    CHECK(kt_json_bool(kt_json_path(v, "spec.trainer"), "on", false));
    CHECK(!kt_json_bool(kt_json_path(v, "spec.trainer"), "off", false));
    CHECK_EQ_INT(kt_json_int(NULL, "x", 7), 7);

    CHECK(kt_json_arr_find(json_object_get(spec, "list"), "name", "b", &idx) != NULL);
    CHECK_EQ_INT(idx, 1);
    CHECK(kt_json_arr_find(json_object_get(spec, "list"), "name", "zz", &idx) == NULL);
    CHECK(kt_json_arr_find(NULL, "name", "a", NULL) == NULL);

    CHECK(json_is_object(kt_json_obj_ensure(spec, "new")));
    CHECK(json_is_object(kt_json_obj_ensure(spec, "n"))); /* null is replaced */
    CHECK(kt_json_obj_ensure(spec, "s") == NULL);         /* another type */
    CHECK(json_is_array(kt_json_arr_ensure(spec, "arr")));
    CHECK(kt_json_arr_ensure(spec, "trainer") == NULL);
    CHECK(kt_json_obj_ensure(json_object_get(spec, "list"), "x") == NULL);
    json_decref(v);
}

static void test_equal(void)
{
    json_t *a = parse("{\"x\":[1,2.0,{\"y\":\"z\"}],\"w\":null}");
    json_t *b = parse("{\"w\":null,\"x\":[1.0,2,{\"y\":\"z\"}]}");
    json_t *c = parse("{\"w\":null,\"x\":[1.0,2,{\"y\":\"Z\"}]}");
    json_t *d = parse("{\"w\":null,\"x\":[1.5,2,{\"y\":\"z\"}]}");

    CHECK(kt_json_equal(a, b));
    CHECK(!kt_json_equal(a, c));
    CHECK(!kt_json_equal(a, d));
    CHECK(!kt_json_equal(a, NULL));
    CHECK(kt_json_equal(NULL, NULL));
    CHECK(!kt_json_equal(json_object_get(a, "w"), json_object_get(a, "x")));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
}

static void test_pointer_push(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    kt_buf_init(&b, 64);
    CHECK_OK(kt_json_pointer_push(&b, "spec", &err));
    size_t mark = b.len;
    CHECK_OK(kt_json_pointer_push(&b, "a/b~c", &err));
    CHECK_EQ_STR(b.data, "/spec/a~1b~0c");
    kt_buf_truncate(&b, mark); /* back to the parent */
    CHECK_EQ_STR(b.data, "/spec");
    kt_buf_truncate(&b, 99); /* longer than the contents: no change */
    CHECK_EQ_STR(b.data, "/spec");
    kt_buf_release(&b);
    /* negative: the cap holds */
    kt_buf_init(&b, 4);
    CHECK_EQ_INT(kt_json_pointer_push(&b, "toolong", &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    kt_buf_release(&b);
}

static void test_sorted_keys(void)
{
    json_t *o = json_pack("{s:i,s:i,s:i}", "b", 1, "a", 2, "B", 3);
    size_t n = 9;
    const char **keys = kt_json_sorted_keys(o, &n);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_STR(keys[0], "B"); /* strcmp order, as Go's sort.Strings */
    CHECK_EQ_STR(keys[1], "a");
    CHECK_EQ_STR(keys[2], "b");
    free(keys);
    json_decref(o);
    o = json_object();
    keys = kt_json_sorted_keys(o, &n); /* empty: n 0, still an array to free */
    CHECK_EQ_INT(n, 0);
    CHECK(keys != NULL);
    free(keys);
    json_decref(o);
}

int main(void)
{
    kt_mem_init();
    test_parse();
    test_reals();
    test_dump();
    test_dump_buf_cap();
    test_getters();
    test_equal();
    test_pointer_push();
    test_sorted_keys();
    return test_report();
}
