/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_godecode.c - a TrainJob that does not decode into upstream's Go types gets the
 * decoder's own text (each expectation measured against upstream v2.3.0's webhook by
 * tests/parity/oracle.sh, class decode). */
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/base/err.h"
#include "common/base/godecode.h"
#include "common/base/gotypes.h"
#include "common/base/json.h"
#include "common/base/mem.h"

#define PRE "json: cannot unmarshal "
#define TIME_AS " as \"2006-01-02T15:04:05Z07:00\": cannot parse "
#define QTY_RE                                                                                     \
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/* A TrainJob with SPEC as its spec (and META as its metadata when given), decoded as the
 * webhook reads a review: want is the error text, NULL when it decodes. */
static void check(const char *meta, const char *spec, const char *want)
{
    char *text = kt_xasprintf("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
                              "\"TrainJob\",\"metadata\":%s,\"spec\":%s}",
                              meta ? meta : "{\"name\":\"a\",\"namespace\":\"b\"}", spec);
    struct kt_err err = {0};
    json_t *v = kt_json_parse(text, strlen(text), &err);
    CHECK(v != NULL);
    char *got = v ? kt_go_decode_error(v, &kt_go_TrainJob) : NULL;
    if (want) {
        CHECK_EQ_STR(got ? got : "<decodes>", want);
    } else {
        CHECK_EQ_STR(got ? got : "<decodes>", "<decodes>");
    }
    free(got);
    json_decref(v);
    free(text);
}

static void tr(const char *trainer, const char *want)
{
    char *spec =
        kt_xasprintf("{\"runtimeRef\":{\"name\":\"torch-distributed\"},\"trainer\":%s}", trainer);
    check(NULL, spec, want);
    free(spec);
}

static void test_well_typed(void)
{
    check(NULL,
          "{\"runtimeRef\":{\"name\":\"t\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"C\"},"
          "\"managedBy\":\"x\",\"suspend\":true,\"activeDeadlineSeconds\":9223372036854775807,"
          "\"trainer\":{\"numNodes\":2147483647,\"numProcPerNode\":-2147483648,\"image\":\"i\","
          "\"command\":[\"a\"],\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"resourcesPerNode\":"
          "{\"limits\":{\"cpu\":\"500m\",\"nvidia.com/gpu\":2,\"memory\":1.5}}},"
          "\"runtimePatches\":[{\"manager\":\"m\",\"time\":\"2024-02-29T23:59:59.5+05:30\","
          "\"trainingRuntimeSpec\":{\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}}}}}]}",
          NULL);
    /* null where a value may be; unknown keys (also a differently cased known one) ignored */
    tr("{\"numNodes\":null,\"env\":null,\"image\":null}", NULL);
    check(NULL, "{\"trainer\":null,\"runtimeRef\":null}", NULL);
    tr("{\"NumNodes\":\"x\",\"extra\":[1],\"numNodes\":1}", NULL);
    check("{\"name\":\"a\",\"bogus\":true,\"creationTimestamp\":null}", "{\"foo\":{\"bar\":1}}",
          NULL);
}

