/* SPDX-License-Identifier: Apache-2.0 */
/* cli/validate.c - `ktctl validate`: the API server's and the webhooks' verdict on manifests,
 * offline (DESIGN.md "Interfaces"). File handling and output only; the rules live in
 * common/validate*.c. All inputs are read first; the runtimes are checked before the
 * TrainJobs, which see only the runtimes that were admitted (a refused one would not exist in
 * a cluster) and, as cluster objects, the documents of other kinds (e.g. a PriorityClass).
 * Problems are still printed in document order. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/base/buf.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/framework/render.h"
#include "common/validate/validate.h"
#include "common/base/yaml.h"

#define INPUT_MAX (8u << 20)
#define MAX_DEPTH 32

/* One input file and its parsed documents. */
struct vfile {
    char *path;   /* as reported: "<stdin>" for - */
    char *source; /* what to open: "-" for stdin */
    struct kt_yaml_stream stream;
    bool parsed;
};

/* One object to look at: a document's root or an item of a v1 List. */
struct unit {
    const struct vfile *file;
    const struct kt_yaml_doc *doc;
    const json_t *obj; /* borrowed from doc */
    char *prefix;      /* JSON Pointer prefix of obj in doc ("" or "/items/3") */
    bool checked;      /* r holds the verdict (runtimes, checked ahead of the TrainJobs) */
    struct kt_vresult r;
};

struct vstate {
    enum cli_format format;
    bool allow_missing;
    const char *old_path; /* --old: the objects before the change (borrowed from argv) */
    struct vstate *old;   /* owned: the --old inputs, NULL without --old */
    bool is_old;          /* this is the --old state: its files are no JUnit testsuites */
    struct vfile *files;
    size_t nfiles, capfiles;
    struct unit *units;
    size_t nunits, capunits;
    struct cli_report *rep; /* owned by the top state; the --old state borrows it */
    int exit_code;
    size_t n_invalid, n_checked, n_skipped, n_warnings;
};

void cli_validate_usage(FILE *f)
{
    fprintf(f, "  validate [-o " CLI_FORMAT_NAMES "] [--allow-missing-runtimes] [--old OLD]\n"
               "           PATH...\n"
               "      Check TrainJobs, TrainingRuntimes and ClusterTrainingRuntimes as the API\n"
               "      server and the webhooks would (PATH: file, directory or - for stdin).\n"
               "      --old OLD (file or directory): the objects before the change; an object\n"
               "      of PATH with the same kind, namespace and name in OLD is checked as an\n"
               "      UPDATE from it, the others as a CREATE.\n"
               "      Problems on stdout as FILE:LINE: Kind/name: <error>, warnings and a\n"
               "      summary on stderr. -o json: one array of problems; junit: JUnit XML, a\n"
               "      testcase per object; sarif: SARIF 2.1.0; github: GitHub Actions\n"
               "      ::error/::warning commands. Exit 0 valid, 1 invalid, 2 usage error or\n"
               "      unreadable input.\n");
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "ktctl validate: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    cli_validate_usage(stderr);
    return KT_EXIT_USAGE;
}

static void fail(struct vstate *s, int code)
{
    if (code > s->exit_code) {
        s->exit_code = code;
    }
}

static void add_file(struct vstate *s, const char *path, const char *source)
{
    if (s->nfiles == s->capfiles) {
        s->capfiles = s->capfiles ? s->capfiles * 2 : 16;
        s->files = kt_xrealloc(s->files, s->capfiles * sizeof(*s->files));
    }
    struct vfile *f = &s->files[s->nfiles++];
    memset(f, 0, sizeof(*f));
    f->path = kt_xstrdup(path);
    f->source = kt_xstrdup(source);
    if (!s->is_old) {
        cli_report_file(s->rep, path);
    }
}

static bool wanted_name(const char *name)
{
    size_t n = strlen(name);
    static const char *const exts[] = {".yaml", ".yml", ".json"};
    for (size_t i = 0; i < 3; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0) {
            return true;
        }
    }
    return false;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(struct vstate *s, const char *path, int depth);

