/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_plugins.c - the MPI, JAX, XGBoost, Flux, CoScheduling and Volcano plugins
 * (docs/internals/upstream.md#mpi to #coscheduling-and-volcano) through the whole build and
 * validation pipelines, with negative cases (self-gating, build errors, validation denials). The
 * byte-exact outputs are pinned by the golden cases under
 * tests/golden/{mpi,jax,xgboost,flux,cosched,volcano}-*. */
#include "tests/test.h"

#include <stdlib.h>

#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/crypto/crypto.h"
#include "common/framework/framework.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/plugins/plugins.h"

/* JSON written with ' for " (test readability). Caller owns the result. */
static json_t *js(const char *s)
{
    char *t = kt_xstrdup(s);
    for (char *p = t; *p; p++) {
        *p = *p == '\'' ? '"' : *p;
    }
    json_t *v = kt_json_parse(t, strlen(t), NULL);
    free(t);
    CHECK(v != NULL);
    return v;
}

/* ---- a view over an array of objects, with a counting key generator ---- */

struct fake {
    json_t *objects;
    int keygens;
    bool keygen_fails;
};

static const json_t *fake_get(void *ctx, const char *av, const char *kind, const char *ns,
                              const char *name)
{
    struct fake *f = ctx;
    size_t i;
    json_t *o;
    json_array_foreach(f->objects, i, o)
    {
        json_t *m = json_object_get(o, "metadata");
        if (strcmp(kt_json_str(o, "apiVersion", ""), av) == 0 &&
            strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
            strcmp(kt_json_str(m, "name", ""), name) == 0 &&
            (!ns || strcmp(kt_json_str(m, "namespace", ""), ns) == 0)) {
            return o;
        }
    }
    return NULL;
}

static int fake_keygen(void *ctx, char **priv, char **pub, struct kt_err *err)
{
    struct fake *f = ctx;
    f->keygens++;
    if (f->keygen_fails) {
        return kt_err_set(err, KT_EINTERNAL, "no entropy");
    }
    *priv = kt_xstrdup("-----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----\n");
    *pub = kt_xstrdup("ecdsa-sha2-nistp521 AAAA\n");
    return 0;
}

/* ---- pipeline helpers ---- */

struct run {
    struct kt_trainjob tj;
    struct kt_runtime rt;
    struct fake fake;
    struct kt_view view;
    json_t *out; /* build output, NULL on failure */
    struct kt_err err;
};

static void run_init(struct run *r, const char *tj, const char *rt, const char *objects)
{
    memset(r, 0, sizeof(*r));
    CHECK_OK(kt_trainjob_decode(js(tj), &r->tj, NULL));
    CHECK_OK(kt_runtime_decode(js(rt), &r->rt, NULL));
    r->fake.objects = js(objects ? objects : "[]");
    r->view = (struct kt_view){fake_get, &r->fake, fake_keygen, &r->fake, {NULL, NULL}};
}

static int run_build(struct run *r)
{
    struct kt_framework fw;
    kt_framework_default(&fw);
    json_decref(r->out);
    r->out = NULL;
    return kt_framework_build(&fw, &r->tj, &r->rt, &r->view, &r->out, &r->err);
}

/* The aggregate validation message ("" when allowed). Caller owns the result. */
static char *run_validate(struct run *r)
{
    struct kt_framework fw;
    struct kt_ferrs errs;
    struct kt_strv warn;
    kt_framework_default(&fw);
    kt_ferrs_init(&errs);
    kt_strv_init(&warn);
    struct kt_framework_validate_req in = {.tj = &r->tj, .rt = &r->rt, .view = &r->view};
    CHECK_OK(kt_framework_validate(&fw, &in, &errs, &warn, &r->err));
    char *s = kt_ferrs_string(&errs);
    kt_ferrs_release(&errs);
    kt_strv_release(&warn);
    return s;
}

static void run_release(struct run *r)
{
    json_decref(r->out);
    json_decref(r->fake.objects);
    kt_trainjob_release(&r->tj);
    kt_runtime_release(&r->rt);
}

static json_t *find_obj(const json_t *objs, const char *kind, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        if (strcmp(kt_json_str(o, "kind", ""), kind) == 0 &&
            strcmp(kt_json_str(json_object_get(o, "metadata"), "name", ""), name) == 0) {
            return o;
        }
    }
    return NULL;
}

