/* SPDX-License-Identifier: Apache-2.0 */
/* cli/report.h - `ktctl validate`'s output formats, in one place: text (one line per problem,
 * printed as it is found), json (the array docs/ktctl.md#ktctl-validate describes), junit (JUnit
 * XML: a testsuite per file, a testcase per object), sarif (SARIF 2.1.0) and github (GitHub Actions
 * workflow commands). All but text are printed by cli_report_finish.
 *
 * Ownership: cli_report_new returns a report the caller frees with cli_report_free; every
 * string and object handed in is copied, nothing is retained; the FILE*s are borrowed and
 * must outlive the report. */
#ifndef KT_CLI_REPORT_H
#define KT_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cli_format {
    CLI_FORMAT_TEXT,
    CLI_FORMAT_JSON,
    CLI_FORMAT_JUNIT,
    CLI_FORMAT_SARIF,
    CLI_FORMAT_GITHUB
};

/* The -o values, for usage text: "text|json|junit|sarif|github". */
#define CLI_FORMAT_NAMES "text|json|junit|sarif|github"

/* name -> *out; -1 for an unknown name. */
int cli_format_parse(const char *name, enum cli_format *out);

/* What a problem is about. Strings are borrowed for the call; NULL = unknown / none. */
struct cli_where {
    const char *file; /* as given on the command line; "<stdin>" for - */
    size_t line;      /* 1-based; 0 is reported as 1 */
    const char *kind, *ns, *name;
};

/* One problem or warning. rule: a stable id (e.g. "YAMLSyntax"), or NULL to derive it from
 * type (Go's field.ErrorType names: "Invalid value" -> FieldValueInvalid, ...) and stage. */
struct cli_problem {
    struct cli_where at;
    const char *field, *type, *message, *rule;
    const char *stage; /* "decode", "schema", "cel", "webhook", CLI_STAGE_PARSE,
                          CLI_STAGE_INPUT or NULL */
    bool warning;
};

/* The stages before and around admission's: found reading an input (YAML syntax, not an
 * object, unknown kind), and about an input as a whole (cli_report_input_error). */
#define CLI_STAGE_PARSE "parse"
#define CLI_STAGE_INPUT "input"

struct cli_report;

/* out gets the report (stdout); err the text format's warnings (stderr). */
struct cli_report *cli_report_new(enum cli_format f, FILE *out, FILE *err);
void cli_report_free(struct cli_report *r);

/* Declare an input file, so JUnit lists its testsuite in input order even when it is empty. */
void cli_report_file(struct cli_report *r, const char *file);
/* Open a testcase for one object (or document); the problems added until cli_report_end
 * belong to it. A problem added with no case open gets a case of its own (warnings join their
 * file's testsuite instead). */
void cli_report_begin(struct cli_report *r, const struct cli_where *at);
/* Mark the open case as skipped (an object of a kind ktctl does not check). */
void cli_report_skip(struct cli_report *r, const char *reason);
void cli_report_end(struct cli_report *r);
void cli_report_problem(struct cli_report *r, const struct cli_problem *p);

/* An input that could not be checked as a whole: missing, unreadable, a directory where a file
 * was expected, over the size cap, binary, empty. Prints "ktctl validate: FILE: MESSAGE" on err
 * in every format (message does not repeat the file) and records it: JUnit an <error> testcase
 * "input file" in FILE's testsuite; SARIF a result (level error, FILE's uri, no region) and a
 * toolExecutionNotification in invocations[0], whose executionSuccessful turns false; GitHub
 * "::error file=FILE::MESSAGE" (no line); json an entry with line 0 and stage "input". rule: a
 * stable id, one of InputMissing, InputUnreadable, InputTooLarge, InputBinary, InputEmpty
 * (another id reads as InputError). The caller sets the exit code (2). */
void cli_report_input_error(struct cli_report *r, const char *file, const char *rule,
                            const char *message);

/* Print the buffered formats to out. Idempotent: a second call prints nothing. */
void cli_report_finish(struct cli_report *r);

/* The stable rule id of a problem (what SARIF's ruleId and JUnit's failure type carry). */
const char *cli_report_rule(const struct cli_problem *p);

/* Where an escaped string goes: XML character data or an attribute value. */
enum cli_xml_ctx { CLI_XML_TEXT, CLI_XML_ATTR };

/* Write s to f with XML 1.0 escaping: & < > " ' as entities; tab, LF and CR as character
 * references in attributes (CLI_XML_ATTR) and CR in text; the characters XML 1.0 forbids
 * (other C0 controls, U+FFFE, U+FFFF) and invalid UTF-8 as U+FFFD. */
void cli_xml_escape(FILE *f, const char *s, enum cli_xml_ctx ctx);

/* Where an escaped string goes in a GitHub workflow command: the message, or a property
 * value (file=..., title=...). */
enum cli_gh_ctx { CLI_GH_MESSAGE, CLI_GH_PROPERTY };

/* Write s to f escaped for a GitHub workflow command: % CR LF as %25 %0D %0A, and in a
 * property value (CLI_GH_PROPERTY) also : and , as %3A and %2C. */
void cli_github_escape(FILE *f, const char *s, enum cli_gh_ctx ctx);

#endif
