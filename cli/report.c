/* SPDX-License-Identifier: Apache-2.0 */
/* cli/report.c - the output formats of `ktctl validate` (cli/report.h). Problems are kept as
 * the -o json objects, in the order they were found; testcases (JUnit) are the objects the
 * caller opened with cli_report_begin, each holding a contiguous run of problems. */
#include "cli/report.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/str.h"

#define NO_CASE SIZE_MAX

struct rcase {
    char *file;
    char *name;    /* "Kind/namespace/name", or "document at line N" */
    char *skipped; /* the reason, or NULL */
    size_t first;  /* its problems: items[first .. first+n) */
    size_t n;
    size_t n_errors;
    bool input; /* an input error (cli_report_input_error): <error>, not <failure> */
};

struct ritem {
    size_t tcase;     /* index into cases, or NO_CASE */
    const char *rule; /* static */
    char *subject;    /* "Kind/name" as the text format prints it, "" without a kind */
    char *object;     /* "Kind/namespace/name" for SARIF's logical location, or NULL */
    bool input;       /* from cli_report_input_error: about the file as a whole */
};

struct cli_report {
    enum cli_format fmt;
    FILE *out, *err;
    json_t *problems; /* the -o json array; items[i] describes problems[i] */
    struct ritem *items;
    size_t nitems, capitems;
    struct rcase *cases;
    size_t ncases, capcases;
    struct kt_strv files;
    size_t open; /* the open case, or NO_CASE */
    size_t n_input_errors;
    bool finished;
};

static const char *const format_names[] = {"text", "json", "junit", "sarif", "github"};

int cli_format_parse(const char *name, enum cli_format *out)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(format_names); i++) {
        if (strcmp(name, format_names[i]) == 0) {
            *out = (enum cli_format)i;
            return 0;
        }
    }
    return -1;
}

/* ---- rules ---- */

/* Go's field.ErrorType strings and constant names, then our own ids. */
static const struct rule {
    const char *id;
    const char *type; /* the problem's type that selects it, or NULL */
    const char *text; /* shortDescription */
    const char *full; /* fullDescription: what it means and what to do */
} rules[] = {
    {"FieldValueNotFound", "Not found", "Not found: a referenced object or value does not exist",
     "The object names another one (a runtime, a PriorityClass) that is not among the inputs: "
     "give it too, or --allow-missing-runtimes."},
    {"FieldValueRequired", "Required value", "Required value: a required field is missing",
     "Set the field the message names."},
    {"FieldValueDuplicate", "Duplicate value", "Duplicate value: a value that must be unique",
     "Remove or rename the repeated entry."},
    {"FieldValueInvalid", "Invalid value", "Invalid value: a value the API does not accept",
     "Change the value to one the message allows (type, range, format or reference)."},
    {"FieldValueNotSupported", "Unsupported value", "Unsupported value: not one of the allowed",
     "Use one of the values the message lists."},
    {"FieldValueForbidden", "Forbidden", "Forbidden: a field or change that is not allowed",
     "Drop the field, or make the change the way the message says (e.g. while suspended)."},
    {"FieldValueTooLong", "Too long", "Too long: a value longer than its limit",
     "Shorten the value to the limit the message gives."},
    {"FieldValueTooMany", "Too many", "Too many: more items than the limit",
     "Remove items down to the limit the message gives."},
    {"InternalError", "Internal error", "Internal error while checking",
     "ktctl could not finish the check; report it with the input."},
    {"YAMLSyntax", NULL, "The file is not valid YAML or JSON",
     "Fix the syntax at the line given; nothing in the document was checked."},
    {"DuplicateKey", NULL, "A mapping key given twice (the last value wins)",
     "Remove one of the two keys; the API server keeps the last."},
    {"NotAnObject", NULL, "Not a Kubernetes object: apiVersion and kind must be set",
     "Give the document apiVersion and kind, or keep it out of the inputs."},
    {"UnknownKind", NULL, "No such kind in the trainer.kubeflow.org API",
     "Use TrainJob, TrainingRuntime or ClusterTrainingRuntime of trainer.kubeflow.org/v1alpha1."},
    {"OldDuplicate", NULL, "An object given twice in --old",
     "Keep one copy of the object in the --old inputs."},
    {"DecodeError", NULL, "The object does not decode (unknown field or wrong type)",
     "Fix the field's name or type as the message says."},
    {"SchemaError", NULL, "The object breaks its CRD schema",
     "Change the field so it fits the CRD's OpenAPI schema."},
    {"CELRule", NULL, "The object breaks a CEL validation rule of its CRD",
     "Change the object so the CRD's x-kubernetes-validations rule holds."},
    {"AdmissionDenied", NULL, "A validating webhook denies the object",
     "Change the object as the webhook's message says."},
    {"AdmissionWarning", NULL, "A warning the webhook returns with its answer",
     "The object is accepted; the warning says what to change (e.g. a deprecated runtime)."},
    {"InputMissing", NULL, "An input that does not exist",
     "Check the path given to ktctl validate; nothing was checked in it (exit 2)."},
    {"InputUnreadable", NULL, "An input that cannot be read",
     "Check the file's permissions and type; nothing was checked in it (exit 2)."},
    {"InputTooLarge", NULL, "An input over the size cap",
     "Split the file, or raise the cap; nothing was checked in it (exit 2)."},
    {"InputBinary", NULL, "An input that is not text",
     "Keep binary files out of the inputs; nothing was checked in it (exit 2)."},
    {"InputEmpty", NULL, "An input with nothing to check",
     "Give a file or folder that holds manifests."},
    {"InputError", NULL, "An input that cannot be checked",
     "Nothing was checked in the input (exit 2); the message says why."},
    {"ValidationError", NULL, "The object is invalid", "Change the object as the message says."},
};

