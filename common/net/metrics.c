/* SPDX-License-Identifier: Apache-2.0 */
/* common/net/metrics.c - the Prometheus registry behind metrics.h.
 *
 * Families live in a registration-ordered list, series in a per-family list looked up by
 * comparing label values (label sets are tiny). One mutex guards the whole registry: an
 * update is a few comparisons and an add, far cheaper than the request it measures. The
 * process_* families are read from /proc/self when rendered (Linux only, like client_golang's
 * process collector on Linux). */
#include "common/net/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/base/buf.h"
#include "common/base/err.h"
#include "common/base/mem.h"

enum kind { KIND_COUNTER, KIND_GAUGE, KIND_HISTOGRAM };

struct series {
    struct series *next;
    char *values[KT_METRICS_MAX_LABELS];
    double value;      /* counter or gauge value; histogram sum */
    uint64_t count;    /* histogram observation count */
    uint64_t *buckets; /* histogram: per-bucket (non-cumulative) counts, n_buckets + 1 */
};

struct kt_metric {
    struct kt_metric *next;
    struct kt_metrics *reg;
    enum kind kind;
    char *name;
    char *help;
    size_t n_labels;
    char *labels[KT_METRICS_MAX_LABELS];
    size_t n_buckets;
    double bounds[KT_METRICS_MAX_BUCKETS];
    struct series *series; /* newest first; exposition sorts nothing */
};

enum { PROC_CPU, PROC_RSS, PROC_VSIZE, PROC_START, PROC_FDS, PROC_MAXFDS, PROC_N };

struct kt_metrics {
    pthread_mutex_t mu;
    struct kt_metric *head;
    struct kt_metric *tail;
    struct kt_metric *proc[PROC_N]; /* kt_metrics_process(); NULL until then */
};

static const double latency_buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                         0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

const double *kt_metrics_latency_buckets(size_t *n)
{
    *n = KT_ARRAY_SIZE(latency_buckets);
    return latency_buckets;
}

struct kt_metrics *kt_metrics_new(void)
{
    struct kt_metrics *m = kt_xcalloc(1, sizeof(*m));

    pthread_mutex_init(&m->mu, NULL);
    return m;
}

static void metric_free(struct kt_metric *mt)
{
    struct series *s = mt->series;

    while (s) {
        struct series *next = s->next;
        for (size_t i = 0; i < mt->n_labels; i++) {
            free(s->values[i]);
        }
        free(s->buckets);
        free(s);
        s = next;
    }
    for (size_t i = 0; i < mt->n_labels; i++) {
        free(mt->labels[i]);
    }
    free(mt->name);
    free(mt->help);
    free(mt);
}

