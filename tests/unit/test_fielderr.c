/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_fielderr.c - field errors rendered as upstream
 * (docs/internals/upstream.md#error-text). */
#include "tests/test.h"

#include <stdlib.h>

#include "common/base/fielderr.h"
#include "common/base/mem.h"

static void check_one(const struct kt_ferrs *l, const char *want)
{
    char *s = kt_ferrs_string(l);
    CHECK_EQ_STR(s, want);
    free(s);
}

static void test_types_and_values(void)
{
    struct kt_ferrs l;
    kt_ferrs_init(&l);
    kt_ferrs_add_str(&l, KT_FERR_INVALID, "spec.runtimeRef.name", "x\"y\n",
                     "must have a supported pretrained model");
    check_one(&l, "spec.runtimeRef.name: Invalid value: \"x\\\"y\\n\": must have a supported "
                  "pretrained model");
    kt_ferrs_release(&l);

    kt_ferrs_add_int(&l, KT_FERR_INVALID, "spec.trainer.numNodes", 2, "must be 1 for %s model",
                     "m");
    check_one(&l, "spec.trainer.numNodes: Invalid value: 2: must be 1 for m model");
    kt_ferrs_release(&l);

    /* Forbidden, Required and Internal never print the value. */
    kt_ferrs_add_str(&l, KT_FERR_FORBIDDEN, "spec.runtimePatches", "ignored", "nope");
    check_one(&l, "spec.runtimePatches: Forbidden: nope");
    kt_ferrs_release(&l);
    kt_ferrs_add(&l, KT_FERR_REQUIRED, "spec.x", NULL, KT_GO_ANY, "%s", "");
    check_one(&l, "spec.x: Required value");
    kt_ferrs_release(&l);
    kt_ferrs_add(&l, KT_FERR_INTERNAL, "spec.runtimePatches", NULL, KT_GO_ANY, "boom");
    check_one(&l, "spec.runtimePatches: Internal error: boom");
    kt_ferrs_release(&l);

    /* A NULL value prints null (Go's nil). */
    kt_ferrs_add(&l, KT_FERR_INVALID, "spec.trainer.resourcesPerNode", NULL, KT_GO_RESOURCES, "d");
    check_one(&l, "spec.trainer.resourcesPerNode: Invalid value: null: d");
    kt_ferrs_release(&l);
}

static void test_struct_order_and_escaping(void)
{
    struct kt_ferrs l;
    json_t *ref = json_pack("{s:s, s:s, s:s}", "kind", "TrainingRuntime", "apiGroup",
                            "trainer.kubeflow.org", "name", "x");
    json_t *env = json_pack("[{s:s, s:s}]", "value", "<a&b>", "name", "E");
    json_t *res = json_pack("{s:{s:i, s:s}}", "limits", "nvidia.com/gpu", 2, "cpu", "2.5");
    kt_ferrs_init(&l);
    kt_ferrs_add(&l, KT_FERR_INVALID, "spec.runtimeRef", ref, KT_GO_RUNTIME_REF, "d");
    check_one(&l, "spec.runtimeRef: Invalid value: "
                  "{\"name\":\"x\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":"
                  "\"TrainingRuntime\"}: d");
    kt_ferrs_release(&l);
    kt_ferrs_add(&l, KT_FERR_INVALID, "spec.trainer.env", env, KT_GO_ENV_LIST, "d");
    check_one(&l, "spec.trainer.env: Invalid value: "
                  "[{\"name\":\"E\",\"value\":\"\\u003ca\\u0026b\\u003e\"}]: d");
    kt_ferrs_release(&l);
    /* Resource maps: keys sorted, quantities as canonical strings. */
    kt_ferrs_add(&l, KT_FERR_INVALID, "r", res, KT_GO_RESOURCES, "d");
    check_one(&l, "r: Invalid value: {\"limits\":{\"cpu\":\"2500m\",\"nvidia.com/gpu\":\"2\"}}: d");
    kt_ferrs_release(&l);
    json_decref(ref);
    json_decref(env);
    json_decref(res);
}

static void test_aggregate(void)
{
    struct kt_ferrs l, copy;
    kt_ferrs_init(&l);
    kt_ferrs_init(&copy);
    check_one(&l, "");
    kt_ferrs_add_str(&l, KT_FERR_FORBIDDEN, "a", "", "x");
    kt_ferrs_add_str(&l, KT_FERR_FORBIDDEN, "a", "", "x");
    check_one(&l, "a: Forbidden: x"); /* duplicates collapse, then no brackets */
    kt_ferrs_add_int(&l, KT_FERR_INVALID, "b", 1, "y");
    check_one(&l, "[a: Forbidden: x, b: Invalid value: 1: y]");
    kt_ferrs_extend(&copy, &l);
    CHECK_EQ_INT(copy.len, 3);
    kt_ferrs_release(&l);
    kt_ferrs_release(&copy);
    kt_ferrs_release(&copy); /* release twice is fine */
}

static void test_go_quote(void)
{
    char *q = kt_go_quote("tab\there \x01 \xff é \xc2\x85");
    CHECK_EQ_STR(q, "\"tab\\there \\x01 \\xff é \\u0085\"");
    free(q);
    q = kt_go_quote("");
    CHECK_EQ_STR(q, "\"\"");
    free(q);
    json_t *str = json_string("\xe2\x80\xa8\x7f\x01");
    char *m = kt_go_marshal(str, KT_GO_ANY);
    CHECK_EQ_STR(m, "\"\\u2028\x7f\\u0001\"");
    free(m);
    json_decref(str);
    json_t *r = json_real(0.1);
    m = kt_go_marshal(r, KT_GO_ANY);
    CHECK_EQ_STR(m, "0.1");
    free(m);
    json_decref(r);
}

static void check_marshal(const char *in, enum kt_gotype t, const char *want)
{
    json_t *v = json_loads(in, JSON_DECODE_ANY, NULL);
    CHECK(v != NULL);
    char *m = kt_go_marshal(v, t);
    CHECK_EQ_STR(m, want);
    free(m);
    json_decref(v);
}

/* []corev1.Container as encoding/json prints it: declaration order from sorted input, empty
 * omitempty fields dropped, non-omitempty zeros and the resources struct always present. */
static void test_container_order(void)
{
    check_marshal("[{\"image\":\"pytorch\",\"name\":\"trainer\"}]", KT_GO_CONTAINER_LIST,
                  "[{\"name\":\"trainer\",\"image\":\"pytorch\",\"resources\":{}}]");
    check_marshal(
        "[{\"args\":[\"a\"],\"command\":[\"c\"],\"env\":[{\"value\":\"\",\"name\":\"E\"},"
        "{\"name\":\"F\",\"valueFrom\":{\"resourceFieldRef\":{\"resource\":\"limits.cpu\"}}}],"
        "\"image\":\"\",\"name\":\"n\",\"ports\":[{\"protocol\":\"TCP\",\"name\":\"p\"}],"
        "\"resources\":{\"requests\":{\"memory\":\"1024Mi\",\"cpu\":\"1\"},\"limits\":{}},"
        "\"stdin\":false,\"tty\":true,\"volumeMounts\":[{\"readOnly\":true,"
        "\"mountPath\":\"/m\",\"name\":\"v\"}],\"workingDir\":\"/w\",\"zzz\":1}]",
        KT_GO_CONTAINER_LIST,
        "[{\"name\":\"n\",\"command\":[\"c\"],\"args\":[\"a\"],\"workingDir\":\"/w\","
        "\"ports\":[{\"name\":\"p\",\"containerPort\":0,\"protocol\":\"TCP\"}],"
        "\"env\":[{\"name\":\"E\"},{\"name\":\"F\",\"valueFrom\":{\"resourceFieldRef\":"
        "{\"resource\":\"limits.cpu\",\"divisor\":\"0\"}}}],"
        "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}},"
        "\"volumeMounts\":[{\"name\":\"v\",\"readOnly\":true,\"mountPath\":\"/m\"}],"
        "\"tty\":true}]");
    /* A nil slice and a container without a name (Go prints the zero string). */
    check_marshal("null", KT_GO_CONTAINER_LIST, "null");
    check_marshal("[{}]", KT_GO_CONTAINER_LIST, "[{\"name\":\"\",\"resources\":{}}]");
    /* Negative: the untyped rendering keeps the input order and adds nothing. */
    check_marshal("[{\"image\":\"i\",\"name\":\"n\"}]", KT_GO_ANY,
                  "[{\"image\":\"i\",\"name\":\"n\"}]");
}

/* A runtimePatch down to its pod spec, every object's keys in reverse (or shuffled) order. The
 * expected text follows Go's rules by hand (and is what json.Marshal of the decoded
 * []v1alpha1.RuntimePatch prints): PodSpecPatch/ContainerPatch/Volume/Toleration field order,
 * map keys sorted, the time in UTC whole seconds, the non-omitempty zero struct "preference":{}
 * printed, a nil pointer (securityContext, runAsUser: null) and a zero creationTimestamp
 * (omitzero) left out, a present empty pointer struct ("emptyDir":{}) kept. */
static void test_patch_pod_spec_order(void)
{
    check_marshal(
        "[{\"trainingRuntimeSpec\":{\"template\":{\"spec\":{\"replicatedJobs\":[{\"template\":"
        "{\"spec\":{\"template\":{\"spec\":{\"tolerations\":[{\"operator\":\"Exists\","
        "\"key\":\"gpu\",\"effect\":\"NoSchedule\"}],\"securityContext\":null,"
        "\"nodeSelector\":{\"zone\":\"b\",\"arch\":\"amd64\"},\"containers\":["
        "{\"volumeMounts\":[{\"mountPath\":\"/m\",\"name\":\"v\"}],\"securityContext\":"
        "{\"runAsUser\":null,\"privileged\":false},\"name\":\"node\",\"env\":[{\"value\":"
        "\"x\",\"name\":\"E\"}]}],\"affinity\":{\"nodeAffinity\":{"
        "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1}]}},\"volumes\":"
        "[{\"emptyDir\":{},\"name\":\"v\"}]},\"metadata\":{\"labels\":{\"b\":\"2\",\"a\":\"1\"},"
        "\"creationTimestamp\":null}}}},\"name\":\"node\"}]},\"metadata\":{\"annotations\":"
        "{\"z\":\"<1>\"}}}},\"time\":\"2026-01-02T03:04:05.5+01:00\",\"manager\":\"m\"}]",
        KT_GO_PATCH_LIST,
        "[{\"manager\":\"m\",\"time\":\"2026-01-02T02:04:05Z\",\"trainingRuntimeSpec\":{"
        "\"template\":{\"metadata\":{\"annotations\":{\"z\":\"\\u003c1\\u003e\"}},\"spec\":{"
        "\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{"
        "\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"volumes\":[{\"name\":"
        "\"v\",\"emptyDir\":{}}],\"containers\":[{\"name\":\"node\",\"env\":[{\"name\":\"E\","
        "\"value\":\"x\"}],\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/m\"}],"
        "\"securityContext\":{\"privileged\":false}}],\"nodeSelector\":{\"arch\":\"amd64\","
        "\"zone\":\"b\"},\"affinity\":{\"nodeAffinity\":{"
        "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,\"preference\":{}}]}},"
        "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]"
        "}}}}}]}}}}]");
    /* A time already in UTC keeps its seconds; one that is not RFC 3339 prints as given. */
    check_marshal("[{\"time\":\"2026-01-02T03:04:05Z\"}]", KT_GO_PATCH_LIST,
                  "[{\"time\":\"2026-01-02T03:04:05Z\"}]");
    check_marshal("[{\"time\":\"yesterday\"}]", KT_GO_PATCH_LIST, "[{\"time\":\"yesterday\"}]");
}

/* Negative cases: keys the Go type lacks are dropped (json.Unmarshal ignores them, so upstream
 * never prints them); a value whose shape the Go type cannot hold prints as given; the untyped
 * rendering reorders nothing. */
static void test_unknown_and_misfit(void)
{
    check_marshal(
        "[{\"extra\":{\"a\":1},\"trainingRuntimeSpec\":{\"template\":{\"spec\":"
        "{\"replicatedJobs\":[{\"unknownField\":1,\"name\":\"node\"}]}}},\"manager\":\"m\"}]",
        KT_GO_PATCH_LIST,
        "[{\"manager\":\"m\",\"trainingRuntimeSpec\":{\"template\":{\"spec\":"
        "{\"replicatedJobs\":[{\"name\":\"node\"}]}}}}]");
    check_marshal("{\"kind\":\"TrainingRuntime\",\"zzz\":{\"b\":1},\"name\":\"x\"}",
                  KT_GO_RUNTIME_REF, "{\"name\":\"x\",\"kind\":\"TrainingRuntime\"}");
    check_marshal("[{\"trainingRuntimeSpec\":{\"template\":{\"spec\":{\"replicatedJobs\":"
                  "{\"z\":1,\"a\":2}}}}}]",
                  KT_GO_PATCH_LIST,
                  "[{\"trainingRuntimeSpec\":{\"template\":{\"spec\":{\"replicatedJobs\":"
                  "{\"z\":1,\"a\":2}}}}}]");
    check_marshal("{\"zzz\":1,\"name\":\"x\"}", KT_GO_ANY, "{\"zzz\":1,\"name\":\"x\"}");
}

int main(void)
{
    kt_mem_init();
    test_types_and_values();
    test_struct_order_and_escaping();
    test_aggregate();
    test_go_quote();
    test_container_order();
    test_patch_pod_spec_order();
    test_unknown_and_misfit();
    return test_report();
}
