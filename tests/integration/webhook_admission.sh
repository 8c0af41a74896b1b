#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/webhook_admission.sh ENV_FILE - kt-webhook behind the REAL API server.
#
# deploy/rbac/webhook is applied (and nothing else for the webhook's identity), kt-webhook runs
# with KT_WEBHOOK_KUBECONFIG (system:serviceaccount:kubeflow-system:kubeflow-trainer-webhook)
# and throwaway certificates, and deploy/webhook/manifests.yaml is registered with its service
# clientConfig rewritten to url https://127.0.0.1:PORT/PATH + caBundle (the API server has no
# Service network). Then kubectl, as a user: invalid objects are refused with upstream's
# `admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: ...`,
# valid ones pass, runtimePatches get their time, a runtime created right before its TrainJob
# is found, warnings reach the client. The configurations are removed again at the end.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/webhook_lib.sh"
wh_setup

ns=$(kt_ns webhook) || {
    bad webhook-namespace "cannot create a namespace"
    kt_finish
}
# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
kc apply -f "$it_root/deploy/runtimes/torch-distributed.yaml" >/dev/null 2>&1

# tj_doc NAME [SPEC_EXTRA_YAML] - a TrainJob on torch-distributed in $ns.
tj_doc() {
    cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: $ns
spec:
  runtimeRef:
    name: ${3:-torch-distributed}
${4:+    kind: $4}
$2
EOF
}

reserved=$(tj_doc bad-env '  trainer:
    env:
      - name: PET_NNODES
        value: "3"')
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"3"}]: must not have reserved envs, invalid envs configured: [PET_NNODES]'

kt_poll 30 wh_effective "$reserved" "$want"

# ---- denials, exactly as upstream's client output ------------------------------------------
echo "$reserved" >"$W/bad-env.yaml"
out=$(kc apply -f "$W/bad-env.yaml" 2>&1)
if [ "$out" = "Error from server (Forbidden): error when creating \"$W/bad-env.yaml\": $want" ]; then
    ok webhook-denies-reserved-env
else
    bad webhook-denies-reserved-env "got: $out"
fi

out=$(tj_doc no-runtime "" nope | kc apply -f - 2>&1)
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.RuntimeRef: Invalid value: {"name":"nope","apiGroup":"trainer.kubeflow.org","kind":"ClusterTrainingRuntime"}: ClusterTrainingRuntime.trainer.kubeflow.org "nope" not found: specified clusterTrainingRuntime must be created before the TrainJob is created'
if [[ "$out" == *": $want" ]]; then
    ok webhook-denies-missing-runtime
else
    bad webhook-denies-missing-runtime "got: $out"
fi