/* Every *.yaml, *.yml, *.json below dir, in name order. */
static void add_dir(struct vstate *s, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct kt_strv names;
    struct dirent *e;
    if (!d) {
        fprintf(stderr, "ktctl validate: %s: cannot read directory\n", dir);
        fail(s, KT_EXIT_USAGE);
        return;
    }
    kt_strv_init(&names);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            kt_strv_push(&names, e->d_name);
        }
    }
    closedir(d);
    qsort(names.items, names.len, sizeof(*names.items), cmp_names);
    for (size_t i = 0; i < names.len; i++) {
        char *p =
            kt_xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names.items[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            add_path(s, p, depth + 1);
        } else if (wanted_name(names.items[i])) {
            add_file(s, p, p);
        }
        free(p);
    }
    kt_strv_release(&names);
}

static void add_path(struct vstate *s, const char *path, int depth)
{
    struct stat st;
    if (strcmp(path, "-") == 0) {
        add_file(s, "<stdin>", "-");
    } else if (depth > MAX_DEPTH) {
        fprintf(stderr, "ktctl validate: %s: directories nested too deep\n", path);
        fail(s, KT_EXIT_USAGE);
    } else if (stat(path, &st) != 0) {
        cli_report_input_error(s->rep, path, "InputMissing", "no such file or directory");
        fail(s, KT_EXIT_USAGE);
    } else if (S_ISDIR(st.st_mode)) {
        add_dir(s, path, depth);
    } else {
        add_file(s, path, path);
    }
}

/* "line N: rest" -> N and rest; else 0 and the message. */
static const char *split_line(const char *msg, size_t *line)
{
    unsigned long n = 0;
    const char *p = msg;
    *line = 0;
    if (strncmp(p, "line ", 5) != 0) {
        return msg;
    }
    for (p += 5; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (unsigned long)(*p - '0');
    }
    if (p[0] != ':' || p[1] != ' ') {
        return msg;
    }
    *line = n;
    return p + 2;
}

/* The stages of enum kt_vstage, then STAGE_PARSE: found reading the input, before any
 * admission stage (docs/ktctl.md "-o json"). */
#define STAGE_PARSE 4
static const char *const stage_names[] = {"decode", "schema", "cel", "webhook", "parse"};

/* The namespace ktctl reads an object in: cluster-scoped kinds have none, namespaced ones
 * default to "default" as everywhere else in ktctl. */
static const char *unit_ns(const json_t *o)
{
    const char *ns = kt_json_str(json_object_get(o, "metadata"), "namespace", "");
    if (strcmp(kt_json_str(o, "kind", ""), "ClusterTrainingRuntime") == 0) {
        return "";
    }
    return ns[0] ? ns : "default";
}

/* What obj is, for the report (strings borrowed from obj). A testcase (for_case) names our
 * kinds with the namespace ktctl reads them in, other kinds as written. */
static struct cli_where where_of(const char *file, size_t line, const json_t *obj, bool for_case)
{
    const json_t *meta = json_object_get(obj, "metadata");
    struct cli_where at = {file, line, json_string_value(json_object_get(obj, "kind")),
                           json_string_value(json_object_get(meta, "namespace")),
                           json_string_value(json_object_get(meta, "name"))};
    if (for_case && json_is_object(obj) && kt_validate_is_ours(obj)) {
        at.ns = unit_ns(obj);
    }
    return at;
}

/* One problem. stage: an enum kt_vstage, STAGE_PARSE, or < 0 for none; rule: its stable id,
 * or NULL to derive it from type and stage. */
static void report(struct vstate *s, const char *file, size_t line, const json_t *obj,
                   const char *field, const char *type, const char *msg, bool warning, int stage,
                   const char *rule)
{
    struct cli_problem p = {where_of(file, line, obj, false),       field,  type, msg, rule,
                            stage >= 0 ? stage_names[stage] : NULL, warning};
    if (!type || !type[0]) {
        /* No Go field.ErrorType: the type is the rule id, never "" (docs/ktctl.md). */
        p.rule = cli_report_rule(&p);
        p.type = p.rule;
    }
    if (warning) {
        s->n_warnings++;
    }
    cli_report_problem(s->rep, &p);
}

