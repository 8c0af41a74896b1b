/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_yaml.c - kt_yaml_*: YAML 1.1 scalar typing as sigs.k8s.io/yaml (go-yaml v2)
 * reads it, anchors and merge keys, line table, caps, errors, and emit round trips. */
#include "tests/test.h"

#include <stdlib.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/yaml.h"

/* Parse one document and return its root as compact JSON (caller frees), or the error
 * message prefixed with "ERR " . */
static char *yaml_to_json(const char *in)
{
    struct kt_yaml_stream s;
    struct kt_err err = {0};
    char *r;

    if (kt_yaml_parse(in, strlen(in), NULL, &s, &err) < 0) {
        kt_yaml_stream_release(&s);
        return kt_xasprintf("ERR %s", err.msg);
    }
    r = s.len ? kt_json_dump(s.docs[0].root) : kt_xstrdup("(no document)");
    kt_yaml_stream_release(&s);
    return r;
}

static void check_yaml(const char *in, const char *want)
{
    char *got = yaml_to_json(in);

    CHECK_EQ_STR(got, want);
    free(got);
}

static void test_scalars(void)
{
    static const struct {
        const char *in;
        const char *want;
    } cases[] = {
        {"v: true", "{\"v\":true}"},
        {"v: True", "{\"v\":true}"},
        {"v: TRUE", "{\"v\":true}"},
        {"v: tRue", "{\"v\":\"tRue\"}"},
        {"v: yes", "{\"v\":true}"},
        {"v: Yes", "{\"v\":true}"},
        {"v: YES", "{\"v\":true}"},
        {"v: yEs", "{\"v\":\"yEs\"}"},
        {"v: on", "{\"v\":true}"},
        {"v: ON", "{\"v\":true}"},
        {"v: y", "{\"v\":true}"},
        {"v: Y", "{\"v\":true}"},
        {"v: n", "{\"v\":false}"},
        {"v: N", "{\"v\":false}"},
        {"v: no", "{\"v\":false}"},
        {"v: off", "{\"v\":false}"},
        {"v: Off", "{\"v\":false}"},
        {"v: false", "{\"v\":false}"},
        {"v: FALSE", "{\"v\":false}"},
        {"v: null", "{\"v\":null}"},
        {"v: Null", "{\"v\":null}"},
        {"v: NULL", "{\"v\":null}"},
        {"v: ~", "{\"v\":null}"},
        {"v:", "{\"v\":null}"},
        {"v: nULL", "{\"v\":\"nULL\"}"},
        {"v: 42", "{\"v\":42}"},
        {"v: -42", "{\"v\":-42}"},
        {"v: +42", "{\"v\":42}"},
        {"v: 0x1F", "{\"v\":31}"},
        {"v: -0x1f", "{\"v\":-31}"},
        {"v: 010", "{\"v\":8}"},
        {"v: 0o17", "{\"v\":15}"},
        {"v: 0b101", "{\"v\":5}"},
        {"v: 1_000", "{\"v\":1000}"},
        {"v: 08", "{\"v\":8}"},
        {"v: 0", "{\"v\":0}"},
        {"v: 1.5", "{\"v\":1.5}"},
        {"v: 1e3", "{\"v\":1000}"},
        {"v: .5", "{\"v\":0.5}"},
        {"v: -.5", "{\"v\":-0.5}"},
        {"v: 1.", "{\"v\":1}"},
        {"v: 1e400", "{\"v\":\"1e400\"}"},
        {"v: 0x", "{\"v\":\"0x\"}"},
        {"v: 1.2.3", "{\"v\":\"1.2.3\"}"},
        {"v: 0x1p3", "{\"v\":\"0x1p3\"}"},
        {"v: 9223372036854775807", "{\"v\":9223372036854775807}"},
        {"v: -9223372036854775808", "{\"v\":-9223372036854775808}"},
        /* Beyond int64 go-yaml makes a uint64; jansson has none, so it becomes a real. */
        {"v: 9223372036854775808", "{\"v\":9223372036854776000}"},
        {"y: 1", "{\"true\":1}"}, /* the YAML 1.1 key surprise */
        {"v: \"3\"", "{\"v\":\"3\"}"},
        {"v: 'true'", "{\"v\":\"true\"}"},
        {"v: !!str 4", "{\"v\":\"4\"}"},
        {"v: !!float 4", "{\"v\":4}"},
        {"v: !!int 0x10", "{\"v\":16}"},
        {"v: !!int \"3\"", "{\"v\":3}"},
        {"v: !custom 5", "{\"v\":\"5\"}"},
        {"v: 2001-12-14", "{\"v\":\"2001-12-14\"}"},
        {"v: 1:20", "{\"v\":\"1:20\"}"}, /* go-yaml has no base-60 */
        {"v: |\n  a\n  b\n", "{\"v\":\"a\\nb\\n\"}"},
        {"v: >-\n  a\n  b\n", "{\"v\":\"a b\"}"},
        {"v: \"\"", "{\"v\":\"\"}"},
        {"v: .inf", "ERR line 1: unsupported value: +Inf"},
        {"v: -.Inf", "ERR line 1: unsupported value: -Inf"},
        {"v: .NaN", "ERR line 1: unsupported value: NaN"},
        {"v: .iNf", "{\"v\":\".iNf\"}"},
        {"v: !!int abc", "ERR line 1: cannot decode !!str `abc` as a !!int"},
        {"v: !!null ~", "{\"v\":null}"},
        {"v: !!null 1", "ERR line 1: cannot decode !!int `1` as a !!null"},
        /* !!binary is decoded; invalid UTF-8 bytes become U+FFFD (checked against kubectl). */
        {"v: !!binary aGk=", "{\"v\":\"hi\"}"},
        {"v: !!binary \"/w==\"", "{\"v\":\"\xef\xbf\xbd\"}"},
        {"v: !!binary |\n  aGVs\n  bG8=\n", "{\"v\":\"hello\"}"},
        {"!!binary aGk=: k", "{\"hi\":\"k\"}"},
        {"v: !!binary YR==", "{\"v\":\"a\"}"}, /* Go's decoder is not strict */
        {"v: !!binary YQ", "ERR line 1: !!binary value contains invalid base64 data"},
        {"v: !!binary YQ=", "ERR line 1: !!binary value contains invalid base64 data"},
        {"v: !!binary \"!!!!\"", "ERR line 1: !!binary value contains invalid base64 data"},
        {"v: !!bool 1", "ERR line 1: cannot decode !!int `1` as a !!bool"},
    };
    size_t i;

    for (i = 0; i < KT_ARRAY_SIZE(cases); i++) {
        char *got = yaml_to_json(cases[i].in);

        if (strcmp(got, cases[i].want) != 0) {
            TEST_FAIL_("input %s: got %s, want %s", cases[i].in, got, cases[i].want);
        } else {
            test_passed++;
        }
        free(got);
    }
}

