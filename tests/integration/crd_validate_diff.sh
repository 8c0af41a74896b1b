#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_validate_diff.sh ENV_FILE - differential test of `ktctl validate`
# against the real API server (ktctl validate's offline schema and CEL stage). One corpus: every object of tests/validate/*/,
# tests/crd/cases/*.yaml (create cases), tests/integration/crd/*/input.yaml, plus systematic
# mutations of valid objects (deploy/runtimes, tests/integration/accept): every scalar leaf
# set to a value of the wrong type, to -1 / 0 / "" / a 300-character string, every object
# given an unknown field, every member deleted, every list's first item duplicated. Each document goes through
# `kubectl apply --dry-run=server` and `ktctl validate -o json`; for the API server's stages
# (strict decoding, schema, CEL: the harness registers no webhook) the verdict and the SET of
# aggregate elements must agree exactly (the API server's order of schema errors follows Go
# map iteration, ktctl's follows the document). ktctl's webhook-stage problems are ignored
# here (the webhook issue extends this test). KT_DIFF_MAX caps the mutations (default 600).
# Prints one ok/FAIL line per disagreement class and a summary `diff: N docs, N agree`.
. "$(dirname "$0")/lib.sh"

ktctl=${KTCTL:-$it_root/build/plain/bin/ktctl}
if [ ! -x "$ktctl" ]; then
    bad validate-diff "$ktctl not built"
    kt_finish
fi
command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null || {
    bad validate-diff "python3 with PyYAML is needed"
    kt_finish
}
ns=$(kt_ns validate-diff) || {
    bad validate-diff "cannot create a namespace"
    kt_finish
}

python3 - "$it_root" "$T/corpus" "${KT_DIFF_MAX:-600}" <<'PY'
import copy, glob, os, sys, yaml
root, out, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
OURS = {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"}
docs = []

def load(path, first_only=False):
    try:
        with open(path) as f:
            ds = [d for d in yaml.safe_load_all(f)]
    except Exception:
        return []
    ds = [d for d in ds if isinstance(d, dict) and d.get("kind") in OURS
          and d.get("apiVersion") == "trainer.kubeflow.org/v1alpha1"]
    return ds[:1] if first_only else ds

for p in sorted(glob.glob(root + "/tests/validate/*/*")):
    if p.endswith((".yaml", ".yml", ".json")):
        docs += [("golden:" + os.path.relpath(p, root), d) for d in load(p)]
for p in sorted(glob.glob(root + "/tests/crd/cases/*.yaml")):
    # every document as a create (status is reset on create, as ktctl drops it)
    docs += [("crdcase:" + os.path.basename(p), d) for d in load(p)]
for p in sorted(glob.glob(root + "/tests/integration/crd/*/input.yaml")):
    if not os.path.exists(os.path.join(os.path.dirname(p), "patch.json")):
        docs += [("itcrd:" + p.split("/")[-2], d) for d in load(p, True)]

bases = []
for p in sorted(glob.glob(root + "/deploy/runtimes/*.yaml") +
                glob.glob(root + "/tests/integration/accept/*.yaml")):
    bases += [(os.path.basename(p), d) for d in load(p)]

def leaves(node, path=()):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        yield path, node
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))
    else:
        yield path, node

def setp(obj, path, val):
    o = copy.deepcopy(obj)
    cur = o
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = val
    return o

muts = []
for name, base in bases:
    for path, v in leaves(base):
        if not path or path[0] in ("apiVersion", "kind") or path[:2] == ("metadata", "name"):
            continue
        tag = name + ":" + ".".join(map(str, path))
        if len(path) > 1:
            parent = base
            for k in path[:-1]:
                parent = parent[k]
            if isinstance(parent, dict):
                o = copy.deepcopy(base)
                cur = o
                for k in path[:-1]:
                    cur = cur[k]
                del cur[path[-1]]
                muts.append((tag + ":del", o))
        if isinstance(v, dict):
            muts.append((tag + ":unknown", setp(base, path + ("zzUnknown",), 1)))
            continue
        if isinstance(v, list):
            if v:
                muts.append((tag + ":dup", setp(base, path, v + [copy.deepcopy(v[0])])))
            muts.append((tag + ":scalar", setp(base, path, "x")))
            continue
        if isinstance(v, bool):
            muts.append((tag + ":str", setp(base, path, "yes")))
        elif isinstance(v, int):
            for nv in ("3", -1, 0, 1.5):
                muts.append((tag + ":%r" % (nv,), setp(base, path, nv)))
        elif isinstance(v, str):
            for nv in (7, "", "x" * 300, {"a": 1}):
                muts.append((tag + ":%s" % (type(nv).__name__ + str(len(str(nv)))), setp(base, path, nv)))

# deterministic spread when capped
if len(muts) > cap:
    step = len(muts) / cap
    muts = [muts[int(i * step)] for i in range(cap)]
docs += [("mut:" + t, d) for t, d in muts]

