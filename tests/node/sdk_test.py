# SPDX-License-Identifier: Apache-2.0
"""tests/node/sdk_test.py NAMESPACE - the Kubeflow Python SDK (PyPI `kubeflow`, TrainerClient with
the Kubernetes backend) on the real node: `train(CustomTrainer(func, num_nodes=2))` where func is a
real torch DDP function, `get_job_logs(follow=True)` streams its output while it runs,
`wait_for_job_status` Complete, `get_job` steps Succeeded, `delete_job`.

KUBECONFIG names the cluster. Prints `ok NAME` / `FAIL NAME: why` lines (counted by the tier);
exits non-zero when a check failed.
"""

import re
import sys

from kubeflow.common.types import KubernetesBackendConfig
from kubeflow.trainer import CustomTrainer, TrainerClient

FAILED = 0


def check(name, cond, why=""):
    global FAILED
    if cond:
        print(f"ok sdk-{name}", flush=True)
    else:
        FAILED += 1
        print(f"FAIL sdk-{name}: {why}", flush=True)


def ddp_regression():
    # Runs in the training pods (the SDK ships its source): DDP over gloo, a linear model
    # fitted to a fixed random target; every rank prints its loss per step.
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"sdk world size {world} rank {rank}", flush=True)
    torch.manual_seed(0)
    x = torch.randn(512, 16)
    y = x @ torch.randn(16, 1)
    model = DistributedDataParallel(torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(1, 31):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        print(f"sdk rank {rank} step {step} loss {loss.item():.5f}", flush=True)
        import time

        time.sleep(0.1)  # a run long enough to follow its logs
    dist.barrier()
    dist.destroy_process_group()


def main():
    ns = sys.argv[1]
    tc = TrainerClient(KubernetesBackendConfig(namespace=ns))
    job = tc.train(
        runtime=tc.get_runtime("torch-distributed"),
        trainer=CustomTrainer(
            func=ddp_regression,
            num_nodes=2,
            resources_per_node={"cpu": "200m", "memory": "512Mi"},
        ),
    )
    check("train", bool(job), "no job name")
    tc.wait_for_job_status(job, {"Running"}, timeout=180, polling_interval=1)
    lines = list(tc.get_job_logs(job, follow=True))
    losses = [float(m.group(1)) for m in (re.search(r"sdk rank 0 step \d+ loss ([0-9.]+)", l) for l in lines) if m]
    check("logs-follow-world-size", any("sdk world size 2 rank 0" in l for l in lines), f"{lines[:5]}")
    check("logs-follow-loss-lines", len(losses) == 30, f"{len(losses)} loss lines: {lines[-5:]}")
    check("logs-loss-decreases", len(losses) >= 2 and losses[-1] < losses[0], f"{losses[:1]} .. {losses[-1:]}")
    j = tc.wait_for_job_status(job, {"Complete"}, timeout=180, polling_interval=1)
    check("complete", j.status == "Complete", f"status {j.status}")
    j = tc.get_job(job)
    steps = [(s.name, s.status) for s in j.steps]
    check("steps-succeeded", len(steps) == 2 and all(st == "Succeeded" for _, st in steps), f"{steps}")
    tc.delete_job(job)
    gone = False
    import time

    for _ in range(120):
        try:
            tc.get_job(job)
        except Exception:  # the SDK raises once the TrainJob is gone
            gone = True
            break
        time.sleep(0.5)
    check("deleted", gone, "get_job still finds it after 60 s")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