static void test_keys(void)
{
    check_yaml(
        "yes: 1\n1: 2\n1.5: 3\n1e6: 4\n0x10: 5\n\"q\": 6\nfalse: 7\n.inf: 8",
        "{\"true\":1,\"1\":2,\"1.5\":3,\"1e+06\":4,\"16\":5,\"q\":6,\"false\":7,\".inf\":8}");
    check_yaml("~: 1", "ERR line 1: unsupported map key: null");
    check_yaml("? [a]\n: 1", "ERR line 1: a mapping or sequence cannot be a map key");
    check_yaml("? {a: 1}\n: 1", "ERR line 1: a mapping or sequence cannot be a map key");
    check_yaml("k: &k name\n*k : v", "{\"k\":\"name\",\"name\":\"v\"}");
    check_yaml("k: &k [1]\n*k : v", "ERR line 2: a mapping or sequence cannot be a map key");
}

static void test_anchors_merge(void)
{
    check_yaml("a: &x {p: 1, q: [1, 2]}\nb: *x\n",
               "{\"a\":{\"p\":1,\"q\":[1,2]},\"b\":{\"p\":1,\"q\":[1,2]}}");
    check_yaml("base: &b {x: 1, z: 2}\nd:\n  <<: *b\n  z: 3\n",
               "{\"base\":{\"x\":1,\"z\":2},\"d\":{\"x\":1,\"z\":3}}");
    /* A list of maps: earlier maps take precedence. */
    check_yaml(
        "- &c {x: 1, z: 2}\n- &l {x: 0, z: 2}\n- &s {r: 1}\n- <<: [*s, *l, *c]\n  label: L\n",
        "[{\"x\":1,\"z\":2},{\"x\":0,\"z\":2},{\"r\":1},{\"x\":0,\"z\":2,\"r\":1,\"label\":\"L\"}"
        "]");
    check_yaml("m:\n  <<: {a: 1}\n  <<: {b: 2}\n", "{\"m\":{\"a\":1,\"b\":2}}");
    /* go-yaml v2 (and so kubectl 1.35) merges in order: a later merge overwrites. */
    check_yaml("a: 1\n<<: {a: 2}\n", "{\"a\":2}");
    check_yaml("m:\n  \"<<\": {a: 1}\n", "{\"m\":{\"<<\":{\"a\":1}}}"); /* quoted: no merge */
    check_yaml("m:\n  <<: 3\n",
               "ERR line 2: map merge requires map or sequence of maps as the value");
    check_yaml("m:\n  <<: [{a: 1}, 2]\n",
               "ERR line 2: map merge requires map or sequence of maps as the value");
    check_yaml("a: *nope\n", "ERR line 1: unknown anchor 'nope' referenced");
    check_yaml("a: &r [*r]\n", "ERR line 1: unknown anchor 'r' referenced");
    /* Anchors do not cross documents. */
    check_yaml("---\na: &x 1\n---\nb: *x\n", "ERR line 4: unknown anchor 'x' referenced");
}

