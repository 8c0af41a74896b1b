/* SPDX-License-Identifier: Apache-2.0 */
/* api/kt_plugin.h - the public, versioned plugin ABI of kt (Kubeflow Trainer control plane in C).
 *
 * A platform administrator writes a shared object against THIS HEADER ONLY, and kt-webhook,
 * kt-reconciler and ktctl load it with dlopen() (`--plugin FILE[,CONFIG]`). The plugin links
 * no kt symbol: everything it needs comes through the `struct kt_plugin_host` function table
 * the host passes to every callback. Plain C, no jansson or libkt types cross the boundary:
 * documents go out as JSON text, come back as JSON text.
 *
 * ## The contract
 *
 * The shared object exports one data symbol, `kt_plugin_def` (KT_PLUGIN_SYMBOL), of type
 * `const struct kt_plugin_def`, initialised with KT_PLUGIN_DEF_INIT(name, points). The host
 * refuses the plugin at startup, with a message naming the file, when:
 *  - abi_major differs from the host's KT_PLUGIN_ABI_MAJOR, or abi_minor is greater than the
 *    host's KT_PLUGIN_ABI_MINOR (the plugin may call host functions this host lacks);
 *  - size is smaller than the struct of its minor version;
 *  - `points` claims an unknown extension point, claims one whose callback is NULL, or a
 *    callback is set for a point it does not claim;
 *  - it claims KT_EP_STATUS while another TrainJobStatus is active (`too many TrainJobStatus
 *    plugins are registered`); an external TrainJobStatus replaces the built-in one only when
 *    the host is told so (`--trainjob-status-plugin NAME`);
 *  - init returns non-zero (its message from host->fail is printed).
 *
 * ## ABI rules (what "stable" means)
 *  - Within one major version, members are only APPENDED to kt_plugin_def and kt_plugin_host,
 *    and each addition bumps the minor. Nothing is removed, reordered or retyped; a function
 *    never changes its meaning. A plugin built for 1.0 keeps loading in every 1.x host.
 *  - A plugin that uses a host function added in 1.n declares abi_minor >= n (the default
 *    KT_PLUGIN_DEF_INIT does) or checks host->abi_minor / host->size before calling it.
 *  - Only fixed-width integers, `const char *` (UTF-8, NUL-terminated) and pointers to the
 *    opaque `struct kt_plugin_ctx` cross the boundary; no struct is passed by value.
 *  - Strings the host returns are BORROWED: valid until the callback returns. Strings the
 *    plugin passes are copied by the host; the plugin keeps ownership.
 *  - Callbacks may run concurrently on several threads (kt-webhook serves requests in a thread
 *    pool), each call with its own ctx. The state made by init must be read-only afterwards.
 *  - Memory is never freed across the boundary.
 *
 * ## Extension points and order (docs/internals/upstream.md#extension-points)
 *
 * The order of the extension points of a build and of the plugins within each is stated once,
 * in common/framework/framework.h ("Plugins" and "Build pipeline"): external plugins run after
 * every built-in one, in command-line order, so an external EnforceMLPolicy sees the pod counts
 * the built-ins set and external objects are applied after the JobSet. Every object a plugin adds
 * is stamped by the host with the TrainJob's controller ownerReference and the label
 * `trainer.kubeflow.org/trainjob-name` (no plugin has to).
 *
 * Admission, per TrainJob create/update: the Info without Enforce steps, then every
 * CustomValidation; errors and warnings from all plugins are aggregated into one denial.
 *
 * Plugins self-gate: a callback returns 0 at once when the TrainJob or runtime is not one it
 * handles (e.g. the runtime's `trainer.kubeflow.org/framework` label). */
#ifndef KT_PLUGIN_ABI_H
#define KT_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KT_PLUGIN_ABI_MAJOR 1
#define KT_PLUGIN_ABI_MINOR 0
/* The exported data symbol the host looks up with dlsym(). */
#define KT_PLUGIN_SYMBOL "kt_plugin_def"

