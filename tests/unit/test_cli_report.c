/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_cli_report.c - cli/report.c, the output formats of `ktctl validate`: XML
 * escaping (the five entities, CR/LF/tab in attributes, the characters XML 1.0 forbids and
 * invalid UTF-8), the GitHub workflow-command escaping, the rule ids, the file URIs, and the
 * JUnit grouping (a testcase per object, automatic cases, warnings outside any case).
 * The tests/validate golden cases pin whole outputs; tests/validate/formats.sh checks them
 * against the JUnit XSD and the SARIF schema. Compiled in directly: cli/ is not in libkt.a. */
#include "tests/test.h"

#include <stdlib.h>

#include "cli/report.c"
#include "common/base/mem.h"

/* What f wrote: call with the stream from open_memstream, after fclose. */
struct mem {
    char *data;
    size_t len;
    FILE *f;
};

static void mem_open(struct mem *m)
{
    m->data = NULL;
    m->len = 0;
    m->f = open_memstream(&m->data, &m->len);
}

static char *mem_close(struct mem *m)
{
    fclose(m->f);
    return m->data;
}

static char *xml(const char *s, bool attr)
{
    struct mem m;
    mem_open(&m);
    cli_xml_escape(m.f, s, attr ? CLI_XML_ATTR : CLI_XML_TEXT);
    return mem_close(&m);
}

static char *gh(const char *s, bool prop)
{
    struct mem m;
    mem_open(&m);
    cli_github_escape(m.f, s, prop ? CLI_GH_PROPERTY : CLI_GH_MESSAGE);
    return mem_close(&m);
}

static void check_xml(const char *in, bool attr, const char *want)
{
    char *got = xml(in, attr);
    CHECK_EQ_STR(got, want);
    free(got);
}

static void check_gh(const char *in, bool prop, const char *want)
{
    char *got = gh(in, prop);
    CHECK_EQ_STR(got, want);
    free(got);
}

