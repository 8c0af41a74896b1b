/* SPDX-License-Identifier: Apache-2.0 */
/* cli/validate.c - `ktctl validate`: the API server's and the webhooks' verdict on manifests,
 * offline (docs/ktctl.md#ktctl-validate). File handling and output only; the rules live in
 * common/validate*.c. All inputs are read first; the runtimes are checked before the
 * TrainJobs, which see only the runtimes that were admitted (a refused one would not exist in
 * a cluster) and, as cluster objects, the documents of other kinds (e.g. a PriorityClass).
 * Problems are still printed in document order. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/base/buf.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/framework/render.h"
#include "common/validate/validate.h"
#include "common/base/yaml.h"
#include "common/config/config.h"

extern char **environ; /* POSIX: the environment, for posix_spawnp */

#define INPUT_MAX_DEFAULT ((size_t)8 << 20)
#define MAX_DEPTH 32

/* One input file and its parsed documents. */
struct vfile {
    char *path;   /* as reported: "<stdin>" for - */
    char *source; /* what to open: "-" for stdin; for a Kustomize build, the folder */
    struct kt_yaml_stream stream;
    bool parsed;
    bool kbuild;      /* source is a Kustomize folder: its `kustomize build` output is read */
    const char *skip; /* not read, with this note (a Helm template, a Kustomize patch) */
    bool has_objects; /* some document is a Kubernetes object (apiVersion and kind) */
};

/* One object to look at: a document's root or an item of a v1 List. */
struct unit {
    const struct vfile *file;
    const struct kt_yaml_doc *doc;
    const json_t *obj; /* borrowed from doc */
    char *prefix;      /* JSON Pointer prefix of obj in doc ("" or "/items/3") */
    bool in_list;      /* an item of a List: must be a Kubernetes object */
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
    size_t max_input;          /* --max-input-size */
    bool kustomize;            /* --kustomize: build Kustomize folders */
    bool hinted;               /* the missing-runtime hint was printed */
    struct kt_strv ignores;    /* --ignore globs */
    struct kt_strv kinds;      /* --kind: only these (empty: all) */
    struct kt_strv skip_kinds; /* --skip-kind */
    struct kt_strv kpatches;   /* the patch files of the Kustomize folders walked */
    size_t n_ignored;          /* paths left out by --ignore */
    const char *gates;         /* --feature-gates (borrowed from argv), NULL when absent */
};

void cli_validate_usage(FILE *f)
{
    fprintf(f,
            "  validate [options] PATH...\n"
            "      Check TrainJobs, TrainingRuntimes and ClusterTrainingRuntimes as the API\n"
            "      server and the webhooks would. PATH: a file, a directory (its *.yaml,\n"
            "      *.yml, *.json, recursed) or - for stdin. Options go anywhere among the\n"
            "      paths, as --opt VALUE or --opt=VALUE (-o json, -ojson); -- ends them.\n"
            "      -o, --output FORMAT     " CLI_FORMAT_NAMES " (default text)\n"
            "      --old OLD               objects before the change (file or directory):\n"
            "                              one with the same kind/namespace/name is an UPDATE\n"
            "      --allow-missing-runtimes  a TrainJob's runtime that is not among the\n"
            "                              inputs only warns (default: an error)\n"
            "      --ignore PATTERN        leave out paths matching the glob (fnmatch: * and\n"
            "                              ? match / too; also tried on the base name);\n"
            "                              repeatable\n"
            "      --kind KIND[,KIND]      check only these kinds, skip the others\n"
            "      --skip-kind KIND[,KIND] skip these kinds (Kind or apiVersion/Kind)\n"
            "      --kustomize             check a folder with a kustomization.yaml as\n"
            "                              `kustomize build` (or `kubectl kustomize`) gives\n"
            "      --max-input-size BYTES  largest file read (default 8Mi; Ki, Mi, Gi)\n"
            "      --feature-gates K=V,... as the daemons' flag: DynamicResourceAllocation=true\n"
            "                              admits resourceClaimsPerNode and patch claims\n"
            "      -h, --help              this help\n"
            "      Documents without apiVersion and kind (values.yaml, Chart.yaml), Helm\n"
            "      templates and Kustomize patches are skipped with a note. Problems on\n"
            "      stdout as FILE:LINE: Kind/name: <error>, notes, warnings and a summary on\n"
            "      stderr. Exit 0 valid, 1 invalid, 2 usage error or unreadable input.\n");
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

/* The stages of enum kt_vstage, then STAGE_PARSE: found reading the input, before any
 * admission stage, and STAGE_INPUT: about an input as a whole (docs/ktctl.md "-o json"). */
#define STAGE_PARSE 4
#define STAGE_INPUT 5
static const char *const stage_names[] = {"decode",  "schema",        "cel",
                                          "webhook", CLI_STAGE_PARSE, CLI_STAGE_INPUT};

/* One problem found in file at line (0: the file as a whole). field, type: "" or NULL when
 * none. stage: an enum kt_vstage, STAGE_PARSE, STAGE_INPUT, or < 0 for none; rule: its stable
 * id, or NULL to derive it from type and stage. All borrowed for the call. */
struct vproblem {
    const char *file;
    size_t line;
    const json_t *obj; /* what it is about, or NULL */
    const char *field, *type, *msg;
    int stage;
    const char *rule;
    bool warning;
};

static void report(struct vstate *s, const struct vproblem *vp);

static void input_error(struct vstate *s, const char *file, const char *rule, const char *msg)
{
    cli_report_input_error(s->rep, file, rule, msg);
    fail(s, KT_EXIT_USAGE);
}

/* FILE[:LINE]: note: MSG on stderr, whatever the format: something left unchecked on purpose. */
static void note(const char *file, size_t line, const char *msg)
{
    if (line > 0) {
        fprintf(stderr, "%s:%zu: note: %s\n", file, line, msg);
    } else {
        fprintf(stderr, "%s: note: %s\n", file, msg);
    }
}

/* A whole file left unchecked: a note, a skipped testcase, counted as skipped. */
static void skip_file(struct vstate *s, const char *path, const char *why)
{
    struct cli_where at = {.file = path, .line = 1};
    note(path, 0, why);
    cli_report_begin(s->rep, &at);
    cli_report_skip(s->rep, why);
    cli_report_end(s->rep);
    s->n_skipped++;
}

static struct vfile *add_file(struct vstate *s, const char *path, const char *source)
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
    return f;
}

