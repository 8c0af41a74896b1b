#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/helm/run.sh - the Helm chart deploy/helm/kt, with helm built from its Go module
# (tests/helm/build-helm.sh, pinned, cached outside the repo) and the real control plane
# (tests/cluster/up.sh; no kubelet, so the two daemons run here as processes, as their own
# ServiceAccounts, with the Configuration the chart installed):
#  1. `helm lint --strict`; `helm template` renders the same webhooks, RBAC names, Service and
#     Configuration as the kustomize install (deploy/), and the values switch what they should
#     (crds/ only with --include-crds, runtimes.*, featureGates.TrainJobStatus, commonLabels,
#     image, replicas, watchNamespaces = deploy/namespaced's RBAC and Configuration);
#     `ktctl validate` accepts the rendered runtimes;
#  2. server-side dry-run of the rendered chart on the API server; a bad value is refused;
#  3. `helm install` (CRDs from the chart's crds/, the torch-distributed runtime);
#     kt-reconciler's leader fills the chart's certificate Secret and injects caBundle;
#     while webhook.url points nowhere, TrainJobs are refused (failurePolicy Fail);
#  4. `helm upgrade --reuse-values --set webhook.url=...` to the running kt-webhook keeps the
#     certificate Secret's data; the example TrainJob is admitted and reconciled into its
#     JobSet; a TrainJob naming a missing runtime is denied by the webhook;
#  5. `helm uninstall` removes the Deployments and the runtime, keeps the certificate Secret
#     and the CRDs.
# Not a tests/*/tier.sh on purpose: tests/tiers.sh (make unit) runs those, and this one needs
# Go and a cluster. Prints `ok NAME` / `FAIL NAME: why` lines and `N passed, N failed`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
chart="$root/deploy/helm/kt"
B=${KT_BUILD_DIR:-$root/build/plain}
. "$root/tests/lib.sh" # T, ok, bad, check, kt_cleanup, kt_daemon, kt_poll, kt_finish
D="$T/cluster"
trap 'exit 130' INT TERM
for b in ktctl kt-webhook kt-reconciler; do
    [ -x "$B/bin/$b" ] || {
        bad helm-binaries "$B/bin/$b not built (make)"
        kt_finish
    }
done
HELM=$("$here/build-helm.sh" | tail -n 1) || {
    bad helm-build "tests/helm/build-helm.sh failed"
    kt_finish
}
ok "helm-built ($("$HELM" version --template '{{.Version}}'))"
# hc ARGS... - helm, without its warning about the chart's symbolic links.
hc() { "$HELM" "$@" 2>&1 | grep -v 'found symbolic link in path'; return "${PIPESTATUS[0]}"; }

# ---- 1. lint and template ----------------------------------------------------------------
check helm-lint-strict hc lint --strict "$chart"
render() { # render FILE [ARGS...]
    local f=$1
    shift
    hc template kt "$chart" -n kubeflow-system "$@" >"$f"
}
check helm-template-default render "$T/default.yaml" --include-crds
check helm-template-all render "$T/all.yaml" --set runtimes.defaultEnabled=true \
    --set manager.config.featureGates.TrainJobStatus=true --set commonLabels.team=ml \
    --set image.registry=registry.example --set image.tag=v9 --set webhook.replicas=3 \
    --set manager.replicas=2