static const struct rule *rule_find(const char *id)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(rules); i++) {
        if (strcmp(rules[i].id, id) == 0) {
            return &rules[i];
        }
    }
    return &rules[KT_ARRAY_SIZE(rules) - 1];
}

/* A problem without a type: named after the stage that found it. */
static const char *rule_of_stage(const char *stage)
{
    static const char *const by_stage[][2] = {
        {"decode", "DecodeError"},
        {"schema", "SchemaError"},
        {"cel", "CELRule"},
        {"webhook", "AdmissionDenied"},
    };
    for (size_t i = 0; stage && i < KT_ARRAY_SIZE(by_stage); i++) {
        if (strcmp(stage, by_stage[i][0]) == 0) {
            return by_stage[i][1];
        }
    }
    return "ValidationError";
}

const char *cli_report_rule(const struct cli_problem *p)
{
    if (p->rule) {
        return rule_find(p->rule)->id;
    }
    if (p->warning) {
        return "AdmissionWarning";
    }
    for (size_t i = 0; p->type && p->type[0] && i < KT_ARRAY_SIZE(rules); i++) {
        if (rules[i].type && strcmp(rules[i].type, p->type) == 0) {
            return rules[i].id;
        }
    }
    return p->type && p->type[0] ? "ValidationError" : rule_of_stage(p->stage);
}

/* ---- escaping ---- */

/* XML 1.0's Char production, less what we write as references anyway. */
static bool xml_allowed(uint32_t c)
{
    return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c != 0xfffe && c != 0xffff);
}

static bool xml_put_special(FILE *f, uint32_t c, bool attr)
{
    switch (c) {
    case '&':
        fputs("&amp;", f);
        return true;
    case '<':
        fputs("&lt;", f);
        return true;
    case '>':
        fputs("&gt;", f);
        return true;
    case '"':
        fputs("&quot;", f);
        return true;
    case '\'':
        fputs("&apos;", f);
        return true;
    case '\r':
        fputs("&#13;", f); /* a raw CR would be read back as LF */
        return true;
    case '\n':
    case '\t':
        if (attr) { /* attribute-value normalization would turn them into spaces */
            fprintf(f, "&#%u;", (unsigned)c);
            return true;
        }
        return false;
    default:
        return false;
    }
}

