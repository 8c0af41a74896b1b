/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_plugin_abi.c - the host side of the public plugin ABI (api/kt_plugin.h,
 * common/plugins/plugin_abi.c) exercised in-process through an adapter entry, plus the loader's
 * flag parsing and table building without any shared object (tests/plugins/tier.sh covers dlopen).
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "api/kt_plugin.h"
#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/plugins/plugin_loader.h"
#include "common/plugins/plugins.h"

static const char *TJ =
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
    "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"u1\",\"labels\":{\"a/b\":\"x\","
    "\"t~\":\"y\"}},\"spec\":{\"runtimeRef\":{\"name\":\"rt\"},\"trainer\":{\"numNodes\":2,"
    "\"env\":[{\"name\":\"E\",\"value\":\"1\"}]}}}";
static const char *RT =
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
    "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"rt\"},\"spec\":{"
    "\"template\":{\"spec\":{\"network\":{\"subdomain\":\"sd\"},\"replicatedJobs\":[{\"name\":"
    "\"ps\",\"replicas\":2,\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{"
    "\"name\":\"node\",\"image\":\"i\"}]}}}}},{\"name\":\"node\",\"template\":{\"metadata\":{"
    "\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"
    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"i\"},{\"name\":"
    "\"side\",\"image\":\"s\"}],\"initContainers\":[{\"name\":\"init\",\"image\":\"i\"}]}}}}}]}}}}";

/* What the test plugin saw, filled by its callbacks. */
struct seen {
    int calls;
    int rc[24];
    char text[8][160];
    const char *fail_with; /* non-NULL: the next callback fails with it */
};

static void put(struct seen *s, int k, const char *v)
{
    snprintf(s->text[k], sizeof(s->text[k]), "%s", v ? v : "(null)");
}

