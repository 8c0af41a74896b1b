/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_jsoncut.c - cutting metadata.managedFields from arbitrary bytes.
 *
 * Target: kt_json_cut_managed_fields, kt_json_cut_managed_fields_to
 * Never longer, both forms agree, text left alone is byte for byte the same, and when the
 * input parses the cut text parses to the input's tree with every metadata.managedFields
 * deleted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/jsoncut.h"
#include "common/base/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Delete managedFields from every object that is the value of a "metadata" member. */
static void drop_everywhere(json_t *v)
{
    const char *k;
    json_t *m;
    size_t i;

    json_object_foreach(v, k, m)
    {
        if (strcmp(k, "metadata") == 0 && json_is_object(m)) {
            json_object_del(m, "managedFields");
        }
        drop_everywhere(m);
    }
    json_array_foreach(v, i, m)
    {
        drop_everywhere(m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = kt_xmalloc(size + 1);
    char *out = kt_xmalloc(size + 1);
    size_t len = size, out_len = 0;

    kt_mem_init();
    memcpy(t, data, size);
    t[size] = '\0';
    bool cut = kt_json_cut_managed_fields(t, &len);
    bool cut_to = kt_json_cut_managed_fields_to((const char *)data, size, out, &out_len);
    if (cut != cut_to || len > size || (cut && (len != out_len || memcmp(t, out, len) != 0)) ||
        (!cut && (len != size || memcmp(t, data, size) != 0))) {
        abort();
    }
    json_t *orig = kt_json_parse((const char *)data, size, NULL);
    if (orig && cut) {
        json_t *after = kt_json_parse(t, len, NULL);
        drop_everywhere(orig);
        if (!after || !kt_json_equal(orig, after)) {
            abort();
        }
        json_decref(after);
    }
    json_decref(orig);
    free(out);
    free(t);
    return 0;
}
