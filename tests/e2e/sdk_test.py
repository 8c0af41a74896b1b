# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/sdk_test.py NAMESPACE - the Kubeflow Python SDK (PyPI `kubeflow`, TrainerClient with
the Kubernetes backend) as an ML engineer uses it, against kt on the full local chain.

KUBECONFIG names the cluster. Prints `ok NAME` / `FAIL NAME: why` lines (counted by the e2e tier);
exits non-zero when a check failed. Also ttlSecondsAfterFinished through the SDK (ttl_checks). The job's pods run for KT_SIM_RUN (an env var the SDK passes
to the training nodes; KWOK's stages read it) so that the Running state is observable.
"""

import logging
import os
import sys
import time

from kubeflow.common.types import KubernetesBackendConfig
from kubeflow.trainer import CustomTrainer, TrainerClient
from kubernetes import client as k8s
from kubernetes import config as k8s_config

FAILED = 0


def ok(name, detail=""):
    print(f"ok sdk-{name}" + (f" ({detail})" if detail else ""), flush=True)


def fail(name, why):
    global FAILED
    FAILED += 1
    print(f"FAIL sdk-{name}: {why}", flush=True)


def check(name, cond, why="", detail=""):
    if cond:
        ok(name, detail)
    else:
        fail(name, why)


def train_mnist():
    print("training")


class WarningCounter(logging.Handler):
    """Counts the SDK's warnings (it warns when kubeflow-trainer-public is missing)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def children_gone(core, custom, ns, name):
    sel = f"jobset.sigs.k8s.io/jobset-name={name}"
    pods = core.list_namespaced_pod(ns, label_selector=sel).items
    try:
        custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", name)
        return False
    except k8s.ApiException as e:
        if e.status != 404:
            raise
    return not pods


def lookup(tc, name):
    """The SDK's answer for a TrainJob: get_job's TrainJob, or None when the API server no longer
    has it, where the SDK 0.5.0 raises RuntimeError ("Failed to get TrainJob: ns/name") from the
    client's 404 ApiException. Any other error propagates."""
    try:
        return tc.get_job(name)
    except RuntimeError as e:
        if isinstance(e.__cause__, k8s.ApiException) and e.__cause__.status == 404:
            return None
        raise


