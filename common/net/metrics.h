/* SPDX-License-Identifier: Apache-2.0 */
/* common/net/metrics.h - a tiny Prometheus registry: counters, gauges and histograms with labels.
 *
 * Each metric has a small fixed set of label names; a series is created on first use of a
 * label-value tuple. Thread-safe (one mutex per registry). Renders the text exposition format
 * 0.0.4. Deliberately no summaries, no timestamps and no series expiry: label values must come
 * from small bounded sets (route paths, status codes, verdicts), never from user input. */
#ifndef KT_METRICS_H
#define KT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/version.h"

#define KT_METRICS_MAX_LABELS 6
#define KT_METRICS_MAX_BUCKETS 24
#define KT_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct kt_metrics; /* a registry; opaque */
struct kt_metric;  /* one counter, gauge or histogram family; opaque, owned by its registry */

/* Caller owns the result; free with kt_metrics_free(). Never returns NULL. */
struct kt_metrics *kt_metrics_new(void);

/* Free the registry and every metric in it. Accepts NULL. */
void kt_metrics_free(struct kt_metrics *m);

/* Get or create a counter family. name must match [a-zA-Z_:][a-zA-Z0-9_:]*, n_labels <=
 * KT_METRICS_MAX_LABELS; label names likewise. Asking again for the same name returns the
 * same family (the kind and labels must agree, else KT_ASSERT fails). Does not retain its
 * arguments. Borrowed from m; valid until kt_metrics_free(m). Never returns NULL. */
struct kt_metric *kt_metrics_counter(struct kt_metrics *m, const char *name, const char *help,
                                     const char *const *label_names, size_t n_labels);

/* Get or create a gauge family (same rules as kt_metrics_counter). */
struct kt_metric *kt_metrics_gauge(struct kt_metrics *m, const char *name, const char *help,
                                   const char *const *label_names, size_t n_labels);

/* A histogram's buckets: strictly increasing upper bounds (at most KT_METRICS_MAX_BUCKETS;
 * +Inf is implicit). Copied. */
struct kt_metrics_buckets {
    const double *bounds;
    size_t n;
};

/* Get or create a histogram family; buckets NULL = kt_metrics_latency_buckets. */
struct kt_metric *kt_metrics_histogram(struct kt_metrics *m, const char *name, const char *help,
                                       const char *const *label_names, size_t n_labels,
                                       const struct kt_metrics_buckets *buckets);

/* The default latency buckets in seconds: 0.0001 .. 1, then 2.5, 5 and 10. Borrowed from a
 * static table; valid forever. */
const double *kt_metrics_latency_buckets(size_t *n);

/* Add v to a counter's series (v >= 0) or a gauge's (any sign; label_values has one value per
 * label name, NULL when there are none). Does not retain label_values. Safe from any thread. */
void kt_metric_add(struct kt_metric *c, const char *const *label_values, double v);

/* Add 1 to a counter. */
void kt_metric_inc(struct kt_metric *c, const char *const *label_values);

/* Set a gauge's series to v. */
void kt_metric_set(struct kt_metric *g, const char *const *label_values, double v);

/* Record one observation in a histogram's series. */
void kt_metric_observe(struct kt_metric *h, const char *const *label_values, double v);

/* The current value of a counter/gauge series, or the observation count of a histogram
 * series (0 when the series does not exist yet). For tests and readiness logic. */
double kt_metric_value(struct kt_metric *mt, const char *const *label_values);

/* The version this binary reports in kubeflow_trainer_build_info and --version: kt's release
 * (common/base/version.h) unless built with -DKT_BUILD_VERSION=... */
#ifndef KT_BUILD_VERSION
#define KT_BUILD_VERSION KT_RELEASE
#endif
/* The upstream release whose API and behaviour kt implements. */
#define KT_UPSTREAM_VERSION KT_UPSTREAM_RELEASE

/* Register kubeflow_trainer_build_info{component,git_version,upstream_version,api_version} = 1
 * (component: "reconciler" or "webhook"; a static string). Does not retain component. */
void kt_metrics_build_info(struct kt_metrics *m, const char *component);

/* Register controller-runtime's process collector families (client_golang's names, Linux):
 * process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_start_time_seconds, process_open_fds, process_max_fds. Their values are read from
 * /proc/self (and getrlimit) at each kt_metrics_expose(); a read that fails leaves the last
 * values. Call once per registry. */
void kt_metrics_process(struct kt_metrics *m);

/* Render every family, in registration order, as Prometheus text exposition 0.0.4 (HELP and
 * TYPE lines, label values escaped). Caller owns the result; free with free(). *len (NULL
 * allowed) gets its length. Never returns NULL. */
char *kt_metrics_expose(struct kt_metrics *m, size_t *len);

#endif
