/* SPDX-License-Identifier: Apache-2.0 */
/* tests/tools/bench_render.c - in-process render benchmark (docs/benchmarks.md targets: >= 10,000
 * renders/s on one core for the torch golden case).
 *
 * Usage: bench_render CASE_DIR [SECONDS]. Reads CASE_DIR/trainjob.yaml and runtime.yaml
 * once, then renders (decode + defaults + validation + build, as `ktctl render`) in a loop
 * for SECONDS (default 2) and prints "bench: render: N renders/s". Asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/buf.h"
#include "common/framework/framework.h"
#include "common/base/mem.h"
#include "common/framework/render.h"
#include "common/base/yaml.h"
#include "common/plugins/plugins.h"

static int load(const char *path, json_t *dst)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;
    struct kt_yaml_stream s = {0};
    kt_buf_init(&b, 8u << 20);
    kt_yaml_limits_default(&lim);
    if (kt_buf_read_file(&b, path, &err) != 0 ||
        kt_yaml_parse(b.data ? b.data : "", b.len, &lim, &s, &err) != 0) {
        fprintf(stderr, "bench_render: %s: %s\n", path, err.msg);
        kt_buf_release(&b);
        kt_yaml_stream_release(&s);
        return -1;
    }
    for (size_t i = 0; i < s.len; i++) {
        if (s.docs[i].root) {
            json_array_append(dst, s.docs[i].root);
        }
    }
    kt_yaml_stream_release(&s);
    kt_buf_release(&b);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int render_once(const struct kt_framework *fw, const json_t *tj, const json_t *rts,
                       const json_t *objs)
{
    struct kt_render_opts opts = {0};
    struct kt_ferrs denial;
    struct kt_strv warnings;
    struct kt_err err = {0};
    json_t *items = json_array();
    kt_ferrs_init(&denial);
    kt_strv_init(&warnings);
    struct kt_render_req req = {.trainjob = tj, .runtimes = rts, .objects = objs, .opts = &opts};
    int rc = kt_render_trainjob(fw, &req, items, &denial, &warnings, &err);
    if (rc != 0) {
        fprintf(stderr, "bench_render: render failed: %s\n", err.msg);
    }
    json_decref(items);
    kt_ferrs_release(&denial);
    kt_strv_release(&warnings);
    return rc;
}

int main(int argc, char **argv)
{
    struct kt_framework fw;
    json_t *tjs = json_array(), *rts = json_array(), *objs = json_array();
    double secs = argc > 2 ? strtod(argv[2], NULL) : 2.0;
    long n = 0;
    int rc = 1;
    kt_mem_init();
    kt_framework_default(&fw);
    if (argc < 2) {
        fprintf(stderr, "usage: bench_render CASE_DIR [SECONDS]\n");
        goto out;
    }
    char *tpath = kt_xasprintf("%s/trainjob.yaml", argv[1]);
    char *rpath = kt_xasprintf("%s/runtime.yaml", argv[1]);
    int lrc = load(tpath, tjs) | load(rpath, rts);
    free(tpath);
    free(rpath);
    if (lrc != 0 || json_array_size(tjs) == 0) {
        goto out;
    }
    double start = now(), end = start;
    while (end - start < secs) {
        for (int i = 0; i < 100; i++, n++) {
            if (render_once(&fw, json_array_get(tjs, 0), rts, objs) != 0) {
                goto out;
            }
        }
        end = now();
    }
    printf("bench: render: %.0f renders/s\n", (double)n / (end - start));
    rc = 0;
out:
    json_decref(tjs);
    json_decref(rts);
    json_decref(objs);
    return rc;
}
