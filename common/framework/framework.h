/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/framework.h - the runtime framework: plugin table, build, validation and status
 * pipelines (docs/internals/upstream.md#runtime-registry to #extension-points, #runtime-snapshots).
 *
 * Pure: no I/O, clock or globals. What exists in the cluster and any entropy come in
 * through struct kt_view; the reconciler, the webhook and ktctl all call these functions,
 * so `ktctl render` prints exactly what the reconciler applies.
 *
 * ## Plugins
 *
 * A plugin is a `const struct kt_plugin` with a name and one function pointer per extension
 * point; NULL means "does not implement it". Plugins self-gate on their own policy (the torch
 * plugin returns at once when the runtime has no mlPolicy.torch).
 *
 * The framework calls the plugins of one extension point in TABLE ORDER, which is fixed and
 * documented (upstream iterates a Go map, so its order is random;
 * docs/internals/upstream.md#quirk-1):
 *
 *     CoScheduling, Volcano, Torch, MPI, PlainML, JAX, XGBoost, Flux, TrainJobStatus, JobSet
 *
 * Consequences: component objects are emitted PodGroups first, then MPI/Flux ConfigMaps and
 * Secrets and the status server's `<trainjob>-tls-config` ConfigMap, then the JobSet; PlainML
 * upserts the user env before XGBoost adds its DMLC_* vars. Plugins not built yet keep their slot
 * in this order when added.
 *
 * Adding a plugin = one file common/plugins/plugin_<name>.c defining `const struct kt_plugin
 * kt_plugin_<name>`, its declaration in common/plugins/plugins.h, and one entry in the table in
 * common/plugins/plugins.c at its documented position (common/README.md).
 *
 * Writing a plugin:
 * - Self-gate first (`if (!b->rt->ml.present || b->rt->ml.kind != KT_POLICY_MPI) return 0;`).
 * - PodSets point INTO b->info.spec: change containers, volumes and init containers in
 *   ps->pod_spec with the kt_upsert_* helpers (runtime_info.h) and it is what the JobSet
 *   builder emits; append an init container to add one. Counts go in ps->count (the JobSet
 *   PreBuildSync turns them into parallelism/completions and endpoints).
 * - To change what lands in the trainer `node` container, replace b->trainer_command /
 *   b->trainer_args (NULL = keep the runtime's; the builder writes non-NULL ones).
 * - Pod labels/annotations for every pod template go in b->info.pod_labels/pod_annotations,
 *   JobSet metadata in b->info.labels/annotations.
 * - build appends whole objects; do not set ownerReferences or the trainjob-name label.
 *   "Exists and not suspended -> skip" uses kt_view_get. Entropy only via view->ssh_keygen.
 * - validate appends kt_ferrs with upstream's paths and texts (fielderr.h).
 *
 * The struct is shaped to become a stable ABI for dlopen()-loaded plugins: it starts with
 * the ABI version and its own size, only appends new members, and every callback receives
 * framework-owned contexts by pointer (no struct passed by value).
 *
 * External plugins (`--plugin`, docs/plugins.md) do not see this struct: they are written against
 * the public, versioned C header api/kt_plugin.h (JSON text and opaque handles, no libkt symbols)
 * and loaded by plugin_loader.c, which appends one adapter entry per plugin (member `ext`) after
 * the built-ins, in command-line order. So within each extension point the built-ins run
 * first in the order above, then the externals.
 *
 * ## Build pipeline (kt_framework_build), docs/internals/upstream.md#extension-points +
 * #runtime-snapshots
 *
 *  0. runtime: the snapshot ConfigMap `<trainjob>-runtime-snapshot` from the view when it
 *     exists (sanity-checked), else the given runtime, and then the snapshot is the first
 *     object returned;
 *  1. Info (runtime_info.h); 2. every enforce_ml_policy; 3. every enforce_podgroup_policy;
 *  4. every enforce_podspec; 5. every pre_build_sync; 6. every build, appending objects;
 *  7. every returned object is stamped with the controller ownerReference to the TrainJob
 *     and the label `trainer.kubeflow.org/trainjob-name: <name>` (no plugin has to).
 *
 * ## Validation pipeline (kt_framework_validate)
 *
 * Info only (no Enforce steps), then every validate; errors and warnings aggregated. */
#ifndef KT_FRAMEWORK_H
#define KT_FRAMEWORK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/types.h"
#include "common/base/err.h"
#include "common/base/fielderr.h"
#include "common/framework/runtime_info.h"
#include "common/framework/snapshot.h"
#include "common/base/str.h"

#define KT_PLUGIN_ABI 1
#define KT_TRAINJOB_NAME_LABEL "trainer.kubeflow.org/trainjob-name"

/* What the pipeline may see of the cluster, and injected entropy. All callbacks may be
 * NULL (nothing exists / no key generator). The view is borrowed for one call. */
struct kt_view {
    /* The existing object apiVersion/kind ns/name, or NULL. Borrowed from the view's
     * owner; valid for the duration of the pipeline call. */
    const json_t *(*get)(void *ctx, const char *api_version, const char *kind, const char *ns,
                         const char *name);
    void *ctx;
    /* Fresh MPI SSH key pair (PEM private key, authorized_keys line). On success the caller
     * owns both strings; free with free(). */
    int (*ssh_keygen)(void *ctx, char **private_pem, char **public_line, struct kt_err *err);
    void *keygen_ctx;
    /* Optional (parse NULL: kt_snapshot_parse): what kt_snapshot_parse(text) returns, with
     * the same contract (a new reference the caller owns, or NULL + err), e.g. from a cache
     * of parsed snapshots. */
    struct kt_snapshot_parser snapshot_parser;
};

/* Lookup through the view; NULL when the view or its get is NULL. */
const json_t *kt_view_get(const struct kt_view *view, const char *api_version, const char *kind,
                          const char *ns, const char *name);

/* Where the status server runs, for builds with the feature gate TrainJobStatus on
 * (docs/internals/upstream.md#trainjobstatus-plugin, #status-server): trainer pods get its URL, CA
 * and a token. Strings borrowed. */
struct kt_status_server {
    const char *service;    /* certManagement.webhookServiceName */
    const char *namespace_; /* the operator namespace (holds the certificate Secret) */
    const char *secret;     /* certManagement.webhookSecretName */
    int32_t port;           /* statusServer.port */
};

/* The state one build pass hands to plugins. Plugins may change info, trainer_command and
 * trainer_args; the framework owns everything here. */
struct kt_build {
    const struct kt_trainjob *tj; /* the defaulted TrainJob */
    const struct kt_runtime *rt;  /* the runtime in effect (snapshot or live) */
    const struct kt_view *view;
    struct kt_info info;
    json_t *trainer_command; /* owned copy of spec.trainer.command, NULL when unset; torchtune
                                and Flux replace it; the JobSet builder writes it */
    json_t *trainer_args;    /* owned copy of spec.trainer.args, NULL when unset */
    /* The framework's status_server: NULL = feature gate TrainJobStatus off. Borrowed. */
    const struct kt_status_server *status_server;
    /* Feature gate DynamicResourceAllocation: the provisional KEP-2782 fields are built. */
    bool dra;
    /* With dra: the GPU-class devices the claims of the trainer node container request
     * (common/framework/dra.h), 0 otherwise; ML plugins read kt_build_gpus(). */
    int64_t dra_devices;
};

/* The inputs of one validation. */
struct kt_validation {
    const struct kt_trainjob *tj;  /* new object */
    const struct kt_trainjob *old; /* NULL on create */
    const struct kt_runtime *rt;   /* the live runtime */
    const struct kt_info *info;    /* Info without Enforce steps */
    const struct kt_view *view;
    bool dra; /* feature gate DynamicResourceAllocation */
};

struct kt_plugin {
    unsigned abi;     /* KT_PLUGIN_ABI */
    size_t size;      /* sizeof(struct kt_plugin) the plugin was built with */
    const char *name; /* upstream's Name(): "Torch", "JobSet", ... */
    /* WatchExtension: NULL-terminated "apiVersion/Kind" list of owned kinds to watch. */
    const char *const *watches;
    /* CustomValidation: append field errors and warnings. Never fails. */
    void (*validate)(const struct kt_validation *v, struct kt_ferrs *errs,
                     struct kt_strv *warnings);
    /* Build extension points, called in this order. -1 + err aborts the build. */
    int (*enforce_ml_policy)(struct kt_build *b, struct kt_err *err);
    int (*enforce_podgroup_policy)(struct kt_build *b, struct kt_err *err);
    int (*enforce_podspec)(struct kt_build *b, struct kt_err *err);
    int (*pre_build_sync)(struct kt_build *b, struct kt_err *err);
    /* ComponentBuilder: append whole objects (apiVersion, kind, metadata.name/namespace,
     * ...) to objects, in apply order. Does not stamp owner references or labels. */
    int (*build)(struct kt_build *b, json_t *objects, struct kt_err *err);
    /* TrainJobStatus (at most one plugin): *out = the new status object, or NULL for "no
     * change". Caller owns *out; free with json_decref(). */
    int (*status)(const struct kt_trainjob *tj, const struct kt_view *view, json_t **out,
                  struct kt_err *err);
    /* Appended for dlopen()-loaded plugins (plugins/plugin_loader.c, public ABI
     * api/kt_plugin.h): when adapter is non-NULL, the framework calls this entry only through
     * adapter (plugins/plugin_abi.c fills it), ext is the adapter's context, and the function
     * pointers above are NULL. Built-ins leave both NULL. */
    const struct kt_plugin_adapter *adapter;
    const struct kt_plugin_ext *ext; /* opaque to the framework */
};

/* The vtable through which the framework reaches an entry with an adapter (an external
 * plugin). The framework never names the ABI layer: plugins/plugin_abi.c provides the only
 * instance and plugins/plugin_loader.c puts it into the entries it builds. */
struct kt_plugin_ext;
struct kt_plugin_adapter {
    /* True when the entry implements TrainJobStatus. */
    bool (*has_status)(const struct kt_plugin *p);
    /* Run p's build-side point (0 ml, 1 podgroup, 2 podspec, 3 pre-build sync, 4 build;
     * objects only for 4). -1 + err when the plugin fails. */
    int (*build)(const struct kt_plugin *p, int phase, struct kt_build *b, json_t *objects,
                 struct kt_err *err);
    void (*validate)(const struct kt_plugin *p, const struct kt_validation *v,
                     struct kt_ferrs *errs, struct kt_strv *warnings);
    int (*status)(const struct kt_plugin *p, const struct kt_trainjob *tj,
                  const struct kt_view *view, json_t **out, struct kt_err *err);
};

/* A plugin table. Borrowed entries; order is the call order. */
struct kt_framework {
    const struct kt_plugin *const *plugins;
    size_t n;
    /* Feature gate TrainJobStatus (alpha, off by default as upstream): NULL = off; else the
     * TrainJobStatus plugin wires trainer pods to this status server. Borrowed. */
    const struct kt_status_server *status_server;
    /* Feature gate DynamicResourceAllocation (alpha, off by default; KEP-2782, provisional in
     * kt): when true the TrainJob's resourceClaimsPerNode and the runtime patches' claims are
     * admitted and built (common/framework/dra.h); when false the webhook refuses them and a
     * build ignores them. */
    bool dra;
};

/* Check a table: ABI versions, and at most one status plugin (KT_EINVAL
 * "too many TrainJobStatus plugins are registered"). */
KT_MUST_CHECK int kt_framework_check(const struct kt_framework *fw, struct kt_err *err);

/* The runtime key of tj ("TrainingRuntime.trainer.kubeflow.org"; Kind alone when the group
 * is empty). Caller owns the result; free with free(). */
char *kt_runtime_key(const struct kt_trainjob *tj);
/* True for the two supported keys. */
bool kt_runtime_key_supported(const char *key);

/* Build every object to apply for tj, in apply order, as a JSON array in *out (caller owns
 * it; free with json_decref()). rt is the live runtime (may be NULL when a snapshot exists
 * in the view). Errors: "unsupported runtime: <key>", snapshot sanity checks
 * (docs/internals/upstream.md#runtime-snapshots), plugin build errors. On failure *out is NULL.
 * Does not retain its inputs. */
KT_MUST_CHECK int kt_framework_build(const struct kt_framework *fw, const struct kt_trainjob *tj,
                                     const struct kt_runtime *rt, const struct kt_view *view,
                                     json_t **out, struct kt_err *err);

/* The GPUs per node the ML plugins use: the extended resources' count of the per-node
 * resources (kt_resources_gpu_count) when not 0, else b->dra_devices (the devices of the
 * trainer's claims with the gate DynamicResourceAllocation, common/framework/dra.h). */
int64_t kt_build_gpus(const struct kt_build *b);

/* What kt_framework_validate checks: all borrowed for the call. */
struct kt_framework_validate_req {
    const struct kt_trainjob *tj;  /* new object */
    const struct kt_trainjob *old; /* NULL on create */
    const struct kt_runtime *rt;   /* the live runtime */
    const struct kt_view *view;    /* may be NULL */
};

/* Run Info + every CustomValidation on req. Field errors go to errs, warnings to warnings.
 * Fails (-1 + err) only when Info cannot be built. Does not retain req. */
KT_MUST_CHECK int kt_framework_validate(const struct kt_framework *fw,
                                        const struct kt_framework_validate_req *req,
                                        struct kt_ferrs *errs, struct kt_strv *warnings,
                                        struct kt_err *err);

/* The TrainJobStatus step: *out = new status or NULL (no change). */
KT_MUST_CHECK int kt_framework_status(const struct kt_framework *fw, const struct kt_trainjob *tj,
                                      const struct kt_view *view, json_t **out, struct kt_err *err);

/* Stamp obj's metadata with the controller ownerReference of tj and the trainjob-name
 * label (docs/internals/upstream.md#generated-object-names). */
void kt_framework_stamp(json_t *obj, const struct kt_trainjob *tj);

#endif
