/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_validate.c - common/validate*.c: rule coverage of the compiled-in schemas,
 * transition rules (update), the runtimePatches time defaulter
 * (docs/internals/upstream.md#trainjob-defaulter), the aggregate string
 * (docs/internals/upstream.md#error-text) and strict decoding. Expected texts are the API server's,
 * captured in tests/integration/crd/ (immutable-* cases). */
#include <stdlib.h>
#include <string.h>

#include "api/runtime.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/plugins/plugins.h"
#include "common/validate/validate.h"
#include "tests/test.h"

bool kt_validate_cel_has_twin(const char *rule);

static struct kt_validator *v;
static struct kt_framework fw;

static json_t *parse(const char *s)
{
    struct kt_err err = {0};
    json_t *j = kt_json_parse(s, strlen(s), &err);
    KT_ASSERT(j != NULL);
    return j;
}

/* Every x-kubernetes-validations rule below node has a C twin; counts them in *n. */
static bool all_rules_twinned(const json_t *node, size_t *n)
{
    bool ok = true;
    if (json_is_array(node)) {
        size_t i;
        json_t *it;
        json_array_foreach(node, i, it)
        {
            ok = all_rules_twinned(it, n) && ok;
        }
        return ok;
    }
    if (!json_is_object(node)) {
        return true;
    }
    const json_t *rules = json_object_get(node, "x-kubernetes-validations");
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        (*n)++;
        if (!kt_validate_cel_has_twin(json_string_value(json_object_get(r, "rule")))) {
            TEST_FAIL_("no twin for rule %s", json_string_value(json_object_get(r, "rule")));
            ok = false;
        }
    }
    const char *k;
    json_t *it;
    json_object_foreach((json_t *)(uintptr_t)node, k, it)
    {
        ok = all_rules_twinned(it, n) && ok;
    }
    return ok;
}

static void test_every_rule_has_a_twin(void)
{
    static const char *const kinds[] = {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        const json_t *s = kt_validator_schema(v, kinds[i]);
        CHECK(s != NULL);
        CHECK(all_rules_twinned(s, &n));
    }
    CHECK(n >= 40); /* 13 + 11 + 11 ... rule sites, JobSet's included */
    CHECK(kt_validator_schema(v, "ConfigMap") == NULL);
    CHECK(!kt_validate_cel_has_twin("self.size() > 0"));
}

#define TJ_BASE                                                                                    \
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{"       \
    "\"name\":\"imm\"},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"                 \
    "\"activeDeadlineSeconds\":100,\"trainer\":{\"image\":\"busybox:1\"},"                         \
    "\"runtimePatches\":[{\"manager\":\"example.com/tuner\",\"trainingRuntimeSpec\":{"             \
    "\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{"      \
    "\"template\":{\"spec\":{\"serviceAccountName\":\"sa-a\",\"nodeSelector\":{\"pool\":"          \
    "\"a\"}}}}}}]}}}}]}}"

/* Validate new against old (schema + rules only); returns the aggregate. */
static char *update(const char *new_json, const char *old_json)
{
    json_t *n = parse(new_json), *o = parse(old_json);
    struct kt_vresult r;
    kt_vresult_init(&r);
    kt_validate_defaults(v, "TrainJob", n);
    kt_validate_defaults(v, "TrainJob", o);
    kt_validate_schema(v, "TrainJob", n, o, &r);
    char *s = kt_vresult_string(&r);
    kt_vresult_release(&r);
    json_decref(n);
    json_decref(o);
    return s;
}

static char *replace(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    KT_ASSERT(p != NULL);
    return kt_xasprintf("%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
}

static void check_update(const char *from, const char *to, const char *want)
{
    char *n = replace(TJ_BASE, from, to);
    char *got = update(n, TJ_BASE);
    CHECK_EQ_STR(got, want);
    free(got);
    free(n);
}

static void test_transition_rules(void)
{
    char *same = update(TJ_BASE, TJ_BASE);
    CHECK_EQ_STR(same, "");
    free(same);
    check_update("busybox:1", "busybox:2", "spec.trainer: Invalid value: field is immutable");
    check_update("\"activeDeadlineSeconds\":100", "\"activeDeadlineSeconds\":200",
                 "spec.activeDeadlineSeconds: Invalid value: 200: field is immutable");
    check_update("torch-distributed", "other",
                 "spec.runtimeRef: Invalid value: field is immutable");
    check_update("\"sa-a\"", "\"sa-b\"",
                 "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]."
                 "template.spec.template.spec.serviceAccountName: Invalid value: \"sa-b\": field "
                 "is immutable");
    /* mutable: nodeSelector, suspend; a renamed manager is a new list-map entry */
    check_update("\"pool\":\"a\"", "\"pool\":\"b\"", "");
    check_update("\"activeDeadlineSeconds\":100", "\"activeDeadlineSeconds\":100,\"suspend\":true",
                 "");
    check_update("example.com/tuner", "example.com/other", "");
    check_update(
        "\"runtimeRef\"", "\"managedBy\":\"kueue.x-k8s.io/multikueue\",\"runtimeRef\"",
        "spec.managedBy: Invalid value: \"kueue.x-k8s.io/multikueue\": field is immutable");
    /* adding a previously absent block is not a transition
     * (docs/internals/upstream.md#trainjob-immutability) */
    char *old = replace(TJ_BASE, ",\"trainer\":{\"image\":\"busybox:1\"}", "");
    char *got = update(TJ_BASE, old);
    CHECK_EQ_STR(got, "");
    free(got);
    free(old);
}

/* Rules the create path of ktctl never reaches: a runtime transition rule and a status rule
 * (texts captured in tests/integration/crd/ctr-jobset-failurepolicy-immutable and
 * status-trainerstatus-no-lastupdatedtime). */
static void test_runtime_transition_and_status_rules(void)
{
    const char *rt_old = "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
                         "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"fp\"},\"spec\":{"
                         "\"template\":{\"spec\":{\"failurePolicy\":{\"maxRestarts\":1}}}}}";
    char *rt_new = replace(rt_old, "\"maxRestarts\":1", "\"maxRestarts\":2");
    json_t *n = parse(rt_new), *o = parse(rt_old);
    struct kt_vresult r;
    kt_vresult_init(&r);
    kt_validate_defaults(v, "ClusterTrainingRuntime", n);
    kt_validate_defaults(v, "ClusterTrainingRuntime", o);
    kt_validate_schema(v, "ClusterTrainingRuntime", n, o, &r);
    char *got = kt_vresult_string(&r);
    CHECK_EQ_STR(got, "spec.template.spec.failurePolicy: Invalid value: Value is immutable");
    free(got);
    kt_vresult_release(&r);
    /* mlPolicy is mutable */
    kt_vresult_init(&r);
    kt_validate_schema(v, "ClusterTrainingRuntime", o, o, &r);
    CHECK_EQ_INT(r.len, 0);
    kt_vresult_release(&r);
    json_decref(n);
    json_decref(o);
    free(rt_new);

    json_t *tj = parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                       "\"metadata\":{\"name\":\"st\"},\"spec\":{\"runtimeRef\":{\"name\":\"x\"}},"
                       "\"status\":{\"trainerStatus\":{\"progressPercentage\":5}}}");
    kt_vresult_init(&r);
    kt_validate_schema(v, "TrainJob", tj, NULL, &r);
    got = kt_vresult_string(&r);
    CHECK_EQ_STR(got, "status.trainerStatus: Invalid value: lastUpdatedTime is required when "
                      "trainerStatus is present");
    free(got);
    kt_vresult_release(&r);
    /* on create the status subresource resets status: ktctl drops it before checking */
    kt_validate_defaults(v, "TrainJob", tj);
    CHECK(json_object_get(tj, "status") == NULL);
    json_decref(tj);
}

static char *runtime_update(const char *new_json, const char *old_json)
{
    json_t *n = parse(new_json), *o = parse(old_json);
    struct kt_vresult r;
    kt_vresult_init(&r);
    kt_validate_schema(v, "ClusterTrainingRuntime", n, o, &r);
    char *s = kt_vresult_string(&r);
    kt_vresult_release(&r);
    json_decref(n);
    json_decref(o);
    return s;
}

/* List-map items meet their old item by key, as the API server's mapList does: the first old
 * item with the same keys wins (so a repeated key meets the first one), and an item missing a
 * key or whose key is not a scalar has no old item at all (its transition rules do not run). */
#define TPL "\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}"
static void test_list_map_correlation(void)
{
    const char *dup =
        "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":["
        "{\"name\":\"a\",\"dependsOn\":[{\"name\":\"b\",\"status\":\"Ready\"}]," TPL "},"
        "{\"name\":\"a\",\"dependsOn\":[{\"name\":\"c\",\"status\":\"Ready\"}]," TPL "}]}}}}";
    char *got = runtime_update(dup, dup);
    CHECK(strstr(got, "spec.template.spec.replicatedJobs[1].dependsOn: Invalid value: Value is "
                      "immutable") != NULL);
    CHECK(strstr(got, "replicatedJobs[0].dependsOn") == NULL);
    free(got);
    const char *one = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"template\":{\"spec\":{"
                      "\"replicatedJobs\":[{\"name\":\"a\",\"dependsOn\":[{\"name\":\"b\","
                      "\"status\":\"Ready\"}]," TPL "}]}}}}";
    char *changed = replace(one, "\"b\"", "\"c\"");
    got = runtime_update(changed, one);
    CHECK(strstr(got, "replicatedJobs[0].dependsOn: Invalid value: Value is immutable") != NULL);
    free(got);
    /* negative: a renamed item is a new entry with no old item */
    char *renamed = replace(changed, "\"name\":\"a\"", "\"name\":\"z\"");
    got = runtime_update(renamed, one);
    CHECK_EQ_STR(got, "");
    free(got);
    free(renamed);
    free(changed);
}
#undef TPL

static void test_defaulter(void)
{
    json_t *tj = parse("{\"spec\":{\"runtimePatches\":[{\"manager\":\"a\"},{\"manager\":\"b\","
                       "\"time\":\"2020-01-01T00:00:00Z\"}]}}");
    CHECK_EQ_INT(kt_validate_default_trainjob(tj, NULL, 86400), 1);
    const json_t *p = json_object_get(json_object_get(tj, "spec"), "runtimePatches");
    CHECK_EQ_STR(kt_json_str(json_array_get(p, 0), "time", ""), "1970-01-02T00:00:00Z");
    CHECK_EQ_STR(kt_json_str(json_array_get(p, 1), "time", ""), "2020-01-01T00:00:00Z");

    /* update: unchanged keeps the old time, changed gets now, new without time gets now */
    json_t *old = parse("{\"spec\":{\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
                        "\"2021-01-01T00:00:00Z\"},{\"manager\":\"b\",\"time\":"
                        "\"2021-01-01T00:00:00Z\",\"trainingRuntimeSpec\":{\"template\":"
                        "{\"metadata\":{\"labels\":{\"k\":\"1\"}}}}}]}}");
    json_t *nw =
        parse("{\"spec\":{\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
              "\"2030-01-01T00:00:00Z\"},{\"manager\":\"b\",\"trainingRuntimeSpec\":"
              "{\"template\":{\"metadata\":{\"labels\":{\"k\":\"2\"}}}}},{\"manager\":\"c\"},"
              "{\"manager\":\"d\",\"time\":\"2022-02-02T00:00:00Z\"}]}}");
    /* a: old time back (another instant), b and c: now, d: kept */
    CHECK_EQ_INT(kt_validate_default_trainjob(nw, old, 0), 3);
    p = json_object_get(json_object_get(nw, "spec"), "runtimePatches");
    CHECK_EQ_STR(kt_json_str(json_array_get(p, 0), "time", ""), "2021-01-01T00:00:00Z");
    CHECK_EQ_STR(kt_json_str(json_array_get(p, 1), "time", ""), "1970-01-01T00:00:00Z");
    CHECK_EQ_STR(kt_json_str(json_array_get(p, 2), "time", ""), "1970-01-01T00:00:00Z");
    CHECK_EQ_STR(kt_json_str(json_array_get(p, 3), "time", ""), "2022-02-02T00:00:00Z");
    json_decref(tj);
    json_decref(old);
    json_decref(nw);
}

static char *default_patch(const char *tj, const char *old, time_t now)
{
    json_t *j = parse(tj), *o = old ? parse(old) : NULL;
    json_t *ops = kt_validate_default_patch(j, o, now);
    char *s = kt_json_dump_go(ops);
    json_decref(ops);
    json_decref(j);
    json_decref(o);
    return s;
}

#define TJ_HEAD                                                                                    \
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":"        \
    "{\"name\":\"j\",\"namespace\":\"ns\"},\"spec\":{\"runtimeRef\":{\"name\":\"torch\"},"

/* The defaulter's patch carries upstream's round trip (controller-runtime: the raw object vs
 * json.Marshal of the defaulted Go TrainJob, scheme removals dropped). Expected operations
 * written from Go's rules, in kt's order (upstream's is Go map order). */
static void test_default_patch(void)
{
    /* create: an integer quantity becomes "2", 1000m becomes "1", a missing non-omitempty
     * field (fieldRef.fieldPath) appears as "", a time with an offset goes to UTC seconds,
     * a patch without time (and one with a null time) gets now; the unknown key, the null
     * and the omitempty zero are removed by the round trip alone: no remove operation */
    char *got = default_patch(
        TJ_HEAD "\"bogus\":1,\"suspend\":null,\"activeDeadlineSeconds\":0,"
                "\"trainer\":{\"resourcesPerNode\":{\"limits\":{\"nvidia.com/gpu\":2,"
                "\"cpu\":\"1000m\"}},\"env\":[{\"name\":\"A\",\"valueFrom\":{\"fieldRef\":"
                "{\"apiVersion\":\"v1\"}}}]},\"runtimePatches\":[{\"manager\":\"a\"},"
                "{\"manager\":\"b\",\"time\":\"2024-01-01T01:00:00+01:00\"},"
                "{\"manager\":\"c\",\"time\":null}]}}",
        NULL, 86400);
    CHECK_EQ_STR(got,
                 "[{\"op\":\"add\",\"path\":\"/spec/trainer/env/0/valueFrom/fieldRef/fieldPath\","
                 "\"value\":\"\"},"
                 "{\"op\":\"replace\",\"path\":\"/spec/trainer/resourcesPerNode/limits/cpu\","
                 "\"value\":\"1\"},"
                 "{\"op\":\"replace\",\"path\":\"/spec/trainer/resourcesPerNode/limits/"
                 "nvidia.com~1gpu\",\"value\":\"2\"},"
                 "{\"op\":\"add\",\"path\":\"/spec/runtimePatches/0/time\","
                 "\"value\":\"1970-01-02T00:00:00Z\"},"
                 "{\"op\":\"replace\",\"path\":\"/spec/runtimePatches/1/time\","
                 "\"value\":\"2024-01-01T00:00:00Z\"},"
                 "{\"op\":\"replace\",\"path\":\"/spec/runtimePatches/2/time\","
                 "\"value\":\"1970-01-02T00:00:00Z\"}]");
    free(got);

    /* negative: canonical, times set: the defaulter changes nothing, so no patch at all, the
     * round trip's own differences (the quantity 2) included, as upstream answers */
    got = default_patch(TJ_HEAD "\"trainer\":{\"resourcesPerNode\":{\"limits\":{\"cpu\":2}}},"
                                "\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
                                "\"2024-01-01T00:00:00Z\"}]}}",
                        NULL, 86400);
    CHECK_EQ_STR(got, "[]");
    free(got);
    got = default_patch(TJ_HEAD "\"bogus\":1}}", NULL, 86400);
    CHECK_EQ_STR(got, "[]");
    free(got);

    /* update: an unchanged entry whose old version had no time loses its time (a remove the
     * round trip alone does not make: kept); the same instant written another way is no
     * change (no patch) */
    const char *old = TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"x\":1}]}}";
    got = default_patch(TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
                                "\"2024-01-01T00:00:00Z\"}]}}",
                        old, 0);
    CHECK_EQ_STR(got, "[{\"op\":\"remove\",\"path\":\"/spec/runtimePatches/0/time\"}]");
    free(got);
    old = TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"time\":\"2024-01-01T00:00:00Z\"}]}}";
    got = default_patch(TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
                                "\"2024-01-01T01:00:00+01:00\"}]}}",
                        old, 0);
    CHECK_EQ_STR(got, "[]");
    free(got);
    /* two old entries of one manager: the last one's time (upstream's map by manager) */
    got = default_patch(TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"x\":2}]}}",
                        TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
                                "\"2020-01-01T00:00:00Z\",\"trainingRuntimeSpec\":{}},"
                                "{\"manager\":\"a\",\"time\":\"2021-01-01T00:00:00Z\"}]}}",
                        0);
    CHECK_EQ_STR(got, "[{\"op\":\"add\",\"path\":\"/spec/runtimePatches/0/time\","
                      "\"value\":\"2021-01-01T00:00:00Z\"}]");
    free(got);
    /* a different instant: the old time back, in UTC seconds */
    got = default_patch(TJ_HEAD "\"runtimePatches\":[{\"manager\":\"a\",\"time\":"
                                "\"2025-01-01T00:00:00Z\"}]}}",
                        old, 0);
    CHECK_EQ_STR(got, "[{\"op\":\"replace\",\"path\":\"/spec/runtimePatches/0/time\","
                      "\"value\":\"2024-01-01T00:00:00Z\"}]");
    free(got);
}
#undef TJ_HEAD

static void test_aggregate_and_strict(void)
{
    struct kt_vresult r;
    struct kt_err err = {0};
    kt_vresult_init(&r);
    char *s = kt_vresult_string(&r);
    CHECK_EQ_STR(s, "");
    free(s);
    kt_vresult_add(&r, KT_VSTAGE_SCHEMA, "a", "Required value", "a: Required value", "/a");
    s = kt_vresult_string(&r);
    CHECK_EQ_STR(s, "a: Required value");
    free(s);
    kt_vresult_add(&r, KT_VSTAGE_SCHEMA, "a", "Required value", "a: Required value", "/a");
    kt_vresult_add(&r, KT_VSTAGE_SCHEMA, "b", "Required value", "b: Required value", "/b");
    s = kt_vresult_string(&r);
    CHECK_EQ_STR(s, "[a: Required value, b: Required value]");
    free(s);
    kt_vresult_release(&r);

    json_t *o = parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                      "\"metadata\":{\"name\":\"x\",\"foo\":1},\"spec\":{\"zed\":1,"
                      "\"runtimeRef\":{\"name\":\"r\"}}}");
    kt_vresult_init(&r);
    CHECK_OK(kt_validate_object(&(struct kt_validate_req){.v = v, .fw = &fw, .obj = o}, &r, &err));
    CHECK_EQ_INT(r.len, 2);
    if (r.len == 2) {
        CHECK_EQ_STR(r.items[0].text, "strict decoding error: unknown field \"metadata.foo\"");
        CHECK_EQ_STR(r.items[1].text, "strict decoding error: unknown field \"spec.zed\"");
        CHECK_EQ_STR(r.items[1].ptr, "/spec/zed");
    }
    kt_vresult_release(&r);
    /* not ours */
    json_object_set_new(o, "kind", json_string("ConfigMap"));
    kt_vresult_init(&r);
    CHECK(kt_validate_object(&(struct kt_validate_req){.v = v, .fw = &fw, .obj = o}, &r, &err) !=
          0);
    kt_vresult_release(&r);
    json_decref(o);
}

#define RT_JSON                                                                                    \
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainingRuntime\","              \
    "\"metadata\":{\"name\":\"rt\"},\"spec\":{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},"         \
    "\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"metadata\":"   \
    "{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"        \
    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"i\"}]}}}}}]}}}}"

static size_t webhook_problems(const json_t *tj, const json_t *rts, const struct kt_runtime *dec,
                               char **text)
{
    struct kt_vruntimes vr = {.runtimes = rts, .decoded = dec};
    struct kt_vresult r;
    struct kt_err err = {0};
    kt_vresult_init(&r);
    CHECK_OK(kt_validate_trainjob_webhook(&fw, tj, NULL, &vr, &r, &err));
    size_t n = r.len;
    *text = kt_vresult_string(&r);
    kt_vresult_release(&r);
    return n;
}

/* Runtimes decoded ahead (kt-webhook's snapshots) give the verdicts decoding per call gives;
 * a zeroed entry is decoded on demand. */
static void test_predecoded_runtimes(void)
{
    json_t *rts = json_array();
    json_array_append_new(rts, parse(RT_JSON));
    struct kt_runtime dec[1] = {{0}}, zero[1] = {{0}};
    struct kt_err err = {0};
    CHECK_OK(kt_validate_decode_runtime(json_array_get(rts, 0), &dec[0], &err));
    CHECK_EQ_STR(dec[0].namespace_, "default");
    json_t *ok = parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                       "\"metadata\":{\"name\":\"j\"},\"spec\":{\"runtimeRef\":{\"name\":\"rt\","
                       "\"kind\":\"TrainingRuntime\"}}}");
    json_t *bad = parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                        "\"metadata\":{\"name\":\"j\"},\"spec\":{\"runtimeRef\":{\"name\":\"rt\","
                        "\"kind\":\"TrainingRuntime\"},\"trainer\":{\"env\":[{\"name\":"
                        "\"PET_NNODES\",\"value\":\"1\"}]}}}");
    const struct kt_runtime *variants[] = {dec, zero, NULL};
    for (size_t i = 0; i < 3; i++) {
        char *t = NULL;
        CHECK_EQ_INT(webhook_problems(ok, rts, variants[i], &t), 0);
        free(t);
        CHECK_EQ_INT(webhook_problems(bad, rts, variants[i], &t), 1);
        CHECK(t && strstr(t, "must not have reserved envs") != NULL);
        free(t);
    }
    /* Negative: a runtime of another namespace is not found, decoded or not. */
    json_object_set_new(json_object_get(ok, "metadata"), "namespace", json_string("other"));
    char *t = NULL;
    CHECK_EQ_INT(webhook_problems(ok, rts, dec, &t), 1);
    CHECK(t && strstr(t, "must be created before the TrainJob") != NULL);
    free(t);
    /* A runtime that cannot be decoded is an error, and leaves rt zeroed. */
    json_t *broken = parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
                           "\"TrainingRuntime\",\"metadata\":{\"name\":\"b\"},\"spec\":{"
                           "\"mlPolicy\":{\"numNodes\":\"x\"}}}");
    struct kt_runtime b = {0};
    CHECK(kt_validate_decode_runtime(broken, &b, &err) != 0);
    CHECK(b.obj == NULL);
    kt_runtime_release(&dec[0]);
    json_decref(broken);
    json_decref(ok);
    json_decref(bad);
    json_decref(rts);
}