/* replicatedJobs[name].template.spec.template.spec of the JobSet in out. */
static json_t *pod_of(const json_t *out, const char *tj, const char *job)
{
    json_t *jset = find_obj(out, "JobSet", tj);
    json_t *rj = kt_json_arr_find(kt_json_path(jset, "spec.replicatedJobs"), "name", job, NULL);
    return kt_json_path(rj, "template.spec.template.spec");
}

static json_t *container_of(const json_t *pod, const char *name)
{
    return kt_json_arr_find(json_object_get(pod, "containers"), "name", name, NULL);
}

static const char *env_of(const json_t *c, const char *name)
{
    json_t *e = kt_json_arr_find(json_object_get(c, "env"), "name", name, NULL);
    return e ? kt_json_str(e, "value", "<valueFrom>") : NULL;
}

/* data[key] of a ConfigMap or Secret (keys hold dots, so no kt_json_path). */
static const char *data_of(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "data"), key));
}

static const char *str_at(const json_t *v, const char *path)
{
    return json_string_value(kt_json_path(v, path));
}

#define TJ_HEAD                                                                                    \
    "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'j',"      \
    "'namespace':'ns','uid':'u-1'},'spec':{'runtimeRef':{'name':'rt','kind':'TrainingRuntime'}"
#define RT_HEAD                                                                                    \
    "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':{"          \
    "'name':'rt','namespace':'ns'},'spec':{"
#define ANCESTOR(a) "'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'" a "'}}"
#define JOB(name, meta, pod)                                                                       \
    "{'name':'" name "','template':{" meta "'spec':{'template':{'spec':" pod "}}}}"
#define NODE_POD(res) "{'containers':[{'name':'node','image':'i'" res "}]}"

/* ---- MPI ---- */

static const char *MPI_RT =
    RT_HEAD "'mlPolicy':{'mpi':{'numProcPerNode':1,'runLauncherAsNode':true}},'template':{'spec':{"
            "'replicatedJobs':[" JOB("launcher", , NODE_POD("")) "," JOB(
                "node", ANCESTOR("trainer") ",",
                NODE_POD(",'resources':{'limits':{'nvidia.com/gpu':3}}")) "]}}}}";

static void test_mpi_build(void)
{
    struct run r;
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':3}}}", MPI_RT, NULL);
    CHECK_OK(run_build(&r));
    json_t *sec = find_obj(r.out, "Secret", "j-mpi-ssh-auth");
    CHECK(sec != NULL);
    CHECK_EQ_INT(r.fake.keygens, 1);
    CHECK(json_is_true(json_object_get(sec, "immutable")));
    CHECK_EQ_STR(kt_json_str(sec, "type", ""), "kubernetes.io/ssh-auth");
    char *b64 = kt_crypto_base64_encode("ecdsa-sha2-nistp521 AAAA\n", 25);
    CHECK_EQ_STR(str_at(sec, "data.ssh-publickey"), b64);
    free(b64);
    /* runLauncherAsNode: node count 3-1 = 2, launcher first in the hostfile (PodSet order),
     * slots from the 3 GPUs because the runtime's numProcPerNode is 1. */
    json_t *cm = find_obj(r.out, "ConfigMap", "j-mpi-hostfile");
    CHECK_EQ_STR(str_at(cm, "data.hostfile"),
                 "j-launcher-0-0.j slots=3\nj-node-0-0.j slots=3\nj-node-0-1.j slots=3\n");
    json_t *launcher = container_of(pod_of(r.out, "j", "launcher"), "node");
    CHECK_EQ_STR(env_of(launcher, "OMPI_MCA_orte_set_default_slots"), "3");
    CHECK_EQ_STR(env_of(launcher, "OMPI_MCA_orte_default_hostfile"), "/etc/mpi/hostfile");
    json_t *vol = kt_json_arr_find(json_object_get(pod_of(r.out, "j", "node"), "volumes"), "name",
                                   "mpi-ssh-auth", NULL);
    CHECK_EQ_INT(kt_json_int(json_object_get(vol, "secret"), "defaultMode", 0), 0400);
    CHECK(env_of(container_of(pod_of(r.out, "j", "node"), "node"), "OMPI_MCA_plm_rsh_args") ==
          NULL);
    run_release(&r);
}