static void test_lines(void)
{
    const char *in = "# comment\n"
                     "apiVersion: v1\n"
                     "spec:\n"
                     "  trainer:\n"
                     "    numNodes: 2\n"
                     "  list:\n"
                     "  - name: a\n"
                     "  - name: b\n"
                     "    env:\n"
                     "    - x\n"
                     "  a/b~c: 1\n"
                     "  base: &b {k: 1}\n"
                     "  m:\n"
                     "    <<: *b\n";
    struct kt_yaml_stream s;
    struct kt_err err = {0};
    const struct kt_yaml_doc *d;

    CHECK_OK(kt_yaml_parse(in, strlen(in), NULL, &s, &err));
    CHECK_EQ_INT(s.len, 1);
    d = &s.docs[0];
    CHECK_EQ_INT(d->line, 2);
    CHECK_EQ_INT(kt_yaml_line(d, ""), 2);
    CHECK_EQ_INT(kt_yaml_line(d, "/apiVersion"), 2);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec"), 3);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/trainer/numNodes"), 5);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/list/0"), 7);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/list/1/name"), 8);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/list/1/env/0"), 10);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/a~1b~0c"), 11);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/m"), 13);
    /* Merged members have no entry of their own: the nearest ancestor answers. */
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/m/k"), 13);
    CHECK_EQ_INT(kt_yaml_line(d, "/spec/trainer/missing/deeper"), 4);
    CHECK_EQ_INT(kt_yaml_line(d, "/nothing"), 2);
    CHECK_EQ_INT(kt_yaml_line(d, NULL), 2);
    CHECK_EQ_INT(d->warnings.len, 0);
    kt_yaml_stream_release(&s);
}

static void test_duplicates(void)
{
    const char *in = "a: 1\nb:\n  c: 1\n  c: 2\na: 3\nm:\n  <<: {x: 1}\n  x: 2\n";
    struct kt_yaml_stream s;
    struct kt_err err = {0};

    CHECK_OK(kt_yaml_parse(in, strlen(in), NULL, &s, &err));
    CHECK_EQ_INT(s.len, 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(s.docs[0].root, "a")), 3);
    CHECK_EQ_INT(json_integer_value(kt_json_path(s.docs[0].root, "b.c")), 2);
    CHECK_EQ_INT(json_integer_value(kt_json_path(s.docs[0].root, "m.x")), 2);
    CHECK_EQ_INT(s.docs[0].warnings.len, 2); /* overriding a merged key is not a duplicate */
    if (s.docs[0].warnings.len == 2) {
        CHECK_EQ_STR(s.docs[0].warnings.items[0], "4: duplicate key \"c\"");
        CHECK_EQ_STR(s.docs[0].warnings.items[1], "5: duplicate key \"a\"");
    }
    CHECK_EQ_INT(kt_yaml_line(&s.docs[0], "/a"), 5);
    kt_yaml_stream_release(&s);
}

