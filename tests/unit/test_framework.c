/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_framework.c - plugin table, build pipeline, TrainJobStatus mapping
 * (docs/internals/upstream.md#extension-points, #jobset Status, #runtime-snapshots) and the
 * runtime-info helpers (docs/internals/upstream.md#runtime-info-and-pod-sets). */
#include "tests/test.h"

#include <stdlib.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/plugins/plugins.h"
#include "common/framework/snapshot.h"

static json_t *parse(const char *s)
{
    json_t *v = kt_json_parse(s, strlen(s), NULL);
    CHECK(v != NULL);
    return v;
}

static void decode_tj(const char *s, struct kt_trainjob *tj)
{
    CHECK_OK(kt_trainjob_decode(parse(s), tj, NULL));
}

static const char *TJ = "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                        "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"u1\"},"
                        "\"spec\":{\"runtimeRef\":{\"name\":\"rt\"},\"trainer\":{\"numNodes\":2}}}";
static const char *RT =
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
    "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"rt\"},\"spec\":{"
    "\"mlPolicy\":{\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[{"
    "\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{"
    "\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"
    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"i\","
    "\"resources\":{\"requests\":{\"cpu\":\"1500m\"}}}]}}}}}]}}}}";

/* A view over one array of objects. */
static const json_t *get(void *ctx, const char *av, const char *kind, const char *ns,
                         const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach((json_t *)ctx, i, o)
    {
        if (strcmp(kt_json_str(o, "apiVersion", ""), av) == 0 &&
            strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
            strcmp(kt_json_str(json_object_get(o, "metadata"), "name", ""), name) == 0 &&
            strcmp(kt_json_str(json_object_get(o, "metadata"), "namespace", ""), ns) == 0) {
            return o;
        }
    }
    return NULL;
}

static void test_table(void)
{
    struct kt_framework fw;
    struct kt_err err = {0};
    kt_framework_default(&fw);
    CHECK_OK(kt_framework_check(&fw, &err));
    CHECK(fw.n >= 3);
    /* Torch before PlainML before JobSet (the documented fixed order). */
    CHECK(fw.plugins[0] == &kt_plugin_coscheduling);
    CHECK(fw.plugins[fw.n - 1] == &kt_plugin_jobset);

    const struct kt_plugin *two[] = {&kt_plugin_jobset, &kt_plugin_jobset};
    struct kt_framework bad = {.plugins = two, .n = 2};
    CHECK_EQ_INT(kt_framework_check(&bad, &err), -1);
    CHECK_EQ_STR(err.msg, "too many TrainJobStatus plugins are registered");

    struct kt_plugin old = kt_plugin_torch;
    old.abi = 99;
    const struct kt_plugin *one[] = {&old};
    struct kt_framework bad2 = {.plugins = one, .n = 1};
    CHECK_EQ_INT(kt_framework_check(&bad2, &err), -1);
}

static void test_runtime_key(void)
{
    struct kt_trainjob tj = {0};
    decode_tj(TJ, &tj);
    char *k = kt_runtime_key(&tj);
    CHECK_EQ_STR(k, "ClusterTrainingRuntime.trainer.kubeflow.org");
    CHECK(kt_runtime_key_supported(k));
    free(k);
    tj.runtime_ref.api_group = "";
    tj.runtime_ref.kind = "Foo";
    k = kt_runtime_key(&tj);
    CHECK_EQ_STR(k, "Foo");
    CHECK(!kt_runtime_key_supported(k));
    free(k);
    kt_trainjob_release(&tj);
}

static void test_build(void)
{
    struct kt_framework fw;
    struct kt_trainjob tj = {0};
    struct kt_runtime rt = {0};
    struct kt_err err = {0};
    json_t *objs = json_array();
    struct kt_view view = {get, objs, NULL, NULL, {NULL, NULL}};
    json_t *out = NULL;
    kt_framework_default(&fw);
    decode_tj(TJ, &tj);
    CHECK_OK(kt_runtime_decode(parse(RT), &rt, NULL));

    CHECK_OK(kt_framework_build(&fw, &tj, &rt, &view, &out, &err));
    CHECK_EQ_INT(json_array_size(out), 2);
    json_t *cm = json_array_get(out, 0), *js = json_array_get(out, 1);
    CHECK_EQ_STR(kt_json_str(cm, "kind", ""), "ConfigMap");
    CHECK_EQ_STR(kt_json_str(json_object_get(cm, "metadata"), "name", ""), "j-runtime-snapshot");
    CHECK_EQ_STR(kt_json_str(js, "kind", ""), "JobSet");
    json_t *ref = json_array_get(kt_json_path(js, "metadata.ownerReferences"), 0);
    CHECK_EQ_STR(kt_json_str(ref, "uid", ""), "u1");
    CHECK(kt_json_bool(ref, "controller", false) && kt_json_bool(ref, "blockOwnerDeletion", false));
    CHECK_EQ_STR(
        kt_json_str(kt_json_path(cm, "metadata.labels"), "trainer.kubeflow.org/trainjob-name", ""),
        "j");
    /* 1500m CPUs round up to numProcPerNode 2. */
    json_t *c =
        json_array_get(kt_json_path(json_array_get(kt_json_path(js, "spec.replicatedJobs"), 0),
                                    "template.spec.template.spec.containers"),
                       0);
    json_t *npp = kt_json_arr_find(json_object_get(c, "env"), "name", "PET_NPROC_PER_NODE", NULL);
    CHECK_EQ_STR(kt_json_str(npp, "value", ""), "2");

    /* The snapshot now exists: it is used, the runtime may be absent, nothing re-applied
     * except the JobSet. */
    json_array_append(objs, cm);
    json_decref(out);
    CHECK_OK(kt_framework_build(&fw, &tj, NULL, &view, &out, &err));
    CHECK_EQ_INT(json_array_size(out), 1);
    /* A running JobSet exists: nothing to apply. */
    json_array_append_new(objs, parse("{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":"
                                      "\"JobSet\",\"metadata\":{\"name\":\"j\",\"namespace\":"
                                      "\"ns\"},\"spec\":{\"suspend\":false}}"));
    json_decref(out);
    CHECK_OK(kt_framework_build(&fw, &tj, NULL, &view, &out, &err));
    CHECK_EQ_INT(json_array_size(out), 0);
    json_decref(out);

    /* No snapshot and no runtime: the Get error. */
    json_array_clear(objs);
    CHECK_EQ_INT(kt_framework_build(&fw, &tj, NULL, &view, &out, &err), -1);
    CHECK(out == NULL);
    CHECK_EQ_STR(err.msg, "not found ClusterTrainingRuntime specified in TrainJob: "
                          "ClusterTrainingRuntime.trainer.kubeflow.org \"rt\" not found");
    tj.runtime_ref.kind = "TrainingRuntime";
    CHECK_EQ_INT(kt_framework_build(&fw, &tj, NULL, &view, &out, &err), -1);
    CHECK_EQ_STR(err.msg, "TrainingRuntime specified in TrainJob is not found: "
                          "TrainingRuntime.trainer.kubeflow.org \"rt\" not found");
    tj.runtime_ref.kind = "Other";
    CHECK_EQ_INT(kt_framework_build(&fw, &tj, &rt, &view, &out, &err), -1);
    CHECK_EQ_STR(err.msg, "unsupported runtime: Other.trainer.kubeflow.org");

    json_decref(objs);
    kt_runtime_release(&rt);
    kt_trainjob_release(&tj);
}

static void test_status(void)
{
    struct kt_framework fw;
    struct kt_trainjob tj = {0};
    struct kt_err err = {0};
    json_t *objs = json_array();
    struct kt_view view = {get, objs, NULL, NULL, {NULL, NULL}};
    json_t *st = NULL;
    kt_framework_default(&fw);
    decode_tj("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
              "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\"},\"spec\":{\"runtimeRef\":{"
              "\"name\":\"rt\"}},\"status\":{\"conditions\":[{\"type\":\"Suspended\",\"status\":"
              "\"False\",\"reason\":\"Resumed\",\"message\":\"TrainJob is resumed\"},{\"type\":"
              "\"Complete\",\"status\":\"False\",\"lastTransitionTime\":\"t0\",\"reason\":\"r\","
              "\"message\":\"m\"}],\"jobsStatus\":[{\"name\":\"old\"}]}}",
              &tj);
    /* JobSet missing while running: error. */
    CHECK_EQ_INT(kt_framework_status(&fw, &tj, &view, &st, &err), -1);
    CHECK_EQ_STR(err.msg, "jobsets.jobset.x-k8s.io \"j\" not found");

    json_array_append_new(
        objs, parse("{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
                    "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\"},\"status\":{"
                    "\"conditions\":[{\"type\":\"StartupPolicyCompleted\",\"status\":\"True\"},"
                    "{\"type\":\"Completed\",\"status\":\"True\",\"observedGeneration\":2,"
                    "\"lastTransitionTime\":\"t1\",\"reason\":\"AllJobsCompleted\","
                    "\"message\":\"jobset completed successfully\"},{\"type\":\"Failed\","
                    "\"status\":\"False\",\"reason\":\"x\"}],\"replicatedJobsStatus\":[{"
                    "\"name\":\"node\",\"ready\":0,\"succeeded\":2,\"failed\":0,\"active\":0,"
                    "\"suspended\":0}]}}"));
    CHECK_OK(kt_framework_status(&fw, &tj, &view, &st, &err));
    char *s = kt_json_dump(st);
    CHECK_EQ_STR(s, "{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"False\",\"reason\":"
                    "\"Resumed\",\"message\":\"TrainJob is resumed\"},{\"type\":\"Complete\","
                    "\"status\":\"True\",\"lastTransitionTime\":\"t1\",\"reason\":"
                    "\"AllJobsCompleted\",\"message\":\"jobset completed successfully\","
                    "\"observedGeneration\":2}],\"jobsStatus\":[{\"name\":\"node\",\"ready\":0,"
                    "\"succeeded\":2,\"failed\":0,\"active\":0,\"suspended\":0}]}");
    free(s);
    json_decref(st);
    kt_trainjob_release(&tj);

    /* JobSet gone after completion: no change. */
    json_array_clear(objs);
    decode_tj("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
              "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\"},\"spec\":{\"runtimeRef\":{"
              "\"name\":\"rt\"}},\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":"
              "\"True\",\"reason\":\"FailedJobs\"}]}}",
              &tj);
    CHECK_OK(kt_framework_status(&fw, &tj, &view, &st, &err));
    CHECK(st == NULL);
    kt_trainjob_release(&tj);
    json_decref(objs);
}

static void test_resource_helpers(void)
{
    json_t *q = json_string("2.5");
    CHECK_EQ_INT(kt_quantity_ceil_i64(q), 3);
    json_decref(q);
    q = json_string("100m");
    CHECK_EQ_INT(kt_quantity_ceil_i64(q), 1);
    json_decref(q);
    q = json_integer(7);
    CHECK_EQ_INT(kt_quantity_ceil_i64(q), 7);
    json_decref(q);
    q = json_string("bogus");
    CHECK_EQ_INT(kt_quantity_ceil_i64(q), -1);
    json_decref(q);
    CHECK_EQ_INT(kt_quantity_ceil_i64(NULL), -1);

    json_t *r = parse("{\"requests\":{\"cpu\":\"0\",\"amd.com/GPU\":\"0\"},"
                      "\"limits\":{\"cpu\":\"3.7\",\"nvidia.com/gpu\":2}}");
    CHECK_EQ_INT(kt_resources_cpu_count(r), 4);
    CHECK_EQ_INT(kt_resources_gpu_count(r), 2);
    json_decref(r);
    r = parse("{\"requests\":{\"cpu\":\"700m\",\"example.com/Gpu\":1}}");
    CHECK_EQ_INT(kt_resources_cpu_count(r), 1);
    CHECK_EQ_INT(kt_resources_gpu_count(r), 1);
    json_decref(r);
    CHECK_EQ_INT(kt_resources_gpu_count(NULL), 0);
    CHECK_EQ_INT(kt_resources_cpu_count(NULL), 0);
}

static void test_upserts(void)
{
    json_t *c = parse("{\"name\":\"node\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}],"
                      "\"ports\":[{\"name\":\"p\",\"containerPort\":1}]}");
    json_t *e = kt_env_value("A", "2");
    kt_upsert_env(c, e);
    json_decref(e);
    json_t *p = json_pack("{s:s, s:i}", "name", "p", "containerPort", 2);
    kt_upsert_port(c, p); /* same name: replaced */
    json_decref(p);
    p = json_pack("{s:i}", "containerPort", 29500);
    kt_upsert_port(c, p);
    kt_upsert_port(c, p);
    json_decref(p);
    json_t *m = json_pack("{s:s, s:s}", "name", "v", "mountPath", "/x");
    kt_upsert_mount(c, m);
    json_decref(m);
    char *s = kt_json_dump(c);
    CHECK_EQ_STR(s, "{\"name\":\"node\",\"env\":[{\"name\":\"A\",\"value\":\"2\"}],\"ports\":[{"
                    "\"name\":\"p\",\"containerPort\":2},{\"containerPort\":29500}],"
                    "\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/x\"}]}");
    free(s);
    json_decref(c);

    json_t *in = parse("[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"valueFrom\":{"
                       "\"fileKeyRef\":{\"path\":\"p\"},\"secretKeyRef\":{\"name\":\"s\",\"key\":"
                       "\"k\"}}},{\"name\":\"C\"}]");
    json_t *out = kt_env_convert(in);
    s = kt_json_dump(out);
    CHECK_EQ_STR(s, "[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"valueFrom\":{"
                    "\"secretKeyRef\":{\"name\":\"s\",\"key\":\"k\"}}},{\"name\":\"C\","
                    "\"value\":\"\"}]");
    free(s);
    json_decref(out);
    json_decref(in);
}

static void test_single_pod_requests(void)
{
    struct kt_podset ps = {0};
    struct kt_err err = {0};
    ps.pod_spec = parse("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\","
                        "\"memory\":\"1Gi\"}}},{\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}],"
                        "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"4\"}}},"
                        "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":"
                        "\"512Mi\"}}}],\"overhead\":{\"cpu\":\"100m\"}}");
    json_t *r = kt_podset_single_pod_requests(&ps, &err);
    char *s = kt_json_dump(r);
    /* cpu: max(1.5, 4) + 0.1; memory: 1Gi + 512Mi sidecar. */
    CHECK_EQ_STR(s, "{\"cpu\":\"4100m\",\"memory\":\"1536Mi\"}");
    free(s);
    json_decref(r);
    json_decref(ps.pod_spec);
    ps.pod_spec = parse("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"x\"}}}]}");
    CHECK(kt_podset_single_pod_requests(&ps, &err) == NULL);
    json_decref(ps.pod_spec);
}

static void check_snapshot_error(const char *cm_text, const char *want)
{
    struct kt_trainjob tj = {0};
    struct kt_runtime rt = {0};
    struct kt_err err = {0};
    json_t *cm = parse(cm_text);
    decode_tj(TJ, &tj);
    CHECK_EQ_INT(kt_snapshot_read(cm, &tj, NULL, &rt, &err), -1);
    CHECK_CONTAINS(err.msg, want);
    CHECK(rt.obj == NULL);
    json_decref(cm);
    kt_trainjob_release(&tj);
}

#define OWNED "\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\",\"controller\":true}]}"

static void test_snapshot_errors(void)
{
    check_snapshot_error("{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\"}]}}",
                         "invalid runtime snapshot: a snapshot configmap exists but is owned "
                         "by another object");
    check_snapshot_error(
        "{" OWNED ",\"data\":{}}",
        "invalid runtime snapshot: snapshot ConfigMap missing \"runtime\" data key");
    check_snapshot_error("{" OWNED ",\"data\":{\"runtime\":\"a: [\"}}",
                         "invalid runtime snapshot: unable to unmarshal the snapshot: ");
    /* The full text is longer than kt_err's 256 bytes; the start is what we can pin here. */
    check_snapshot_error("{" OWNED ",\"data\":{\"runtime\":\"apiVersion: trainer.kubeflow.org/"
                         "v1alpha1\\nkind: ClusterTrainingRuntime\\nmetadata:\\n  name: other\\n"
                         "spec: {template: {}}\\n\"}}",
                         "invalid runtime snapshot: the snapshot refers to the wrong runtime: "
                         "expecting a runtime with name, api group and kind of \"rt\", "
                         "\"trainer.kubeflow.org\", \"ClusterTrainingRuntime\" but found runtime "
                         "with name, api group and kind of \"other\"");
}

int main(void)
{
    kt_mem_init();
    test_table();
    test_runtime_key();
    test_build();
    test_status();
    test_resource_helpers();
    test_upserts();
    test_single_pod_requests();
    test_snapshot_errors();
    return test_report();
}