void cli_xml_escape(FILE *f, const char *s, enum cli_xml_ctx ctx)
{
    bool attr = ctx == CLI_XML_ATTR;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t c = 0;
        size_t len = kt_utf8_rune(p + i, n - i, &c);
        if (len == 0 || !xml_allowed(c)) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
            i += len ? len : 1;
            continue;
        }
        if (!xml_put_special(f, c, attr)) {
            fwrite(p + i, 1, len, f);
        }
        i += len;
    }
}

void cli_github_escape(FILE *f, const char *s, enum cli_gh_ctx ctx)
{
    bool prop = ctx == CLI_GH_PROPERTY;
    for (; *s; s++) {
        switch (*s) {
        case '%':
            fputs("%25", f);
            break;
        case '\r':
            fputs("%0D", f);
            break;
        case '\n':
            fputs("%0A", f);
            break;
        case ':':
            fputs(prop ? "%3A" : ":", f);
            break;
        case ',':
            fputs(prop ? "%2C" : ",", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A relative path as a URI reference (RFC 3986): bytes outside unreserved, sub-delims, "/"
 * and "@" percent-encoded (":" too, so a first segment never reads as a scheme). Caller frees. */
static char *uri_of_path(const char *path)
{
    static const char keep[] = "-._~!$&'()*+,;=/@";
    char *out = kt_xmalloc(strlen(path) * 3 + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr(keep, *p)) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = "0123456789ABCDEF"[*p >> 4];
            *o++ = "0123456789ABCDEF"[*p & 0xf];
        }
    }
    *o = '\0';
    return out;
}

/* ---- collecting ---- */

struct cli_report *cli_report_new(enum cli_format f, FILE *out, FILE *err)
{
    struct cli_report *r = kt_xcalloc(1, sizeof(*r));
    r->fmt = f;
    r->out = out;
    r->err = err;
    r->problems = json_array();
    r->open = NO_CASE;
    kt_strv_init(&r->files);
    return r;
}

void cli_report_free(struct cli_report *r)
{
    if (!r) {
        return;
    }
    for (size_t i = 0; i < r->ncases; i++) {
        free(r->cases[i].file);
        free(r->cases[i].name);
        free(r->cases[i].skipped);
    }
    for (size_t i = 0; i < r->nitems; i++) {
        free(r->items[i].subject);
        free(r->items[i].object);
    }
    free(r->cases);
    free(r->items);
    kt_strv_release(&r->files);
    json_decref(r->problems);
    free(r);
}

void cli_report_file(struct cli_report *r, const char *file)
{
    if (!kt_strv_contains(&r->files, file)) {
        kt_strv_push(&r->files, file);
    }
}

static size_t line_of(const struct cli_where *at)
{
    return at->line ? at->line : 1;
}

/* "Kind/namespace/name" from the parts that are set; NULL without a kind. */
static char *object_name(const struct cli_where *at)
{
    if (!at->kind || !at->kind[0]) {
        return NULL;
    }
    bool ns = at->ns && at->ns[0], name = at->name && at->name[0];
    return kt_xasprintf("%s%s%s%s%s", at->kind, ns ? "/" : "", ns ? at->ns : "", name ? "/" : "",
                        name ? at->name : "");
}

void cli_report_begin(struct cli_report *r, const struct cli_where *at)
{
    cli_report_end(r);
    if (r->fmt == CLI_FORMAT_TEXT) { /* streamed: no case is kept */
        return;
    }
    if (r->ncases == r->capcases) {
        r->capcases = r->capcases ? r->capcases * 2 : 16;
        r->cases = kt_xrealloc(r->cases, r->capcases * sizeof(*r->cases));
    }
    struct rcase *c = &r->cases[r->ncases];
    memset(c, 0, sizeof(*c));
    c->file = kt_xstrdup(at->file);
    c->name = object_name(at);
    if (!c->name) {
        c->name = kt_xasprintf("document at line %zu", line_of(at));
    }
    c->first = r->nitems;
    cli_report_file(r, at->file);
    r->open = r->ncases++;
}

void cli_report_skip(struct cli_report *r, const char *reason)
{
    if (r->open != NO_CASE && !r->cases[r->open].skipped) {
        r->cases[r->open].skipped = kt_xstrdup(reason);
    }
}

void cli_report_end(struct cli_report *r)
{
    r->open = NO_CASE;
}

static void print_text(const struct cli_report *r, const struct cli_problem *p, const char *subject)
{
    FILE *f = p->warning ? r->err : r->out;
    fprintf(f, "%s:%zu: %s%s%s%s\n", p->at.file, line_of(&p->at), p->warning ? "warning: " : "",
            subject, subject[0] ? ": " : "", p->message);
}

static json_t *problem_json(const struct cli_problem *p)
{
    const struct cli_where *at = &p->at;
    json_t *o = json_pack("{s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "file", at->file, "line",
                          (json_int_t)line_of(at), "kind", at->kind ? at->kind : "", "name",
                          at->name ? at->name : "", "namespace", at->ns ? at->ns : "", "field",
                          p->field ? p->field : "", "type", p->type ? p->type : "", "message",
                          p->message, "severity", p->warning ? "warning" : "error");
    if (p->stage) {
        json_object_set_new(o, "stage", json_string(p->stage));
    }
    return o;
}

/* "Kind/name", "Kind" or "": what the text line names. Caller owns the result; free with free(). */
static char *subject_of(const struct cli_where *at)
{
    bool named = at->kind && at->name;
    return at->kind ? kt_xasprintf("%s%s%s", at->kind, named ? "/" : "", named ? at->name : "")
                    : kt_xstrdup("");
}

/* The text format keeps nothing: each problem is printed as found, so memory stays flat
 * however many objects and warnings there are (the reliability tier's 20,000 documents). */
static void stream_text(const struct cli_report *r, const struct cli_problem *p)
{
    char *subject = subject_of(&p->at);
    print_text(r, p, subject);
    free(subject);
}

void cli_report_problem(struct cli_report *r, const struct cli_problem *p)
{
    if (r->fmt == CLI_FORMAT_TEXT) {
        stream_text(r, p);
        return;
    }
    bool auto_case = r->open == NO_CASE && !p->warning;
    if (auto_case) {
        cli_report_begin(r, &p->at);
    }
    if (r->nitems == r->capitems) {
        r->capitems = r->capitems ? r->capitems * 2 : 16;
        r->items = kt_xrealloc(r->items, r->capitems * sizeof(*r->items));
    }
    struct ritem *it = &r->items[r->nitems];
    const struct cli_where *at = &p->at;
    it->tcase = r->open;
    it->input = false;
    it->rule = cli_report_rule(p);
    it->subject = subject_of(at);
    it->object = r->open != NO_CASE && at->kind ? kt_xstrdup(r->cases[r->open].name) : NULL;
    if (r->open != NO_CASE) {
        struct rcase *c = &r->cases[r->open];
        c->n++;
        c->n_errors += p->warning ? 0 : 1;
    }
    r->nitems++;
    json_array_append_new(r->problems, problem_json(p));
    if (auto_case) {
        cli_report_end(r);
    }
}

/* The Input* rule named id, else InputError. */
static const char *input_rule(const char *id)
{
    const char *found = id ? rule_find(id)->id : "";
    return strncmp(found, "Input", 5) == 0 ? found : "InputError";
}

void cli_report_input_error(struct cli_report *r, const char *file, const char *rule,
                            const char *message)
{
    fprintf(r->err, "ktctl validate: %s: %s\n", file, message);
    r->n_input_errors++;
    if (r->fmt == CLI_FORMAT_TEXT) {
        return;
    }
    struct cli_where at = {.file = file};
    struct cli_problem p = {.at = at,
                            .field = "",
                            .type = "",
                            .message = message,
                            .rule = input_rule(rule),
                            .stage = CLI_STAGE_INPUT};
    cli_report_begin(r, &at);
    struct rcase *c = &r->cases[r->open];
    free(c->name);
    c->name = kt_xstrdup("input file");
    c->input = true;
    cli_report_problem(r, &p);
    r->items[r->nitems - 1].input = true;
    json_object_set_new(json_array_get(r->problems, r->nitems - 1), "line", json_integer(0));
    cli_report_end(r);
}

/* ---- JUnit ---- */

static const char *item_str(const struct cli_report *r, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(r->problems, i), key));
}

