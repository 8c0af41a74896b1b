#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/plugins_test.sh ENV_FILE - external plugins (api/kt_plugin.h, docs/plugins.md) in
# the daemons on the real API server: kt-webhook with `--plugin require_label.so,...` denies a
# TrainJob through the API server (registered with a url clientConfig + caBundle, scoped to the
# test namespace); kt-reconciler with `--plugin extra_configmap.so --plugin tensorflow.so`
# applies the plugin's ConfigMap owned by the TrainJob and the TF_CONFIG env; both daemons
# refuse an ABI-mismatched plugin at startup. The daemons run as their non-admin identities
# with deploy/rbac/ applied. Waits are `kubectl wait` or bounded polls; no sleeps, no timing.
# KT_BIN_DIR overrides the binaries' directory (default build/plain/bin).
. "$(dirname "$0")/lib.sh"
BIN=${KT_BIN_DIR:-$it_root/build/plain/bin}
PLUG="$T/build/plugins"
KW=60s
kt_cleanup kc delete validatingwebhookconfiguration kt-plugins-test.trainer.kubeflow.org --ignore-not-found

# refuses_abi NAME BINARY ARGS... - the daemon exits non-zero at startup naming the ABI mismatch.
refuses_abi() {
    local name=$1
    shift
    if "$@" >"$T/$name.log" 2>&1; then
        bad "$name" "started with an ABI-mismatched plugin"
    elif grep -q "plugin $PLUG/bad_abi.so: built for plugin ABI 2.0, this kt speaks 1.0" \
        "$T/$name.log"; then
        ok "$name"
    else
        bad "$name" "$(head -c 400 "$T/$name.log")"
    fi
}

make_certs() {
    mkdir -p "$T/certs" && it_serving_certs "$T/certs" kt-plugins-test-ca 1
}

register_webhook() { # register_webhook NS PORT
    cat <<YAML | kc apply -f - >/dev/null
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kt-plugins-test.trainer.kubeflow.org
webhooks:
  - name: validator.trainjob.trainer.kubeflow.org
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    clientConfig:
      url: https://127.0.0.1:$2/validate-trainer-kubeflow-org-v1alpha1-trainjob
      caBundle: $(base64 -w0 "$T/certs/ca.crt")
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: $1
    rules:
      - apiGroups: [trainer.kubeflow.org]
        apiVersions: [v1alpha1]
        operations: [CREATE, UPDATE]
        resources: [trainjobs]
YAML
}

plugin_runtime_yaml() { # plugin_runtime_yaml NS NAME FRAMEWORK
    cat <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: $2
  namespace: $1
  labels:
    trainer.kubeflow.org/framework: $3
spec:
  mlPolicy:
    numNodes: 1
$(it_runtime_template)
YAML
}

plugin_trainjob_yaml() { # plugin_trainjob_yaml NS NAME RUNTIME [LABELS_YAML]
    cat <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $2
  namespace: $1
${4:-}
spec:
  runtimeRef:
    name: $3
    kind: TrainingRuntime
  trainer:
    numNodes: 2
YAML
}

# ---- setup -------------------------------------------------------------------------------
"$it_root/tests/plugins/build.sh" "$T/build" >"$T/build.log" 2>&1 ||
    { bad build "$(head -c 400 "$T/build.log")"; kt_finish; }
make_certs || { bad certs "openssl failed"; kt_finish; }
kc apply -k "$it_root/deploy/rbac/webhook" >/dev/null || { bad rbac "webhook"; kt_finish; }
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || { bad rbac "reconciler"; kt_finish; }
NS=$(kt_ns plugins) || { bad namespace "create failed"; kt_finish; }

# ---- an ABI-mismatched plugin is refused at startup by both daemons ----------------------
refuses_abi webhook-refuses-bad-abi "$BIN/kt-webhook" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
    --tls-cert-file "$T/certs/tls.crt" --tls-key-file "$T/certs/tls.key" \
    --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 0 \
    --plugin "$PLUG/bad_abi.so"