static int cb_ml(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    struct seen *s = state;
    char host[128];
    s->calls++;
    if (s->fail_with) {
        return h->fail(c, s->fail_with);
    }
    int32_t t = h->podset_find(c, NULL, "trainer");
    s->rc[0] = (int)h->podset_count(c);
    s->rc[1] = t;
    s->rc[2] = h->podset_find(c, "ps", NULL);
    s->rc[3] = h->podset_find(c, "nope", NULL);
    s->rc[4] = (int)h->podset_pods(c, (uint32_t)t);
    s->rc[5] = (int)h->podset_replicas(c, 0);
    s->rc[6] = h->podset_set_pods(c, (uint32_t)t, 3);
    s->rc[7] = h->add_env(c, (uint32_t)t, "node", "X", "1");
    s->rc[8] = h->add_env(c, (uint32_t)t, "missing", "X", "1");
    s->rc[9] = h->add_env_json(c, (uint32_t)t, NULL, "{\"name\":\"ALL\",\"value\":\"a\"}");
    s->rc[10] = h->add_env_json(c, (uint32_t)t, NULL, "[not json");
    s->rc[11] = h->add_port(c, (uint32_t)t, "node", 2222, "p");
    s->rc[12] = h->add_volume(c, (uint32_t)t, "{\"name\":\"v\",\"emptyDir\":{}}");
    s->rc[13] =
        h->add_volume_mount(c, (uint32_t)t, "init", "{\"name\":\"v\",\"mountPath\":\"/v\"}");
    s->rc[14] = h->set_pod_label(c, "team", "a");
    s->rc[15] = h->add_object(c, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}");
    s->rc[16] = h->podset_hostname(c, (uint32_t)t, 0, 1, host, sizeof(host));
    char tiny[4];
    s->rc[17] = h->podset_hostname(c, (uint32_t)t, 0, 1, tiny, sizeof(tiny));
    s->rc[18] = h->add_env(c, 99, NULL, "X", "1");
    s->rc[19] = h->add_port(c, (uint32_t)t, "node", 70000, NULL);
    put(s, 0, host);
    put(s, 1, h->get(c, KT_DOC_TRAINJOB, "/metadata/labels/a~1b"));
    put(s, 2, h->get(c, KT_DOC_TRAINJOB, "/metadata/labels/t~0"));
    put(s, 3, h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/env/0"));
    put(s, 4, h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/numNodes"));
    put(s, 5, h->get(c, KT_DOC_JOBSET_SPEC, "/network/subdomain"));
    put(s, 6, h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/env/x"));
    put(s, 7, h->podset_get(c, 0, "/name"));
    return 0;
}

static int cb_build(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    struct seen *s = state;
    s->rc[20] = h->add_env(c, 0, NULL, "LATE", "1");
    s->rc[21] = h->add_object(c, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                                 "\"name\":\"j-x\",\"namespace\":\"ns\"}}");
    s->rc[22] = h->add_object(c, "{\"kind\":\"ConfigMap\"}");
    s->rc[23] = h->field_error(c, KT_FIELD_INVALID, "spec", NULL, "not here");
    return 0;
}

static int cb_validate(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    struct seen *s = state;
    if (s->fail_with) {
        return h->fail(c, s->fail_with);
    }
    s->rc[0] = h->field_error(c, KT_FIELD_INVALID, "spec.trainer.numNodes",
                              h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/numNodes"), "too many");
    s->rc[1] = h->field_error(c, KT_FIELD_REQUIRED, "metadata.labels", NULL, "need it");
    s->rc[2] = h->field_error(c, 7, "x", NULL, "bad type");
    s->rc[3] = h->warning(c, "careful");
    s->rc[4] = h->add_env(c, 0, NULL, "X", "1");
    s->rc[5] = (int)h->podset_count(c);
    put(s, 0, h->get(c, KT_DOC_OLD_TRAINJOB, ""));
    return 0;
}

static int cb_status(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    struct seen *s = state;
    s->rc[0] = h->set_status(c, "[1]");
    put(s, 0, h->trainjob_uid(c));
    return h->set_status(c, "{\"conditions\":[]}");
}

static const char *const watch_cm[] = {"v1/ConfigMap", NULL};

static const struct kt_plugin_def def = {
    KT_PLUGIN_DEF_INIT("Test", KT_EP_WATCH | KT_EP_VALIDATE | KT_EP_ENFORCE_ML_POLICY |
                                   KT_EP_BUILD | KT_EP_STATUS),
    .watches = watch_cm,
    .validate = cb_validate,
    .enforce_ml_policy = cb_ml,
    .build = cb_build,
    .status = cb_status,
};

struct fixture {
    struct seen seen;
    struct kt_plugin_ext ext;
    struct kt_plugin entry;
    struct kt_plugin nostatus;
    const struct kt_plugin *table[16];
    struct kt_framework fw;
    struct kt_trainjob tj;
    struct kt_runtime rt;
};

static void setup(struct fixture *f)
{
    struct kt_framework builtin;
    memset(f, 0, sizeof(*f));
    kt_framework_default(&builtin);
    f->ext.def = &def;
    f->ext.state = &f->seen;
    f->entry.abi = KT_PLUGIN_ABI;
    f->entry.size = sizeof(f->entry);
    f->entry.name = def.name;
    f->entry.adapter = &kt__plugin_abi_adapter;
    f->entry.ext = &f->ext;
    f->nostatus = kt_plugin_jobset;
    f->nostatus.status = NULL;
    for (size_t i = 0; i < builtin.n; i++) {
        f->table[i] = builtin.plugins[i] == &kt_plugin_jobset ? &f->nostatus : builtin.plugins[i];
    }
    f->table[builtin.n] = &f->entry;
    f->fw.plugins = f->table;
    f->fw.n = builtin.n + 1;
    CHECK_OK(kt_trainjob_decode(kt_json_parse(TJ, strlen(TJ), NULL), &f->tj, NULL));
    CHECK_OK(kt_runtime_decode(kt_json_parse(RT, strlen(RT), NULL), &f->rt, NULL));
}

static void teardown(struct fixture *f)
{
    kt_trainjob_release(&f->tj);
    kt_runtime_release(&f->rt);
}

static void check_ml_results(const struct seen *s)
{
    CHECK_EQ_INT(s->calls, 1);
    CHECK_EQ_INT(s->rc[0], 2);
    CHECK_EQ_INT(s->rc[1], 1);
    CHECK_EQ_INT(s->rc[2], 0);
    CHECK_EQ_INT(s->rc[3], -1);
    CHECK_EQ_INT(s->rc[4], 2); /* PlainML ran first: numNodes */
    CHECK_EQ_INT(s->rc[5], 2);
    CHECK_EQ_INT(s->rc[6], 0);
    CHECK_EQ_INT(s->rc[7], 0);
    CHECK_EQ_INT(s->rc[8], 1);
    CHECK_EQ_INT(s->rc[9], 0);
    CHECK_EQ_INT(s->rc[10], -1);
    CHECK_EQ_INT(s->rc[11], 0);
    CHECK_EQ_INT(s->rc[12], 0);
    CHECK_EQ_INT(s->rc[13], 0);
    CHECK_EQ_INT(s->rc[14], 0);
    CHECK_EQ_INT(s->rc[15], -1); /* add_object outside ComponentBuilder */
    CHECK_EQ_INT(s->rc[16], 0);
    CHECK_EQ_INT(s->rc[17], -1); /* does not fit */
    CHECK_EQ_INT(s->rc[18], 1);  /* no such pod set */
    CHECK_EQ_INT(s->rc[19], -1); /* bad port */
    CHECK_EQ_STR(s->text[0], "j-node-0-1.sd");
    CHECK_EQ_STR(s->text[1], "x");
    CHECK_EQ_STR(s->text[2], "y");
    CHECK_EQ_STR(s->text[3], "{\"name\":\"E\",\"value\":\"1\"}");
    CHECK_EQ_STR(s->text[4], "2");
    CHECK_EQ_STR(s->text[5], "sd");
    CHECK_EQ_STR(s->text[6], "(null)");
    CHECK_EQ_STR(s->text[7], "ps");
    CHECK_EQ_INT(s->rc[20], -1); /* pod sets are read-only in ComponentBuilder */
    CHECK_EQ_INT(s->rc[21], 0);
    CHECK_EQ_INT(s->rc[22], -1);
    CHECK_EQ_INT(s->rc[23], -1);
}

static void test_build(void)
{
    struct fixture f;
    struct kt_err err = {0};
    json_t *out = NULL;
    setup(&f);
    CHECK_OK(kt_framework_check(&f.fw, &err));
    CHECK_OK(kt_framework_build(&f.fw, &f.tj, &f.rt, NULL, &out, &err));
    check_ml_results(&f.seen);
    CHECK_EQ_INT((int)json_array_size(out), 3); /* snapshot, JobSet, the plugin's ConfigMap */
    json_t *cm = json_array_get(out, 2);
    CHECK_EQ_STR(kt_json_str(json_object_get(cm, "metadata"), "name", ""), "j-x");
    CHECK_EQ_STR(json_string_value(kt_json_path(cm, "metadata.labels")
                                       ? json_object_get(kt_json_path(cm, "metadata.labels"),
                                                         KT_TRAINJOB_NAME_LABEL)
                                       : NULL),
                 "j");
    json_t *refs = kt_json_path(cm, "metadata.ownerReferences");
    CHECK_EQ_STR(kt_json_str(json_array_get(refs, 0), "uid", ""), "u1");
    char *js = kt_json_dump(json_array_get(out, 1));
    CHECK_CONTAINS(js, "\"parallelism\":3");
    CHECK_CONTAINS(js, "{\"name\":\"X\",\"value\":\"1\"}");
    CHECK_CONTAINS(js, "{\"containerPort\":2222,\"name\":\"p\"}");
    CHECK_CONTAINS(js, "{\"name\":\"v\",\"emptyDir\":{}}");
    CHECK_CONTAINS(js, "{\"name\":\"v\",\"mountPath\":\"/v\"}");
    CHECK_CONTAINS(js, "\"team\":\"a\"");
    CHECK(strstr(js, "LATE") == NULL);
    /* ALL went to both regular containers of the trainer pod set, not the init one. */
    const char *first = strstr(js, "\"ALL\"");
    CHECK(first && strstr(first + 1, "\"ALL\"") &&
          !strstr(strstr(first + 1, "\"ALL\"") + 1, "\"ALL\""));
    free(js);
    json_decref(out);

    f.seen.fail_with = "boom";
    CHECK(kt_framework_build(&f.fw, &f.tj, &f.rt, NULL, &out, &err) != 0);
    CHECK(out == NULL);
    CHECK_EQ_STR(err.msg, "plugin Test: boom");
    teardown(&f);
}

static void test_validate(void)
{
    struct fixture f;
    struct kt_err err = {0};
    struct kt_ferrs errs;
    struct kt_strv warnings;
    setup(&f);
    kt_ferrs_init(&errs);
    kt_strv_init(&warnings);
    struct kt_framework_validate_req in = {.tj = &f.tj, .rt = &f.rt};
    CHECK_OK(kt_framework_validate(&f.fw, &in, &errs, &warnings, &err));
    CHECK_EQ_INT(f.seen.rc[0], 0);
    CHECK_EQ_INT(f.seen.rc[1], 0);
    CHECK_EQ_INT(f.seen.rc[2], -1);
    CHECK_EQ_INT(f.seen.rc[3], 0);
    CHECK_EQ_INT(f.seen.rc[4], -1);
    CHECK_EQ_INT(f.seen.rc[5], 2);
    CHECK_EQ_STR(f.seen.text[0], "(null)");
    char *s = kt_ferrs_string(&errs);
    CHECK_EQ_STR(s, "[spec.trainer.numNodes: Invalid value: 2: too many, metadata.labels: "
                    "Required value: need it]");
    free(s);
    CHECK_EQ_INT((int)warnings.len, 1);
    CHECK_EQ_STR(warnings.items[0], "careful");
    kt_ferrs_release(&errs);
    kt_ferrs_init(&errs);
    f.seen.fail_with = "cannot decide";
    in.old = &f.tj;
    CHECK_OK(kt_framework_validate(&f.fw, &in, &errs, &warnings, &err));
    s = kt_ferrs_string(&errs);
    CHECK_EQ_STR(s, "spec: Internal error: plugin Test: cannot decide");
    free(s);
    kt_ferrs_release(&errs);
    kt_strv_release(&warnings);
    teardown(&f);
}

static void test_status(void)
{
    struct fixture f;
    struct kt_err err = {0};
    json_t *out = NULL;
    setup(&f);
    CHECK_OK(kt_framework_status(&f.fw, &f.tj, NULL, &out, &err));
    CHECK_EQ_INT(f.seen.rc[0], -1); /* not an object */
    CHECK_EQ_STR(f.seen.text[0], "u1");
    char *s = kt_json_dump(out);
    CHECK_EQ_STR(s, "{\"conditions\":[]}");
    free(s);
    json_decref(out);
    /* The built-in JobSet status back in the table: two TrainJobStatus plugins. */
    f.table[8] = &kt_plugin_jobset;
    CHECK(kt_framework_check(&f.fw, &err) != 0);
    CHECK_EQ_STR(err.msg, "too many TrainJobStatus plugins are registered");
    teardown(&f);
}

static void test_flags(void)
{
    struct kt_plugin_flags fl;
    char a0[] = "x", a1[] = "--plugin", a2[] = "a.so,k=v", a3[] = "--plugin=b.so";
    char a4[] = "--trainjob-status-plugin", a5[] = "S", a6[] = "--pluginx", a7[] = "--plugin";
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, NULL};
    int argc = 8;
    int i = 1;
    kt_plugin_flags_init(&fl);
    CHECK_EQ_INT(kt_plugin_flags_parse(&fl, argc, argv, &i), 1);
    CHECK_EQ_INT(i, 2);
    i = 3;
    CHECK_EQ_INT(kt_plugin_flags_parse(&fl, argc, argv, &i), 1);
    i = 4;
    CHECK_EQ_INT(kt_plugin_flags_parse(&fl, argc, argv, &i), 1);
    CHECK_EQ_INT(i, 5);
    i = 6;
    CHECK_EQ_INT(kt_plugin_flags_parse(&fl, argc, argv, &i), 0);
    i = 7;
    CHECK_EQ_INT(kt_plugin_flags_parse(&fl, argc, argv, &i), -1);
    CHECK_EQ_INT((int)fl.specs.len, 2);
    CHECK_EQ_STR(fl.specs.items[0], "a.so,k=v");
    CHECK_EQ_STR(fl.specs.items[1], "b.so");
    CHECK_EQ_STR(fl.status_plugin, "S");
    CHECK(strstr(kt_plugin_flags_usage(), "--plugin FILE") != NULL);
    kt_plugin_flags_release(&fl);
}

static void test_load(void)
{
    struct kt_plugin_flags fl;
    struct kt_plugin_set set;
    struct kt_err err = {0};
    struct kt_framework builtin;
    kt_framework_default(&builtin);
    kt_plugin_flags_init(&fl);
    CHECK_OK(kt_plugin_set_load(&set, &fl, &err));
    CHECK_EQ_INT((int)set.fw.n, (int)builtin.n);
    CHECK(set.fw.plugins[builtin.n - 1]->status != NULL); /* the built-in JobSet (last) stays */
    kt_plugin_set_release(&set);
    fl.status_plugin = "Nope";
    CHECK(kt_plugin_set_load(&set, &fl, &err) != 0);
    CHECK_CONTAINS(err.msg, "--trainjob-status-plugin Nope");
    fl.status_plugin = NULL;
    kt_strv_push(&fl.specs, "/nonexistent/p.so,cfg");
    CHECK(kt_plugin_set_load(&set, &fl, &err) != 0);
    CHECK_CONTAINS(err.msg, "plugin /nonexistent/p.so: cannot load");
    CHECK(set.fw.n == 0 && set.table == NULL);
    kt_plugin_flags_release(&fl);
    CHECK(kt__plugin_host()->abi_major == KT_PLUGIN_ABI_MAJOR);
    CHECK(kt__plugin_host()->size == sizeof(struct kt_plugin_host));
}

int main(void)
{
    kt_mem_init();
    test_build();
    test_validate();
    test_status();
    test_flags();
    test_load();
    return test_report();
}