/* Extension points, as bits of kt_plugin_def.points. */
#define KT_EP_WATCH (1u << 0)             /* WatchExtension: `watches` */
#define KT_EP_VALIDATE (1u << 1)          /* CustomValidation: `validate` */
#define KT_EP_ENFORCE_ML_POLICY (1u << 2) /* EnforceMLPolicy: `enforce_ml_policy` */
#define KT_EP_ENFORCE_PODGROUP (1u << 3)  /* EnforcePodGroupPolicy: `enforce_podgroup_policy` */
#define KT_EP_ENFORCE_PODSPEC (1u << 4)   /* EnforcePodSpec: `enforce_podspec` */
#define KT_EP_PRE_BUILD_SYNC (1u << 5)    /* PreBuildSync: `pre_build_sync` */
#define KT_EP_BUILD (1u << 6)             /* ComponentBuilder: `build` */
#define KT_EP_STATUS (1u << 7)            /* TrainJobStatus: `status` (at most one active) */
#define KT_EP_ALL_1_0 0xffu               /* every point ABI 1.0 knows */

/* Documents a plugin can read with host->get. */
#define KT_DOC_TRAINJOB 0     /* the defaulted TrainJob (metadata, spec, status) */
#define KT_DOC_OLD_TRAINJOB 1 /* validate on update: the previous TrainJob; else absent */
#define KT_DOC_RUNTIME 2      /* the TrainingRuntime / ClusterTrainingRuntime in effect */
#define KT_DOC_JOBSET_SPEC 3  /* build: the JobSet spec as the plugins left it so far */

/* Field error types for host->field_error, with upstream's wording. */
#define KT_FIELD_INVALID 0   /* "Invalid value" (prints the value) */
#define KT_FIELD_FORBIDDEN 1 /* "Forbidden" */
#define KT_FIELD_REQUIRED 2  /* "Required value" */

/* Log levels for host->log. */
#define KT_PLUGIN_LOG_DEBUG 0
#define KT_PLUGIN_LOG_INFO 1
#define KT_PLUGIN_LOG_WARN 2
#define KT_PLUGIN_LOG_ERROR 3

/* One callback invocation (opaque; never dereference, never keep it after returning). */
struct kt_plugin_ctx;

/* What the host offers. Passed to every callback; valid for the process lifetime. Every
 * function is safe to call from any callback unless its comment says otherwise; a mutating
 * function called from the wrong point fails (-1) and does nothing. Pod set index i is
 * 0..podset_count()-1, in the runtime's replicatedJobs order. `container` names a container
 * of the pod set (regular containers first, then init containers); NULL means every regular
 * container. Functions returning int give 0 on success, 1 when the named container or pod set
 * does not exist (nothing done), -1 on bad input or a call from the wrong point. */
struct kt_plugin_host {
    uint32_t abi_major; /* the host's KT_PLUGIN_ABI_MAJOR */
    uint32_t abi_minor; /* the host's KT_PLUGIN_ABI_MINOR */
    uint32_t size;      /* sizeof(struct kt_plugin_host) in the host */
    uint32_t reserved;

    /* --- reading (every point) --- */
    /* The value at RFC 6901 JSON pointer `pointer` of document `doc` (KT_DOC_*): "" is the
     * whole document; "/metadata/labels/trainer.kubeflow.org~1framework" a label. Strings
     * are returned as they are, numbers and booleans as their JSON text, objects and arrays
     * as compact JSON. NULL when absent. */
    const char *(*get)(struct kt_plugin_ctx *c, int doc, const char *pointer);
    /* An object of the cluster as compact JSON (what the reconciler's informers or the
     * webhook's store hold; ktctl: its --objects), NULL when absent. ns "" for cluster
     * scoped objects. */
    const char *(*lookup)(struct kt_plugin_ctx *c, const char *api_version, const char *kind,
                          const char *ns, const char *name);
    /* The TrainJob's namespace, name and uid (never NULL). */
    const char *(*trainjob_namespace)(struct kt_plugin_ctx *c);
    const char *(*trainjob_name)(struct kt_plugin_ctx *c);
    const char *(*trainjob_uid)(struct kt_plugin_ctx *c);