static void test_streams(void)
{
    const char *in = "a: 1\n---\n---\n# only a comment\n---\n- x\n...\n---\nnull\n";
    struct kt_yaml_stream s;
    struct kt_err err = {0};

    CHECK_OK(kt_yaml_parse(in, strlen(in), NULL, &s, &err));
    CHECK_EQ_INT(s.len, 5);
    if (s.len == 5) {
        CHECK(json_is_object(s.docs[0].root));
        CHECK(s.docs[1].root == NULL);
        CHECK(s.docs[2].root == NULL);
        CHECK(json_is_array(s.docs[3].root));
        CHECK_EQ_INT(s.docs[3].line, 6);
        CHECK(s.docs[4].root == NULL);
    }
    kt_yaml_stream_release(&s);

    CHECK_OK(kt_yaml_parse("", 0, NULL, &s, &err));
    CHECK_EQ_INT(s.len, 0);
    kt_yaml_stream_release(&s);
    CHECK_OK(kt_yaml_parse("# nothing\n", 10, NULL, &s, &err));
    CHECK_EQ_INT(s.len, 0);
    kt_yaml_stream_release(&s);

    /* A bad document keeps the ones before it. */
    in = "a: 1\n---\nb: [\n";
    CHECK_EQ_INT(kt_yaml_parse(in, strlen(in), NULL, &s, &err), -1);
    CHECK_EQ_INT(err.code, KT_EPARSE);
    CHECK_EQ_INT(s.len, 1);
    kt_yaml_stream_release(&s);
    kt_yaml_stream_release(&s); /* idempotent */
}

static void test_json_input(void)
{
    check_yaml("{\"a\": {\"b\": [1, 2.5, \"x\", true, null]}, \"c\": \"yes\"}",
               "{\"a\":{\"b\":[1,2.5,\"x\",true,null]},\"c\":\"yes\"}");
    check_yaml("[]", "[]");
    check_yaml("{}", "{}");
}

static void test_syntax_errors(void)
{
    check_yaml("a:\n\tb: 1\n",
               "ERR line 2: found character that cannot start any token (while scanning for the "
               "next token at line 2)");
    check_yaml("a: [1, 2\n", "ERR line 2: did not find expected ',' or ']' (while parsing a flow "
                             "sequence at line 1)");
    check_yaml("a: b: c\n", "ERR line 1: mapping values are not allowed in this context");
    check_yaml("a: \"unterminated\n",
               "ERR line 2: found unexpected end of stream (while scanning a "
               "quoted scalar at line 1)");
    check_yaml("a:\n  b: 1\n c: 2\n",
               "ERR line 3: did not find expected key (while parsing a block "
               "mapping at line 1)");
    check_yaml("ok: 1\nbad: \xff\xfe\n", "ERR line 2: invalid leading UTF-8 octet");
    check_yaml("a: \xc3\n", "ERR line 1: invalid trailing UTF-8 octet");
    check_yaml("a: \x01\n", "ERR line 1: control characters are not allowed");
}

