/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_jsoncut.c - cutting metadata.managedFields from arbitrary bytes.
 *
 * Target: kt_json_cut_managed_fields, kt_json_cut_managed_fields_to, kt_json_cut_members_to,
 * kt_json_may_cut. Never longer, both forms agree, text left alone is byte for byte the same,
 * and when the input parses the cut text parses to the input's tree with every
 * metadata.managedFields deleted; the precheck finds a quoted member name exactly where a byte
 * for byte search does, and is true wherever something was cut. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json.h"
#include "common/base/jsoncut.h"
#include "common/base/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the bytes hold a \\u escape. */
static bool has_u_escape(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 1 < size; i++) {
        if (data[i] == '\\' && data[i + 1] == 'u') {
            return true;
        }
    }
    return false;
}

/* Whether the bytes hold name in quotes: the precheck's oracle. */
static bool has_quoted(const uint8_t *data, size_t size, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i + n + 2 <= size; i++) {
        if (data[i] == '"' && memcmp(data + i + 1, name, n) == 0 && data[i + n + 1] == '"') {
            return true;
        }
    }
    return false;
}

/* Delete member from every object that is the value of a `parent` member. */
static void drop_everywhere(json_t *v, const char *parent, const char *member)
{
    const char *k;
    json_t *m;
    size_t i;

    json_object_foreach(v, k, m)
    {
        if (strcmp(k, parent) == 0 && json_is_object(m)) {
            json_object_del(m, member);
        }
        drop_everywhere(m, parent, member);
    }
    json_array_foreach(v, i, m)
    {
        drop_everywhere(m, parent, member);
    }
}

/* Two rules at once: when the input parses and something was cut, the cut text parses to the
 * input's tree with both members deleted (the JobSet rule first: a managedFields inside a
 * replicatedJobs goes with it). */
static void check_rules(const uint8_t *data, size_t size, char *out)
{
    static const struct kt_json_cut_rule rules[] = {
        {"metadata", "managedFields"}, {"spec", "replicatedJobs"}, KT_JSON_CUT_END};
    size_t out_len = 0;
    /* The precheck is an exact search for a quoted member name: never a false negative. */
    bool may = kt_json_may_cut((const char *)data, size, rules);
    if (may !=
        (has_quoted(data, size, rules[0].member) || has_quoted(data, size, rules[1].member))) {
        abort();
    }
    if (!kt_json_cut_members_to((const char *)data, size, rules, out, &out_len)) {
        return;
    }
    if (!may) {
        abort();
    }
    if (out_len > size) {
        abort();
    }
    /* A key spelled with \\u escapes is not recognised by the walk (jsoncut.h) but is by the
     * parser: no tree to compare then. */
    json_t *orig = has_u_escape(data, size) ? NULL : kt_json_parse((const char *)data, size, NULL);
    if (orig) {
        json_t *after = kt_json_parse(out, out_len, NULL);
        drop_everywhere(orig, "spec", "replicatedJobs");
        drop_everywhere(orig, "metadata", "managedFields");
        if (!after || !kt_json_equal(orig, after)) {
            abort();
        }
        json_decref(after);
    }
    json_decref(orig);
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
    json_t *orig = has_u_escape(data, size) ? NULL : kt_json_parse((const char *)data, size, NULL);
    if (orig && cut) {
        json_t *after = kt_json_parse(t, len, NULL);
        drop_everywhere(orig, "metadata", "managedFields");
        if (!after || !kt_json_equal(orig, after)) {
            abort();
        }
        json_decref(after);
    }
    json_decref(orig);
    check_rules(data, size, out);
    free(out);
    free(t);
    return 0;
}
