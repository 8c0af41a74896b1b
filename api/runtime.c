/* SPDX-License-Identifier: Apache-2.0 */
/* api/runtime.c - the TrainingRuntime / ClusterTrainingRuntime codec.
 *
 * Mirrors the kubebuilder:default markers of pkg/apis/trainer/v1alpha1/trainingruntime_types.go
 * and the `default:` entries of JobSet v0.12.0's CRD at the JobSetSpec level. The one-of rule
 * on mlPolicy and all value checks belong to the validator. */
#include "api/runtime.h"

#include <string.h>

#include "api/field.h"
#include "common/base/mem.h"

#define JS "spec.template.spec."

/* The `default:` entries of our runtime CRDs (api/trainer.kubeflow.org_*trainingruntimes.yaml,
 * docs/internals/upstream.md#trainingruntime-and-clustertrainingruntime); tests/unit/test_api.c
 * checks this table against both CRD files. */
static const struct kt__default runtime_defaults[] = {
    {"spec.mlPolicy.mpi.numProcPerNode", KT__DEF_I32, NULL, 1},
    {"spec.mlPolicy.mpi.mpiImplementation", KT__DEF_STR, "OpenMPI", 0},
    {"spec.mlPolicy.mpi.sshAuthMountPath", KT__DEF_STR, "/root/.ssh", 0},
    {"spec.mlPolicy.mpi.runLauncherAsNode", KT__DEF_BOOL, NULL, 0},
    {"spec.mlPolicy.flux.numProcPerNode", KT__DEF_I32, NULL, 1},
    {"spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds", KT__DEF_I32, NULL, 60},
    {"spec.podGroupPolicy.volcano.networkTopology.mode", KT__DEF_STR, "hard", 0},
    {"spec.podGroupPolicy.volcano.networkTopology.highestTierAllowed", KT__DEF_I64, NULL, 1},
    {JS "replicatedJobs[].replicas", KT__DEF_I32, NULL, 1},
    {JS "replicatedJobs[].groupName", KT__DEF_STR, "default", 0},
    {JS "failurePolicy.restartStrategy", KT__DEF_STR, "Recreate", 0},
    {JS "volumeClaimPolicies[].retentionPolicy.whenDeleted", KT__DEF_STR, "Delete", 0},
};

const struct kt__default *kt__runtime_defaults(size_t *n)
{
    *n = KT_ARRAY_SIZE(runtime_defaults);
    return runtime_defaults;
}

/* The mlPolicy sources in the order of the CRD's one-of CEL rule; SRC_* index the table. */
enum { SRC_TORCH, SRC_MPI, SRC_JAX, SRC_XGBOOST, SRC_FLUX };

static const struct {
    const char *path;
    enum kt_policy_kind kind;
} ml_sources[] = {
    {"spec.mlPolicy.torch", KT_POLICY_TORCH}, {"spec.mlPolicy.mpi", KT_POLICY_MPI},
    {"spec.mlPolicy.jax", KT_POLICY_JAX},     {"spec.mlPolicy.xgboost", KT_POLICY_XGBOOST},
    {"spec.mlPolicy.flux", KT_POLICY_FLUX},
};

#define N_ML_SOURCES (KT_ARRAY_SIZE(ml_sources))

static int decode_torch(json_t *torch, struct kt_err *err)
{
    json_t *inj = NULL;
    json_t *targets = NULL;
    json_t *t;
    size_t i;

    if (kt__field_obj(torch, "spec.mlPolicy.torch.envInjection", &inj, err) < 0 ||
        kt__field_arr_of(inj, "spec.mlPolicy.torch.envInjection.targets", JSON_OBJECT, &targets,
                         err) < 0) {
        return -1;
    }
    json_array_foreach(targets, i, t)
    {
        const char *job = NULL;
        json_t *names = NULL;
        char p[96];

        kt__field_path_fmt(p, sizeof(p), "spec.mlPolicy.torch.envInjection.targets[%zu].jobName",
                           i);
        if (kt__field_str(t, p, &job, err) < 0) {
            return -1;
        }
        kt__field_path_fmt(p, sizeof(p),
                           "spec.mlPolicy.torch.envInjection.targets[%zu].containerNames", i);
        if (kt__field_arr_of(t, p, JSON_STRING, &names, err) < 0) {
            return -1;
        }
    }
    return 0;
}

static int decode_mpi_flux(struct kt_ml_policy *ml, json_t *mpi, json_t *flux, struct kt_err *err)
{
    struct kt_opt_i64 n = {0};

    ml->mpi_num_proc_per_node = 1;
    ml->mpi_implementation = "OpenMPI";
    ml->mpi_ssh_auth_mount_path = "/root/.ssh";
    ml->flux_num_proc_per_node = 1;
    if (kt__field_i32(mpi, "spec.mlPolicy.mpi.numProcPerNode", &n, err) < 0 ||
        kt__field_str(mpi, "spec.mlPolicy.mpi.mpiImplementation", &ml->mpi_implementation, err) <
            0 ||
        kt__field_str(mpi, "spec.mlPolicy.mpi.sshAuthMountPath", &ml->mpi_ssh_auth_mount_path,
                      err) < 0 ||
        kt__field_bool(mpi, "spec.mlPolicy.mpi.runLauncherAsNode", &ml->mpi_run_launcher_as_node,
                       err) < 0) {
        return -1;
    }
    if (n.has) {
        ml->mpi_num_proc_per_node = n.v;
    }
    n.has = false;
    if (kt__field_i32(flux, "spec.mlPolicy.flux.numProcPerNode", &n, err) < 0) {
        return -1;
    }
    if (n.has) {
        ml->flux_num_proc_per_node = n.v;
    }
    return 0;
}

