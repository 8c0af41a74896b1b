/* SPDX-License-Identifier: Apache-2.0 */
/* cli/status_view.c - the view of `ktctl status`; see status_view.h. */
#include "cli/status_view.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/fielderr.h"
#include "common/base/json.h"
#include "common/base/mem.h"

#define RJOB_LABEL "jobset.sigs.k8s.io/replicatedjob-name"
#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

static const char *const PHASES[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
#define N_PHASES (KT_ARRAY_SIZE(PHASES))

static const json_t *meta(const json_t *o)
{
    return json_object_get(o, "metadata");
}

static const char *label(const json_t *o, const char *key)
{
    return kt_json_str(json_object_get(meta(o), "labels"), key, NULL);
}

/* The condition of type in obj's status.conditions, or NULL. Borrowed from obj. */
static const json_t *condition(const json_t *obj, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        if (strcmp(kt_json_str(c, "type", ""), type) == 0) {
            return c;
        }
    }
    return NULL;
}

static bool cond_true(const json_t *obj, const char *type)
{
    return strcmp(kt_json_str(condition(obj, type), "status", ""), "True") == 0;
}

static json_t *conditions_of(const json_t *obj)
{
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        json_array_append_new(
            out, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", kt_json_str(c, "type", ""),
                           "status", kt_json_str(c, "status", ""), "reason",
                           kt_json_str(c, "reason", ""), "message", kt_json_str(c, "message", ""),
                           "lastTransitionTime", kt_json_str(c, "lastTransitionTime", "")));
    }
    return out;
}

static json_t *trainjob_part(const json_t *tj)
{
    const json_t *m = meta(tj), *spec = json_object_get(tj, "spec");
    const json_t *ref = json_object_get(spec, "runtimeRef");
    return json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:b, s:s*}", "namespace",
                     kt_json_str(m, "namespace", ""), "name", kt_json_str(m, "name", ""), "uid",
                     kt_json_str(m, "uid", ""), "created", kt_json_str(m, "creationTimestamp", ""),
                     "runtime", "kind", kt_json_str(ref, "kind", "ClusterTrainingRuntime"), "name",
                     kt_json_str(ref, "name", ""), "suspend",
                     json_is_true(json_object_get(spec, "suspend")), "kueueQueue",
                     label(tj, KUEUE_QUEUE_LABEL));
}

/* The replicated job entry named name in rjobs, made (empty) when missing. */
static json_t *rjob(json_t *rjobs, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(rjobs, i, r)
    {
        if (strcmp(kt_json_str(r, "name", ""), name) == 0) {
            return r;
        }
    }
    json_t *pods = json_object();
    for (size_t p = 0; p < N_PHASES; p++) {
        json_object_set_new(pods, PHASES[p], json_integer(0));
    }
    r = json_pack("{s:s, s:[], s:o, s:[]}", "name", name, "jobs", "pods", pods, "pending");
    json_array_append_new(rjobs, r);
    return r;
}