/* --ignore: the path as walked (also without a leading "./" or trailing "/") or its base
 * name matches. */
static bool ignored(const struct vstate *s, const char *given)
{
    char *path = kt_xstrdup(given);
    size_t n = strlen(path);
    bool hit = false;
    while (n > 1 && path[n - 1] == '/') {
        path[--n] = '\0';
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < s->ignores.len && !hit; i++) {
        const char *pat = s->ignores.items[i];
        hit = fnmatch(pat, path, 0) == 0 || fnmatch(pat, base, 0) == 0 ||
              (strncmp(path, "./", 2) == 0 && fnmatch(pat, path + 2, 0) == 0);
    }
    free(path);
    return hit;
}

/* The chart folder (owned) when path is below a "templates" folder next to a Chart.yaml, as
 * in a Helm chart; else NULL. */
static char *helm_chart_of(const char *path)
{
    for (const char *p = path; (p = strstr(p, "templates/")) != NULL; p++) {
        if (p != path && p[-1] != '/') {
            continue;
        }
        char *chart = kt_xasprintf("%.*sChart.yaml", (int)(p - path), path);
        struct stat st;
        if (stat(chart, &st) == 0 && S_ISREG(st.st_mode)) {
            chart[strlen(chart) - strlen("Chart.yaml")] = '\0';
            if (chart[0] == '\0') {
                free(chart);
                return kt_xstrdup(".");
            }
            return chart;
        }
        free(chart);
    }
    return NULL;
}

/* A file to read, unless it is a Helm template or a Kustomize patch (skipped with a note). */
static void add_input(struct vstate *s, const char *path)
{
    char *chart = s->is_old ? NULL : helm_chart_of(path);
    if (chart) {
        char *why = kt_xasprintf("skipped: a Helm template (chart %s); check what Helm "
                                 "renders: helm template %s | ktctl validate -",
                                 chart, chart);
        add_file(s, path, path)->skip = "helm";
        skip_file(s, path, why);
        free(why);
        free(chart);
    } else if (!s->is_old && kt_strv_contains(&s->kpatches, path)) {
        add_file(s, path, path)->skip = "kustomize";
        skip_file(s, path,
                  "skipped: a patch of its folder's kustomization; --kustomize checks the "
                  "objects Kustomize builds");
    } else {
        add_file(s, path, path);
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

static void add_path(struct vstate *s, const char *path, int depth);

/* The names Kustomize looks for, in its order. */
static const char *const kustomization_names[] = {"kustomization.yaml", "kustomization.yml",
                                                  "Kustomization"};

/* dir/rel without "./" steps at the start of rel, into v. */
static void push_rel(struct kt_strv *v, const char *dir, const char *rel)
{
    while (strncmp(rel, "./", 2) == 0) {
        rel += 2;
    }
    if (rel[0] != '\0' && rel[0] != '/' && !strchr(rel, '\n')) {
        char *p = kt_xasprintf("%s/%s", dir, rel);
        kt_strv_push(v, p);
        free(p);
    }
}

/* The patch files a kustomization names (patches[].path, patchesStrategicMerge[],
 * patchesJson6902[].path), as paths below dir, into s->kpatches. */
static void read_kustomization(struct vstate *s, const char *dir, const char *file)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    struct kt_yaml_stream y = {0};
    kt_buf_init(&b, s->max_input);
    kt_yaml_limits_default(&lim);
    lim.max_bytes = s->max_input;
    if (kt_buf_read_file(&b, file, &err) == 0 &&
        kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &y, &err) == 0 && y.len > 0) {
        const json_t *k = y.docs[0].root;
        static const char *const lists[] = {"patches", "patchesJson6902", "patchesStrategicMerge"};
        for (size_t i = 0; i < 3; i++) {
            size_t j;
            const json_t *e;
            json_array_foreach(json_object_get(k, lists[i]), j, e)
            {
                const char *rel = json_is_string(e) ? json_string_value(e)
                                                    : json_string_value(json_object_get(e, "path"));
                if (rel) {
                    push_rel(&s->kpatches, dir, rel);
                }
            }
        }
    }
    kt_yaml_stream_release(&y);
    kt_buf_release(&b);
}

