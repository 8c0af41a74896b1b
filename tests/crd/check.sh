#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/crd/check.sh [--offline] [--kubeconfig FILE] - checks of our CRDs (api/) and shipped
# ClusterTrainingRuntimes (deploy/runtimes/).
#
# Offline (a few seconds, needs python3 + PyYAML, else only a kustomize parse):
#   every file parses, CRD shells and structural-schema basics (tests/crd/lint.py), the
#   committed CRDs equal the generator's output (scripts/gen/gen_crds.py), and the linter catches
#   deliberately broken copies.
# On a real API server (unless --offline): with --kubeconfig FILE that cluster is used (its
#   admin must be allowed to create CRDs); otherwise, when tests/cluster/up.sh and the cached
#   control-plane binaries exist, a private one is started and stopped again. The CRDs are
#   applied and must become Established, the runtimes are applied as a server-side dry run
#   and must survive pruning unchanged (apart from defaults), and every tests/crd/cases/*.yaml
#   is sent to the API server:
#     NAME.yaml          created with a server-side dry run;
#     NAME.update.yaml   document 1 created for real, document 2 applied over it (dry run),
#                        then document 1 deleted;
#     NAME.status.yaml   like update, but document 2 goes to the status subresource.
#   A case starts with `# expect: ok` or `# expect: TEXT` (TEXT must appear in the API
#   server's answer), and may add `# check: {.json.path}=VALUE` lines for accepted objects.
# Prints one line per check and a final `N passed, N failed`; exits 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
offline=0
kubeconfig=""
while [ $# -gt 0 ]; do
    case $1 in
    --offline) offline=1 ;;
    --kubeconfig)
        kubeconfig=$2
        shift
        ;;
    *)
        echo "usage: $0 [--offline] [--kubeconfig FILE]" >&2
        exit 2
        ;;
    esac
    shift
done

. "$root/tests/lib.sh" # T, ok, bad, kt_cleanup, kt_finish

have_py=0
if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
    have_py=1
fi

# Count the ok/FAIL lines of a sub-check (`FAIL NAME: why`) into pass/fail.
tally() {
    local line
    while IFS= read -r line; do
        case $line in
        ok\ *) ok "${line#ok }" ;;
        FAIL\ *)
            line=${line#FAIL }
            bad "${line%%: *}" "${line#*: }"
            ;;
        *) echo "$line" ;;
        esac
    done
}

# ---------------------------------------------------------------- offline
offline_checks() {
    if [ "$have_py" -ne 1 ]; then
        local k
        k=$(command -v kubectl || true)
        for d in api deploy/runtimes; do
            if [ -n "$k" ] && "$k" kustomize "$root/$d" >/dev/null 2>"$T/kz.err"; then
                ok "parse $d (kubectl kustomize; no python3+PyYAML, schema lint skipped)"
            else
                bad "parse $d" "$(head -c 300 "$T/kz.err" 2>/dev/null)"
            fi
        done
        return
    fi
    tally < <(python3 "$here/lint.py" "$root")
    if python3 "$root/scripts/gen/gen_crds.py" --check "$root" >"$T/gen.out" 2>&1; then
        ok "api/ CRDs are what scripts/gen/gen_crds.py writes"
    else
        bad "api/ CRDs are what scripts/gen/gen_crds.py writes" "they differ: $(tr '\n' ' ' <"$T/gen.out")"
    fi
    lint_negatives
}

