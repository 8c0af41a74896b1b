/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_dra.c - Dynamic Resource Allocation (provisional KEP-2782, gate
 * DynamicResourceAllocation; docs/api.md#dynamic-resource-allocation): the claims in the built
 * pods, the device count for numProcPerNode "auto", the webhook's checks with the gate on and
 * off. Each positive case has its negative. */
#include "tests/test.h"

#include <stdlib.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/framework/dra.h"
#include "common/framework/framework.h"
#include "common/plugins/plugins.h"

static json_t *parse(const char *s)
{
    json_t *v = kt_json_parse(s, strlen(s), NULL);
    CHECK(v != NULL);
    return v;
}

#define TJ(trainer)                                                                                \
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{"       \
    "\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"u1\"},\"spec\":{\"runtimeRef\":{\"name\":"      \
    "\"rt\"},\"trainer\":" trainer "}}"

/* A torch runtime whose trainer job has the node container, a sidecar init container and a
 * runtime claim "gpu" (template t0) the node container uses with a request. */
static const char *RT =
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
    "\"metadata\":{\"name\":\"rt\"},\"spec\":{\"mlPolicy\":{\"torch\":{}},\"template\":{\"spec\":{"
    "\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{"
    "\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":{"
    "\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t0\"}],"
    "\"initContainers\":[{\"name\":\"sidecar\",\"restartPolicy\":\"Always\"}],"
    "\"containers\":[{\"name\":\"node\",\"image\":\"i\",\"resources\":{\"claims\":[{\"name\":"
    "\"gpu\",\"request\":\"r\"}]}}]}}}}}]}}}}";

/* Claim templates and a claim in namespace ns. */
static const char *OBJECTS =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{"
    "\"name\":\"four\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{"
    "\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":4}},{"
    "\"name\":\"n\",\"exactly\":{\"deviceClassName\":\"nic.example.com\",\"count\":2}}]}}}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{"
    "\"name\":\"all\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{"
    "\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu\",\"allocationMode\":\"All\"}},{"
    "\"name\":\"f\",\"firstAvailable\":[{\"name\":\"a\",\"deviceClassName\":\"gpu\"}]}]}}}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
    "\"name\":\"shared\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{\"requests\":[{"
    "\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"Big-GPU\"}}]}}}]";

static const json_t *get(void *ctx, const char *av, const char *kind, const char *ns,
                         const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach((json_t *)ctx, i, o)
    {
        const json_t *m = json_object_get(o, "metadata");
        if (strcmp(kt_json_str(o, "apiVersion", ""), av) == 0 &&
            strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
            strcmp(kt_json_str(m, "name", ""), name) == 0 &&
            strcmp(kt_json_str(m, "namespace", ""), ns) == 0) {
            return o;
        }
    }
    return NULL;
}

struct fixture {
    struct kt_trainjob tj;
    struct kt_runtime rt;
    struct kt_info info;
};

static void setup(struct fixture *f, const char *tj, bool dra)
{
    CHECK_OK(kt_trainjob_decode(parse(tj), &f->tj, NULL));
    CHECK_OK(kt_runtime_decode(parse(RT), &f->rt, NULL));
    CHECK_OK(kt_info_build_gated(&f->info, &f->rt, &f->tj, dra, NULL));
}

static void teardown(struct fixture *f)
{
    kt_info_release(&f->info);
    kt_runtime_release(&f->rt);
    kt_trainjob_release(&f->tj);
}

static char *pod_member(const struct fixture *f, const char *path)
{
    return kt_json_dump(kt_json_path(f->info.podsets[0].pod_spec, path));
}

static void check_dump(char *got, const char *want)
{
    CHECK_EQ_STR(got, want);
    free(got);
}

static void test_apply(void)
{
    struct fixture f;
    const char *tj = TJ("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                        "\"resourceClaimTemplateName\":\"four\"},{\"name\":\"nic\","
                        "\"resourceClaimName\":\"shared\",\"containers\":[\"sidecar\"]}]}");
    /* Gate on: the TrainJob's gpu replaces the runtime's (request dropped), nic goes to the
     * sidecar init container only. */
    setup(&f, tj, true);
    check_dump(pod_member(&f, "resourceClaims"),
               "[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"four\"},{\"name\":\"nic\","
               "\"resourceClaimName\":\"shared\"}]");
    check_dump(
        kt_json_dump(json_object_get(kt_podset_container(&f.info.podsets[0], "node"), "resources")),
        "{\"claims\":[{\"name\":\"gpu\"}]}");
    check_dump(kt_json_dump(json_object_get(kt_podset_init_container(&f.info.podsets[0], "sidecar"),
                                            "resources")),
               "{\"claims\":[{\"name\":\"nic\"}]}");
    teardown(&f);
    /* Gate off: the runtime's pod spec as it is. */
    setup(&f, tj, false);
    check_dump(pod_member(&f, "resourceClaims"),
               "[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t0\"}]");
    CHECK(json_object_get(kt_podset_init_container(&f.info.podsets[0], "sidecar"), "resources") ==
          NULL);
    teardown(&f);
}

static int64_t devices_of(const char *trainer)
{
    struct fixture f;
    json_t *objs = parse(OBJECTS);
    struct kt_dra_getter view = {.get = get, .ctx = objs};
    char *tj = kt_xasprintf(TJ("%s"), trainer);
    setup(&f, tj, true);
    int64_t n = kt_dra_devices(&f.info, &f.tj, &view);
    teardown(&f);
    free(tj);
    json_decref(objs);
    return n;
}

static void test_devices(void)
{
    /* Only the GPU-class request of the template counts: 4, not 6. */
    CHECK_EQ_INT(devices_of("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                            "\"resourceClaimTemplateName\":\"four\"}]}"),
                 4);
    /* A shared ResourceClaim, class matched in any case, count default 1; plus the template. */
    CHECK_EQ_INT(devices_of("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                            "\"resourceClaimTemplateName\":\"four\"},{\"name\":\"s\","
                            "\"resourceClaimName\":\"shared\"}]}"),
                 5);
    /* Negative: allocationMode All and firstAvailable count 0; so do a missing template and a
     * claim the node container does not use. */
    CHECK_EQ_INT(devices_of("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                            "\"resourceClaimTemplateName\":\"all\"}]}"),
                 0);
    CHECK_EQ_INT(devices_of("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                            "\"resourceClaimTemplateName\":\"absent\"}]}"),
                 0);
    CHECK_EQ_INT(devices_of("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                            "\"resourceClaimTemplateName\":\"four\",\"containers\":[\"sidecar\"]"
                            "}]}"),
                 0);
    /* The runtime's own claim names request "r", which template t0 (absent) lacks: 0. */
    CHECK_EQ_INT(devices_of("{\"numNodes\":1}"), 0);
}

static void test_build_nproc(void)
{
    struct kt_framework fw;
    struct kt_trainjob tj;
    struct kt_runtime rt;
    json_t *objs = parse(OBJECTS);
    struct kt_view view = {.get = get, .ctx = objs};
    kt_framework_default(&fw);
    CHECK_OK(kt_runtime_decode(parse(RT), &rt, NULL));
    CHECK_OK(kt_trainjob_decode(parse(TJ("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                                         "\"resourceClaimTemplateName\":\"four\"}]}")),
                                &tj, NULL));
    for (int on = 0; on < 2; on++) {
        json_t *out = NULL;
        fw.dra = on;
        CHECK_OK(kt_framework_build(&fw, &tj, &rt, &view, &out, NULL));
        json_t *js = json_array_get(out, json_array_size(out) - 1);
        char *s = kt_json_dump(js);
        /* Gate on: the 4 devices as PET_NPROC_PER_NODE; off: the CPU rule gives 1. */
        CHECK_CONTAINS(s, on ? "{\"name\":\"PET_NPROC_PER_NODE\",\"value\":\"4\"}"
                             : "{\"name\":\"PET_NPROC_PER_NODE\",\"value\":\"1\"}");
        free(s);
        json_decref(out);
    }
    kt_trainjob_release(&tj);
    kt_runtime_release(&rt);
    json_decref(objs);
}

static char *ferrs(const struct kt_ferrs *l)
{
    return kt_ferrs_string(l);
}

static void test_validate_gate_on(void)
{
    struct fixture f;
    struct kt_ferrs l;
    kt_ferrs_init(&l);
    setup(&f,
          TJ("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":"
             "\"four\",\"containers\":[\"node\",\"sidecar\"]}]}"),
          true);
    kt_dra_validate(&f.info, &f.tj, &l);
    CHECK_EQ_INT((long long)l.len, 0);
    teardown(&f);
    setup(&f,
          TJ("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":"
             "\"four\",\"containers\":[\"node\",\"nope\"]}]}"),
          true);
    kt_dra_validate(&f.info, &f.tj, &l);
    char *s = ferrs(&l);
    CHECK_EQ_STR(s, "spec.trainer.resourceClaimsPerNode[0].containers[1]: Invalid value: "
                    "\"nope\": no container or init container of this name in the pods of "
                    "replicated job \"node\"");
    free(s);
    teardown(&f);
    kt_ferrs_release(&l);
}

static void test_validate_gate_off(void)
{
    struct kt_ferrs l;
    kt_ferrs_init(&l);
    json_t *tj = parse(TJ("{\"resourceClaimsPerNode\":[{\"name\":\"gpu\","
                          "\"resourceClaimTemplateName\":\"four\"}]}"));
    kt_dra_validate_gate_off(tj, NULL, &l);
    char *s = ferrs(&l);
    CHECK_EQ_STR(s, "spec.trainer.resourceClaimsPerNode: Forbidden: requires the feature gate "
                    "DynamicResourceAllocation, which is disabled");
    free(s);
    kt_ferrs_release(&l);
    /* Negative: an update that keeps the stored value, and a TrainJob without the fields. */
    kt_ferrs_init(&l);
    kt_dra_validate_gate_off(tj, tj, &l);
    json_t *plain = parse(TJ("{\"numNodes\":2}"));
    kt_dra_validate_gate_off(plain, NULL, &l);
    CHECK_EQ_INT((long long)l.len, 0);
    kt_ferrs_release(&l);
    json_decref(plain);
    json_decref(tj);
}

int main(void)
{
    kt_mem_init();
    test_apply();
    test_devices();
    test_build_nproc();
    test_validate_gate_on();
    test_validate_gate_off();
    return test_report();
}
