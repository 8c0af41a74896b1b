/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_yaml.c - YAML reading and writing on arbitrary bytes.
 *
 * Target: kt_yaml_parse, kt_yaml_emit, kt_yaml_line
 * Every document that parses is emitted, parsed again and must compare equal; an
 * input must never crash, leak or hang. Small caps keep each run fast. */
#include <stdint.h>
#include <stdlib.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const json_t *root)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_stream again;
    struct kt_yaml_limits lim;

    kt_yaml_limits_default(&lim);
    kt_buf_init(&b, 64u << 20);
    if (kt_yaml_emit(root, &b, &err) < 0) {
        abort();
    }
    if (kt_yaml_parse(b.data, b.len, &lim, &again, &err) < 0) {
        abort(); /* what we write must read back */
    }
    if (again.len != 1 || !kt_json_equal(again.docs[0].root, root)) {
        abort();
    }
    kt_yaml_stream_release(&again);
    kt_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kt_yaml_stream s;
    struct kt_yaml_limits lim;
    struct kt_err err = {0};
    size_t i;

    kt_mem_init();
    kt_yaml_limits_default(&lim);
    lim.max_nodes = 20000;
    (void)kt_yaml_parse((const char *)data, size, &lim, &s, &err);
    for (i = 0; i < s.len; i++) {
        (void)kt_yaml_line(&s.docs[i], "/a/0/b");
        if (s.docs[i].root) {
            round_trip(s.docs[i].root);
        }
    }
    kt_yaml_stream_release(&s);
    return 0;
}
