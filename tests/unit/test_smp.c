/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_smp.c - strategic merge patch for JobSetSpec / PodSpec
 * (docs/internals/upstream.md#runtime-info-and-pod-sets). */
#include "tests/test.h"

#include <stdlib.h>

#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/framework/smp.h"

static json_t *parse(const char *s)
{
    json_t *v = kt_json_parse(s, strlen(s), NULL);
    CHECK(v != NULL);
    return v;
}

static void check_json(const json_t *got, const char *want)
{
    char *s = kt_json_dump(got);
    CHECK_EQ_STR(s, want);
    free(s);
}

#define POD(x)                                                                                     \
    "{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{\"spec\":" x    \
    "}}}}]}"

static void test_pod_spec_keys(void)
{
    json_t *spec =
        parse(POD("{\"nodeSelector\":{\"a\":\"1\",\"b\":\"2\"},"
                  "\"tolerations\":[{\"key\":\"old\"}],"
                  "\"containers\":[{\"name\":\"node\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}],"
                  "\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/d\"}]},{\"name\":\"s\"}],"
                  "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]}"));
    json_t *patch = parse(
        POD("{\"nodeSelector\":{\"b\":\"3\",\"c\":\"4\"},"
            "\"tolerations\":[{\"key\":\"new\"}],"
            "\"containers\":[{\"name\":\"s\",\"env\":[{\"name\":\"X\",\"value\":\"x\"}]},"
            "{\"name\":\"node\",\"env\":[{\"name\":\"A\",\"value\":\"2\"},{\"name\":\"B\","
            "\"value\":\"b\"}],"
            "\"volumeMounts\":[{\"name\":\"w\",\"mountPath\":\"/d\"}]}],"
            "\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"c\"}},{\"name\":\"z\"}]}"));
    kt_smp_jobset_spec(spec, patch);
    /* The patch names both containers: they come in patch order. */
    check_json(spec,
               POD("{\"nodeSelector\":{\"a\":\"1\",\"b\":\"3\",\"c\":\"4\"},"
                   "\"tolerations\":[{\"key\":\"new\"}],"
                   "\"containers\":[{\"name\":\"s\",\"env\":[{\"name\":\"X\",\"value\":\"x\"}]},"
                   "{\"name\":\"node\",\"env\":[{\"name\":\"A\",\"value\":"
                   "\"2\"},{\"name\":\"B\",\"value\":\"b\"}],"
                   "\"volumeMounts\":[{\"name\":\"w\",\"mountPath\":\"/d\"}]}],"
                   "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{},\"configMap\":{\"name\":"
                   "\"c\"}},{\"name\":\"z\"}]}"));
    json_decref(spec);
    json_decref(patch);
}

static void test_typed_patch_drops_unknown_and_empty(void)
{
    json_t *patch =
        parse(POD("{\"hostNetwork\":true,\"serviceAccountName\":\"\",\"tolerations\":[],"
                  "\"nodeSelector\":{\"a\":\"1\"},\"containers\":[{\"name\":\"node\","
                  "\"image\":\"dropped\",\"env\":[{\"name\":\"E\",\"value\":\"\"}]}]}"));
    json_t *typed = kt_smp_typed_jobset_patch(patch, false);
    /* Struct field order of PodSpecPatch: containers come before nodeSelector. */
    check_json(typed, POD("{\"containers\":[{\"name\":\"node\",\"env\":[{\"name\":\"E\"}]}],"
                          "\"nodeSelector\":{\"a\":\"1\"}}"));
    json_decref(typed);
    json_decref(patch);
    typed = kt_smp_typed_jobset_patch(NULL, false);
    check_json(typed, "{}");
    json_decref(typed);
    /* A non-object patch changes nothing. */
    json_t *spec = parse("{\"a\":1}");
    json_t *bad = json_string("x");
    kt_smp_jobset_spec(spec, bad);
    check_json(spec, "{\"a\":1}");
    json_decref(bad);
    json_decref(spec);
}

static void test_resources_and_generic(void)
{
    json_t *c = parse("{\"name\":\"node\",\"resources\":{\"requests\":{\"cpu\":\"1\"},"
                      "\"claims\":[{\"name\":\"a\"}]}}");
    json_t *r = parse("{\"limits\":{\"nvidia.com/gpu\":4},\"requests\":{\"memory\":\"1Gi\"},"
                      "\"claims\":[{\"name\":\"b\"}]}");
    kt_smp_container_resources(c, r);
    /* A claim new to the list goes before the original ones. */
    check_json(
        c, "{\"name\":\"node\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
           "\"claims\":[{\"name\":\"b\"},{\"name\":\"a\"}],\"limits\":{\"nvidia.com/gpu\":4}}}");
    json_decref(c);
    c = parse("{\"name\":\"x\"}");
    kt_smp_container_resources(c, r);
    check_json(c, "{\"name\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":4},"
                  "\"requests\":{\"memory\":\"1Gi\"},\"claims\":[{\"name\":\"b\"}]}}");
    json_decref(c);
    json_decref(r);

    json_t *dst = parse("{\"a\":{\"b\":1,\"l\":[1,2]},\"d\":1}");
    json_t *p = parse("{\"a\":{\"c\":2,\"l\":[3]},\"d\":null}");
    kt_smp_generic(dst, p);
    check_json(dst, "{\"a\":{\"b\":1,\"l\":[3],\"c\":2}}");
    json_decref(dst);
    json_decref(p);
}

