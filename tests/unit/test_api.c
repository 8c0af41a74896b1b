/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_api.c - the TrainJob and runtime codecs
 * (docs/internals/upstream.md#trainjob-fields, #trainingruntime-and-clustertrainingruntime).
 *
 * Inline fixtures are JSON with ' for " (see J()). Covers every TrainJob field, the CRD
 * defaults (checked against our CRD files), unknown-field round-trips, typed write-back,
 * wrong types with their paths, and the shipped runtimes in deploy/runtimes. */
#include "tests/test.h"

#include <dirent.h>
#include <stdlib.h>

#include "api/field.h"
#include "api/runtime.h"
#include "api/trainjob.h"
#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/base/str.h"
#include "common/base/yaml.h"

/* Parse a fixture written with ' instead of ". Caller owns the result. */
static json_t *J(const char *text)
{
    char *s = kt_xstrdup(text);
    json_error_t jerr;
    json_t *v;

    for (char *p = s; *p; p++) {
        if (*p == '\'') {
            *p = '"';
        }
    }
    v = json_loads(s, JSON_DECODE_ANY, &jerr);
    if (!v) {
        fprintf(stderr, "fixture: %s at %d:%d\n", jerr.text, jerr.line, jerr.column);
        abort();
    }
    free(s);
    return v;
}

/* Compare two documents; print both when they differ. */
static int same_json(const json_t *a, const json_t *b)
{
    char *sa;
    char *sb;

    if (json_equal(a, b)) {
        return 1;
    }
    sa = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
    sb = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
    fprintf(stderr, "got:  %s\nwant: %s\n", sa ? sa : "(null)", sb ? sb : "(null)");
    free(sa);
    free(sb);
    return 0;
}

static const char full_trainjob[] =
    "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
    "'metadata':{'name':'job','namespace':'team','uid':'u-1','labels':{'a':'b'}},"
    "'spec':{'runtimeRef':{'name':'torch-distributed','apiGroup':'trainer.kubeflow.org',"
    "'kind':'TrainingRuntime'},"
    "'initializer':{'dataset':{'storageUri':'hf://data','env':[{'name':'D','value':'1'}],"
    "'secretRef':{'name':'ds'}},'model':{'storageUri':'s3://m','env':[{'name':'M',"
    "'valueFrom':{'secretKeyRef':{'name':'s','key':'k'}}}],'secretRef':{'name':'ms'}}},"
    "'trainer':{'image':'img:1','command':['torchrun'],'args':['train.py','--x'],"
    "'env':[{'name':'E','value':'v'}],'numNodes':3,'resourcesPerNode':{'limits':"
    "{'nvidia.com/gpu':2,'cpu':'0.5'}},'numProcPerNode':2,'futureTrainerField':[1.5]},"
    "'runtimePatches':[{'manager':'example.com/kueue','time':'2026-01-02T03:04:05Z',"
    "'trainingRuntimeSpec':{'template':{'metadata':{'labels':{'q':'r'}},'spec':"
    "{'replicatedJobs':[{'name':'node','template':{'metadata':{'annotations':{'x':'y'}},"
    "'spec':{'template':{'metadata':{'labels':{'p':'1'}},'spec':{"
    "'serviceAccountName':'sa','nodeSelector':{'k':'v'},'affinity':{},"
    "'tolerations':[{'key':'t','operator':'Exists'}],'schedulingGates':[{'name':'g'}],"
    "'terminationGracePeriodSeconds':30,'imagePullSecrets':[{'name':'pull'}],"
    "'securityContext':{'runAsUser':1000},'volumes':[{'name':'v','emptyDir':{}}],"
    "'initContainers':[{'name':'init','env':[{'name':'I','value':'1'}]}],"
    "'containers':[{'name':'node','volumeMounts':[{'name':'v','mountPath':'/v'}],"
    "'securityContext':{'privileged':false}}]}}}}}]}}}}],"
    "'suspend':true,'activeDeadlineSeconds':3600,'managedBy':'kueue.x-k8s.io/multikueue',"
    "'futureSpecField':{'a':null}},"
    "'status':{'conditions':[{'type':'Suspended','status':'True','reason':'Suspended'}],"
    "'jobsStatus':[{'name':'node','ready':0,'succeeded':0,'failed':0,'active':0,"
    "'suspended':1}],'trainerStatus':{'progressPercentage':10,'metrics':[{'name':'loss',"
    "'value':'0.1'}],'lastUpdatedTime':'2026-01-02T03:04:05Z'}},'extra':0.1}";

static void test_trainjob_full(void)
{
    struct kt_trainjob tj;
    struct kt_err err = {0};
    json_t *want = J(full_trainjob);
    json_t *out;

    CHECK_OK(kt_trainjob_decode(J(full_trainjob), &tj, &err));
    CHECK_EQ_STR(tj.name, "job");
    CHECK_EQ_STR(tj.namespace_, "team");
    CHECK_EQ_STR(tj.uid, "u-1");
    CHECK_EQ_STR(tj.runtime_ref.name, "torch-distributed");
    CHECK_EQ_STR(tj.runtime_ref.api_group, "trainer.kubeflow.org");
    CHECK_EQ_STR(tj.runtime_ref.kind, "TrainingRuntime");
    CHECK(tj.dataset.present && tj.model.present);
    CHECK_EQ_STR(tj.dataset.storage_uri, "hf://data");
    CHECK_EQ_STR(tj.dataset.secret_ref, "ds");
    CHECK_EQ_INT(json_array_size(tj.dataset.env), 1);
    CHECK_EQ_STR(tj.model.storage_uri, "s3://m");
    CHECK_EQ_STR(tj.model.secret_ref, "ms");
    CHECK(tj.trainer.present);
    CHECK_EQ_STR(tj.trainer.image, "img:1");
    CHECK_EQ_INT(json_array_size(tj.trainer.command), 1);
    CHECK_EQ_INT(json_array_size(tj.trainer.args), 2);
    CHECK_EQ_INT(json_array_size(tj.trainer.env), 1);
    CHECK(tj.trainer.num_nodes.has && tj.trainer.num_nodes.v == 3);
    CHECK(tj.trainer.num_proc_per_node.has && tj.trainer.num_proc_per_node.v == 2);
    CHECK(json_is_object(tj.trainer.resources_per_node));
    CHECK_EQ_INT(json_array_size(tj.runtime_patches), 1);
    CHECK(tj.suspend);
    CHECK(tj.active_deadline_seconds.has && tj.active_deadline_seconds.v == 3600);
    CHECK_EQ_STR(tj.managed_by, KT_MANAGED_BY_MULTIKUEUE);
    CHECK(json_is_object(tj.status));
    /* Every default was already set and every unknown field must survive as is. */
    CHECK(same_json(tj.obj, want));
    out = kt_trainjob_encode(&tj);
    CHECK(same_json(out, want));
    json_decref(out);
    json_decref(want);
    kt_trainjob_release(&tj);
    kt_trainjob_release(&tj); /* release is idempotent */
}

struct default_case {
    const char *in;
    const char *want; /* the object after decode, as the API server would store it */
};

static const struct default_case trainjob_default_cases[] = {
    {"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'a'},"
     "'spec':{'runtimeRef':{'name':'r'}}}",
     "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'a'},"
     "'spec':{'runtimeRef':{'name':'r','apiGroup':'trainer.kubeflow.org',"
     "'kind':'ClusterTrainingRuntime'},'suspend':false,"
     "'managedBy':'trainer.kubeflow.org/trainjob-controller'}}"},
    /* Nulls of typed fields are pruned, then defaulted. */
    {"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':{'runtimeRef':"
     "{'name':'r','kind':null},'suspend':null,'trainer':null,'managedBy':null}}",
     "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':{'runtimeRef':"
     "{'name':'r','apiGroup':'trainer.kubeflow.org','kind':'ClusterTrainingRuntime'},"
     "'suspend':false,'managedBy':'trainer.kubeflow.org/trainjob-controller'}}"},
    /* No spec: nothing is created (the CRD defaults only inside existing objects). */
    {"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob'}",
     "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob'}"},
    /* core/v1 defaults our CRD carries; integral reals become integers. */
    {"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':{'suspend':true,"
     "'managedBy':'x','trainer':{'numNodes':2.0,'env':[{'name':'A','valueFrom':"
     "{'secretKeyRef':{'key':'k'}}},{'name':'B','valueFrom':{'fileKeyRef':{'key':'k'}}}]},"
     "'initializer':{'model':{'secretRef':{}}}}}",
     "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':{'suspend':true,"
     "'managedBy':'x','trainer':{'numNodes':2,'env':[{'name':'A','valueFrom':"
     "{'secretKeyRef':{'key':'k','name':''}}},{'name':'B','valueFrom':{'fileKeyRef':"
     "{'key':'k','optional':false}}}]},'initializer':{'model':{'secretRef':{'name':''}}}}}"},
    {"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':{'runtimePatches':"
     "[{'manager':'a.io/m','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':"
     "'node','template':{'spec':{'template':{'spec':{'imagePullSecrets':[{}],'containers':"
     "[{'name':'node','env':[{'name':'X','valueFrom':{'configMapKeyRef':{'key':'k'}}}]}]}}}}}]}"
     "}}}]}}",
     "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':{'runtimePatches':"
     "[{'manager':'a.io/m','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':"
     "'node','template':{'spec':{'template':{'spec':{'imagePullSecrets':[{'name':''}],"
     "'containers':[{'name':'node','env':[{'name':'X','valueFrom':{'configMapKeyRef':{'key':"
     "'k','name':''}}}]}]}}}}}]}}}}],'suspend':false,"
     "'managedBy':'trainer.kubeflow.org/trainjob-controller'}}"},
};

static void test_trainjob_defaults(void)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(trainjob_default_cases); i++) {
        struct kt_trainjob tj;
        struct kt_err err = {0};
        json_t *want = J(trainjob_default_cases[i].want);
        json_t *out;

        if (kt_trainjob_decode(J(trainjob_default_cases[i].in), &tj, &err) < 0) {
            TEST_FAIL_("case %zu: %s", i, err.msg);
            json_decref(want);
            continue;
        }
        CHECK(same_json(tj.obj, want));
        out = kt_trainjob_encode(&tj);
        CHECK(same_json(out, want));
        json_decref(out);
        json_decref(want);
        kt_trainjob_release(&tj);
    }
}

