/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_watch.c - the watch stream and Status decoders on arbitrary bytes.
 *
 * Target: kt_kube_watch_decode_line, kt_kube_status_decode
 * The input is fed as a watch stream (split into lines with a small cap, in two chunks so
 * lines straddle feeds) and, whole, as an error response body. Invariants: a decoded event
 * has an object; an ERROR event's Status maps to an error; strings are NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kube/kube.h"
#include "common/base/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(void *ud, const char *line, size_t len)
{
    struct kt_kube_watch_event ev;
    struct kt_err err = {0};
    size_t *count = ud;

    (*count)++;
    if (kt_kube_watch_decode_line(line, len, &ev, &err) < 0) {
        if (ev.object != NULL || err.code == KT_OK) {
            abort();
        }
        return 0;
    }
    if (!json_is_object(ev.object)) {
        abort();
    }
    if (ev.type == KT_WATCH_ERROR) {
        if (kt_kube_status_err(&ev.status, &err) != -1 || err.code == KT_OK) {
            abort();
        }
        if (strlen(ev.status.reason) >= sizeof(ev.status.reason)) {
            abort();
        }
    }
    kt_kube_watch_event_release(&ev);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kt_kube_lines lines;
    struct kt_kube_status st;
    struct kt_err err = {0};
    size_t count = 0;
    size_t half = size / 2;
    const char *p = (const char *)data;

    kt_mem_init();
    kt_kube_lines_init(&lines, 4096);
    if (kt_kube_lines_feed(&lines, p, half, on_line, &count, &err) == 0) {
        (void)kt_kube_lines_feed(&lines, p + half, size - half, on_line, &count, &err);
    }
    kt_kube_lines_release(&lines);

    (void)kt_kube_status_decode(422, p, size, &st, &err);
    if (strlen(st.message) >= sizeof(st.message) || st.code <= 0) {
        abort();
    }
    (void)kt_kube_status_err(&st, &err);
    return 0;
}