static void test_xml_escape(void)
{
    check_xml("a&b<c>d\"e'f", false, "a&amp;b&lt;c&gt;d&quot;e&apos;f");
    check_xml("l1\nl2\tx\ry", false, "l1\nl2\tx&#13;y");
    check_xml("l1\nl2\tx\ry", true, "l1&#10;l2&#9;x&#13;y");
    check_xml("nul\x01-\x1f-\x7f", false, "nul\xef\xbf\xbd-\xef\xbf\xbd-\x7f");
    check_xml("\xef\xbf\xbe\xef\xbf\xbf", false, "\xef\xbf\xbd\xef\xbf\xbd"); /* U+FFFE/F */
    check_xml("bad\xff\xc3(", false, "bad\xef\xbf\xbd\xef\xbf\xbd(");         /* not UTF-8 */
    check_xml("\xed\xa0\x80", false, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
    check_xml("caf\xc3\xa9 \xf0\x9f\x98\x80", true, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    check_xml("]]>", false, "]]&gt;");
}

static void test_github_escape(void)
{
    check_gh("100% a:b,c\r\nd", false, "100%25 a:b,c%0D%0Ad");
    check_gh("100% a:b,c\r\nd", true, "100%25 a%3Ab%2Cc%0D%0Ad");
    check_gh("", true, "");
}

static void test_rules(void)
{
    struct cli_problem p = {
        {"f", 1, NULL, NULL, NULL}, "", "Invalid value", "m", NULL, "schema", false};
    CHECK_EQ_STR(cli_report_rule(&p), "FieldValueInvalid");
    p.type = "Unsupported value";
    CHECK_EQ_STR(cli_report_rule(&p), "FieldValueNotSupported");
    p.type = "Something new";
    CHECK_EQ_STR(cli_report_rule(&p), "ValidationError");
    p.type = "";
    CHECK_EQ_STR(cli_report_rule(&p), "SchemaError");
    p.stage = "webhook";
    CHECK_EQ_STR(cli_report_rule(&p), "AdmissionDenied");
    p.stage = NULL;
    CHECK_EQ_STR(cli_report_rule(&p), "ValidationError");
    p.warning = true;
    CHECK_EQ_STR(cli_report_rule(&p), "AdmissionWarning");
    p.rule = "YAMLSyntax";
    CHECK_EQ_STR(cli_report_rule(&p), "YAMLSyntax");
    p.rule = "NoSuchRule";
    CHECK_EQ_STR(cli_report_rule(&p), "ValidationError");
}

static void test_uri(void)
{
    char *u = uri_of_path("dir/a b%:c,d.yaml");
    CHECK_EQ_STR(u, "dir/a%20b%25%3Ac,d.yaml");
    free(u);
    u = uri_of_path("<stdin>");
    CHECK_EQ_STR(u, "%3Cstdin%3E");
    free(u);
}

static void test_format_parse(void)
{
    enum cli_format f = CLI_FORMAT_TEXT;
    CHECK_OK(cli_format_parse("sarif", &f));
    CHECK_EQ_INT(f, CLI_FORMAT_SARIF);
    CHECK(cli_format_parse("xml", &f) != 0);
    CHECK(cli_format_parse("", &f) != 0);
    CHECK_EQ_INT(f, CLI_FORMAT_SARIF);
}

/* Two files: a.yaml with a valid object, a failing one and a file-level warning; b.yaml with a
 * syntax error reported outside any case (an automatic case) and a skipped object. */
static char *junit_sample(void)
{
    struct mem m;
    mem_open(&m);
    struct cli_report *r = cli_report_new(CLI_FORMAT_JUNIT, m.f, m.f);
    struct cli_where ok = {"a.yaml", 1, "TrainJob", "default", "ok"};
    struct cli_where bad = {"a.yaml", 5, "TrainJob", "ns", "bad<1>"};
    struct cli_where dup = {"a.yaml", 3, NULL, NULL, NULL};
    struct cli_where syn = {"b.yaml", 0, NULL, NULL, NULL};
    struct cli_where cm = {"b.yaml", 7, "ConfigMap", NULL, "c"};
    cli_report_file(r, "a.yaml");
    cli_report_file(r, "b.yaml");
    cli_report_file(r, "a.yaml");
    struct cli_problem w = {dup, "", "", "duplicate key \"x\"", "DuplicateKey", NULL, true};
    cli_report_problem(r, &w);
    cli_report_begin(r, &ok);
    cli_report_end(r);
    cli_report_begin(r, &bad);
    struct cli_problem e1 = {
        bad, "spec.x", "Invalid value", "spec.x: Invalid value: \"&\"", NULL, "schema", false};
    struct cli_problem e2 = {bad, "", "", "denied\nhere", NULL, "webhook", false};
    struct cli_problem w2 = {bad, "", "", "deprecated", NULL, "webhook", true};
    cli_report_problem(r, &e1);
    cli_report_problem(r, &e2);
    cli_report_problem(r, &w2);
    cli_report_end(r);
    struct cli_problem e3 = {syn, "", "", "did not find expected key", "YAMLSyntax", NULL, false};
    cli_report_problem(r, &e3);
    cli_report_begin(r, &cm);
    cli_report_skip(r, "v1 ConfigMap is not checked");
    cli_report_finish(r);
    cli_report_finish(r);
    cli_report_free(r);
    return mem_close(&m);
}

static void test_junit(void)
{
    char *x = junit_sample();
    CHECK_CONTAINS(x,
                   "<testsuites name=\"ktctl validate\" tests=\"4\" failures=\"2\" errors=\"0\">");
    CHECK_CONTAINS(x, "<testsuite name=\"a.yaml\" tests=\"2\" failures=\"1\" errors=\"0\" "
                      "skipped=\"0\">\n    <testcase name=\"TrainJob/default/ok\" "
                      "classname=\"a.yaml\"/>\n    <testcase name=\"TrainJob/ns/bad&lt;1&gt;\"");
    CHECK_CONTAINS(x, "<failure type=\"FieldValueInvalid\" message=\"spec.x: Invalid value: "
                      "&quot;&amp;&quot;\">a.yaml:5: TrainJob/bad&lt;1&gt;: spec.x: Invalid "
                      "value: &quot;&amp;&quot;\n</failure>");
    CHECK_CONTAINS(x, "<failure type=\"AdmissionDenied\" message=\"denied&#10;here\">");
    CHECK_CONTAINS(x, "<system-err>a.yaml:5: warning: TrainJob/bad&lt;1&gt;: deprecated\n"
                      "</system-err>\n    </testcase>");
    CHECK_CONTAINS(x, "<system-err>a.yaml:3: warning: duplicate key &quot;x&quot;\n"
                      "</system-err>\n  </testsuite>");
    CHECK_CONTAINS(x, "<testsuite name=\"b.yaml\" tests=\"2\" failures=\"1\" errors=\"0\" "
                      "skipped=\"1\">\n    <testcase name=\"document at line 1\" "
                      "classname=\"b.yaml\">\n      <failure type=\"YAMLSyntax\"");
    CHECK_CONTAINS(x, "<testcase name=\"ConfigMap/c\" classname=\"b.yaml\">\n      <skipped "
                      "message=\"v1 ConfigMap is not checked\"/>");
    /* finish twice prints once */
    CHECK(strstr(x, "</testsuites>") == strrchr(x, '<'));
    free(x);
}

static void test_text_and_github(void)
{
    struct mem out, err;
    mem_open(&out);
    mem_open(&err);
    struct cli_report *r = cli_report_new(CLI_FORMAT_TEXT, out.f, err.f);
    struct cli_where at = {"x,y.yaml", 9, "TrainJob", NULL, "j"};
    struct cli_problem e = {at, "", "", "bad: 100%", NULL, NULL, false};
    struct cli_problem w = {at, "", "", "careful", NULL, NULL, true};
    cli_report_problem(r, &e);
    cli_report_problem(r, &w);
    cli_report_finish(r);
    cli_report_free(r);
    char *o = mem_close(&out), *er = mem_close(&err);
    CHECK_EQ_STR(o, "x,y.yaml:9: TrainJob/j: bad: 100%\n");
    CHECK_EQ_STR(er, "x,y.yaml:9: warning: TrainJob/j: careful\n");
    free(o);
    free(er);

    mem_open(&out);
    r = cli_report_new(CLI_FORMAT_GITHUB, out.f, stderr);
    cli_report_problem(r, &e);
    cli_report_problem(r, &w);
    cli_report_finish(r);
    cli_report_free(r);
    o = mem_close(&out);
    CHECK_EQ_STR(o, "::error file=x%2Cy.yaml,line=9::TrainJob/j: bad: 100%25\n"
                    "::warning file=x%2Cy.yaml,line=9::TrainJob/j: careful\n");
    free(o);
}

int main(void)
{
    kt_mem_init();
    test_xml_escape();
    test_github_escape();
    test_rules();
    test_uri();
    test_format_parse();
    test_junit();
    test_text_and_github();
    return test_report();
}
