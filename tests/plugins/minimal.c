/* minimal.c - a complete kt plugin: every trainer pod learns its TrainJob's name, and
 * TrainJobs must not ask for more than 64 nodes. Build:
 *   cc -shared -fPIC -I/path/to/kt -o minimal.so minimal.c
 * Use:
 *   ktctl --plugin ./minimal.so render trainjob.yaml
 *   kt-reconciler --plugin /plugins/minimal.so ...; kt-webhook --plugin /plugins/minimal.so ... */
#include <stdlib.h>

#include "api/kt_plugin.h"

/* EnforcePodSpec: runs for every TrainJob the reconciler builds (ktctl render too). */
static int add_name(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    (void)state;
    int32_t i = h->podset_find(c, NULL, "trainer"); /* the job with ancestor `trainer` */
    if (i < 0) {
        return 0; /* self-gate: nothing to do for this runtime */
    }
    /* NULL container = every container of the pod set; 1 = none there, not an error. */
    if (h->add_env(c, (uint32_t)i, NULL, "TRAINJOB_NAME", h->trainjob_name(c)) < 0) {
        return h->fail(c, "cannot add TRAINJOB_NAME");
    }
    return 0;
}

/* CustomValidation: runs in the admission webhook (and ktctl validate / render). */
static int max_nodes(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    (void)state;
    const char *n = h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/numNodes"); /* borrowed */
    if (n && strtol(n, NULL, 10) > 64) {
        h->field_error(c, KT_FIELD_INVALID, "spec.trainer.numNodes", n, "must be at most 64");
    }
    return 0;
}

KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("Minimal", KT_EP_ENFORCE_PODSPEC | KT_EP_VALIDATE),
    .enforce_podspec = add_name,
    .validate = max_nodes,
};