# The linter must notice broken copies (negative cases of the checker itself).
lint_negatives() {
    local name script
    while IFS='|' read -r name script; do
        rm -rf "$T/neg"
        mkdir -p "$T/neg/api" "$T/neg/deploy/runtimes"
        cp "$root"/api/*.yaml "$T/neg/api/"
        cp "$root"/deploy/runtimes/*.yaml "$T/neg/deploy/runtimes/"
        (cd "$T/neg" && python3 -c "$script")
        if python3 "$here/lint.py" "$T/neg" >"$T/neg.out" 2>&1; then
            bad "linter rejects $name" "the linter accepts it"
        else
            ok "linter rejects $name"
        fi
    done <<'EOF_NEG'
a node without type|p='api/trainer.kubeflow.org_trainjobs.yaml';s=open(p).read();open(p,'w').write(s.replace('type: boolean\n','',1))
a list-map key that is not required|p='api/trainer.kubeflow.org_trainjobs.yaml';s=open(p).read();open(p,'w').write(s.replace('required:\n                  - manager\n','',1))
a runtime without its framework label|p='deploy/runtimes/jax-distributed.yaml';s=open(p).read();open(p,'w').write(s.replace('trainer.kubeflow.org/framework: jax','x: y'))
an image without a tag|p='deploy/runtimes/torch-distributed.yaml';s=open(p).read();open(p,'w').write(s.replace(':2.13.0-cuda13.0-cudnn9-runtime',''))
a runtime missing from the kustomization|p='deploy/runtimes/kustomization.yaml';s=open(p).read();open(p,'w').write(s.replace('  - mlx-distributed.yaml\n',''))
a YAML syntax error|p='deploy/runtimes/mlx-distributed.yaml';open(p,'a').write('  bad: [\n')
EOF_NEG
}

# ---------------------------------------------------------------- cluster
K=""
setup_cluster() {
    if [ -n "$kubeconfig" ]; then
        local bin
        bin=$(ls -d "$HOME"/.cache/kt/cluster/*/kubectl 2>/dev/null | sed -n 1p)
        [ -n "$bin" ] || bin=$(command -v kubectl)
        K="$bin --kubeconfig $kubeconfig"
        return 0
    fi
    if [ ! -x "$root/tests/cluster/up.sh" ] ||
        ! ls "$HOME"/.cache/kt/cluster/*/kube-apiserver >/dev/null 2>&1; then
        echo "cluster checks skipped: no tests/cluster/up.sh or no cached kube-apiserver"
        return 1
    fi
    cluster_dir=$T/cluster
    kt_cleanup "'$root/tests/cluster/down.sh' '$cluster_dir'"
    if ! "$root/tests/cluster/up.sh" "$cluster_dir" >"$T/up.log" 2>&1; then
        bad "tests/cluster/up.sh" "$(tail -5 "$T/up.log" | tr '\n' ' ')"
        return 1
    fi
    # shellcheck disable=SC1091
    . "$cluster_dir/env"
    K="$KT_KUBECTL --kubeconfig $KT_ADMIN_KUBECONFIG"
}

install_crds() {
    if $K apply --server-side --force-conflicts -k "$root/api" >"$T/crd.out" 2>&1 &&
        $K wait --for condition=Established --timeout=30s \
            crd/trainjobs.trainer.kubeflow.org crd/trainingruntimes.trainer.kubeflow.org \
            crd/clustertrainingruntimes.trainer.kubeflow.org >>"$T/crd.out" 2>&1; then
        ok "CRDs accepted by the API server (CEL cost budget included) and Established"
    else
        bad "CRD install" "$(tr '\n' ' ' <"$T/crd.out" | { head -c 2000; cat >/dev/null; })"
        return 1
    fi
    local cond
    cond=$($K get crd trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org \
        clustertrainingruntimes.trainer.kubeflow.org -o \
        jsonpath='{range .items[*]}{range .status.conditions[?(@.type=="NonStructuralSchema")]}{.message}{end}{end}')
    if [ -z "$cond" ]; then
        ok "CRD schemas are structural"
    else
        bad "CRD schemas are structural" "NonStructuralSchema: $cond"
    fi
}

apply_runtimes() {
    $K kustomize "$root/deploy/runtimes" >"$T/rt.in.yaml" 2>"$T/rt.err" || {
        bad "kustomize deploy/runtimes" "$(cat "$T/rt.err")"
        return
    }
    if $K apply --server-side --dry-run=server -o json -f "$T/rt.in.yaml" >"$T/rt.out.json" 2>"$T/rt.err"; then
        ok "shipped runtimes accepted (server-side dry run)"
    else
        bad "shipped runtimes accepted (server-side dry run)" "$(head -c 2000 "$T/rt.err")"
        return
    fi
    [ "$have_py" -eq 1 ] || return
    tally < <(python3 - "$T/rt.in.yaml" "$T/rt.out.json" <<'EOF_PY'

import json, sys, yaml
sent = {d["metadata"]["name"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
got = json.load(open(sys.argv[2]))
items = got.get("items", [got])
def missing(a, b, path):
    """Paths of a (what we sent) that b (what the server kept) lacks or changes."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return [path]
        return [p for k in a for p in missing(a[k], b.get(k, missing), path + "." + k)]
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return [path]
        return [p for i, x in enumerate(a) for p in missing(x, b[i], "%s[%d]" % (path, i))]
    return [] if a == b else [path]
for it in items:
    n = it["metadata"]["name"]
    errs = missing(sent.get(n, {}), it, "")
    lab = it["metadata"].get("labels", {}).get("trainer.kubeflow.org/webhook-validation")
    if lab != "disabled":
        errs.append("webhook-validation label")
    for j in it["spec"]["template"]["spec"]["replicatedJobs"]:
        if j.get("replicas") != 1 or j.get("groupName") != "default":
            errs.append("%s: JobSet defaults not applied" % j["name"])
    print(("FAIL runtime %s kept as written + defaults: %s" % (n, errs)) if errs else
          "ok runtime %s kept as written (nothing pruned) + JobSet defaults" % n)
print("ok all runtimes answered" if len(items) == len(sent) else "FAIL %d of %d runtimes" % (len(items), len(sent)))
EOF_PY
    )
}

# split FILE into $T/doc1.yaml and $T/doc2.yaml at the first '---' line
split_docs() {
    awk -v a="$T/doc1.yaml" -v b="$T/doc2.yaml" \
        'BEGIN{o=a} /^---$/ && o==a {o=b; next} {print > o}' "$1"
}

jsonpath_checks() { # CASE JSONFILE -> prints failed checks
    [ "$have_py" -eq 1 ] || return 0
    python3 - "$1" "$2" <<'EOF_PY'
import json, re, sys
obj = json.load(open(sys.argv[2]))
for line in open(sys.argv[1]):
    m = re.match(r"# check: \{(.*)\}=(.*)$", line.rstrip("\n"))
    if not m:
        continue
    v = obj
    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", m.group(1).replace("\\.", "\0")):
        key, idx = part
        try:
            v = v[int(idx)] if idx else v[key.replace("\0", ".")]
        except (KeyError, IndexError, TypeError):
            v = "<absent>"
            break
    s = json.dumps(v) if not isinstance(v, str) else v
    if s != m.group(2):
        print("%s is %s, want %s" % (m.group(1), s, m.group(2)))
EOF_PY
}

crd_offline_case() {
    local f=$1 name exp rc out
    name=$(basename "$f")
    exp=$(sed -n 's/^# expect: //p' "$f" | sed -n 1p)
    out="$T/case.out"
    case $name in
    *.update.yaml | *.status.yaml)
        split_docs "$f"
        $K delete -f "$T/doc1.yaml" --ignore-not-found --wait=false >/dev/null 2>&1
        if ! $K apply --server-side -f "$T/doc1.yaml" >"$out" 2>&1; then
            bad "$name" "first document refused: $(head -c 500 "$out")"
            return
        fi
        if [ "${name%.status.yaml}" != "$name" ]; then
            $K apply --server-side --subresource=status --dry-run=server -o json \
                -f "$T/doc2.yaml" >"$out" 2>&1
        else
            $K apply --server-side --force-conflicts --dry-run=server -o json \
                -f "$T/doc2.yaml" >"$out" 2>&1
        fi
        rc=$?
        $K delete -f "$T/doc1.yaml" --ignore-not-found --wait=false >/dev/null 2>&1
        ;;
    *)
        $K create --dry-run=server -o json -f "$f" >"$out" 2>&1
        rc=$?
        ;;
    esac
    if [ "$exp" = ok ]; then
        if [ $rc -ne 0 ]; then
            bad "$name" "refused: $(head -c 800 "$out")"
            return
        fi
        local why
        why=$(jsonpath_checks "$f" "$out")
        if [ -n "$why" ]; then
            bad "$name" "$why"
        else
            ok "$name: accepted"
        fi
    elif [ $rc -eq 0 ]; then
        bad "$name" "accepted, want: $exp"
    elif grep -qF -- "$exp" "$out"; then
        ok "$name: $exp"
    else
        bad "$name" "want '$exp', got: $(head -c 800 "$out")"
    fi
}

t0=$(date +%s)
offline_checks
if [ "$offline" -eq 0 ] && setup_cluster; then
    if install_crds; then
        apply_runtimes
        for f in "$here"/cases/*.yaml; do
            crd_offline_case "$f"
        done
    fi
fi
echo "crd checks: $(($(date +%s) - t0))s"
kt_finish