static size_t item_line(const struct cli_report *r, size_t i)
{
    return (size_t)json_integer_value(json_object_get(json_array_get(r->problems, i), "line"));
}

/* The text format's line of problem i, escaped as XML text. */
static void junit_text_line(const struct cli_report *r, size_t i)
{
    bool warning = strcmp(item_str(r, i, "severity"), "warning") == 0;
    const char *subject = r->items[i].subject;
    cli_xml_escape(r->out, item_str(r, i, "file"), CLI_XML_TEXT);
    if (r->items[i].input) {
        fputs(": ", r->out);
    } else {
        fprintf(r->out, ":%zu: %s", item_line(r, i), warning ? "warning: " : "");
    }
    cli_xml_escape(r->out, subject, CLI_XML_TEXT);
    fputs(subject[0] ? ": " : "", r->out);
    cli_xml_escape(r->out, item_str(r, i, "message"), CLI_XML_TEXT);
    fputc('\n', r->out);
}

/* <system-err> with the warnings among items [first, first+n) that pass the filter. */
static void junit_warnings(const struct cli_report *r, size_t first, size_t n, const char *file,
                           const char *indent)
{
    bool any = false;
    for (size_t i = first; i < first + n; i++) {
        if (strcmp(item_str(r, i, "severity"), "warning") != 0 ||
            (file && (r->items[i].tcase != NO_CASE || strcmp(item_str(r, i, "file"), file) != 0))) {
            continue;
        }
        if (!any) {
            fprintf(r->out, "%s<system-err>", indent);
            any = true;
        }
        junit_text_line(r, i);
    }
    if (any) {
        fputs("</system-err>\n", r->out);
    }
}