    /* --- pod sets: one per replicated job (validate and build points) --- */
    uint32_t (*podset_count)(struct kt_plugin_ctx *c);
    /* Index of the first pod set with this replicated-job name (ancestor NULL) or with this
     * ancestor label value (name NULL), e.g. (NULL, "trainer"); -1 when none. */
    int32_t (*podset_find)(struct kt_plugin_ctx *c, const char *name, const char *ancestor);
    const char *(*podset_name)(struct kt_plugin_ctx *c, uint32_t i);
    /* Value of trainer.kubeflow.org/trainjob-ancestor-step, NULL when none. */
    const char *(*podset_ancestor)(struct kt_plugin_ctx *c, uint32_t i);
    /* Pods per job (becomes parallelism = completions), and the job's replicas (default 1). */
    int64_t (*podset_pods)(struct kt_plugin_ctx *c, uint32_t i);
    int64_t (*podset_replicas)(struct kt_plugin_ctx *c, uint32_t i);
    /* The value at a JSON pointer inside the replicatedJobs[i] item (as host->get). */
    const char *(*podset_get)(struct kt_plugin_ctx *c, uint32_t i, const char *pointer);
    /* The stable DNS name of pod `pod` of job `job` of pod set i, as JobSet creates it:
     * <trainjob>-<replicatedJob>-<job>-<pod>.<subdomain> (subdomain: the JobSet's
     * network.subdomain, else the TrainJob name). Into buf (NUL-terminated); 0, or -1 when
     * it does not fit (buf then holds a truncated name) or i is out of range. */
    int (*podset_hostname)(struct kt_plugin_ctx *c, uint32_t i, int64_t job, int64_t pod, char *buf,
                           size_t len);

    /* --- mutating the pod sets (Enforce* and PreBuildSync only) --- */
    int (*podset_set_pods)(struct kt_plugin_ctx *c, uint32_t i, int64_t pods);
    /* Upsert env by name (docs/internals/upstream.md#upserts-and-env-order: replaced in place, else
     * appended). */
    int (*add_env)(struct kt_plugin_ctx *c, uint32_t i, const char *container, const char *name,
                   const char *value);
    /* Upsert an env var whose value comes from a fieldRef (e.g. the completion index
     * "metadata.annotations['batch.kubernetes.io/job-completion-index']"). */
    int (*add_env_field_ref)(struct kt_plugin_ctx *c, uint32_t i, const char *container,
                             const char *name, const char *field_path);
    /* Upsert one EnvVar given as a JSON object ({"name":...,"valueFrom":{...}}). */
    int (*add_env_json)(struct kt_plugin_ctx *c, uint32_t i, const char *container,
                        const char *env_json);
    /* Upsert a container port (by containerPort or name); name may be NULL. */
    int (*add_port)(struct kt_plugin_ctx *c, uint32_t i, const char *container, int32_t port,
                    const char *name);
    /* Upsert a pod volume (JSON Volume, by name) / a volumeMount (JSON, by mountPath). */
    int (*add_volume)(struct kt_plugin_ctx *c, uint32_t i, const char *volume_json);
    int (*add_volume_mount)(struct kt_plugin_ctx *c, uint32_t i, const char *container,
                            const char *mount_json);
    /* Labels / annotations put on every pod template, and on the JobSet itself. */
    int (*set_pod_label)(struct kt_plugin_ctx *c, const char *key, const char *value);
    int (*set_pod_annotation)(struct kt_plugin_ctx *c, const char *key, const char *value);
    int (*set_jobset_label)(struct kt_plugin_ctx *c, const char *key, const char *value);
    int (*set_jobset_annotation)(struct kt_plugin_ctx *c, const char *key, const char *value);