static void test_caps(void)
{
    struct kt_yaml_stream s;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    size_t n = 10000;
    char *deep = kt_xmalloc(2 * n + 2);
    char *big;
    size_t i;
    const char *bomb = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
                       "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                       "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                       "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                       "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                       "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                       "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
                       "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";

    /* Depth 10k in flow and block style: a clean error, no stack overflow. */
    for (i = 0; i < n; i++) {
        deep[i] = '[';
        deep[n + i] = ']';
    }
    deep[2 * n] = '\0';
    CHECK_EQ_INT(kt_yaml_parse(deep, 2 * n, NULL, &s, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    CHECK_EQ_STR(err.msg, "line 1: nesting deeper than 100 levels");
    kt_yaml_stream_release(&s);
    for (i = 0; i < n; i++) {
        deep[2 * i] = '-';
        deep[2 * i + 1] = ' ';
    }
    deep[2 * n] = 'x';
    deep[2 * n + 1] = '\0';
    CHECK_EQ_INT(kt_yaml_parse(deep, 2 * n + 1, NULL, &s, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    kt_yaml_stream_release(&s);
    free(deep);

    /* Exactly at the depth cap is fine; one more is not (an alias counts too). */
    kt_yaml_limits_default(&lim);
    lim.max_depth = 3;
    CHECK_OK(kt_yaml_parse("a: {b: [1]}", 11, &lim, &s, &err));
    kt_yaml_stream_release(&s);
    CHECK_EQ_INT(kt_yaml_parse("a: {b: [[1]]}", 13, &lim, &s, &err), -1);
    kt_yaml_stream_release(&s);
    CHECK_EQ_INT(kt_yaml_parse("x: &x [[1]]\na: {b: *x}", 22, &lim, &s, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    CHECK_CONTAINS(err.msg, "line 2:");
    kt_yaml_stream_release(&s);

    /* Billion laughs: 9 levels of 9x. */
    CHECK_EQ_INT(kt_yaml_parse(bomb, strlen(bomb), NULL, &s, &err), -1);
    CHECK_EQ_INT(err.code, KT_ERANGE);
    CHECK_CONTAINS(err.msg, "too many nodes (alias expansion)");
    kt_yaml_stream_release(&s);

    lim.max_depth = 100;
    lim.max_nodes = 5;
    CHECK_OK(kt_yaml_parse("[1, 2, 3, 4]", 12, &lim, &s, &err));
    kt_yaml_stream_release(&s);
    CHECK_EQ_INT(kt_yaml_parse("[1, 2, 3, 4, 5]", 15, &lim, &s, &err), -1);
    CHECK_EQ_STR(err.msg, "line 1: too many nodes: more than 5");
    kt_yaml_stream_release(&s);

    /* The node cap covers the whole stream: many small bombs do not add up unchecked. */
    lim.max_nodes = 100;
    {
        const char *doc = "a: &a [1,2,3,4,5,6,7,8,9]\nb: [*a,*a,*a]\n---\n";
        char *stream = kt_xasprintf("%s%s%s%s", doc, doc, doc, doc);

        CHECK_EQ_INT(kt_yaml_parse(stream, strlen(stream), &lim, &s, &err), -1);
        CHECK_EQ_INT(err.code, KT_ERANGE);
        CHECK_EQ_STR(err.msg, "line 8: too many nodes: more than 100");
        CHECK_EQ_INT(s.len, 2);
        kt_yaml_stream_release(&s);
        free(stream);
    }

    /* 50 MB: refused before any parsing. */
    big = kt_xmalloc(50u << 20);
    memset(big, 'a', 50u << 20);
    CHECK_EQ_INT(kt_yaml_parse(big, 50u << 20, NULL, &s, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK_EQ_INT(s.len, 0);
    kt_yaml_stream_release(&s);
    free(big);
}

/* Emit v, parse it back and compare. Returns the YAML text (caller frees). */
static char *round_trip(const char *json)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_stream s;
    json_t *v = kt_json_parse(json, strlen(json), NULL);
    char *text;

    CHECK(v != NULL);
    kt_buf_init(&b, 1 << 20);
    CHECK_OK(kt_yaml_emit(v, &b, &err));
    text = kt_buf_take(&b, NULL);
    if (kt_yaml_parse(text, strlen(text), NULL, &s, &err) < 0) {
        TEST_FAIL_("reparse of %s failed: %s\n%s", json, err.msg, text);
    } else if (s.len != 1 || !kt_json_equal(s.docs[0].root ? s.docs[0].root : json_null(), v)) {
        TEST_FAIL_("round trip of %s changed it:\n%s", json, text);
    } else {
        test_passed++;
    }
    kt_yaml_stream_release(&s);
    json_decref(v);
    return text;
}

static void check_emit(const char *json, const char *want)
{
    char *text = round_trip(json);

    CHECK_EQ_STR(text, want);
    free(text);
}

static void test_emit(void)
{
    static const char *values[] = {
        "\"3\"",
        "\"true\"",
        "\"1e3\"",
        "\"null\"",
        "\"~\"",
        "\"\"",
        "\"y\"",
        "\"n\"",
        "\"No\"",
        "\"a: b\"",
        "\"- x\"",
        "\"#c\"",
        "\"x #c\"",
        "\"ends:\"",
        "\" lead\"",
        "\"trail \"",
        "\"0x1F\"",
        "\"010\"",
        "\"1_000\"",
        "\".5\"",
        "\".inf\"",
        "\"-.inf\"",
        "\"<<\"",
        "\"*a\"",
        "\"&a\"",
        "\"!t\"",
        "\"%p\"",
        "\"@x\"",
        "\"`x\"",
        "\"{a}\"",
        "\"[a]\"",
        "\"'q'\"",
        "\"\\\"dq\\\"\"",
        "\"a\\\\b\"",
        "\"tab\\there\"",
        "\"\\u0001ctl\"",
        "\"nel\\u0085x\"",
        "\"ls\\u2028x\"",
        "\"bom\\ufeffx\"",
        "\"caf\\u00e9\"",
        "\"---\"",
        "\"...\"",
        "\"line1\\nline2\"",
        "\"line1\\nline2\\n\"",
        "\"a\\n\\n\"",
        "\"a\\n\\nb\\n\\n\\n\"",
        "\"\\nlead\"",
        "\" x\\ny\"",
        "\"x \\ny\"",
        "\"x\\n  indented\\ny\"",
        "\"x\\ty\\nz\"",
        "\"\\r\\n\"",
        "1",
        "-7",
        "0.1",
        "1e21",
        "1e-7",
        "100.0",
        "-0.0",
        "true",
        "false",
        "null",
        "{}",
        "[]",
        "[[]]",
        "[{}]",
        "[[1, [2]], {\"a\": [3]}]",
        "{\"a\": {\"b\": {\"c\": [1, {\"d\": \"multi\\nline\\n\"}]}}, \"e\": [[\"x\", \"y\"]]}",
        "{\"yes\": 1, \"1\": 2, \"1.5\": 3, \"\": 4, \"a: b\": 5, \"null\": 6}",
    };
    size_t i;
    char *key;
    char *json;

    for (i = 0; i < KT_ARRAY_SIZE(values); i++) {
        free(round_trip(values[i]));
    }
    /* Keys longer than libyaml's simple-key limit use the explicit form. */
    key = kt_xmalloc(2001);
    memset(key, 'k', 2000);
    key[2000] = '\0';
    json = kt_xasprintf("{\"%s\": {\"a\": 1}, \"x\": [{\"%s\": [1]}]}", key, key);
    free(round_trip(json));
    free(json);
    free(key);

    check_emit("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"data\": {\"n\": \"3\", \"b\": "
               "\"true\", \"s\": \"plain text\", \"e\": \"\"}, \"list\": [1, {\"a\": 1, \"b\": "
               "[2]}, [3, 4]], \"empty\": {}, \"none\": []}",
               "apiVersion: v1\n"
               "kind: ConfigMap\n"
               "data:\n"
               "  \"n\": \"3\"\n"
               "  b: \"true\"\n"
               "  s: plain text\n"
               "  e: \"\"\n"
               "list:\n"
               "- 1\n"
               "- a: 1\n"
               "  b:\n"
               "  - 2\n"
               "- - 3\n"
               "  - 4\n"
               "empty: {}\n"
               "none: []\n");
    check_emit("{\"script\": \"set -e\\necho hi\\n\"}", "script: |\n  set -e\n  echo hi\n");
    check_emit("{\"k\": \"no newline\\nat end\"}", "k: |-\n  no newline\n  at end\n");
    check_emit("\"y\"", "\"y\"\n");
    check_emit("1.5", "1.5\n");
}

static void test_emit_stream_and_cap(void)
{
    struct kt_buf b;
    struct kt_err err = {0};
    json_t *v = json_pack("{s:i}", "a", 1);
    struct kt_yaml_stream s;

    kt_buf_init(&b, 1 << 10);
    CHECK_OK(kt_yaml_emit(v, &b, &err));
    CHECK_OK(kt_yaml_emit(v, &b, &err));
    CHECK_EQ_STR(b.data, "a: 1\n---\na: 1\n"); /* a second document gets its separator */
    CHECK_OK(kt_yaml_parse(b.data, b.len, NULL, &s, &err));
    CHECK_EQ_INT(s.len, 2);
    kt_yaml_stream_release(&s);
    kt_buf_release(&b);

    kt_buf_init(&b, 3);
    CHECK_EQ_INT(kt_yaml_emit(v, &b, &err), -1);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    kt_buf_release(&b);
    json_decref(v);
}

int main(void)
{
    kt_mem_init();
    test_scalars();
    test_keys();
    test_anchors_merge();
    test_lines();
    test_duplicates();
    test_streams();
    test_json_input();
    test_syntax_errors();
    test_caps();
    test_emit();
    test_emit_stream_and_cap();
    return test_report();
}