/* The names in dir but dot files, sorted, into *names (initialised here). -1 when dir cannot
 * be read (reported). */
static int dir_names(struct vstate *s, const char *dir, struct kt_strv *names)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) {
        input_error(s, dir, "InputUnreadable", "cannot read directory");
        return -1;
    }
    kt_strv_init(names);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            kt_strv_push(names, e->d_name);
        }
    }
    closedir(d);
    kt_strv_sort(names);
    return 0;
}

/* dir (its first dl bytes) holds a kustomization file: with --kustomize the folder becomes
 * one build and this returns true; otherwise the files it names are read (the folder is still
 * listed). */
static bool add_kustomization(struct vstate *s, const struct kt_strv *names, const char *dir,
                              size_t dl)
{
    for (size_t k = 0; !s->is_old && k < KT_ARRAY_SIZE(kustomization_names); k++) {
        if (!kt_strv_contains(names, kustomization_names[k])) {
            continue;
        }
        char *folder = kt_xasprintf("%.*s", (int)dl, dir);
        if (s->kustomize) {
            add_file(s, folder, folder)->kbuild = true;
            free(folder);
            return true;
        }
        char *kfile = kt_xasprintf("%s/%s", folder, kustomization_names[k]);
        read_kustomization(s, folder, kfile);
        free(kfile);
        free(folder);
        return false;
    }
    return false;
}

/* Every *.yaml, *.yml, *.json below dir, in name order; a Kustomize folder as one build with
 * --kustomize. */
static void add_dir(struct vstate *s, const char *dir, int depth)
{
    struct kt_strv names;
    if (dir_names(s, dir, &names) != 0) {
        return;
    }
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') {
        dl--;
    }
    size_t n = add_kustomization(s, &names, dir, dl) ? 0 : names.len;
    for (size_t i = 0; i < n; i++) {
        char *p = kt_xasprintf("%.*s/%s", (int)dl, dir, names.items[i]);
        struct stat st;
        if (ignored(s, p)) {
            s->n_ignored++;
        } else if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            add_path(s, p, depth + 1);
        } else if (wanted_name(names.items[i])) {
            add_input(s, p);
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
    } else if (depth == 0 && ignored(s, path)) {
        s->n_ignored++;
    } else if (depth > MAX_DEPTH) {
        input_error(s, path, "InputUnreadable", "directories nested too deep");
    } else if (stat(path, &st) != 0) {
        input_error(s, path, "InputMissing", "no such file or directory");
    } else if (S_ISDIR(st.st_mode)) {
        size_t before = s->nfiles, ignored_before = s->n_ignored;
        add_dir(s, path, depth);
        if (depth == 0 && !s->is_old && s->nfiles == before && s->n_ignored == ignored_before &&
            s->exit_code < KT_EXIT_USAGE) {
            /* Nothing to check is not invalid (exit 0), but never silent. */
            report(s, &(struct vproblem){.file = path,
                                         .msg = "no *.yaml, *.yml or *.json file in this directory",
                                         .warning = true,
                                         .stage = STAGE_INPUT,
                                         .rule = "InputEmpty"});
        }
    } else {
        add_input(s, path);
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

/* What obj is, for the report, as written (strings borrowed from obj). */
static struct cli_where where_of(const char *file, size_t line, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    return (struct cli_where){.file = file,
                              .line = line,
                              .kind = json_string_value(json_object_get(obj, "kind")),
                              .ns = json_string_value(json_object_get(meta, "namespace")),
                              .name = json_string_value(json_object_get(meta, "name"))};
}

/* What obj is, for a testcase: as where_of, but our kinds carry the namespace ktctl reads
 * them in. */
static struct cli_where case_of(const char *file, size_t line, const json_t *obj)
{
    struct cli_where at = where_of(file, line, obj);
    if (json_is_object(obj) && kt_validate_is_ours(obj)) {
        at.ns = unit_ns(obj);
    }
    return at;
}

static void report(struct vstate *s, const struct vproblem *vp)
{
    struct cli_problem p = {.at = where_of(vp->file, vp->line, vp->obj),
                            .field = vp->field ? vp->field : "",
                            .type = vp->type ? vp->type : "",
                            .message = vp->msg,
                            .rule = vp->rule,
                            .stage = vp->stage >= 0 ? stage_names[vp->stage] : NULL,
                            .warning = vp->warning};
    if (!p.type[0]) {
        /* No Go field.ErrorType: the type is the rule id, never "" (docs/ktctl.md). */
        p.rule = cli_report_rule(&p);
        p.type = p.rule;
    }
    if (vp->warning) {
        s->n_warnings++;
    }
    cli_report_problem(s->rep, &p);
}

/* The first of names[] found as an executable on PATH, or NULL. */
static const char *on_path(const char *name)
{
    const char *path = getenv("PATH");
    bool found = false;
    char *copy = kt_xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = kt_xasprintf("%s/%s", d[0] ? d : ".", name);
        found = access(p, X_OK) == 0;
        free(p);
    }
    free(copy);
    return found ? name : NULL;
}