static void test_type_errors(void)
{
    tr("{\"numNodes\":\"2\"}",
       PRE "string into Go struct field Trainer.spec.trainer.numNodes of type int32");
    tr("{\"numNodes\":1.5}",
       PRE "number 1.5 into Go struct field Trainer.spec.trainer.numNodes of type int32");
    tr("{\"numNodes\":1.0}",
       PRE "number 1.0 into Go struct field Trainer.spec.trainer.numNodes of type int32");
    tr("{\"numNodes\":2147483648}",
       PRE "number 2147483648 into Go struct field Trainer.spec.trainer.numNodes of type int32");
    tr("{\"numNodes\":-2147483649}",
       PRE "number -2147483649 into Go struct field Trainer.spec.trainer.numNodes of type int32");
    tr("{\"numNodes\":true}",
       PRE "bool into Go struct field Trainer.spec.trainer.numNodes of type int32");
    tr("{\"numProcPerNode\":\"auto\"}",
       PRE "string into Go struct field Trainer.spec.trainer.numProcPerNode of type int32");
    check(NULL, "{\"activeDeadlineSeconds\":9223372036854775808}",
          PRE "number 9223372036854775808 into Go struct field "
              "TrainJobSpec.spec.activeDeadlineSeconds of type int64");
    check(NULL, "{\"activeDeadlineSeconds\":1.0}",
          PRE "number 1.0 into Go struct field TrainJobSpec.spec.activeDeadlineSeconds of type "
              "int64");
    check(NULL, "{\"suspend\":\"true\"}",
          PRE "string into Go struct field TrainJobSpec.spec.suspend of type bool");
    check(NULL, "{\"managedBy\":7}",
          PRE "number into Go struct field TrainJobSpec.spec.managedBy of type string");
    tr("{\"image\":true}",
       PRE "bool into Go struct field Trainer.spec.trainer.image of type string");
    tr("{\"image\":{\"a\":1}}",
       PRE "object into Go struct field Trainer.spec.trainer.image of type string");
    tr("{\"image\":[\"x\"]}",
       PRE "array into Go struct field Trainer.spec.trainer.image of type string");
    tr("{\"command\":\"python\"}",
       PRE "string into Go struct field Trainer.spec.trainer.command of type []string");
    tr("{\"command\":[\"a\",1]}",
       PRE "number into Go struct field Trainer.spec.trainer.command of type string");
    tr("{\"env\":{\"name\":\"A\"}}",
       PRE "object into Go struct field Trainer.spec.trainer.env of type []v1.EnvVar");
    tr("{\"env\":[5]}",
       PRE "number into Go struct field Trainer.spec.trainer.env of type v1.EnvVar");
    tr("{\"env\":[{\"name\":\"A\",\"value\":1}]}",
       PRE "number into Go struct field EnvVar.spec.trainer.env.value of type string");
    tr("[]", PRE "array into Go struct field TrainJobSpec.spec.trainer of type v1alpha1.Trainer");
    tr("\"x\"",
       PRE "string into Go struct field TrainJobSpec.spec.trainer of type v1alpha1.Trainer");
    check(NULL, "\"x\"",
          PRE "string into Go struct field TrainJob.spec of type v1alpha1.TrainJobSpec");
    check(NULL, "{\"runtimeRef\":{\"name\":1}}",
          PRE "number into Go struct field RuntimeRef.spec.runtimeRef.name of type string");
    check(NULL, "{\"runtimePatches\":[{\"manager\":3}]}",
          PRE "number into Go struct field RuntimePatch.spec.runtimePatches.manager of type "
              "string");
    check(NULL,
          "{\"runtimePatches\":[{\"manager\":\"m\",\"trainingRuntimeSpec\":{\"template\":"
          "{\"metadata\":{\"labels\":{\"a\":1}}}}}]}",
          PRE "number into Go struct field ObjectMeta.spec.runtimePatches.trainingRuntimeSpec."
              "template.metadata.labels of type string");
    check("{\"labels\":{\"a\":1}}", "{}",
          PRE "number into Go struct field ObjectMeta.metadata.labels of type string");
    check("{\"labels\":[\"a\"]}", "{}",
          PRE "array into Go struct field ObjectMeta.metadata.labels of type map[string]string");
    /* the first one in document order */
    tr("{\"image\":5,\"numNodes\":\"2\"}",
       PRE "number into Go struct field Trainer.spec.trainer.image of type string");
}