static void test_mpi_secret_reuse_and_errors(void)
{
    struct run r;
    /* An existing Secret is reused: no key generated, not returned. */
    run_init(&r, TJ_HEAD ",'trainer':{'numProcPerNode':5}}}", MPI_RT,
             "[{'apiVersion':'v1','kind':'Secret','metadata':{'name':'j-mpi-ssh-auth',"
             "'namespace':'ns'}}]");
    CHECK_OK(run_build(&r));
    CHECK(find_obj(r.out, "Secret", "j-mpi-ssh-auth") == NULL);
    CHECK_EQ_INT(r.fake.keygens, 0);
    /* trainer.numProcPerNode overrides the GPU rule. */
    CHECK_CONTAINS(str_at(find_obj(r.out, "ConfigMap", "j-mpi-hostfile"), "data.hostfile"),
                   "slots=5\n");
    run_release(&r);

    /* A failing key generator fails the build. */
    run_init(&r, TJ_HEAD ",'trainer':{}}}", MPI_RT, NULL);
    r.fake.keygen_fails = true;
    CHECK_EQ_INT(run_build(&r), -1);
    CHECK_CONTAINS(r.err.msg, "failed to build SSH Auth secret");
    CHECK(r.out == NULL);
    /* No generator at all. */
    r.fake.keygen_fails = false;
    r.view.ssh_keygen = NULL;
    CHECK_EQ_INT(run_build(&r), -1);
    run_release(&r);

    /* Another implementation is a build error. */
    run_init(&r, TJ_HEAD ",'trainer':{}}}",
             RT_HEAD "'mlPolicy':{'mpi':{'mpiImplementation':'Intel'}},'template':{'spec':{"
                     "'replicatedJobs':[" JOB("launcher", , NODE_POD("")) "]}}}}",
             NULL);
    CHECK_EQ_INT(run_build(&r), -1);
    CHECK_EQ_STR(r.err.msg, "MPI implementation for Intel doesn't supported");
    run_release(&r);
}

static void test_mpi_validate(void)
{
    struct run r;
    run_init(&r,
             TJ_HEAD ",'trainer':{'numNodes':2,'env':[{'name':'OMPI_MCA_orte_set_default_slots',"
                     "'value':'1'},{'name':'X','value':'y'}]}}}",
             RT_HEAD "'mlPolicy':{'mpi':{'runLauncherAsNode':true}},'template':{'spec':{"
                     "'replicatedJobs':[" JOB("node", , NODE_POD("")) "]}}}}",
             NULL);
    char *msg = run_validate(&r);
    CHECK_CONTAINS(msg, "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI "
                        "trainingRuntime with enabled runLauncherAsNode does not have either "
                        "launcher and node");
    CHECK_CONTAINS(msg, "must not have reserved envs, invalid envs configured: "
                        "[OMPI_MCA_orte_set_default_slots]");
    free(msg);
    run_release(&r);

    /* numNodes 1 and no reserved env: allowed. */
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}", MPI_RT, NULL);
    msg = run_validate(&r);
    CHECK_EQ_STR(msg, "");
    free(msg);
    run_release(&r);
}

/* ---- JAX and XGBoost ---- */

static const char ML_RT_FMT[] =
    RT_HEAD "'mlPolicy':{'numNodes':3,'%s':{}},'template':{'spec':{"
            "'replicatedJobs':[" JOB("node", ANCESTOR("trainer") ",", NODE_POD("%s")) "]}}}}";

static char *ml_rt(const char *policy, const char *res)
{
    return kt_xasprintf(ML_RT_FMT, policy, res);
}