tojson() { python3 -c 'import json,sys,yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))' "$1"; }
tojson "$T/default.yaml" >"$T/default.json" && tojson "$T/all.yaml" >"$T/all.json" || {
    bad helm-template-yaml "the rendered chart is not YAML"
    kt_finish
}
jq_true() { # jq_true NAME FILE JQ - the jq expression must print true
    if [ "$(jq -r "$3" "$2" 2>&1)" = true ]; then ok "$1"; else bad "$1" "$(jq -c "$3" "$2" 2>&1 | { head -c 300; cat >/dev/null; })"; fi
}
kinds() { jq -r '[.[] | "\(.kind)/\(.metadata.name)"] | sort | .[]' "$1"; }
jq_true helm-default-crds "$T/default.json" '[.[] | select(.kind == "CustomResourceDefinition") | .metadata.name] | sort == ["clustertrainingruntimes.trainer.kubeflow.org","trainingruntimes.trainer.kubeflow.org","trainjobs.trainer.kubeflow.org"]'
jq_true helm-default-no-runtimes "$T/default.json" '[.[] | select(.kind == "ClusterTrainingRuntime")] | length == 0'
jq_true helm-default-no-status-rbac "$T/default.json" '[.[] | select(.metadata.name == "kubeflow-trainer-status-server")] | length == 0'
jq_true helm-public-configmap "$T/default.json" '[.[] | select(.kind == "ConfigMap" and .metadata.name == "kubeflow-trainer-public") | .data.kubeflow_trainer_version] == ["v2.3.0"]'
jq_true helm-crds-only-from-crds-folder "$T/all.json" '[.[] | select(.kind == "CustomResourceDefinition")] | length == 0'
jq_true helm-all-runtimes "$T/all.json" '[.[] | select(.kind == "ClusterTrainingRuntime") | .metadata.labels["trainer.kubeflow.org/webhook-validation"]] | length == 8 and all(. == "disabled")'
jq_true helm-all-status-rbac "$T/all.json" '[.[] | select(.metadata.name == "kubeflow-trainer-status-server") | .kind] | sort == ["ClusterRole","ClusterRoleBinding"]'
jq_true helm-all-common-labels "$T/all.json" '[.[] | .metadata.labels.team] | all(. == "ml")'
jq_true helm-all-image "$T/all.json" '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].image] | all(. == "registry.example/kt:v9")'
jq_true helm-all-replicas "$T/all.json" '[.[] | select(.kind == "Deployment") | "\(.metadata.name)=\(.spec.replicas)"] | sort == ["kubeflow-trainer-controller-manager=2","kubeflow-trainer-webhook=3"]'
jq_true helm-all-gate-in-config "$T/all.json" '[.[] | select(.metadata.name == "kubeflow-trainer-config") | .data["controller_manager_config.yaml"] | test("featureGates:\n  TrainJobStatus: true")] == [true]'
jq_true helm-default-image "$T/default.json" '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].image] | all(. == "kt:0.1.0")'
check helm-chart-version-is-ktctl-release bash -c "'$B/bin/ktctl' --version | grep -c \"^ktctl \$(awk '/^version:/ { print \$2 }' '$chart/Chart.yaml') \" >/dev/null"

# The kustomize install and the chart agree on names, webhooks, Service ports and RBAC rules.
"$root/scripts/cluster/build.sh" >/dev/null || {
    bad helm-cluster-build "scripts/cluster/build.sh failed"
    kt_finish
}
. "$root/scripts/cluster/versions.sh"
KUBECTL="$(kt_cluster_bindir)/kubectl"
"$KUBECTL" kustomize "$root/deploy" >"$T/kust.yaml" && tojson "$T/kust.yaml" >"$T/kust.json" || {
    bad helm-kustomize "kubectl kustomize deploy/ failed"
    kt_finish
}
# deploy/monitoring through the chart (metrics.*): off by default; on, the same rules,
# dashboard and scrape endpoint as the kustomize overlay, in the release's namespace.
jq_true helm-monitoring-off-by-default "$T/default.json" '[.[] | select(.kind == "ServiceMonitor" or .kind == "PrometheusRule" or .metadata.name == "kubeflow-trainer-dashboard" or .metadata.name == "kubeflow-trainer-controller-manager-metrics")] | length == 0'
if hc template kt "$chart" -n team --set metrics.serviceMonitor.enabled=true --set metrics.prometheusRule.enabled=true \
    --set metrics.grafanaDashboard.enabled=true --set metrics.serviceMonitor.labels.release=prom >"$T/mon.yaml" &&
    tojson "$T/mon.yaml" >"$T/mon.json" && "$KUBECTL" kustomize "$root/deploy/monitoring" >"$T/kmon.yaml" && tojson "$T/kmon.yaml" >"$T/kmon.json"; then
    if jq -e --slurpfile k "$T/kmon.json" '
        def pick($a; $kind; $name): [$a[] | select(.kind == $kind and .metadata.name == $name)][0];
        pick(.; "PrometheusRule"; "kubeflow-trainer").spec == pick($k[0]; "PrometheusRule"; "kubeflow-trainer").spec and
        pick(.; "ConfigMap"; "kubeflow-trainer-dashboard").data == pick($k[0]; "ConfigMap"; "kubeflow-trainer-dashboard").data and
        pick(.; "ConfigMap"; "kubeflow-trainer-dashboard").metadata.labels.grafana_dashboard == "1" and
        pick(.; "Service"; "kubeflow-trainer-controller-manager-metrics").spec.ports == pick($k[0]; "Service"; "kubeflow-trainer-controller-manager-metrics").spec.ports and
        (pick(.; "ServiceMonitor"; "kubeflow-trainer") | .metadata.namespace == "team" and .metadata.labels.release == "prom" and
            .spec.namespaceSelector.matchNames == ["team"] and .spec.endpoints[0].port == "monitoring-port" and
            .spec.endpoints[0].honorLabels == true and
            .spec.endpoints[0].tlsConfig.serverName == "kubeflow-trainer-controller-manager.team.svc")' "$T/mon.json" >/dev/null; then
        ok helm-monitoring-same-as-overlay
    else
        bad helm-monitoring-same-as-overlay "$(jq -c '[.[] | select(.metadata.name | test("kubeflow-trainer(-dashboard|-controller-manager-metrics)?$")) | "\(.kind)/\(.metadata.name)"]' "$T/mon.json")"
    fi
