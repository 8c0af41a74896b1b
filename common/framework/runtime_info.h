/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/runtime_info.h - the runtime Info and its PodSets
 * (docs/internals/upstream.md#runtime-info-and-pod-sets), plus the container, env, port, volume and
 * resource helpers the plugins share (docs/internals/upstream.md#upserts-and-env-order).
 *
 * Info owns the merged JobSetSpec (runtime template + runtimePatches + resource merge); each
 * PodSet points INTO that spec, so what a plugin writes to a PodSet's containers is what the
 * JobSet builder emits (upstream copies PodSets and syncs them back by index with the same
 * upsert keys; writing in place gives the same result). No I/O. */
#ifndef KT_RUNTIME_INFO_H
#define KT_RUNTIME_INFO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/types.h"
#include "common/base/err.h"
#include "common/base/str.h"

#define KT_ANCESTOR_LABEL "trainer.kubeflow.org/trainjob-ancestor-step"
#define KT_ANCESTOR_TRAINER "trainer"
#define KT_ANCESTOR_DATASET "dataset-initializer"
#define KT_ANCESTOR_MODEL "model-initializer"
#define KT_NODE "node"
#define KT_LAUNCHER "launcher"
#define KT_TRAINER_PORT 29500
#define KT_COMPLETION_INDEX_PATH "metadata.annotations['batch.kubernetes.io/job-completion-index']"

/* One replicated job. Pointers are borrowed from the owning Info's spec. */
struct kt_podset {
    const char *name;         /* replicated job name ("" when unnamed) */
    const char *ancestor;     /* ancestor label value, NULL when none */
    int64_t count;            /* pods per job, >= 0 after plugins (numNodes 0 gives 0) */
    json_t *rjob;             /* the replicatedJobs[] item */
    json_t *pod_spec;         /* rjob.template.spec.template.spec (created when absent) */
    struct kt_strv endpoints; /* owned; filled by the JobSet PreBuildSync */
};

struct kt_info {
    json_t *labels;          /* owned object: JobSet metadata labels */
    json_t *annotations;     /* owned object: JobSet metadata annotations */
    json_t *pod_labels;      /* owned object: Scheduler pod labels for every pod template */
    json_t *pod_annotations; /* owned object: Scheduler pod annotations */
    const struct kt_runtime *runtime; /* borrowed; policies are runtime->ml and runtime->pg */
    json_t *spec;                     /* owned: the merged JobSetSpec */
    struct kt_podset *podsets;        /* owned array, one per replicated job, same order */
    size_t n_podsets;
};

/* Build Info for tj against rt (docs/internals/upstream.md#runtime-info-and-pod-sets steps 1-4).
 * Does not retain tj; rt is borrowed until kt_info_release. Fails (KT_EINVAL) only on a runtime
 * template of the wrong shape (replicatedJobs not a list of objects). On failure *out is zeroed. */
KT_MUST_CHECK int kt_info_build(struct kt_info *out, const struct kt_runtime *rt,
                                const struct kt_trainjob *tj, struct kt_err *err);
/* kt_info_build with the feature gate DynamicResourceAllocation as given: when dra is true the
 * runtime patches' resourceClaims and container resources are merged and
 * spec.trainer.resourceClaimsPerNode is applied to the pod specs that get resourcesPerNode
 * (docs/api.md#dynamic-resource-allocation); when false those fields are ignored. */
KT_MUST_CHECK int kt_info_build_gated(struct kt_info *out, const struct kt_runtime *rt,
                                      const struct kt_trainjob *tj, bool dra, struct kt_err *err);
/* Free what Info owns. Accepts a zeroed struct. */
void kt_info_release(struct kt_info *info);

/* True for the replicated jobs that get spec.trainer's per-node resources (and claims): the
 * trainer's (ancestor trainer, with an mlPolicy), and the MPI launcher when it runs as a node. */
bool kt_podset_gets_node_resources(const struct kt_runtime *rt, const struct kt_podset *ps);

/* Lookups; results borrowed from info, valid until kt_info_release. NULL when absent. */
struct kt_podset *kt_info_podset_by_ancestor(const struct kt_info *info, const char *ancestor);
struct kt_podset *kt_info_podset_by_name(const struct kt_info *info, const char *name);
json_t *kt_podset_container(const struct kt_podset *ps, const char *name);
json_t *kt_podset_init_container(const struct kt_podset *ps, const char *name);

/* The pod's effective requests (k8s PodRequests): max(sum of containers and restartable
 * init containers, the largest init-container step) plus overhead, per resource, as
 * canonical quantity strings. Used by the PodGroup plugins
 * (docs/internals/upstream.md#coscheduling-and-volcano). Caller owns the result; free with
 * json_decref(). Fails (KT_EINVAL/KT_ERANGE) on an unparsable quantity. */
json_t *kt_podset_single_pod_requests(const struct kt_podset *ps, struct kt_err *err);

/* "Resources per node" for ML plugins: trainer.resourcesPerNode if set, else the `node`
 * container's resources of the first job named `node` or with ancestor trainer. Borrowed;
 * NULL when none. */
const json_t *kt_info_resources_per_node(const struct kt_info *info, const struct kt_trainjob *tj);
/* GPU count: first resource whose name contains "gpu" (any case) in requests, else in
 * limits when that yields 0; rounded up. CPU count: requests.cpu when non-zero else
 * limits.cpu, rounded up. 0 when absent or unparsable. */
int64_t kt_resources_gpu_count(const json_t *resources);
int64_t kt_resources_cpu_count(const json_t *resources);
/* A Kubernetes quantity (string or number) rounded up to an integer; -1 when invalid. */
int64_t kt_quantity_ceil_i64(const json_t *q);

/* Rewrite every quantity of a JobSetSpec that upstream holds as a typed Quantity (container
 * and init-container resources, pod overhead, emptyDir sizeLimit, volumeClaimPolicies
 * templates' resources) in canonical form (docs/internals/upstream.md#quantities). Unparsable
 * values are left alone. */
void kt_canonical_quantities(json_t *jobset_spec);

/* Upserts (docs/internals/upstream.md#upserts-and-env-order): replace in place when the key
 * matches, else append. Each copies its item (does not retain it). env by name, ports by
 * containerPort or name, volumes by name, volumeMounts by mountPath. The list member is created
 * when absent. */
void kt_upsert_env(json_t *container, const json_t *env);
void kt_upsert_envs(json_t *container, const json_t *envs);
void kt_upsert_port(json_t *container, const json_t *port);
void kt_upsert_volume(json_t *pod_spec, const json_t *volume);
void kt_upsert_mount(json_t *container, const json_t *mount);
/* {"name":name,"value":value}. Caller owns the result; free with json_decref(). */
json_t *kt_env_value(const char *name, const char *value);
/* {"name":name,"valueFrom":{"fieldRef":{"fieldPath":path}}}. Caller owns the result. */
json_t *kt_env_field_ref(const char *name, const char *path);
/* TrainJob env list -> the env the control plane writes: name plus value, or valueFrom
 * limited to fieldRef/resourceFieldRef/configMapKeyRef/secretKeyRef (fileKeyRef dropped).
 * NULL gives an empty array. Caller owns the result; free with json_decref(). */
json_t *kt_env_convert(const json_t *envs);

/* True when the JSON array of strings equals the n C strings. */
bool kt_json_strings_eq(const json_t *arr, const char *const *want, size_t n);

#endif
