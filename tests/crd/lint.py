#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Offline checks of api/*.yaml and deploy/runtimes/*.yaml (run by tests/crd/check.sh).

Prints one line per check, `ok NAME` or `FAIL NAME: why`, and exits 1 if any failed.
Checks: YAML parses; CRD shell (group, names, scope, printer columns, status subresource);
structural-schema basics (every node typed unless int-or-string or preserve-unknown-fields,
arrays have items, list-map keys exist and are required or defaulted, required names exist,
defaults satisfy enums, every CEL rule has a message, every field has a description);
the shipped runtimes' docs/internals/upstream.md#shipped-runtimes facts and the kustomizations list every file.
"""
import glob
import os
import re
import sys

import yaml

results = []


def check(name, errors):
    results.append((name, errors))


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def walk(schema, path, errs, in_root=True, need_desc=True):
    """Structural-schema basics for one node and its children."""
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    typ = schema.get("type")
    if not typ and not int_or_string and not preserve:
        errs.append("%s: no type" % path)
    if int_or_string and "anyOf" not in schema:
        errs.append("%s: int-or-string without anyOf" % path)
    for k in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(k, []):
            if "type" in sub and not int_or_string:
                errs.append("%s: %s branch declares a type" % (path, k))
    if need_desc and not in_root and path.split(".")[-1] != "metadata" and \
            not schema.get("description"):
        errs.append("%s: no description" % path)
    for rule in schema.get("x-kubernetes-validations", []):
        if not rule.get("rule") or not rule.get("message"):
            errs.append("%s: CEL rule without rule or message" % path)
    if "enum" in schema and "default" in schema and schema["default"] not in schema["enum"]:
        errs.append("%s: default %r not in enum" % (path, schema["default"]))
    props = schema.get("properties", {})
    for r in schema.get("required", []):
        if r not in props and not preserve:
            errs.append("%s: required %s is not a property" % (path, r))
    if typ == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            errs.append("%s: array without items" % path)
            return
        lt = schema.get("x-kubernetes-list-type")
        if lt == "map":
            keys = schema.get("x-kubernetes-list-map-keys") or []
            if not keys:
                errs.append("%s: list-type map without keys" % path)
            for k in keys:
                kp = items.get("properties", {}).get(k)
                if kp is None:
                    errs.append("%s: map key %s is not an item property" % (path, k))
                elif k not in items.get("required", []) and "default" not in kp:
                    errs.append("%s: map key %s neither required nor defaulted" % (path, k))
        if lt == "set" and items.get("type") not in ("string", "integer", "number", "boolean"):
            errs.append("%s: list-type set of non-scalars" % path)
        walk(items, path + "[]", errs, False)
    for k, sub in props.items():
        walk(sub, path + "." + k, errs, False)
    ap = schema.get("additionalProperties")
    if isinstance(ap, dict):
        if props:
            errs.append("%s: both properties and additionalProperties" % path)
        walk(ap, path + "{}", errs, False, False)


EXPECT_CRDS = {
    "trainjobs": ("TrainJob", "Namespaced", True),
    "trainingruntimes": ("TrainingRuntime", "Namespaced", False),
    "clustertrainingruntimes": ("ClusterTrainingRuntime", "Cluster", False),
}


def check_crd(path, doc):
    errs = []
    spec = doc.get("spec", {})
    plural = spec.get("names", {}).get("plural", "")
    want = EXPECT_CRDS.get(plural)
    if doc.get("kind") != "CustomResourceDefinition" or want is None:
        return ["not one of our CRDs"]
    kind, scope, has_status = want
    names = spec["names"]
    if (names.get("kind"), names.get("listKind"), names.get("singular")) != (
            kind, kind + "List", plural[:-1]):
        errs.append("names %r" % names)
    if doc["metadata"]["name"] != plural + ".trainer.kubeflow.org":
        errs.append("metadata.name")
    if spec.get("group") != "trainer.kubeflow.org" or spec.get("scope") != scope:
        errs.append("group/scope")
    if os.path.basename(path) != "trainer.kubeflow.org_%s.yaml" % plural:
        errs.append("file name")
    vers = spec.get("versions", [])
    if len(vers) != 1 or vers[0].get("name") != "v1alpha1" or not vers[0].get("storage"):
        return errs + ["versions"]
    v = vers[0]
    root = v["schema"]["openAPIV3Schema"]
    if has_status:
        if v.get("subresources") != {"status": {}}:
            errs.append("status subresource")
        cols = [(c["name"], c["type"], c["jsonPath"]) for c in v.get("additionalPrinterColumns", [])]
        if cols != [("State", "string", '.status.conditions[?(@.status=="True")].type'),
                    ("Suspended", "boolean", ".spec.suspend"),
                    ("Age", "date", ".metadata.creationTimestamp")]:
            errs.append("printer columns %r" % cols)
        if root["properties"]["status"].get("minProperties") != 1:
            errs.append("status minProperties")
    else:
        if "subresources" in v or "status" in root.get("properties", {}):
            errs.append("runtimes have no status")
        if root["properties"]["spec"].get("minProperties") != 1:
            errs.append("spec minProperties")
    if root.get("properties", {}).get("metadata") != {"type": "object"}:
        errs.append("root metadata must be just type: object")
    walk(root, plural, errs)
    return errs


RUNTIMES = {
    "torch-distributed": "torch", "deepspeed-distributed": "deepspeed",
    "mlx-distributed": "mlx", "jax-distributed": "jax", "xgboost-distributed": "xgboost",
    "torchtune-llama3.2-1b": "torchtune", "torchtune-llama3.2-3b": "torchtune",
    "torchtune-qwen2.5-1.5b": "torchtune",
}
ANCESTORS = {"dataset-initializer", "model-initializer", "trainer"}


def containers(rjob):
    return rjob["template"]["spec"]["template"]["spec"]["containers"]


def check_runtime(path, doc):
    errs = []
    if doc.get("apiVersion") != "trainer.kubeflow.org/v1alpha1" or \
            doc.get("kind") != "ClusterTrainingRuntime":
        return ["not a trainer.kubeflow.org/v1alpha1 ClusterTrainingRuntime"]
    name = doc["metadata"]["name"]
    if os.path.basename(path) != name + ".yaml":
        errs.append("file name should be %s.yaml" % name)
    fw = RUNTIMES.get(name)
    if fw is None:
        return errs + ["unexpected runtime %s" % name]
    if doc["metadata"].get("labels", {}).get("trainer.kubeflow.org/framework") != fw:
        errs.append("framework label")
    spec = doc["spec"]
    if spec.get("mlPolicy", {}).get("numNodes") != 1:
        errs.append("mlPolicy.numNodes")
    rjobs = spec["template"]["spec"]["replicatedJobs"]
    names = [j["name"] for j in rjobs]
    trainers = []
    for j in rjobs:
        anc = j["template"].get("metadata", {}).get("labels", {}).get(
            "trainer.kubeflow.org/trainjob-ancestor-step")
        if anc is not None and anc not in ANCESTORS:
            errs.append("%s: ancestor %s" % (j["name"], anc))
        if anc == "trainer":
            trainers.append(j["name"])
            if "node" not in [c["name"] for c in containers(j)]:
                errs.append("%s: trainer job without node container" % j["name"])
        for c in containers(j):
            img = c.get("image", "")
            if not re.search(r":[A-Za-z0-9._-]+$", img.split("/")[-1]):
                errs.append("%s: image %r has no tag" % (c["name"], img))
        for dep in j.get("dependsOn", []):
            if dep["name"] not in names:
                errs.append("%s depends on unknown %s" % (j["name"], dep["name"]))
    if len(trainers) != 1:
        errs.append("exactly one trainer-ancestor job expected, got %r" % trainers)
    if "mpi" in spec["mlPolicy"]:
        if names != ["node", "launcher"] or trainers != ["launcher"]:
            errs.append("MPI layout")
        if spec["template"]["spec"].get("network", {}).get("publishNotReadyAddresses") is not True:
            errs.append("publishNotReadyAddresses")
    if fw == "torchtune":
        if names != ["dataset-initializer", "model-initializer", "node"]:
            errs.append("torchtune layout")
        vcp = spec["template"]["spec"].get("volumeClaimPolicies", [])
        if not vcp or vcp[0]["templates"][0]["metadata"]["name"] != "initializer":
            errs.append("initializer volume claim")
        for j in rjobs:
            for c in containers(j):
                if {"name": "initializer", "mountPath": "/workspace"} not in c.get(
                        "volumeMounts", []):
                    errs.append("%s: /workspace mount" % c["name"])
    return errs


def check_kustomization(dirpath, want_files):
    errs = []
    k = load(os.path.join(dirpath, "kustomization.yaml"))[0]
    listed = set(k.get("resources", []))
    for f in want_files:
        if os.path.basename(f) not in listed:
            errs.append("%s not listed" % os.path.basename(f))
    for r in listed:
        if not os.path.exists(os.path.join(dirpath, r)):
            errs.append("%s listed but missing" % r)
    return errs, k


def main(root):
    crd_files = sorted(glob.glob(os.path.join(root, "api", "trainer.kubeflow.org_*.yaml")))
    rt_files = sorted(f for f in glob.glob(os.path.join(root, "deploy", "runtimes", "*.yaml"))
                      if not f.endswith("kustomization.yaml"))
    all_files = sorted(glob.glob(os.path.join(root, "api", "*.yaml")) +
                       glob.glob(os.path.join(root, "deploy", "runtimes", "*.yaml")))
    docs = {}
    for f in all_files:
        try:
            docs[f] = load(f)
            check("parse %s" % os.path.relpath(f, root), [])
        except yaml.YAMLError as e:
            check("parse %s" % os.path.relpath(f, root), [str(e).replace("\n", " ")])
    if len(crd_files) != 3:
        check("three CRD files", ["found %d" % len(crd_files)])
    for f in crd_files:
        if f in docs:
            check("crd %s" % os.path.basename(f),
                  check_crd(f, docs[f][0]) if len(docs[f]) == 1 else ["one document per file"])
    seen = set()
    for f in rt_files:
        if f in docs:
            errs = check_runtime(f, docs[f][0]) if len(docs[f]) == 1 else ["one document"]
            seen.add(docs[f][0].get("metadata", {}).get("name"))
            check("runtime %s" % os.path.basename(f), errs)
    missing = sorted(set(RUNTIMES) - seen)
    check("all upstream shipped runtimes present (docs/internals/upstream.md#shipped-runtimes)", ["missing %s" % m for m in missing])
    errs, _ = check_kustomization(os.path.join(root, "api"), crd_files)
    check("api/kustomization.yaml lists the CRDs", errs)
    errs, k = check_kustomization(os.path.join(root, "deploy", "runtimes"), rt_files)
    want = [{"pairs": {"trainer.kubeflow.org/webhook-validation": "disabled"},
             "includeSelectors": False}]
    if k.get("labels") != want:
        errs.append("labels must add webhook-validation=disabled without selectors")
    check("deploy/runtimes/kustomization.yaml", errs)
    failed = 0
    for name, errs in results:
        if errs:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(errs[:10])))
        else:
            print("ok %s" % name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