static void test_unmarshalers(void)
{
    tr("{\"resourcesPerNode\":{\"limits\":{\"cpu\":\"abc\"}}}", QTY_RE);
    tr("{\"resourcesPerNode\":{\"limits\":{\"cpu\":{\"x\":1}}}}", QTY_RE);
    check(NULL, "{\"runtimePatches\":[{\"manager\":\"m\",\"time\":\"garbage\"}]}",
          "parsing time \"garbage\"" TIME_AS "\"garbage\" as \"2006\"");
    check(NULL, "{\"runtimePatches\":[{\"manager\":\"m\",\"time\":5}]}",
          PRE "number into Go struct field RuntimePatch.spec.runtimePatches.time of type string");
    check(NULL, "{\"runtimePatches\":[{\"manager\":\"m\",\"time\":\"2024-01-02\"}]}",
          "parsing time \"2024-01-02\"" TIME_AS "\"\" as \"T\"");
    check("{\"creationTimestamp\":\"yesterday\"}", "{}",
          "parsing time \"yesterday\"" TIME_AS "\"yesterday\" as \"2006\"");
    /* an Unmarshaler's error stops the decoding: it wins over an earlier saved one */
    check(NULL,
          "{\"activeDeadlineSeconds\":\"x\",\"runtimePatches\":[{\"manager\":\"m\",\"time\":"
          "\"garbage\"}]}",
          "parsing time \"garbage\"" TIME_AS "\"garbage\" as \"2006\"");
}

/* Runtimes: fields promoted from an embedded struct put its Go field name in the path. */
static void test_runtimes(void)
{
    static const char *const rt[] = {
        "{\"numNodes\":1,\"torch\":{\"numProcPerNode\":\"auto\"}}",
        NULL,
        "{\"mpi\":{\"numProcPerNode\":1.5}}",
        PRE "number 1.5 into Go struct field MPIMLPolicySource.spec.mlPolicy.MLPolicySource.mpi."
            "numProcPerNode of type int32",
        "{\"mpi\":{\"numProcPerNode\":2147483648}}",
        PRE "number 2147483648 into Go struct field MPIMLPolicySource.spec.mlPolicy.MLPolicySource."
            "mpi.numProcPerNode of type int32",
        "{\"numNodes\":\"1\"}",
        PRE "string into Go struct field MLPolicy.spec.mlPolicy.numNodes of type int32",
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(rt); i += 2) {
        char *text =
            kt_xasprintf("{\"metadata\":{\"name\":\"r\"},\"spec\":{\"mlPolicy\":%s}}", rt[i]);
        struct kt_err err = {0};
        json_t *v = kt_json_parse(text, strlen(text), &err);
        char *got = kt_go_decode_error(v, &kt_go_ClusterTrainingRuntime);
        CHECK_EQ_STR(got ? got : "<decodes>", rt[i + 1] ? rt[i + 1] : "<decodes>");
        free(got);
        json_decref(v);
        free(text);
    }
    check(NULL,
          "{\"podGroupPolicy\":null,\"trainer\":{\"env\":[{\"name\":\"A\",\"valueFrom\":"
          "{\"configMapKeyRef\":{\"name\":1,\"key\":\"k\"}}}]}}",
          PRE "number into Go struct field ConfigMapKeySelector.spec.trainer.env.valueFrom."
              "configMapKeyRef.LocalObjectReference.name of type string");
}

static void time_err(const char *s, const char *want)
{
    char *got = kt_go_time_error(s);
    CHECK_EQ_STR(got ? got : "<parses>", want ? want : "<parses>");
    free(got);
}