void kt_metrics_free(struct kt_metrics *m)
{
    if (!m) {
        return;
    }
    struct kt_metric *mt = m->head;
    while (mt) {
        struct kt_metric *next = mt->next;
        metric_free(mt);
        mt = next;
    }
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static bool name_ok(const char *s, bool colon)
{
    if (!s || !*s || (*s >= '0' && *s <= '9')) {
        return false;
    }
    for (; *s; s++) {
        bool alpha = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z');
        bool digit = *s >= '0' && *s <= '9';
        if (!alpha && !digit && *s != '_' && !(colon && *s == ':')) {
            return false;
        }
    }
    return true;
}

static struct kt_metric *find_family(struct kt_metrics *m, const char *name)
{
    for (struct kt_metric *mt = m->head; mt; mt = mt->next) {
        if (strcmp(mt->name, name) == 0) {
            return mt;
        }
    }
    return NULL;
}

/* A family to find or create: all borrowed, copied when created. */
struct family_desc {
    enum kind kind;
    const char *name, *help;
    const char *const *labels;
    size_t n_labels;
    struct kt_metrics_buckets buckets; /* histograms */
};

static struct kt_metric *family_get(struct kt_metrics *m, const struct family_desc *d)
{
    enum kind kind = d->kind;
    const char *name = d->name, *help = d->help;
    const char *const *labels = d->labels;
    size_t n_labels = d->n_labels, n_bounds = d->buckets.n;
    const double *bounds = d->buckets.bounds;
    KT_ASSERT(name_ok(name, true));
    KT_ASSERT(n_labels <= KT_METRICS_MAX_LABELS && n_bounds <= KT_METRICS_MAX_BUCKETS);
    pthread_mutex_lock(&m->mu);
    struct kt_metric *mt = find_family(m, name);
    if (mt) {
        pthread_mutex_unlock(&m->mu);
        KT_ASSERT(mt->kind == kind && mt->n_labels == n_labels);
        return mt;
    }
    mt = kt_xcalloc(1, sizeof(*mt));
    mt->reg = m;
    mt->kind = kind;
    mt->name = kt_xstrdup(name);
    mt->help = kt_xstrdup(help ? help : "");
    mt->n_labels = n_labels;
    for (size_t i = 0; i < n_labels; i++) {
        KT_ASSERT(name_ok(labels[i], false));
        mt->labels[i] = kt_xstrdup(labels[i]);
    }
    mt->n_buckets = n_bounds;
    for (size_t i = 0; i < n_bounds; i++) {
        KT_ASSERT(i == 0 || bounds[i] > bounds[i - 1]);
        mt->bounds[i] = bounds[i];
    }
    if (m->tail) {
        m->tail->next = mt;
    } else {
        m->head = mt;
    }
    m->tail = mt;
    pthread_mutex_unlock(&m->mu);
    return mt;
}

struct kt_metric *kt_metrics_counter(struct kt_metrics *m, const char *name, const char *help,
                                     const char *const *label_names, size_t n_labels)
{
    return family_get(m, &(struct family_desc){.kind = KIND_COUNTER,
                                               .name = name,
                                               .help = help,
                                               .labels = label_names,
                                               .n_labels = n_labels});
}

struct kt_metric *kt_metrics_gauge(struct kt_metrics *m, const char *name, const char *help,
                                   const char *const *label_names, size_t n_labels)
{
    return family_get(m, &(struct family_desc){.kind = KIND_GAUGE,
                                               .name = name,
                                               .help = help,
                                               .labels = label_names,
                                               .n_labels = n_labels});
}

struct kt_metric *kt_metrics_histogram(struct kt_metrics *m, const char *name, const char *help,
                                       const char *const *label_names, size_t n_labels,
                                       const struct kt_metrics_buckets *buckets)
{
    struct family_desc d = {.kind = KIND_HISTOGRAM,
                            .name = name,
                            .help = help,
                            .labels = label_names,
                            .n_labels = n_labels};
    if (buckets) {
        d.buckets = *buckets;
    } else {
        d.buckets.bounds = kt_metrics_latency_buckets(&d.buckets.n);
    }
    return family_get(m, &d);
}

/* Whether series_get adds a series it does not hold. */
enum series_mode { SERIES_FIND, SERIES_FIND_OR_ADD };

/* Find (or with SERIES_FIND_OR_ADD create) the series; the registry mutex must be held.
 * SERIES_FIND may return NULL. */
static struct series *series_get(struct kt_metric *mt, const char *const *values,
                                 enum series_mode mode)
{
    for (struct series *s = mt->series; s; s = s->next) {
        size_t i = 0;
        while (i < mt->n_labels && strcmp(s->values[i], values[i]) == 0) {
            i++;
        }
        if (i == mt->n_labels) {
            return s;
        }
    }
    if (mode == SERIES_FIND) {
        return NULL;
    }
    struct series *s = kt_xcalloc(1, sizeof(*s));
    for (size_t i = 0; i < mt->n_labels; i++) {
        s->values[i] = kt_xstrdup(values[i] ? values[i] : "");
    }
    if (mt->kind == KIND_HISTOGRAM) {
        s->buckets = kt_xcalloc(mt->n_buckets + 1, sizeof(uint64_t));
    }
    s->next = mt->series;
    mt->series = s;
    return s;
}

void kt_metric_add(struct kt_metric *c, const char *const *label_values, double v)
{
    KT_ASSERT(c->kind != KIND_HISTOGRAM);
    pthread_mutex_lock(&c->reg->mu);
    series_get(c, label_values, SERIES_FIND_OR_ADD)->value += v;
    pthread_mutex_unlock(&c->reg->mu);
}

void kt_metric_inc(struct kt_metric *c, const char *const *label_values)
{
    kt_metric_add(c, label_values, 1);
}

void kt_metric_set(struct kt_metric *g, const char *const *label_values, double v)
{
    KT_ASSERT(g->kind == KIND_GAUGE);
    pthread_mutex_lock(&g->reg->mu);
    series_get(g, label_values, SERIES_FIND_OR_ADD)->value = v;
    pthread_mutex_unlock(&g->reg->mu);
}

void kt_metric_observe(struct kt_metric *h, const char *const *label_values, double v)
{
    KT_ASSERT(h->kind == KIND_HISTOGRAM);
    size_t b = 0;
    while (b < h->n_buckets && v > h->bounds[b]) {
        b++;
    }
    pthread_mutex_lock(&h->reg->mu);
    struct series *s = series_get(h, label_values, SERIES_FIND_OR_ADD);
    s->buckets[b]++;
    s->count++;
    s->value += v;
    pthread_mutex_unlock(&h->reg->mu);
}

double kt_metric_value(struct kt_metric *mt, const char *const *label_values)
{
    double v = 0;

    pthread_mutex_lock(&mt->reg->mu);
    struct series *s = series_get(mt, label_values, SERIES_FIND);
    if (s) {
        v = mt->kind == KIND_HISTOGRAM ? (double)s->count : s->value;
    }
    pthread_mutex_unlock(&mt->reg->mu);
    return v;
}

/* Shortest of %.15g / %.17g that round-trips; +Inf, -Inf and NaN as Prometheus spells them. */
static void fmt_double(char *out, size_t n, double v)
{
    if (isinf(v)) {
        snprintf(out, n, "%s", v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (isnan(v)) {
        snprintf(out, n, "NaN");
        return;
    }
    snprintf(out, n, "%.15g", v);
    if (strtod(out, NULL) != v) {
        snprintf(out, n, "%.17g", v);
    }
}

/* Append text with backslash, newline and (for label values) double quote escaped. */
static void put_escaped(struct kt_buf *b, const char *s, bool quote)
{
    for (; *s; s++) {
        const char *rep = NULL;
        if (*s == '\\') {
            rep = "\\\\";
        } else if (*s == '\n') {
            rep = "\\n";
        } else if (quote && *s == '"') {
            rep = "\\\"";
        }
        int rc = rep ? kt_buf_puts(b, rep, NULL) : kt_buf_append(b, s, 1, NULL);
        KT_ASSERT(rc == 0);
    }
}

static void put(struct kt_buf *b, const char *s)
{
    int rc = kt_buf_puts(b, s, NULL);
    KT_ASSERT(rc == 0);
}

/* `name{l1="v1",l2="v2"[,le="x"]} value`. */
static void put_sample(struct kt_buf *b, const struct kt_metric *mt, const struct series *s,
                       const char *suffix, const char *le, double v)
{
    char num[40];

    put(b, mt->name);
    put(b, suffix);
    if (mt->n_labels > 0 || le) {
        put(b, "{");
        for (size_t i = 0; i < mt->n_labels; i++) {
            put(b, i > 0 ? "," : "");
            put(b, mt->labels[i]);
            put(b, "=\"");
            put_escaped(b, s->values[i], true);
            put(b, "\"");
        }
        if (le) {
            put(b, mt->n_labels > 0 ? ",le=\"" : "le=\"");
            put(b, le);
            put(b, "\"");
        }
        put(b, "}");
    }
    fmt_double(num, sizeof(num), v);
    put(b, " ");
    put(b, num);
    put(b, "\n");
}

static void put_histogram(struct kt_buf *b, const struct kt_metric *mt, const struct series *s)
{
    char le[40];
    uint64_t cum = 0;

    for (size_t i = 0; i <= mt->n_buckets; i++) {
        cum += s->buckets[i];
        fmt_double(le, sizeof(le), i < mt->n_buckets ? mt->bounds[i] : INFINITY);
        put_sample(b, mt, s, "_bucket", le, (double)cum);
    }
    put_sample(b, mt, s, "_sum", NULL, s->value);
    put_sample(b, mt, s, "_count", NULL, (double)s->count);
}

static const char *kind_name(enum kind k)
{
    switch (k) {
    case KIND_COUNTER:
        return "counter";
    case KIND_GAUGE:
        return "gauge";
    case KIND_HISTOGRAM:
        return "histogram";
    default:
        return "untyped";
    }
}

/* Read a small /proc file into buf (NUL-terminated); 0 or -1. */
static int read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* Fields 14 (utime), 15 (stime), 22 (starttime), 23 (vsize) and 24 (rss) of /proc/self/stat,
 * counted after the command name, which may hold spaces and parentheses (proc(5)). */
static int parse_stat(const char *text, unsigned long long out[5])
{
    static const int want[] = {14, 15, 22, 23, 24};
    const char *p = strrchr(text, ')');
    size_t k = 0;
    if (!p) {
        return -1;
    }
    p++;
    for (int field = 3; *p && k < 5; field++) {
        while (*p == ' ') {
            p++;
        }
        if (field == want[k]) {
            char *end;
            errno = 0;
            out[k] = strtoull(p, &end, 10);
            if (errno != 0 || end == p) {
                return -1;
            }
            k++;
        }
        while (*p && *p != ' ') {
            p++;
        }
    }
    return k == 5 ? 0 : -1;
}

static double boot_time(void)
{
    char buf[8192];
    if (read_small("/proc/stat", buf, sizeof(buf)) < 0) {
        return 0;
    }
    const char *p = strstr(buf, "\nbtime ");
    return p ? strtod(p + 7, NULL) : 0;
}

static double open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    double n = 0;
    if (!d) {
        return -1;
    }
    for (const struct dirent *e = readdir(d); e; e = readdir(d)) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

/* The label values of an unlabelled series (never read: n_labels is 0). */
static const char *const no_labels[] = {""};

static void set_value(struct kt_metric *mt, double v)
{
    pthread_mutex_lock(&mt->reg->mu);
    series_get(mt, no_labels, SERIES_FIND_OR_ADD)->value = v;
    pthread_mutex_unlock(&mt->reg->mu);
}

static void process_refresh(struct kt_metrics *m)
{
    char buf[1024];
    unsigned long long st[5];
    double tick = (double)sysconf(_SC_CLK_TCK), page = (double)sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    if (read_small("/proc/self/stat", buf, sizeof(buf)) == 0 && parse_stat(buf, st) == 0 &&
        tick > 0) {
        set_value(m->proc[PROC_CPU], (double)(st[0] + st[1]) / tick);
        set_value(m->proc[PROC_VSIZE], (double)st[3]);
        set_value(m->proc[PROC_RSS], (double)st[4] * page);
        if (kt_metric_value(m->proc[PROC_START], no_labels) == 0) {
            set_value(m->proc[PROC_START], boot_time() + (double)st[2] / tick);
        }
    }
    double fds = open_fds();
    if (fds >= 0) {
        set_value(m->proc[PROC_FDS], fds);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        set_value(m->proc[PROC_MAXFDS], (double)rl.rlim_cur);
    }
}

void kt_metrics_process(struct kt_metrics *m)
{
    m->proc[PROC_CPU] =
        kt_metrics_counter(m, "process_cpu_seconds_total",
                           "Total user and system CPU time spent in seconds.", NULL, 0);
    m->proc[PROC_RSS] = kt_metrics_gauge(m, "process_resident_memory_bytes",
                                         "Resident memory size in bytes.", NULL, 0);
    m->proc[PROC_VSIZE] = kt_metrics_gauge(m, "process_virtual_memory_bytes",
                                           "Virtual memory size in bytes.", NULL, 0);
    m->proc[PROC_START] =
        kt_metrics_gauge(m, "process_start_time_seconds",
                         "Start time of the process since unix epoch in seconds.", NULL, 0);
    m->proc[PROC_FDS] =
        kt_metrics_gauge(m, "process_open_fds", "Number of open file descriptors.", NULL, 0);
    m->proc[PROC_MAXFDS] =
        kt_metrics_gauge(m, "process_max_fds", "Maximum number of open file descriptors.", NULL, 0);
}

char *kt_metrics_expose(struct kt_metrics *m, size_t *len)
{
    struct kt_buf b;

    if (m->proc[PROC_CPU]) {
        process_refresh(m);
    }
    kt_buf_init(&b, SIZE_MAX / 2);
    pthread_mutex_lock(&m->mu);
    for (const struct kt_metric *mt = m->head; mt; mt = mt->next) {
        put(&b, "# HELP ");
        put(&b, mt->name);
        put(&b, " ");
        put_escaped(&b, mt->help, false);
        put(&b, "\n# TYPE ");
        put(&b, mt->name);
        put(&b, " ");
        put(&b, kind_name(mt->kind));
        put(&b, "\n");
        for (const struct series *s = mt->series; s; s = s->next) {
            if (mt->kind == KIND_HISTOGRAM) {
                put_histogram(&b, mt, s);
            } else {
                put_sample(&b, mt, s, "", NULL, s->value);
            }
        }
    }
    pthread_mutex_unlock(&m->mu);
    return kt_buf_take(&b, len);
}

void kt_metrics_build_info(struct kt_metrics *m, const char *component)
{
    static const char *const names[] = {"component", "git_version", "upstream_version",
                                        "api_version"};
    const char *values[] = {component, KT_BUILD_VERSION, KT_UPSTREAM_VERSION,
                            "trainer.kubeflow.org/v1alpha1"};
    struct kt_metric *g = kt_metrics_gauge(
        m, "kubeflow_trainer_build_info",
        "Build metadata of this Kubeflow Trainer (kt) daemon; always 1.", names, 4);
    kt_metric_set(g, values, 1);
}