else
    bad helm-monitoring-render "helm template with metrics.* or kubectl kustomize deploy/monitoring failed"
fi
hc template kt "$chart" -n kubeflow-system --include-crds --set runtimes.defaultEnabled=true >"$T/rt.yaml" &&
    tojson "$T/rt.yaml" >"$T/rt.json"
missing=$(comm -23 <(kinds "$T/kust.json" | grep -v '^Namespace/') <(kinds "$T/rt.json"))
if [ -z "$missing" ]; then ok helm-has-every-kustomize-object; else bad helm-has-every-kustomize-object "$missing"; fi
for sel in '.kind | endswith("WebhookConfiguration")' '.kind == "Service"' '.kind | test("Role$")'; do
    # (the chart's extra: upstream's public ConfigMap Role)
    a=$(jq -cS "[.[] | select($sel) | {kind, name: .metadata.name, webhooks: (.webhooks // null), ports: (.spec.ports // null), rules: (.rules // null)}] | sort_by(.kind, .name)" "$T/kust.json")
    b=$(jq -cS "[.[] | select($sel) | {kind, name: .metadata.name, webhooks: (.webhooks // null), ports: (.spec.ports // null), rules: (.rules // null)}] | sort_by(.kind, .name)" "$T/rt.json")
    if [ "$a" = "$b" ]; then ok "helm-same-as-kustomize [$sel]"; else bad "helm-same-as-kustomize [$sel]" "$(diff <(echo "$a" | jq .) <(echo "$b" | jq .) | sed -n 1,20p)"; fi
done
# Container env: the webhook's malloc tunable in both installs, the reconciler without it.
envs() { jq -cS '[.[] | select(.kind == "Deployment") | {name: .metadata.name, env: [.spec.template.spec.containers[].env // [] | .[]]}] | sort_by(.name)' "$1"; }
check helm-env-same-as-kustomize test "$(envs "$T/kust.json")" = "$(envs "$T/rt.json")"
jq_true helm-webhook-malloc-tunable "$T/rt.json" '[.[] | select(.kind == "Deployment") | {n: .metadata.name, t: ([.spec.template.spec.containers[].env // [] | .[] | select(.name == "GLIBC_TUNABLES")] | length)}] | map(select(.t > 0) | .n) == ["kubeflow-trainer-webhook"]'
cfg() { jq -r '.[] | select(.metadata.name == "kubeflow-trainer-config") | .data["controller_manager_config.yaml"]' "$1" | python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(sys.stdin), sort_keys=True))'; }
check helm-config-same-as-kustomize test "$(cfg "$T/kust.json")" = "$(cfg "$T/rt.json")"
# watchNamespaces: the chart renders what deploy/namespaced ships (its minimal ClusterRole, a
# Role + RoleBinding per namespace, the Configuration's list); [] renders the cluster-wide RBAC.
render "$T/ns.yaml" --set 'watchNamespaces={team-a,team-b}' && tojson "$T/ns.yaml" >"$T/ns.json" &&
    "$KUBECTL" kustomize "$root/deploy/namespaced" >"$T/kns.yaml" && tojson "$T/kns.yaml" >"$T/kns.json" || {
    bad helm-namespaced-render "helm template / kubectl kustomize deploy/namespaced failed"
    kt_finish
}
rules() { jq -cS --arg k "$2" '[.[] | select(.kind == $k and .metadata.name == "kubeflow-trainer-controller-manager") | .rules] | unique' "$1"; }
check helm-namespaced-clusterrole-same-as-kustomize test "$(rules "$T/ns.json" ClusterRole)" = "$(rules "$T/kns.json" ClusterRole)"
check helm-namespaced-role-same-as-kustomize test "$(rules "$T/ns.json" Role)" = "$(rules "$T/kns.json" Role)"
jq_true helm-namespaced-role-per-namespace "$T/ns.json" '[.[] | select(.metadata.name == "kubeflow-trainer-controller-manager" and (.kind == "Role" or .kind == "RoleBinding")) | "\(.kind)/\(.metadata.namespace)"] | sort == ["Role/team-a","Role/team-b","RoleBinding/team-a","RoleBinding/team-b"]'
jq_true helm-namespaced-binding-subject "$T/ns.json" '[.[] | select(.kind == "RoleBinding" and .metadata.name == "kubeflow-trainer-controller-manager") | .subjects == [{"kind":"ServiceAccount","name":"kubeflow-trainer-controller-manager","namespace":"kubeflow-system"}]] | all'
jq_true helm-namespaced-no-secrets-cluster-wide "$T/ns.json" '[.[] | select(.kind == "ClusterRole") | .rules[]? | .resources[]?] | index("secrets") == null'
check helm-namespaced-config bash -c "jq -r '.[] | select(.metadata.name == \"kubeflow-trainer-config\") | .data[\"controller_manager_config.yaml\"]' '$T/ns.json' |
    python3 -c 'import sys,yaml; sys.exit(yaml.safe_load(sys.stdin)[\"watchNamespaces\"] != [\"team-a\", \"team-b\"])'"