/* `kustomize build DIR` (kustomize on PATH) or `kubectl kustomize DIR` into b; its stderr is
 * ours. The command line shown (owned) into *shown. */
/* Start argv (looked up on PATH) with stdin from /dev/null and stdout into a pipe; its read
 * end (the caller closes it) into *out and its pid into *pid. stderr stays ours. */
static int spawn_reader(const char *const argv[], int *out, pid_t *pid, struct kt_err *err)
{
    int fd[2];
    if (pipe(fd) != 0) {
        return kt_err_set(err, KT_EIO, "pipe: %s", strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    fflush(stdout);
    fflush(stderr);
    int rc = posix_spawnp(pid, argv[0], &fa, NULL, (char *const *)(uintptr_t)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        return kt_err_set(err, KT_EIO, "%s: %s", argv[0], strerror(rc));
    }
    *out = fd[0];
    return 0;
}

/* Everything fd gives into b (up to its cap). -1 with err when b is full. */
static int read_all(int fd, struct kt_buf *b, struct kt_err *err)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return 0;
        }
        if (kt_buf_append(b, chunk, (size_t)n, err) < 0) {
            return -1;
        }
    }
}

static int kustomize_build(const char *dir, struct kt_buf *b, char **shown, struct kt_err *err)
{
    const char *argv[] = {"kustomize", "build", dir, NULL};
    if (!on_path("kustomize")) {
        argv[0] = "kubectl";
        argv[1] = "kustomize";
    }
    *shown = kt_xasprintf("%s %s %s", argv[0], argv[1], dir);
    if (!on_path(argv[0])) {
        return kt_err_set(err, KT_ENOENT,
                          "--kustomize needs kustomize or kubectl on PATH (neither found)");
    }
    int fd = -1, st = 0;
    pid_t pid = 0;
    if (spawn_reader(argv, &fd, &pid, err) != 0) {
        return -1;
    }
    int rc = read_all(fd, b, err);
    if (rc != 0) {
        kill(pid, SIGTERM);
    }
    close(fd);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        rc = kt_err_set(err, KT_EIO, "`%s` failed (exit %d)", *shown,
                        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    if (rc == 0 && !b->data) {
        rc = kt_buf_append(b, "", 0, err);
    }
    return rc;
}

/* Some document of the stream is not empty. */
static bool has_document(const struct kt_yaml_stream *y)
{
    for (size_t i = 0; i < y->len; i++) {
        if (y->docs[i].root && !json_is_null(y->docs[i].root)) {
            return true;
        }
    }
    return false;
}

/* f's bytes into b: the file, stdin or the Kustomize build of a folder. An input error (exit
 * 2) and -1 when they cannot be had. */
static int load_bytes(struct vstate *s, const struct vfile *f, struct kt_buf *b)
{
    struct kt_err err = {0};
    char *why = NULL, *shown = NULL;
    if (f->kbuild ? kustomize_build(f->source, b, &shown, &err) == 0
                  : kt_buf_read_file(b, f->source, &err) == 0) {
        free(shown);
        return 0;
    }
    size_t n = strlen(f->path); /* a read error is "FILE: why" ("<stdin>: why" for -) */
    if (err.code == KT_ETOOBIG) {
        why = shown ? kt_xasprintf("the output of `%s` is larger than --max-input-size (%zu bytes)",
                                   shown, s->max_input)
                    : kt_xasprintf("larger than --max-input-size (%zu bytes)", s->max_input);
    } else {
        why = kt_xstrdup(!f->kbuild && strncmp(err.msg, f->path, n) == 0 && err.msg[n] == ':'
                             ? err.msg + n + 2
                             : err.msg);
    }
    input_error(s, f->path, err.code == KT_ETOOBIG ? "InputTooLarge" : "InputUnreadable", why);
    free(why);
    free(shown);
    return -1;
}

/* A NUL byte: a binary file, or text in UTF-16/32, which YAML here cannot be (it must be
 * UTF-8). An input error (exit 2), not a syntax error: there is no document to point into. */
static int refuse_binary(struct vstate *s, const struct vfile *f, const struct kt_buf *b)
{
    const char *nul = b->data ? memchr(b->data, '\0', b->len) : NULL;
    if (!nul) {
        return 0;
    }
    char *why = kt_xasprintf("a NUL byte at offset %zu: a binary file, or text that is not "
                             "UTF-8 (YAML input must be UTF-8)",
                             (size_t)(nul - b->data));
    input_error(s, f->path, "InputBinary", why);
    free(why);
    return -1;
}

static void read_file(struct vstate *s, struct vfile *f)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    if (f->skip) {
        return;
    }
    kt_buf_init(&b, s->max_input);
    if (load_bytes(s, f, &b) != 0 || refuse_binary(s, f, &b) != 0) {
        kt_buf_release(&b);
        return;
    }
    kt_yaml_limits_default(&lim);
    lim.max_bytes = s->max_input;
    f->parsed = true;
    if (kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &f->stream, &err) != 0) {
        size_t line;
        const char *rest = split_line(err.msg, &line);
        report(s, &(struct vproblem){.file = f->path,
                                     .line = line ? line : 1,
                                     .msg = rest,
                                     .stage = STAGE_PARSE,
                                     .rule = "YAMLSyntax"});
        s->n_invalid++;
        s->n_checked++; /* a verdict too: invalid never exceeds checked */
        fail(s, KT_EXIT_INVALID);
    } else if (!s->is_old && !has_document(&f->stream)) {
        report(s, &(struct vproblem){.file = f->path,
                                     .msg = "no YAML document in this file",
                                     .warning = true,
                                     .stage = STAGE_INPUT,
                                     .rule = "InputEmpty"});
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
    u->in_list = false;
    kt_vresult_init(&u->r);
}