static void test_replicated_jobs_by_name(void)
{
    json_t *spec = parse("{\"replicatedJobs\":[{\"name\":\"a\",\"replicas\":1},{\"name\":\"b\"}]}");
    json_t *patch = parse("{\"replicatedJobs\":[{\"name\":\"b\",\"replicas\":2},{\"name\":\"a\","
                          "\"template\":{\"metadata\":{\"labels\":{\"x\":\"y\"}}}}]}");
    kt_smp_jobset_spec(spec, patch);
    /* Patch order (upstream's runtime info restores the runtime's job order afterwards). */
    check_json(spec, "{\"replicatedJobs\":[{\"name\":\"b\",\"replicas\":2},{\"name\":\"a\","
                     "\"replicas\":1,\"template\":{\"metadata\":{\"labels\":{\"x\":\"y\"}}}}]}");
    json_decref(spec);
    json_decref(patch);
}

/* strategicpatch's order of a merged list, case by case (original + patch -> result). */
static void test_list_order(void)
{
    static const struct {
        const char *orig, *patch, *want;
    } cases[] = {
        /* a patch item new to the list goes before the remaining original items */
        {"[\"a\",\"b\"]", "[\"c\"]", "[\"c\",\"a\",\"b\"]"},
        /* an original item not in the patch stays ahead of a later original one */
        {"[\"a\",\"b\"]", "[\"b\",\"c\"]", "[\"a\",\"b\",\"c\"]"},
        {"[\"a\",\"b\",\"c\"]", "[\"b\",\"x\"]", "[\"a\",\"b\",\"x\",\"c\"]"},
        /* items the patch names keep patch order */
        {"[\"a\",\"b\"]", "[\"b\",\"a\"]", "[\"b\",\"a\"]"},
        {"[\"a\",\"b\",\"c\"]", "[\"c\",\"a\"]", "[\"b\",\"c\",\"a\"]"},
        /* nothing new, nothing reordered */
        {"[\"a\",\"b\"]", "[\"a\"]", "[\"a\",\"b\"]"},
        {"[]", "[\"a\",\"b\"]", "[\"a\",\"b\"]"},
        /* a repeated patch key merges into its first item */
        {"[\"a\"]", "[\"b\",\"b\"]", "[\"b\",\"a\"]"},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(cases); i++) {
        json_t *o = parse(cases[i].orig), *p = parse(cases[i].patch), *w = parse(cases[i].want);
        json_t *env = json_array(), *penv = json_array(), *wenv = json_array();
        size_t k;
        json_t *n;
        json_array_foreach(o, k, n)
        {
            json_array_append_new(env, json_pack("{s:O}", "name", n));
        }
        json_array_foreach(p, k, n)
        {
            json_array_append_new(penv, json_pack("{s:O}", "name", n));
        }
        json_array_foreach(w, k, n)
        {
            json_array_append_new(wenv, json_pack("{s:O}", "name", n));
        }
        json_t *c =
            json_pack("{s:s,s:o}", "name", "node", "resources", json_pack("{s:o}", "claims", env));
        json_t *r = json_pack("{s:o}", "claims", penv);
        kt_smp_container_resources(c, r);
        char *got = kt_json_dump(json_object_get(json_object_get(c, "resources"), "claims"));
        char *want = kt_json_dump(wenv);
        CHECK_EQ_STR(got, want);
        free(got);
        free(want);
        json_decref(c);
        json_decref(r);
        json_decref(wenv);
        json_decref(o);
        json_decref(p);
        json_decref(w);
    }
}

/* The provisional KEP-2782 members of a runtime patch: kept with the DynamicResourceAllocation
 * gate on, dropped (as v2.3.0 drops unknown members) with it off; resourceClaims merge by name. */
static void test_typed_patch_dra(void)
{
    json_t *patch = parse(POD("{\"resourceClaims\":[{\"name\":\"gpu\","
                              "\"resourceClaimTemplateName\":\"t2\"}],\"containers\":[{\"name\":"
                              "\"node\",\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}]}"));
    json_t *off = kt_smp_typed_jobset_patch(patch, false);
    check_json(off, POD("{\"containers\":[{\"name\":\"node\"}]}"));
    json_t *on = kt_smp_typed_jobset_patch(patch, true);
    check_json(on, POD("{\"containers\":[{\"name\":\"node\",\"resources\":{\"claims\":[{"
                       "\"name\":\"gpu\"}]}}],\"resourceClaims\":[{\"name\":\"gpu\","
                       "\"resourceClaimTemplateName\":\"t2\"}]}"));
    json_t *spec = parse(POD("{\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":"
                             "\"t1\"},{\"name\":\"nic\",\"resourceClaimName\":\"n\"}],"
                             "\"containers\":[{\"name\":\"node\"}]}"));
    kt_smp_jobset_spec(spec, on);
    check_json(spec, POD("{\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":"
                         "\"t2\"},{\"name\":\"nic\",\"resourceClaimName\":\"n\"}],"
                         "\"containers\":[{\"name\":\"node\",\"resources\":{\"claims\":[{"
                         "\"name\":\"gpu\"}]}}]}"));
    json_decref(spec);
    json_decref(on);
    json_decref(off);
    json_decref(patch);
}

int main(void)
{
    kt_mem_init();
    test_pod_spec_keys();
    test_typed_patch_drops_unknown_and_empty();
    test_typed_patch_dra();
    test_resources_and_generic();
    test_replicated_jobs_by_name();
    test_list_order();
    return test_report();
}