/* time.Parse(time.RFC3339, s): each expectation printed by Go 1.26's time.Parse. */
static const struct {
    const char *in, *want;
} times[] = {
    {"2024-01-02T03:04:05Z", NULL},
    {"2024-01-02T3:04:05-07:00", NULL},
    {"2024-02-29T00:00:00.123456789Z", NULL},
    {"2024-13-01T00:00:00Z", "parsing time \"2024-13-01T00:00:00Z\": month out of range"},
    {"2023-02-29T00:00:00Z", "parsing time \"2023-02-29T00:00:00Z\": day out of range"},
    {"2024-01-02T24:00:00Z", "parsing time \"2024-01-02T24:00:00Z\": hour out of range"},
    {"2024-01-02T00:00:00Zjunk", "parsing time \"2024-01-02T00:00:00Zjunk\": extra text: \"junk\""},
    {"2024-01-02T00:00:00", "parsing time \"2024-01-02T00:00:00\" as "
                            "\"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\""},
    {"2024-1-02T00:00:00Z",
     "parsing time \"2024-1-02T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
     "\"1-02T00:00:00Z\" as \"01\""},
    {"x\"\xc3"
     "\xa9"
     "",
     "parsing time \"x\\\"\\xc3\\xa9\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
     "\"x\\\"\\xc3\\xa9\" as \"2006\""},
    {"2024-01-02T00:00:00+25:00",
     "parsing time \"2024-01-02T00:00:00+25:00\": time zone offset hour out of range"},
    {"2024-01-02T00:00:00x05:00",
     "parsing time \"2024-01-02T00:00:00x05:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
     "\"x05:00\" as \"Z07:00\""},
    {"2024-01-02T00:60:00Z", "parsing time \"2024-01-02T00:60:00Z\": minute out of range"},
    {"2024-01-02T00:00:60Z", "parsing time \"2024-01-02T00:00:60Z\": second out of range"},
    {"2024-00-10T00:00:00Z", "parsing time \"2024-00-10T00:00:00Z\": month out of range"},
    {"2024-01-00T00:00:00Z", "parsing time \"2024-01-00T00:00:00Z\": day out of range"},
    {"", "parsing time \"\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"2006\""},
    {"20a4-01-01T00:00:00Z",
     "parsing time \"20a4-01-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
     "\"20a4-01-01T00:00:00Z\" as \"2006\""},
    {"2024-01-02T00:00:00+05:61",
     "parsing time \"2024-01-02T00:00:00+05:61\": time zone offset minute out of range"},
    {"2024-01-02T00:00:00+0530",
     "parsing time \"2024-01-02T00:00:00+0530\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
     "\"+0530\" as \"Z07:00\""},
    {"2024-01-02T00:00:00.Z", "parsing time \"2024-01-02T00:00:00.Z\" as "
                              "\"2006-01-02T15:04:05Z07:00\": cannot parse \".Z\" as \"Z07:00\""},
    {"2024-01-02 00:00:00Z", "parsing time \"2024-01-02 00:00:00Z\" as "
                             "\"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\""},
};

static void test_time_parse(void)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(times); i++) {
        time_err(times[i].in, times[i].want);
    }
}

/* kt_go_decode_check: the same text as kt_go_decode_error and where the value is. SPEC is the
 * spec of a TrainJob; field "" and ptr "" mean it decodes. */
static void where(const char *spec, const char *field, const char *ptr)
{
    char *text = kt_xasprintf("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
                              "\"TrainJob\",\"metadata\":{\"name\":\"a\"},\"spec\":%s}",
                              spec);
    struct kt_err err = {0};
    json_t *v = kt_json_parse(text, strlen(text), &err);
    struct kt_go_decode f;
    CHECK(v != NULL);
    int rc = kt_go_decode_check(v, &kt_go_TrainJob, &f);
    char *msg = kt_go_decode_error(v, &kt_go_TrainJob);
    CHECK_EQ_INT(rc, field[0] ? 1 : 0);
    CHECK_EQ_STR(f.msg ? f.msg : "<decodes>", msg ? msg : "<decodes>");
    CHECK_EQ_STR(f.field ? f.field : "", field);
    CHECK_EQ_STR(f.ptr ? f.ptr : "", ptr);
    kt_go_decode_release(&f);
    CHECK(f.msg == NULL && f.field == NULL && f.ptr == NULL);
    kt_go_decode_release(NULL);
    free(msg);
    json_decref(v);
    free(text);
}

/* An IntOrString that is neither stops the decoding with its own int32 error, at its path;
 * the type error saved before it is dropped. */
