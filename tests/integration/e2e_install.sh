#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/e2e_install.sh ENV_FILE - the install manifests: `kubectl kustomize
# deploy/` builds, the REAL API server accepts every object (server-side dry run, so the
# shared cluster is not changed), `ktctl validate` accepts the runtimes in it, the shipped
# Configuration loads in both daemons, and the objects carry the install names and the
# settings README promises (docs/install.md, docs/internals/upstream.md#webhook-configurations, #manager-process, #configuration-and-certificates). Negative
# controls: a broken copy is refused by the API server and by ktctl.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
KTCTL=$it_root/build/plain/bin/ktctl
REC=${KT_RECONCILER_BIN:-$it_root/build/plain/bin/kt-reconciler}
WEBHOOK=${KT_WEBHOOK_BIN:-$it_root/build/plain/bin/kt-webhook}
W="$T/install"
mkdir -p "$W"
# The reconciler started below is a leader in managed mode: it creates the certificate Secret.
# deploy/public is applied for real (below) and removed again.
kt_cleanup "kc delete secret kubeflow-trainer-webhook-cert -n kubeflow-system --ignore-not-found;" \
    "kc delete -k '$it_root/deploy/public' --ignore-not-found"

if kc kustomize "$it_root/deploy" >"$W/all.yaml" 2>"$W/kustomize.err"; then
    ok install-kustomize-builds
else
    bad install-kustomize-builds "$(cat "$W/kustomize.err")"
    kt_finish
fi
check install-server-side-dry-run kc apply --server-side --dry-run=server -f "$W/all.yaml"
check install-ktctl-validate "$KTCTL" validate "$W/all.yaml"
# kubectl prints one JSON document per object; gather them into {"items": [...]}.
kc create --dry-run=client -o json -f "$W/all.yaml" 2>"$W/json.err" |
    jq -s '{items: [.[] | if .kind == "List" then .items[] else . end]}' >"$W/all.json"
check install-json test "$(jq '.items | length' "$W/all.json")" -eq "$(grep -c '^kind:' "$W/all.yaml")"

# install_true NAME JQ - one jq expression over the List must print "true".
install_true() {
    local name=$1
    shift
    if [ "$(jq -r "$@" "$W/all.json" 2>&1)" = true ]; then ok "$name"; else bad "$name" "jq: $*"; fi
}
sel() { printf '.items[] | select(.kind == "%s" and .metadata.name == "%s")' "$1" "$2"; }
install_true install-namespace "[.items[] | select(.metadata.namespace != null) | .metadata.namespace] | unique == [\"kubeflow-system\"]"
install_true install-crds "[.items[] | select(.kind == \"CustomResourceDefinition\") | .metadata.name] | sort == [\"clustertrainingruntimes.trainer.kubeflow.org\",\"trainingruntimes.trainer.kubeflow.org\",\"trainjobs.trainer.kubeflow.org\"]"
install_true install-runtimes-cluster-scoped "[.items[] | select(.kind == \"ClusterTrainingRuntime\") | .metadata.namespace] | (length == 8 and all(. == null))"
install_true install-service-accounts "[.items[] | select(.kind == \"ServiceAccount\") | .metadata.name] | sort == [\"kubeflow-trainer-controller-manager\",\"kubeflow-trainer-webhook\"]"
install_true install-service "$(sel Service kubeflow-trainer-controller-manager) | [.spec.ports[] | select(.name == \"webhook-server\") | .port == 443 and .targetPort == \"webhook\"] == [true]"
WH=$(sel Deployment kubeflow-trainer-webhook)
RC=$(sel Deployment kubeflow-trainer-controller-manager)
install_true install-webhook-replicas "$WH | .spec.replicas == 2 and .spec.template.spec.serviceAccountName == \"kubeflow-trainer-webhook\""
install_true install-webhook-probes "$WH | .spec.template.spec.containers[0] | .livenessProbe.httpGet.path == \"/healthz\" and .readinessProbe.httpGet.path == \"/readyz\""
install_true install-webhook-port "$WH | [.spec.template.spec.containers[0].ports[] | select(.name == \"webhook\") | .containerPort] == [9443]"
install_true install-webhook-cert-mount "$WH | .spec.template.spec | ([.containers[0].volumeMounts[] | select(.mountPath == \"/tmp/k8s-webhook-server/serving-certs\") | .readOnly] == [true]) and ([.volumes[] | select(.secret.secretName == \"kubeflow-trainer-webhook-cert\") | .secret.defaultMode] == [420])"
install_true install-non-root "[($WH), ($RC) | .spec.template.spec | .securityContext.runAsNonRoot == true and .containers[0].securityContext.allowPrivilegeEscalation == false and .containers[0].securityContext.readOnlyRootFilesystem == true and (.containers[0].resources.requests | length) > 0] | all"
install_true install-reconciler "$RC | .spec.template.spec.serviceAccountName == \"kubeflow-trainer-controller-manager\" and (.spec.template.spec.containers[0].args | index(\"--config=/controller_manager_config.yaml\")) != null"
install_true install-config-map "$(sel ConfigMap kubeflow-trainer-config) | .data[\"controller_manager_config.yaml\"] | contains(\"leaderElect: true\")"
install_true install-cert-secret "$(sel Secret kubeflow-trainer-webhook-cert) | .data == null"
install_true install-webhook-configs "[.items[] | select(.kind | endswith(\"WebhookConfiguration\")) | .metadata.name] | sort == [\"defaulter.trainer.kubeflow.org\",\"validator.trainer.kubeflow.org\"]"
install_true install-webhook-service-ref "[.items[] | select(.kind | endswith(\"WebhookConfiguration\")) | .webhooks[].clientConfig.service | .name == \"kubeflow-trainer-controller-manager\" and .namespace == \"kubeflow-system\"] | all"

