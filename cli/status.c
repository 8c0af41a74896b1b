/* SPDX-License-Identifier: Apache-2.0 */
/* cli/status.c - `ktctl status NAME`: read a TrainJob, its JobSet, Jobs, pods and events
 * from the API server and print one view of it (cli/status_view.h). Kubeconfig and
 * namespace are chosen like kubectl's: --kubeconfig, else the first file of $KUBECONFIG,
 * else ~/.kube/config; --context; -n, else the context's namespace, else "default". Also run
 * as the kubectl plugin `kubectl kt status NAME` (bin/kubectl-kt is ktctl). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/status_view.h"
#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/yaml.h"
#include "common/kube/kube.h"

#define WATCH_PERIOD_S 2

static const struct kt_kube_gvr GVR_JOBS = {.group = "batch", .version = "v1", .resource = "jobs"};
static const struct kt_kube_gvr GVR_PODS = {.group = "", .version = "v1", .resource = "pods"};

struct status_args {
    const char *name, *ns, *kubeconfig, *context, *output;
    bool watch;
};

void cli_status_usage(FILE *f)
{
    fprintf(f, "  status NAME [-n NS] [--kubeconfig FILE] [--context CTX] [-o json|yaml] [-w]\n"
               "      One view of a TrainJob: conditions and times, runtime, JobSet, each\n"
               "      replicated job's Jobs and pods by phase, the scheduler's reason for every\n"
               "      Pending pod, the last events, and what it waits for. Kubeconfig and\n"
               "      namespace as kubectl ($KUBECONFIG, ~/.kube/config). -w re-prints on\n"
               "      change every 2 s until the TrainJob finishes. Also `kubectl kt status`.\n"
               "      Exit 0 shown, 1 not found / forbidden / API error, 2 usage error.\n");
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "ktctl status: %s\n", msg);
    cli_status_usage(stderr);
    return KT_EXIT_USAGE;
}

static const char **flag_target(struct status_args *a, const char *f)
{
    if (strcmp(f, "-n") == 0 || strcmp(f, "--namespace") == 0) {
        return &a->ns;
    }
    if (strcmp(f, "--kubeconfig") == 0) {
        return &a->kubeconfig;
    }
    if (strcmp(f, "--context") == 0) {
        return &a->context;
    }
    if (strcmp(f, "-o") == 0 || strcmp(f, "--output") == 0) {
        return &a->output;
    }
    return NULL;
}

/* --flag VALUE and --flag=VALUE. */
static int parse_args(int argc, char **argv, struct status_args *a)
{
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i], *eq = strchr(arg, '=');
        if (strcmp(arg, "-w") == 0 || strcmp(arg, "--watch") == 0) {
            a->watch = true;
            continue;
        }
        if (arg[0] != '-') {
            if (a->name) {
                return usage_error("one TrainJob name only");
            }
            a->name = arg;
            continue;
        }
        if (eq && arg[1] == '-') {
            *eq = '\0';
        }
        const char **t = flag_target(a, arg);
        if (!t) {
            fprintf(stderr, "ktctl status: unknown flag %s\n", arg);
            return KT_EXIT_USAGE;
        }
        if (eq && arg[1] == '-') {
            *t = eq + 1;
        } else if (i + 1 < argc) {
            *t = argv[++i];
        } else {
            return usage_error("a flag needs a value");
        }
    }
    if (!a->name) {
        return usage_error("NAME is required");
    }
    if (a->output && strcmp(a->output, "json") != 0 && strcmp(a->output, "yaml") != 0) {
        return usage_error("-o must be json or yaml");
    }
    return KT_EXIT_OK;
}

/* The kubeconfig path as kubectl picks it. Caller owns the result; free with free(). */
static char *kubeconfig_path(const char *flag)
{
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    if (flag && *flag) {
        return kt_xstrdup(flag);
    }
    if (env && *env) {
        const char *colon = strchr(env, ':');
        return colon ? kt_xstrndup(env, (size_t)(colon - env)) : kt_xstrdup(env);
    }
    return kt_xasprintf("%s/.kube/config", home ? home : ".");
}

/* "Error from server (Reason): message", as kubectl prints an API refusal. */
static void print_api_error(struct kt_kube_client *c, const struct kt_err *err)
{
    const struct kt_kube_status *st = kt_kube_client_last_status(c);
    if (st && st->http >= 400 && *st->reason) {
        fprintf(stderr, "Error from server (%s): %s\n", st->reason, st->message);
    } else {
        fprintf(stderr, "ktctl status: %s\n", err->msg);
    }
}

/* A note for what could not be read (the view shows what could). */
static void note(json_t *notes, const char *what, struct kt_kube_client *c, const struct kt_err *e)
{
    const struct kt_kube_status *st = kt_kube_client_last_status(c);
    char *s = st && *st->reason ? kt_xasprintf("%s: %s: %s", what, st->reason, st->message)
                                : kt_xasprintf("%s: %s", what, e->msg);
    json_array_append_new(notes, json_string(s));
    free(s);
}