/* A List as kubectl apply unfolds it: `kind: List` or any kind ending in "List" (a
 * TrainJobList) with an items array. */
/* A mapping with a non-empty string apiVersion and kind. */
static bool is_k8s_object(const json_t *o)
{
    return json_is_object(o) && kt_json_str(o, "apiVersion", "")[0] &&
           kt_json_str(o, "kind", "")[0];
}

static bool is_list(const json_t *o)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    size_t n = kind ? strlen(kind) : 0;
    return n >= 4 && strcmp(kind + n - 4, "List") == 0 &&
           json_is_array(json_object_get(o, "items"));
}

/* Split every document into units (a List contributes its items). */
static void collect_units(struct vstate *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        struct vfile *f = &s->files[i];
        for (size_t j = 0; j < f->stream.len; j++) {
            f->has_objects = f->has_objects || is_k8s_object(f->stream.docs[j].root);
        }
        for (size_t j = 0; j < f->stream.len; j++) {
            const struct kt_yaml_doc *d = &f->stream.docs[j];
            if (!d->root || json_is_null(d->root)) {
                continue;
            }
            if (is_list(d->root)) {
                size_t k;
                json_t *it;
                json_array_foreach(json_object_get(d->root, "items"), k, it)
                {
                    char *p = kt_xasprintf("/items/%zu", k);
                    add_unit(s, f, d, it, p);
                    s->units[s->nunits - 1].in_list = true;
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

/* Meant as a Trainer object (its kind or group), even if apiVersion or kind is missing. */
static bool looks_ours(const json_t *o)
{
    static const char *const kinds[] = {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"};
    const char *kind = kt_json_str(o, "kind", "");
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(kind, kinds[i]) == 0) {
            return true;
        }
    }
    return strncmp(kt_json_str(o, "apiVersion", ""), KT_GROUP "/", strlen(KT_GROUP) + 1) == 0;
}

static bool kind_in(const struct kt_strv *v, const char *av, const char *kind)
{
    char *gvk = kt_xasprintf("%s/%s", av, kind);
    bool in = kt_strv_contains(v, kind) || kt_strv_contains(v, gvk);
    free(gvk);
    return in;
}

/* Left out by --kind / --skip-kind. */
static bool filtered(const struct vstate *s, const json_t *o)
{
    const char *av = kt_json_str(o, "apiVersion", ""), *kind = kt_json_str(o, "kind", "");
    return (s->kinds.len > 0 && !kind_in(&s->kinds, av, kind)) || kind_in(&s->skip_kinds, av, kind);
}

/* A document that is not an object of ours: skipped, or an error kubectl would give too.
 * A Kubernetes object is a mapping with a non-empty string apiVersion and kind. Any other
 * document is an error (kubectl's "Object 'Kind' is missing") when it is an item of a List,
 * looks like a Trainer object or shares its file with a Kubernetes object; else the file is not
 * a manifest (Helm's values.yaml and Chart.yaml, a dashboard, a config file): skipped with a
 * note. */
static bool check_foreign(struct vstate *s, const struct unit *u)
{
    const char *av = json_string_value(json_object_get(u->obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(u->obj, "kind"));
    size_t line = unit_line(u, "");
    if (!json_is_object(u->obj) || !av || !kind || !av[0] || !kind[0]) {
        if (u->in_list || u->file->has_objects || (json_is_object(u->obj) && looks_ours(u->obj))) {
            report(s, &(struct vproblem){
                          .file = u->file->path,
                          .line = line,
                          .msg = "not a Kubernetes object: apiVersion and kind must be set",
                          .stage = STAGE_PARSE,
                          .rule = "NotAnObject"});
            s->n_invalid++;
            s->n_checked++; /* a verdict too: invalid never exceeds checked */
            fail(s, KT_EXIT_INVALID);
        } else {
            const char *why = "skipped: not a Kubernetes object (no apiVersion and kind)";
            note(u->file->path, line, why);
            cli_report_skip(s->rep, why);
            s->n_skipped++;
        }
        return true;
    }
    if (filtered(s, u->obj)) {
        char *why = kt_xasprintf("%s %s is left out by --kind/--skip-kind", av, kind);
        cli_report_skip(s->rep, why);
        free(why);
        s->n_skipped++;
        return true;
    }
    if (kt_validate_is_ours(u->obj)) {
        return false;
    }
    if (strncmp(av, KT_GROUP "/", strlen(KT_GROUP) + 1) == 0) {
        char *m = kt_xasprintf("no matches for kind \"%s\" in version \"%s\"", kind, av);
        report(s, &(struct vproblem){.file = u->file->path,
                                     .line = line,
                                     .obj = u->obj,
                                     .msg = m,
                                     .stage = STAGE_PARSE,
                                     .rule = "UnknownKind"});
        free(m);
        s->n_invalid++;
        s->n_checked++; /* a verdict too: invalid never exceeds checked */
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

/* Run u through the pipeline (with's validator, framework, clock and runtimes; its obj and
 * old are u's) into u->r (once); the admitted object into *admitted when admitted is not NULL
 * and nothing was found. Returns false for a foreign document. */
static bool run_unit(struct vstate *s, const struct kt_validate_req *with, struct unit *u,
                     json_t **admitted)
{
    struct kt_err err = {0};
    if (check_foreign(s, u)) {
        return false;
    }
    s->n_checked++;
    u->checked = true;
    /* With --old, the same object there makes this an UPDATE review from it. */
    const struct unit *was = find_same(s->old, u->obj);
    struct kt_validate_req req = *with;
    req.obj = u->obj;
    req.old = was ? was->obj : NULL;
    if (kt_validate_object_admitted(&req, &u->r, admitted, &err) != 0) {
        kt_vresult_add(&u->r, KT_VSTAGE_WEBHOOK, "", "Internal error", err.msg, "");
    }
    return true;
}

/* The runtime the TrainJob tj names is among the inputs (refused or not). */
static bool runtime_given(const struct vstate *s, const json_t *tj)
{
    const json_t *ref = json_object_get(json_object_get(tj, "spec"), "runtimeRef");
    const char *kind = kt_json_str(ref, "kind", "ClusterTrainingRuntime");
    const char *name = kt_json_str(ref, "name", "");
    for (size_t i = 0; i < s->nunits; i++) {
        const json_t *o = s->units[i].obj;
        if (is_runtime(o) && strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
            strcmp(kt_json_str(json_object_get(o, "metadata"), "name", ""), name) == 0) {
            return true;
        }
    }
    return false;
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
        report(s, &(struct vproblem){.file = u->file->path,
                                     .line = unit_line(u, p->ptr),
                                     .obj = u->obj,
                                     .field = p->field,
                                     .type = p->type,
                                     .msg = prefixed ? prefixed : p->text,
                                     .stage = (int)p->stage});
        free(prefixed);
    }
    for (size_t i = 0; i < r->warnings.len; i++) {
        report(s, &(struct vproblem){.file = u->file->path,
                                     .line = unit_line(u, ""),
                                     .obj = u->obj,
                                     .msg = r->warnings.items[i],
                                     .warning = true,
                                     .stage = KT_VSTAGE_WEBHOOK,
                                     .rule = "AdmissionWarning"});
    }
    if (r->len > 0) {
        s->n_invalid++;
        fail(s, KT_EXIT_INVALID);
    }
    for (size_t i = 0; i < r->len && !s->hinted; i++) {
        if (strstr(r->items[i].text, "must be created before the TrainJob is created") &&
            !runtime_given(s, u->obj)) {
            /* Once per run: the commonest first failure is a TrainJob given alone. */
            const char *arg = strcmp(u->file->source, "-") == 0 ? "-" : u->file->path;
            fflush(stdout);
            fprintf(stderr,
                    "%s: hint: give its runtime too (ktctl validate RUNTIMES-FOLDER %s, e.g. "
                    "kt's deploy/runtimes/), or --allow-missing-runtimes, or check against a "
                    "cluster (kubectl apply --dry-run=server -f %s)\n",
                    u->file->path, arg, arg);
            s->hinted = true;
        }
    }
}

/* Pass 1: check every runtime; the admitted ones (as the API server stores them) go into
 * runtimes, the documents that are not ours into cluster (what the plugins may look up). */
static void check_runtimes(struct vstate *s, const struct kt_validator *v,
                           const struct kt_framework *fw, time_t now, json_t *runtimes,
                           json_t *cluster)
{
    struct kt_vruntimes none = {.runtimes = runtimes};
    struct kt_validate_req with = {.v = v, .fw = fw, .now = now, .rts = &none};
    for (size_t i = 0; i < s->nunits; i++) {
        struct unit *u = &s->units[i];
        json_t *admitted = NULL;
        if (json_is_object(u->obj) && !kt_validate_is_ours(u->obj)) {
            json_array_append(cluster, (json_t *)(uintptr_t)u->obj);
        }
        if (!is_runtime(u->obj)) {
            continue;
        }
        if (filtered(s, u->obj)) {
            /* Not reported on, but in the cluster as the API server would store it. */
            struct kt_vresult quiet;
            struct kt_err err = {0};
            kt_vresult_init(&quiet);
            struct kt_validate_req req = with;
            req.obj = u->obj;
            if (kt_validate_object_admitted(&req, &quiet, &admitted, &err) == 0 && admitted) {
                json_array_append_new(runtimes, admitted);
            }
            kt_vresult_release(&quiet);
            continue;
        }
        if (run_unit(s, &with, u, &admitted) && admitted) {
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
                report(s, &(struct vproblem){.file = f->path,
                                             .line = line ? line : f->stream.docs[j].line,
                                             .msg = p,
                                             .warning = true,
                                             .stage = STAGE_PARSE,
                                             .rule = "DuplicateKey"});
            }
        }
    }
}

/* "8388608", "512Ki", "8Mi", "1Gi" -> *out (> 0). -1 otherwise. */
static int parse_size(const char *v, size_t *out)
{
    static const struct {
        const char *suffix;
        unsigned shift;
    } units[] = {{"", 0}, {"Ki", 10}, {"Mi", 20}, {"Gi", 30}};
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || errno != 0 || n == 0) {
        return -1;
    }
    for (size_t i = 0; i < KT_ARRAY_SIZE(units); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            if (n > (SIZE_MAX >> units[i].shift)) {
                return -1;
            }
            *out = (size_t)n << units[i].shift;
            return 0;
        }
    }
    return -1;
}

/* "A,B" -> each non-empty name into v. */
static void add_list(struct kt_strv *v, const char *list)
{
    char *copy = kt_xstrdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        kt_strv_push(v, t);
    }
    free(copy);
}

enum {
    OPT_OLD = 256,
    OPT_ALLOW,
    OPT_IGNORE,
    OPT_KIND,
    OPT_SKIP_KIND,
    OPT_KUSTOMIZE,
    OPT_MAX,
    OPT_GATES
};

/* getopt_long (glibc): options anywhere among the paths, "--" ends them. The paths, in
 * order, go into *paths. */
/* One option of getopt_long (c, its optarg) into s; a path (c == 1) into paths. 0, -1 after
 * --help, or the usage error's exit code. av: the argv getopt works on (for the option's name). */
static int one_option(struct vstate *s, int c, char **av, struct kt_strv *paths)
{
    switch (c) {
    case 1: /* a path among the options ("-" first in optstring: in order, whatever
             * POSIXLY_CORRECT says) */
        kt_strv_push(paths, optarg);
        break;
    case 'o':
        /* -o=json as Go's flag package (kubeconform) takes it: no format starts with = */
        if (cli_format_parse(optarg + (optarg[0] == '='), &s->format) != 0) {
            return usage_error("unknown output format", optarg);
        }
        break;
    case OPT_OLD:
        if (s->old_path) {
            return usage_error("--old given twice", NULL);
        }
        s->old_path = optarg;
        break;
    case OPT_ALLOW:
        s->allow_missing = true;
        break;
    case OPT_IGNORE: {
        /* "dir/" means the folder dir: paths are matched without a trailing "/" */
        size_t n = strlen(optarg);
        while (n > 1 && optarg[n - 1] == '/') {
            n--;
        }
        char *pat = kt_xasprintf("%.*s", (int)n, optarg);
        kt_strv_push(&s->ignores, pat);
        free(pat);
        break;
    }
    case OPT_KIND:
        add_list(&s->kinds, optarg);
        break;
    case OPT_SKIP_KIND:
        add_list(&s->skip_kinds, optarg);
        break;
    case OPT_KUSTOMIZE:
        s->kustomize = true;
        break;
    case OPT_MAX:
        if (parse_size(optarg, &s->max_input) != 0) {
            return usage_error("--max-input-size: not a size (BYTES, or with Ki, Mi, Gi)", optarg);
        }
        break;
    case OPT_GATES:
        s->gates = optarg;
        break;
    case 'h':
        cli_validate_usage(stdout);
        return -1;
    case ':':
        return usage_error("missing value for", av[optind - 1]);
    default:
        if (optopt >= OPT_OLD) {
            return usage_error("option takes no value", av[optind - 1]);
        }
        if (optopt) {
            char opt[3] = {'-', (char)optopt, '\0'};
            return usage_error("unknown option", opt);
        }
        return usage_error("unknown option", av[optind - 1]);
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct vstate *s, struct kt_strv *paths)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"old", required_argument, NULL, OPT_OLD},
        {"allow-missing-runtimes", no_argument, NULL, OPT_ALLOW},
        {"ignore", required_argument, NULL, OPT_IGNORE},
        {"kind", required_argument, NULL, OPT_KIND},
        {"skip-kind", required_argument, NULL, OPT_SKIP_KIND},
        {"kustomize", no_argument, NULL, OPT_KUSTOMIZE},
        {"max-input-size", required_argument, NULL, OPT_MAX},
        {"feature-gates", required_argument, NULL, OPT_GATES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* getopt wants argv[0] and reorders the array: work on a copy. */
    char **av = kt_xcalloc((size_t)argc + 2, sizeof(*av));
    int rc = 0, c;
    static char name[] = "ktctl validate";
    av[0] = name;
    for (int i = 0; i < argc; i++) {
        av[i + 1] = argv[i];
    }
    optind = 0; /* glibc: start afresh */
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc + 1, av, "-:o:h", opts, NULL)) != -1) {
        rc = one_option(s, c, av, paths);
    }
    for (int i = optind; rc == 0 && i <= argc; i++) {
        kt_strv_push(paths, av[i]);
    }
    free(av);
    if (rc == 0 && paths->len == 0) {
        rc = usage_error("no input given", NULL);
    }
    return rc;
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
        struct cli_where at = case_of(u->file->path, unit_line(u, ""), u->obj);
        cli_report_begin(o->rep, &at);
        report(o, &(struct vproblem){.file = u->file->path,
                                     .line = unit_line(u, ""),
                                     .obj = u->obj,
                                     .msg = m,
                                     .stage = STAGE_PARSE,
                                     .rule = "OldDuplicate"});
        cli_report_end(o->rep);
        free(m);
        o->n_invalid++;
        o->n_checked++; /* a verdict too: invalid never exceeds checked */
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
    o->max_input = s->max_input;
    s->old = o;
    add_path(o, s->old_path, 0);
    load(o);
    check_old_duplicates(o);
    fail(s, o->exit_code);
    s->n_invalid += o->n_invalid;
    s->n_checked += o->n_checked;
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
    fflush(stdout); /* the report, then the summary, whatever stdout is */
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
    kt_strv_release(&s->ignores);
    kt_strv_release(&s->kinds);
    kt_strv_release(&s->skip_kinds);
    kt_strv_release(&s->kpatches);
}

/* Every input named on the command line (and --old's), read and split into units. Releases
 * paths. */
static void read_inputs(struct vstate *s, struct kt_strv *paths)
{
    s->rep = cli_report_new(s->format, stdout, stderr);
    if (s->old_path) {
        load_old(s);
    }
    for (size_t i = 0; i < paths->len; i++) {
        add_path(s, paths->items[i], 0);
    }
    kt_strv_release(paths);
    load(s);
}

/* The runtimes first (they are what the TrainJobs are checked against), then each unit as a
 * testcase of its own. */
static void check_units(struct vstate *s, struct kt_validator *v, const struct kt_framework *fw)
{
    json_t *runtimes = json_array();
    json_t *cluster = json_array();
    time_t now = time(NULL);
    check_runtimes(s, v, fw, now, runtimes, cluster);
    append_old_runtimes(s, runtimes);
    struct inputs_view iv = {.s = s, .cluster = cluster};
    struct kt_view view = {.get = inputs_get, .ctx = &iv};
    struct kt_vruntimes rts = {
        .runtimes = runtimes, .allow_missing = s->allow_missing, .view = &view};
    struct kt_validate_req with = {.v = v, .fw = fw, .now = now, .rts = &rts};
    for (size_t i = 0; i < s->nunits; i++) {
        struct unit *u = &s->units[i];
        struct cli_where at = case_of(u->file->path, unit_line(u, ""), u->obj);
        cli_report_begin(s->rep, &at);
        if (u->checked || run_unit(s, &with, u, NULL)) {
            report_unit(s, u);
        }
        cli_report_end(s->rep);
    }
    json_decref(cluster);
    json_decref(runtimes);
}