refuses_abi reconciler-refuses-bad-abi "$BIN/kt-reconciler" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
    --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --plugin "$PLUG/bad_abi.so"

# ---- kt-webhook + an external CustomValidation deny through the API server ---------------
kt_daemon webhook "$BIN/kt-webhook" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
    --tls-cert-file "$T/certs/tls.crt" --tls-key-file "$T/certs/tls.key" \
    --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 0 \
    --plugin "$PLUG/require_label.so,namespace=$NS,label=cost-center" ||
    { bad webhook-start "not ready"; kt_finish; }
register_webhook "$NS" "$(kt_port webhook webhook)" ||
    { bad webhook-register "apply failed"; kt_finish; }
plugin_runtime_yaml "$NS" tf tensorflow | kc apply -f - >/dev/null || { bad runtime "apply"; kt_finish; }

if plugin_trainjob_yaml "$NS" unlabelled tf | kc create -f - >"$T/deny.out" 2>&1; then
    bad webhook-plugin-denies "the unlabelled TrainJob was admitted"
elif grep -q "denied the request: metadata.labels: Required value: label cost-center is required for TrainJobs in namespace $NS" "$T/deny.out"; then
    ok webhook-plugin-denies
else
    bad webhook-plugin-denies "$(head -c 600 "$T/deny.out")"
fi
if plugin_trainjob_yaml "$NS" labelled tf "  labels: {cost-center: ml}" | kc create -f - >"$T/admit.out" 2>&1; then
    ok webhook-plugin-admits
else
    bad webhook-plugin-admits "$(head -c 600 "$T/admit.out")"
fi

# ---- kt-reconciler + an external ComponentBuilder and EnforceMLPolicy --------------------
kt_daemon reconciler "$BIN/kt-reconciler" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
    --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --workers 1 \
    --plugin "$PLUG/extra_configmap.so,team=ml" --plugin "$PLUG/tensorflow.so" ||
    { bad reconciler-start "not ready"; kt_finish; }
UID_TJ=$(kc get trainjob labelled -n "$NS" -o jsonpath='{.metadata.uid}')
if kc wait --timeout=$KW --for=create configmap/labelled-extra -n "$NS" >/dev/null 2>&1 &&
    kc get configmap labelled-extra -n "$NS" -o json >"$T/cm.json" &&
    jq -e --arg uid "$UID_TJ" '.metadata.ownerReferences == [{"apiVersion":
        "trainer.kubeflow.org/v1alpha1","kind":"TrainJob","name":"labelled","uid":$uid,
        "controller":true,"blockOwnerDeletion":true}] and .data.config == "team=ml" and
        .metadata.labels["trainer.kubeflow.org/trainjob-name"] == "labelled"' \
        "$T/cm.json" >/dev/null; then
    ok reconciler-plugin-object-owned
else
    bad reconciler-plugin-object-owned "$(head -c 600 "$T/cm.json" 2>/dev/null)"
fi
want="{\"cluster\":{\"worker\":[\"labelled-node-0-0.labelled:2222\",\"labelled-node-0-1.labelled:2222\"]},\"task\":{\"type\":\"worker\",\"index\":\$(TF_TASK_INDEX)}}"
if kc wait --timeout=$KW --for=create jobset/labelled -n "$NS" >/dev/null 2>&1 &&
    kc get jobset labelled -n "$NS" -o json >"$T/js.json" &&
    jq -e --arg want "$want" '.spec.replicatedJobs[0].template.spec.template.spec.containers[0].env |
        map(.name) as $n | ($n | index("TF_TASK_INDEX")) < ($n | index("TF_CONFIG")) and
        (map(select(.name == "TF_CONFIG"))[0].value == $want)' "$T/js.json" >/dev/null; then
    ok reconciler-plugin-tf-config
else
    bad reconciler-plugin-tf-config "$(jq -c '.spec.replicatedJobs[0].template.spec.template.spec.containers[0].env' "$T/js.json" 2>/dev/null | { head -c 600; cat >/dev/null; })"
fi
kt_finish
