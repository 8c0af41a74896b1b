/* SPDX-License-Identifier: Apache-2.0 */
/* cli/render.c - `ktctl render`: TrainJob + runtime -> the exact objects the reconciler would
 * apply (docs/ktctl.md#ktctl-render). File handling and output only; the work is
 * common/framework/render.c. Unless --no-validate, the TrainJob and the runtimes it uses first go
 * through `ktctl validate`'s pipeline (common/validate/validate.h) and the objects as admitted
 * (pruned, defaulted) are rendered. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "common/base/buf.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/framework/render.h"
#include "common/validate/validate.h"
#include "common/base/yaml.h"
#include "common/config/config.h"

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
    const char *gates; /* --feature-gates, as the daemons take it */
};

/* The operator namespace offline (the reconciler's default without a kubeconfig namespace). */
#define OPERATOR_NAMESPACE "kubeflow-system"

/* Where an input object came from, for messages. */
struct origin {
    const char *file;
    size_t line;
    json_t *lines; /* owned reference: JSON Pointer -> line in the document, or NULL */
    char *prefix;  /* owned: the object's pointer in its document ("" or "/items/N") */
};

/* Input objects (owned references in objs) and their origins, index for index. */
struct docs {
    json_t *objs;
    struct origin *o;
    size_t len, cap;
};

static void docs_init(struct docs *d)
{
    memset(d, 0, sizeof(*d));
    d->objs = json_array();
}

static void docs_release(struct docs *d)
{
    for (size_t i = 0; i < d->len; i++) {
        json_decref(d->o[i].lines);
        free(d->o[i].prefix);
    }
    free(d->o);
    json_decref(d->objs);
    memset(d, 0, sizeof(*d));
}

static void docs_add(struct docs *d, json_t *obj, const char *file, const struct kt_yaml_doc *doc,
                     const char *prefix)
{
    if (d->len == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 16;
        d->o = kt_xrealloc(d->o, d->cap * sizeof(*d->o));
    }
    struct origin *o = &d->o[d->len++];
    o->file = file;
    o->line = doc->line;
    o->lines = json_incref(doc->lines);
    o->prefix = kt_xstrdup(prefix);
    json_array_append(d->objs, obj);
}

/* The line of the node at ptr in the object of o, or of its nearest ancestor. */
static size_t origin_line(const struct origin *o, const char *ptr)
{
    return cli_node_line(o->lines, o->prefix, ptr, o->line);
}

void cli_render_usage(FILE *f)
{
    fprintf(f, "  render [--runtime PATH]... [--objects PATH] [--uid UID] [--ssh-key FILE]\n"
               "         [--no-validate] [--feature-gates K=V,...] [-o yaml|json] PATH\n"
               "      Print every object the reconciler would apply for the TrainJobs in PATH\n"
               "      (a file or - for stdin), in apply order. The TrainJobs and the runtimes\n"
               "      they use are first checked as `ktctl validate` does (denials on stderr as\n"
               "      FILE:LINE: Kind/name: <error>; --no-validate skips every check).\n"
               "      --feature-gates as the daemons' flag: TrainJobStatus=true points trainer\n"
               "      pods at the status server (the CA Secret kubeflow-system/\n"
               "      kubeflow-trainer-webhook-cert must be in --objects);\n"
               "      DynamicResourceAllocation=true builds resourceClaimsPerNode (claim\n"
               "      templates in --objects give the device count). Exit 0 ok, 1 denied\n"
               "      or failed, 2 usage error or unreadable input.\n");
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
            if (c->n_runtimes == KT_ARRAY_SIZE(c->runtimes)) {
                return usage_error("too many --runtime flags", NULL);
            }
            c->runtimes[c->n_runtimes++] = argv[++i];
        } else if (strcmp(a, "--objects") == 0 && has_val) {
            c->objects = argv[++i];
        } else if (strcmp(a, "--uid") == 0 && has_val) {
            c->uid = argv[++i];
        } else if (strcmp(a, "--ssh-key") == 0 && has_val) {
            c->ssh_key = argv[++i];
        } else if (strcmp(a, "--feature-gates") == 0 && has_val) {
            c->gates = argv[++i];
        } else if (strncmp(a, "--feature-gates=", 16) == 0) {
            c->gates = a + 16;
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

/* One object of a document: TrainJobs to tjs (when given), the rest to dst. */
static void load_obj(json_t *obj, const char *shown, const struct kt_yaml_doc *doc,
                     const char *prefix, struct docs *tjs, struct docs *dst)
{
    if (!json_is_object(obj)) {
        return;
    }
    if (tjs && kt_render_is_kind(obj, "TrainJob")) {
        docs_add(tjs, obj, shown, doc, prefix);
    } else {
        docs_add(dst, obj, shown, doc, prefix);
    }
}

/* A directory given where a file is wanted: say so (reading it would only fail with "read
 * error"). Returns true after printing the message. */
static bool is_directory(const char *file)
{
    struct stat st;
    if (strcmp(file, "-") != 0 && stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr,
                "ktctl render: %s: is a directory; render takes files (PATH, --runtime, "
                "--objects) or - for stdin\n",
                file);
        return true;
    }
    return false;
}