static void test_jax(void)
{
    struct run r;
    char *rt = ml_rt("jax", "");
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':4}}}", rt, NULL);
    CHECK_OK(run_build(&r));
    json_t *pod = pod_of(r.out, "j", "node");
    json_t *c = container_of(pod, "node");
    CHECK_EQ_STR(env_of(c, "JAX_NUM_PROCESSES"), "4");
    CHECK_EQ_STR(env_of(c, "JAX_COORDINATOR_ADDRESS"), "j-node-0-0.j:29500");
    CHECK_EQ_STR(env_of(c, "JAX_PROCESS_ID"), "<valueFrom>");
    CHECK_EQ_INT(json_array_size(json_object_get(c, "ports")), 1);
    run_release(&r);

    /* No spec.trainer: no envs, count from mlPolicy.numNodes. */
    run_init(&r, TJ_HEAD "}}", rt, NULL);
    CHECK_OK(run_build(&r));
    c = container_of(pod_of(r.out, "j", "node"), "node");
    CHECK(json_object_get(c, "env") == NULL);
    CHECK(json_object_get(c, "ports") == NULL);
    json_t *rj =
        json_array_get(kt_json_path(find_obj(r.out, "JobSet", "j"), "spec.replicatedJobs"), 0);
    CHECK_EQ_INT(kt_json_int(kt_json_path(rj, "template.spec"), "parallelism", 0), 3);
    run_release(&r);
    free(rt);
}

static void test_xgboost(void)
{
    struct run r;
    char *rt = ml_rt("xgboost", ",'resources':{'requests':{'amd.com/GPU':'1500m'}}");
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':2,'env':[{'name':'A','value':'a'}]}}}", rt, NULL);
    CHECK_OK(run_build(&r));
    json_t *c = container_of(pod_of(r.out, "j", "node"), "node");
    /* 1.5 GPUs round up to 2 per node, x 2 nodes. */
    CHECK_EQ_STR(env_of(c, "DMLC_NUM_WORKER"), "4");
    CHECK_EQ_STR(env_of(c, "DMLC_TRACKER_URI"), "j-node-0-0.j");
    CHECK_EQ_STR(env_of(c, "DMLC_TRACKER_PORT"), "29500");
    /* PlainML (earlier in the table) upserted the user env first. */
    CHECK_EQ_STR(kt_json_str(json_array_get(json_object_get(c, "env"), 0), "name", ""), "A");
    run_release(&r);

    run_init(&r,
             TJ_HEAD ",'trainer':{'env':[{'name':'DMLC_TASK_ID','value':'0'},{'name':'B'},"
                     "{'name':'DMLC_TRACKER_PORT','value':'1'}]}}}",
             rt, NULL);
    char *msg = run_validate(&r);
    CHECK_EQ_STR(msg, "[spec.trainer.env[0]: Forbidden: DMLC_TASK_ID is reserved for the XGBoost "
                      "runtime, spec.trainer.env[2]: Forbidden: DMLC_TRACKER_PORT is reserved for "
                      "the XGBoost runtime]");
    free(msg);
    run_release(&r);
    free(rt);

    /* The same env on a JAX runtime is not checked. */
    rt = ml_rt("jax", "");
    run_init(&r, TJ_HEAD ",'trainer':{'env':[{'name':'DMLC_TASK_ID','value':'0'}]}}}", rt, NULL);
    msg = run_validate(&r);
    CHECK_EQ_STR(msg, "");
    free(msg);
    run_release(&r);
    free(rt);
}

/* ---- Flux ---- */

static const char *FLUX_RT =
    RT_HEAD "'mlPolicy':{'flux':{'numProcPerNode':2}},'template':{'spec':{'replicatedJobs':[" JOB(
        "node", ANCESTOR("trainer") ",",
        "{'containers':[{'name':'node','image':'i','command':['run','me'],'args':['--x'],"
        "'env':[{'name':'FLUX_NETWORK_DEVICE','value':'ib0'}]}]}") "]}}}}";