static void junit_case(const struct cli_report *r, const struct rcase *c)
{
    fputs("    <testcase name=\"", r->out);
    cli_xml_escape(r->out, c->name, CLI_XML_ATTR);
    fputs("\" classname=\"", r->out);
    cli_xml_escape(r->out, c->file, CLI_XML_ATTR);
    if (c->n == 0 && !c->skipped) {
        fputs("\"/>\n", r->out);
        return;
    }
    fputs("\">\n", r->out);
    if (c->skipped) {
        fputs("      <skipped message=\"", r->out);
        cli_xml_escape(r->out, c->skipped, CLI_XML_ATTR);
        fputs("\"/>\n", r->out);
    }
    const char *elem = c->input ? "error" : "failure";
    for (size_t i = c->first; i < c->first + c->n; i++) {
        if (strcmp(item_str(r, i, "severity"), "error") != 0) {
            continue;
        }
        fprintf(r->out, "      <%s type=\"%s\" message=\"", elem, r->items[i].rule);
        cli_xml_escape(r->out, item_str(r, i, "message"), CLI_XML_ATTR);
        fputs("\">", r->out);
        junit_text_line(r, i);
        fprintf(r->out, "</%s>\n", elem);
    }
    junit_warnings(r, c->first, c->n, NULL, "      ");
    fputs("    </testcase>\n", r->out);
}

struct junit_counts {
    size_t tests, failures, errors, skipped;
};

