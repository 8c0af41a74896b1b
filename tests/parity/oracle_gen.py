#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/parity/oracle_gen.py SEED OUT_DIR [N] - seeded inputs for the oracle tier (oracle.sh).

Writes, all our own text:
  OUT/setup.json     Namespace, PriorityClasses and the TrainingRuntimes / ClusterTrainingRuntimes
                     the TrainJobs use (the shipped ClusterTrainingRuntimes come from
                     deploy/runtimes, applied separately);
  OUT/trainjobs.json the N TrainJobs meant valid, applied to both planes (class (a));
  OUT/reviews.jsonl  one AdmissionReview per line: {"name", "class", "path", "review"} for
                     TrainJob CREATE (valid and invalid) and UPDATE (with oldObject), the
                     defaulter's mutate path, and TrainingRuntime / ClusterTrainingRuntime reviews.
Same SEED, same files.
"""
import json
import random
import sys

NS = "parity"
GROUP = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
SHIPPED = [
    "torch-distributed",
    "deepspeed-distributed",
    "mlx-distributed",
    "jax-distributed",
    "xgboost-distributed",
    "torchtune-llama3.2-1b",
    "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
]
TORCHTUNE = [s for s in SHIPPED if s.startswith("torchtune")]


def container(name, image, **kw):
    c = {"name": name, "image": image}
    c.update(kw)
    return c


def rjob(name, ancestor, containers, replicas=1, init_containers=None, pod_extra=None):
    pod = {"containers": containers}
    if init_containers:
        pod["initContainers"] = init_containers
    if pod_extra:
        pod.update(pod_extra)
    tmpl = {"spec": {"template": {"spec": pod}}}
    if ancestor:
        tmpl["metadata"] = {"labels": {ANCESTOR: ancestor}}
    j = {"name": name, "template": tmpl}
    if replicas is not None:
        j["replicas"] = replicas
    return j


def initializer_jobs():
    mount = [{"name": "initializer", "mountPath": "/workspace"}]
    req = {"requests": {"cpu": "1", "memory": "2Gi"}}
    return [
        rjob("dataset-initializer", "dataset-initializer",
             [container("dataset-initializer", "ghcr.io/kubeflow/trainer/dataset-initializer",
                        resources=req, volumeMounts=mount)],
             pod_extra={"volumes": [{"name": "initializer", "emptyDir": {}}]}),
        rjob("model-initializer", "model-initializer",
             [container("model-initializer", "ghcr.io/kubeflow/trainer/model-initializer",
                        resources=req, volumeMounts=mount)],
             pod_extra={"volumes": [{"name": "initializer", "emptyDir": {}}]}),
    ]


def runtime(name, ml, jobs, kind="TrainingRuntime", pgp=None, labels=None, annotations=None):
    meta = {"name": name}
    if kind == "TrainingRuntime":
        meta["namespace"] = NS
    if labels:
        meta["labels"] = labels
    spec = {"mlPolicy": ml, "template": {"spec": {"replicatedJobs": jobs}}}
    if annotations:
        spec["template"]["metadata"] = {"annotations": annotations}
    if pgp:
        spec["podGroupPolicy"] = pgp
    return {"apiVersion": GROUP, "kind": kind, "metadata": meta, "spec": spec}


def node_job(image="pytorch/pytorch:2", extra=None, pod_extra=None):
    c = container("node", image, resources={"requests": {"cpu": "1", "memory": "1Gi"}})
    if extra:
        c.update(extra)
    return rjob("node", "trainer", [c], pod_extra=pod_extra)


def our_runtimes():
    """Our TrainingRuntimes (namespace parity): name -> (object, traits)."""
    rts = {}
    rts["torch"] = (runtime("torch", {"numNodes": 1, "torch": {}},
                            [node_job(extra={"env": [{"name": "FROM_RUNTIME", "value": "1"}]})]),
                    {"torch": True})
    rts["torch-init"] = (runtime("torch-init", {"numNodes": 2, "torch": {}},
                                 initializer_jobs() + [node_job()]),
                         {"torch": True, "init": True})
    rts["plainml"] = (runtime("plainml", {"numNodes": 1},
                              [node_job(image="python:3.12", extra={"command": ["python3"]})]), {})
    launcher = rjob("launcher", None, [container("node", "mpi-launcher:1",
                                                 command=["mpirun", "python3", "/app/train.py"])])
    worker = rjob("node", "trainer", [container("node", "mpi-worker:1"),
                                      container("sidecar", "busybox")])
    rts["mpi"] = (runtime("mpi", {"numNodes": 1, "mpi": {"numProcPerNode": 2}}, [launcher, worker]),
                  {"mpi": True})
    rts["mpi-lan"] = (runtime("mpi-lan", {"numNodes": 2, "mpi": {
        "numProcPerNode": 1, "mpiImplementation": "OpenMPI", "runLauncherAsNode": True,
        "sshAuthMountPath": "/home/mpiuser/.ssh"}}, [launcher, worker]), {"mpi": True})
    rts["cosched"] = (runtime("cosched", {"numNodes": 1, "torch": {}}, initializer_jobs() + [node_job()],
                              pgp={"coscheduling": {"scheduleTimeoutSeconds": 90}}),
                      {"torch": True, "init": True})
    vnode = node_job(pod_extra={"priorityClassName": "parity-high"})
    rts["volcano"] = (runtime("volcano", {"numNodes": 1, "torch": {}}, initializer_jobs() + [vnode],
                              pgp={"volcano": {"networkTopology": {"mode": "soft",
                                                                   "highestTierAllowed": 1}}},
                              annotations={"scheduling.volcano.sh/queue-name": "research"}),
                      {"torch": True, "init": True})
    gnode = node_job(pod_extra={"priorityClassName": "parity-ghost"})
    rts["volcano-ghost"] = (runtime("volcano-ghost", {"numNodes": 1, "torch": {}}, [gnode],
                                    pgp={"volcano": {}}), {"torch": True, "invalid": True})
    rts["flux"] = (runtime("flux", {"numNodes": 1, "flux": {"numProcPerNode": 2}},
                           [node_job(image="ghcr.io/converged-computing/metric-lammps:latest",
                                     extra={"command": ["lmp", "-in", "in.reaxc.hns"]})]),
                   {"flux": True})
    return rts


def cluster_runtimes():
    return [runtime("parity-deprecated", {"numNodes": 1, "torch": {}}, [node_job()],
                    kind="ClusterTrainingRuntime", labels={"trainer.kubeflow.org/support": "deprecated"})]


def priority_classes():
    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
             "metadata": {"name": n}, "value": v} for n, v in (("parity-high", 1000), ("parity-low", 10))]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.rts = our_runtimes()

    def pick(self, xs):
        return self.r.choice(xs)

    def coin(self, p=0.5):
        return self.r.random() < p

    def env(self, n, prefix="USER"):
        return [{"name": f"{prefix}_{i}", "value": str(self.r.randint(0, 99))} for i in range(n)]

    def resources(self):
        res = {}
        if self.coin(0.6):
            res["requests"] = {"cpu": self.pick(["500m", "1000m", "2", "4"]),
                               "memory": self.pick(["1Gi", "2048Mi", "512Mi"])}
        if self.coin(0.5):
            res["limits"] = {"nvidia.com/gpu": self.pick([1, 2, 4, "8"])}
        return res

    def patch(self, jobs, i):
        """A runtimePatch over replicatedJobs of the runtime (names in jobs)."""
        job = self.pick(jobs)
        pod = {}
        if self.coin(0.6):
            pod["volumes"] = [{"name": f"vol{i}", "emptyDir": {}}]
            c = {"name": "node" if job == "node" else job,
                 "volumeMounts": [{"name": f"vol{i}", "mountPath": f"/mnt/v{i}"}]}
            if self.coin(0.5):
                c["env"] = [{"name": f"PATCH_ENV_{i}", "value": "x"}]
            pod["containers"] = [c]
        elif self.coin(0.5):
            pod["containers"] = [{"name": "node" if job == "node" else job,
                                  "env": [{"name": "PATCHED", "value": str(i)}]}]
        if self.coin(0.4):
            pod["nodeSelector"] = {"pool": self.pick(["a", "b"])}
        if self.coin(0.3):
            pod["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
        tmpl = {"spec": {"template": {"spec": pod}}}
        if self.coin(0.3):
            tmpl["metadata"] = {"labels": {"patched": "yes"}}
        rtspec = {"template": {"spec": {"replicatedJobs": [{"name": job, "template": tmpl}]}}}
        if self.coin(0.3):
            rtspec["template"]["metadata"] = {"labels": {"patch-label": str(i)}}
        return {"manager": self.pick(["acme.io/tuner", "kueue.x-k8s.io/manager", "example.com/p"]),
                "trainingRuntimeSpec": rtspec}

    def trainjob(self, i):
        """A TrainJob meant valid; returns (object, runtime kind/name, traits)."""
        shipped = self.coin(0.45)
        if shipped:
            name = self.pick(SHIPPED)
            ref = {"name": name}
            traits = {"torch": name in ("torch-distributed",) or name in TORCHTUNE,
                      "tune": name in TORCHTUNE, "mpi": name in ("deepspeed-distributed",
                                                                  "mlx-distributed"),
                      "xgb": name == "xgboost-distributed", "init": name in TORCHTUNE}
            jobs = ["node"]
        else:
            name = self.pick([n for n, (_, t) in self.rts.items() if not t.get("invalid")])
            ref = {"name": name, "kind": "TrainingRuntime"}
            traits = dict(self.rts[name][1])
            jobs = [j["name"] for j in self.rts[name][0]["spec"]["template"]["spec"]["replicatedJobs"]]
        if self.coin(0.05):
            ref["apiGroup"] = "trainer.kubeflow.org"
        spec = {"runtimeRef": ref}
        tr = {}
        if traits.get("tune"):
            if self.coin(0.5):
                tr["command"] = ["tune", "run"]
            if self.coin(0.3):
                tr["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": self.pick([1, 2])}}
        else:
            # Flux needs trainer.numNodes (upstream v2.3.0 panics without it: README).
            if traits.get("flux"):
                tr["numNodes"] = self.r.randint(1, 3)
            elif self.coin(0.7):
                tr["numNodes"] = self.r.randint(1, 4)
            if self.coin(0.4):
                tr["image"] = self.pick(["docker.io/me/train:1", "ghcr.io/x/y:2"])
            if self.coin(0.4):
                tr["command"] = self.pick([["torchrun", "/app/train.py"], ["python3", "-m", "x"],
                                           ["bash", "-c", "echo hi"]])
            if self.coin(0.3):
                tr["args"] = ["--epochs", str(self.r.randint(1, 9))]
            res = self.resources()
            if res and self.coin(0.6):
                tr["resourcesPerNode"] = res
            if traits.get("torch") and self.coin(0.4):
                tr["numProcPerNode"] = self.pick([1, 2, 4])
            elif (traits.get("mpi") or traits.get("flux")) and self.coin(0.4):
                tr["numProcPerNode"] = self.r.randint(1, 4)
        if self.coin(0.4):
            tr["env"] = self.env(self.r.randint(1, 3))
        if tr or self.coin(0.5):
            spec["trainer"] = tr
        if traits.get("init") and self.coin(0.7):
            ini = {}
            if self.coin(0.8):
                ini["dataset"] = {"storageUri": self.pick(["hf://tatsu-lab/alpaca", "s3://b/d"])}
                if self.coin(0.3):
                    ini["dataset"]["env"] = [{"name": "HF_X", "value": "1"}]
            if self.coin(0.6):
                ini["model"] = {"storageUri": "hf://meta-llama/Llama-3.2-1B-Instruct"}
            if ini:
                spec["initializer"] = ini
        if self.coin(0.2):
            spec["suspend"] = True
        elif self.coin(0.1):
            spec["suspend"] = False
        if self.coin(0.1):
            spec["managedBy"] = self.pick(["trainer.kubeflow.org/trainjob-controller",
                                           "kueue.x-k8s.io/multikueue"])
        if self.coin(0.2):
            spec["activeDeadlineSeconds"] = self.r.randint(60, 86400)
        if not traits.get("tune") and self.coin(0.3):
            spec["runtimePatches"] = [self.patch(jobs, k) for k in range(self.r.randint(1, 2))]
            mgrs = [p["manager"] for p in spec["runtimePatches"]]
            if len(set(mgrs)) != len(mgrs):
                spec["runtimePatches"] = spec["runtimePatches"][:1]
        meta = {"name": f"tj-{i:04d}", "namespace": NS}
        if self.coin(0.3):
            meta["labels"] = {"app": "parity", "team": self.pick(["a", "b"]), "n": str(i % 7)}
        if self.coin(0.2):
            meta["annotations"] = {"note": f"n{i}"}
        return {"apiVersion": GROUP, "kind": "TrainJob", "metadata": meta, "spec": spec}, traits

    def invalid(self, i, base):
        """Variants of a valid TrainJob that should be denied (or that probe an edge)."""
        tj = json.loads(json.dumps(base))
        tj["metadata"]["name"] = f"bad-{i:04d}"
        spec = tj["spec"]
        ref = spec["runtimeRef"]
        kind = self.r.randint(0, 13)
        tr = spec.setdefault("trainer", {})
        if kind == 0:
            ref["name"] = "no-such-runtime"
        elif kind == 1:
            spec["runtimeRef"] = {"name": "no-such-runtime", "kind": "TrainingRuntime"}
        elif kind == 2:
            tr["env"] = [{"name": self.pick(["PET_NNODES", "PET_NODE_RANK", "OMPI_MCA_x",
                                             "DMLC_TRACKER_URI", "PET_MASTER_ADDR"]), "value": "1"}]
        elif kind == 3:
            spec["runtimeRef"] = {"name": "flux", "kind": "TrainingRuntime"}
            tr["numProcPerNode"] = 0
            tr["numNodes"] = 1
        elif kind == 4:
            spec["runtimePatches"] = [{"manager": "acme.io/x", "trainingRuntimeSpec": {"template": {
                "spec": {"replicatedJobs": [{"name": "ghost-job", "template": {"spec": {}}}]}}}}]
        elif kind == 5:
            spec["runtimePatches"] = [{"manager": "acme.io/x", "trainingRuntimeSpec": {"template": {
                "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
                    "spec": {"containers": [{"name": "ghost", "env": [{"name": "A", "value": "1"}]}]}}}}}]}}}}]
        elif kind == 6:
            spec["managedBy"] = "example.com/other"
        elif kind == 7:
            spec["runtimeRef"] = {"name": self.pick(TORCHTUNE)}
            tr.clear()
            tr["numNodes"] = 2
        elif kind == 8:
            spec["runtimeRef"] = {"name": "torch", "kind": "TrainingRuntime"}
            spec["initializer"] = {"dataset": {"storageUri": "hf://x/y"}}
        elif kind == 9:
            spec["runtimeRef"] = {"name": "volcano-ghost", "kind": "TrainingRuntime"}
        elif kind == 10:
            spec["runtimeRef"] = {"name": "mpi", "kind": "TrainingRuntime"}
            tr["numProcPerNode"] = "auto"
        elif kind == 11:
            spec["runtimeRef"] = {"name": "parity-deprecated", "kind": "ClusterTrainingRuntime"}
        elif kind == 12:
            spec["runtimeRef"] = {"name": "torch", "kind": "Unknown", "apiGroup": "example.com"}
        else:
            spec["runtimePatches"] = [{"manager": "acme.io/x"}, {"manager": "acme.io/x"}]
        return tj, f"invalid-{kind}"


def review(uid, op, obj, old=None, kind="TrainJob", resource="trainjobs"):
    req = {
        "uid": uid,
        "kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": kind},
        "resource": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "resource": resource},
        "requestKind": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": kind},
        "requestResource": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "resource": resource},
        "name": obj["metadata"]["name"],
        "operation": op,
        "userInfo": {"username": "parity"},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }
    if "namespace" in obj["metadata"]:
        req["namespace"] = obj["metadata"]["namespace"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


VALIDATE = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
MUTATE = "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
VRT = "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime"
VCRT = "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"


def updates(g, tj, out, n):
    """UPDATE reviews of an applied TrainJob: (new, name suffix) pairs against it as old."""
    spec = tj["spec"]
    variants = []
    new = json.loads(json.dumps(tj))
    new["spec"]["suspend"] = not spec.get("suspend", False)
    variants.append(("suspend-toggle", new))
    new = json.loads(json.dumps(tj))
    new["spec"]["managedBy"] = g.pick(["kueue.x-k8s.io/multikueue", "trainer.kubeflow.org/trainjob-controller"])
    variants.append(("managedby", new))
    new = json.loads(json.dumps(tj))
    new["spec"]["runtimePatches"] = (spec.get("runtimePatches") or []) + [
        {"manager": "parity.io/added", "trainingRuntimeSpec": {"template": {"metadata": {
            "labels": {"added": "yes"}}}}}]
    variants.append(("patch-add", new))
    if spec.get("runtimePatches"):
        new = json.loads(json.dumps(tj))
        new["spec"]["runtimePatches"] = spec["runtimePatches"][1:]
        variants.append(("patch-drop", new))
    new = json.loads(json.dumps(tj))
    new["spec"].setdefault("trainer", {})["image"] = "docker.io/me/changed:9"
    variants.append(("image", new))
    new = json.loads(json.dumps(tj))
    new["spec"]["runtimeRef"] = {"name": "torch-distributed"}
    variants.append(("runtimeref", new))
    new = json.loads(json.dumps(tj))
    new["metadata"].setdefault("labels", {})["touched"] = "1"
    variants.append(("same-spec", new))
    for name, new in g.r.sample(variants, min(n, len(variants))):
        out.append((name, new, tj))


def decode_cases():
    """TrainJobs that do not decode into upstream's Go types (or just do): name -> object. Sent
    as they are (the API server's CRD schema would refuse most, but only after the mutating
    webhooks: the defaulter sees them; the validator may, e.g. an int32 out of range)."""
    def tj(name, **spec):
        # With the CRD's defaults (the API server adds them before any webhook).
        s = {"runtimeRef": {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org",
                            "kind": "ClusterTrainingRuntime"},
             "managedBy": "trainer.kubeflow.org/trainjob-controller", "trainer": {"numNodes": 2}}
        s.update(spec)
        return {"apiVersion": GROUP, "kind": "TrainJob",
                "metadata": {"name": "dec-" + name, "namespace": NS}, "spec": s}

    def tr(**kw):
        t = {"numNodes": 2}
        t.update(kw)
        return t
    patch = {"manager": "acme.io/x", "trainingRuntimeSpec": {"template": {"metadata": {
        "labels": {"a": "b"}}}}}
    cases = {
        "well-typed": tj("well-typed", runtimePatches=[patch]),
        "well-typed-plain": tj("well-typed-plain"),
        "numnodes-string": tj("numnodes-string", trainer=tr(numNodes="2")),
        "numnodes-float15": tj("numnodes-float15", trainer=tr(numNodes=1.5)),
        "numnodes-float10": tj("numnodes-float10", trainer=tr(numNodes=1.0)),
        "numnodes-exp": tj("numnodes-exp", trainer=tr(numNodes=2e0)),
        "numnodes-overflow": tj("numnodes-overflow", trainer=tr(numNodes=2147483648)),
        "numnodes-negoverflow": tj("numnodes-negoverflow", trainer=tr(numNodes=-2147483649)),
        "numnodes-bool": tj("numnodes-bool", trainer=tr(numNodes=True)),
        "numnodes-null": tj("numnodes-null", trainer=tr(numNodes=None)),
        "numprocpernode-string": tj("numprocpernode-string", trainer=tr(numProcPerNode="auto")),
        "ads-overflow": tj("ads-overflow", activeDeadlineSeconds=9223372036854775808),
        "ads-float": tj("ads-float", activeDeadlineSeconds=1.0),
        "ads-max": tj("ads-max", activeDeadlineSeconds=9223372036854775807),
        "suspend-string": tj("suspend-string", suspend="true"),
        "managedby-number": tj("managedby-number", managedBy=7),
        "image-bool": tj("image-bool", trainer=tr(image=True)),
        "image-object": tj("image-object", trainer=tr(image={"a": 1})),
        "image-array": tj("image-array", trainer=tr(image=["x"])),
        "command-string": tj("command-string", trainer=tr(command="python")),
        "command-elem-number": tj("command-elem-number", trainer=tr(command=["a", 1])),
        "env-object": tj("env-object", trainer=tr(env={"name": "A"})),
        "env-elem-number": tj("env-elem-number", trainer=tr(env=[5])),
        "env-value-number": tj("env-value-number", trainer=tr(env=[{"name": "A", "value": 1}])),
        "trainer-array": tj("trainer-array", trainer=[]),
        "trainer-string": tj("trainer-string", trainer="x"),
        "trainer-null": tj("trainer-null", trainer=None),
        "spec-string": tj("spec-string"),
        "runtimeref-name-number": tj("runtimeref-name-number", runtimeRef={
            "name": 1, "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"}),
        "resources-quantity-bad": tj("resources-quantity-bad", trainer=tr(
            resourcesPerNode={"limits": {"cpu": "abc"}})),
        "resources-quantity-object": tj("resources-quantity-object", trainer=tr(
            resourcesPerNode={"limits": {"cpu": {"x": 1}}})),
        "patch-time-bad": tj("patch-time-bad", runtimePatches=[dict(patch, time="garbage")]),
        "patch-time-number": tj("patch-time-number", runtimePatches=[dict(patch, time=5)]),
        "patch-time-date": tj("patch-time-date", runtimePatches=[dict(patch, time="2024-01-02")]),
        "patch-manager-number": tj("patch-manager-number", runtimePatches=[dict(patch, manager=3)]),
        "patch-labels-number": tj("patch-labels-number", runtimePatches=[
            {"manager": "acme.io/x", "trainingRuntimeSpec": {"template": {"metadata": {
                "labels": {"a": 1}}}}}]),
        "patch-volume-medium-number": tj("patch-volume-medium-number", runtimePatches=[
            {"manager": "acme.io/x", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                    "volumes": [{"name": "v", "emptyDir": {"medium": 1}}]}}}}}]}}}}]),
        "env-configmap-name-number": tj("env-configmap-name-number", trainer=tr(env=[
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": 1, "key": "k"}}}])),
        "labels-number": tj("labels-number"),
        "labels-array": tj("labels-array"),
        "creation-timestamp-bad": tj("creation-timestamp-bad"),
        "status-time-bad": tj("status-time-bad"),
        "unknown-fields": tj("unknown-fields", foo={"bar": 1}, trainer=tr(NumNodes="x", extra=[1])),
        "two-errors": tj("two-errors", trainer=tr(numNodes="2", image=5)),
        "type-then-time": tj("type-then-time", activeDeadlineSeconds="x",
                             runtimePatches=[dict(patch, time="garbage")]),
    }
    cases["spec-string"]["spec"] = "x"
    cases["labels-number"]["metadata"]["labels"] = {"a": 1}
    cases["labels-array"]["metadata"]["labels"] = ["a"]
    cases["creation-timestamp-bad"]["metadata"]["creationTimestamp"] = "yesterday"
    cases["unknown-fields"]["metadata"]["bogus"] = True
    cases["status-time-bad"]["status"] = {"conditions": [{
        "type": "Complete", "status": "True", "reason": "R", "message": "m",
        "lastTransitionTime": "2024-13-01T00:00:00Z"}]}
    return cases


def decode_runtime_cases(rts):
    """Runtimes that do not decode into upstream's Go types (or just do): name -> object."""
    base = rts["torch"][0]
    cases = {}

    def case(name, f):
        o = json.loads(json.dumps(base))
        o["metadata"]["name"] = "dec-" + name
        f(o)
        cases[name] = o

    def ml(k, v):
        return lambda o: o["spec"]["mlPolicy"].__setitem__(k, v)

    def rj(k, v):
        return lambda o: o["spec"]["template"]["spec"]["replicatedJobs"][0].__setitem__(k, v)

    def ctr(k, v):
        return lambda o: o["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"][
            "template"]["spec"]["containers"][0].__setitem__(k, v)
    case("rt-well-typed", lambda o: None)
    case("rt-numnodes-string", ml("numNodes", "1"))
    case("rt-numnodes-float", ml("numNodes", 1.0))
    case("rt-torch-numproc-auto", ml("torch", {"numProcPerNode": "auto"}))
    case("rt-mpi-numproc-float", ml("mpi", {"numProcPerNode": 1.5}))
    case("rt-mpi-numproc-bool", ml("mpi", {"numProcPerNode": True}))
    case("rt-mpi-numproc-overflow", ml("mpi", {"numProcPerNode": 2147483648}))
    case("rt-replicas-string", rj("replicas", "1"))
    case("rt-image-number", ctr("image", 5))
    case("rt-port-float", ctr("ports", [{"containerPort": 1.5}]))
    case("rt-probe-port-float", ctr("livenessProbe", {"httpGet": {"port": 1.5}}))
    case("rt-probe-port-object", ctr("livenessProbe", {"tcpSocket": {"port": {}}}))
    case("rt-probe-port-name", ctr("livenessProbe", {"tcpSocket": {"port": "http"}}))
    case("rt-quantity-bad", ctr("resources", {"requests": {"cpu": "1x"}}))
    case("rt-labels-number", lambda o: o["metadata"].__setitem__("labels", {"a": 2}))
    case("rt-created-bad", lambda o: o["metadata"].__setitem__("creationTimestamp", "2024-02-30T00:00:00Z"))
    case("rt-pgp-timeout-overflow", lambda o: o["spec"].__setitem__(
        "podGroupPolicy", {"coscheduling": {"scheduleTimeoutSeconds": 4294967296}}))
    return cases