out=$(tj_doc bad-manager '  runtimePatches:
    - manager: nodomain' | kc apply -f - 2>&1)
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimePatches.manager: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")'
if [[ "$out" == *": $want" ]]; then
    ok webhook-denies-bad-manager
else
    bad webhook-denies-bad-manager "got: $out"
fi

out=$(
    kc apply -f - 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: two-replicas
  namespace: $ns
spec:
$(it_runtime_template 2)
EOF
)
want='admission webhook "validator.trainingruntime.trainer.kubeflow.org" denied the request: spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1'
if [[ "$out" == *": $want" ]]; then
    ok webhook-denies-runtime-replicas
else
    bad webhook-denies-runtime-replicas "got: $out"
fi

# ---- valid objects pass; the defaulter stamps runtimePatches --------------------------------
out=$(tj_doc good '  suspend: true
  trainer:
    numNodes: 2
  runtimePatches:
    - manager: acme.io/scheduler
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector:
                          pool: a' | kc apply -f - 2>&1)
if [[ "$out" == *"trainjob.trainer.kubeflow.org/good created"* ]]; then
    ok webhook-allows-valid-trainjob
else
    bad webhook-allows-valid-trainjob "got: $out"
fi
t1=$(kc -n "$ns" get trainjob good -o jsonpath='{.spec.runtimePatches[0].time}' 2>&1)
if [[ "$t1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]; then
    ok webhook-stamps-runtime-patch-time
else
    bad webhook-stamps-runtime-patch-time "time: '$t1'"
fi
# The defaulter's patch is upstream's round trip (controller-runtime: the object against
# json.Marshal of the defaulted Go TrainJob): the API server stores the integer quantity 2 as
# "2" and 1000m as "1", as it does behind upstream's webhook. Without runtimePatches the
# defaulter changes nothing and answers no patch: the user's form is stored (negative case).
# limits TJ - "cpu=<json> gpu=<json>" of the stored TrainJob's limits
limits() {
    kc -n "$ns" get trainjob "$1" -o json 2>&1 | python3 -c '
import json, sys
l = json.load(sys.stdin)["spec"]["trainer"]["resourcesPerNode"]["limits"]
print("cpu=%s gpu=%s" % (json.dumps(l.get("cpu")), json.dumps(l.get("nvidia.com/gpu"))))' 2>&1
}
quantities='  suspend: true
  trainer:
    resourcesPerNode:
      limits:
        cpu: 1000m
        nvidia.com/gpu: 2'
tj_doc roundtrip "$quantities
  runtimePatches:
    - manager: acme.io/scheduler" | kc apply -f - >/dev/null 2>&1
got=$(limits roundtrip)
if [ "$got" = 'cpu="1" gpu="2"' ]; then
    ok webhook-defaulter-roundtrip-stored
else
    bad webhook-defaulter-roundtrip-stored "stored limits: $got"
fi
tj_doc no-patches "$quantities" | kc apply -f - >/dev/null 2>&1
got=$(limits no-patches)
if [ "$got" = 'cpu="1000m" gpu=2' ]; then
    ok webhook-defaulter-no-change-no-patch
else
    bad webhook-defaulter-no-change-no-patch "stored limits: $got"
fi

# An unrelated update keeps the stamped time (the patch is equal ignoring time).
kc -n "$ns" patch trainjob good --type merge -p '{"metadata":{"labels":{"x":"y"}}}' >/dev/null 2>&1
t2=$(kc -n "$ns" get trainjob good -o jsonpath='{.spec.runtimePatches[0].time}' 2>&1)
if [ "$t2" = "$t1" ]; then
    ok webhook-keeps-time-on-unrelated-update
else
    bad webhook-keeps-time-on-unrelated-update "was '$t1', now '$t2'"
fi
# Changing the patches of a running (unsuspended) TrainJob is refused.
kc -n "$ns" patch trainjob good --type merge -p '{"spec":{"suspend":false}}' >/dev/null 2>&1
out=$(kc -n "$ns" patch trainjob good --type json \
    -p '[{"op":"replace","path":"/spec/runtimePatches/0/manager","value":"acme.io/other"}]' 2>&1)
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is suspended before or after the update'
if [[ "$out" == *"$want" ]]; then
    ok webhook-denies-patch-change-while-running
else
    bad webhook-denies-patch-change-while-running "got: $out"
fi

# Suspended: the change is allowed after the webhook reads the JobSet (GET; none exists here).
kc -n "$ns" patch trainjob good --type merge -p '{"spec":{"suspend":true}}' >/dev/null 2>&1
out=$(kc -n "$ns" patch trainjob good --type json \
    -p '[{"op":"replace","path":"/spec/runtimePatches/0/manager","value":"acme.io/other"}]' 2>&1)
t3=$(kc -n "$ns" get trainjob good -o jsonpath='{.spec.runtimePatches[0].manager} {.spec.runtimePatches[0].time}' 2>&1)
if [[ "$out" == *"patched"* ]] && [[ "$t3" =~ ^acme.io/other\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]]; then
    ok webhook-allows-patch-change-while-suspended
else
    bad webhook-allows-patch-change-while-suspended "got: $out / $t3"
fi

# ---- a runtime created right before its TrainJob (one apply, two documents) --------------
out=$(
    kc apply -f - 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: fresh
  namespace: $ns
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
$(it_runtime_template)
---
$(tj_doc uses-fresh "" fresh TrainingRuntime)
EOF
)
if [[ "$out" == *"trainjob.trainer.kubeflow.org/uses-fresh created"* ]]; then
    ok webhook-finds-runtime-created-just-before
else
    bad webhook-finds-runtime-created-just-before "got: $out"
fi

# ---- warnings reach the client -------------------------------------------------------------
kc apply -f - >"$W/dep.out" 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: old-$ns
  labels:
    trainer.kubeflow.org/support: deprecated
spec:
$(it_runtime_template)
EOF
if grep -qF "Warning: ClusterTrainingRuntime \"old-$ns\" is deprecated and will be removed" "$W/dep.out"; then
    ok webhook-runtime-deprecation-warning
else
    bad webhook-runtime-deprecation-warning "got: $(cat "$W/dep.out")"
fi
out=$(tj_doc uses-old "" "old-$ns" | kc apply -f - 2>&1)
if [[ "$out" == *"Warning: Referenced ClusterTrainingRuntime \"old-$ns\" is deprecated"* ]] &&
    [[ "$out" == *"created"* ]]; then
    ok webhook-trainjob-deprecation-warning
else
    bad webhook-trainjob-deprecation-warning "got: $out"
fi
# Runtime deleted: an update of its TrainJob is refused (docs/internals/upstream.md#quirk-13).
kc delete clustertrainingruntime "old-$ns" >/dev/null 2>&1
out=$(kc -n "$ns" patch trainjob uses-old --type merge -p '{"spec":{"suspend":true}}' 2>&1)
if [[ "$out" == *"specified clusterTrainingRuntime must be created before the TrainJob is created"* ]]; then
    ok webhook-denies-update-after-runtime-deleted
else
    bad webhook-denies-update-after-runtime-deleted "got: $out"
fi

# ---- least privilege: the webhook's identity can read runtimes and JobSets, nothing more ----
wk() { "$KT_KUBECTL" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" --cache-dir "$KT_CLUSTER_DIR/kubectl-cache" "$@"; }
can=$(wk auth can-i list clustertrainingruntimes.trainer.kubeflow.org 2>/dev/null)
cannot=""
for v in "create trainjobs.trainer.kubeflow.org" "get secrets" "list configmaps" \
    "update validatingwebhookconfigurations" "create jobsets.jobset.x-k8s.io"; do
    # shellcheck disable=SC2086
    [ "$(wk auth can-i $v 2>/dev/null)" = yes ] && cannot="$cannot [$v]"
done
if [ "$can" = yes ] && [ -z "$cannot" ]; then
    ok webhook-rbac-least-privilege
else
    bad webhook-rbac-least-privilege "list runtimes: '$can'; unexpectedly allowed:$cannot"
fi

# ---- the daemon: healthy, no sanitizer reports, clean stop ----------------------------------
if grep -qE 'AddressSanitizer|runtime error:|ThreadSanitizer' "$T/webhook.log"; then
    bad webhook-stderr-clean "$(cat "$T/webhook.log")"
else
    ok webhook-stderr-clean
fi
kc delete validatingwebhookconfiguration validator.trainer.kubeflow.org >/dev/null 2>&1
kc delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org >/dev/null 2>&1
if kt_daemon_stop webhook; then
    ok webhook-sigterm-clean-exit
else
    bad webhook-sigterm-clean-exit "exit status $?"
fi
kc delete clustertrainingruntime torch-distributed --ignore-not-found >/dev/null 2>&1
kt_finish