static void test_trainjob_absent(void)
{
    struct kt_trainjob tj;
    struct kt_err err = {0};

    /* Required fields are the validator's: decode gives usable empty/default values. */
    CHECK_OK(kt_trainjob_decode(J("{'apiVersion':'trainer.kubeflow.org/v1alpha1',"
                                  "'kind':'TrainJob','spec':{}}"),
                                &tj, &err));
    CHECK_EQ_STR(tj.name, "");
    CHECK_EQ_STR(tj.namespace_, "");
    CHECK_EQ_STR(tj.uid, "");
    CHECK_EQ_STR(tj.runtime_ref.name, "");
    CHECK_EQ_STR(tj.runtime_ref.api_group, KT_GROUP);
    CHECK_EQ_STR(tj.runtime_ref.kind, "ClusterTrainingRuntime");
    CHECK_EQ_STR(tj.managed_by, KT_MANAGED_BY_DEFAULT);
    CHECK(!tj.suspend);
    CHECK(!tj.trainer.present && !tj.dataset.present && !tj.model.present);
    CHECK(!tj.trainer.num_nodes.has && !tj.active_deadline_seconds.has);
    CHECK(tj.trainer.image == NULL && tj.runtime_patches == NULL && tj.status == NULL);
    CHECK(json_object_get(json_object_get(tj.obj, "spec"), "runtimeRef") == NULL);
    kt_trainjob_release(&tj);
}