static json_int_t int_of(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void add_job(json_t *rjobs, const json_t *job)
{
    const char *rn = label(job, RJOB_LABEL);
    const json_t *st = json_object_get(job, "status");
    json_array_append_new(json_object_get(rjob(rjobs, rn ? rn : "?"), "jobs"),
                          json_pack("{s:s, s:I, s:I, s:I}", "name",
                                    kt_json_str(meta(job), "name", ""), "active",
                                    int_of(st, "active"), "succeeded", int_of(st, "succeeded"),
                                    "failed", int_of(st, "failed")));
}

/* Why a Pending pod is not running: the scheduler's PodScheduled=False message, else the
 * first waiting container's reason and message. */
static void pending_reason(const json_t *pod, const char **reason, const char **message)
{
    const json_t *c = condition(pod, "PodScheduled");
    *reason = "";
    *message = "";
    if (c && strcmp(kt_json_str(c, "status", ""), "False") == 0) {
        *reason = kt_json_str(c, "reason", "Unschedulable");
        *message = kt_json_str(c, "message", "");
        return;
    }
    size_t i;
    json_t *cs;
    const json_t *st = json_object_get(pod, "status");
    const char *keys[] = {"initContainerStatuses", "containerStatuses"};
    for (size_t k = 0; k < 2; k++) {
        json_array_foreach(json_object_get(st, keys[k]), i, cs)
        {
            const json_t *w = json_object_get(json_object_get(cs, "state"), "waiting");
            if (w) {
                *reason = kt_json_str(w, "reason", "");
                *message = kt_json_str(w, "message", "");
                return;
            }
        }
    }
}

static void add_pod(json_t *rjobs, const json_t *pod)
{
    const char *rn = label(pod, RJOB_LABEL);
    json_t *r = rjob(rjobs, rn ? rn : "?");
    const char *phase = kt_json_str(json_object_get(pod, "status"), "phase", "Unknown");
    json_t *counts = json_object_get(r, "pods");
    json_t *n = json_object_get(counts, phase);
    json_object_set_new(
        counts, n ? phase : "Unknown",
        json_integer(json_integer_value(n ? n : json_object_get(counts, "Unknown")) + 1));
    if (strcmp(phase, "Pending") == 0) {
        const char *reason, *message;
        pending_reason(pod, &reason, &message);
        json_array_append_new(json_object_get(r, "pending"),
                              json_pack("{s:s, s:s, s:s}", "pod",
                                        kt_json_str(meta(pod), "name", ""), "reason", reason,
                                        "message", message));
    }
}

static json_t *replicated_jobs(const struct cli_status_input *in)
{
    json_t *rjobs = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(json_object_get(in->jobset, "spec"), "replicatedJobs"), i, o)
    {
        rjob(rjobs, kt_json_str(o, "name", "?")); /* the JobSet's order */
    }
    json_array_foreach(in->jobs, i, o)
    {
        add_job(rjobs, o);
    }
    json_array_foreach(in->pods, i, o)
    {
        add_pod(rjobs, o);
    }
    return rjobs;
}

static const char *event_time(const json_t *e)
{
    const char *t = kt_json_str(e, "lastTimestamp", NULL);
    if (!t || !*t) {
        t = kt_json_str(e, "eventTime", NULL);
    }
    return t && *t ? t : kt_json_str(meta(e), "creationTimestamp", "");
}

static int by_time(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strcmp(event_time(x), event_time(y)); /* RFC 3339 UTC sorts as text */
}

static json_t *events_of(const json_t *events)
{
    size_t n = json_array_size(events), from;
    json_t **v = kt_xcalloc(n ? n : 1, sizeof(*v));
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        v[i] = json_array_get(events, i);
    }
    qsort(v, n, sizeof(*v), by_time);
    from = n > CLI_STATUS_EVENTS_MAX ? n - CLI_STATUS_EVENTS_MAX : 0;
    for (size_t i = from; i < n; i++) {
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:I}", "time", event_time(v[i]),
                                             "type", kt_json_str(v[i], "type", ""), "reason",
                                             kt_json_str(v[i], "reason", ""), "message",
                                             kt_json_str(v[i], "message", ""), "count",
                                             int_of(v[i], "count") ? int_of(v[i], "count") : 1));
    }
    free(v);
    return out;
}

static json_t *jobset_part(const json_t *js)
{
    if (!js) {
        return json_null();
    }
    return json_pack("{s:s, s:b, s:o}", "name", kt_json_str(meta(js), "name", ""), "suspended",
                     json_is_true(json_object_get(json_object_get(js, "spec"), "suspend")),
                     "conditions", conditions_of(js));
}

static bool is_initializer(const char *name)
{
    size_t n = strlen(name), k = strlen("-initializer");
    return n > k && strcmp(name + n - k, "-initializer") == 0;
}

static json_int_t pods_in(const json_t *r, const char *phase)
{
    return json_integer_value(json_object_get(json_object_get(r, "pods"), phase));
}

/* The first pending pod with a message (scheduler's first), or NULL. */
static const json_t *first_pending(const json_t *rjobs, bool scheduler)
{
    size_t i, j;
    json_t *r, *p;
    json_array_foreach(rjobs, i, r)
    {
        json_array_foreach(json_object_get(r, "pending"), j, p)
        {
            bool sched = strcmp(kt_json_str(p, "reason", ""), "Unschedulable") == 0 ||
                         strcmp(kt_json_str(p, "reason", ""), "SchedulingGated") == 0;
            if (sched == scheduler && *kt_json_str(p, scheduler ? "message" : "reason", "")) {
                return p;
            }
        }
    }
    return NULL;
}