# The Kubeflow SDK's version ConfigMap, readable by every authenticated user (docs/internals/upstream.md#rbac "Extra").
install_true install-public-configmap "$(sel ConfigMap kubeflow-trainer-public) | .data == {\"kubeflow_trainer_version\": \"v2.3.0\"}"
install_true install-public-role "$(sel Role kubeflow-trainer-public) | .rules == [{apiGroups: [\"\"], resources: [\"configmaps\"], resourceNames: [\"kubeflow-trainer-public\"], verbs: [\"get\", \"list\", \"watch\"]}]"
install_true install-public-rolebinding "$(sel RoleBinding kubeflow-trainer-public) | .roleRef.kind == \"Role\" and .roleRef.name == \"kubeflow-trainer-public\" and .subjects == [{apiGroup: \"rbac.authorization.k8s.io\", kind: \"Group\", name: \"system:authenticated\"}]"
# For real: an authenticated identity with no ConfigMap rights (kt-webhook's) reads it once
# deploy/public is applied, and nothing else in the namespace; it could not before.
kw_as() { "$KT_KUBECTL" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" "$@"; }
public_readable() {
    kc delete -k "$it_root/deploy/public" --ignore-not-found >/dev/null 2>&1
    ! kw_as auth can-i get configmap/kubeflow-trainer-public -n kubeflow-system >/dev/null &&
        kc apply --server-side -k "$it_root/deploy/public" >/dev/null &&
        test "$(kw_as get configmap kubeflow-trainer-public -n kubeflow-system -o jsonpath='{.data.kubeflow_trainer_version}')" = v2.3.0 &&
        ! kw_as auth can-i get configmap/kubeflow-trainer-config -n kubeflow-system >/dev/null &&
        ! kw_as auth can-i update configmap/kubeflow-trainer-public -n kubeflow-system >/dev/null
}
check install-public-readable-by-authenticated public_readable

# The shipped Configuration (as the ConfigMap carries it) is decoded strictly and validated:
# kt-reconciler starts with it and gets ready; an invalid copy stops kt-webhook, naming it.
jq -r "$(sel ConfigMap kubeflow-trainer-config) | .data[\"controller_manager_config.yaml\"]" "$W/all.json" >"$W/config.yaml"
config_loads() { # as the controller-manager identity, with exactly deploy/rbac/reconciler
    KT_DAEMON_WAIT=30 kt_daemon rec "$REC" --config "$W/config.yaml" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
        --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 || return 1
    kt_daemon_stop rec
    return 0
}
kc apply --server-side -k "$it_root/deploy/rbac/reconciler" >/dev/null 2>&1
check install-config-loads-in-reconciler config_loads
printf 'webhook:\n  port: 70000\n' >>"$W/config.yaml"
bad_config() {
    ! "$WEBHOOK" --config "$W/config.yaml" --objects "$it_root/deploy/runtimes" --tls-cert-file /nonexistent \
        --tls-key-file /nonexistent --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
        --metrics-listen 0 </dev/null >"$W/wh.log" 2>&1 && grep -q 'config.yaml' "$W/wh.log"
}
check install-bad-config-refused bad_config

# The binary tarball's copy (make bindist, installed into a prefix) builds to the same objects.
dist_same() {
    KT_VERSION=t "$it_root/deploy/release/bindist.sh" "$it_root/build/plain" "$W/dist" >/dev/null &&
        mkdir -p "$W/prefix" && tar -xzf "$W/dist"/kt-t-linux-*.tar.gz -C "$W/prefix" --strip-components=1 &&
        kc kustomize "$W/prefix/share/kt/deploy" >"$W/dist.yaml" && cmp "$W/all.yaml" "$W/dist.yaml"
}
check install-dist-tarball-same-manifests dist_same

# deploy/cert-manager: the same install with cert-manager's certificates ("external").
if kc kustomize "$it_root/deploy/cert-manager" >"$W/cm.yaml" 2>"$W/cm.err"; then
    ok install-cert-manager-builds
    # every document but cert-manager's own kinds (no cert-manager CRDs here)
    awk 'BEGIN { RS = "\n---\n" } $0 !~ /(^|\n)kind: (Certificate|Issuer)(\n|$)/ { printf "---\n%s\n", $0 }' \
        "$W/cm.yaml" >"$W/cm-rest.yaml"
    kc create --dry-run=client -o json -f "$W/cm-rest.yaml" 2>/dev/null |
        jq -s '{apiVersion: "v1", kind: "List", items: .}' >"$W/cm.json"
    cmq() { jq -r "$1" "$W/cm.json"; }
    check install-cert-manager-objects test "$(cmq '.items | length')" -eq $(($(grep -c '^kind:' "$W/cm.yaml") - 2))
    check install-cert-manager-no-kt-secret test "$(cmq '[.items[] | select(.kind == "Secret")] | length')" = 0
    cm_external() { cmq '.items[] | select(.kind == "ConfigMap") | .data["controller_manager_config.yaml"]' | grep -cx '  enable: false' >/dev/null; }
    check install-cert-manager-config-external cm_external
    check install-cert-manager-inject-ca-from test "$(cmq '[.items[] | select(.kind | endswith("WebhookConfiguration")) | .metadata.annotations["cert-manager.io/inject-ca-from"]] | unique | join(",")')" = kubeflow-system/kubeflow-trainer-webhook-cert
    check install-cert-manager-certificate bash -c "grep -A3 '^kind: Certificate$' '$W/cm.yaml' | grep -c 'name: kubeflow-trainer-webhook-cert' >/dev/null && grep -q 'secretName: kubeflow-trainer-webhook-cert' '$W/cm.yaml'"
    check install-cert-manager-dry-run-rest kc apply --server-side --dry-run=server -f "$W/cm.json"
else
    bad install-cert-manager-builds "$(cat "$W/cm.err")"
fi

# ---- negative controls ---------------------------------------------------------------------
sed 's/^  replicas: 2$/  replicas: two/' "$W/all.yaml" >"$W/broken.yaml"
check install-negative-differs bash -c "! cmp -s '$W/all.yaml' '$W/broken.yaml'"
check install-negative-dry-run-refuses bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' apply --server-side --dry-run=server -f '$W/broken.yaml'"
awk '/^kind: ClusterTrainingRuntime$/ { n++ } { print } n == 1 && /^spec:$/ && !done { print "  bogusField: 1"; done = 1 }' \
    "$W/all.yaml" >"$W/broken-runtime.yaml"
check install-negative-ktctl-refuses bash -c "'$KTCTL' validate '$W/broken-runtime.yaml'; test \$? -eq 1"
kt_finish
