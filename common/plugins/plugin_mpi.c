/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_mpi.c - the MPI plugin (docs/internals/upstream.md#mpi): node counts,
 * slots, the SSH and hostfile volumes and mounts, the OpenMPI envs, the immutable SSH Secret
 * (created only when absent), the hostfile ConfigMap, and its validation. Matches upstream
 * `pkg/runtime/framework/plugins/mpi`. */
#include "common/plugins/plugins.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/crypto/crypto.h"
#include "common/base/mem.h"

#define SSH_VOLUME "mpi-ssh-auth"
#define SSH_SUFFIX "-mpi-ssh-auth"
#define HOSTFILE_VOLUME "mpi-hostfile"
#define HOSTFILE_SUFFIX "-mpi-hostfile"
#define HOSTFILE_DIR "/etc/mpi"
#define HOSTFILE_KEY "hostfile"
#define OPENMPI "OpenMPI"
#define TEXT_MAX (64u << 20)
/* File modes as JSON writes them (decimal). */
#define MODE_0400 256
#define MODE_0640 416
#define MODE_0644 420
#define MODE_0444 292

static const char *const mpi_watches[] = {"v1/ConfigMap", "v1/Secret", NULL};
static const char *const ompi_reserved[] = {
    "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots"};

static bool is_mpi(const struct kt_runtime *rt)
{
    return rt->ml.present && rt->ml.kind == KT_POLICY_MPI;
}

/* numProcPerNode after the TrainJob override and the GPU rule. */
static int64_t mpi_slots(struct kt_build *b)
{
    const struct kt_trainjob *tj = b->tj;
    if (tj->trainer.present && tj->trainer.num_proc_per_node.has) {
        return tj->trainer.num_proc_per_node.v;
    }
    int64_t slots = b->rt->ml.mpi_num_proc_per_node;
    if (slots == 1) {
        int64_t gpus = kt_build_gpus(b);
        slots = gpus > 1 ? gpus : slots;
    }
    return slots;
}

static json_t *key_to_path(const char *key, const char *path, int mode)
{
    return json_pack("{s:s, s:s, s:i}", "key", key, "path", path, "mode", mode);
}

static void add_volumes(const struct kt_trainjob *tj, struct kt_podset *ps, bool launcher)
{
    char *secret = kt_xasprintf("%s%s", tj->name, SSH_SUFFIX);
    json_t *items = json_array();
    json_array_append_new(items, key_to_path("ssh-privatekey", "id_rsa", MODE_0640));
    json_array_append_new(items, key_to_path("ssh-publickey", "id_rsa.pub", MODE_0644));
    json_array_append_new(items, key_to_path("ssh-publickey", "authorized_keys", MODE_0644));
    json_t *vol = json_pack("{s:s, s:{s:s, s:i, s:o}}", "name", SSH_VOLUME, "secret", "secretName",
                            secret, "defaultMode", MODE_0400, "items", items);
    kt_upsert_volume(ps->pod_spec, vol);
    json_decref(vol);
    free(secret);
    if (!launcher) {
        return;
    }
    char *cm = kt_xasprintf("%s%s", tj->name, HOSTFILE_SUFFIX);
    vol = json_pack("{s:s, s:{s:s, s:[o]}}", "name", HOSTFILE_VOLUME, "configMap", "name", cm,
                    "items", key_to_path(HOSTFILE_KEY, HOSTFILE_KEY, MODE_0444));
    kt_upsert_volume(ps->pod_spec, vol);
    json_decref(vol);
    free(cm);
}

static void add_mount(json_t *c, const char *name, const char *path)
{
    json_t *m = json_pack("{s:s, s:s}", "name", name, "mountPath", path);
    kt_upsert_mount(c, m);
    json_decref(m);
}

static int launcher_env(struct kt_build *b, json_t *c, int64_t slots, struct kt_err *err)
{
    const char *impl = b->rt->ml.mpi_implementation ? b->rt->ml.mpi_implementation : "";
    add_mount(c, HOSTFILE_VOLUME, HOSTFILE_DIR);
    if (strcmp(impl, OPENMPI) != 0) {
        return kt_err_set(err, KT_EUNSUPPORTED, "MPI implementation for %s doesn't supported",
                          impl);
    }
    char *s = kt_xasprintf("%lld", (long long)slots);
    json_t *env = json_array();
    json_array_append_new(env, kt_env_value(ompi_reserved[0], HOSTFILE_DIR "/" HOSTFILE_KEY));
    json_array_append_new(env, kt_env_value(ompi_reserved[2], "true"));
    json_array_append_new(env, kt_env_value(ompi_reserved[3], s));
    json_array_append_new(env, kt_env_value(ompi_reserved[1], "-o ConnectionAttempts=10"));
    kt_upsert_envs(c, env);
    json_decref(env);
    free(s);
    return 0;
}

static void set_node_count(struct kt_build *b)
{
    const struct kt_trainjob *tj = b->tj;
    struct kt_podset *node = kt_info_podset_by_name(&b->info, KT_NODE);
    if (!node || !tj->trainer.present || !tj->trainer.num_nodes.has) {
        return;
    }
    int64_t n = tj->trainer.num_nodes.v;
    if (b->rt->ml.mpi_run_launcher_as_node) {
        n = n - 1 > 1 ? n - 1 : 1;
    }
    node->count = n;
}

static int mpi_enforce(struct kt_build *b, struct kt_err *err)
{
    if (!is_mpi(b->rt)) {
        return 0;
    }
    set_node_count(b);
    int64_t slots = mpi_slots(b);
    const char *mount = b->rt->ml.mpi_ssh_auth_mount_path;
    for (size_t i = 0; i < b->info.n_podsets; i++) {
        struct kt_podset *ps = &b->info.podsets[i];
        bool launcher = strcmp(ps->name, KT_LAUNCHER) == 0;
        if (!launcher && strcmp(ps->name, KT_NODE) != 0) {
            continue;
        }
        add_volumes(b->tj, ps, launcher);
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(ps->pod_spec, "containers"), k, c)
        {
            if (strcmp(kt_json_str(c, "name", ""), KT_NODE) != 0) {
                continue;
            }
            add_mount(c, SSH_VOLUME, mount ? mount : "/root/.ssh");
            if (launcher && launcher_env(b, c, slots, err) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

static json_t *object_meta(const struct kt_trainjob *tj, const char *suffix)
{
    char *name = kt_xasprintf("%s%s", tj->name, suffix);
    json_t *m = json_pack("{s:s, s:s}", "name", name, "namespace", tj->namespace_);
    free(name);
    return m;
}

static json_t *b64(const char *s)
{
    char *e = kt_crypto_base64_encode(s, strlen(s));
    json_t *j = json_string(e);
    free(e);
    return j;
}

static int ssh_secret(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    char *priv = NULL, *pub = NULL;
    char *name = kt_xasprintf("%s%s", tj->name, SSH_SUFFIX);
    const json_t *have = kt_view_get(b->view, "v1", "Secret", tj->namespace_, name);
    free(name);
    if (have) {
        return 0;
    }
    if (!b->view || !b->view->ssh_keygen) {
        return kt_err_set(err, KT_EINVAL, "failed to build SSH Auth secret: no key generator");
    }
    if (b->view->ssh_keygen(b->view->keygen_ctx, &priv, &pub, err) != 0) {
        return kt_err_prefix(err, "failed to build SSH Auth secret");
    }
    json_t *data = json_pack("{s:o, s:o}", "ssh-privatekey", b64(priv), "ssh-publickey", b64(pub));
    json_array_append_new(objects,
                          json_pack("{s:s, s:s, s:o, s:b, s:o, s:s}", "apiVersion", "v1", "kind",
                                    "Secret", "metadata", object_meta(tj, SSH_SUFFIX), "immutable",
                                    1, "data", data, "type", "kubernetes.io/ssh-auth"));
    free(priv);
    free(pub);
    return 0;
}

static json_t *hostfile_map(struct kt_build *b, struct kt_err *err)
{
    struct kt_buf text;
    bool as_node = b->rt->ml.mpi_run_launcher_as_node;
    int64_t slots = mpi_slots(b);
    kt_buf_init(&text, TEXT_MAX);
    for (size_t i = 0; i < b->info.n_podsets; i++) {
        const struct kt_podset *ps = &b->info.podsets[i];
        bool launcher = strcmp(ps->name, KT_LAUNCHER) == 0;
        if (strcmp(ps->name, KT_NODE) != 0 && !(as_node && launcher)) {
            continue;
        }
        for (size_t e = 0; e < ps->endpoints.len; e++) {
            if (kt_buf_printf(&text, err, "%s slots=%lld\n", ps->endpoints.items[e],
                              (long long)slots) != 0) {
                return NULL;
            }
        }
    }
    json_t *data = json_pack("{s:s%}", HOSTFILE_KEY, text.data ? text.data : "", text.len);
    kt_buf_release(&text);
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                     object_meta(b->tj, HOSTFILE_SUFFIX), "data", data);
}

static int mpi_build(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    if (!is_mpi(b->rt)) {
        return 0;
    }
    if (ssh_secret(b, objects, err) != 0) {
        return -1;
    }
    json_t *cm = hostfile_map(b, err);
    if (!cm) {
        return -1;
    }
    json_array_append_new(objects, cm);
    return 0;
}

static void validate_reserved(const struct kt_trainjob *tj, struct kt_ferrs *errs)
{
    kt__validate_reserved_envs(tj, ompi_reserved, KT_ARRAY_SIZE(ompi_reserved), errs);
}

static void mpi_validate(const struct kt_validation *v, struct kt_ferrs *errs,
                         struct kt_strv *warnings)
{
    const struct kt_trainjob *tj = v->tj;
    (void)warnings;
    if (!is_mpi(v->rt) || !tj->trainer.present) {
        return;
    }
    int64_t n = tj->trainer.num_nodes.has ? tj->trainer.num_nodes.v : 1;
    if (n >= 2 && v->rt->ml.mpi_run_launcher_as_node &&
        (!kt_info_podset_by_name(v->info, KT_LAUNCHER) ||
         !kt_info_podset_by_name(v->info, KT_NODE))) {
        kt_ferrs_add_int(errs, KT_FERR_INVALID, "spec.trainer.numNodes", (long long)n,
                         "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode "
                         "does not have either launcher and node");
    }
    validate_reserved(tj, errs);
}

const struct kt_plugin kt_plugin_mpi = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "MPI",
    .watches = mpi_watches,
    .validate = mpi_validate,
    .enforce_ml_policy = mpi_enforce,
    .build = mpi_build,
};
