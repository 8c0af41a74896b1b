/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugins.c - the built-in plugin table (plugins.h). The framework knows plugins
 * only through the table it is handed; this layer owns which plugins exist and their order. */
#include "common/plugins/plugins.h"
#include "common/base/mem.h"

/* The built-in plugins in the call order common/framework/framework.h states ("Plugins").
 * TrainJobStatus does nothing unless fw->status_server is set: the feature gate. */
static const struct kt_plugin *const builtin[] = {
    &kt_plugin_coscheduling,   &kt_plugin_volcano, &kt_plugin_torch,   &kt_plugin_mpi,
    &kt_plugin_plainml,        &kt_plugin_jax,     &kt_plugin_xgboost, &kt_plugin_flux,
    &kt_plugin_trainjobstatus, &kt_plugin_jobset,
};

void kt_framework_default(struct kt_framework *fw)
{
    /* Every member: the gates (status_server, dra) start off. */
    *fw = (struct kt_framework){.plugins = builtin, .n = KT_ARRAY_SIZE(builtin)};
}
