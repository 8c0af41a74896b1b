/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_quantity.c - quantities parse, print and add exactly as apimachinery's
 * resource.Quantity (docs/internals/upstream.md#quantities). Expected strings were produced by
 * apimachinery v0.35.4's ParseQuantity/String/Add/Mul on the same inputs. */
#include "tests/test.h"

#include "common/base/mem.h"
#include "common/base/quantity.h"

struct parse_case {
    const char *in;
    const char *want; /* String(), NULL when parsing fails */
    const char *err;  /* the error text, NULL on success */
};

static const struct parse_case PARSE_CASES[] = {
    {"0", "0", NULL},
    {"1", "1", NULL},
    {"-1", "-1", NULL},
    {"+1", "+1", NULL},
    {"01", "01", NULL},
    {"1.", "1.", NULL},
    {"2.5", "2500m", NULL},
    {"0.1", "100m", NULL},
    {"1000", "1k", NULL},
    {"1500", "1500", NULL},
    {"1.5Gi", "1536Mi", NULL},
    {"4Gi", "4Gi", NULL},
    {"0.5Ki", "512", NULL},
    {"0.1Ki", "102400m", NULL},
    {"1e3", "1e3", NULL},
    {"1E3", "1E3", NULL},
    {"1e+3", "1e+3", NULL},
    {"1.5e3", "1500", NULL},
    {"1e4", "10e3", NULL},
    {"1e-3", "1e-3", NULL},
    {"1E-3", "1E-3", NULL},
    {"1e-7", "100e-9", NULL},
    {"1e-10", "1e-9", NULL},
    {"5e-1", "500e-3", NULL},
    {"1e0", "1e0", NULL},
    {"10e0", "10e0", NULL},
    {"1e2", "100", NULL},
    {"100m", "100m", NULL},
    {"1500m", "1500m", NULL},
    {"1.000001", "1.000001", NULL},
    {"1n", "1n", NULL},
    {"0.5n", "1n", NULL},
    {"1u", "1u", NULL},
    {"1.5u", "1500n", NULL},
    {"1000n", "1u", NULL},
    {"1000000u", "1", NULL},
    {"1k", "1k", NULL},
    {"1M", "1M", NULL},
    {"1G", "1G", NULL},
    {"1T", "1T", NULL},
    {"1P", "1P", NULL},
    {"1E", "1E", NULL},
    {"1000E", "1", NULL},
    {"12E", "12E", NULL},
    {"1Ki", "1Ki", NULL},
    {"8Ki", "8Ki", NULL},
    {"+1Ki", "+1Ki", NULL},
    {"-1Ki", "-1Ki", NULL},
    {"1024Ki", "1Mi", NULL},
    {"1000Ki", "1000Ki", NULL},
    {"1.5Ki", "1536", NULL},
    /* A BinarySI value that is no multiple of 1024 prints bare; parsed again it is
     * DecimalSI and prints differently (apimachinery v0.35.4, found by fuzz_quantity). */
    {"99999012937.5Ki", "102398989248000", NULL},
    {"102398989248000", "102398989248k", NULL},
    {"1.0Ki", "1Ki", NULL},
    {"1Ti", "1Ti", NULL},
    {"100Ti", "100Ti", NULL},
    {"1Pi", "1Pi", NULL},
    {"1.5Pi", "1536Ti", NULL},
    {"1.Pi", "1Pi", NULL},
    {"1Ei", "1Ei", NULL},
    {"7Ei", "7Ei", NULL},
    {"8Ei", "9223372036854775807", NULL},
    {"-8Ei", "-9223372036854775807", NULL},
    {"99999999999999999999Ei", "9223372036854775807", NULL},
    {"1023", "1023", NULL},
    {"1024", "1024", NULL},
    {"2048", "2048", NULL},
    {"0.5", "500m", NULL},
    {".5", "500m", NULL},
    {"+.5", "500m", NULL},
    {"00.5", "500m", NULL},
    {"0.100", "100m", NULL},
    {"1.50", "1500m", NULL},
    {"1.500", "1.500", NULL},
    {"1000.000", "1k", NULL},
    {"-0", "0", NULL},
    {"-", "0", NULL},
    {"+", "0", NULL},
    {".", "0", NULL},
    {"-0.0Ki", "0", NULL},
    {"0.0Ki", "0", NULL},
    {".5Ki", "512", NULL},
    {"-.5Ki", "-512", NULL},
    {"5.Ki", "5.Ki", NULL},
    {"0.0000000001", "1n", NULL},
    {"-0.0000000001", "-1n", NULL},
    {"0.000000000000000000000000000001Ki", "1n", NULL},
    {"1234567890123456789", "1234567890123456789", NULL},
    {"1234567890123456789.5", "1234567890123456789500m", NULL},
    {"-1234567890123456789.5", "-1234567890123456789500m", NULL},
    {"123456789012345678", "123456789012345678", NULL},
    {"1000000000000000000000", "1", NULL},
    {"9.3e18", "9300e15", NULL},
    {"2.000000001", "2.000000001", NULL},
    {"-2.000000001", "-2.000000001", NULL},
    {"1e4294967299", "1e4294967299", NULL},
    {"1.e3", "1.e3", NULL},
    {"1m", "1m", NULL},
    {"-100m", "-100m", NULL},
    {"0.001m", "1u", NULL},
    {"12345m", "12345m", NULL},
    {"1.23456789", "1234567890n", NULL},
    {"-2.5", "-2500m", NULL},
    {"", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"abc", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1K", NULL, "unable to parse quantity's suffix"},
    {"1ki", NULL, "unable to parse quantity's suffix"},
    {"1e", NULL, "unable to parse quantity's suffix"},
    {"5e+", NULL, "unable to parse quantity's suffix"},
    {"1Mi3", NULL, "unable to parse quantity's suffix"},
    {"1ee3", NULL, "unable to parse quantity's suffix"},
    {"1.5.5", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1e3e", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"0x10", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1e99999999999999999999", NULL, "unable to parse quantity's suffix"},
    {".Pi", NULL, "unable to parse numeric part of quantity"},
    {"-.Pi", NULL, "unable to parse numeric part of quantity"},
    {"1e-9n", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1m5", NULL, "unable to parse quantity's suffix"},
    {"+-1", NULL, "unable to parse quantity's suffix"},
    {"1+", NULL, "unable to parse quantity's suffix"},
    {"1e+-3", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1Ki+1", NULL, "unable to parse quantity's suffix"},
    {" 1", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1 ", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"--1", NULL, "unable to parse quantity's suffix"},
    {"1,5", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1_000", NULL,
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
};

static void test_parse_table(void)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(PARSE_CASES); i++) {
        const struct parse_case *c = &PARSE_CASES[i];
        struct kt_quantity q;
        struct kt_err err = {0};
        char buf[KT_QUANTITY_STR_MAX];
        int rc = kt_quantity_parse_c(c->in, &q, &err);

        if (c->want == NULL) {
            CHECK_EQ_INT(rc, -1);
            CHECK_EQ_STR(err.msg, c->err);
            CHECK_EQ_INT(err.code, KT_EPARSE);
            continue;
        }
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            CHECK_EQ_STR(kt_quantity_format(&q, buf, sizeof(buf)), c->want);
        }
    }
}

static struct kt_quantity q_of(const char *s)
{
    struct kt_quantity q = {0};
    struct kt_err err = {0};

    if (kt_quantity_parse_c(s, &q, &err) < 0) {
        fprintf(stderr, "cannot parse %s: %s\n", s, err.msg);
    }
    return q;
}

static void check_str(const struct kt_quantity *q, const char *want)
{
    char buf[KT_QUANTITY_STR_MAX];
    CHECK_EQ_STR(kt_quantity_format(q, buf, sizeof(buf)), want);
}

static void test_arithmetic(void)
{
    struct kt_quantity a = q_of("4Gi"), b;
    struct kt_err err = {0};

    CHECK_OK(kt_quantity_mul(&a, 100, &err));
    check_str(&a, "400Gi");
    b = q_of("4Gi");
    CHECK_OK(kt_quantity_mul(&b, 2, &err));
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "408Gi");

    a = q_of("1Gi");
    b = q_of("500M");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "1573741824");

    /* A zero accumulator takes the format of what is added to it. */
    a = q_of("0");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    b = q_of("1Gi");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "1573741824");
    a = q_of("1Gi");
    CHECK_OK(kt_quantity_sub(&a, &b, &err));
    b = q_of("500M");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "500M");
    a = q_of("0");
    b = q_of("1Ki");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "2Ki");

    a = q_of("1Gi");
    CHECK_OK(kt_quantity_mul(&a, 0, &err));
    check_str(&a, "0");
    a = q_of("500m");
    CHECK_OK(kt_quantity_mul(&a, 3, &err));
    check_str(&a, "1500m");
    a = q_of("1e3");
    CHECK_OK(kt_quantity_mul(&a, -2, &err));
    check_str(&a, "-2e3");
    a = q_of("100m");
    b = q_of("1Gi");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "1073741824100m");
    a = q_of("0.5Ki");
    CHECK_OK(kt_quantity_mul(&a, 4, &err));
    check_str(&a, "2Ki");
    a = q_of("1.5");
    b = q_of("2");
    CHECK_OK(kt_quantity_sub(&a, &b, &err));
    check_str(&a, "-500m");

    /* Past int64, still exact; upstream's quirks kept. */
    a = q_of("8Ei");
    b = q_of("8Ei");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "18446744073709551614");
    a = q_of("1024Ei");
    CHECK_OK(kt_quantity_mul(&a, 1024, &err));
    check_str(&a, "9223372036854775807Ki");
    a = q_of("1000E");
    b = q_of("1");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "1000000000000000000001");
    a = q_of("1E");
    CHECK_OK(kt_quantity_mul(&a, 1000, &err));
    check_str(&a, "1");
    a = q_of("1e3");
    CHECK_OK(kt_quantity_add(&a, &b, &err));
    check_str(&a, "1001");
}