static void read_file(struct vstate *s, struct vfile *f)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    kt_buf_init(&b, INPUT_MAX);
    if (kt_buf_read_file(&b, f->source, &err) != 0) {
        size_t n = strlen(f->path); /* err.msg is "FILE: why" ("<stdin>: why" for -) */
        const char *why =
            strncmp(err.msg, f->path, n) == 0 && err.msg[n] == ':' ? err.msg + n + 2 : err.msg;
        cli_report_input_error(s->rep, f->path,
                               err.code == KT_ETOOBIG ? "InputTooLarge" : "InputUnreadable", why);
        fail(s, KT_EXIT_USAGE);
        kt_buf_release(&b);
        return;
    }
    kt_yaml_limits_default(&lim);
    f->parsed = true;
    if (kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &f->stream, &err) != 0) {
        size_t line;
        const char *rest = split_line(err.msg, &line);
        report(s, f->path, line ? line : 1, NULL, "", "", rest, false, STAGE_PARSE, "YAMLSyntax");
        s->n_invalid++;
        fail(s, KT_EXIT_INVALID);
    }
    kt_buf_release(&b);
}

static void add_unit(struct vstate *s, const struct vfile *f, const struct kt_yaml_doc *d,
                     const json_t *obj, const char *prefix)
{
    if (s->nunits == s->capunits) {
        s->capunits = s->capunits ? s->capunits * 2 : 16;
        s->units = kt_xrealloc(s->units, s->capunits * sizeof(*s->units));
    }
    struct unit *u = &s->units[s->nunits++];
    u->file = f;
    u->doc = d;
    u->obj = obj;
    u->prefix = kt_xstrdup(prefix);
    u->checked = false;
    kt_vresult_init(&u->r);
}

/* Split every document into units (a v1 List contributes its items). */
static void collect_units(struct vstate *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        const struct vfile *f = &s->files[i];
        for (size_t j = 0; j < f->stream.len; j++) {
            const struct kt_yaml_doc *d = &f->stream.docs[j];
            const json_t *items = json_object_get(d->root, "items");
            const char *kind = json_string_value(json_object_get(d->root, "kind"));
            if (!d->root) {
                continue;
            }
            if (kind && strcmp(kind, "List") == 0 && json_is_array(items)) {
                size_t k;
                json_t *it;
                json_array_foreach(items, k, it)
                {
                    char *p = kt_xasprintf("/items/%zu", k);
                    add_unit(s, f, d, it, p);
                    free(p);
                }
            } else {
                add_unit(s, f, d, d->root, "");
            }
        }
    }
}

size_t cli_node_line(const json_t *lines, const char *prefix, const char *ptr, size_t fallback)
{
    char *p = kt_xasprintf("%s%s", prefix, ptr ? ptr : "");
    size_t line = 0;
    for (;;) {
        const json_t *l = json_object_get(lines, p);
        if (json_is_integer(l)) {
            line = (size_t)json_integer_value(l);
            break;
        }
        char *slash = strrchr(p, '/');
        if (!slash) {
            break;
        }
        *slash = '\0';
    }
    free(p);
    return line ? line : fallback;
}

/* The line of the node at prefix+ptr, or of its nearest ancestor in the document. */
static size_t unit_line(const struct unit *u, const char *ptr)
{
    return cli_node_line(u->doc->lines, u->prefix, ptr, u->doc->line);
}

static bool is_runtime(const json_t *o)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    return kt_validate_is_ours(o) && kind && strcmp(kind, "TrainJob") != 0;
}

/* A document that is not an object of ours: skipped, or an error kubectl would give too. */
static bool check_foreign(struct vstate *s, const struct unit *u)
{
    const char *av = json_string_value(json_object_get(u->obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(u->obj, "kind"));
    size_t line = unit_line(u, "");
    if (!json_is_object(u->obj) || !av || !kind || !av[0] || !kind[0]) {
        report(s, u->file->path, line, NULL, "", "",
               "not a Kubernetes object: apiVersion and kind must be set", false, STAGE_PARSE,
               "NotAnObject");
        s->n_invalid++;
        fail(s, KT_EXIT_INVALID);
        return true;
    }
    if (kt_validate_is_ours(u->obj)) {
        return false;
    }
    if (strncmp(av, KT_GROUP "/", strlen(KT_GROUP) + 1) == 0) {
        char *m = kt_xasprintf("no matches for kind \"%s\" in version \"%s\"", kind, av);
        report(s, u->file->path, line, u->obj, "", "", m, false, STAGE_PARSE, "UnknownKind");
        free(m);
        s->n_invalid++;
        fail(s, KT_EXIT_INVALID);
    } else {
        char *why = kt_xasprintf("%s %s is not checked by ktctl", av, kind);
        cli_report_skip(s->rep, why);
        free(why);
        s->n_skipped++;
    }
    return true;
}

static bool seen_before(const struct kt_vresult *r, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        if (strcmp(r->items[j].text, r->items[i].text) == 0) {
            return true;
        }
    }
    return false;
}