    /* --- ComponentBuilder only --- */
    /* Append one whole object (apiVersion, kind, metadata.name, metadata.namespace, ...) to
     * apply after the built-in ones. The host adds the ownerReference and the label. */
    int (*add_object)(struct kt_plugin_ctx *c, const char *object_json);

    /* --- CustomValidation only --- */
    /* One field error of the denial: `field` is the path ("metadata.labels"), value_json the
     * offending value as JSON (printed for KT_FIELD_INVALID; NULL prints null), detail the
     * message. The API server shows `<field>: <type>: <value>: <detail>`. */
    int (*field_error)(struct kt_plugin_ctx *c, int type, const char *field, const char *value_json,
                       const char *detail);
    /* An admission warning (shown by kubectl, never denies). */
    int (*warning)(struct kt_plugin_ctx *c, const char *message);

    /* --- TrainJobStatus only (there, get serves KT_DOC_TRAINJOB only, no pod sets; read
     * the JobSet with lookup) --- */
    /* The new TrainJob status object (JSON); not calling it means "no change". */
    int (*set_status)(struct kt_plugin_ctx *c, const char *status_json);

    /* --- errors and logs (every point, and init) --- */
    /* Record why the callback fails; returns -1 so a callback can `return h->fail(c, "...")`.
     * The message ends up in the reconcile error / the startup refusal. */
    int (*fail)(struct kt_plugin_ctx *c, const char *message);
    void (*log)(struct kt_plugin_ctx *c, int level, const char *message);
};

/* A build, status or init callback: 0 on success, non-zero (after host->fail) to abort. */
typedef int (*kt_plugin_fn)(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state);

/* The descriptor a plugin exports as `kt_plugin_def`. */
struct kt_plugin_def {
    uint32_t abi_major; /* KT_PLUGIN_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor; /* KT_PLUGIN_ABI_MINOR the plugin was built with */
    uint32_t size;      /* sizeof(struct kt_plugin_def) the plugin was built with */
    uint32_t points;    /* KT_EP_* bits: exactly the callbacks below that are set */
    const char *name;   /* unique, shown in messages ("RequireLabel") */
    /* Optional, once at startup: parse config (the text after the first ',' of --plugin,
     * NULL when none) and set *state (passed to every callback; may stay NULL). Non-zero
     * (after h->fail) refuses the plugin. The ctx allows only fail and log. */
    int (*init)(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, const char *config,
                void **state);
    /* Optional, at shutdown: free state. */
    void (*fini)(void *state);
    /* WatchExtension: NULL-terminated "apiVersion/Kind" list of kinds this plugin creates,
     * owned by TrainJobs (the reconciler re-reconciles the owner when one changes). */
    const char *const *watches;
    /* CustomValidation: report with h->field_error / h->warning and return 0. A non-zero
     * return fails closed: the request is denied with `spec: Internal error: plugin <name>:
     * <message from h->fail>`. */
    kt_plugin_fn validate;
    kt_plugin_fn enforce_ml_policy;
    kt_plugin_fn enforce_podgroup_policy;
    kt_plugin_fn enforce_podspec;
    kt_plugin_fn pre_build_sync;
    kt_plugin_fn build;
    kt_plugin_fn status;
};

/* Fills the version header of a kt_plugin_def: `KT_PLUGIN_DEF_INIT("Name", KT_EP_BUILD),`
 * followed by the designated callbacks. */
#define KT_PLUGIN_DEF_INIT(plugin_name, claimed_points)                                            \
    .abi_major = KT_PLUGIN_ABI_MAJOR, .abi_minor = KT_PLUGIN_ABI_MINOR,                            \
    .size = (uint32_t)sizeof(struct kt_plugin_def), .points = (claimed_points),                    \
    .name = (plugin_name)

/* Marks the exported descriptor visible even under -fvisibility=hidden. */
#if defined(__GNUC__)
#define KT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define KT_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif
