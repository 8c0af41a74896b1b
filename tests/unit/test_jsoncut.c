/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_jsoncut.c - cutting metadata.managedFields from JSON text
 * (common/base/jsoncut.h): every position of the member, watch events and list pages, the
 * same tree as parsing and deleting; text it cannot follow (truncated, malformed, too deep)
 * stays as it was; strings holding the name, escapes and unicode are not mistaken for it; other
 * members named by rules (a JobSet's spec.replicatedJobs); the byte-search precheck. */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/jsoncut.h"
#include "common/base/mem.h"

#define MF "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:a\":{}}}]"

/* Cut t in place; the text after (caller frees) and whether it was cut. */
static char *cut(const char *t, bool *was_cut)
{
    size_t len = strlen(t);
    char *c = kt_xstrdup(t);
    *was_cut = kt_json_cut_managed_fields(c, &len);
    CHECK_EQ_INT(strlen(c), len);
    return c;
}

/* The cut text parses to the tree the original gives with every metadata.managedFields
 * deleted (by path: top level, .object, .items[*]). */
static void check_same_as_delete(const char *t)
{
    struct kt_err err = {0};
    bool was;
    char *c = cut(t, &was);
    json_t *want = kt_json_parse(t, strlen(t), &err);
    json_t *got = kt_json_parse(c, strlen(c), &err);
    json_t *objs[] = {want, json_object_get(want, "object")};
    size_t i;
    json_t *it;

    CHECK(was);
    CHECK(want != NULL && got != NULL);
    for (size_t k = 0; k < KT_ARRAY_SIZE(objs); k++) {
        json_object_del(json_object_get(objs[k], "metadata"), "managedFields");
    }
    json_array_foreach(json_object_get(want, "items"), i, it)
    {
        json_object_del(json_object_get(it, "metadata"), "managedFields");
    }
    CHECK(kt_json_equal(want, got));
    CHECK(strstr(c, "managedFields") == NULL);
    json_decref(want);
    json_decref(got);
    free(c);
}

static void test_positions(void)
{
    check_same_as_delete("{\"metadata\":{\"name\":\"a\"," MF ",\"uid\":\"u\"},\"spec\":{}}");
    check_same_as_delete("{\"metadata\":{" MF ",\"name\":\"a\"}}");
    check_same_as_delete("{\"metadata\":{\"name\":\"a\"," MF "}}");
    check_same_as_delete("{\"metadata\":{" MF "}}");
    check_same_as_delete("{ \"metadata\" : {\n \"name\" : \"a\" ,\n " MF " ,\n \"x\" : 1 } }");
    check_same_as_delete("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"TrainJob\",\"metadata\":{"
                         "\"name\":\"t\"," MF ",\"resourceVersion\":\"9\"},\"status\":{}}}");
    check_same_as_delete("{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":["
                         "{\"metadata\":{\"name\":\"a\"," MF "}},{\"metadata\":{\"name\":\"b\"}},"
                         "{\"metadata\":{" MF ",\"name\":\"c\"}}]}");
    /* Escapes and unicode around it are kept byte for byte. */
    check_same_as_delete("{\"metadata\":{\"name\":\"caf\\u00e9 \\\"q\\\" \\\\\"," MF
                         ",\"annotations\":{\"k\":\"\\ud83d\\ude00\"}}}");
}

static void test_left_alone(void)
{
    static const char *const same[] = {
        /* not under metadata */
        "{\"spec\":{" MF "}}",
        /* the name inside a string, escaped quotes before it */
        "{\"metadata\":{\"a\":\"\\\"managedFields\\\":[1]\"}}",
        /* spelled with an escape: not recognised */
        "{\"metadata\":{\"\\u006danagedFields\":[1]}}",
        /* truncated */
        "{\"metadata\":{\"name\":\"a\"," MF,
        "{\"metadata\":{" MF ",\"name\":\"a",
        /* malformed: a missing colon, a bad token, trailing bytes, two values */
        "{\"metadata\":{\"name\" \"a\"," MF "}}",
        "{\"metadata\":{\"name\":@," MF "}}",
        "{\"metadata\":{" MF "}} x",
        "{\"metadata\":{" MF "}}{}",
        "",
        "[",
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(same); i++) {
        bool was = true;
        char *c = cut(same[i], &was);
        CHECK(!was);
        CHECK_EQ_STR(c, same[i]);
        free(c);
    }
    /* Nesting deeper than the walk follows: unchanged. */
    struct kt_buf b;
    kt_buf_init(&b, SIZE_MAX / 2);
    int rc = kt_buf_puts(&b, "{\"metadata\":{" MF "},\"d\":", NULL);
    for (int i = 0; i < 70; i++) {
        rc |= kt_buf_puts(&b, "[", NULL);
    }
    for (int i = 0; i < 70; i++) {
        rc |= kt_buf_puts(&b, "]", NULL);
    }
    rc |= kt_buf_puts(&b, "}", NULL);
    CHECK_OK(rc);
    bool was = true;
    char *c = cut(b.data, &was);
    CHECK(!was);
    CHECK_EQ_STR(c, b.data);
    free(c);
    kt_buf_release(&b);
}

/* A managedFields inside a managedFields is cut once, with its outer one. */
static void test_nested_and_copy(void)
{
    static const char t[] = "{\"metadata\":{\"managedFields\":{\"metadata\":{" MF "}},\"n\":1}}";
    char out[sizeof(t)];
    size_t n = 0;
    CHECK(kt_json_cut_managed_fields_to(t, sizeof(t) - 1, out, &n));
    CHECK_EQ_STR(out, "{\"metadata\":{\"n\":1}}");
    CHECK_EQ_INT(n, strlen(out));
    /* Negative: nothing to cut leaves out untouched. */
    memset(out, 'x', sizeof(out));
    CHECK(!kt_json_cut_managed_fields_to("{\"a\":1}", 7, out, &n));
    CHECK(out[0] == 'x');
}

/* kt_json_may_cut on an exact heap copy of s (so a read outside it is caught by ASan). */
static bool may(const char *s, const struct kt_json_cut_rule *rules)
{
    size_t len = strlen(s);
    char *t = kt_xmalloc(len ? len : 1);
    memcpy(t, s, len);
    bool r = kt_json_may_cut(t, len, rules);
    free(t);
    return r;
}

/* Whether `"name"` is in t[from..to): the precheck's oracle. */
static bool oracle(const char *t, size_t from, size_t to, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = from; i + n + 2 <= to; i++) {
        if (t[i] == '"' && memcmp(t + i + 1, name, n) == 0 && t[i + n + 1] == '"') {
            return true;
        }
    }
    return false;
}

/* The precheck: one search for every rule (the name's rarest byte, then the quoted name
 * around it). No false negative: a key at the start or the end of the text, after escaped
 * quotes, after near misses that hold the rare byte; false positives only for the name
 * written as a value. Negatives: the rare byte, or the name, only inside a value; a prefix or
 * a longer name; cut short; no text, no rule, too many rules. */
static void test_may_cut(void)
{
    static const struct kt_json_cut_rule *const mf = KT_JSON_CUT_MANAGED_FIELDS;
    static const struct kt_json_cut_rule js[] = {{"spec", "replicatedJobs"}, KT_JSON_CUT_END};
    static const struct kt_json_cut_rule lb[] = {{"metadata", "labels"}, KT_JSON_CUT_END};
    static const struct kt_json_cut_rule cap[] = {{"a", "Fx"}, KT_JSON_CUT_END};
    static const struct kt_json_cut_rule both[] = {
        {"metadata", "labels"}, {"spec", "replicatedJobs"}, KT_JSON_CUT_END};

    CHECK(may(MF, mf));
    CHECK(may("\"managedFields\"", mf));                     /* the whole text */
    CHECK(may("\"managedFields\":[]}", mf));                 /* at the start */
    CHECK(may("{\"a\":1,\"managedFields\"", mf));            /* at the end */
    CHECK(may("{\"a\":\"\\\"\",\"managedFields\":[]}", mf)); /* after an escaped quote */
    CHECK(may("{\"a\":\"\\\\\",\"managedFields\":[]}", mf)); /* after an escaped backslash */
    CHECK(may("{\"F\":\"FF\",\"managedF\":\"Fields\",\"managedFieldsX\":0,\"managedFields\":1}",
              mf)); /* near misses first, each with the rare byte */
    CHECK(may("{\"spec\":{\"J\":\"Jobs\",\"replicatedJobs\":[]}}", js));
    CHECK(may("{\"metadata\":{\"bb\":\"b\",\"labels\":{}}}", lb)); /* no capital: 'b' */
    CHECK(may("\"Fx\"", cap));                              /* the rare byte first in the name */
    CHECK(may("{\"spec\":{\"replicatedJobs\":[]}}", both)); /* the second rule */
    CHECK(may("{\"a\":\"managedFields\"}", mf)); /* the name as a value: a false positive */
    char out[32];
    size_t n = 0;
    CHECK(!kt_json_cut_managed_fields_to("{\"a\":\"managedFields\"}", 21, out, &n));

    CHECK(!may("{\"a\":\"FFF Fields F\"}", mf)); /* the rare byte only inside a value */
    CHECK(!may("{\"a\":\"Jobs J\",\"b\":\"replicated\"}", js));
    CHECK(!may("{\"a\":\"managedFields are\"}", mf));     /* the name unquoted in a value */
    CHECK(!may("{\"a\":\"\\\"managedFields\\\"\"}", mf)); /* escaped quotes around */
    CHECK(!may("\"managedField\"", mf));
    CHECK(!may("managedFields\"", mf));
    CHECK(!may("\"xmanagedFields\"", mf));
    CHECK(!may("\"managedFieldsx\"", mf));
    CHECK(!may("{\"managedFields", mf));     /* cut short */
    CHECK(!may("{\"a\":\"managedF", mf));    /* the rare byte last */
    CHECK(!may("FFFFFFFFFFFFFFFFFFFF", mf)); /* only the rare byte */
    CHECK(!may("Fx\"", cap));                /* the rare byte first in the text */
    CHECK(may("Fx\"Fx\"", cap));
    CHECK(!may("", mf));
    CHECK(!kt_json_may_cut(NULL, 0, mf));
    CHECK(!may(MF, NULL));
    CHECK(!may(MF, js));
    struct kt_json_cut_rule many[KT_JSON_CUT_RULES_MAX + 2];
    for (size_t i = 0; i < KT_JSON_CUT_RULES_MAX + 1; i++) {
        many[i] = mf[0];
    }
    many[KT_JSON_CUT_RULES_MAX + 1] = (struct kt_json_cut_rule)KT_JSON_CUT_END;
    CHECK(!may(MF, many));

    /* Every slice of a text with keys, values and escapes: the precheck agrees with the
     * oracle (it is an exact search for the quoted name). */
    static const char t[] = "\"labels\":{\"F\":\"\\\"managedFields\\\"\"},\"managedFields\":"
                            "[\"labels\"],\"replicatedJobs\":1,\"managedFields\"";
    const struct kt_json_cut_rule *lists[] = {mf, js, lb};
    size_t wrong = 0;
    for (size_t from = 0; from < sizeof(t); from++) {
        for (size_t to = from; to < sizeof(t); to++) {
            char *c = kt_xmalloc(to - from + 1);
            memcpy(c, t + from, to - from);
            for (size_t k = 0; k < KT_ARRAY_SIZE(lists); k++) {
                wrong += kt_json_may_cut(c, to - from, lists[k]) !=
                         oracle(t, from, to, lists[k][0].member);
            }
            free(c);
        }
    }
    CHECK_EQ_INT(wrong, 0);
}

/* A big list page: 2,000 items, each with its managedFields. */
static void test_large_page(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    int rc;

    kt_buf_init(&b, SIZE_MAX / 2);
    rc = kt_buf_puts(&b, "{\"kind\":\"List\",\"items\":[", NULL);
    for (int i = 0; i < 2000; i++) {
        rc |= kt_buf_printf(&b, NULL, "%s{\"metadata\":{\"name\":\"o%d\"," MF "},\"data\":{}}",
                            i ? "," : "", i);
    }
    rc |= kt_buf_puts(&b, "]}", NULL);
    CHECK_OK(rc);
    size_t before = b.len;
    CHECK(kt_json_cut_managed_fields(b.data, &b.len));
    CHECK(b.len < before);
    json_t *v = kt_json_parse(b.data, b.len, &err);
    CHECK_EQ_INT(json_array_size(json_object_get(v, "items")), 2000);
    CHECK_EQ_STR(
        kt_json_str(json_object_get(json_array_get(json_object_get(v, "items"), 1999), "metadata"),
                    "name", ""),
        "o1999");
    CHECK(strstr(b.data, "managedFields") == NULL);
    json_decref(v);
    kt_buf_release(&b);
}

/* Rules: a JobSet watch event loses metadata.managedFields and spec.replicatedJobs (whose pod
 * templates hold more "spec" objects, cut with it) and keeps the rest; a replicatedJobs that is
 * not a spec's member stays; no match leaves out untouched. */
static void test_rules(void)
{
    static const struct kt_json_cut_rule rules[] = {
        {"metadata", "managedFields"}, {"spec", "replicatedJobs"}, KT_JSON_CUT_END};
    static const char ev[] =
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"JobSet\",\"metadata\":{\"name\":\"j\"," MF
        "},\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{"
        "\"template\":{\"spec\":{\"containers\":[]}}}}}],\"suspend\":false},"
        "\"status\":{\"replicatedJobsStatus\":[{\"name\":\"node\",\"ready\":1}]}}}";
    char out[sizeof(ev)];
    size_t n = 0;
    CHECK(kt_json_cut_members_to(ev, sizeof(ev) - 1, rules, out, &n));
    CHECK_EQ_STR(out, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"JobSet\",\"metadata\":{"
                      "\"name\":\"j\"},\"spec\":{\"suspend\":false},\"status\":{"
                      "\"replicatedJobsStatus\":[{\"name\":\"node\",\"ready\":1}]}}}");
    CHECK_EQ_INT(n, strlen(out));
    /* The second rule alone: managedFields stays. */
    CHECK(kt_json_cut_members_to(ev, sizeof(ev) - 1, rules + 1, out, &n));
    CHECK(strstr(out, "managedFields") != NULL && strstr(out, "replicatedJobs\"") == NULL);
    /* In place, the only member. */
    char one[] = "{\"spec\":{\"replicatedJobs\":[1,2]}}";
    size_t len = strlen(one);
    CHECK(kt_json_cut_members(one, &len, rules + 1));
    CHECK_EQ_STR(one, "{\"spec\":{}}");
    /* Negative: not under spec; the name only inside a string; no rules; too many rules. */
    static const char *const same[] = {
        "{\"status\":{\"replicatedJobs\":[1]}}",
        "{\"spec\":{\"a\":\"\\\"replicatedJobs\\\":[1]\"}}",
        "{\"replicatedJobs\":{\"spec\":1}}",
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(same); i++) {
        memset(out, 'x', sizeof(out));
        CHECK(!kt_json_cut_members_to(same[i], strlen(same[i]), rules, out, &n));
        CHECK(out[0] == 'x');
    }
    static const struct kt_json_cut_rule none[] = {KT_JSON_CUT_END};
    CHECK(!kt_json_cut_members_to(ev, sizeof(ev) - 1, none, out, &n));
    CHECK(!kt_json_cut_members_to(ev, sizeof(ev) - 1, NULL, out, &n));
    /* Too many: KT_JSON_CUT_RULES_MAX + 1 rules, each of which would cut, cut nothing; one
     * fewer cuts (the bound is the refusal, not the rules). */
    struct kt_json_cut_rule many[KT_JSON_CUT_RULES_MAX + 2];
    for (size_t i = 0; i < KT_JSON_CUT_RULES_MAX + 1; i++) {
        many[i] = rules[1];
    }
    many[KT_JSON_CUT_RULES_MAX + 1] = (struct kt_json_cut_rule)KT_JSON_CUT_END;
    CHECK(!kt_json_cut_members_to(ev, sizeof(ev) - 1, many, out, &n));
    many[KT_JSON_CUT_RULES_MAX] = (struct kt_json_cut_rule)KT_JSON_CUT_END;
    CHECK(kt_json_cut_members_to(ev, sizeof(ev) - 1, many, out, &n));
    CHECK(strstr(out, "replicatedJobs\"") == NULL);
}

int main(void)
{
    kt_mem_init();
    test_positions();
    test_left_alone();
    test_nested_and_copy();
    test_may_cut();
    test_large_page();
    test_rules();
    return test_report();
}
