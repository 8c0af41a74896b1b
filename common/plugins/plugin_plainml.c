/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_plainml.c - the PlainML plugin
 * (docs/internals/upstream.md#plainml-jax-xgboost-flux): numNodes and the user env for runtimes
 * without torch/mpi/jax (no mlPolicy, xgboost, flux). Matches upstream
 * `pkg/runtime/framework/plugins/plainml`. */
#include "common/plugins/plugins.h"

#include <string.h>

json_t *kt__trainer_node(struct kt_build *b, struct kt_podset **ps)
{
    const struct kt_trainjob *tj = b->tj;
    struct kt_podset *set = kt_info_podset_by_ancestor(&b->info, KT_ANCESTOR_TRAINER);
    if (ps) {
        *ps = set;
    }
    if (!set || !tj->trainer.present) {
        return NULL;
    }
    if (tj->trainer.num_nodes.has) {
        set->count = tj->trainer.num_nodes.v;
    }
    return kt_podset_container(set, KT_NODE);
}

static int plainml_enforce(struct kt_build *b, struct kt_err *err)
{
    const struct kt_runtime *rt = b->rt;
    const struct kt_trainjob *tj = b->tj;
    enum kt_policy_kind k = rt->ml.present ? rt->ml.kind : KT_POLICY_NONE;
    (void)err;
    if (k == KT_POLICY_TORCH || k == KT_POLICY_MPI || k == KT_POLICY_JAX || !tj->trainer.present) {
        return 0;
    }
    json_t *c = kt__trainer_node(b, NULL);
    if (c && tj->trainer.env) {
        json_t *env = kt_env_convert(tj->trainer.env);
        kt_upsert_envs(c, env);
        json_decref(env);
    }
    return 0;
}

const struct kt_plugin kt_plugin_plainml = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "PlainML",
    .enforce_ml_policy = plainml_enforce,
};