static void test_flux(void)
{
    struct run r;
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':4,'args':['  a ']}}}", FLUX_RT, NULL);
    CHECK_OK(run_build(&r));
    json_t *pod = pod_of(r.out, "j", "node");
    json_t *c = container_of(pod, "node");
    json_t *cmd = json_object_get(c, "command");
    CHECK_EQ_INT(json_array_size(cmd), 3);
    CHECK_EQ_STR(json_string_value(json_array_get(cmd, 2)), "run me   a");
    /* The runtime args stay (only the TrainJob's are cleared). */
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(c, "args"), 0)), "--x");
    CHECK(kt_json_arr_find(json_object_get(pod, "initContainers"), "name", "flux-installer",
                           NULL) != NULL);
    CHECK_EQ_INT(json_array_size(json_object_get(pod, "volumes")), 5);
    CHECK_EQ_INT(json_array_size(json_object_get(c, "volumeMounts")), 5);
    json_t *cm = find_obj(r.out, "ConfigMap", "j-flux-entrypoint");
    const char *init = data_of(cm, "init.sh");
    CHECK_CONTAINS(init, "hosts=\"j-node-0-[0-3]\"");
    CHECK_CONTAINS(init, "default_bind = \"tcp://ib0:%p\"");
    CHECK_CONTAINS(init, "default_connect = \"tcp://%h.j.ns.svc.cluster.local:%p\"");
    CHECK_CONTAINS(init, "queue-policy = \"fcfs\"");
    CHECK_CONTAINS(data_of(cm, "entrypoint.sh"), "flags=\"-N 4 -n 8  \"");
    CHECK_CONTAINS(data_of(cm, "entrypoint.sh"), "--cores=0-1 > /tmp/R");
    /* The CURVE Secret is the crypto module's certificate for (name, uid). */
    char *cert = kt_crypto_flux_curve_cert("j", "u-1");
    char *b64 = kt_crypto_base64_encode(cert, strlen(cert));
    CHECK_EQ_STR(data_of(find_obj(r.out, "Secret", "j-flux-curve"), "curve.cert"), b64);
    free(cert);
    free(b64);
    run_release(&r);

    /* One node: range "0". Missing numNodes: a build error, not a crash. */
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}", FLUX_RT, NULL);
    CHECK_OK(run_build(&r));
    CHECK_CONTAINS(data_of(find_obj(r.out, "ConfigMap", "j-flux-entrypoint"), "init.sh"),
                   "hosts=\"j-node-0-[0]\"");
    run_release(&r);
    run_init(&r, TJ_HEAD ",'trainer':{}}}", FLUX_RT, NULL);
    CHECK_EQ_INT(run_build(&r), -1);
    CHECK_CONTAINS(r.err.msg, "numNodes");
    run_release(&r);
}

static void test_flux_validate(void)
{
    struct run r;
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}",
             RT_HEAD "'mlPolicy':{'flux':{}},'template':{'spec':{'replicatedJobs':[" JOB(
                 "node", ,
                 "{'initContainers':[{'name':'flux-installer'}],'containers':[{'name':"
                 "'node'}]}") "]}}}}",
             NULL);
    char *msg = run_validate(&r);
    CHECK_EQ_STR(msg, "spec.trainer.initContainers: Invalid value: \"flux-installer\": "
                      "InitContainer 'flux-installer' is reserved");
    free(msg);
    run_release(&r);
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}", FLUX_RT, NULL);
    msg = run_validate(&r);
    CHECK_EQ_STR(msg, "");
    free(msg);
    run_release(&r);
}

/* ---- CoScheduling and Volcano ---- */

#define PG_JOBS                                                                                    \
    "'replicatedJobs':[" JOB("dataset-initializer", ANCESTOR("dataset-initializer") ",",           \
                             "{'containers':[{'name':'d','resources':{'requests':{'cpu':'500m',"   \
                             "'memory':'1Gi'}}}]}") "," JOB("node", ANCESTOR("trainer") ",",       \
                                                            "{'priorityClassName':'p1',"           \
                                                            "'containers':[{'name':'node',"        \
                                                            "'resources':{'requests':{'memory':'"  \
                                                            "500M','cpu':2}}}]}") "]"

