/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/dra.h - Dynamic Resource Allocation for TrainJobs: upstream's KEP-2782, which
 * kt carries provisionally behind the feature gate DynamicResourceAllocation
 * (docs/api.md#dynamic-resource-allocation; the choices kt made: docs/compatibility.md).
 *
 * The fields: spec.trainer.resourceClaimsPerNode, a runtime patch's pod-spec resourceClaims and
 * container resources.claims. kt_info_build_gated() (runtime_info.h) applies them; this module
 * counts the devices they request, for numProcPerNode "auto", and holds the webhook's checks.
 * Pure: the claim templates come in through a getter (framework.c passes struct kt_view's). */
#ifndef KT_DRA_H
#define KT_DRA_H

#include <jansson.h>
#include <stdint.h>

#include "api/types.h"
#include "common/base/fielderr.h"
#include "common/framework/runtime_info.h"

#define KT_DRA_API_VERSION "resource.k8s.io/v1"

/* Where kt_dra_devices reads an object: the one of apiVersion/kind in ns/name, or NULL.
 * Borrowed from ctx's owner for the call. */
struct kt_dra_getter {
    const json_t *(*get)(void *ctx, const char *api_version, const char *kind, const char *ns,
                         const char *name);
    void *ctx;
};

/* The GPU-class devices the trainer node container's claims request: for each entry of
 * resources.claims of the `node` container of the first job named `node` or with ancestor
 * trainer, its pod claim's ResourceClaimTemplate (spec.spec.devices) or ResourceClaim
 * (spec.devices), read through g (get NULL: nothing exists) in tj's namespace; the sum over its
 * requests (only the one the entry names, when it names one) of `exactly.count` (1 when absent)
 * whose exactly.deviceClassName contains "gpu" in any case and whose allocationMode is ExactCount
 * (the default). firstAvailable requests, allocationMode All and objects that do not exist
 * count 0. Capped at INT32_MAX. */
int64_t kt_dra_devices(const struct kt_info *info, const struct kt_trainjob *tj,
                       const struct kt_dra_getter *g);

/* The webhook's checks with the gate on, on Info built with it: resourceClaimsPerNode needs a
 * job that gets the per-node resources (kt_podset_gets_node_resources); every `containers` entry of
 * a resourceClaimsPerNode claim names a container or init container of each trainer node pod, and
 * every resources.claims entry of every container and init container names one of its pod's
 * resourceClaims. Appends to errs. Does not retain its inputs. */
void kt_dra_validate(const struct kt_info *info, const struct kt_trainjob *tj,
                     struct kt_ferrs *errs);

/* With the gate off: a Forbidden error for spec.trainer.resourceClaimsPerNode and for each
 * runtime patch's pod-spec resourceClaims and (init) container resources, unless old (the
 * object an UPDATE replaces; NULL on create) holds the same value at the same path. tj and
 * old are raw TrainJob objects. Appends to errs. Does not retain its inputs. */
void kt_dra_validate_gate_off(const json_t *tj, const json_t *old, struct kt_ferrs *errs);

#endif
