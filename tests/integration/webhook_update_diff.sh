#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/webhook_update_diff.sh ENV_FILE - `ktctl validate --old OLD NEW` against the
# REAL API server with kt-webhook registered, for UPDATE requests (updates; creates are
# webhook_validate_diff.sh's and crd_validate_diff.sh's).
#
# Corpus: every tests/validate/upd-*/ case with files old.yaml (one TrainJob, optionally its
# JobSet with a status) and new.yaml (the same TrainJob changed), and runtime.yaml. In a fresh
# namespace the runtime and the old objects are server-side applied for real (field manager
# itest; a JobSet's status through the status subresource), then new.yaml is applied with the
# same manager as a server-side dry run, i.e. an UPDATE to exactly new.yaml. Verdicts compared:
#  - server accepts                      <=> ktctl reports no error;
#  - webhook "X" denied the request: MSG <=> ktctl's webhook-stage elements aggregate to MSG;
#  - "is invalid": the listed causes     <=> ktctl's schema/CEL-stage messages, in order.
# A case whose old objects the server refuses (e.g. an unknown field) is skipped and counted.
# Prints `update-diff: N cases, N compared, N agree`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/webhook_lib.sh"

ktctl=${KTCTL:-$it_root/build/plain/bin/ktctl}
[ -x "$ktctl" ] || {
    bad update-diff "$ktctl not built"
    kt_finish
}
wh_setup

# update_server_verdict < kubectl output: OK | WEBHOOK<TAB>MSG | INVALID<TAB>cause|cause... | OTHER
update_server_verdict() {
    python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"admission webhook \"[^\"]+\" denied the request: (.*)", t, re.S)
if m:
    print("WEBHOOK\t" + m.group(1).rstrip("\n")); sys.exit()
m = re.search(r" is invalid: (.*)", t, re.S)
if m:
    body = m.group(1).strip()
    if body.startswith("["):
        causes = [c.strip() for c in body[1:-1].split(", spec.")]
        causes = [c if i == 0 else "spec." + c for i, c in enumerate(causes)]
    elif "\n* " in "\n" + body:
        causes = [l[2:] for l in body.splitlines() if l.startswith("* ")]
    else:
        causes = [body]
    print("INVALID\t" + "|".join(causes)); sys.exit()
if "(server dry run)" in t and "rror" not in t:
    print("OK"); sys.exit()
print("OTHER\t" + t.strip().replace("\n", " "))'
}
# update_ktctl_verdict < ktctl -o json: the same shapes
update_ktctl_verdict() {
    python3 -c '
import json, sys
try:
    arr = json.load(sys.stdin)
except Exception:
    print("OTHER"); sys.exit()
errs = [p for p in arr if p.get("severity") == "error" and p.get("file") == "new.yaml"]
if not errs:
    print("OK"); sys.exit()
seen = []
for p in errs:
    if p["message"] not in seen:
        seen.append(p["message"])
if all(p.get("stage") == "webhook" for p in errs):
    print("WEBHOOK\t" + (seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"))
else:
    print("INVALID\t" + "|".join(seen))'
}

kc apply -f "$it_root/tests/validate/upd-patches-suspended/runtime.yaml" >"$T/rt.log" 2>&1 || {
    bad update-diff-runtime "$(cat "$T/rt.log")"
    kt_finish
}
n=0
compared=0
agree=0
skipped=0
for d in "$it_root"/tests/validate/upd-*/; do
    d=${d%/}
    [ -f "$d/old.yaml" ] && [ -f "$d/new.yaml" ] && [ -f "$d/runtime.yaml" ] || continue
    name=$(basename "$d")
    n=$((n + 1))
    c="$T/$name"
    mkdir -p "$c"
    ns=$(kt_ns upd) || {
        bad "update-diff $name" "cannot create a namespace"
        continue
    }
    # The cases live in namespace team-a; each runs in its own namespace on the server.
    python3 - "$d/old.yaml" "$c" "$ns" <<'PY'
import sys, yaml
docs = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
for i, x in enumerate(docs):
    x["metadata"]["namespace"] = sys.argv[3]
    status = x.pop("status", None)
    yaml.safe_dump(x, open("%s/old-%d.yaml" % (sys.argv[2], i), "w"), sort_keys=False)
    if status is not None:
        y = {k: x[k] for k in ("apiVersion", "kind")}
        y["metadata"] = {"name": x["metadata"]["name"], "namespace": sys.argv[3]}
        y["status"] = status
        yaml.safe_dump(y, open("%s/old-%d-status.yaml" % (sys.argv[2], i), "w"), sort_keys=False)
PY
    sed "s/^  namespace: team-a$/  namespace: $ns/" "$d/new.yaml" >"$c/new.yaml"
    ok=1
    for f in "$c"/old-?.yaml; do
        kc apply --server-side --field-manager=itest -f "$f" >"$c/setup.log" 2>&1 || ok=0
        s="${f%.yaml}-status.yaml"
        if [ $ok = 1 ] && [ -f "$s" ]; then
            kc apply --server-side --field-manager=itest --subresource=status -f "$s" \
                >"$c/setup.log" 2>&1 || ok=0
        fi
    done
    if [ $ok = 0 ]; then
        skipped=$((skipped + 1))
        echo "update-diff $name: skipped, the server refuses the old objects: $(head -c 300 "$c/setup.log")"
        continue
    fi
    kc apply --server-side --field-manager=itest --dry-run=server -f "$c/new.yaml" 2>&1 |
        update_server_verdict >"$c/s"
    (cd "$d" && "$ktctl" validate -o json --old old.yaml new.yaml runtime.yaml 2>/dev/null) |
        update_ktctl_verdict >"$c/k"
    compared=$((compared + 1))
    if cmp -s "$c/s" "$c/k"; then
        agree=$((agree + 1))
    else
        bad "update-diff $name" "server vs ktctl:
$(diff "$c/s" "$c/k" | sed 's/^/    /')"
    fi
done
kc delete -f "$it_root/tests/validate/upd-patches-suspended/runtime.yaml" --ignore-not-found >/dev/null 2>&1
echo "update-diff: $n cases, $compared compared ($skipped skipped), $agree agree"
if [ "$compared" -gt 0 ] && [ "$agree" -eq "$compared" ]; then
    ok "update-diff ($compared update cases agree with the real API server)"
fi
kt_finish