/* "initializer NAME running" when an initializer's Job has not finished. */
static char *initializer_running(const json_t *rjobs)
{
    size_t i;
    json_t *r;
    json_array_foreach(rjobs, i, r)
    {
        const char *name = kt_json_str(r, "name", "");
        if (is_initializer(name) && (pods_in(r, "Running") > 0 || pods_in(r, "Pending") > 0) &&
            pods_in(r, "Succeeded") == 0) {
            return kt_xasprintf("initializer %s running", name);
        }
    }
    return NULL;
}

static char *finished_line(const json_t *tj)
{
    const char *type = cond_true(tj, "Failed") ? "Failed" : "Complete";
    const json_t *c = condition(tj, type);
    const char *reason = kt_json_str(c, "reason", ""), *msg = kt_json_str(c, "message", "");
    return kt_xasprintf("finished: %s%s%s%s%s", type, *reason || *msg ? " \xe2\x80\x94 " : "",
                        reason, *reason && *msg ? ": " : "", msg);
}

static char *pods_line(const json_t *rjobs)
{
    json_int_t running = 0, total = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rjobs, i, r)
    {
        running += pods_in(r, "Running");
        for (size_t p = 0; p < N_PHASES; p++) {
            total += pods_in(r, PHASES[p]);
        }
    }
    const json_t *p = first_pending(rjobs, false);
    if (total == 0) {
        return kt_xstrdup("waiting for pods: the JobSet has no pods yet");
    }
    if (running == 0 && p) {
        return kt_xasprintf("waiting for pods to start: %s %s", kt_json_str(p, "pod", ""),
                            kt_json_str(p, "reason", ""));
    }
    return kt_xasprintf("running: %lld/%lld pods Running", (long long)running, (long long)total);
}

static char *waiting_line(const struct cli_status_input *in, const json_t *rjobs)
{
    const json_t *tj = in->trainjob;
    if (cond_true(tj, "Failed") || cond_true(tj, "Complete")) {
        return finished_line(tj);
    }
    if (cond_true(tj, "Suspended") ||
        json_is_true(json_object_get(json_object_get(tj, "spec"), "suspend"))) {
        return kt_xstrdup(label(tj, KUEUE_QUEUE_LABEL) ? "suspended by Kueue" : "suspended");
    }
    if (cond_true(tj, "ResourcesCreationFailed")) {
        return kt_xasprintf("waiting for resources: %s",
                            kt_json_str(condition(tj, "ResourcesCreationFailed"), "message", ""));
    }
    if (!in->jobset) {
        return kt_xstrdup("waiting for the JobSet to be created");
    }
    const json_t *p = first_pending(rjobs, true);
    if (p) {
        return kt_xasprintf("waiting for scheduling: %s", kt_json_str(p, "message", ""));
    }
    char *init = initializer_running(rjobs);
    return init ? init : pods_line(rjobs);
}

json_t *cli_status_view(const struct cli_status_input *in)
{
    const json_t *st = json_object_get(in->trainjob, "status");
    json_t *rjobs = replicated_jobs(in);
    char *waiting = waiting_line(in, rjobs);
    json_t *v = json_pack(
        "{s:o, s:o, s:s*, s:s*, s:s, s:o, s:o, s:o, s:o}", "trainJob", trainjob_part(in->trainjob),
        "conditions", conditions_of(in->trainjob), "startTime", kt_json_str(st, "startTime", NULL),
        "completionTime", kt_json_str(st, "completionTime", NULL), "waitingFor", waiting, "jobSet",
        jobset_part(in->jobset), "replicatedJobs", rjobs, "events", events_of(in->events), "notes",
        in->notes ? json_deep_copy(in->notes) : json_array());
    free(waiting);
    return v;
}

const char *cli_status_waiting(const json_t *view)
{
    return kt_json_str(view, "waitingFor", "");
}

/* "5s", "3m", "2h", "4d"; "?" when t is unknown. */
static void age(char *out, size_t n, const char *t, time_t now)
{
    long long at = 0;
    long ns = 0;
    long long s = kt_go_time_parse(t, &at, &ns) ? (long long)now - at : -1;
    if (s < 0) {
        snprintf(out, n, "?");
    } else if (s < 120) {
        snprintf(out, n, "%llds", s);
    } else if (s < 7200) {
        snprintf(out, n, "%lldm", s / 60);
    } else if (s < 172800) {
        snprintf(out, n, "%lldh", s / 3600);
    } else {
        snprintf(out, n, "%lldd", s / 86400);
    }
}