/* Append every object document of file to dst (expanding kind List), TrainJobs to tjs when
 * given. Returns 0, 1 (YAML error), 2 (unreadable). */
static int load(const char *file, struct docs *tjs, struct docs *dst)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    struct kt_yaml_stream s = {0};
    const char *shown = strcmp(file, "-") == 0 ? "<stdin>" : file;
    if (is_directory(file)) {
        return 2;
    }
    kt_buf_init(&b, INPUT_MAX);
    if (kt_buf_read_file(&b, file, &err) != 0) {
        fprintf(stderr, "ktctl render: %s\n", err.msg); /* names the file */
        kt_buf_release(&b);
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
        json_t *items = json_object_get(doc->root, "items");
        const char *kind = json_string_value(json_object_get(doc->root, "kind"));
        if (kind && strcmp(kind, "List") == 0 && json_is_array(items)) {
            size_t i;
            json_t *it;
            json_array_foreach(items, i, it)
            {
                char *prefix = kt_xasprintf("/items/%zu", i);
                load_obj(it, shown, doc, prefix, tjs, dst);
                free(prefix);
            }
        } else {
            load_obj(doc->root, shown, doc, "", tjs, dst);
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
    if (is_directory(file)) {
        *rc = KT_EXIT_USAGE;
        return NULL;
    }
    kt_buf_init(&b, INPUT_MAX);
    if (kt_buf_read_file(&b, file, &err) != 0) {
        fprintf(stderr, "ktctl render: %s\n", err.msg); /* names the file */
        kt_buf_release(&b);
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

/* The validation pipeline's state across TrainJobs: each runtime is checked once. */
struct vctx {
    const struct kt_validator *v;
    const struct kt_framework *fw;
    time_t now;
    const struct docs *rts; /* the runtimes as read */
    json_t *admitted;       /* rts->objs with every checked, valid runtime replaced by its
                               admitted form (what the API server stores) */
    int *state;             /* per runtime: 0 unchecked, 1 valid, 2 denied */
    struct kt_view view;    /* the --objects, for the plugins' validation */
};

/* Problems as `ktctl validate` prints them (FILE:LINE: Kind/name: <error>), on stderr. */
static void print_problems(const struct origin *o, const json_t *obj, const struct kt_vresult *r)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    for (size_t i = 0; i < r->len; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++) {
            dup = strcmp(r->items[j].text, r->items[i].text) == 0;
        }
        if (!dup) {
            fprintf(stderr, "%s:%zu: %s/%s: %s\n", o->file, origin_line(o, r->items[i].ptr),
                    kind ? kind : "", tj_name(obj), r->items[i].text);
        }
    }
    for (size_t i = 0; i < r->warnings.len; i++) {
        fprintf(stderr, "%s:%zu: warning: %s\n", o->file, o->line, r->warnings.items[i]);
    }
}

/* Run obj through the pipeline. Returns 0 admitted (*admitted set), 1 denied (printed). */
static int check_object(struct vctx *x, const struct origin *o, const json_t *obj,
                        json_t **admitted)
{
    struct kt_vresult r;
    struct kt_err err = {0};
    struct kt_vruntimes rts = {.runtimes = x->admitted, .view = &x->view};
    kt_vresult_init(&r);
    struct kt_validate_req req = {.v = x->v, .fw = x->fw, .obj = obj, .now = x->now, .rts = &rts};
    if (kt_validate_object_admitted(&req, &r, admitted, &err) != 0) {
        kt_vresult_add(&r, KT_VSTAGE_WEBHOOK, "", "Internal error", err.msg, "");
    }
    int rc = r.len > 0 ? 1 : 0;
    if (rc != 0) {
        print_problems(o, obj, &r);
    }
    kt_vresult_release(&r);
    return rc;
}

static bool uses_runtime(const json_t *tj, const json_t *rt)
{
    const json_t *ref = json_object_get(json_object_get(tj, "spec"), "runtimeRef");
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *rt_kind = json_string_value(json_object_get(rt, "kind"));
    kind = kind ? kind : "ClusterTrainingRuntime"; /* the CRD default */
    if (!name || !rt_kind || !kt_validate_is_ours(rt) || strcmp(kind, rt_kind) != 0 ||
        strcmp(name, tj_name(rt)) != 0) {
        return false;
    }
    if (strcmp(kind, "ClusterTrainingRuntime") == 0) {
        return true;
    }
    const char *a =
        json_string_value(json_object_get(json_object_get(tj, "metadata"), "namespace"));
    const char *b =
        json_string_value(json_object_get(json_object_get(rt, "metadata"), "namespace"));
    return strcmp(a && *a ? a : "default", b && *b ? b : "default") == 0;
}

/* Validate the runtimes tj uses (once each), then tj. 0 admitted (*admitted), 1 denied. */
static int check_trainjob(struct vctx *x, const struct origin *o, const json_t *tj,
                          json_t **admitted)
{
    int denied = 0;
    for (size_t i = 0; i < x->rts->len; i++) {
        const json_t *rt = json_array_get(x->rts->objs, i);
        if (!uses_runtime(tj, rt)) {
            continue;
        }
        if (x->state[i] == 0) {
            json_t *ok = NULL;
            x->state[i] = check_object(x, &x->rts->o[i], rt, &ok) == 0 ? 1 : 2;
            if (ok) {
                json_array_set_new(x->admitted, i, ok);
            }
        }
        denied |= x->state[i] == 2;
    }
    return denied ? 1 : check_object(x, o, tj, admitted);
}

static int render_one(const struct kt_framework *fw, const struct kt_render_req *req,
                      const struct origin *o, json_t *items)
{
    const json_t *tj = req->trainjob;
    struct kt_ferrs denial;
    struct kt_strv warnings;
    struct kt_err err = {0};
    kt_ferrs_init(&denial);
    kt_strv_init(&warnings);
    int r = kt_render_trainjob(fw, req, items, &denial, &warnings, &err);
    for (size_t w = 0; w < warnings.len; w++) {
        fprintf(stderr, "%s:%zu: warning: %s\n", o->file, o->line, warnings.items[w]);
    }
    if (r == 1) {
        print_denial(o, tj, &denial);
    } else if (r < 0) {
        fprintf(stderr, "%s:%zu: TrainJob/%s: %s\n", o->file, o->line, tj_name(tj), err.msg);
    }
    kt_ferrs_release(&denial);
    kt_strv_release(&warnings);
    return r != 0 ? KT_EXIT_INVALID : 0;
}

/* What render_all renders, all read before it starts (borrowed). */
struct render_inputs {
    const struct docs *tjs, *rts;
    const json_t *objects; /* --objects */
    const char *ssh_pem;   /* --ssh-key's text, or NULL */
};

static int render_all(const struct kt_framework *fw, const struct render_cfg *c,
                      const struct render_inputs *in, const struct kt_validator *v)
{
    struct kt_render_opts opts = {
        .uid = c->uid, .ssh_key_pem = in->ssh_pem, .no_validate = c->no_validate};
    const struct docs *tjs = in->tjs, *rts = in->rts;
    struct vctx x = {.v = v,
                     .fw = fw,
                     .now = time(NULL),
                     .rts = rts,
                     .admitted = json_copy(rts->objs),
                     .state = kt_xcalloc(rts->len ? rts->len : 1, sizeof(int)),
                     .view = {.get = kt_render_objects_get, .ctx = (void *)(uintptr_t)in->objects}};
    json_t *items = json_array();
    int rc = 0;
    for (size_t i = 0; i < tjs->len; i++) {
        const json_t *tj = json_array_get(tjs->objs, i);
        json_t *admitted = NULL;
        if (!c->no_validate && check_trainjob(&x, &tjs->o[i], tj, &admitted) != 0) {
            rc = KT_EXIT_INVALID;
            continue;
        }
        struct kt_render_req req = {.trainjob = admitted ? admitted : tj,
                                    .runtimes = rts->objs,
                                    .objects = in->objects,
                                    .opts = &opts};
        int r = render_one(fw, &req, &tjs->o[i], items);
        rc = r != 0 ? r : rc;
        json_decref(admitted);
    }
    if (rc == 0 && print_output(items, c->json) != 0) {
        rc = KT_EXIT_INVALID;
    }
    json_decref(items);
    json_decref(x.admitted);
    free(x.state);
    return rc;
}

static int worst(int a, int b)
{
    return a == KT_EXIT_USAGE || b == KT_EXIT_USAGE ? KT_EXIT_USAGE : (a > b ? a : b);
}

/* The feature gates over the daemons' defaults (common/config/config.h). With TrainJobStatus
 * on, *gated becomes fw with the status server the reconciler would point trainer pods at:
 * the default certManagement names and statusServer.port in the operator namespace. ss and
 * *gated borrow from cfg. 0 or KT_EXIT_USAGE (printed). */
static int apply_gates(const char *spec, const struct kt_framework *fw, struct kt_config *cfg,
                       struct kt_status_server *ss, struct kt_framework *gated)
{
    struct kt_err err = {0};
    *gated = *fw;
    if (kt_config_set_gates(cfg, spec, &err) != 0) {
        fprintf(stderr, "ktctl render: --feature-gates: %s\n", err.msg);
        return KT_EXIT_USAGE;
    }
    if (kt_config_gate(cfg, KT_GATE_TRAINJOB_STATUS, false)) {
        *ss = (struct kt_status_server){.service = cfg->cert_management.webhook_service_name,
                                        .namespace_ = OPERATOR_NAMESPACE,
                                        .secret = cfg->cert_management.webhook_secret_name,
                                        .port = cfg->status_server.port};
        gated->status_server = ss;
    }
    gated->dra = kt_config_gate(cfg, KT_GATE_DRA, false);
    return 0;
}

/* cli_render with the state --feature-gates fills (owned by the caller). */
static int render(int argc, char **argv, const struct kt_framework *fw, struct kt_config *cfg,
                  struct kt_status_server *ss, struct kt_framework *gated)
{
    struct render_cfg c;
    struct docs tjs, rts, objects;
    struct kt_err err = {0};
    memset(&c, 0, sizeof(c));
    int rc = parse_args(argc, argv, &c);
    if (rc == 0 && c.gates) {
        rc = apply_gates(c.gates, fw, cfg, ss, gated);
        fw = gated;
    }
    if (rc != 0) {
        return rc;
    }
    struct kt_validator *v = c.no_validate ? NULL : kt_validator_new(&err);
    if (!c.no_validate && !v) {
        fprintf(stderr, "ktctl render: %s\n", err.msg);
        return KT_EXIT_USAGE;
    }
    docs_init(&tjs);
    docs_init(&rts);
    docs_init(&objects);
    char *ssh_pem = NULL;
    rc = load(c.path, &tjs, &rts);
    for (size_t i = 0; i < c.n_runtimes && rc != KT_EXIT_USAGE; i++) {
        rc = worst(rc, load(c.runtimes[i], NULL, &rts));
    }
    if (c.objects && rc != KT_EXIT_USAGE) {
        rc = worst(rc, load(c.objects, NULL, &objects));
    }
    if (c.ssh_key && rc != KT_EXIT_USAGE) {
        ssh_pem = read_text(c.ssh_key, &rc);
    }
    if (rc == 0 && tjs.len == 0) {
        fprintf(stderr, "ktctl render: no TrainJob (%s) in %s\n", KT_API_VERSION, c.path);
        rc = KT_EXIT_INVALID;
    }
    if (rc == 0) {
        struct render_inputs in = {
            .tjs = &tjs, .rts = &rts, .objects = objects.objs, .ssh_pem = ssh_pem};
        rc = render_all(fw, &c, &in, v);
    }
    free(ssh_pem);
    docs_release(&tjs);
    docs_release(&rts);
    docs_release(&objects);
    kt_validator_free(v);
    return rc;
}

int cli_render(int argc, char **argv, const struct kt_framework *fw)
{
    struct kt_config cfg;
    struct kt_status_server ss;
    struct kt_framework gated;
    kt_config_default(&cfg);
    int rc = render(argc, argv, fw, &cfg, &ss, &gated);
    kt_config_release(&cfg);
    return rc;
}