/* LIST gvr in ns with opts; its items (NULL on failure, noted). */
static json_t *list_items(struct kt_kube_client *c, const struct kt_kube_gvr *gvr, const char *ns,
                          const struct kt_kube_list_opts *o, json_t *notes)
{
    json_t *out = NULL, *items = NULL;
    struct kt_err err = {0};
    if (kt_kube_list(c, gvr, ns, o, &out, &err) != 0) {
        note(notes, gvr->resource, c, &err);
        return NULL;
    }
    items = json_incref(json_object_get(out, "items"));
    json_decref(out);
    return items;
}

/* Read everything and build the view. 0 + *view, or an exit code (message printed). */
static int read_view(struct kt_kube_client *c, const struct status_args *a, const char *ns,
                     json_t **view)
{
    struct kt_err err = {0};
    json_t *tj = NULL, *js = NULL, *notes = json_array();
    *view = NULL;
    if (kt_kube_get(c, &KT_GVR_TRAINJOBS, ns, a->name, &tj, &err) != 0) {
        if (err.code == KT_ENOENT) {
            fprintf(stderr,
                    "Error from server (NotFound): trainjobs.trainer.kubeflow.org \"%s\" not found "
                    "in namespace \"%s\"\n",
                    a->name, ns);
        } else {
            print_api_error(c, &err);
        }
        json_decref(notes);
        return KT_EXIT_INVALID;
    }
    if (kt_kube_get(c, &KT_GVR_JOBSETS, ns, a->name, &js, &err) != 0 && err.code != KT_ENOENT) {
        note(notes, "jobsets", c, &err);
    }
    char *sel = kt_xasprintf("jobset.sigs.k8s.io/jobset-name=%s", a->name);
    char *fsel = kt_xasprintf("involvedObject.kind=TrainJob,involvedObject.name=%s", a->name);
    struct kt_kube_list_opts lo = {.label_selector = sel}, eo = {.field_selector = fsel};
    json_t *jobs = js ? list_items(c, &GVR_JOBS, ns, &lo, notes) : NULL;
    json_t *pods = js ? list_items(c, &GVR_PODS, ns, &lo, notes) : NULL;
    json_t *events = list_items(c, &KT_GVR_EVENTS, ns, &eo, notes);
    struct cli_status_input in = {
        .trainjob = tj, .jobset = js, .jobs = jobs, .pods = pods, .events = events, .notes = notes};
    *view = cli_status_view(&in);
    free(sel);
    free(fsel);
    json_decref(tj);
    json_decref(js);
    json_decref(jobs);
    json_decref(pods);
    json_decref(events);
    json_decref(notes);
    return KT_EXIT_OK;
}

/* The view as text, JSON or YAML. Caller owns the result; free with free(). */
static char *render(const json_t *view, const char *output)
{
    if (output && strcmp(output, "json") == 0) {
        char *s = json_dumps(view, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        char *out = kt_xasprintf("%s\n", s);
        free(s);
        return out;
    }
    if (output) {
        struct kt_buf b;
        struct kt_err err = {0};
        kt_buf_init(&b, SIZE_MAX / 2);
        if (kt_yaml_emit(view, &b, &err) != 0) {
            kt_buf_release(&b);
            return kt_xstrdup("");
        }
        return kt_buf_take(&b, NULL);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cli_status_print(f, view, time(NULL));
    fclose(f);
    return text;
}

static bool finished(const json_t *view)
{
    return strncmp(cli_status_waiting(view), "finished:", 9) == 0;
}

/* Print the view; with --watch again whenever the view (not its rendering: ages change)
 * changed, until the TrainJob finishes. */
static int show(struct kt_kube_client *c, const struct status_args *a, const char *ns)
{
    char *last = NULL;
    int rc;
    for (;;) {
        json_t *view = NULL;
        rc = read_view(c, a, ns, &view);
        if (rc != KT_EXIT_OK) {
            break;
        }
        char *key = json_dumps(view, JSON_COMPACT | JSON_SORT_KEYS);
        bool done = finished(view);
        if (!last || strcmp(key, last) != 0) {
            char *out = render(view, a->output);
            fputs(last ? "\n" : "", stdout);
            fputs(out, stdout);
            fflush(stdout);
            free(out);
        }
        json_decref(view);
        free(last);
        last = key;
        if (!a->watch || done) {
            break;
        }
        struct timespec ts = {.tv_sec = WATCH_PERIOD_S};
        nanosleep(&ts, NULL);
    }
    free(last);
    return rc;
}

int cli_status(int argc, char **argv, const struct kt_framework *fw)
{
    struct status_args a = {0};
    struct kt_err err = {0};
    (void)fw;
    int rc = parse_args(argc, argv, &a);
    if (rc != KT_EXIT_OK) {
        return rc;
    }
    char *path = kubeconfig_path(a.kubeconfig);
    struct kt_kube_config *cfg = kt_kube_config_from_kubeconfig(path, a.context, &err);
    if (!cfg) {
        fprintf(stderr, "ktctl status: kubeconfig %s: %s\n", path, err.msg);
        free(path);
        return KT_EXIT_INVALID;
    }
    free(path);
    kt_kube_config_set_timeouts(cfg, 15000, 5000);
    const char *ns = a.ns && *a.ns                    ? a.ns
                     : *kt_kube_config_namespace(cfg) ? kt_kube_config_namespace(cfg)
                                                      : "default";
    struct kt_kube_client *c = kt_kube_client_new(cfg);
    rc = show(c, &a, ns);
    kt_kube_client_free(c);
    kt_kube_config_free(cfg);
    return rc;
}