static void test_coscheduling(void)
{
    struct run r;
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':3}}}",
             RT_HEAD "'mlPolicy':{'torch':{}},'podGroupPolicy':{'coscheduling':{}},"
                     "'template':{'spec':{" PG_JOBS "}}}}",
             NULL);
    CHECK_OK(run_build(&r));
    json_t *pg = find_obj(r.out, "PodGroup", "j");
    CHECK_EQ_STR(kt_json_str(pg, "apiVersion", ""), "scheduling.x-k8s.io/v1alpha1");
    CHECK_EQ_INT(kt_json_int(json_object_get(pg, "spec"), "minMember", 0), 4);
    CHECK_EQ_INT(kt_json_int(json_object_get(pg, "spec"), "scheduleTimeoutSeconds", 0), 60);
    /* 0.5 + 3 x 2 CPUs; 1Gi + 3 x 500M takes the first operand's binary format. */
    CHECK_EQ_STR(str_at(pg, "spec.minResources.cpu"), "6500m");
    CHECK_EQ_STR(str_at(pg, "spec.minResources.memory"), "2573741824");
    /* Keys sorted as Go marshals a ResourceList. */
    CHECK_EQ_STR(json_object_iter_key(json_object_iter(kt_json_path(pg, "spec.minResources"))),
                 "cpu");
    json_t *rj =
        json_array_get(kt_json_path(find_obj(r.out, "JobSet", "j"), "spec.replicatedJobs"), 0);
    json_t *labels = kt_json_path(rj, "template.spec.template.metadata.labels");
    CHECK_EQ_STR(kt_json_str(labels, "scheduling.x-k8s.io/pod-group", ""), "j");
    /* The PodGroup is first among the plugin objects (table order). */
    CHECK_EQ_STR(kt_json_str(json_array_get(r.out, 1), "kind", ""), "PodGroup");
    run_release(&r);

    /* Existing PodGroup, not suspended: skipped; suspended: re-applied. */
    const char *existing = "[{'apiVersion':'scheduling.x-k8s.io/v1alpha1','kind':'PodGroup',"
                           "'metadata':{'name':'j','namespace':'ns'}}]";
    const char *rt =
        RT_HEAD "'podGroupPolicy':{'coscheduling':{}},'template':{'spec':{" PG_JOBS "}}}}";
    run_init(&r, TJ_HEAD "}}", rt, existing);
    CHECK_OK(run_build(&r));
    CHECK(find_obj(r.out, "PodGroup", "j") == NULL);
    run_release(&r);
    run_init(&r, TJ_HEAD ",'suspend':true}}", rt, existing);
    CHECK_OK(run_build(&r));
    CHECK(find_obj(r.out, "PodGroup", "j") != NULL);
    run_release(&r);

    /* An unparsable request fails the build. */
    run_init(&r, TJ_HEAD "}}",
             RT_HEAD
             "'podGroupPolicy':{'coscheduling':{}},'template':{'spec':{'replicatedJobs':[" JOB(
                 "node", ,
                 "{'containers':[{'name':'node','resources':{'requests':{"
                 "'cpu':'lots'}}}]}") "]}}}}",
             NULL);
    CHECK_EQ_INT(run_build(&r), -1);
    run_release(&r);
}

static void test_volcano(void)
{
    struct run r;
    const char *rt = RT_HEAD
        "'podGroupPolicy':{'volcano':{'networkTopology':{'mode':'hard'}}},'template':{'metadata':{"
        "'annotations':{'scheduling.volcano.sh/queue-name':'q'}},'spec':{" PG_JOBS "}}}}";
    run_init(&r, TJ_HEAD "}}", rt,
             "[{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':{'name':"
             "'p1'}}]");
    char *msg = run_validate(&r);
    CHECK_EQ_STR(msg, "");
    free(msg);
    CHECK_OK(run_build(&r));
    json_t *pg = find_obj(r.out, "PodGroup", "j");
    CHECK_EQ_STR(kt_json_str(pg, "apiVersion", ""), "scheduling.volcano.sh/v1beta1");
    CHECK_EQ_STR(str_at(pg, "spec.queue"), "q");
    CHECK_EQ_STR(str_at(pg, "spec.priorityClassName"), "p1");
    CHECK_EQ_STR(str_at(pg, "spec.networkTopology.mode"), "hard");
    CHECK_EQ_INT(kt_json_int(kt_json_path(pg, "spec.networkTopology"), "highestTierAllowed", 0), 1);
    CHECK_EQ_INT(kt_json_int(json_object_get(pg, "spec"), "minMember", 0), 2);
    json_t *rj =
        json_array_get(kt_json_path(find_obj(r.out, "JobSet", "j"), "spec.replicatedJobs"), 1);
    json_t *ann = kt_json_path(rj, "template.spec.template.metadata.annotations");
    CHECK_EQ_STR(kt_json_str(ann, "scheduling.k8s.io/group-name", ""), "j");
    run_release(&r);

    /* The PriorityClass is missing: denied with the NotFound text. */
    run_init(&r, TJ_HEAD "}}", rt, NULL);
    msg = run_validate(&r);
    CHECK_EQ_STR(msg, "spec.templateSpec.priorityClassName: Invalid value: \"p1\": PriorityClass "
                      "\"p1\" doesn't exist: PriorityClass.scheduling.k8s.io \"p1\" not found");
    free(msg);
    run_release(&r);

    /* An empty queue is denied; no annotation, no queue. */
    run_init(&r, TJ_HEAD "}}",
             RT_HEAD "'podGroupPolicy':{'volcano':{}},'template':{'metadata':{'annotations':{"
                     "'scheduling.volcano.sh/queue-name':''}},'spec':{'replicatedJobs':[]}}}}",
             NULL);
    msg = run_validate(&r);
    CHECK_EQ_STR(msg, "spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: \"\": "
                      "Volcano queue name must not be empty");
    free(msg);
    run_release(&r);
}