/* kt_validate_object_admitted hands back the pruned, defaulted object only when admitted. */
static void test_admitted(void)
{
    struct kt_err err = {0};
    struct kt_vresult r;
    json_t *rts = json_array();
    json_array_append_new(rts, parse(RT_JSON));
    struct kt_vruntimes vr = {.runtimes = rts};
    json_t *tj = parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                       "\"metadata\":{\"name\":\"j\"},\"spec\":{\"runtimeRef\":{\"name\":\"rt\","
                       "\"kind\":\"TrainingRuntime\"},\"runtimePatches\":[{\"manager\":"
                       "\"acme.io/x\"}]}}");
    json_t *admitted = NULL;
    kt_vresult_init(&r);
    CHECK_OK(kt_validate_object_admitted(
        &(struct kt_validate_req){.v = v, .fw = &fw, .obj = tj, .rts = &vr}, &r, &admitted, &err));
    CHECK_EQ_INT(r.len, 0);
    CHECK(admitted != NULL);
    CHECK_EQ_STR(json_string_value(kt_json_path(admitted, "spec.runtimeRef.apiGroup")),
                 "trainer.kubeflow.org");
    CHECK_EQ_STR(json_string_value(json_object_get(
                     json_array_get(kt_json_path(admitted, "spec.runtimePatches"), 0), "time")),
                 "1970-01-01T00:00:00Z");
    CHECK(kt_json_path(tj, "spec.runtimeRef.apiGroup") == NULL); /* input untouched */
    kt_vresult_release(&r);
    json_decref(admitted);
    /* Negative: a denied object gives nothing back. */
    admitted = NULL;
    json_object_set_new(json_object_get(tj, "spec"), "managedBy", json_string("x.io/y"));
    kt_vresult_init(&r);
    CHECK_OK(kt_validate_object_admitted(
        &(struct kt_validate_req){.v = v, .fw = &fw, .obj = tj, .rts = &vr}, &r, &admitted, &err));
    CHECK(r.len > 0);
    CHECK(admitted == NULL);
    kt_vresult_release(&r);
    json_decref(tj);
    json_decref(rts);
}

int main(void)
{
    struct kt_err err = {0};
    kt_mem_init();
    v = kt_validator_new(&err);
    CHECK(v != NULL);
    if (!v) {
        return test_report();
    }
    kt_framework_default(&fw);
    test_every_rule_has_a_twin();
    test_transition_rules();
    test_runtime_transition_and_status_rules();
    test_list_map_correlation();
    test_defaulter();
    test_default_patch();
    test_aggregate_and_strict();
    test_predecoded_runtimes();
    test_admitted();
    kt_validator_free(v);
    return test_report();
}
