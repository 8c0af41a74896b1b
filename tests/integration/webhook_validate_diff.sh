#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/webhook_validate_diff.sh ENV_FILE - differential test of `ktctl validate`'s
# webhook stage against the REAL API server with kt-webhook registered (the webhook stage; the schema
# and CEL stages are crd_validate_diff.sh's).
#
# Corpus: every directory of tests/validate/ (its runtimes and each of its Trainer documents)
# and every CREATE request of tests/admission/ (its objects.yaml runtimes and request.object).
# For each document, the runtimes of its group are created for real (they must exist for the
# TrainJob validator), then the document goes through `kubectl apply --dry-run=server` and
# `ktctl validate -o json` together with those runtimes:
#  - server accepts               <=> ktctl reports no error for the document;
#  - webhook "X" denied: MSG      <=> ktctl has no decode/schema/CEL error and its webhook
#                                     elements aggregate to exactly MSG (docs/internals/upstream.md#error-text);
#  - refused before the webhook  -> not compared here (crd_validate_diff.sh's job).
# Groups whose runtimes the cluster refuses are skipped. A disagreement listed in
# tests/integration/webhook_diff_known (TAG<TAB>reason; an expected failure with an open fix)
# prints `known` instead of FAIL, and one that no longer disagrees prints FAIL `fixed: remove
# it from the list`. Prints `webhook-diff: N docs, N compared, N agree`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/webhook_lib.sh"

ktctl=${KTCTL:-$it_root/build/plain/bin/ktctl}
[ -x "$ktctl" ] || {
    bad webhook-diff "$ktctl not built"
    kt_finish
}
wh_setup
ns=$(kt_ns webhook-diff) || {
    bad webhook-diff "cannot create a namespace"
    kt_finish
}

# Corpus: $T/corpus/NNNN/{runtimes.yaml,doc.yaml,tag}; namespaces dropped (kubectl -n).
python3 - "$it_root" "$T/corpus" <<'PY'
import glob, json, os, sys, yaml
root, out = sys.argv[1], sys.argv[2]
OURS = {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"}
RT = {"TrainingRuntime", "ClusterTrainingRuntime"}

def ours(d):
    return isinstance(d, dict) and d.get("kind") in OURS and \
        d.get("apiVersion") == "trainer.kubeflow.org/v1alpha1"

def strip(d):
    if isinstance(d.get("metadata"), dict):
        d["metadata"].pop("namespace", None)
    return d

def load(p):
    try:
        with open(p) as f:
            return [strip(d) for d in yaml.safe_load_all(f) if ours(d)]
    except Exception:
        return []

groups = []
for d in sorted(glob.glob(root + "/tests/validate/*/")):
    docs = []
    for p in sorted(glob.glob(d + "*")):
        if p.endswith((".yaml", ".yml", ".json")):
            docs += load(p)
    if docs:
        groups.append(("validate:" + os.path.basename(d.rstrip("/")), docs))
for d in sorted(glob.glob(root + "/tests/admission/*/")):
    try:
        req = json.load(open(d + "request.json"))["request"]
    except Exception:
        continue
    obj = req.get("object")
    if req.get("operation") != "CREATE" or not ours(obj):
        continue
    rts = load(d + "objects.yaml") if os.path.exists(d + "objects.yaml") else []
    groups.append(("admission:" + os.path.basename(d.rstrip("/")), [r for r in rts if r["kind"] in RT] + [strip(obj)]))

n = 0
for tag, docs in groups:
    rts = [d for d in docs if d["kind"] in RT]
    for i, doc in enumerate(docs):
        c = os.path.join(out, "%04d" % n)
        os.makedirs(c)
        n += 1
        others = [r for r in rts if r is not doc]
        with open(os.path.join(c, "runtimes.yaml"), "w") as f:
            yaml.safe_dump_all(others, f, sort_keys=False)
        with open(os.path.join(c, "doc.yaml"), "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
        with open(os.path.join(c, "tag"), "w") as f:
            f.write("%s#%d %s/%s\n" % (tag, i, doc["kind"], (doc.get("metadata") or {}).get("name")))
PY

# server_verdict < kubectl output: OK | WEBHOOK<TAB>MSG | OTHER
server_verdict() {
    python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"admission webhook \"[^\"]+\" denied the request: (.*)", t, re.S)
if m:
    print("WEBHOOK\t" + m.group(1).rstrip("\n")); sys.exit()
if "(server dry run)" in t and "rror" not in t:
    print("OK"); sys.exit()
print("OTHER")'
}
# ktctl_verdict DOC < ktctl -o json: OK | WEBHOOK<TAB>aggregate | OTHER (an earlier stage)
ktctl_verdict() {
    python3 -c '
import json, sys
doc = sys.argv[1]
try:
    arr = json.load(sys.stdin)
except Exception:
    print("OTHER"); sys.exit()
errs = [p for p in arr if p.get("severity") == "error" and p.get("file") == doc]
if not errs:
    print("OK"); sys.exit()
if any(p.get("stage") != "webhook" for p in errs):
    print("OTHER"); sys.exit()
seen = []
for p in errs:
    if p["message"] not in seen:
        seen.append(p["message"])
print("WEBHOOK\t" + (seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"))' "$1"
}

# shellcheck disable=SC2154 # it_dir: set by tests/integration/lib.sh, sourced first
known_file="$it_dir/webhook_diff_known"
known_reason() { # TAG -> the reason, or nothing
    [ -f "$known_file" ] && awk -F'\t' -v t="$1" '$1 == t { print $2 }' "$known_file"
}
n=0
compared=0
agree=0
skipped=0
known=0
for c in "$T"/corpus/*/; do
    c=${c%/}
    n=$((n + 1))
    tag=$(cat "$c/tag")
    if [ -s "$c/runtimes.yaml" ] && ! kc -n "$ns" apply -f "$c/runtimes.yaml" >"$c/rt.log" 2>&1; then
        skipped=$((skipped + 1))
        kc -n "$ns" delete --ignore-not-found -f "$c/runtimes.yaml" >/dev/null 2>&1
        continue
    fi
    kc -n "$ns" apply --dry-run=server -f "$c/doc.yaml" 2>&1 | server_verdict >"$c/s"
    (cd "$c" && "$ktctl" validate -o json runtimes.yaml doc.yaml 2>/dev/null) |
        ktctl_verdict doc.yaml >"$c/k"
    [ -s "$c/runtimes.yaml" ] && kc -n "$ns" delete --ignore-not-found -f "$c/runtimes.yaml" >/dev/null 2>&1
    if [ "$(cat "$c/s")" = OTHER ]; then
        continue # refused before the webhook: crd_validate_diff.sh compares those
    fi
    compared=$((compared + 1))
    why=$(known_reason "$tag")
    if cmp -s "$c/s" "$c/k"; then
        agree=$((agree + 1))
        [ -n "$why" ] && bad "webhook-diff $tag" "fixed: remove it from $known_file"
    elif [ -n "$why" ]; then
        known=$((known + 1))
        echo "known webhook-diff $tag: $why"
    else
        bad "webhook-diff $tag" "server vs ktctl:
$(diff "$c/s" "$c/k" | sed 's/^/    /')"
    fi
done
echo "webhook-diff: $n docs, $compared compared ($skipped groups' runtimes refused), $agree agree, $known known differences"
if [ "$compared" -gt 0 ] && [ $((agree + known)) -eq "$compared" ]; then
    ok "webhook-diff ($compared docs agree or are known differences)"
fi
kt_finish
