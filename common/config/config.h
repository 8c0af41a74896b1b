/* SPDX-License-Identifier: Apache-2.0 */
/* common/config/config.h - the controller-manager Configuration file
 * (docs/internals/upstream.md#configuration-file).
 *
 * Reads `config.trainer.kubeflow.org/v1alpha1` kind `Configuration` from YAML (or JSON),
 * decoded strictly like upstream's codec (unknown fields, wrong types, wrong kind are errors),
 * defaulted like pkg/apis/config/v1alpha1/defaults.go and validated like
 * pkg/config/validation.go. Daemon-only settings come from flags, never from here.
 * Not thread-safe while loading; a loaded config is read-only. */
#ifndef KT_CONFIG_H
#define KT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/err.h"
#include "common/base/fielderr.h"
#include "common/base/str.h"
#include "common/net/tlsopts.h"

#define KT_CONFIG_API_VERSION "config.trainer.kubeflow.org/v1alpha1"
#define KT_CONFIG_KIND "Configuration"

/* k8s component-base LeaderElectionConfiguration. */
struct kt_config_leader {
    bool present;              /* leaderElection given; absent -> leader election off */
    bool leader_elect;         /* leaderElect (default false) */
    char *resource_lock;       /* owned; "" -> leases */
    char *resource_name;       /* owned; "" */
    char *resource_namespace;  /* owned; "" -> the pod's namespace */
    int64_t lease_duration_ms; /* Go duration text; absent -> 15000 (docs/configuration.md) */
    int64_t renew_deadline_ms; /* absent -> 10000 */
    int64_t retry_period_ms;   /* absent -> 2000 */
};

/* One map entry of controller.groupKindConcurrency ("TrainJob.trainer.kubeflow.org": 5). */
struct kt_config_gk {
    char *group_kind; /* owned */
    int32_t concurrency;
};

/* One map entry of featureGates. */
struct kt_config_gate {
    char *name; /* owned */
    bool enabled;
};

/* Every field of the file with its default; strings and lists are owned by the struct.
 * Fill with kt_config_default() or kt_config_load(); free with kt_config_release(). */
struct kt_config {
    struct {
        int32_t port; /* 9443; 1..65535 */
        char *host;   /* "" = all interfaces */
    } webhook;
    struct kt_config_leader leader_election;
    struct {
        char *bind_address;  /* ":8443"; "0" disables */
        bool secure_serving; /* true */
        bool auth_enabled;   /* metrics.auth.enabled, false */
    } metrics;
    struct {
        char *probe_bind_address;      /* health.healthProbeBindAddress ":8081" */
        char *readiness_endpoint_name; /* "readyz" */
        char *liveness_endpoint_name;  /* "healthz" */
    } health;
    struct {
        struct kt_config_gk *items; /* owned; file order */
        size_t len;
    } group_kind_concurrency; /* controller.groupKindConcurrency; values > 0 */
    struct {
        bool enable;                /* true */
        char *webhook_service_name; /* "kubeflow-trainer-controller-manager" */
        char *webhook_secret_name;  /* "kubeflow-trainer-webhook-cert" */
    } cert_management;
    struct {
        double qps;    /* 50 (a float32 upstream); >= 0 */
        int32_t burst; /* 100; >= 0 */
    } client_connection;
    struct {
        int32_t port;  /* 10443; 1..65535 */
        double qps;    /* 5; >= 0 */
        int32_t burst; /* 10; >= 0 */
    } status_server;
    struct {
        struct kt_config_gate *items; /* owned; file order */
        size_t len;
    } feature_gates;
    struct kt_tls_options tls;
    /* watchNamespaces: kt-reconciler watches only these namespaces; empty = all (the
     * default, as upstream). kt's own field, not upstream's (docs/install.md
     * "Namespace-scoped install"). */
    struct kt_strv watch_namespaces;
    struct kt_strv warnings; /* "FILE:LINE: tls.minVersion: ..." texts, for the log */
};

/* Fill cfg with the defaults of a run without --config. Release with kt_config_release(). */
void kt_config_default(struct kt_config *cfg);

/* Read, decode strictly, default and validate the file at path into out (which is first
 * reset to defaults; release it even on failure). Errors name "PATH:LINE: " when a line
 * is known: KT_EIO (unreadable), KT_ETOOBIG, KT_EPARSE (YAML syntax, strict decoding,
 * wrong apiVersion/kind, wrong types), KT_EINVAL ("invalid configuration: " + upstream's
 * field.ErrorList aggregate). Unknown tls values are warnings, not errors. */
KT_MUST_CHECK int kt_config_load(const char *path, struct kt_config *out, struct kt_err *err);

/* The same from a buffer; name is used in messages in place of the path. */
KT_MUST_CHECK int kt_config_load_data(const char *name, const char *data, size_t len,
                                      struct kt_config *out, struct kt_err *err);

/* Upstream's feature gates (docs/internals/upstream.md#manager-process): TrainJobStatus
 * (alpha, default off); and DynamicResourceAllocation (alpha, default off), the gate of upstream's
 * KEP-2782 fields, which kt carries provisionally (docs/api.md#dynamic-resource-allocation). */
#define KT_GATE_TRAINJOB_STATUS "TrainJobStatus"
#define KT_GATE_DRA "DynamicResourceAllocation"

/* Apply a --feature-gates value "Name=true,Other=false" over the file's featureGates, as
 * upstream's flag does. KT_EINVAL "unrecognized feature gate: X" for a gate upstream does not
 * know, "invalid value of X=V, ..." for a value that is not a boolean. Does not retain spec. */
KT_MUST_CHECK int kt_config_set_gates(struct kt_config *cfg, const char *spec, struct kt_err *err);

/* featureGates[name] when set, else def. */
bool kt_config_gate(const struct kt_config *cfg, const char *name, bool def);

/* The detail of an invalid watchNamespaces entry (apimachinery's RFC 1123 label message). */
#define KT_CONFIG_NS_DETAIL                                                                        \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

/* Check a watchNamespaces list (the file's, or --namespaces'): every entry an RFC 1123 label
 * of at most 63 bytes, none twice. Appends one Invalid error per bad entry to l (paths
 * "watchNamespaces[i]"); returns how many it added. */
size_t kt_config_check_namespaces(const struct kt_strv *ns, struct kt_ferrs *l);

/* Free everything cfg owns and zero it. Accepts a zeroed or released config. */
void kt_config_release(struct kt_config *cfg);

#endif
