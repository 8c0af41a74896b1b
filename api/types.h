/* SPDX-License-Identifier: Apache-2.0 */
/* api/types.h - the C types of our kinds (trainer.kubeflow.org/v1alpha1,
 * docs/internals/upstream.md#api-types).
 *
 * Typed fields for what the framework reasons about; json_t for embedded Kubernetes
 * objects (env, resources, JobSetSpec, patches). Every struct keeps the whole decoded
 * object in `obj` so unknown fields round-trip: encode = obj with the typed fields
 * written back. Decoding applies the same defaults as our CRD schemas. */
#ifndef KT_API_TYPES_H
#define KT_API_TYPES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/base/err.h"

#define KT_GROUP "trainer.kubeflow.org"
#define KT_VERSION "v1alpha1"
#define KT_API_VERSION "trainer.kubeflow.org/v1alpha1"
#define KT_MANAGED_BY_DEFAULT "trainer.kubeflow.org/trainjob-controller"
#define KT_MANAGED_BY_MULTIKUEUE "kueue.x-k8s.io/multikueue"

/* An optional int: has=false means the field was absent. */
struct kt_opt_i64 {
    bool has;
    int64_t v;
};

struct kt_runtime_ref {
    const char *name;      /* borrowed from the owning object's obj */
    const char *api_group; /* defaulted to "trainer.kubeflow.org" */
    const char *kind;      /* defaulted to "ClusterTrainingRuntime" */
};

struct kt_initializer_src {
    bool present;
    const char *storage_uri; /* NULL when absent */
    json_t *env;             /* borrowed array of EnvVar, NULL when absent */
    const char *secret_ref;  /* secretRef.name, NULL when absent */
};

struct kt_trainer {
    bool present;      /* spec.trainer set */
    const char *image; /* NULL when absent */
    json_t *command;   /* borrowed array of strings, NULL when absent */
    json_t *args;      /* borrowed array of strings, NULL when absent */
    json_t *env;       /* borrowed array of EnvVar, NULL when absent */
    struct kt_opt_i64 num_nodes;
    json_t *resources_per_node; /* borrowed ResourceRequirements, NULL when absent */
    struct kt_opt_i64 num_proc_per_node;
    /* Provisional (KEP-2782, not in upstream v2.3.0; feature gate DynamicResourceAllocation):
     * borrowed array of {name, resourceClaimName | resourceClaimTemplateName, containers}. */
    json_t *resource_claims_per_node;
};

/* A TrainJob. All pointers are borrowed from obj unless noted. */
struct kt_trainjob {
    json_t *obj; /* owned: the whole defaulted object */
    const char *name;
    const char *namespace_; /* "" when absent */
    const char *uid;        /* "" when absent */
    struct kt_runtime_ref runtime_ref;
    struct kt_initializer_src dataset;
    struct kt_initializer_src model;
    struct kt_trainer trainer;
    json_t *runtime_patches; /* borrowed array, NULL when absent */
    bool suspend;            /* default false */
    struct kt_opt_i64 active_deadline_seconds;
    /* Provisional (KEP-2899, not in upstream v2.3.0): overrides the runtime's runPolicy. */
    struct kt_opt_i64 ttl_seconds_after_finished;
    const char *managed_by; /* defaulted */
    json_t *status;         /* borrowed, NULL when absent */
};

enum kt_policy_kind {
    KT_POLICY_NONE,
    KT_POLICY_TORCH,
    KT_POLICY_MPI,
    KT_POLICY_JAX,
    KT_POLICY_XGBOOST,
    KT_POLICY_FLUX
};

struct kt_ml_policy {
    bool present;                /* spec.mlPolicy set */
    struct kt_opt_i64 num_nodes; /* no default in the CRD; code treats absent as 1 */
    enum kt_policy_kind kind;
    json_t *source;   /* borrowed: the torch/mpi/... object, NULL for NONE */
    unsigned sources; /* bitmask of (1u << KT_POLICY_x) for every source set; more
                         than one bit is invalid (the validator reports it) and
                         kind is then the first in CEL order torch, mpi, jax,
                         xgboost, flux */
    /* mpi (defaults applied): */
    int64_t mpi_num_proc_per_node;       /* default 1 */
    const char *mpi_implementation;      /* default "OpenMPI" */
    const char *mpi_ssh_auth_mount_path; /* default "/root/.ssh" */
    bool mpi_run_launcher_as_node;       /* default false */
    /* flux: */
    int64_t flux_num_proc_per_node; /* default 1 */
};

struct kt_podgroup_policy {
    bool coscheduling;                /* podGroupPolicy.coscheduling set */
    int64_t schedule_timeout_seconds; /* default 60 */
    bool volcano;                     /* podGroupPolicy.volcano set */
    json_t *network_topology;         /* borrowed, NULL when absent (defaults applied) */
};

/* spec.runPolicy: provisional lifecycle defaults (KEP-2899, not in upstream v2.3.0) a
 * TrainJob's own fields override. Decoded only; encode keeps the object's copy. */
struct kt_run_policy {
    struct kt_opt_i64 active_deadline_seconds;
    struct kt_opt_i64 ttl_seconds_after_finished;
};

/* A TrainingRuntime or ClusterTrainingRuntime. */
struct kt_runtime {
    json_t *obj;  /* owned: the whole defaulted object */
    bool cluster; /* kind ClusterTrainingRuntime */
    const char *name;
    const char *namespace_; /* "" for cluster-scoped */
    struct kt_ml_policy ml;
    struct kt_podgroup_policy pg;
    struct kt_run_policy run_policy;
    json_t *template_;             /* borrowed spec.template (metadata + JobSetSpec), never NULL
                                      after a successful decode (empty object when absent) */
    json_t *template_placeholder_; /* owned: the empty object template_ points at when
                                      spec.template is absent (NULL otherwise); internal */
};

#endif