check helm-namespaced-config-loads bash -c "jq -r '.[] | select(.metadata.name == \"kubeflow-trainer-config\") | .data[\"controller_manager_config.yaml\"]' '$T/ns.json' >'$T/ns-config.yaml' &&
    '$B/bin/kt-reconciler' --config '$T/ns-config.yaml' --kubeconfig /nonexistent 2>&1 | grep -c 'nonexistent' >/dev/null"
jq_true helm-default-no-watch "$T/rt.json" '[.[] | select(.metadata.name == "kubeflow-trainer-config") | .data["controller_manager_config.yaml"] | test("watchNamespaces")] == [false]'
jq -c '[.[] | select(.kind == "ClusterTrainingRuntime")]' "$T/rt.json" | python3 -c 'import json,sys,yaml; yaml.safe_dump_all(json.load(sys.stdin), sys.stdout)' >"$T/runtimes.yaml"
check helm-runtimes-validate "$B/bin/ktctl" validate "$T/runtimes.yaml"

# ---- 2. the real API server: server-side dry-run ------------------------------------------
kt_cleanup "[ -f '$D/env' ] && '$root/tests/cluster/down.sh' '$D'"
"$root/tests/cluster/up.sh" "$D" >"$T/up.log" 2>&1 || {
    bad helm-cluster-up "$(tail -5 "$T/up.log")"
    kt_finish
}
. "$D/env"
. "$root/tests/lib_kube.sh" # kc
export KUBECONFIG="$KT_ADMIN_KUBECONFIG" HELM_CACHE_HOME="$T/helm-cache" HELM_CONFIG_HOME="$T/helm-config" HELM_DATA_HOME="$T/helm-data"
kc create namespace kubeflow-system >/dev/null 2>&1
check helm-server-side-dry-run kc apply --server-side --dry-run=server -f "$T/rt.yaml"
render "$T/badfp.yaml" --set webhook.failurePolicy=Sometimes
check helm-bad-value-refused bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' apply --server-side --dry-run=server -f '$T/badfp.yaml'"

# helm's own server-side dry run (Helm does not dry-run crds/: up.sh's CRDs are served here)
check helm-install-dry-run-server hc install kt "$chart" -n kubeflow-system --dry-run=server \
    --set runtimes.torchDistributed.enabled=true

# ---- 3. helm install ---------------------------------------------------------------------
# up.sh installed our CRDs without Helm; the chart installs them from crds/ here.
kc delete crd trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org \
    clustertrainingruntimes.trainer.kubeflow.org >/dev/null
check helm-install hc install kt "$chart" -n kubeflow-system \
    --set runtimes.torchDistributed.enabled=true --set webhook.url=https://127.0.0.1:1
check helm-install-crds kc wait --for=condition=Established --timeout=60s crd/trainjobs.trainer.kubeflow.org
check helm-install-runtime kc get clustertrainingruntime torch-distributed
kc -n kubeflow-system get configmap kubeflow-trainer-config -o jsonpath='{.data.controller_manager_config\.yaml}' >"$T/config.yaml"

# the daemons, as the chart's ServiceAccounts, with the chart's Configuration
# (--standby: its readiness is not what this waits for; the Secret below is)
kt_daemon --standby rec "$B/bin/kt-reconciler" --config "$T/config.yaml" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
    --health-listen 127.0.0.1:0 --metrics-listen 0 --cert-sans IP:127.0.0.1