/* Every plugin self-gates: a runtime without policies gets none of their objects. */
static void test_self_gating(void)
{
    struct run r;
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':2,'env':[{'name':'DMLC_NUM_WORKER'}]}}}",
             RT_HEAD "'template':{'spec':{'replicatedJobs':[" JOB(
                 "node", ANCESTOR("trainer") ",",
                 "{'initContainers':[{'name':'flux-installer'}]"
                 ",'containers':[{'name':'node'}]}") "]}}}}",
             NULL);
    CHECK_OK(run_build(&r));
    CHECK_EQ_INT(json_array_size(r.out), 2); /* snapshot + JobSet */
    CHECK_EQ_INT(r.fake.keygens, 0);
    char *msg = run_validate(&r);
    CHECK_EQ_STR(msg, "");
    free(msg);
    run_release(&r);
}

/* ---- TrainJobStatus (docs/internals/upstream.md#trainjobstatus-plugin), feature gate off by
 * default ---- */

static const char *STATUS_RT = RT_HEAD "'template':{'spec':{'replicatedJobs':[" JOB(
    "dataset-initializer", ANCESTOR("dataset-initializer") ",",
    "{'containers':[{'name':'dataset-initializer','image':'d'}]}") "," JOB("node",
                                                                           ANCESTOR("trainer") ",",
                                                                           "{'initContainers':[{'"
                                                                           "name':'init','image':'"
                                                                           "i'}],"
                                                                           "'containers':[{'name':'"
                                                                           "node','image':'i'},{'"
                                                                           "name':'sidecar','image'"
                                                                           ":'s'}]}") "]}}}}";

static int run_build_status(struct run *r, const struct kt_status_server *ss)
{
    struct kt_framework fw;
    kt_framework_default(&fw);
    fw.status_server = ss;
    json_decref(r->out);
    r->out = NULL;
    return kt_framework_build(&fw, &r->tj, &r->rt, &r->view, &r->out, &r->err);
}

