#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/dra_test.sh ENV_FILE - Dynamic Resource Allocation (provisional KEP-2782, the
# feature gate DynamicResourceAllocation; docs/api.md#dynamic-resource-allocation) on the real API
# server (resource.k8s.io/v1 served by kube-apiserver 1.35), kt-reconciler as its own identity
# with deploy/rbac/reconciler:
#  - gate on: the JobSet's node pods get the claims, the node container resources.claims, and
#    PET_NPROC_PER_NODE the 4 GPU-class devices of the ResourceClaimTemplate the reconciler read
#    live (discovery of resource.k8s.io, `get` resourceclaimtemplates granted by the shipped RBAC);
#    a TrainJob whose template does not exist gets the claims and the CPU rule (1);
#  - gate off (the default): the same TrainJob, created past the webhook, is built without claims
#    and with the CPU rule.
. "$(dirname "$0")/lib.sh"
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}

kc create namespace kubeflow-system >/dev/null 2>&1 # the operator namespace; may exist
kc apply -k "$it_root/deploy/rbac/reconciler" >"$T/rbac.log" 2>&1 || {
    bad dra-rbac "$(cat "$T/rbac.log")"
    kt_finish
}
ns=$(kt_ns dra) || {
    bad dra-ns "cannot create a namespace"
    kt_finish
}
if ! kc apply -f - >"$T/objs.log" 2>&1 <<YAML; then
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: four-gpus
  namespace: $ns
spec:
  spec:
    devices:
      requests:
        - name: gpus
          exactly:
            deviceClassName: gpu.example.com
            count: 4
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: rt
  namespace: $ns
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
$(it_runtime_template)
YAML
    bad dra-objects "$(cat "$T/objs.log")"
    kt_finish
fi
ok dra-template-served

# The reconciler in local certificate mode (no Secret written) with a throwaway CA.
it_serving_certs "$T" kt-dra-itest-ca 2 || {
    bad dra-certs "openssl failed"
    kt_finish
}
mkdir -p "$T/certdir"
cp "$T/ca.crt" "$T/certdir/ca.crt"
RECF=(--kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 --metrics-listen 0
    --cert-dir "$T/certdir")
# dra_job NAME TEMPLATE - a TrainJob on runtime rt with one claim from TEMPLATE; waits (bounded) for
# its JobSet into $T/NAME.json. NAME is quoted (YAML 1.1 reads on/off as booleans).
dra_job() {
    kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: "$1"
  namespace: $ns
spec:
  runtimeRef:
    name: rt
    kind: TrainingRuntime
  trainer:
    resourceClaimsPerNode:
      - name: gpu
        resourceClaimTemplateName: $2
YAML
    kt_poll 60 dra_jobset "$1"
}
dra_jobset() { kc -n "$ns" get jobset "$1" -o json >"$T/$1.json" 2>/dev/null; } # dra_jobset NAME
dra_pod() { jq -c "$2" "$T/$1.json"; } # dra_pod NAME JQ - the node pod spec through JQ
POD='.spec.replicatedJobs[0].template.spec.template.spec'
dra_nproc() { dra_pod "$1" "$POD"'.containers[0].env | map(select(.name == "PET_NPROC_PER_NODE"))[0].value'; }

kt_daemon recon "$REC" "${RECF[@]}" --feature-gates DynamicResourceAllocation=true
if dra_job gated four-gpus; then
    ok dra-on-jobset-built
    check dra-on-pod-claims test "$(dra_pod gated "$POD.resourceClaims")" = \
        '[{"name":"gpu","resourceClaimTemplateName":"four-gpus"}]'
    check dra-on-container-claims test "$(dra_pod gated "$POD.containers[0].resources.claims")" = \
        '[{"name":"gpu"}]'
    check dra-on-nproc-from-template test "$(dra_nproc gated)" = '"4"'
else
    bad dra-on-jobset-built "$(tail -5 "$T/recon.log")"
fi
if dra_job missing no-such-template; then
    check dra-missing-template-claims test "$(dra_pod missing "$POD.resourceClaims[0].name")" = '"gpu"'
    check dra-missing-template-cpu-rule test "$(dra_nproc missing)" = '"1"'
else
    bad dra-missing-template-built "$(tail -5 "$T/recon.log")"
fi
kt_daemon_stop recon

kt_daemon recoff "$REC" "${RECF[@]}"
if dra_job ungated four-gpus; then
    check dra-off-no-pod-claims test "$(dra_pod ungated "$POD.resourceClaims")" = null
    check dra-off-no-container-claims test "$(dra_pod ungated "$POD.containers[0].resources.claims")" = null
    check dra-off-cpu-rule test "$(dra_nproc ungated)" = '"1"'
else
    bad dra-off-jobset-built "$(tail -5 "$T/recoff.log")"
fi
kt_daemon_stop recoff
kt_finish