int cli_validate(int argc, char **argv, const struct kt_framework *fw)
{
    struct vstate s = {0};
    struct kt_err err = {0};
    struct kt_strv paths;
    s.max_input = INPUT_MAX_DEFAULT;
    kt_strv_init(&paths);
    int rc = parse_args(argc, argv, &s, &paths);
    if (rc != 0) {
        release(&s);
        kt_strv_release(&paths);
        return rc < 0 ? KT_EXIT_OK : rc;
    }
    /* --feature-gates: only DynamicResourceAllocation changes a verdict (admits the KEP-2782
     * fields, docs/api.md#dynamic-resource-allocation); TrainJobStatus is accepted and changes
     * nothing here. */
    struct kt_framework gated = *fw;
    if (s.gates) {
        struct kt_config cfg;
        kt_config_default(&cfg);
        rc = kt_config_set_gates(&cfg, s.gates, &err);
        gated.dra = rc == 0 && kt_config_gate(&cfg, KT_GATE_DRA, false);
        kt_config_release(&cfg);
        if (rc != 0) {
            fprintf(stderr, "ktctl validate: --feature-gates: %s\n", err.msg);
            release(&s);
            kt_strv_release(&paths);
            return KT_EXIT_USAGE;
        }
    }
    fw = &gated;
    struct kt_validator *v = kt_validator_new(&err);
    if (!v) {
        fprintf(stderr, "ktctl validate: %s\n", err.msg);
        release(&s);
        kt_strv_release(&paths);
        return KT_EXIT_USAGE;
    }
    /* Test knob (docs/development.md): a cluster without Trainer's webhooks registered. */
    const char *nd = getenv("KT_VALIDATE_NO_DEFAULTER");
    kt_validator_set_no_defaulter(v, nd && strcmp(nd, "1") == 0);
    read_inputs(&s, &paths);
    check_units(&s, v, fw);
    finish(&s);
    rc = s.exit_code;
    cli_report_free(s.rep);
    release(&s);
    kt_validator_free(v);
    return rc;
}