secret_data() { kc -n kubeflow-system get secret kubeflow-trainer-webhook-cert -o json | jq -cS .data; }
# shellcheck disable=SC2154 # PID_rec: set by kt_daemon
secret_filled() { # the Secret has a certificate, or the reconciler died (the check below says so)
    [ "$(secret_data 2>/dev/null | jq -r '."tls.crt" // empty')" != "" ] || ! kill -0 "$PID_rec" 2>/dev/null
}
kt_poll 60 secret_filled
if [ "$(secret_data | jq -r '."tls.crt" // empty')" != "" ]; then
    ok helm-reconciler-fills-chart-secret
else
    bad helm-reconciler-fills-chart-secret "$(tail -5 "$T/rec.log")"
    kt_finish
fi
mkdir -p "$T/mount" # what the kubelet would mount from the Secret
for k in tls.crt tls.key; do
    kc -n kubeflow-system get secret kubeflow-trainer-webhook-cert -o json | jq -r --arg k "$k" '.data[$k]' | base64 -d >"$T/mount/$k"
done
if KT_DAEMON_WAIT=30 kt_daemon wh "$B/bin/kt-webhook" --config "$T/config.yaml" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
    --tls-cert-file "$T/mount/tls.crt" --tls-key-file "$T/mount/tls.key" --listen 127.0.0.1:0 \
    --health-listen 127.0.0.1:0 --metrics-listen 0 >"$T/wh.start" 2>&1; then
    PORT=$(kt_port wh webhook)
    ok helm-webhook-ready
else
    bad helm-webhook-ready "$(tail -5 "$T/wh.log")"
    kt_finish
fi
EXAMPLE="$root/scripts/demo/example-trainjob.yaml"
check helm-fail-closed-before-url bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' -n default apply -f '$EXAMPLE' 2>&1 | tee /dev/stderr | grep -c created >/dev/null"

# ---- 4. helm upgrade ---------------------------------------------------------------------
before=$(secret_data)
check helm-upgrade hc upgrade kt "$chart" -n kubeflow-system --reuse-values \
    --set webhook.url="https://127.0.0.1:$PORT"
check helm-upgrade-keeps-cert-secret test "$(secret_data)" = "$before"
check helm-upgrade-url-set test "$(kc get validatingwebhookconfiguration validator.trainer.kubeflow.org -o jsonpath='{.webhooks[2].clientConfig.url}')" = "https://127.0.0.1:$PORT/validate-trainer-kubeflow-org-v1alpha1-trainjob"
# caBundle: injected by the reconciler's leader, kept (or re-injected) across the upgrade
ca=$(kc -n kubeflow-system get secret kubeflow-trainer-webhook-cert -o jsonpath='{.data.ca\.crt}')
cabundle_injected() {
    [ "$(kc get validatingwebhookconfiguration validator.trainer.kubeflow.org -o jsonpath='{.webhooks[2].clientConfig.caBundle}')" = "$ca" ] &&
        [ "$(kc get mutatingwebhookconfiguration defaulter.trainer.kubeflow.org -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" = "$ca" ]
}
kt_poll 60 cabundle_injected
check helm-cabundle-injected test "$(kc get validatingwebhookconfiguration validator.trainer.kubeflow.org -o jsonpath='{.webhooks[2].clientConfig.caBundle}')" = "$ca"
# the API server picks up configuration changes asynchronously: bounded retry of the create
apply_example() { kc -n default apply -f "$EXAMPLE" >"$T/apply.log" 2>&1; }
if kt_poll 30 apply_example; then ok helm-example-trainjob-admitted; else bad helm-example-trainjob-admitted "$(cat "$T/apply.log")"; fi
tj=$(awk '/^metadata:/ { m = 1; next } m && /^  name:/ { print $2; exit }' "$EXAMPLE")
kt_poll 60 kc -n default get jobset "$tj"
check helm-example-trainjob-reconciled kc -n default get jobset "$tj"
check helm-webhook-denies-missing-runtime bash -c "sed 's/name: torch-distributed/name: no-such-runtime/; s/^  name: $tj\$/  name: $tj-x/' '$EXAMPLE' | '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' -n default apply -f - 2>&1 | grep -c 'admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request' >/dev/null"
check helm-release-revision-2 test "$(hc status kt -n kubeflow-system -o json | jq -r .version)" = 2

# ---- 5. helm uninstall -------------------------------------------------------------------
check helm-uninstall hc uninstall kt -n kubeflow-system --wait=false
check helm-uninstall-removes-deployments test "$(kc -n kubeflow-system get deploy -o name | wc -l)" = 0
check helm-uninstall-keeps-cert-secret test "$(secret_data)" = "$before"
check helm-uninstall-keeps-crds kc get crd trainjobs.trainer.kubeflow.org
check helm-uninstall-removes-runtime bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' get clustertrainingruntime torch-distributed"
kt_finish