static struct junit_counts junit_count(const struct cli_report *r, const char *file)
{
    struct junit_counts k = {0};
    for (size_t i = 0; i < r->ncases; i++) {
        const struct rcase *c = &r->cases[i];
        if (!file || strcmp(c->file, file) == 0) {
            k.tests++;
            k.failures += !c->input && c->n_errors > 0;
            k.errors += c->input;
            k.skipped += c->skipped != NULL;
        }
    }
    return k;
}

static void junit_suite(const struct cli_report *r, const char *file)
{
    struct junit_counts k = junit_count(r, file);
    fputs("  <testsuite name=\"", r->out);
    cli_xml_escape(r->out, file, CLI_XML_ATTR);
    fprintf(r->out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", k.tests,
            k.failures, k.errors, k.skipped);
    for (size_t i = 0; i < r->ncases; i++) {
        if (strcmp(r->cases[i].file, file) == 0) {
            junit_case(r, &r->cases[i]);
        }
    }
    junit_warnings(r, 0, r->nitems, file, "    ");
    fputs("  </testsuite>\n", r->out);
}

static void print_junit(struct cli_report *r)
{
    for (size_t i = 0; i < r->nitems; i++) { /* a file known only from a warning */
        cli_report_file(r, item_str(r, i, "file"));
    }
    struct junit_counts k = junit_count(r, NULL);
    fprintf(r->out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"ktctl validate\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n",
            k.tests, k.failures, k.errors);
    for (size_t i = 0; i < r->files.len; i++) {
        junit_suite(r, r->files.items[i]);
    }
    fputs("</testsuites>\n", r->out);
}

/* ---- SARIF ---- */

/* Where the rules' helpUri points: docs/ktctl.md of this release on the source repository, when
 * the build knows it (make KT_SOURCE_URL=https://host/owner/kt; make release passes it). Without
 * it there is no helpUri: help.markdown names the page instead. */
#ifdef KT_SOURCE_URL
#define SARIF_HELP_URI KT_SOURCE_URL "/blob/v" KT_RELEASE "/docs/ktctl.md#sarif-rules"
#endif

static json_t *sarif_rule(const struct rule *ru)
{
    char *md =
        kt_xasprintf("**%s**: %s. %s\n\nEvery rule: kt's `docs/ktctl.md`, section *SARIF rules*.",
                     ru->id, ru->text, ru->full);
    char *txt = kt_xasprintf("%s: %s. %s Every rule: kt's docs/ktctl.md, section \"SARIF rules\".",
                             ru->id, ru->text, ru->full);
    json_t *o = json_pack(
        "{s:s,s:s,s:{s:s},s:{s:s},s:{s:s,s:s},s:{s:s}}", "id", ru->id, "name", ru->id,
        "shortDescription", "text", ru->text, "fullDescription", "text", ru->full, "help", "text",
        txt, "markdown", md, "defaultConfiguration", "level",
        strcmp(ru->id, "AdmissionWarning") == 0 || strcmp(ru->id, "DuplicateKey") == 0 ? "warning"
                                                                                       : "error");
#ifdef SARIF_HELP_URI
    json_object_set_new(o, "helpUri", json_string(SARIF_HELP_URI));
#endif
    free(md);
    free(txt);
    return o;
}

/* The rules used, in order of first use; *index gets each item's position. */
static json_t *sarif_rules(const struct cli_report *r, size_t *index)
{
    json_t *out = json_array();
    for (size_t i = 0; i < r->nitems; i++) {
        size_t k = 0;
        while (k < json_array_size(out) &&
               strcmp(kt_json_str(json_array_get(out, k), "id", ""), r->items[i].rule) != 0) {
            k++;
        }
        if (k == json_array_size(out)) {
            json_array_append_new(out, sarif_rule(rule_find(r->items[i].rule)));
        }
        index[i] = k;
    }
    return out;
}

/* path normalised lexically: "." segments and repeated slashes dropped, "x/.." folded (a
 * leading ".." of a relative path is kept). Caller frees. */