static void test_trainjob_write_back(void)
{
    struct kt_trainjob tj;
    struct kt_err err = {0};
    json_t *before = J(full_trainjob);
    json_t *status = J("{'conditions':[{'type':'Complete','status':'True'}]}");
    json_t *out;
    json_t *spec;

    CHECK_OK(kt_trainjob_decode(J(full_trainjob), &tj, &err));
    tj.suspend = false;
    tj.trainer.num_nodes.v = 8;
    tj.trainer.image = "img:2";
    tj.trainer.num_proc_per_node.has = false;
    tj.trainer.command = NULL;
    tj.model.present = false;
    tj.dataset.secret_ref = NULL;
    tj.active_deadline_seconds.has = false;
    tj.runtime_patches = NULL;
    tj.managed_by = KT_MANAGED_BY_DEFAULT;
    tj.name = "renamed";
    tj.status = status;
    out = kt_trainjob_encode(&tj);
    spec = json_object_get(out, "spec");
    CHECK(json_is_false(json_object_get(spec, "suspend")));
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(spec, "trainer"), "numNodes")),
                 8);
    CHECK_EQ_STR(kt_json_str(json_object_get(spec, "trainer"), "image", NULL), "img:2");
    CHECK(json_object_get(json_object_get(spec, "trainer"), "numProcPerNode") == NULL);
    CHECK(json_object_get(json_object_get(spec, "trainer"), "command") == NULL);
    CHECK(json_object_get(json_object_get(spec, "trainer"), "futureTrainerField") != NULL);
    CHECK(json_object_get(json_object_get(spec, "initializer"), "model") == NULL);
    CHECK(kt_json_path(out, "spec.initializer.dataset.secretRef") == NULL);
    CHECK(kt_json_path(out, "spec.initializer.dataset.storageUri") != NULL);
    CHECK(json_object_get(spec, "activeDeadlineSeconds") == NULL);
    CHECK(json_object_get(spec, "runtimePatches") == NULL);
    CHECK_EQ_STR(kt_json_str(spec, "managedBy", NULL), KT_MANAGED_BY_DEFAULT);
    CHECK_EQ_STR(kt_json_str(json_object_get(out, "metadata"), "name", NULL), "renamed");
    CHECK(same_json(json_object_get(out, "status"), status));
    CHECK(json_object_get(out, "status") != status); /* a copy, not the caller's */
    CHECK(json_object_get(spec, "futureSpecField") != NULL);
    /* Encoding leaves the decoded object alone. */
    CHECK(same_json(tj.obj, before));
    json_decref(out);
    /* Removing the whole trainer. */
    tj.trainer.present = false;
    out = kt_trainjob_encode(&tj);
    CHECK(kt_json_path(out, "spec.trainer") == NULL);
    json_decref(out);
    json_decref(status);
    json_decref(before);
    kt_trainjob_release(&tj);
}

/* Typed fields set on a bare TrainJob create what the API server would hold. */
static void test_trainjob_write_back_creates(void)
{
    struct kt_trainjob tj;
    struct kt_err err = {0};
    json_t *want;
    json_t *out;

    CHECK_OK(kt_trainjob_decode(J("{'apiVersion':'trainer.kubeflow.org/v1alpha1',"
                                  "'kind':'TrainJob'}"),
                                &tj, &err));
    tj.runtime_ref.name = "r";
    tj.suspend = true;
    tj.trainer.present = true;
    tj.trainer.num_nodes = (struct kt_opt_i64){true, 2};
    out = kt_trainjob_encode(&tj);
    want = J("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','spec':"
             "{'runtimeRef':{'name':'r','apiGroup':'trainer.kubeflow.org','kind':"
             "'ClusterTrainingRuntime'},'trainer':{'numNodes':2},'suspend':true}}");
    CHECK(same_json(out, want));
    json_decref(want);
    json_decref(out);
    kt_trainjob_release(&tj);
}

struct bad_case {
    const char *spec; /* JSON of spec, or a whole object when it starts with '!' */
    enum kt_code code;
    const char *msg;
};

static const struct bad_case trainjob_bad[] = {
    {"{'trainer':{'numNodes':'2'}}", KT_EINVAL,
     "spec.trainer.numNodes: expected integer, got string"},
    {"{'runtimeRef':[]}", KT_EINVAL, "spec.runtimeRef: expected object, got array"},
    {"{'trainer':{'numNodes':1099511627776}}", KT_ERANGE,
     "spec.trainer.numNodes: 1099511627776 is out of range for int32"},
    {"{'trainer':{'numProcPerNode':-2147483649}}", KT_ERANGE,
     "spec.trainer.numProcPerNode: -2147483649 is out of range for int32"},
    {"{'trainer':{'numNodes':2.5}}", KT_EINVAL,
     "spec.trainer.numNodes: expected integer, got number"},
    {"{'trainer':{'numNodes':1e300}}", KT_EINVAL,
     "spec.trainer.numNodes: expected integer, got number"},
    {"{'trainer':{'command':['a',1]}}", KT_EINVAL,
     "spec.trainer.command[1]: expected string, got integer"},
    {"{'trainer':{'args':'a'}}", KT_EINVAL, "spec.trainer.args: expected array, got string"},
    {"{'trainer':{'env':['X=1']}}", KT_EINVAL, "spec.trainer.env[0]: expected object, got string"},
    {"{'trainer':{'image':7}}", KT_EINVAL, "spec.trainer.image: expected string, got integer"},
    {"{'trainer':{'resourcesPerNode':[]}}", KT_EINVAL,
     "spec.trainer.resourcesPerNode: expected object, got array"},
    {"{'trainer':true}", KT_EINVAL, "spec.trainer: expected object, got boolean"},
    {"{'suspend':'true'}", KT_EINVAL, "spec.suspend: expected boolean, got string"},
    {"{'managedBy':1}", KT_EINVAL, "spec.managedBy: expected string, got integer"},
    {"{'activeDeadlineSeconds':'1h'}", KT_EINVAL,
     "spec.activeDeadlineSeconds: expected integer, got string"},
    {"{'runtimeRef':{'name':5}}", KT_EINVAL, "spec.runtimeRef.name: expected string, got integer"},
    {"{'runtimeRef':{'kind':{}}}", KT_EINVAL, "spec.runtimeRef.kind: expected string, got object"},
    {"{'initializer':{'dataset':{'storageUri':[]}}}", KT_EINVAL,
     "spec.initializer.dataset.storageUri: expected string, got array"},
    {"{'initializer':{'model':{'secretRef':'s'}}}", KT_EINVAL,
     "spec.initializer.model.secretRef: expected object, got string"},
    {"{'initializer':[]}", KT_EINVAL, "spec.initializer: expected object, got array"},
    {"{'runtimePatches':[{'manager':'a'},{'manager':5}]}", KT_EINVAL,
     "spec.runtimePatches[1].manager: expected string, got integer"},
    {"{'runtimePatches':{}}", KT_EINVAL, "spec.runtimePatches: expected array, got object"},
    {"[]", KT_EINVAL, "spec: expected object, got array"},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':'m'}", KT_EINVAL,
     "metadata: expected object, got string"},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
     "{'name':['a']}}",
     KT_EINVAL, "metadata.name: expected string, got array"},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','status':[]}", KT_EINVAL,
     "status: expected object, got array"},
    {"!{'apiVersion':'trainer.kubeflow.org/v1','kind':'TrainJob'}", KT_EINVAL,
     "apiVersion: expected \"trainer.kubeflow.org/v1alpha1\", got \"trainer.kubeflow.org/v1\""},
    {"!{'kind':'TrainJob'}", KT_EINVAL,
     "apiVersion: expected \"trainer.kubeflow.org/v1alpha1\", got nothing"},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime'}", KT_EINVAL,
     "kind: expected \"TrainJob\", got \"ClusterTrainingRuntime\""},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':3}", KT_EINVAL,
     "kind: expected string, got integer"},
    {"![1]", KT_EINVAL, "expected a TrainJob object, got array"},
};

static json_t *bad_input(const char *spec, const char *kind)
{
    json_t *obj;

    if (spec[0] == '!') {
        return J(spec + 1);
    }
    obj = json_object();
    json_object_set_new(obj, "apiVersion", json_string(KT_API_VERSION));
    json_object_set_new(obj, "kind", json_string(kind));
    json_object_set_new(obj, "spec", J(spec));
    return obj;
}

static void test_trainjob_bad(void)
{
    struct kt_trainjob tj;
    struct kt_err err = {0};

    for (size_t i = 0; i < KT_ARRAY_SIZE(trainjob_bad); i++) {
        memset(&err, 0, sizeof(err));
        CHECK_EQ_INT(kt_trainjob_decode(bad_input(trainjob_bad[i].spec, "TrainJob"), &tj, &err),
                     -1);
        CHECK_EQ_INT(err.code, trainjob_bad[i].code);
        CHECK_EQ_STR(err.msg, trainjob_bad[i].msg);
        CHECK(tj.obj == NULL && tj.name == NULL);
    }
    CHECK_EQ_INT(kt_trainjob_decode(NULL, &tj, &err), -1);
    CHECK_EQ_STR(err.msg, "expected a TrainJob object, got nothing");
    CHECK_EQ_INT(kt_trainjob_decode(json_object(), &tj, NULL), -1); /* NULL err allowed */
}

/* ---- runtimes ---- */

struct runtime_case {
    enum kt_policy_kind kind;
    unsigned sources;
    const char *spec; /* spec in */
    const char *want; /* spec after decode */
};

#define BIT(k) (1u << (k))

static const struct runtime_case runtime_cases[] = {
    {KT_POLICY_TORCH, BIT(KT_POLICY_TORCH),
     "{'mlPolicy':{'numNodes':2,'torch':{'envInjection':{'targets':[{'jobName':'node',"
     "'containerNames':['side']}]}}},'template':{'spec':{'replicatedJobs':[{'name':'node',"
     "'replicas':1,'groupName':'default','template':{}}]}}}",
     NULL},
    {KT_POLICY_MPI, BIT(KT_POLICY_MPI), "{'mlPolicy':{'mpi':{}},'template':{'metadata':{}}}",
     "{'mlPolicy':{'mpi':{'numProcPerNode':1,'mpiImplementation':'OpenMPI','sshAuthMountPath':"
     "'/root/.ssh','runLauncherAsNode':false}},'template':{'metadata':{}}}"},
    {KT_POLICY_JAX, BIT(KT_POLICY_JAX), "{'mlPolicy':{'jax':{}},'template':{'spec':{}}}", NULL},
    {KT_POLICY_XGBOOST, BIT(KT_POLICY_XGBOOST), "{'mlPolicy':{'xgboost':{}},'template':{'a':1}}",
     NULL},
    {KT_POLICY_FLUX, BIT(KT_POLICY_FLUX), "{'mlPolicy':{'flux':{'numProcPerNode':null}}}",
     "{'mlPolicy':{'flux':{'numProcPerNode':1}}}"},
    {KT_POLICY_NONE, 0, "{'mlPolicy':{'numNodes':3}}", NULL},
    /* More than one source decodes; the validator reports it. The first in CEL order wins. */
    {KT_POLICY_TORCH, BIT(KT_POLICY_TORCH) | BIT(KT_POLICY_MPI),
     "{'mlPolicy':{'mpi':{'numProcPerNode':4},'torch':{}}}",
     "{'mlPolicy':{'mpi':{'numProcPerNode':4,'mpiImplementation':'OpenMPI','sshAuthMountPath':"
     "'/root/.ssh','runLauncherAsNode':false},'torch':{}}}"},
    /* JobSet CRD defaults at the JobSetSpec level only; the pod template is left as is. */
    {KT_POLICY_NONE, 0,
     "{'template':{'spec':{'replicatedJobs':[{'name':'a','template':{'spec':{'template':{'spec':"
     "{'containers':[{'name':'node','ports':[{'containerPort':1}]}]}}}}},{'name':'b','replicas':"
     "3,'groupName':'g'}],'failurePolicy':{'maxRestarts':2},'volumeClaimPolicies':[{"
     "'templates':[],'retentionPolicy':{}},{'templates':[]}],'network':{'enableDNSHostnames':"
     "true},'successPolicy':{'targetReplicatedJobs':['a']}}}}",
     "{'template':{'spec':{'replicatedJobs':[{'name':'a','template':{'spec':{'template':{'spec':"
     "{'containers':[{'name':'node','ports':[{'containerPort':1}]}]}}}},'replicas':1,"
     "'groupName':'default'},{'name':'b','replicas':3,'groupName':'g'}],'failurePolicy':{"
     "'maxRestarts':2,'restartStrategy':'Recreate'},'volumeClaimPolicies':[{'templates':[],"
     "'retentionPolicy':{'whenDeleted':'Delete'}},{'templates':[]}],'network':{"
     "'enableDNSHostnames':true},'successPolicy':{'targetReplicatedJobs':['a']}}}}"},
    {KT_POLICY_NONE, 0, "{'podGroupPolicy':{'coscheduling':{},'volcano':{'networkTopology':{}}}}",
     "{'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':60},'volcano':{"
     "'networkTopology':{'mode':'hard','highestTierAllowed':1}}}}"},
    {KT_POLICY_NONE, 0,
     "{'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':5},'volcano':{}},"
     "'futureField':[null]}",
     NULL},
};

static json_t *runtime_obj(const char *kind, json_t *spec)
{
    json_t *obj = J("{'apiVersion':'trainer.kubeflow.org/v1alpha1','metadata':{'name':'rt'}}");

    json_object_set_new(obj, "kind", json_string(kind));
    json_object_set_new(obj, "spec", spec);
    return obj;
}

static void test_runtime_cases(void)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(runtime_cases); i++) {
        const struct runtime_case *c = &runtime_cases[i];
        struct kt_runtime rt;
        struct kt_err err = {0};
        json_t *want = runtime_obj("ClusterTrainingRuntime", J(c->want ? c->want : c->spec));
        json_t *out;

        if (kt_runtime_decode(runtime_obj("ClusterTrainingRuntime", J(c->spec)), &rt, &err) < 0) {
            TEST_FAIL_("case %zu: %s", i, err.msg);
            json_decref(want);
            continue;
        }
        CHECK(rt.cluster);
        CHECK_EQ_STR(rt.name, "rt");
        CHECK_EQ_STR(rt.namespace_, "");
        CHECK_EQ_INT(rt.ml.kind, c->kind);
        CHECK_EQ_INT(rt.ml.sources, c->sources);
        CHECK((rt.ml.source != NULL) == (c->kind != KT_POLICY_NONE));
        CHECK(rt.template_ != NULL);
        CHECK(same_json(rt.obj, want));
        out = kt_runtime_encode(&rt);
        CHECK(same_json(out, want));
        json_decref(out);
        json_decref(want);
        kt_runtime_release(&rt);
    }
}

static void runtime_write_back(const struct kt_runtime *decoded);

static void test_runtime_typed(void)
{
    struct kt_runtime rt;
    struct kt_err err = {0};

    CHECK_OK(kt_runtime_decode(
        J("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':{"
          "'name':'r','namespace':'ns'},'spec':{'mlPolicy':{'numNodes':2,'mpi':{"
          "'numProcPerNode':8,'mpiImplementation':'','sshAuthMountPath':'/home/u/.ssh',"
          "'runLauncherAsNode':true}},'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':"
          "120},'volcano':{'networkTopology':{'mode':'soft','highestTierAllowed':3}}},"
          "'template':{'spec':{'replicatedJobs':[]}}}}"),
        &rt, &err));
    CHECK(!rt.cluster);
    CHECK_EQ_STR(rt.namespace_, "ns");
    CHECK(rt.ml.present && rt.ml.num_nodes.has && rt.ml.num_nodes.v == 2);
    CHECK_EQ_INT(rt.ml.kind, KT_POLICY_MPI);
    CHECK_EQ_INT(rt.ml.mpi_num_proc_per_node, 8);
    CHECK_EQ_STR(rt.ml.mpi_implementation, "");
    CHECK_EQ_STR(rt.ml.mpi_ssh_auth_mount_path, "/home/u/.ssh");
    CHECK(rt.ml.mpi_run_launcher_as_node);
    CHECK_EQ_INT(rt.ml.flux_num_proc_per_node, 1);
    CHECK(rt.pg.coscheduling && rt.pg.volcano);
    CHECK_EQ_INT(rt.pg.schedule_timeout_seconds, 120);
    CHECK_EQ_STR(kt_json_str(rt.pg.network_topology, "mode", NULL), "soft");
    CHECK(json_is_array(kt_json_path(rt.template_, "spec.replicatedJobs")));
    runtime_write_back(&rt);
    kt_runtime_release(&rt);
    kt_runtime_release(&rt);
}

