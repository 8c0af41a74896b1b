/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_xgboost.c - the XGBoost plugin
 * (docs/internals/upstream.md#plainml-jax-xgboost-flux): trainer count, DMLC_* envs (workers =
 * count x GPUs per node, at least 1 per node), the tracker port, and the reserved-env validation.
 * Matches upstream `pkg/runtime/framework/plugins/xgboost`. */
#include "common/plugins/plugins.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

#define DMLC_URI "DMLC_TRACKER_URI"
#define DMLC_PORT "DMLC_TRACKER_PORT"
#define DMLC_TASK "DMLC_TASK_ID"
#define DMLC_NUM "DMLC_NUM_WORKER"

static bool is_xgboost(const struct kt_runtime *rt)
{
    return rt->ml.present && rt->ml.kind == KT_POLICY_XGBOOST;
}

static json_t *dmlc_envs(const struct kt_trainjob *tj, int64_t workers)
{
    char *uri = kt_xasprintf("%s-node-0-0.%s", tj->name, tj->name);
    char *port = kt_xasprintf("%d", KT_TRAINER_PORT);
    char *num = kt_xasprintf("%lld", (long long)workers);
    json_t *env = json_array();
    json_array_append_new(env, kt_env_value(DMLC_URI, uri));
    json_array_append_new(env, kt_env_value(DMLC_PORT, port));
    json_array_append_new(env, kt_env_field_ref(DMLC_TASK, KT_COMPLETION_INDEX_PATH));
    json_array_append_new(env, kt_env_value(DMLC_NUM, num));
    free(uri);
    free(port);
    free(num);
    return env;
}

static int xgboost_enforce(struct kt_build *b, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    (void)err;
    if (!is_xgboost(b->rt)) {
        return 0;
    }
    struct kt_podset *ps = NULL;
    json_t *c = kt__trainer_node(b, &ps);
    if (!c) {
        return 0;
    }
    int64_t gpus = kt_build_gpus(b);
    json_t *env = dmlc_envs(tj, ps->count * (gpus > 0 ? gpus : 1));
    kt_upsert_envs(c, env);
    json_decref(env);
    json_t *port = json_pack("{s:i}", "containerPort", KT_TRAINER_PORT);
    kt_upsert_port(c, port);
    json_decref(port);
    return 0;
}

static void xgboost_validate(const struct kt_validation *v, struct kt_ferrs *errs,
                             struct kt_strv *warnings)
{
    static const char *const reserved[] = {DMLC_URI, DMLC_PORT, DMLC_TASK, DMLC_NUM};
    size_t i;
    json_t *e;
    (void)warnings;
    if (!is_xgboost(v->rt) || !v->tj->trainer.present) {
        return;
    }
    json_array_foreach(v->tj->trainer.env, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        for (size_t k = 0; n && k < KT_ARRAY_SIZE(reserved); k++) {
            if (strcmp(n, reserved[k]) == 0) {
                char *path = kt_xasprintf("spec.trainer.env[%zu]", i);
                kt_ferrs_add(errs, KT_FERR_FORBIDDEN, path, NULL, KT_GO_ANY,
                             "%s is reserved for the XGBoost runtime", n);
                free(path);
            }
        }
    }
}

const struct kt_plugin kt_plugin_xgboost = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "XGBoost",
    .validate = xgboost_validate,
    .enforce_ml_policy = xgboost_enforce,
};
