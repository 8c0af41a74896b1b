/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_json.c - JSON parsing and our serializer on arbitrary bytes.
 *
 * Target: kt_json_parse, kt_json_dump, kt_json_dump_go, kt_json_dump_pretty
 * Whatever parses must dump to text that parses back to an equal value (reals in
 * their shortest form must round-trip exactly). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reparse(const json_t *v, char *text)
{
    json_t *again = kt_json_parse(text, strlen(text), NULL);

    if (!again || !kt_json_equal(v, again)) {
        abort();
    }
    json_decref(again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *v;

    kt_mem_init();
    v = kt_json_parse((const char *)data, size, NULL);
    if (!v) {
        return 0;
    }
    check_reparse(v, kt_json_dump(v));
    check_reparse(v, kt_json_dump_go(v));
    check_reparse(v, kt_json_dump_pretty(v));
    (void)kt_json_path(v, "a.b");
    json_decref(v);
    return 0;
}