/* Typed changes are written back; the decoded object is left alone. */
static void runtime_write_back(const struct kt_runtime *decoded)
{
    struct kt_runtime rt = *decoded; /* a view: shares decoded->obj, never released */
    json_t *out;

    rt.ml.mpi_num_proc_per_node = 4;
    rt.ml.mpi_implementation = "OpenMPI";
    rt.ml.mpi_run_launcher_as_node = false;
    rt.ml.num_nodes.has = false;
    rt.pg.schedule_timeout_seconds = 30;
    rt.pg.volcano = false;
    out = kt_runtime_encode(&rt);
    CHECK_EQ_INT(json_integer_value(kt_json_path(out, "spec.mlPolicy.mpi.numProcPerNode")), 4);
    CHECK_EQ_STR(json_string_value(kt_json_path(out, "spec.mlPolicy.mpi.mpiImplementation")),
                 "OpenMPI");
    CHECK(json_is_false(kt_json_path(out, "spec.mlPolicy.mpi.runLauncherAsNode")));
    CHECK(kt_json_path(out, "spec.mlPolicy.numNodes") == NULL);
    CHECK_EQ_INT(json_integer_value(
                     kt_json_path(out, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds")),
                 30);
    CHECK(kt_json_path(out, "spec.podGroupPolicy.volcano") == NULL);
    CHECK_EQ_INT(json_integer_value(kt_json_path(rt.obj, "spec.mlPolicy.mpi.numProcPerNode")), 8);
    json_decref(out);
    rt.ml.present = false;
    rt.pg.coscheduling = false;
    out = kt_runtime_encode(&rt);
    CHECK(kt_json_path(out, "spec.mlPolicy") == NULL);
    CHECK(kt_json_path(out, "spec.podGroupPolicy.coscheduling") == NULL);
    json_decref(out);
}

static void test_runtime_no_template(void)
{
    struct kt_runtime rt;
    struct kt_err err = {0};
    json_t *in = runtime_obj("ClusterTrainingRuntime", J("{'mlPolicy':{'torch':{}}}"));
    json_t *out;

    CHECK_OK(kt_runtime_decode(json_deep_copy(in), &rt, &err));
    CHECK(json_is_object(rt.template_) && json_object_size(rt.template_) == 0);
    CHECK(!rt.pg.coscheduling && !rt.pg.volcano && rt.pg.network_topology == NULL);
    CHECK_EQ_INT(rt.pg.schedule_timeout_seconds, 60);
    out = kt_runtime_encode(&rt);
    CHECK(same_json(out, in)); /* the empty placeholder is not written */
    json_decref(out);
    json_object_set_new(rt.template_, "spec", json_object());
    out = kt_runtime_encode(&rt);
    CHECK(json_is_object(kt_json_path(out, "spec.template.spec")));
    json_decref(out);
    kt_runtime_release(&rt);
    json_decref(in);
    /* No spec at all. */
    CHECK_OK(kt_runtime_decode(J("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':"
                                 "'TrainingRuntime'}"),
                               &rt, &err));
    CHECK(!rt.ml.present && rt.ml.kind == KT_POLICY_NONE && rt.template_ != NULL);
    CHECK_EQ_INT(rt.ml.mpi_num_proc_per_node, 1);
    CHECK_EQ_STR(rt.ml.mpi_implementation, "OpenMPI");
    out = kt_runtime_encode(&rt);
    CHECK(json_object_get(out, "spec") == NULL);
    json_decref(out);
    kt_runtime_release(&rt);
}

static const struct bad_case runtime_bad[] = {
    {"{'mlPolicy':{'mpi':{'numProcPerNode':'1'}}}", KT_EINVAL,
     "spec.mlPolicy.mpi.numProcPerNode: expected integer, got string"},
    {"{'mlPolicy':{'numNodes':1099511627776}}", KT_ERANGE,
     "spec.mlPolicy.numNodes: 1099511627776 is out of range for int32"},
    {"{'mlPolicy':{'mpi':{'runLauncherAsNode':'no'}}}", KT_EINVAL,
     "spec.mlPolicy.mpi.runLauncherAsNode: expected boolean, got string"},
    {"{'mlPolicy':{'mpi':{'sshAuthMountPath':1}}}", KT_EINVAL,
     "spec.mlPolicy.mpi.sshAuthMountPath: expected string, got integer"},
    {"{'mlPolicy':{'flux':{'numProcPerNode':2147483648}}}", KT_ERANGE,
     "spec.mlPolicy.flux.numProcPerNode: 2147483648 is out of range for int32"},
    {"{'mlPolicy':{'torch':[]}}", KT_EINVAL, "spec.mlPolicy.torch: expected object, got array"},
    {"{'mlPolicy':{'xgboost':'yes'}}", KT_EINVAL,
     "spec.mlPolicy.xgboost: expected object, got string"},
    {"{'mlPolicy':{'torch':{'envInjection':{'targets':[{'jobName':'node','containerNames':[1]}]}}}"
     "}",
     KT_EINVAL,
     "spec.mlPolicy.torch.envInjection.targets[0].containerNames[0]: expected string, "
     "got integer"},
    {"{'mlPolicy':{'torch':{'envInjection':{'targets':[{'jobName':[]}]}}}}", KT_EINVAL,
     "spec.mlPolicy.torch.envInjection.targets[0].jobName: expected string, got array"},
    {"{'mlPolicy':[]}", KT_EINVAL, "spec.mlPolicy: expected object, got array"},
    {"{'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':2147483648}}}", KT_ERANGE,
     "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds: 2147483648 is out of range for "
     "int32"},
    {"{'podGroupPolicy':{'volcano':{'networkTopology':{'mode':1}}}}", KT_EINVAL,
     "spec.podGroupPolicy.volcano.networkTopology.mode: expected string, got integer"},
    {"{'podGroupPolicy':{'volcano':{'networkTopology':{'highestTierAllowed':'1'}}}}", KT_EINVAL,
     "spec.podGroupPolicy.volcano.networkTopology.highestTierAllowed: expected integer, got "
     "string"},
    {"{'podGroupPolicy':{'volcano':[]}}", KT_EINVAL,
     "spec.podGroupPolicy.volcano: expected object, got array"},
    {"{'template':{'spec':{'replicatedJobs':{}}}}", KT_EINVAL,
     "spec.template.spec.replicatedJobs: expected array, got object"},
    {"{'template':{'spec':{'replicatedJobs':[{'name':'a'},'x']}}}", KT_EINVAL,
     "spec.template.spec.replicatedJobs[1]: expected object, got string"},
    {"{'template':{'spec':{'replicatedJobs':[{'name':'a','replicas':'2'}]}}}", KT_EINVAL,
     "spec.template.spec.replicatedJobs[0].replicas: expected integer, got string"},
    {"{'template':{'spec':{'replicatedJobs':[{'name':'a','replicas':4294967296}]}}}", KT_ERANGE,
     "spec.template.spec.replicatedJobs[0].replicas: 4294967296 is out of range for int32"},
    {"{'template':{'spec':{'replicatedJobs':[{'name':3}]}}}", KT_EINVAL,
     "spec.template.spec.replicatedJobs[0].name: expected string, got integer"},
    {"{'template':{'spec':{'replicatedJobs':[{'name':'a','template':[]}]}}}", KT_EINVAL,
     "spec.template.spec.replicatedJobs[0].template: expected object, got array"},
    {"{'template':{'spec':{'failurePolicy':{'restartStrategy':false}}}}", KT_EINVAL,
     "spec.template.spec.failurePolicy.restartStrategy: expected string, got boolean"},
    {"{'template':{'spec':{'volumeClaimPolicies':[{'retentionPolicy':'x'}]}}}", KT_EINVAL,
     "spec.template.spec.volumeClaimPolicies[0].retentionPolicy: expected object, got string"},
    {"{'template':{'spec':7}}", KT_EINVAL, "spec.template.spec: expected object, got integer"},
    {"{'template':{'metadata':7}}", KT_EINVAL,
     "spec.template.metadata: expected object, got integer"},
    {"{'template':[]}", KT_EINVAL, "spec.template: expected object, got array"},
    {"'s'", KT_EINVAL, "spec: expected object, got string"},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob'}", KT_EINVAL,
     "kind: expected \"TrainingRuntime\" or \"ClusterTrainingRuntime\", got \"TrainJob\""},
    {"!{'apiVersion':'trainer.kubeflow.org/v1alpha1'}", KT_EINVAL,
     "kind: expected \"TrainingRuntime\" or \"ClusterTrainingRuntime\", got nothing"},
    {"!{'apiVersion':'kubeflow.org/v1','kind':'TrainingRuntime'}", KT_EINVAL,
     "apiVersion: expected \"trainer.kubeflow.org/v1alpha1\", got \"kubeflow.org/v1\""},
    {"!'x'", KT_EINVAL, "expected a TrainingRuntime object, got string"},
};

static void test_runtime_bad(void)
{
    struct kt_runtime rt;
    struct kt_err err = {0};

    for (size_t i = 0; i < KT_ARRAY_SIZE(runtime_bad); i++) {
        memset(&err, 0, sizeof(err));
        CHECK_EQ_INT(
            kt_runtime_decode(bad_input(runtime_bad[i].spec, "ClusterTrainingRuntime"), &rt, &err),
            -1);
        CHECK_EQ_INT(err.code, runtime_bad[i].code);
        CHECK_EQ_STR(err.msg, runtime_bad[i].msg);
        CHECK(rt.obj == NULL && rt.template_ == NULL && rt.template_placeholder_ == NULL);
    }
    CHECK_EQ_INT(kt_runtime_decode(NULL, &rt, NULL), -1);
}

/* ---- the default tables against our CRD files ---- */

static void collect_schema_defaults(const json_t *schema, const char *path, struct kt_strv *out)
{
    const json_t *def = json_object_get(schema, "default");
    const json_t *props = json_object_get(schema, "properties");
    const json_t *items = json_object_get(schema, "items");
    const char *key;
    json_t *child;

    if (def) {
        char *v = json_dumps(def, JSON_ENCODE_ANY | JSON_COMPACT);
        char *line = kt_xasprintf("%s=%s", path, v);
        kt_strv_push(out, line);
        free(line);
        free(v);
    }
    json_object_foreach((json_t *)(uintptr_t)props, key, child)
    {
        char *sub = path[0] ? kt_xasprintf("%s.%s", path, key) : kt_xstrdup(key);
        collect_schema_defaults(child, sub, out);
        free(sub);
    }
    if (json_is_object(items)) {
        char *sub = kt_xasprintf("%s[]", path);
        collect_schema_defaults(items, sub, out);
        free(sub);
    }
}

static void table_defaults(const struct kt__default *rules, size_t n, struct kt_strv *out)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = rules[i].type == KT__DEF_STR    ? json_string(rules[i].s)
                    : rules[i].type == KT__DEF_BOOL ? json_boolean(rules[i].i)
                                                    : json_integer(rules[i].i);
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        char *line = kt_xasprintf("%s=%s", rules[i].path, s);
        kt_strv_push(out, line);
        free(line);
        free(s);
        json_decref(v);
    }
}

