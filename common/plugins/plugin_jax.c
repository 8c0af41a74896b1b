/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_jax.c - the JAX plugin
 * (docs/internals/upstream.md#plainml-jax-xgboost-flux): trainer count, JAX_* envs and the
 * coordinator port. Validate is a no-op upstream (JAX envs are not reserved), so the
 * plugin implements none. Matches upstream `pkg/runtime/framework/plugins/jax`. */
#include "common/plugins/plugins.h"

#include <stdlib.h>

#include "common/base/mem.h"

static int jax_enforce(struct kt_build *b, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    (void)err;
    if (!b->rt->ml.present || b->rt->ml.kind != KT_POLICY_JAX) {
        return 0;
    }
    struct kt_podset *ps = NULL;
    json_t *c = kt__trainer_node(b, &ps);
    if (!c) {
        return 0;
    }
    char *n = kt_xasprintf("%lld", (long long)ps->count);
    char *addr = kt_xasprintf("%s-node-0-0.%s:%d", tj->name, tj->name, KT_TRAINER_PORT);
    json_t *env = json_array();
    json_array_append_new(env, kt_env_value("JAX_NUM_PROCESSES", n));
    json_array_append_new(env, kt_env_field_ref("JAX_PROCESS_ID", KT_COMPLETION_INDEX_PATH));
    json_array_append_new(env, kt_env_value("JAX_COORDINATOR_ADDRESS", addr));
    kt_upsert_envs(c, env);
    json_t *port = json_pack("{s:i}", "containerPort", KT_TRAINER_PORT);
    kt_upsert_port(c, port);
    json_decref(port);
    json_decref(env);
    free(n);
    free(addr);
    return 0;
}

const struct kt_plugin kt_plugin_jax = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "JAX",
    .enforce_ml_policy = jax_enforce,
};