static int decode_ml(json_t *spec, struct kt_ml_policy *ml, struct kt_err *err)
{
    json_t *policy = NULL;
    json_t *src[N_ML_SOURCES] = {0};

    if (kt__field_obj(spec, "spec.mlPolicy", &policy, err) < 0 ||
        kt__field_i32(policy, "spec.mlPolicy.numNodes", &ml->num_nodes, err) < 0) {
        return -1;
    }
    ml->present = policy != NULL;
    for (size_t i = 0; i < N_ML_SOURCES; i++) {
        if (kt__field_obj(policy, ml_sources[i].path, &src[i], err) < 0) {
            return -1;
        }
        if (!src[i]) {
            continue;
        }
        ml->sources |= 1u << ml_sources[i].kind;
        if (ml->kind == KT_POLICY_NONE) {
            ml->kind = ml_sources[i].kind;
            ml->source = src[i];
        }
    }
    if (decode_torch(src[SRC_TORCH], err) < 0) {
        return -1;
    }
    return decode_mpi_flux(ml, src[SRC_MPI], src[SRC_FLUX], err);
}

static int decode_pg(json_t *spec, struct kt_podgroup_policy *pg, struct kt_err *err)
{
    json_t *policy = NULL;
    json_t *cosched = NULL;
    json_t *volcano = NULL;
    const char *mode = NULL;
    struct kt_opt_i64 n = {0};

    pg->schedule_timeout_seconds = 60;
    if (kt__field_obj(spec, "spec.podGroupPolicy", &policy, err) < 0 ||
        kt__field_obj(policy, "spec.podGroupPolicy.coscheduling", &cosched, err) < 0 ||
        kt__field_i32(cosched, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds", &n, err) <
            0 ||
        kt__field_obj(policy, "spec.podGroupPolicy.volcano", &volcano, err) < 0 ||
        kt__field_obj(volcano, "spec.podGroupPolicy.volcano.networkTopology", &pg->network_topology,
                      err) < 0 ||
        kt__field_str(pg->network_topology, "spec.podGroupPolicy.volcano.networkTopology.mode",
                      &mode, err) < 0) {
        return -1;
    }
    pg->coscheduling = cosched != NULL;
    pg->volcano = volcano != NULL;
    if (n.has) {
        pg->schedule_timeout_seconds = n.v;
    }
    return 0;
}

/* Type-check what the builder reads from the JobSet template: metadata, spec and each
 * replicated job's name and template (replicas/groupName were checked by the defaulter). */
static int decode_template(json_t *tmpl, struct kt_err *err)
{
    json_t *meta = NULL;
    json_t *spec = NULL;
    json_t *jobs = NULL;
    json_t *job;
    size_t i;

    if (kt__field_obj(tmpl, "spec.template.metadata", &meta, err) < 0 ||
        kt__field_obj(tmpl, "spec.template.spec", &spec, err) < 0 ||
        kt__field_arr_of(spec, JS "replicatedJobs", JSON_OBJECT, &jobs, err) < 0) {
        return -1;
    }
    json_array_foreach(jobs, i, job)
    {
        const char *name = NULL;
        json_t *jt = NULL;
        char p[96];

        kt__field_path_fmt(p, sizeof(p), JS "replicatedJobs[%zu].name", i);
        if (kt__field_str(job, p, &name, err) < 0) {
            return -1;
        }
        kt__field_path_fmt(p, sizeof(p), JS "replicatedJobs[%zu].template", i);
        if (kt__field_obj(job, p, &jt, err) < 0) {
            return -1;
        }
    }
    return 0;
}

static int decode_run_policy(json_t *spec, struct kt_run_policy *rp, struct kt_err *err)
{
    json_t *policy = NULL;
    if (kt__field_obj(spec, "spec.runPolicy", &policy, err) < 0 ||
        kt__field_i64(policy, "spec.runPolicy.activeDeadlineSeconds", &rp->active_deadline_seconds,
                      err) < 0 ||
        kt__field_i32(policy, "spec.runPolicy.ttlSecondsAfterFinished",
                      &rp->ttl_seconds_after_finished, err) < 0) {
        return -1;
    }
    return 0;
}

static int decode_fields(json_t *obj, struct kt_runtime *out, struct kt_err *err)
{
    json_t *meta = NULL;
    json_t *spec = NULL;

    out->name = "";
    out->namespace_ = "";
    if (kt__field_obj(obj, "metadata", &meta, err) < 0 ||
        kt__field_str(meta, "metadata.name", &out->name, err) < 0 ||
        kt__field_str(meta, "metadata.namespace", &out->namespace_, err) < 0 ||
        kt__field_obj(obj, "spec", &spec, err) < 0 || decode_ml(spec, &out->ml, err) < 0 ||
        decode_pg(spec, &out->pg, err) < 0 || decode_run_policy(spec, &out->run_policy, err) < 0 ||
        kt__field_obj(spec, "spec.template", &out->template_, err) < 0) {
        return -1;
    }
    if (!out->template_) {
        out->template_placeholder_ = json_object();
        out->template_ = out->template_placeholder_;
        return 0;
    }
    return decode_template(out->template_, err);
}

int kt_runtime_decode(json_t *obj, struct kt_runtime *out, struct kt_err *err)
{
    static const char *const kinds[] = {"TrainingRuntime", "ClusterTrainingRuntime"};
    const char *kind;

    memset(out, 0, sizeof(*out));
    if (kt__field_check_kind(obj, kinds, 2, err) < 0 ||
        kt__field_defaults(obj, runtime_defaults, KT_ARRAY_SIZE(runtime_defaults), err) < 0 ||
        decode_fields(obj, out, err) < 0) {
        json_decref(obj);
        kt_runtime_release(out);
        return -1;
    }
    kind = json_string_value(json_object_get(obj, "kind"));
    out->cluster = strcmp(kind, kinds[1]) == 0;
    out->obj = obj;
    return 0;
}

static void del_at(json_t *root, const char *parent, const char *key)
{
    json_t *obj = kt__field_get_parent(root, parent);

    if (obj) {
        json_object_del(obj, key);
    }
}

static void encode_ml(json_t *out, const struct kt_runtime *rt)
{
    const struct kt_ml_policy *ml = &rt->ml;
    struct kt_opt_i64 n = {.has = true};

    if (!ml->present) {
        del_at(out, "spec", "mlPolicy");
        return;
    }
    kt__field_make_parent(out, "spec.mlPolicy");
    kt__field_put_int(out, "spec.mlPolicy", "numNodes", ml->num_nodes);
    if (kt__field_get_parent(out, "spec.mlPolicy.mpi")) {
        n.v = ml->mpi_num_proc_per_node;
        kt__field_put_int(out, "spec.mlPolicy.mpi", "numProcPerNode", n);
        kt__field_put_str(out, "spec.mlPolicy.mpi", "mpiImplementation", ml->mpi_implementation,
                          NULL);
        kt__field_put_str(out, "spec.mlPolicy.mpi", "sshAuthMountPath", ml->mpi_ssh_auth_mount_path,
                          NULL);
        kt__field_put_bool(out, "spec.mlPolicy.mpi", "runLauncherAsNode",
                           ml->mpi_run_launcher_as_node, false);
    }
    if (kt__field_get_parent(out, "spec.mlPolicy.flux")) {
        n.v = ml->flux_num_proc_per_node;
        kt__field_put_int(out, "spec.mlPolicy.flux", "numProcPerNode", n);
    }
}

static void encode_pg(json_t *out, const struct kt_runtime *rt)
{
    const struct kt_podgroup_policy *pg = &rt->pg;
    const char *p = "spec.podGroupPolicy";
    struct kt_opt_i64 n = {.has = true, .v = pg->schedule_timeout_seconds};
    json_t *orig_volcano = kt__field_get_parent(rt->obj, "spec.podGroupPolicy.volcano");

    if (!pg->coscheduling) {
        del_at(out, p, "coscheduling");
    } else {
        kt__field_make_parent(out, "spec.podGroupPolicy.coscheduling");
        kt__field_put_int(out, "spec.podGroupPolicy.coscheduling", "scheduleTimeoutSeconds", n);
    }
    if (!pg->volcano) {
        del_at(out, p, "volcano");
        return;
    }
    kt__field_make_parent(out, "spec.podGroupPolicy.volcano");
    kt__field_put_json(out, "spec.podGroupPolicy.volcano", "networkTopology", pg->network_topology,
                       json_object_get(orig_volcano, "networkTopology"));
}

json_t *kt_runtime_encode(const struct kt_runtime *rt)
{
    json_t *out;
    json_t *orig_spec;

    KT_ASSERT(rt->obj);
    out = json_deep_copy(rt->obj);
    orig_spec = json_object_get(rt->obj, "spec");
    kt__field_put_str(out, "metadata", "name", rt->name, "");
    kt__field_put_str(out, "metadata", "namespace", rt->namespace_, "");
    encode_ml(out, rt);
    encode_pg(out, rt);
    if (rt->template_ != rt->template_placeholder_) {
        kt__field_put_json(out, "spec", "template", rt->template_,
                           json_object_get(orig_spec, "template"));
    } else if (json_object_size(rt->template_placeholder_) > 0) {
        kt__field_put_json(out, "spec", "template", rt->template_placeholder_, NULL);
    }
    return out;
}

void kt_runtime_release(struct kt_runtime *rt)
{
    if (!rt) {
        return;
    }
    json_decref(rt->obj);
    json_decref(rt->template_placeholder_);
    memset(rt, 0, sizeof(*rt));
}