/* Read one YAML file's first document. Caller owns the stream. */
static json_t *read_yaml(const char *path, struct kt_yaml_stream *st)
{
    struct kt_buf b;
    struct kt_err err = {0};
    struct kt_yaml_limits lim;

    memset(st, 0, sizeof(*st));
    kt_buf_init(&b, 16 << 20);
    kt_yaml_limits_default(&lim);
    if (kt_buf_read_file(&b, path, &err) < 0 || kt_yaml_parse(b.data, b.len, &lim, st, &err) < 0 ||
        st->len == 0) {
        TEST_FAIL_("%s: %s", path, err.msg);
        kt_buf_release(&b);
        return NULL;
    }
    kt_buf_release(&b);
    return st->docs[0].root;
}

static void check_crd(const char *file, const struct kt__default *rules, size_t n)
{
    struct kt_yaml_stream st;
    json_t *crd = read_yaml(file, &st);
    json_t *schema;
    struct kt_strv from_crd;
    struct kt_strv from_table;

    kt_strv_init(&from_crd);
    kt_strv_init(&from_table);
    schema = json_object_get(
        json_object_get(json_array_get(kt_json_path(crd, "spec.versions"), 0), "schema"),
        "openAPIV3Schema");
    CHECK(json_is_object(schema));
    collect_schema_defaults(schema, "", &from_crd);
    table_defaults(rules, n, &from_table);
    kt_strv_sort(&from_crd);
    kt_strv_sort(&from_table);
    CHECK_EQ_INT(from_crd.len, from_table.len);
    for (size_t i = 0; i < from_crd.len; i++) {
        if (!kt_strv_contains(&from_table, from_crd.items[i])) {
            TEST_FAIL_("%s declares %s; the codec does not apply it", file, from_crd.items[i]);
        }
    }
    for (size_t i = 0; i < from_table.len; i++) {
        if (!kt_strv_contains(&from_crd, from_table.items[i])) {
            TEST_FAIL_("the codec applies %s; %s does not declare it", from_table.items[i], file);
        }
    }
    kt_strv_release(&from_crd);
    kt_strv_release(&from_table);
    kt_yaml_stream_release(&st);
}