static char *norm_path(const char *path)
{
    bool abs = path[0] == '/';
    char *out = kt_xmalloc(strlen(path) + 2);
    size_t n = 0, kept = 0; /* kept: segments that a ".." may fold */
    for (const char *seg = path; *seg;) {
        const char *end = strchr(seg, '/');
        size_t len = end ? (size_t)(end - seg) : strlen(seg);
        if (len == 2 && seg[0] == '.' && seg[1] == '.' && (kept > 0 || abs)) {
            while (n > 0 && out[n - 1] != '/') {
                n--;
            }
            n = n > 0 ? n - 1 : 0;
            kept -= kept > 0;
        } else if (len > 0 && !(len == 1 && seg[0] == '.')) {
            if (n > 0 || abs) {
                out[n++] = '/';
            }
            memcpy(out + n, seg, len);
            n += len;
            kept += !(len == 2 && seg[0] == '.' && seg[1] == '.');
        }
        seg += len + (end ? 1 : 0);
    }
    if (n == 0) {
        out[n++] = abs ? '/' : '.';
    }
    out[n] = '\0';
    return out;
}

/* The artifactLocation of a file as given: relative to %SRCROOT% (the directory ktctl ran in)
 * for a relative path or an absolute one below that directory (a relative path may climb out
 * with ".."), a file:// URI for another absolute path, "stdin" (no base) for standard input. */
static json_t *sarif_artifact(const char *cwd, const char *file)
{
    if (strcmp(file, "<stdin>") == 0) {
        return json_pack("{s:s,s:{s:s}}", "uri", "stdin", "description", "text", "standard input");
    }
    char *path = norm_path(file);
    const char *rel = path[0] == '/' ? NULL : path;
    char *root = cwd ? norm_path(cwd) : NULL;
    size_t n = root ? strlen(root) : 0;
    if (!rel && root && strncmp(path, root, n) == 0 && (path[n] == '/' || n == 1) &&
        path[n == 1 ? 1 : n + 1]) {
        rel = path + (n == 1 ? 1 : n + 1);
    }
    char *uri = uri_of_path(rel ? rel : path);
    json_t *o;
    if (rel) {
        o = json_pack("{s:s,s:s}", "uri", uri, "uriBaseId", "%SRCROOT%");
    } else {
        char *u = kt_xasprintf("file://%s", uri);
        o = json_pack("{s:s}", "uri", u);
        free(u);
    }
    free(uri);
    free(path);
    free(root);
    return o;
}

static json_t *sarif_location(const struct cli_report *r, size_t i, const char *cwd)
{
    json_t *phys =
        json_pack("{s:o}", "artifactLocation", sarif_artifact(cwd, item_str(r, i, "file")));
    if (!r->items[i].input) { /* an input error is about the whole file: no region */
        json_object_set_new(phys, "region",
                            json_pack("{s:I}", "startLine", (json_int_t)item_line(r, i)));
    }
    json_t *loc = json_pack("{s:o}", "physicalLocation", phys);
    if (r->items[i].object) {
        json_object_set_new(
            loc, "logicalLocations",
            json_pack("[{s:s,s:s}]", "fullyQualifiedName", r->items[i].object, "kind", "resource"));
    }
    return loc;
}

static json_t *sarif_result(const struct cli_report *r, size_t i, size_t rule_index,
                            const char *cwd)
{
    const char *subject = r->items[i].subject;
    char *text = kt_xasprintf("%s%s%s", subject, subject[0] ? ": " : "", item_str(r, i, "message"));
    json_t *res = json_pack("{s:s,s:I,s:s,s:{s:s},s:[o]}", "ruleId", r->items[i].rule, "ruleIndex",
                            (json_int_t)rule_index, "level", item_str(r, i, "severity"), "message",
                            "text", text, "locations", sarif_location(r, i, cwd));
    free(text);
    return res;
}

/* invocations[0]: executionSuccessful unless an input could not be read (exit 2), with a
 * notification per such input. */
