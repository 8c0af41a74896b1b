/* SPDX-License-Identifier: Apache-2.0 */
/* tests/plugins/status_stub.c - a TrainJobStatus plugin, to test the "exactly one active"
 * rule (tests/plugins/tier.sh): refused next to the built-in one unless the host is given
 * --trainjob-status-plugin StatusStub. Its status: the current one plus a condition
 * `ExternalStatus` (ktctl does not run status; the rule is checked at load). */
#include "api/kt_plugin.h"

static int stub_status(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    (void)state;
    return h->set_status(c, "{\"conditions\":[{\"type\":\"ExternalStatus\",\"status\":\"True\","
                            "\"reason\":\"Stub\",\"message\":\"set by status_stub\"}]}");
}

KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("StatusStub", KT_EP_STATUS),
    .status = stub_status,
};