def main():
    seed = int(sys.argv[1])
    out = sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 520
    g = Gen(seed)
    setup = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}]
    setup += priority_classes()
    setup += [o for o, _ in g.rts.values()]
    setup += cluster_runtimes()
    jobs = []
    reviews = []
    uid = [0]

    def add(cls, name, path, rv):
        uid[0] += 1
        rv["request"]["uid"] = f"00000000-0000-4000-8000-{uid[0]:012d}"
        reviews.append({"name": name, "class": cls, "path": path, "review": rv})

    for i in range(n):
        tj, traits = g.trainjob(i)
        jobs.append(tj)
        add("trainjob-create", tj["metadata"]["name"], VALIDATE, review("", "CREATE", tj))
        if tj["spec"].get("runtimePatches"):
            add("defaulter", tj["metadata"]["name"] + "-create", MUTATE, review("", "CREATE", tj))
    for i in range(max(n // 4, 130)):
        bad, tag = g.invalid(i, g.pick(jobs))
        add("trainjob-create", bad["metadata"]["name"] + "-" + tag, VALIDATE, review("", "CREATE", bad))
    ups = []
    for tj in g.r.sample(jobs, min(len(jobs), 60)):
        updates(g, tj, ups, 3)
    for name, new, old in ups:
        add("trainjob-update", f"{new['metadata']['name']}-{name}", VALIDATE, review("", "UPDATE", new, old))
        if new["spec"].get("runtimePatches") or old["spec"].get("runtimePatches"):
            add("defaulter", f"{new['metadata']['name']}-{name}", MUTATE, review("", "UPDATE", new, old))
    # Objects that do not decode into upstream's Go types: both webhooks, sent as they are.
    for name, obj in decode_cases().items():
        for path, tag in ((VALIDATE, "validate"), (MUTATE, "default")):
            add("decode", f"{name}-{tag}", path, review("", "CREATE", obj))
        # A well-typed object (the same runtimePatches, when they decode) against this old one.
        good = decode_cases()["well-typed-plain"]
        good["metadata"]["name"] = obj["metadata"]["name"]
        if name == "well-typed":
            good["spec"]["runtimePatches"] = obj["spec"]["runtimePatches"]
        add("decode", f"{name}-update-old", VALIDATE, review("", "UPDATE", good, obj))
    for name, obj in decode_runtime_cases(g.rts).items():
        crt = json.loads(json.dumps(obj))
        crt["kind"] = "ClusterTrainingRuntime"
        del crt["metadata"]["namespace"]
        good = json.loads(json.dumps(g.rts["torch"][0]))
        good["metadata"]["name"] = obj["metadata"]["name"]
        add("decode", f"{name}-tr", VRT, review("", "CREATE", obj, kind="TrainingRuntime",
                                                 resource="trainingruntimes"))
        add("decode", f"{name}-tr-update-old", VRT, review(
            "", "UPDATE", good, old=obj, kind="TrainingRuntime", resource="trainingruntimes"))
        add("decode", f"{name}-ctr", VCRT, review("", "CREATE", crt, kind="ClusterTrainingRuntime",
                                                   resource="clustertrainingruntimes"))
    # Runtimes: ours as TrainingRuntime and as ClusterTrainingRuntime, some broken.
    for name, (rt, _) in g.rts.items():
        rt = json.loads(json.dumps(rt))
        rt["metadata"]["name"] = "rv-" + name  # not the applied runtime: a dry-run create
        add("runtime", f"tr-{name}", VRT, review("", "CREATE", rt, kind="TrainingRuntime",
                                                  resource="trainingruntimes"))
        crt = json.loads(json.dumps(rt))
        crt["kind"] = "ClusterTrainingRuntime"
        del crt["metadata"]["namespace"]
        if g.coin(0.5):
            crt["metadata"]["labels"] = {"trainer.kubeflow.org/support": "deprecated"}
        add("runtime", f"ctr-{name}", VCRT, review("", "CREATE", crt, kind="ClusterTrainingRuntime",
                                                   resource="clustertrainingruntimes"))
        for k, mut in enumerate(("replicas", "container", "noreplicas")):
            b = json.loads(json.dumps(crt if k % 2 else rt))
            rj = b["spec"]["template"]["spec"]["replicatedJobs"][-1]
            if mut == "replicas":
                rj["replicas"] = 2
            elif mut == "container":
                rj["template"]["spec"]["template"]["spec"]["containers"][0]["name"] = "renamed"
            else:
                rj.pop("replicas", None)
            path, kd, res = (VCRT, "ClusterTrainingRuntime", "clustertrainingruntimes") if k % 2 else \
                (VRT, "TrainingRuntime", "trainingruntimes")
            add("runtime", f"{'ctr' if k % 2 else 'tr'}-{name}-{mut}", path,
                review("", "CREATE", b, kind=kd, resource=res))
            add("runtime", f"{'ctr' if k % 2 else 'tr'}-{name}-{mut}-update", path,
                review("", "UPDATE", b, old=crt if k % 2 else rt, kind=kd, resource=res))
    for o in cluster_runtimes():
        o["metadata"]["name"] = "rv-" + o["metadata"]["name"]
        add("runtime", "ctr-" + o["metadata"]["name"], VCRT,
            review("", "CREATE", o, kind="ClusterTrainingRuntime", resource="clustertrainingruntimes"))
        add("runtime", "ctr-" + o["metadata"]["name"] + "-update", VCRT,
            review("", "UPDATE", o, old=o, kind="ClusterTrainingRuntime", resource="clustertrainingruntimes"))
    json.dump({"apiVersion": "v1", "kind": "List", "items": setup}, open(out + "/setup.json", "w"))
    json.dump({"apiVersion": "v1", "kind": "List", "items": jobs}, open(out + "/trainjobs.json", "w"))
    with open(out + "/reviews.jsonl", "w") as f:
        for rv in reviews:
            f.write(json.dumps(rv, sort_keys=True) + "\n")
    counts = {}
    for rv in reviews:
        counts[rv["class"]] = counts.get(rv["class"], 0) + 1
    print(json.dumps({"trainjobs": len(jobs), "reviews": counts}))


if __name__ == "__main__":
    main()