static json_t *sarif_invocation(const struct cli_report *r, const char *cwd)
{
    json_t *notes = json_array();
    for (size_t i = 0; i < r->nitems; i++) {
        if (!r->items[i].input) {
            continue;
        }
        char *text = kt_xasprintf("%s: %s", item_str(r, i, "file"), item_str(r, i, "message"));
        json_array_append_new(notes, json_pack("{s:s,s:{s:s},s:[{s:{s:o}}],s:{s:s}}", "level",
                                               "error", "message", "text", text, "locations",
                                               "physicalLocation", "artifactLocation",
                                               sarif_artifact(cwd, item_str(r, i, "file")),
                                               "descriptor", "id", r->items[i].rule));
        free(text);
    }
    json_t *inv = json_pack("{s:b}", "executionSuccessful", r->n_input_errors == 0);
    if (json_array_size(notes) > 0) {
        json_object_set_new(inv, "toolExecutionNotifications", notes);
    } else {
        json_decref(notes);
    }
    return inv;
}

static void print_sarif(const struct cli_report *r)
{
    char cwdbuf[4096];
    const char *cwd = getcwd(cwdbuf, sizeof(cwdbuf)) ? cwdbuf : NULL;
    size_t *index = kt_xcalloc(r->nitems + 1, sizeof(*index));
    json_t *rules_json = sarif_rules(r, index);
    json_t *results = json_array();
    for (size_t i = 0; i < r->nitems; i++) {
        json_array_append_new(results, sarif_result(r, i, index[i], cwd));
    }
    json_t *driver =
        json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", "ktctl", "fullName", "ktctl validate (kt)",
                  "version", KT_RELEASE, "semanticVersion", KT_RELEASE, "rules", rules_json);
#ifdef KT_SOURCE_URL
    json_object_set_new(driver, "informationUri", json_string(KT_SOURCE_URL));
#endif
    json_t *log =
        json_pack("{s:s,s:s,s:[{s:{s:o},s:{s:{s:{s:s}}},s:[o],s:o}]}", "$schema",
                  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                  "sarif-schema-2.1.0.json",
                  "version", "2.1.0", "runs", "tool", "driver", driver, "originalUriBaseIds",
                  "%SRCROOT%", "description", "text", "the directory ktctl validate ran in",
                  "invocations", sarif_invocation(r, cwd), "results", results);
    char *out = kt_json_dump_pretty(log);
    fprintf(r->out, "%s\n", out);
    free(out);
    json_decref(log);
    free(index);
}

/* ---- GitHub Actions ---- */

static void print_github(const struct cli_report *r)
{
    for (size_t i = 0; i < r->nitems; i++) {
        const char *subject = r->items[i].subject;
        fprintf(r->out, "::%s file=", item_str(r, i, "severity"));
        cli_github_escape(r->out, item_str(r, i, "file"), CLI_GH_PROPERTY);
        if (r->items[i].input) {
            fputs("::", r->out);
        } else {
            fprintf(r->out, ",line=%zu::", item_line(r, i));
        }
        cli_github_escape(r->out, subject, CLI_GH_MESSAGE);
        fputs(subject[0] ? ": " : "", r->out);
        cli_github_escape(r->out, item_str(r, i, "message"), CLI_GH_MESSAGE);
        fputc('\n', r->out);
    }
}

void cli_report_finish(struct cli_report *r)
{
    if (r->finished) {
        return;
    }
    r->finished = true;
    cli_report_end(r);
    switch (r->fmt) {
    case CLI_FORMAT_TEXT:
        break;
    case CLI_FORMAT_JSON: {
        char *out = kt_json_dump_pretty(r->problems);
        fprintf(r->out, "%s\n", out);
        free(out);
        break;
    }
    case CLI_FORMAT_JUNIT:
        print_junit(r);
        break;
    case CLI_FORMAT_SARIF:
        print_sarif(r);
        break;
    case CLI_FORMAT_GITHUB:
        print_github(r);
        break;
    }
}