/* The same object: apiVersion, kind, namespace and name. */
static bool same_object(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"apiVersion", "kind"};
    for (size_t i = 0; i < 2; i++) {
        if (strcmp(kt_json_str(a, keys[i], ""), kt_json_str(b, keys[i], "")) != 0) {
            return false;
        }
    }
    return strcmp(kt_json_str(json_object_get(a, "metadata"), "name", ""),
                  kt_json_str(json_object_get(b, "metadata"), "name", "")) == 0 &&
           strcmp(unit_ns(a), unit_ns(b)) == 0;
}

/* The unit of s holding the same object as o, or NULL. */
static const struct unit *find_same(const struct vstate *s, const json_t *o)
{
    for (size_t i = 0; s && i < s->nunits; i++) {
        if (json_is_object(s->units[i].obj) && same_object(s->units[i].obj, o)) {
            return &s->units[i];
        }
    }
    return NULL;
}

/* What the plugins and the webhook's update rules may look up: the documents of other kinds
 * among the inputs (cluster objects such as a PriorityClass), then, for the live JobSet of a
 * TrainJob whose runtimePatches change, the --old objects and the inputs. */
struct inputs_view {
    const struct vstate *s;
    json_t *cluster; /* borrowed: the inputs that are not Trainer objects */
};

static const json_t *inputs_get(void *ctx, const char *api_version, const char *kind,
                                const char *ns, const char *name)
{
    const struct inputs_view *iv = ctx;
    const json_t *c = kt_render_objects_get(iv->cluster, api_version, kind, ns, name);
    if (c) {
        return c;
    }
    const struct vstate *sets[] = {iv->s->old, iv->s};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; sets[k] && i < sets[k]->nunits; i++) {
            const json_t *o = sets[k]->units[i].obj;
            const json_t *md = json_object_get(o, "metadata");
            const char *ons = kt_json_str(md, "namespace", "");
            if (strcmp(kt_json_str(o, "apiVersion", ""), api_version) == 0 &&
                strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
                strcmp(kt_json_str(md, "name", ""), name) == 0 &&
                strcmp(ons[0] ? ons : "default", ns) == 0) {
                return o;
            }
        }
    }
    return NULL;
}

/* Run u through the pipeline into u->r (once); the admitted object into *admitted when
 * admitted is not NULL and nothing was found. Returns false for a foreign document. */
static bool run_unit(struct vstate *s, const struct kt_validator *v, const struct kt_framework *fw,
                     struct unit *u, const struct kt_vruntimes *rts, time_t now, json_t **admitted)
{
    struct kt_err err = {0};
    if (check_foreign(s, u)) {
        return false;
    }
    s->n_checked++;
    u->checked = true;
    /* With --old, the same object there makes this an UPDATE review from it. */
    const struct unit *was = find_same(s->old, u->obj);
    if (kt_validate_object_admitted(v, fw, u->obj, was ? was->obj : NULL, now, rts, &u->r, admitted,
                                    &err) != 0) {
        kt_vresult_add(&u->r, KT_VSTAGE_WEBHOOK, "", "Internal error", err.msg, "");
    }
    return true;
}

/* Print the verdict of a checked unit. */
static void report_unit(struct vstate *s, const struct unit *u)
{
    const struct kt_vresult *r = &u->r;
    for (size_t i = 0; i < r->len; i++) {
        const struct kt_vproblem *p = &r->items[i];
        if (seen_before(r, i)) {
            continue; /* the aggregate is de-duplicated too */
        }
        /* A Go decoder's text names no field path of ours (a quantity, a time) or one without
         * list indices and map keys: the lines people read start with the field, as the API
         * server's elements do; -o json keeps the text exact (its "field" says where). */
        char *prefixed = p->go && p->field[0] && s->format != CLI_FORMAT_JSON
                             ? kt_xasprintf("%s: %s", p->field, p->text)
                             : NULL;
        report(s, u->file->path, unit_line(u, p->ptr), u->obj, p->field, p->type,
               prefixed ? prefixed : p->text, false, (int)p->stage, NULL);
        free(prefixed);
    }
    for (size_t i = 0; i < r->warnings.len; i++) {
        report(s, u->file->path, unit_line(u, ""), u->obj, "", "", r->warnings.items[i], true,
               KT_VSTAGE_WEBHOOK, "AdmissionWarning");
    }
    if (r->len > 0) {
        s->n_invalid++;
        fail(s, KT_EXIT_INVALID);
    }
}

