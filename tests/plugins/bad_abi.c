/* SPDX-License-Identifier: Apache-2.0 */
/* tests/plugins/bad_abi.c - plugins the host must refuse at startup (tests/plugins/tier.sh).
 * Built three times: default = a future ABI major; -DBAD_MINOR = a newer minor than the host
 * knows; -DBAD_CLAIM = claims ComponentBuilder without implementing it. */
#include "api/kt_plugin.h"

static int noop(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    (void)h;
    (void)c;
    (void)state;
    return 0;
}

#if defined(BAD_CLAIM)
KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("BadClaim", KT_EP_VALIDATE | KT_EP_BUILD),
    .validate = noop,
};
#else
KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
#if defined(BAD_MINOR)
    .abi_major = KT_PLUGIN_ABI_MAJOR,
    .abi_minor = KT_PLUGIN_ABI_MINOR + 1,
#else
    .abi_major = KT_PLUGIN_ABI_MAJOR + 1,
    .abi_minor = 0,
#endif
    .size = sizeof(struct kt_plugin_def),
    .points = KT_EP_VALIDATE,
    .name = "BadABI",
    .validate = noop,
};
#endif