static void test_where_intorstr(void)
{
    const char *text =
        "{\"metadata\":{\"name\":1},\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":"
        "[{\"name\":\"n\",\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":"
        "[{\"name\":\"c\"},{\"name\":\"d\",\"livenessProbe\":{\"httpGet\":{\"port\":true}}}]"
        "}}}}}]}}}}";
    struct kt_err err = {0};
    json_t *v = kt_json_parse(text, strlen(text), &err);
    struct kt_go_decode f;
    CHECK(v != NULL);
    CHECK_EQ_INT(kt_go_decode_check(v, &kt_go_ClusterTrainingRuntime, &f), 1);
    CHECK_EQ_STR(f.msg, PRE "bool into Go struct field HTTPGetAction.spec.template.spec."
                            "replicatedJobs.template.spec.template.spec.containers.livenessProbe."
                            "ProbeHandler.httpGet.port of type int32");
    CHECK_EQ_STR(f.field, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
                          "containers[1].livenessProbe.httpGet.port");
    CHECK_EQ_STR(f.ptr, "/spec/template/spec/replicatedJobs/0/template/spec/template/spec/"
                        "containers/1/livenessProbe/httpGet/port");
    kt_go_decode_release(&f);
    json_decref(v);
}

static void test_where(void)
{
    /* a type error, an int32 overflow, a quantity, a time, a wrong JSON type for a time */
    where("{\"trainer\":{\"numNodes\":\"2\"}}", "spec.trainer.numNodes", "/spec/trainer/numNodes");
    where("{\"trainer\":{\"numProcPerNode\":2147483648}}", "spec.trainer.numProcPerNode",
          "/spec/trainer/numProcPerNode");
    where("{\"trainer\":{\"resourcesPerNode\":{\"limits\":{\"memory\":\"1Gi\",\"cpu\":\"2x\"}}}}",
          "spec.trainer.resourcesPerNode.limits.cpu", "/spec/trainer/resourcesPerNode/limits/cpu");
    where("{\"runtimePatches\":[{\"manager\":\"m\"},{\"manager\":\"n\",\"time\":\"bogus\"}]}",
          "spec.runtimePatches[1].time", "/spec/runtimePatches/1/time");
    where("{\"runtimePatches\":[{\"manager\":\"m\",\"time\":5}]}", "spec.runtimePatches[0].time",
          "/spec/runtimePatches/0/time");
    /* a list item's field; a map key with / and ~ escaped in the pointer */
    where("{\"trainer\":{\"env\":[{\"name\":\"A\"},{\"name\":\"B\",\"value\":1}]}}",
          "spec.trainer.env[1].value", "/spec/trainer/env/1/value");
    where("{\"trainer\":{\"resourcesPerNode\":{\"limits\":{\"a~b/c\":true}}}}",
          "spec.trainer.resourcesPerNode.limits.a~b/c",
          "/spec/trainer/resourcesPerNode/limits/a~0b~1c");
    /* the first type error is kept while the walk goes on; a time stops it and wins */
    where("{\"managedBy\":1,\"trainer\":{\"numNodes\":\"2\"}}", "spec.managedBy",
          "/spec/managedBy");
    where("{\"managedBy\":1,\"runtimePatches\":[{\"manager\":\"m\",\"time\":\"x\"}]}",
          "spec.runtimePatches[0].time", "/spec/runtimePatches/0/time");
    /* negative: a valid document is nowhere */
    where("{\"runtimeRef\":{\"name\":\"t\"},\"trainer\":{\"numNodes\":2,\"resourcesPerNode\":"
          "{\"limits\":{\"cpu\":\"2\"}}},\"runtimePatches\":[{\"manager\":\"m\",\"time\":"
          "\"2024-01-02T03:04:05Z\"}]}",
          "", "");
}

int main(void)
{
    kt_mem_init();
    test_well_typed();
    test_type_errors();
    test_unmarshalers();
    test_runtimes();
    test_time_parse();
    test_where();
    test_where_intorstr();
    return test_report();
}