/* Pass 1: check every runtime; the admitted ones (as the API server stores them) go into
 * runtimes, the documents that are not ours into cluster (what the plugins may look up). */
static void check_runtimes(struct vstate *s, const struct kt_validator *v,
                           const struct kt_framework *fw, time_t now, json_t *runtimes,
                           json_t *cluster)
{
    struct kt_vruntimes none = {runtimes, false, NULL};
    for (size_t i = 0; i < s->nunits; i++) {
        struct unit *u = &s->units[i];
        json_t *admitted = NULL;
        if (json_is_object(u->obj) && !kt_validate_is_ours(u->obj)) {
            json_array_append(cluster, (json_t *)(uintptr_t)u->obj);
        }
        if (!is_runtime(u->obj)) {
            continue;
        }
        if (run_unit(s, v, fw, u, &none, now, &admitted) && admitted) {
            json_array_append_new(runtimes, admitted);
        }
    }
}

/* YAML duplicate keys: "LINE: duplicate key \"k\"" -> FILE:LINE: warning: ... */
static void report_yaml_warnings(struct vstate *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        const struct vfile *f = &s->files[i];
        for (size_t j = 0; j < f->stream.len; j++) {
            const struct kt_strv *w = &f->stream.docs[j].warnings;
            for (size_t k = 0; k < w->len; k++) {
                size_t line = 0;
                const char *p = w->items[k];
                while (*p >= '0' && *p <= '9') {
                    line = line * 10 + (size_t)(*p++ - '0');
                }
                if (p[0] == ':' && p[1] == ' ') {
                    p += 2;
                }
                report(s, f->path, line ? line : f->stream.docs[j].line, NULL, "", "", p, true,
                       STAGE_PARSE, "DuplicateKey");
            }
        }
    }
}

static int parse_args(int argc, char **argv, struct vstate *s, int *first_path)
{
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--allow-missing-runtimes") == 0) {
            s->allow_missing = true;
        } else if (strcmp(a, "--old") == 0) {
            if (i + 1 >= argc) {
                return usage_error("missing value for", a);
            }
            if (s->old_path) {
                return usage_error("--old given twice", NULL);
            }
            s->old_path = argv[++i];
        } else if (strncmp(a, "--old=", 6) == 0) {
            if (s->old_path) {
                return usage_error("--old given twice", NULL);
            }
            s->old_path = a + 6;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc) {
                return usage_error("missing value for", a);
            }
            if (cli_format_parse(argv[++i], &s->format) != 0) {
                return usage_error("unknown output format", argv[i]);
            }
        } else if (strncmp(a, "-o", 2) == 0 && cli_format_parse(a + 2, &s->format) == 0) {
            continue;
        } else if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        return usage_error("no input given", NULL);
    }
    *first_path = i;
    return 0;
}

/* Read the files added to s and split them into units. */
static void load(struct vstate *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        read_file(s, &s->files[i]);
    }
    report_yaml_warnings(s);
    collect_units(s);
}

/* An object given twice in --old has no single old state: an error at the second one. */
static void check_old_duplicates(struct vstate *o)
{
    for (size_t i = 0; i < o->nunits; i++) {
        const struct unit *u = &o->units[i];
        const struct unit *first = json_is_object(u->obj) ? find_same(o, u->obj) : NULL;
        if (!first || first == u || !kt_validate_is_ours(u->obj)) {
            continue;
        }
        char *m = kt_xasprintf("--old: the same object is also at %s:%zu", first->file->path,
                               unit_line(first, ""));
        struct cli_where at = where_of(u->file->path, unit_line(u, ""), u->obj, true);
        cli_report_begin(o->rep, &at);
        report(o, u->file->path, unit_line(u, ""), u->obj, "", "", m, false, STAGE_PARSE,
               "OldDuplicate");
        cli_report_end(o->rep);
        free(m);
        o->n_invalid++;
        fail(o, KT_EXIT_INVALID);
    }
}