static void test_limits(void)
{
    struct kt_quantity a = q_of("10000000000000000000000000000"), b = a;
    struct kt_err err = {0};

    CHECK_EQ_INT(kt_quantity_parse_c("1e30", &b, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    CHECK_EQ_INT(kt_quantity_parse_c("1000000000000000000000000000000", &b, &err), -1);
    CHECK_OK(kt_quantity_parse_c("99999999999999999999999999999.999999999", &b, &err));
    CHECK_EQ_INT(kt_quantity_parse_c("99999999999999999999999999999.9999999991", &b, &err), -1);
    check_str(&a, "10"); /* upstream has no suffix for 10^27 and prints the bare mantissa */
    CHECK_EQ_INT(kt_quantity_parse_c("1e29", &b, &err), -1);
    /* 1e28 is representable, 10 times it is not; a failed operation leaves the value. */
    a = q_of("1e28");
    b = a;
    CHECK_EQ_INT(kt_quantity_mul(&a, 10, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    CHECK(kt_quantity_cmp(&a, &b) == 0);
    a = q_of("9e28");
    b = q_of("9e28");
    CHECK_EQ_INT(kt_quantity_add(&a, &b, &err), -1);
    check_str(&a, "90e27");
    CHECK_EQ_INT(kt_quantity_mul(&a, INT64_MIN, &err), -1);
}

static void test_compare_and_values(void)
{
    struct kt_quantity a = q_of("1Gi"), b = q_of("1073741824"), c = q_of("1G");
    struct kt_err err = {0};
    int64_t v = 0;

    CHECK_EQ_INT(kt_quantity_cmp(&a, &b), 0);
    CHECK_EQ_INT(kt_quantity_cmp(&a, &c), 1);
    CHECK_EQ_INT(kt_quantity_cmp(&c, &a), -1);
    CHECK(kt_quantity_is_zero(&(struct kt_quantity){0}));
    a = q_of("-0");
    CHECK(kt_quantity_is_zero(&a));
    a = q_of("-1m");
    CHECK_EQ_INT(kt_quantity_sign(&a), -1);
    CHECK(!kt_quantity_is_zero(&a));

    static const struct {
        const char *in;
        int64_t value, milli;
    } vals[] = {{"2.5", 3, 2500}, {"0.7", 1, 700},    {"-2.5", -3, -2500}, {"1n", 1, 1},
                {"100m", 1, 100}, {"-0.5", -1, -500}, {"3", 3, 3000},      {"0", 0, 0}};
    for (size_t i = 0; i < KT_ARRAY_SIZE(vals); i++) {
        a = q_of(vals[i].in);
        CHECK_OK(kt_quantity_value(&a, &v, &err));
        CHECK_EQ_INT(v, vals[i].value);
        CHECK_OK(kt_quantity_milli_value(&a, &v, &err));
        CHECK_EQ_INT(v, vals[i].milli);
    }
    a = q_of("9223372036854775807");
    CHECK_OK(kt_quantity_value(&a, &v, &err));
    CHECK_EQ_INT(v, INT64_MAX);
    CHECK_EQ_INT(kt_quantity_milli_value(&a, &v, &err), -1);
    a = q_of("9223372036854775808");
    CHECK_EQ_INT(kt_quantity_value(&a, &v, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);

    a = q_of("4Gi");
    CHECK(kt_quantity_as_int64(&a, &v));
    CHECK_EQ_INT(v, 4294967296LL);
    a = q_of("1.5");
    CHECK(!kt_quantity_as_int64(&a, &v));

    a = kt_quantity_from_int64(2048, KT_QF_BINARY_SI);
    check_str(&a, "2Ki");
    a = kt_quantity_from_milli(2500, KT_QF_DECIMAL_SI);
    check_str(&a, "2500m");
    a = kt_quantity_from_milli(1500, KT_QF_BINARY_SI);
    check_str(&a, "1500m");
}

static void check_json(json_t *v, const char *want, const char *want_err)
{
    struct kt_quantity q;
    struct kt_err err = {0};
    int rc = kt_quantity_from_json(v, &q, &err);

    if (want_err) {
        CHECK_EQ_INT(rc, -1);
        CHECK_CONTAINS(err.msg, want_err);
    } else {
        CHECK_EQ_INT(rc, 0);
        check_str(&q, want);
    }
    json_decref(v);
}

static void test_json(void)
{
    check_json(json_integer(2), "2", NULL);
    check_json(json_integer(-1500), "-1500", NULL);
    check_json(json_integer(1000), "1k", NULL);
    check_json(json_real(0.5), "500m", NULL);
    check_json(json_real(2.0), "2", NULL);
    check_json(json_real(1e21), "1e+21", NULL);
    check_json(json_real(1e-7), "100e-9", NULL);
    check_json(json_real(1.5e-7), "150e-9", NULL);
    check_json(json_real(123.456), "123.456", NULL);
    check_json(json_real(1e20), "100E", NULL);
    check_json(json_real(-0.0), "0", NULL);
    check_json(json_real(0.1), "100m", NULL);
    check_json(json_string(" 1Ki "), "1Ki", NULL);
    check_json(json_string("\xc2\xa0"
                           "2\t\n"),
               "2", NULL);
    check_json(json_string("1.5Gi"), "1536Mi", NULL);
    check_json(json_null(), "0", NULL);
    check_json(json_true(), NULL, "regular expression");
    check_json(json_object(), NULL, "regular expression");
    check_json(json_string(""), NULL, "regular expression");
    check_json(json_string("1 Ki"), NULL, "regular expression");

    struct kt_quantity q = q_of("1.5Gi");
    json_t *j = kt_quantity_to_json(&q);
    CHECK_EQ_STR(json_string_value(j), "1536Mi");
    json_decref(j);
}

static void test_odd_bytes(void)
{
    struct kt_quantity q;
    struct kt_err err = {0};
    char buf[KT_QUANTITY_STR_MAX];
    char zeros[80];

    /* An embedded NUL is just a bad byte, as in Go. */
    CHECK_EQ_INT(kt_quantity_parse("1\0", 2, &q, &err), -1);
    CHECK_CONTAINS(err.msg, "regular expression");
    CHECK_EQ_INT(kt_quantity_parse("1k\0", 3, &q, &err), -1);
    CHECK_CONTAINS(err.msg, "regular expression");
    CHECK_EQ_INT(kt_quantity_parse(NULL, 0, &q, &err), -1);
    /* Canonical input is printed back as written (upstream caches it)... */
    CHECK_OK(kt_quantity_parse_c("0001", &q, &err));
    CHECK_EQ_STR(kt_quantity_format(&q, buf, sizeof(buf)), "0001");
    /* ...unless it is longer than we keep: then the recomputed canonical form is used. */
    memset(zeros, '0', sizeof(zeros));
    zeros[sizeof(zeros) - 2] = '7';
    zeros[sizeof(zeros) - 1] = '\0';
    CHECK_OK(kt_quantity_parse_c(zeros, &q, &err));
    CHECK_EQ_STR(kt_quantity_format(&q, buf, sizeof(buf)), "7");
}

static void test_format_small_buffer(void)
{
    struct kt_quantity q = q_of("1536Mi");
    char buf[4];

    CHECK_EQ_STR(kt_quantity_format(&q, buf, sizeof(buf)), "153");
    q = q_of("123456789012345678901234567");
    CHECK_EQ_STR(kt_quantity_format(&q, buf, sizeof(buf)), "123");
}

int main(void)
{
    kt_mem_init();
    test_parse_table();
    test_arithmetic();
    test_limits();
    test_compare_and_values();
    test_json();
    test_odd_bytes();
    test_format_small_buffer();
    return test_report();
}
