/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_metrics.c - common/metrics: families, series, histogram buckets, the text
 * exposition format (escaping, number formatting), concurrent updates and the process_*
 * families read from /proc/self. */
#include "tests/test.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/mem.h"
#include "common/net/metrics.h"

static void test_counter_and_gauge(void)
{
    struct kt_metrics *m = kt_metrics_new();
    const char *names[] = {"path", "verdict"};
    struct kt_metric *c = kt_metrics_counter(m, "kt_reviews_total", "Reviews.", names, 2);
    const char *allow[] = {"/validate", "allowed"};
    const char *deny[] = {"/validate", "denied"};
    const char *never[] = {"/mutate", "allowed"};

    CHECK(kt_metrics_counter(m, "kt_reviews_total", "ignored", names, 2) == c); /* same family */
    kt_metric_inc(c, allow);
    kt_metric_inc(c, allow);
    kt_metric_add(c, deny, 0.5);
    CHECK_EQ_INT((long long)kt_metric_value(c, allow), 2);
    CHECK(kt_metric_value(c, deny) == 0.5);
    CHECK(kt_metric_value(c, never) == 0); /* absent series */
    struct kt_metric *g = kt_metrics_gauge(m, "kt_inflight", "In flight.", NULL, 0);
    kt_metric_set(g, NULL, 3);
    kt_metric_set(g, NULL, 7);
    CHECK(kt_metric_value(g, NULL) == 7);

    size_t len = 0;
    char *text = kt_metrics_expose(m, &len);
    CHECK_EQ_INT(len, strlen(text));
    CHECK_EQ_STR(text, "# HELP kt_reviews_total Reviews.\n"
                       "# TYPE kt_reviews_total counter\n"
                       "kt_reviews_total{path=\"/validate\",verdict=\"denied\"} 0.5\n"
                       "kt_reviews_total{path=\"/validate\",verdict=\"allowed\"} 2\n"
                       "# HELP kt_inflight In flight.\n"
                       "# TYPE kt_inflight gauge\n"
                       "kt_inflight 7\n");
    free(text);
    kt_metrics_free(m);
}

static void test_histogram(void)
{
    struct kt_metrics *m = kt_metrics_new();
    const double b[] = {0.1, 1};
    const char *names[] = {"path"};
    const char *v[] = {"/x"};
    struct kt_metric *h = kt_metrics_histogram(m, "lat_seconds", "Latency.", names, 1,
                                               &(struct kt_metrics_buckets){.bounds = b, .n = 2});

    kt_metric_observe(h, v, 0.05);
    kt_metric_observe(h, v, 0.1); /* le is inclusive */
    kt_metric_observe(h, v, 0.5);
    kt_metric_observe(h, v, 3);
    CHECK_EQ_INT((long long)kt_metric_value(h, v), 4);
    char *text = kt_metrics_expose(m, NULL);
    CHECK_EQ_STR(text, "# HELP lat_seconds Latency.\n"
                       "# TYPE lat_seconds histogram\n"
                       "lat_seconds_bucket{path=\"/x\",le=\"0.1\"} 2\n"
                       "lat_seconds_bucket{path=\"/x\",le=\"1\"} 3\n"
                       "lat_seconds_bucket{path=\"/x\",le=\"+Inf\"} 4\n"
                       "lat_seconds_sum{path=\"/x\"} 3.65\n"
                       "lat_seconds_count{path=\"/x\"} 4\n");
    free(text);

    size_t n = 0;
    const double *lb = kt_metrics_latency_buckets(&n);
    CHECK(n >= 10 && lb[0] == 0.0001);
    struct kt_metric *d = kt_metrics_histogram(m, "d_seconds", "", NULL, 0, NULL);
    kt_metric_observe(d, NULL, 0.0002);
    text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text, "d_seconds_bucket{le=\"0.0001\"} 0\n");
    CHECK_CONTAINS(text, "d_seconds_bucket{le=\"0.00025\"} 1\n");
    CHECK_CONTAINS(text, "d_seconds_bucket{le=\"+Inf\"} 1\n");
    CHECK_CONTAINS(text, "d_seconds_count 1\n");
    free(text);
    kt_metrics_free(m);
}

static void test_escaping(void)
{
    struct kt_metrics *m = kt_metrics_new();
    const char *names[] = {"v"};
    const char *v[] = {"a\"b\\c\nd"};
    struct kt_metric *c = kt_metrics_counter(m, "esc_total", "help with \\ and\nnewline", names, 1);

    kt_metric_inc(c, v);
    char *text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text, "# HELP esc_total help with \\\\ and\\nnewline\n");
    CHECK_CONTAINS(text, "esc_total{v=\"a\\\"b\\\\c\\nd\"} 1\n");
    free(text);
    kt_metrics_free(m);
    kt_metrics_free(NULL); /* accepts NULL */
}

struct worker {
    struct kt_metric *c;
    struct kt_metric *h;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    const char *v[] = {"x"};

    for (int i = 0; i < 10000; i++) {
        kt_metric_inc(w->c, v);
        kt_metric_observe(w->h, v, 0.001);
    }
    return NULL;
}

static void test_concurrent(void)
{
    struct kt_metrics *m = kt_metrics_new();
    const char *names[] = {"l"};
    const char *v[] = {"x"};
    struct worker w = {kt_metrics_counter(m, "c_total", "", names, 1),
                       kt_metrics_histogram(m, "h_seconds", "", names, 1, NULL)};
    pthread_t t[4];

    for (int i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, work, &w);
    }
    for (int i = 0; i < 4; i++) {
        char *text = kt_metrics_expose(m, NULL); /* exposition races with updates */
        free(text);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    CHECK_EQ_INT((long long)kt_metric_value(w.c, v), 40000);
    CHECK_EQ_INT((long long)kt_metric_value(w.h, v), 40000);
    kt_metrics_free(m);
}

/* The value of the unlabelled sample NAME in an exposition text (-1 when absent). */
static double sample(const char *text, const char *name)
{
    char key[128];
    snprintf(key, sizeof(key), "\n%s ", name);
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : -1;
}

static void test_process(void)
{
    struct kt_metrics *m = kt_metrics_new();
    char *text = kt_metrics_expose(m, NULL);
    CHECK(strstr(text, "process_") == NULL); /* only when asked for */
    free(text);
    kt_metrics_process(m);
    volatile double x = 0;
    for (long i = 0; i < 20000000; i++) { /* some CPU time to see */
        x += (double)i;
    }
    text = kt_metrics_expose(m, NULL);
    CHECK_CONTAINS(text, "# TYPE process_cpu_seconds_total counter\n");
    CHECK_CONTAINS(text, "# TYPE process_resident_memory_bytes gauge\n");
    CHECK(sample(text, "process_cpu_seconds_total") > 0);
    CHECK(sample(text, "process_resident_memory_bytes") > 1e5);
    CHECK(sample(text, "process_virtual_memory_bytes") >=
          sample(text, "process_resident_memory_bytes"));
    double start = sample(text, "process_start_time_seconds"), now = (double)time(NULL);
    CHECK(start > now - 3600 && start <= now + 1);
    CHECK(sample(text, "process_open_fds") >= 3);
    CHECK(sample(text, "process_max_fds") >= sample(text, "process_open_fds"));
    free(text);
    kt_metrics_free(m);
}

int main(void)
{
    kt_mem_init();
    test_counter_and_gauge();
    test_histogram();
    test_escaping();
    test_concurrent();
    test_process();
    return test_report();
}