static void print_conditions(FILE *f, const json_t *conds, time_t now, const char *indent)
{
    size_t i;
    json_t *c;
    char a[32];
    json_array_foreach(conds, i, c)
    {
        age(a, sizeof(a), kt_json_str(c, "lastTransitionTime", ""), now);
        fprintf(f, "%s%-24s %-6s %-5s %s%s%s\n", indent, kt_json_str(c, "type", ""),
                kt_json_str(c, "status", ""), a, kt_json_str(c, "reason", ""),
                *kt_json_str(c, "message", "") ? ": " : "", kt_json_str(c, "message", ""));
    }
}

static void print_rjob(FILE *f, const json_t *r)
{
    size_t i;
    json_t *o;
    fprintf(f, "  %s: pods", kt_json_str(r, "name", ""));
    for (size_t p = 0; p < N_PHASES; p++) {
        if (pods_in(r, PHASES[p]) > 0 || p < 4) {
            fprintf(f, " %s %lld", PHASES[p], (long long)pods_in(r, PHASES[p]));
        }
    }
    fprintf(f, "\n");
    json_array_foreach(json_object_get(r, "jobs"), i, o)
    {
        fprintf(f, "    Job %s: active %lld, succeeded %lld, failed %lld\n",
                kt_json_str(o, "name", ""), (long long)int_of(o, "active"),
                (long long)int_of(o, "succeeded"), (long long)int_of(o, "failed"));
    }
    json_array_foreach(json_object_get(r, "pending"), i, o)
    {
        const char *msg = kt_json_str(o, "message", "");
        fprintf(f, "    Pending pod %s: %s%s%s\n", kt_json_str(o, "pod", ""),
                *kt_json_str(o, "reason", "") ? kt_json_str(o, "reason", "") : "waiting",
                *msg ? ": " : "", msg);
    }
}

void cli_status_print(FILE *f, const json_t *view, time_t now)
{
    const json_t *tj = json_object_get(view, "trainJob"), *js = json_object_get(view, "jobSet");
    const json_t *rt = json_object_get(tj, "runtime");
    size_t i;
    json_t *o;
    char a[32];
    age(a, sizeof(a), kt_json_str(tj, "created", ""), now);
    fprintf(f, "TrainJob:  %s/%s (created %s ago)\n", kt_json_str(tj, "namespace", ""),
            kt_json_str(tj, "name", ""), a);
    fprintf(f, "Runtime:   %s %s\n", kt_json_str(rt, "kind", ""), kt_json_str(rt, "name", ""));
    fprintf(f, "Status:    %s\n", cli_status_waiting(view));
    if (kt_json_str(view, "startTime", NULL)) {
        fprintf(f, "Started:   %s\n", kt_json_str(view, "startTime", ""));
    }
    if (kt_json_str(view, "completionTime", NULL)) {
        fprintf(f, "Finished:  %s\n", kt_json_str(view, "completionTime", ""));
    }
    fprintf(f, "Conditions:%s\n",
            json_array_size(json_object_get(view, "conditions")) ? "" : " none");
    print_conditions(f, json_object_get(view, "conditions"), now, "  ");
    if (json_is_null(js) || !js) {
        fprintf(f, "JobSet:    none\n");
    } else {
        fprintf(f, "JobSet:    %s%s\n", kt_json_str(js, "name", ""),
                json_is_true(json_object_get(js, "suspended")) ? " (suspended)" : "");
        print_conditions(f, json_object_get(js, "conditions"), now, "  ");
    }
    if (json_array_size(json_object_get(view, "replicatedJobs"))) {
        fprintf(f, "Replicated jobs:\n");
    }
    json_array_foreach(json_object_get(view, "replicatedJobs"), i, o)
    {
        print_rjob(f, o);
    }
    fprintf(f, "Events:%s\n", json_array_size(json_object_get(view, "events")) ? "" : " none");
    json_array_foreach(json_object_get(view, "events"), i, o)
    {
        age(a, sizeof(a), kt_json_str(o, "time", ""), now);
        fprintf(f, "  %-5s %-7s %s: %s\n", a, kt_json_str(o, "type", ""),
                kt_json_str(o, "reason", ""), kt_json_str(o, "message", ""));
    }
    json_array_foreach(json_object_get(view, "notes"), i, o)
    {
        fprintf(f, "Note: %s\n", json_string_value(o));
    }
}
