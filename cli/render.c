/* cli/render.c - `ktctl render`: TrainJob + runtime -> the exact objects the reconciler would
 * apply (DESIGN.md "Interfaces"). File handling and output only; the work is
 * common/render.c. Schema/CEL validation is not done here yet (ktctl validate's rules). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/buf.h"
#include "common/framework.h"
#include "common/json.h"
#include "common/mem.h"
#include "common/render.h"
#include "common/yaml.h"

#define INPUT_MAX (8u << 20)
#define OUTPUT_MAX (256u << 20)

struct render_cfg {
    const char *path;
    const char *runtimes[64];
    size_t n_runtimes;
    const char *objects;
    const char *uid;
    const char *ssh_key;
    bool no_validate;
    bool json;
};

/* Where a TrainJob came from, for messages. */
struct origin {
    const char *file;
    size_t line;
};

void cli_render_usage(FILE *f)
{
    fprintf(f, "  render [--runtime PATH]... [--objects PATH] [--uid UID] [--ssh-key FILE]\n"
               "         [--no-validate] [-o yaml|json] PATH\n"
               "      Print every object the reconciler would apply for the TrainJobs in PATH\n"
               "      (a file or - for stdin), in apply order. Exit 0 ok, 1 denied or failed,\n"
               "      2 usage error or unreadable input.\n");
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "ktctl render: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    cli_render_usage(stderr);
    return KT_EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct render_cfg *c)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--no-validate") == 0) {
            c->no_validate = true;
        } else if (strcmp(a, "--runtime") == 0 && has_val) {
            if (c->n_runtimes == sizeof(c->runtimes) / sizeof(c->runtimes[0])) {
                return usage_error("too many --runtime flags", NULL);
            }
            c->runtimes[c->n_runtimes++] = argv[++i];
        } else if (strcmp(a, "--objects") == 0 && has_val) {
            c->objects = argv[++i];
        } else if (strcmp(a, "--uid") == 0 && has_val) {
            c->uid = argv[++i];
        } else if (strcmp(a, "--ssh-key") == 0 && has_val) {
            c->ssh_key = argv[++i];
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && has_val) {
            const char *o = argv[++i];
            if (strcmp(o, "json") != 0 && strcmp(o, "yaml") != 0) {
                return usage_error("-o must be yaml or json", o);
            }
            c->json = strcmp(o, "json") == 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown or incomplete flag", a);
        } else if (c->path) {
            return usage_error("exactly one PATH expected", a);
        } else {
            c->path = a;
        }
    }
    return c->path ? 0 : usage_error("missing PATH", NULL);
}

/* Append every object document of file to dst (expanding kind List), recording origins of
 * TrainJobs when tj/origins are given. Returns 0, 1 (YAML error), 2 (unreadable). */
static int load(const char *file, json_t *dst, json_t *tjs, struct origin *origins,
                size_t *n_origins)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    struct kt_yaml_stream s = {0};
    const char *shown = strcmp(file, "-") == 0 ? "<stdin>" : file;
    kt_buf_init(&b, INPUT_MAX);
    if (kt_buf_read_file(&b, file, &err) != 0) {
        fprintf(stderr, "ktctl render: %s: %s\n", shown, err.msg);
        return 2;
    }
    kt_yaml_limits_default(&lim);
    int rc = kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &s, &err) != 0 ? 1 : 0;
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", shown, err.msg);
    }
    for (size_t d = 0; d < s.len; d++) {
        const struct kt_yaml_doc *doc = &s.docs[d];
        for (size_t w = 0; w < doc->warnings.len; w++) {
            fprintf(stderr, "%s:%s: warning\n", shown, doc->warnings.items[w]);
        }
        if (!json_is_object(doc->root)) {
            continue;
        }
        json_t *items = json_object_get(doc->root, "items");
        const char *kind = json_string_value(json_object_get(doc->root, "kind"));
        if (kind && strcmp(kind, "List") == 0 && json_is_array(items)) {
            json_array_extend(dst, items);
            continue;
        }
        if (tjs && kt_render_is_kind(doc->root, "TrainJob")) {
            origins[*n_origins].file = shown;
            origins[*n_origins].line = doc->line;
            (*n_origins)++;
            json_array_append(tjs, doc->root);
        } else {
            json_array_append(dst, doc->root);
        }
    }
    kt_yaml_stream_release(&s);
    kt_buf_release(&b);
    return rc;
}

static char *read_text(const char *file, int *rc)
{
    struct kt_buf b;
    struct kt_err err = {0};
    kt_buf_init(&b, INPUT_MAX);
    if (kt_buf_read_file(&b, file, &err) != 0) {
        fprintf(stderr, "ktctl render: %s: %s\n", file, err.msg);
        *rc = KT_EXIT_USAGE;
        return NULL;
    }
    return kt_buf_take(&b, NULL);
}