static void test_defaults_match_crds(void)
{
    size_t n;
    const struct kt__default *rules = kt__trainjob_defaults(&n);

    check_crd("api/trainer.kubeflow.org_trainjobs.yaml", rules, n);
    rules = kt__runtime_defaults(&n);
    check_crd("api/trainer.kubeflow.org_trainingruntimes.yaml", rules, n);
    check_crd("api/trainer.kubeflow.org_clustertrainingruntimes.yaml", rules, n);
}

/* ---- the shipped runtimes (deploy/runtimes, docs/internals/upstream.md#shipped-runtimes) ---- */

static const struct {
    const char *name;
    enum kt_policy_kind kind;
} shipped_kinds[] = {
    {"torch-distributed", KT_POLICY_TORCH},     {"deepspeed-distributed", KT_POLICY_MPI},
    {"mlx-distributed", KT_POLICY_MPI},         {"jax-distributed", KT_POLICY_JAX},
    {"xgboost-distributed", KT_POLICY_XGBOOST}, {"torchtune-llama3.2-1b", KT_POLICY_TORCH},
    {"torchtune-llama3.2-3b", KT_POLICY_TORCH}, {"torchtune-qwen2.5-1.5b", KT_POLICY_TORCH},
};

static void check_shipped(const char *path, int *decoded)
{
    struct kt_yaml_stream st;
    struct kt_runtime rt;
    struct kt_runtime again;
    struct kt_err err = {0};
    json_t *out;
    json_t *out2;

    if (!read_yaml(path, &st)) {
        return;
    }
    for (size_t d = 0; d < st.len; d++) {
        if (!st.docs[d].root) {
            continue;
        }
        if (kt_runtime_decode(json_deep_copy(st.docs[d].root), &rt, &err) < 0) {
            TEST_FAIL_("%s: %s", path, err.msg);
            continue;
        }
        (*decoded)++;
        CHECK(rt.cluster);
        for (size_t i = 0; i < KT_ARRAY_SIZE(shipped_kinds); i++) {
            if (strcmp(rt.name, shipped_kinds[i].name) == 0) {
                CHECK_EQ_INT(rt.ml.kind, shipped_kinds[i].kind);
            }
        }
        CHECK_EQ_INT(__builtin_popcount(rt.ml.sources), 1);
        out = kt_runtime_encode(&rt);
        CHECK(same_json(out, rt.obj));
        /* Decoding what we encoded changes nothing more (defaulting is idempotent). */
        CHECK_OK(kt_runtime_decode(out, &again, &err));
        out2 = kt_runtime_encode(&again);
        CHECK(same_json(out2, rt.obj));
        json_decref(out2);
        kt_runtime_release(&again);
        kt_runtime_release(&rt);
    }
    kt_yaml_stream_release(&st);
}

static void test_shipped_runtimes(void)
{
    DIR *dir = opendir("deploy/runtimes");
    struct dirent *de;
    int decoded = 0;

    if (!dir) {
        TEST_FAIL_("deploy/runtimes: cannot open");
        return;
    }
    while ((de = readdir(dir)) != NULL) {
        struct kt_str name = kt_str_c(de->d_name);
        char *path;

        if (!kt_str_has_suffix(name, ".yaml") || strcmp(de->d_name, "kustomization.yaml") == 0) {
            continue;
        }
        path = kt_xasprintf("deploy/runtimes/%s", de->d_name);
        check_shipped(path, &decoded);
        free(path);
    }
    closedir(dir);
    CHECK(decoded >= 8);
}

int main(void)
{
    kt_mem_init();
    test_trainjob_full();
    test_trainjob_defaults();
    test_trainjob_absent();
    test_trainjob_write_back();
    test_trainjob_write_back_creates();
    test_trainjob_bad();
    test_runtime_cases();
    test_runtime_typed();
    test_runtime_no_template();
    test_runtime_bad();
    test_defaults_match_crds();
    test_shipped_runtimes();
    return test_report();
}
