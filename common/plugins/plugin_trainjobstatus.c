/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_trainjobstatus.c - the TrainJobStatus plugin
 * (docs/internals/upstream.md#trainjobstatus-plugin): behind upstream's alpha feature gate
 * `TrainJobStatus` (off by default), it points every trainer container at the status server so that
 * training code can report progress into status.trainerStatus.
 *
 * EnforcePodSpec: the trainer-ancestor PodSet's containers (not init containers) get
 * KUBEFLOW_TRAINER_SERVER_URL / _CA_CERT / _TOKEN and a read-only mount of the projected
 * volume `kubeflow-trainer-token` (a service-account token whose audience is the TrainJob's
 * status path, and `ca.crt` of the ConfigMap `<trainjob>-tls-config`).
 * Build: that ConfigMap, `ca.crt` copied from the webhook certificate Secret in the operator
 * namespace, for every TrainJob regardless of its runtime.
 *
 * The gate is the framework's status_server member: NULL (the default) = the plugin does
 * nothing, which is what upstream's registry without the plugin does. */
#include <stdlib.h>
#include <string.h>

#include "common/crypto/crypto.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/plugins/plugins.h"

#define TOKEN_VOLUME "kubeflow-trainer-token"
#define TOKEN_DIR "/var/run/secrets/kubeflow/trainer"
#define TLS_SUFFIX "-tls-config"
#define CA_KEY "ca.crt"
#define TOKEN_SECONDS 3600

/* "trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status" (the token
 * audience; the URL path is "/apis/" + this). Caller owns it. */
static char *status_resource(const struct kt_trainjob *tj)
{
    return kt_xasprintf(KT_API_VERSION "/namespaces/%s/trainjobs/%s/status", tj->namespace_,
                        tj->name);
}

static json_t *token_volume(const struct kt_trainjob *tj)
{
    char *aud = status_resource(tj);
    char *cm = kt_xasprintf("%s" TLS_SUFFIX, tj->name);
    json_t *v = json_pack("{s:s, s:{s:[{s:{s:s, s:i, s:s}}, {s:{s:s, s:[{s:s, s:s}]}}]}}", "name",
                          TOKEN_VOLUME, "projected", "sources", "serviceAccountToken", "audience",
                          aud, "expirationSeconds", TOKEN_SECONDS, "path", "token", "configMap",
                          "name", cm, "items", "key", CA_KEY, "path", CA_KEY);
    free(cm);
    free(aud);
    return v;
}

static json_t *server_env(const struct kt_status_server *s, const struct kt_trainjob *tj)
{
    char *res = status_resource(tj);
    char *url =
        kt_xasprintf("https://%s.%s.svc:%d/apis/%s", s->service, s->namespace_, (int)s->port, res);
    json_t *env = json_array();
    json_array_append_new(env, kt_env_value("KUBEFLOW_TRAINER_SERVER_URL", url));
    json_array_append_new(env,
                          kt_env_value("KUBEFLOW_TRAINER_SERVER_CA_CERT", TOKEN_DIR "/" CA_KEY));
    json_array_append_new(env, kt_env_value("KUBEFLOW_TRAINER_SERVER_TOKEN", TOKEN_DIR "/token"));
    free(url);
    free(res);
    return env;
}

static int enforce_podspec(struct kt_build *b, struct kt_err *err)
{
    (void)err;
    struct kt_podset *ps = kt_info_podset_by_ancestor(&b->info, KT_ANCESTOR_TRAINER);
    if (!b->status_server || !ps) {
        return 0;
    }
    json_t *vol = token_volume(b->tj);
    json_t *env = server_env(b->status_server, b->tj);
    json_t *mount =
        json_pack("{s:s, s:s, s:b}", "name", TOKEN_VOLUME, "mountPath", TOKEN_DIR, "readOnly", 1);
    size_t i;
    json_t *c;
    kt_upsert_volume(ps->pod_spec, vol);
    json_array_foreach(json_object_get(ps->pod_spec, "containers"), i, c)
    {
        kt_upsert_envs(c, env);
        kt_upsert_mount(c, mount);
    }
    json_decref(mount);
    json_decref(env);
    json_decref(vol);
    return 0;
}

/* ca.crt of the certificate Secret, decoded. Caller owns it. NULL + err when missing. */
static char *secret_ca(const struct kt_build *b, struct kt_err *err)
{
    const struct kt_status_server *s = b->status_server;
    const json_t *sec = kt_view_get(b->view, "v1", "Secret", s->namespace_, s->secret);
    if (!sec) {
        kt_err_set(err, KT_ENOENT,
                   "failed to look up status server tls secret: secrets \"%s\" not found",
                   s->secret);
        return NULL;
    }
    const char *b64 = kt_json_str(json_object_get(sec, "data"), CA_KEY, NULL);
    uint8_t *raw = NULL;
    size_t n = 0;
    struct kt_err ignored = {0};
    if (!b64 || !b64[0] || kt_crypto_base64_decode(b64, strlen(b64), &raw, &n, &ignored) != 0) {
        kt_err_set(err, KT_EINVAL, "failed to find status server ca.crt in tls secret");
        return NULL;
    }
    return (char *)raw; /* NUL-terminated by the decoder */
}

static int build(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    if (!b->status_server) {
        return 0;
    }
    char *ca = secret_ca(b, err);
    if (!ca) {
        return -1;
    }
    char *name = kt_xasprintf("%s" TLS_SUFFIX, b->tj->name);
    json_t *cm =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", name, "namespace", b->tj->namespace_, "data", CA_KEY, ca);
    free(name);
    free(ca);
    if (!cm) {
        return kt_err_set(err, KT_EINVAL, "failed to find status server ca.crt in tls secret");
    }
    json_array_append_new(objects, cm);
    return 0;
}

const struct kt_plugin kt_plugin_trainjobstatus = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "TrainJobStatus",
    .enforce_podspec = enforce_podspec,
    .build = build,
};
