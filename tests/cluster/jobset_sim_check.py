#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/cluster/jobset_sim_check.py - jobset_sim.py's steps against what kwok/jobset-stages.yaml
does (run by tests/cluster/tier.sh; no cluster). Prints `ok NAME` / `FAIL NAME: why`."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobset_sim as s  # noqa: E402


def js(status=None, suspend=None, deleting=False, env=None, replicas=(2, 1), ann=None):
    rjs = [{"name": "node", "replicas": replicas[0],
            "template": {"spec": {"template": {"spec": {"containers": [{"name": "node", "env": env or []}]}}}}},
           {"name": "init", "template": {"spec": {"template": {"spec": {"containers": [{"name": "i"}]}}}}}]
    if replicas[1] is not None:
        rjs[1]["replicas"] = replicas[1]
    meta = {"name": "a", "namespace": "n", "uid": "u", "resourceVersion": "1", "annotations": ann or {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    o = {"metadata": meta, "spec": {"replicatedJobs": rjs}}
    if suspend is not None:
        o["spec"]["suspend"] = suspend
    if status is not None:
        o["status"] = status
    return o


def counts(active, ready, terminal=None):
    st = {"replicatedJobsStatus": [{"name": "node", "active": active, "ready": ready},
                                   {"name": "init", "active": 0, "ready": 0}]}
    if terminal:
        st["terminalState"] = terminal
    return st


checks = [
    ("step-created", s.step_of(js()) == "created"),
    ("step-created-not-when-suspended", s.step_of(js(suspend=True)) is None),
    ("step-none-when-deleting", s.step_of(js(deleting=True)) is None),
    ("step-active", s.step_of(js(counts(0, 0))) == "active"),
    ("step-active-not-when-suspended", s.step_of(js(counts(0, 0), suspend=True)) is None),
    ("step-ready", s.step_of(js(counts(2, 0))) == "ready"),
    ("step-complete", s.step_of(js(counts(2, 2))) == "complete"),
    ("step-none-when-terminal", s.step_of(js(counts(2, 2, "Completed"))) is None),
    ("status-active-counts-replicas",
     [(c["name"], c["active"], c["ready"]) for c in s.status_of(js(), "active")["replicatedJobsStatus"]]
     == [("node", 2, 0), ("init", 1, 0)]),
    ("status-ready", [c["ready"] for c in s.status_of(js(), "ready")["replicatedJobsStatus"]] == [2, 1]),
    ("status-completed",
     s.status_of(js(), "complete")["terminalState"] == "Completed"
     and s.status_of(js(), "complete")["conditions"][0]["reason"] == "AllJobsCompleted"
     and [c["succeeded"] for c in s.status_of(js(), "complete")["replicatedJobsStatus"]] == [2, 1]),
    ("status-failed-with-exit-code",
     s.status_of(js(env=[{"name": "KT_SIM_EXIT_CODE", "value": "3"}]), "complete")["terminalState"] == "Failed"
     and [c["failed"] for c in s.status_of(js(env=[{"name": "KT_SIM_EXIT_CODE", "value": "3"}]),
                                             "complete")["replicatedJobsStatus"]] == [1, 0]),
    ("duration-go", s.go_duration("1m30s") == 90.0 and s.go_duration("500ms") == 0.5),
    ("duration-not-go", s.go_duration("90") is None and s.go_duration("soon") is None and s.go_duration("") is None),
]


rng = s.random.Random(1)


def delay(o, step):
    return s.delay_of(o, step, 0.1, 3.0, 3.301, rng)


checks += [
    ("delay-step", delay(js(), "active") == 0.1),
    ("delay-own-annotation", delay(js(ann={s.RUN_ANNOTATION: "90s"}), "complete") == 90.0),
    ("delay-own-env", delay(js(env=[{"name": "KT_SIM_RUN", "value": "10m"}]), "complete") == 600.0),
    ("delay-run-jitter", all(3.0 <= delay(js(), "complete") <= 3.301 for _ in range(50))),
]
bad = 0
for name, good in checks:
    print(("ok jobsim-%s" if good else "FAIL jobsim-%s: not as kwok/jobset-stages.yaml does") % name)
    bad += not good
sys.exit(1 if bad else 0)