static const char *tj_name(const json_t *tj)
{
    const char *n = json_string_value(json_object_get(json_object_get(tj, "metadata"), "name"));
    return n ? n : "";
}

static int print_output(const json_t *items, bool as_json)
{
    struct kt_buf b;
    struct kt_err err = {0};
    size_t i;
    json_t *o;
    if (as_json) {
        json_t *list =
            json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items", items);
        char *s = kt_json_dump_pretty(list);
        json_decref(list);
        fputs(s, stdout);
        fputs("\n", stdout);
        free(s);
        return 0;
    }
    kt_buf_init(&b, OUTPUT_MAX);
    json_array_foreach(items, i, o)
    {
        if (kt_yaml_emit(o, &b, &err) != 0) {
            fprintf(stderr, "ktctl render: %s\n", err.msg);
            return 1;
        }
    }
    /* kt_yaml_emit separates documents with "---" itself. */
    fwrite(b.data ? b.data : "", 1, b.len, stdout);
    kt_buf_release(&b);
    return 0;
}

static void print_denial(const struct origin *o, const json_t *tj, const struct kt_ferrs *denial)
{
    for (size_t i = 0; i < denial->len; i++) {
        char *m = kt_ferr_string(&denial->items[i]);
        fprintf(stderr, "%s:%zu: TrainJob/%s: %s\n", o->file, o->line, tj_name(tj), m);
        free(m);
    }
}

static int render_all(const struct kt_framework *fw, const struct render_cfg *c, json_t *tjs,
                      const struct origin *origins, const json_t *runtimes, const json_t *objects,
                      const char *ssh_pem)
{
    struct kt_render_opts opts = {c->uid, ssh_pem, c->no_validate};
    json_t *items = json_array();
    size_t i;
    json_t *tj;
    int rc = 0;
    json_array_foreach(tjs, i, tj)
    {
        struct kt_ferrs denial;
        struct kt_strv warnings;
        struct kt_err err = {0};
        kt_ferrs_init(&denial);
        kt_strv_init(&warnings);
        int r =
            kt_render_trainjob(fw, tj, runtimes, objects, &opts, items, &denial, &warnings, &err);
        for (size_t w = 0; w < warnings.len; w++) {
            fprintf(stderr, "%s:%zu: warning: %s\n", origins[i].file, origins[i].line,
                    warnings.items[w]);
        }
        if (r == 1) {
            print_denial(&origins[i], tj, &denial);
        } else if (r < 0) {
            fprintf(stderr, "%s:%zu: TrainJob/%s: %s\n", origins[i].file, origins[i].line,
                    tj_name(tj), err.msg);
        }
        rc = r != 0 ? KT_EXIT_INVALID : rc;
        kt_ferrs_release(&denial);
        kt_strv_release(&warnings);
    }
    if (rc == 0 && print_output(items, c->json) != 0) {
        rc = KT_EXIT_INVALID;
    }
    json_decref(items);
    return rc;
}

static int worst(int a, int b)
{
    return a == KT_EXIT_USAGE || b == KT_EXIT_USAGE ? KT_EXIT_USAGE : (a > b ? a : b);
}

int cli_render(int argc, char **argv, const struct kt_framework *fw)
{
    struct render_cfg c;
    memset(&c, 0, sizeof(c));
    int rc = parse_args(argc, argv, &c);
    if (rc != 0) {
        return rc;
    }
    json_t *tjs = json_array(), *runtimes = json_array(), *objects = json_array();
    struct origin *origins = kt_xcalloc(4096, sizeof(*origins));
    size_t n = 0;
    char *ssh_pem = NULL;
    rc = load(c.path, runtimes, tjs, origins, &n);
    for (size_t i = 0; i < c.n_runtimes && rc != KT_EXIT_USAGE; i++) {
        rc = worst(rc, load(c.runtimes[i], runtimes, NULL, NULL, NULL));
    }
    if (c.objects && rc != KT_EXIT_USAGE) {
        rc = worst(rc, load(c.objects, objects, NULL, NULL, NULL));
    }
    if (c.ssh_key && rc != KT_EXIT_USAGE) {
        ssh_pem = read_text(c.ssh_key, &rc);
    }
    if (rc == 0 && json_array_size(tjs) == 0) {
        fprintf(stderr, "ktctl render: no TrainJob (%s) in %s\n", KT_API_VERSION, c.path);
        rc = KT_EXIT_INVALID;
    }
    if (rc == 0) {
        rc = render_all(fw, &c, tjs, origins, runtimes, objects, ssh_pem);
    }
    free(ssh_pem);
    free(origins);
    json_decref(tjs);
    json_decref(runtimes);
    json_decref(objects);
    return rc;
}
