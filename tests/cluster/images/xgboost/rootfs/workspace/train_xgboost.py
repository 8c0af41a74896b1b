"""train_xgboost.py - distributed XGBoost (1.7, Rabit collective) for kt's cluster tests.

Reads the variables kt's XGBoost plugin sets (docs/internals/upstream.md#plainml-jax-xgboost-flux): DMLC_TRACKER_URI, DMLC_TRACKER_PORT,
DMLC_TASK_ID (the pod's completion index), DMLC_NUM_WORKER. Task 0 also runs the Rabit tracker
on DMLC_TRACKER_PORT (as upstream Kubeflow Trainer's XGBoost examples do), ranks sorted by task.
Each worker trains on its shard of a synthetic binary-classification set (fixed seed, nothing
downloaded) and prints `world size N rank R ...`, then `rank R/N round I train-logloss L` per
round (ROUNDS, default 10; the metric is all-reduced, so every rank prints the same numbers) and
`rank R/N done ...`. Exits 0 when the world size is DMLC_NUM_WORKER and the loss went down.
"""

import os
import socket
import sys

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker


def say(msg):
    """Print one line in one write, so lines of concurrent ranks on one stdout do not mix."""
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def shard(rank, world, rows=4000, cols=16, seed=7):
    """This rank's rows of a fixed synthetic set: label = sign of a noisy linear function."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, cols))
    w = rng.normal(size=cols)
    y = (x @ w + 0.5 * rng.normal(size=rows) > 0).astype(np.float32)
    return x[rank::world], y[rank::world]


def main():
    uri = os.environ["DMLC_TRACKER_URI"]
    port = int(os.environ["DMLC_TRACKER_PORT"])
    task = int(os.environ["DMLC_TASK_ID"])
    workers = int(os.environ["DMLC_NUM_WORKER"])
    rounds = int(os.environ.get("ROUNDS", "10"))
    tracker = None
    if task == 0:
        tracker = RabitTracker(host_ip="0.0.0.0", n_workers=workers, port=port, sortby="task")
        tracker.start(workers)
    env = {"DMLC_TRACKER_URI": uri, "DMLC_TRACKER_PORT": port, "DMLC_TASK_ID": str(task),
           "DMLC_WORKER_CONNECT_RETRY": 30}
    with collective.CommunicatorContext(**env):
        rank, world = collective.get_rank(), collective.get_world_size()
        say(f"world size {world} rank {rank} task {task} host {socket.gethostname()} "
              f"tracker {uri}:{port} xgboost {xgb.__version__}")
        x, y = shard(rank, world)
        dtrain = xgb.DMatrix(x, label=y)
        params = {"objective": "binary:logistic", "tree_method": "hist", "nthread": 1,
                  "max_depth": 4, "eta": 0.3, "eval_metric": "logloss"}
        result = {}
        xgb.train(params, dtrain, num_boost_round=rounds, evals=[(dtrain, "train")],
                  evals_result=result, verbose_eval=False)
        loss = result["train"]["logloss"]
        for i, v in enumerate(loss):
            say(f"rank {rank}/{world} round {i} train-logloss {v:.4f}")
        say(f"rank {rank}/{world} done rows {len(y)} first logloss {loss[0]:.4f} "
            f"final logloss {loss[-1]:.4f}")
    if tracker is not None:
        tracker.join()
    ok = world == workers and loss[-1] < loss[0]
    if not ok:
        print(f"rank {rank}: FAILED (world size {world}, DMLC_NUM_WORKER {workers})",
              file=sys.stderr, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