def ttl_checks(tc, core, custom, ns):
    """ttlSecondsAfterFinished (provisional, KEP-2899) seen through the SDK: a TrainJob on a
    runtime whose runPolicy defaults the TTL, and one whose own TTL is set, are deleted by kt after
    they complete; get_job then raises and list_jobs no longer lists them, while a TTL-less
    TrainJob that completed with them is still found (the control)."""
    grp, ver = "trainer.kubeflow.org", "v1alpha1"
    ttl = 4  # seconds: longer than the SDK's 1 s polling, so wait_for_job_status sees Complete
    rt = custom.get_cluster_custom_object(grp, ver, "clustertrainingruntimes", "torch-distributed")
    custom.create_namespaced_custom_object(grp, ver, ns, "trainingruntimes", {
        "apiVersion": f"{grp}/{ver}", "kind": "TrainingRuntime",
        "metadata": {"name": "sdk-ttl", "labels": rt["metadata"].get("labels", {})},
        "spec": dict(rt["spec"], runPolicy={"ttlSecondsAfterFinished": ttl}),
    })
    trainer = CustomTrainer(func=train_mnist, num_nodes=1)
    # the runtime default: the SDK prefers a namespaced runtime of that name (runtimeRef kind
    # TrainingRuntime)
    by_rt = tc.train(runtime=tc.get_runtime("sdk-ttl"), trainer=trainer)

    # The SDK 0.5.0 has no TTL parameter, and of an option's spec it passes on only trainer,
    # runtimePatches and activeDeadlineSeconds: an option setting the field is dropped. The
    # field is mutable, so the user sets it with kubectl (here: the same merge patch).
    def ttl_option(job_spec, _trainer, _backend):
        job_spec.setdefault("spec", {})["ttlSecondsAfterFinished"] = ttl

    own = tc.train(runtime=tc.get_runtime("torch-distributed"), trainer=trainer, options=[ttl_option])
    cr = custom.get_namespaced_custom_object(grp, ver, ns, "trainjobs", own)
    check("ttl-option-dropped-by-sdk", "ttlSecondsAfterFinished" not in cr["spec"],
          f"spec {cr['spec']}")
    custom.patch_namespaced_custom_object(grp, ver, ns, "trainjobs", own,
                                          {"spec": {"ttlSecondsAfterFinished": ttl}})
    keep = tc.train(runtime=tc.get_runtime("torch-distributed"), trainer=trainer)

    # One bounded poll through the SDK's get_job for the three at once (a sequential
    # wait_for_job_status could look for a TTL job only after kt deleted it).
    jobs = ((by_rt, "runtime-default"), (own, "own"), (keep, "unset"))
    done, gone = {}, {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and (len(done) < 3 or len(gone) < 2):
        for name, _ in jobs:
            if name in gone:
                continue
            j = lookup(tc, name)
            if j is None:
                gone[name] = time.monotonic()
            elif j.status == "Complete":
                done.setdefault(name, time.monotonic())
        time.sleep(0.2)
    for name, what in jobs:
        check(f"ttl-{what}-complete", name in done, f"{name} never seen Complete")
    listed = {j.name for j in tc.list_jobs()}
    for name, what in jobs[:2]:
        after = f"{gone[name] - done[name]:.1f} s after Complete was seen" if name in gone and name in done else ""
        check(f"ttl-{what}-get-job-raises-404", name in gone, f"get_job still finds {name}",
              f"TTL {ttl} s; {after}")
        check(f"ttl-{what}-not-listed", name not in listed, f"list_jobs lists {name}")
    deadline = time.monotonic() + 30
    while not all(children_gone(core, custom, ns, n) for n in gone) and time.monotonic() < deadline:
        time.sleep(0.5)
    check("ttl-gone-with-children", all(children_gone(core, custom, ns, n) for n in gone),
          "JobSet or pods left after 30 s")
    # the control: completed with them, no TTL, still there
    try:
        j = tc.get_job(keep)
        check("ttl-control-unset-still-found", j.status == "Complete" and keep in listed,
              f"status {j.status}, listed {keep in listed}")
    except Exception as e:  # noqa: BLE001
        fail("ttl-control-unset-still-found", repr(e))


def main():
    ns = sys.argv[1]
    warnings = WarningCounter()
    logging.getLogger("kubeflow").addHandler(warnings)
    cfg = KubernetesBackendConfig(namespace=ns, config_file=os.environ["KUBECONFIG"])
    tc = TrainerClient(backend_config=cfg)
    check("public-configmap-found", not any("kubeflow-trainer-public" in m for m in warnings.messages),
          "; ".join(warnings.messages))

    names = [r.name for r in tc.list_runtimes()]
    check("list-runtimes", "torch-distributed" in names and len(names) >= 8, f"got {names}")

    job = tc.train(
        runtime=tc.get_runtime("torch-distributed"),
        trainer=CustomTrainer(func=train_mnist, num_nodes=2, env={"KT_SIM_RUN": "6s"}),
    )
    check("train-created", bool(job), "no job name")

    try:
        j = tc.wait_for_job_status(job, {"Running"}, timeout=180, polling_interval=1)
        check("wait-running", j.status == "Running", j.status)
    except Exception as e:  # noqa: BLE001 - any SDK error is a failed check
        fail("wait-running", repr(e))
    try:
        j = tc.wait_for_job_status(job, {"Complete"}, timeout=240, polling_interval=1)
        check("wait-complete", j.status == "Complete", j.status)
    except Exception as e:  # noqa: BLE001
        fail("wait-complete", repr(e))

    j = tc.get_job(job)
    steps = [(s.name, s.status) for s in j.steps]
    nodes = [s for s in steps if s[0].startswith("node")]
    check("steps-all-succeeded", len(nodes) == 2 and all(st == "Succeeded" for _, st in steps),
          f"steps {steps}")
    check("num-nodes", j.num_nodes == 2, f"num_nodes {j.num_nodes}")

    events = tc.get_job_events(job)
    kinds = sorted({e.involved_object_kind for e in events})
    check("job-events", len(events) > 0 and "Pod" in kinds, f"{len(events)} events, kinds {kinds}")

    tc.delete_job(job)
    k8s_config.load_kube_config(config_file=os.environ["KUBECONFIG"])
    core, custom = k8s.CoreV1Api(), k8s.CustomObjectsApi()
    deadline = time.monotonic() + 120
    while not children_gone(core, custom, ns, job) and time.monotonic() < deadline:
        time.sleep(0.5)
    check("delete-job-children-gone", children_gone(core, custom, ns, job),
          "JobSet or pods still there after 120 s")
    try:
        tc.get_job(job)
        fail("deleted-job-not-found", "get_job still returns it")
    except Exception:  # noqa: BLE001 - the SDK raises on a missing TrainJob
        ok("deleted-job-not-found")

    ttl_checks(tc, core, custom, ns)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
