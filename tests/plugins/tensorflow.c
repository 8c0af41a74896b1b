/* SPDX-License-Identifier: Apache-2.0 */
/* tests/plugins/tensorflow.c - example external plugin: TensorFlow MultiWorkerMirroredStrategy.
 *
 * Selection: a runtime labelled `trainer.kubeflow.org/framework: tensorflow` (the label
 * upstream's shipped runtimes already carry for torch, jax, ...), whose mlPolicy has no source
 * (e.g. `mlPolicy: {numNodes: 2}`) or no mlPolicy at all. Upstream's schema accepts it and
 * upstream's controller runs it as PlainML, so the object keeps its meaning everywhere; with
 * this plugin loaded, kt adds TF_CONFIG.
 *
 * EnforceMLPolicy, in the `node` container of the trainer job (ancestor `trainer`):
 *   TF_TASK_INDEX = fieldRef metadata.annotations['batch.kubernetes.io/job-completion-index']
 *   TF_CONFIG     = {"cluster":{"worker":["<tj>-node-0-0.<sub>:2222",...]},
 *                    "task":{"type":"worker","index":$(TF_TASK_INDEX)}}
 *   containerPort 2222
 * TF_CONFIG differs per pod although a pod template's env is static: the kubelet expands
 * `$(VAR)` in an env value from the env vars defined BEFORE it in the same container, so
 * each pod gets its own completion index in `task.index` with no wrapper script and any
 * image or command. That is why TF_TASK_INDEX is upserted first. There is no chief: worker
 * 0 acts as chief, as MultiWorkerMirroredStrategy does without one.
 *
 * CustomValidation: TF_CONFIG and TF_TASK_INDEX in spec.trainer.env are Forbidden (the user
 * would silently override the cluster spec). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kt_plugin.h"

#define TF_PORT 2222
#define FRAMEWORK_LABEL "/metadata/labels/trainer.kubeflow.org~1framework"
#define INDEX_PATH "metadata.annotations['batch.kubernetes.io/job-completion-index']"

static int is_tensorflow(const struct kt_plugin_host *h, struct kt_plugin_ctx *c)
{
    static const char *const sources[] = {"/spec/mlPolicy/torch", "/spec/mlPolicy/mpi",
                                          "/spec/mlPolicy/jax", "/spec/mlPolicy/xgboost",
                                          "/spec/mlPolicy/flux"};
    const char *fw = h->get(c, KT_DOC_RUNTIME, FRAMEWORK_LABEL);
    if (!fw || strcmp(fw, "tensorflow") != 0) {
        return 0;
    }
    /* Only a runtime without an ML policy source: torch/mpi/... keep their own meaning. */
    for (size_t k = 0; k < sizeof(sources) / sizeof(sources[0]); k++) {
        if (h->get(c, KT_DOC_RUNTIME, sources[k])) {
            return 0;
        }
    }
    return 1;
}

/* TF_CONFIG for n workers of pod set i. Caller frees the result; NULL + h->fail on error. */
static char *tf_config(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, uint32_t i,
                       int64_t n)
{
    char *text = NULL;
    size_t len = 0;
    char host[512];
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        h->fail(c, "out of memory");
        return NULL;
    }
    fputs("{\"cluster\":{\"worker\":[", f);
    for (int64_t k = 0; k < n; k++) {
        if (h->podset_hostname(c, i, 0, k, host, sizeof(host)) != 0) {
            fclose(f);
            free(text);
            h->fail(c, "pod host name too long");
            return NULL;
        }
        fprintf(f, "%s\"%s:%d\"", k ? "," : "", host, TF_PORT);
    }
    fputs("]},\"task\":{\"type\":\"worker\",\"index\":$(TF_TASK_INDEX)}}", f);
    fclose(f);
    return text;
}

static int tf_enforce(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    (void)state;
    if (!is_tensorflow(h, c)) {
        return 0;
    }
    int32_t i = h->podset_find(c, NULL, "trainer");
    if (i < 0) {
        return 0;
    }
    char *cfg = tf_config(h, c, (uint32_t)i, h->podset_pods(c, (uint32_t)i));
    if (!cfg) {
        return -1;
    }
    int rc = h->add_env_field_ref(c, (uint32_t)i, "node", "TF_TASK_INDEX", INDEX_PATH);
    if (rc == 0) {
        rc = h->add_env(c, (uint32_t)i, "node", "TF_CONFIG", cfg);
    }
    if (rc == 0) {
        rc = h->add_port(c, (uint32_t)i, "node", TF_PORT, NULL);
    }
    free(cfg);
    /* 1 = the trainer job has no `node` container: nothing to configure, like upstream's JAX. */
    return rc < 0 ? h->fail(c, "cannot configure the node container") : 0;
}

static int tf_validate(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    (void)state;
    if (!is_tensorflow(h, c)) {
        return 0;
    }
    for (unsigned k = 0;; k++) {
        char ptr[64];
        char field[64];
        char detail[96];
        snprintf(ptr, sizeof(ptr), "/spec/trainer/env/%u/name", k);
        const char *name = h->get(c, KT_DOC_TRAINJOB, ptr);
        if (!name) {
            break;
        }
        if (strcmp(name, "TF_CONFIG") == 0 || strcmp(name, "TF_TASK_INDEX") == 0) {
            snprintf(field, sizeof(field), "spec.trainer.env[%u]", k);
            snprintf(detail, sizeof(detail), "%s is reserved for the TensorFlow runtime", name);
            h->field_error(c, KT_FIELD_FORBIDDEN, field, NULL, detail);
        }
    }
    return 0;
}

KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("TensorFlow", KT_EP_VALIDATE | KT_EP_ENFORCE_ML_POLICY),
    .validate = tf_validate,
    .enforce_ml_policy = tf_enforce,
};