/* The --old inputs: read like the others (syntax errors and warnings reported the same
 * way, into the same report), never checked themselves. */
static void load_old(struct vstate *s)
{
    struct vstate *o = kt_xcalloc(1, sizeof(*o));
    o->format = s->format;
    o->rep = s->rep;
    o->is_old = true;
    s->old = o;
    add_path(o, s->old_path, 0);
    load(o);
    check_old_duplicates(o);
    fail(s, o->exit_code);
    s->n_invalid += o->n_invalid;
    s->n_warnings += o->n_warnings;
}

/* The runtimes of --old that the inputs do not replace: they stay in the cluster, so TrainJobs
 * see them too (the inputs' own runtimes were added, once admitted, by check_runtimes). */
static void append_old_runtimes(const struct vstate *s, json_t *runtimes)
{
    for (size_t i = 0; s->old && i < s->old->nunits; i++) {
        const json_t *o = s->old->units[i].obj;
        if (is_runtime(o) && !find_same(s, o)) {
            json_array_append(runtimes, (json_t *)(uintptr_t)o);
        }
    }
}

static void finish(struct vstate *s)
{
    cli_report_finish(s->rep);
    fprintf(stderr,
            "ktctl validate: %zu file%s, %zu object%s checked, %zu invalid, %zu skipped, "
            "%zu warning%s\n",
            s->nfiles, s->nfiles == 1 ? "" : "s", s->n_checked, s->n_checked == 1 ? "" : "s",
            s->n_invalid, s->n_skipped, s->n_warnings, s->n_warnings == 1 ? "" : "s");
}

static void release(struct vstate *s)
{
    if (s->old) {
        release(s->old);
        free(s->old);
    }
    for (size_t i = 0; i < s->nfiles; i++) {
        free(s->files[i].path);
        free(s->files[i].source);
        kt_yaml_stream_release(&s->files[i].stream);
    }
    for (size_t i = 0; i < s->nunits; i++) {
        free(s->units[i].prefix);
        kt_vresult_release(&s->units[i].r);
    }
    free(s->files);
    free(s->units);
}

int cli_validate(int argc, char **argv, const struct kt_framework *fw)
{
    struct vstate s = {0};
    struct kt_err err = {0};
    int first = 0;
    int rc = parse_args(argc, argv, &s, &first);
    if (rc != 0) {
        return rc;
    }
    struct kt_validator *v = kt_validator_new(&err);
    if (!v) {
        fprintf(stderr, "ktctl validate: %s\n", err.msg);
        return KT_EXIT_USAGE;
    }
    /* Test knob (docs/development.md): a cluster without Trainer's webhooks registered. */
    const char *nd = getenv("KT_VALIDATE_NO_DEFAULTER");
    kt_validator_set_no_defaulter(v, nd && strcmp(nd, "1") == 0);
    s.rep = cli_report_new(s.format, stdout, stderr);
    if (s.old_path) {
        load_old(&s);
    }
    for (int i = first; i < argc; i++) {
        add_path(&s, argv[i], 0);
    }
    load(&s);
    json_t *runtimes = json_array();
    json_t *cluster = json_array();
    time_t now = time(NULL);
    check_runtimes(&s, v, fw, now, runtimes, cluster);
    append_old_runtimes(&s, runtimes);
    struct inputs_view iv = {&s, cluster};
    struct kt_view view = {.get = inputs_get, .ctx = &iv};
    struct kt_vruntimes rts = {runtimes, s.allow_missing, &view};
    for (size_t i = 0; i < s.nunits; i++) {
        struct unit *u = &s.units[i];
        struct cli_where at = where_of(u->file->path, unit_line(u, ""), u->obj, true);
        cli_report_begin(s.rep, &at);
        if (u->checked || run_unit(&s, v, fw, u, &rts, now, NULL)) {
            report_unit(&s, u);
        }
        cli_report_end(s.rep);
    }
    json_decref(cluster);
    json_decref(runtimes);
    finish(&s);
    rc = s.exit_code;
    release(&s);
    cli_report_free(s.rep);
    kt_validator_free(v);
    return rc;
}