with open(os.path.join(out, "index"), "w") as idx:
    for i, (tag, d) in enumerate(docs):
        d = copy.deepcopy(d)
        if isinstance(d.get("metadata"), dict):
            d["metadata"].pop("namespace", None)
        fn = os.path.join(out, "%04d.yaml" % i)
        with open(fn, "w") as f:
            yaml.safe_dump(d, f, sort_keys=False)
        idx.write("%04d\t%s\n" % (i, tag))
PY

# A dry run against an existing object is an UPDATE (transition rules, validation ratcheting),
# so cluster-scoped runtimes another test left behind under a corpus name would skew the
# verdict: remove them first.
names=$(python3 - "$T/corpus" <<'PY'
import glob, sys, yaml
seen = set()
for f in glob.glob(sys.argv[1] + "/*.yaml"):
    try:
        for d in yaml.safe_load_all(open(f)):
            if isinstance(d, dict) and d.get("kind") == "ClusterTrainingRuntime":
                n = (d.get("metadata") or {}).get("name")
                if isinstance(n, str) and n:
                    seen.add(n)
    except Exception:
        pass
print(" ".join(sorted(seen)))
PY
)
if [ -n "$names" ]; then
    # shellcheck disable=SC2086
    kc delete clustertrainingruntimes $names --ignore-not-found >/dev/null 2>&1
fi

# Each document: `kubectl apply --dry-run=server` and ktctl, both normalised to their elements
# (or "OK"), one per line, sorted. KT_DIFF_JOBS documents at a time (default 4: each is two
# short-lived processes, mostly waiting; the verdicts do not depend on the order).
python3 - "$T/corpus" "${KT_DIFF_JOBS:-4}" "$ktctl" "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" \
    --cache-dir "$KT_CLUSTER_DIR/kubectl-cache" -n "$ns" >"$T/diff.out" <<'PY'
import concurrent.futures, difflib, json, os, re, subprocess, sys
corpus, jobs, ktctl, kubectl = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]

def server_elems(t):
    if "(server dry run)" in t and "rror" not in t:
        return ["OK"]
    m = re.search(r"strict decoding error: (.*)", t)
    if m:
        return ["strict decoding error: " + e
                for e in re.findall(r"unknown field \"[^\"]*\"", m.group(1))]
    m = re.search(r"unable to decode .*?: (json: cannot unmarshal .*)", t)
    if m:
        return [m.group(1).strip()]
    m = re.search(r" is invalid: (.*)", t, re.S)
    if not m:
        return ["OTHER: " + t.strip().replace("\n", " ")]
    body = m.group(1)
    if body.startswith("\n"):
        items = [l[2:] for l in body.split("\n") if l.startswith("* ")]
    else:
        items = [body.strip()]
    return sorted(set(items))

def ktctl_elems(t):
    try:
        arr = json.loads(t)
    except Exception:
        return ["OTHER: " + t.strip()]
    es = sorted(set(p["message"] for p in arr
                    if p.get("severity") == "error" and p.get("stage") in ("decode", "schema", "cel")))
    return es or ["OK"]

# The harness registers no webhook, so ktctl models a cluster without Trainer's defaulter:
# no Go decoding before the schema (webhook_validate_diff.sh compares that with webhooks).
env = dict(os.environ, KT_VALIDATE_NO_DEFAULTER="1")

def one(entry):
    ident, tag = entry
    f = os.path.join(corpus, ident + ".yaml")
    s = subprocess.run(kubectl + ["apply", "--dry-run=server", "-f", f], capture_output=True, text=True)
    k = subprocess.run([ktctl, "validate", "-o", "json", f], capture_output=True, text=True, env=env)
    return tag, server_elems(s.stdout + s.stderr), ktctl_elems(k.stdout)

entries = [l.rstrip("\n").split("\t", 1) for l in open(os.path.join(corpus, "index"))]
agree = accepted = 0
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    for tag, se, ke in pool.map(one, entries):
        if se == ke:
            agree += 1
            accepted += se == ["OK"]
            continue
        d = difflib.unified_diff(se, ke, "server", "ktctl", lineterm="", n=0)
        print("FAIL diff %s: server vs ktctl:\n%s" % (tag, "\n".join("    " + l for l in d)))
print("diff: %d docs, %d agree (%d accepted and %d rejected by both)"
      % (len(entries), agree, accepted, agree - accepted))
PY
cat "$T/diff.out"
n=$(sed -n 's/^diff: \([0-9]*\) docs, .*/\1/p' "$T/diff.out")
agree=$(sed -n 's/^diff: [0-9]* docs, \([0-9]*\) agree.*/\1/p' "$T/diff.out")
fail=$((fail + $(grep -c '^FAIL diff ' "$T/diff.out")))
if [ -z "$n" ]; then
    bad validate-diff "the comparison did not finish"
elif [ "$n" -gt 0 ] && [ "$agree" -eq "$n" ]; then
    ok "validate-diff ($n docs agree)"
fi
kt_finish