static void test_trainjobstatus(void)
{
    static const struct kt_status_server ss = {"kubeflow-trainer-controller-manager",
                                               "kubeflow-system", "kubeflow-trainer-webhook-cert",
                                               10443};
    /* the Secret holds ca.crt base64-encoded, the ConfigMap the text */
    char *ca_b64 = kt_crypto_base64_encode("PEM-CA\n", 7);
    char *objs = kt_xasprintf("[{'apiVersion':'v1','kind':'Secret','metadata':{'name':"
                              "'kubeflow-trainer-webhook-cert','namespace':'kubeflow-system'},"
                              "'data':{'ca.crt':'%s'}}]",
                              ca_b64);
    struct run r;

    /* Gate off (the default): nothing of the plugin's, even with the Secret present. */
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}", STATUS_RT, objs);
    CHECK_OK(run_build(&r));
    CHECK(find_obj(r.out, "ConfigMap", "j-tls-config") == NULL);
    CHECK(env_of(container_of(pod_of(r.out, "j", "node"), "node"), "KUBEFLOW_TRAINER_SERVER_URL") ==
          NULL);
    CHECK(json_object_get(pod_of(r.out, "j", "node"), "volumes") == NULL);

    /* Gate on. */
    CHECK_OK(run_build_status(&r, &ss));
    json_t *cm = find_obj(r.out, "ConfigMap", "j-tls-config");
    CHECK(cm != NULL);
    CHECK_EQ_STR(data_of(cm, "ca.crt"), "PEM-CA\n");
    CHECK_EQ_STR(str_at(cm, "metadata.namespace"), "ns");
    /* stamped like every built object, and applied before the JobSet */
    CHECK(json_object_get(json_object_get(json_object_get(cm, "metadata"), "labels"),
                          "trainer.kubeflow.org/trainjob-name") != NULL);
    size_t i_cm = 0, i_js = 0, i;
    json_t *o;
    json_array_foreach(r.out, i, o)
    {
        i_cm = o == cm ? i : i_cm;
        i_js = strcmp(kt_json_str(o, "kind", ""), "JobSet") == 0 ? i : i_js;
    }
    CHECK(i_cm < i_js);
    json_t *pod = pod_of(r.out, "j", "node");
    static const char *const names[] = {"node", "sidecar"};
    for (size_t k = 0; k < 2; k++) {
        json_t *c = container_of(pod, names[k]);
        CHECK_EQ_STR(env_of(c, "KUBEFLOW_TRAINER_SERVER_URL"),
                     "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:10443/apis/"
                     "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/j/status");
        CHECK_EQ_STR(env_of(c, "KUBEFLOW_TRAINER_SERVER_CA_CERT"),
                     "/var/run/secrets/kubeflow/trainer/ca.crt");
        CHECK_EQ_STR(env_of(c, "KUBEFLOW_TRAINER_SERVER_TOKEN"),
                     "/var/run/secrets/kubeflow/trainer/token");
        json_t *m = kt_json_arr_find(json_object_get(c, "volumeMounts"), "name",
                                     "kubeflow-trainer-token", NULL);
        CHECK_EQ_STR(kt_json_str(m, "mountPath", ""), "/var/run/secrets/kubeflow/trainer");
        CHECK(json_is_true(json_object_get(m, "readOnly")));
    }
    /* init containers and the other jobs are left alone */
    CHECK(json_object_get(
              kt_json_arr_find(json_object_get(pod, "initContainers"), "name", "init", NULL),
              "env") == NULL);
    json_t *dpod = pod_of(r.out, "j", "dataset-initializer");
    CHECK(env_of(container_of(dpod, "dataset-initializer"), "KUBEFLOW_TRAINER_SERVER_URL") == NULL);
    CHECK(json_object_get(dpod, "volumes") == NULL);
    json_t *vol =
        kt_json_arr_find(json_object_get(pod, "volumes"), "name", "kubeflow-trainer-token", NULL);
    json_t *want = js("{'name':'kubeflow-trainer-token','projected':{'sources':["
                      "{'serviceAccountToken':{'audience':'trainer.kubeflow.org/v1alpha1/"
                      "namespaces/ns/trainjobs/j/status','expirationSeconds':3600,'path':'token'}},"
                      "{'configMap':{'name':'j-tls-config','items':[{'key':'ca.crt','path':"
                      "'ca.crt'}]}}]}}");
    CHECK(kt_json_equal(vol, want));
    json_decref(want);
    run_release(&r);

    /* Gate on, no Secret / a Secret without ca.crt: upstream's build errors. */
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}", STATUS_RT, NULL);
    CHECK(run_build_status(&r, &ss) != 0);
    CHECK_EQ_STR(r.err.msg, "failed to look up status server tls secret: secrets "
                            "\"kubeflow-trainer-webhook-cert\" not found");
    CHECK(r.out == NULL);
    run_release(&r);
    run_init(&r, TJ_HEAD ",'trainer':{'numNodes':1}}}", STATUS_RT,
             "[{'apiVersion':'v1','kind':'Secret','metadata':{'name':"
             "'kubeflow-trainer-webhook-cert','namespace':'kubeflow-system'},"
             "'data':{'tls.crt':'QQ=='}}]");
    CHECK(run_build_status(&r, &ss) != 0);
    CHECK_EQ_STR(r.err.msg, "failed to find status server ca.crt in tls secret");
    run_release(&r);
    free(objs);
    free(ca_b64);
}

int main(void)
{
    kt_mem_init();
    test_mpi_build();
    test_mpi_secret_reuse_and_errors();
    test_mpi_validate();
    test_jax();
    test_xgboost();
    test_flux();
    test_flux_validate();
    test_coscheduling();
    test_volcano();
    test_self_gating();
    test_trainjobstatus();
    return test_report();
}
