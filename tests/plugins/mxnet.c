/* SPDX-License-Identifier: Apache-2.0 */
/* tests/plugins/mxnet.c - example external plugin: MXNet parameter-server training.
 *
 * Selection: a runtime labelled `trainer.kubeflow.org/framework: mxnet` whose mlPolicy has no
 * source (upstream: valid, and run as PlainML). The runtime has three replicated jobs:
 *   `scheduler` (one pod), `server` (the parameter servers: parallelism x replicas pods) and
 *   the trainer job (ancestor `trainer`, usually named `node`: the workers, numNodes pods);
 * each runs its process in a container named `node`.
 *
 * EnforceMLPolicy, in each job's `node` container:
 *   DMLC_ROLE          scheduler | server | worker
 *   DMLC_PS_ROOT_URI   <tj>-scheduler-0-0.<subdomain>  (the scheduler pod's DNS name)
 *   DMLC_PS_ROOT_PORT  9091 (also the scheduler's containerPort)
 *   DMLC_NUM_SERVER    server pods, DMLC_NUM_WORKER worker pods
 * and the scheduler job is pinned to one pod.
 *
 * CustomValidation: those five names in spec.trainer.env are Forbidden; a runtime without the
 * three jobs is Invalid at spec.runtimeRef. */
#include <stdio.h>
#include <string.h>

#include "api/kt_plugin.h"

#define PS_PORT 9091
#define FRAMEWORK_LABEL "/metadata/labels/trainer.kubeflow.org~1framework"

static const char *const reserved[] = {"DMLC_ROLE", "DMLC_PS_ROOT_URI", "DMLC_PS_ROOT_PORT",
                                       "DMLC_NUM_SERVER", "DMLC_NUM_WORKER"};

static int is_mxnet(const struct kt_plugin_host *h, struct kt_plugin_ctx *c)
{
    static const char *const sources[] = {"/spec/mlPolicy/torch", "/spec/mlPolicy/mpi",
                                          "/spec/mlPolicy/jax", "/spec/mlPolicy/xgboost",
                                          "/spec/mlPolicy/flux"};
    const char *fw = h->get(c, KT_DOC_RUNTIME, FRAMEWORK_LABEL);
    if (!fw || strcmp(fw, "mxnet") != 0) {
        return 0;
    }
    for (size_t k = 0; k < sizeof(sources) / sizeof(sources[0]); k++) {
        if (h->get(c, KT_DOC_RUNTIME, sources[k])) {
            return 0;
        }
    }
    return 1;
}

struct roles {
    int32_t idx[3]; /* scheduler, server, worker */
};

static const char *const role_names[] = {"scheduler", "server", "worker"};

static int find_roles(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, struct roles *r)
{
    r->idx[0] = h->podset_find(c, "scheduler", NULL);
    r->idx[1] = h->podset_find(c, "server", NULL);
    r->idx[2] = h->podset_find(c, NULL, "trainer");
    return r->idx[0] >= 0 && r->idx[1] >= 0 && r->idx[2] >= 0;
}

static int set_env(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, uint32_t i,
                   const char *role, const char *uri, int64_t servers, int64_t workers)
{
    char port[16];
    char ns[24];
    char nw[24];
    snprintf(port, sizeof(port), "%d", PS_PORT);
    snprintf(ns, sizeof(ns), "%lld", (long long)servers);
    snprintf(nw, sizeof(nw), "%lld", (long long)workers);
    int rc = h->add_env(c, i, "node", "DMLC_ROLE", role);
    rc = rc ? rc : h->add_env(c, i, "node", "DMLC_PS_ROOT_URI", uri);
    rc = rc ? rc : h->add_env(c, i, "node", "DMLC_PS_ROOT_PORT", port);
    rc = rc ? rc : h->add_env(c, i, "node", "DMLC_NUM_SERVER", ns);
    rc = rc ? rc : h->add_env(c, i, "node", "DMLC_NUM_WORKER", nw);
    return rc;
}

static int mx_enforce(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    struct roles r;
    char uri[512];
    (void)state;
    if (!is_mxnet(h, c)) {
        return 0;
    }
    if (!find_roles(h, c, &r)) {
        return h->fail(c, "MXNet runtime needs replicated jobs scheduler, server and a trainer");
    }
    uint32_t s = (uint32_t)r.idx[0];
    if (h->podset_set_pods(c, s, 1) != 0 || h->podset_hostname(c, s, 0, 0, uri, sizeof(uri))) {
        return h->fail(c, "cannot address the scheduler pod");
    }
    int64_t servers =
        h->podset_pods(c, (uint32_t)r.idx[1]) * h->podset_replicas(c, (uint32_t)r.idx[1]);
    int64_t workers = h->podset_pods(c, (uint32_t)r.idx[2]);
    for (int k = 0; k < 3; k++) {
        if (set_env(h, c, (uint32_t)r.idx[k], role_names[k], uri, servers, workers) < 0) {
            return h->fail(c, "cannot set the DMLC environment");
        }
    }
    if (h->add_port(c, s, "node", PS_PORT, NULL) < 0) {
        return h->fail(c, "cannot expose the scheduler port");
    }
    return 0;
}

static void check_env(const struct kt_plugin_host *h, struct kt_plugin_ctx *c)
{
    for (unsigned k = 0;; k++) {
        char ptr[64];
        char field[64];
        char detail[96];
        snprintf(ptr, sizeof(ptr), "/spec/trainer/env/%u/name", k);
        const char *name = h->get(c, KT_DOC_TRAINJOB, ptr);
        if (!name) {
            return;
        }
        for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++) {
            if (strcmp(name, reserved[r]) == 0) {
                snprintf(field, sizeof(field), "spec.trainer.env[%u]", k);
                snprintf(detail, sizeof(detail), "%s is reserved for the MXNet runtime", name);
                h->field_error(c, KT_FIELD_FORBIDDEN, field, NULL, detail);
            }
        }
    }
}

static int mx_validate(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    struct roles r;
    (void)state;
    if (!is_mxnet(h, c)) {
        return 0;
    }
    check_env(h, c);
    if (!find_roles(h, c, &r)) {
        h->field_error(c, KT_FIELD_INVALID, "spec.runtimeRef",
                       h->get(c, KT_DOC_TRAINJOB, "/spec/runtimeRef"),
                       "MXNet runtime must have the replicated jobs scheduler, server and one "
                       "with ancestor trainer");
    }
    return 0;
}

KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("MXNet", KT_EP_VALIDATE | KT_EP_ENFORCE_ML_POLICY),
    .validate = mx_validate,
    .enforce_ml_policy = mx_enforce,
};
