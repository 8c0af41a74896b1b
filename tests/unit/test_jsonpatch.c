/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_jsonpatch.c - common/base/jsonpatch.c (the rules of gomodules.xyz/jsonpatch/v2
 * CreatePatch, which upstream's defaulter answers with) and kt_go_roundtrip (json.Marshal of
 * the decoded Go TrainJob, as a JSON value). Expected texts written from Go's rules. */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/fielderr.h"
#include "common/base/gotypes.h"
#include "common/base/json.h"
#include "common/base/jsonpatch.h"
#include "common/base/mem.h"

static json_t *parse(const char *s)
{
    struct kt_err err = {0};
    json_t *j = kt_json_parse(s, strlen(s), &err);
    KT_ASSERT(j != NULL);
    return j;
}

static void check_patch(const char *a, const char *b, const char *want)
{
    json_t *ja = parse(a), *jb = parse(b);
    json_t *ops = kt_jsonpatch_create(ja, jb);
    char *got = kt_json_dump_go(ops);
    CHECK_EQ_STR(got, want);
    free(got);
    json_decref(ops);
    json_decref(ja);
    json_decref(jb);
}

static void test_create_patch(void)
{
    /* numbers compare as float64; nil vs nil is no change; a value turning null is a replace
     * with "value":null; an added member is an add of a value printed as Go's generic JSON
     * (keys sorted); an array loses its tail from the last element; removed members last. */
    check_patch("{\"x\":1,\"y\":\"s\",\"z\":[1,2,3],\"n\":null,\"t\":\"v\",\"o\":{\"k\":true},"
                "\"r\":1}",
                "{\"x\":1.0,\"y\":\"t\",\"z\":[1],\"n\":null,\"t\":null,\"o\":{\"k\":false,"
                "\"new\":{\"b\":1,\"a\":2.0}},\"w\":null}",
                "[{\"op\":\"replace\",\"path\":\"/y\",\"value\":\"t\"},"
                "{\"op\":\"remove\",\"path\":\"/z/2\"},{\"op\":\"remove\",\"path\":\"/z/1\"},"
                "{\"op\":\"replace\",\"path\":\"/t\",\"value\":null},"
                "{\"op\":\"replace\",\"path\":\"/o/k\",\"value\":false},"
                "{\"op\":\"add\",\"path\":\"/o/new\",\"value\":{\"a\":2,\"b\":1}},"
                "{\"op\":\"add\",\"path\":\"/w\",\"value\":null},"
                "{\"op\":\"remove\",\"path\":\"/r\"}]");
    /* a number turning into a string: another type, so a replace; RFC 6901 escapes; an array
     * growing: adds after the common part */
    check_patch("{\"a/b~c\":2,\"l\":[\"x\"]}", "{\"a/b~c\":\"2\",\"l\":[\"y\",{\"k\":1}]}",
                "[{\"op\":\"replace\",\"path\":\"/a~1b~0c\",\"value\":\"2\"},"
                "{\"op\":\"add\",\"path\":\"/l/1\",\"value\":{\"k\":1}},"
                "{\"op\":\"replace\",\"path\":\"/l/0\",\"value\":\"y\"}]");
    /* negative: equal documents (member order aside) give no operation */
    check_patch("{\"a\":{\"b\":[1,true,\"s\",null]},\"c\":2}",
                "{\"c\":2.0,\"a\":{\"b\":[1,true,\"s\",null]}}", "[]");
}

static void check_roundtrip(const char *in, const char *want)
{
    json_t *j = parse(in);
    json_t *rt = kt_go_roundtrip(j, &kt_go_TrainJob);
    char *got = kt_json_dump_go(rt);
    CHECK_EQ_STR(got, want);
    /* the value prints as the text printer does */
    char *txt = kt_go_marshal_as(j, &kt_go_TrainJob);
    CHECK_EQ_STR(txt, want);
    free(txt);
    free(got);
    json_decref(rt);
    json_decref(j);
}

static void test_roundtrip(void)
{
    /* Go's field order (kind before apiVersion), unknown keys dropped, quantities canonical,
     * map keys sorted, a Time in UTC seconds, null and empty omitempty fields gone, the
     * missing non-omitempty fieldPath as "", status (omitzero) absent when zero */
    check_roundtrip(
        "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
        "\"metadata\":{\"namespace\":\"ns\",\"name\":\"j\",\"x\":1},"
        "\"spec\":{\"bogus\":1,\"suspend\":null,\"activeDeadlineSeconds\":0,"
        "\"runtimeRef\":{\"name\":\"torch\"},\"trainer\":{\"resourcesPerNode\":{\"limits\":"
        "{\"nvidia.com/gpu\":2,\"cpu\":\"1000m\"}},\"env\":[{\"name\":\"A\",\"valueFrom\":"
        "{\"fieldRef\":{\"apiVersion\":\"v1\"}}}]},\"runtimePatches\":[{\"manager\":\"m\","
        "\"time\":\"2024-01-01T01:00:00.5+01:00\"}]},\"status\":{}}",
        "{\"kind\":\"TrainJob\",\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
        "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\"},"
        "\"spec\":{\"runtimeRef\":{\"name\":\"torch\"},\"trainer\":{\"env\":[{\"name\":\"A\","
        "\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"\"}}}],"
        "\"resourcesPerNode\":{\"limits\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"2\"}}},"
        "\"runtimePatches\":[{\"manager\":\"m\",\"time\":\"2024-01-01T00:00:00Z\"}]}}");
    /* metadata (a struct: omitempty never drops it) is always there; an empty spec is zero
     * (omitzero); a status with an empty non-nil slice is not zero, the slice itself is empty
     * (omitempty) */
    check_roundtrip("{\"spec\":{},\"status\":{\"conditions\":[]}}",
                    "{\"metadata\":{},\"status\":{}}");
    /* Go's zero Time: IsZero for omitzero (creationTimestamp gone), null when printed */
    check_roundtrip("{\"metadata\":{\"creationTimestamp\":\"0001-01-01T00:00:00Z\","
                    "\"managedFields\":[{\"time\":\"0001-01-01T00:00:00Z\"}]}}",
                    "{\"metadata\":{\"managedFields\":[{\"time\":null}]}}");
}

static void test_time_parse(void)
{
    long long s = -1;
    long ns = -1;
    CHECK(kt_go_time_parse("1970-01-02T01:00:00.000000123+01:00", &s, &ns));
    CHECK_EQ_INT(s, 86400);
    CHECK_EQ_INT(ns, 123);
    CHECK(kt_go_time_parse("2024-01-01T00:00:00Z", &s, &ns));
    CHECK_EQ_INT(ns, 0);
    /* not RFC 3339: no zone, an empty fraction, trailing text */
    CHECK(!kt_go_time_parse("2024-01-01T00:00:00", &s, &ns));
    CHECK(!kt_go_time_parse("2024-01-01T00:00:00.Z", &s, &ns));
    CHECK(!kt_go_time_parse("2024-01-01T00:00:00+01:00x", &s, &ns));
    CHECK(!kt_go_time_parse("2024-01-01 00:00:00Z", &s, &ns));
}

int main(void)
{
    kt_mem_init();
    test_create_patch();
    test_roundtrip();
    test_time_parse();
    return test_report();
}
