"""tests/e2e/sdk_test.py NAMESPACE - the Kubeflow Python SDK (PyPI `kubeflow`, TrainerClient with
the Kubernetes backend) as an ML engineer uses it, against kt on the full local chain.

KUBECONFIG names the cluster. Prints `ok NAME` / `FAIL NAME: why` lines (counted by the e2e tier);
exits non-zero when a check failed. The job's pods run for KT_SIM_RUN (an env var the SDK passes
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


def ok(name):
    print(f"ok sdk-{name}", flush=True)


def fail(name, why):
    global FAILED
    FAILED += 1
    print(f"FAIL sdk-{name}: {why}", flush=True)


def check(name, cond, why=""):
    if cond:
        ok(name)
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
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
