# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/node/cases.sh - the cases of the real-node tier, in the order they run (sourced by
# tests/node/run.sh; helpers in tests/node/lib.sh). Later cases rely on earlier ones: kt is
# installed by kt-helm, the training cases run on it, helm-uninstall removes it.
# shellcheck disable=SC2034 # NODE_CASES: read by tests/node/run.sh, which sources this file
NODE_CASES="node-pods node-network kt-helm torch-ddp dra torch-fail torch-pod-deleted mpi-allreduce xgboost sdk
leader-failover helm-upgrade webhook-replicas helm-uninstall kustomize"

# A pod that runs COMMAND in the torch image on the real node; no restarts.
pod_yaml() { # NAME NS COMMAND...
    local name=$1 ns=$2 img
    shift 2
    img=$(kt_node_image_ref torch)
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $ns, labels: {app: $name}}
spec:
  restartPolicy: Never
  nodeSelector: {kt.kubeflow.org/real-node: "true"}
  containers:
    - name: main
      image: $img
      command: $(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@")
      resources: {requests: {cpu: 50m, memory: 64Mi}}
EOF
}

# ---- the node itself ---------------------------------------------------------------------
case_node_pods() {
    kt_node_images torch || { bad node-images "$(tail -5 "$D/images.log")"; return; }
    kt_ns --name np >/dev/null
    pod_yaml hello np python3 -c 'import torch, sys; print("hello from", torch.__version__); sys.stdout.flush()' |
        kc apply -f - >/dev/null
    pod_yaml exits np python3 -c 'import sys; print("about to exit 3"); sys.exit(3)' | kc apply -f - >/dev/null
    check node-pod-succeeded kt_poll -m "pod hello Succeeded" "$WAIT" kq '.status.phase == "Succeeded"' pod hello -n np
    check node-pod-logs bash -c "'$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' logs -n np hello | grep -c '^hello from 1\.' >/dev/null"
    # negative: a container that exits 3 makes the pod Failed with that exit code
    check node-pod-failed-exit-code kt_poll -m "pod exits Failed with exit code 3" "$WAIT" \
        kq '.status.phase == "Failed" and .status.containerStatuses[0].state.terminated.exitCode == 3' pod exits -n np
    check node-pod-ran-in-containerd bash -c "ctr --address '$KT_CONTAINERD_SOCK' -n k8s.io containers ls -q | grep -c . >/dev/null"
}

# Pods reach each other by the names JobSet gives them (hostname + subdomain over a headless
# Service, resolved by CoreDNS) and through a ClusterIP Service (kube-proxy); a name nobody
# serves does not resolve.
case_node_network() {
    kt_ns --name nn >/dev/null
    kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: web, namespace: nn}
spec: {clusterIP: None, selector: {app: web}, ports: [{port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-vip, namespace: nn}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
EOF
    pod_yaml web nn python3 -m http.server 8080 |
        sed 's/^spec:/spec:\n  hostname: web-0\n  subdomain: web/' | kc apply -f - >/dev/null
    kt_poll -m "pod web Ready" "$WAIT" kq '.status.conditions[]? | select(.type == "Ready") | .status == "True"' pod web -n nn ||
        { bad node-network "pod web not Ready"; return; }
    # Both names answer only once the EndpointSlice controller has listed the pod ready and
    # CoreDNS and kube-proxy have seen it: wait for the slices, and let the client retry a
    # failed request for up to 30 s (printing each failure) for the watches behind them.
    check node-dns-endpoints kt_poll -m "EndpointSlices of web and web-vip list web-0 ready" "$WAIT" \
        endpoints_ready nn web web-vip
    local probe='import sys, time, urllib.request
for u in sys.argv[1:]:
    deadline = time.monotonic() + 30
    while True:
        try:
            print(u, urllib.request.urlopen(u, timeout=5).status, flush=True)
            break
        except OSError as e:
            print("retry", u, e, flush=True)
            if time.monotonic() > deadline:
                raise
            time.sleep(1)'
    pod_yaml client nn python3 -c "$probe" http://web-0.web.nn.svc.cluster.local:8080/ http://web-vip.nn.svc:80/ |
        kc apply -f - >/dev/null
    pod_yaml nxclient nn python3 -c 'import socket; socket.gethostbyname("nobody-0.web.nn.svc.cluster.local")' |
        kc apply -f - >/dev/null
    check node-dns-headless-and-clusterip pod_wait nn client Succeeded
    check node-dns-client-log bash -c "'$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' logs -n nn client | grep -c ' 200$' | grep -cx 2 >/dev/null"
    check node-dns-unknown-name-fails pod_wait nn nxclient Failed
    echo "node: network client retries: $(kc logs -n nn client 2>/dev/null | grep -c '^retry')"
}

# endpoints_ready NS SERVICE... - every SERVICE's EndpointSlices hold a ready endpoint.
endpoints_ready() {
    local ns=$1 svc
    shift
    for svc in "$@"; do
        kc get endpointslices -n "$ns" -l "kubernetes.io/service-name=$svc" -o json |
            jq -e '[.items[].endpoints[]? | select(.conditions.ready == true)] | length > 0' >/dev/null ||
            return 1
    done
}

# ---- kt installed by Helm from its own image ---------------------------------------------
KT_TAG=$(build/plain/bin/ktctl --version | awk '{ print $2 }')
case_kt_helm() {
    local t0=$SECONDS
    make -s image >"$T/image.log" 2>&1 || { bad kt-image "$(tail -5 "$T/image.log")"; return; }
    node_import_kt "$KT_TAG" || { bad kt-image-import "see $D/images.log"; return; }
    # The CRDs come from the chart (up.sh installed them without Helm).
    kc delete crd trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org \
        clustertrainingruntimes.trainer.kubeflow.org >/dev/null
    check kt-helm-install node_helm install kt "$CHART" -n "$NS" --wait --timeout 180s \
        --set manager.replicas=2 --set webhook.replicas=2 \
        --set runtimes.torchDistributed.enabled=true --set runtimes.deepspeedDistributed.enabled=true \
        --set runtimes.xgboostDistributed.enabled=true \
        --set manager.config.featureGates.DynamicResourceAllocation=true \
        -f "$(runtime_images_values)"
    echo "node: kt installed by helm in $((SECONDS - t0))s (image build and import included)"
    check kt-helm-deployments-available kq '[.items[] | .status.availableReplicas == 2] | all and length == 2' \
        deploy -n "$NS"
    check kt-helm-pods-on-real-node kq '[.items[] | .spec.nodeName == "kt-node" and .status.phase == "Running"] |
        all and length == 4' pods -n "$NS"
    check kt-helm-pods-nonroot-readonly kq '[.items[].spec.containers[].securityContext |
        .runAsNonRoot == true and .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false] | all' \
        pods -n "$NS"
    check kt-helm-image-user-65532 node_image_user_is "docker.io/library/kt:$KT_TAG" 65532:65532
    check kt-helm-one-leader kt_poll -m "a kt-reconciler pod holds the Lease" "$WAIT" leader_is_a_pod
    check kt-helm-runtime-image-overridden kq \
        '.spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image | startswith("kt.local/")' \
        clustertrainingruntime torch-distributed
    # the API server calls kt-webhook through its Service: a bad TrainJob is denied, a good one
    # admitted (dry run)
    check kt-helm-webhook-denies-via-service webhook_denies
    check kt-helm-webhook-admits-via-service bash -c "node_tj default dryrun-ok torch-distributed 'python3 -c pass' | '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' create --dry-run=server -f -"
}

# node_import_kt TAG [NEWTAG] - import build/image/kt.oci.tar into the node's containerd as
# docker.io/library/kt:TAG (what the chart's default image "kt:<version>" normalises to);
# with NEWTAG also tag it docker.io/library/kt:NEWTAG.
node_import_kt() {
    node_ctr images import --base-name docker.io/library/kt build/image/kt.oci.tar >>"$D/images.log" 2>&1 &&
        node_ctr images ls -q | grep -x "docker.io/library/kt:$1" >/dev/null || return 1
    [ -z "${2:-}" ] || node_ctr images tag --force "docker.io/library/kt:$1" "docker.io/library/kt:$2" >/dev/null
}

# node_image_user_is REF USER - the image's config runs as USER.
node_image_user_is() {
    node_ctr images export - "$1" 2>/dev/null | tar -xO --wildcards 'blobs/sha256/*' 2>/dev/null |
        grep -a -o '"User":"[^"]*"' | grep "\"User\":\"$2\"" >/dev/null
}

leader_is_a_pod() {
    local l
    l=$(leader)
    [ -n "$l" ] && kc -n "$NS" get pod "$l" -o name >/dev/null
}

# runtime_images INDENT - the `images:` entries (kustomize's, and the chart's runtimes.images,
# the same form) pointing the shipped runtimes at the local images, each line after INDENT.
# The shipped runtime files are not edited.
runtime_images() {
    local pair r
    for pair in pytorch/pytorch=torch ghcr.io/kubeflow/trainer/deepspeed-runtime=mpi \
        ghcr.io/kubeflow/trainer/xgboost-runtime=xgboost; do
        r=$(kt_node_image_ref "${pair#*=}")
        echo "$1- {name: ${pair%=*}, newName: ${r%:*}, newTag: \"${r##*:}\"}"
    done
}

# runtime_images_values - a values file with runtimes.images (the images imported first).
runtime_images_values() {
    kt_node_images torch mpi xgboost || return 1
    { echo "runtimes:" && echo "  images:" && runtime_images "    "; } >"$T/images.yaml"
    echo "$T/images.yaml"
}

tj_missing_runtime() {
    cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: no-runtime, namespace: default}
spec: {runtimeRef: {name: no-such-runtime}}
EOF
}

# node_tj NS NAME RUNTIME COMMAND [NUMNODES] [EXTRA_SPEC] [EXTRA_TRAINER] - a TrainJob on the
# ClusterTrainingRuntime RUNTIME ("TrainingRuntime/NAME": a namespaced one) running COMMAND (words
# split on spaces, or a JSON array as it is) on NUMNODES (2) nodes with small requests;
# EXTRA_SPEC lines (indented) go under spec, EXTRA_TRAINER lines (indented) under spec.trainer.
node_tj() {
    local kind=ClusterTrainingRuntime rt=$3 cmd=$4
    case $rt in TrainingRuntime/*) kind=TrainingRuntime rt=${rt#*/} ;; esac
    case $cmd in "["*) ;; *) cmd=$(printf '%s' "$4" | jq -Rc 'split(" ")') ;; esac
    cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $2, namespace: $1}
spec:
  runtimeRef: {name: $rt, kind: $kind}
${6:-}
  trainer:
    numNodes: ${5:-2}
    command: $cmd
    env: [{name: EPOCHS, value: "2"}]
    resourcesPerNode:
      requests: {cpu: 200m, memory: 256Mi}
      limits: {memory: 2Gi}
${7:-}
EOF
}
export -f tj_missing_runtime node_tj

# ---- training that trains ----------------------------------------------------------------
case_torch_ddp() {
    node_tj default ddp torch-distributed "torchrun /workspace/train_mnist.py" | kc apply -f - >/dev/null
    check torch-ddp-complete node_tj_wait default ddp Complete
    tj_logs default ddp >"$T/ddp.log"
    check torch-ddp-both-ranks-world-2 test "$(grep -c 'world size 2' "$T/ddp.log")" -ge 2
    check torch-ddp-loss-decreases loss_decreases "$T/ddp.log"
    check torch-ddp-env-from-kt kq '[.items[].spec.containers[0].env[] | select(.name == "PET_NNODES") | .value] |
        all(. == "2")' pods -n default -l jobset.sigs.k8s.io/jobset-name=ddp
}

# loss_decreases LOG - rank 0's last printed loss is below its first.
loss_decreases() {
    grep -E 'rank 0/2 epoch [0-9]+ step [0-9]+ loss [0-9.]+' "$1" | sed -E 's/.*loss ([0-9.]+).*/\1/' >"$T/loss"
    [ "$(wc -l <"$T/loss")" -ge 2 ] &&
        awk 'NR == 1 { f = $1 } { l = $1 } END { exit !(l < f) }' "$T/loss"
}

# ---- devices by claim: Dynamic Resource Allocation with Kubernetes' DRA test driver ---------
# The driver (tests/cluster/node.sh kt_node_dra_start) publishes KT_DRA_DEVICES (4) devices of
# the node in a ResourceSlice and, for each claim the kubelet prepares, writes a CDI spec that sets
# environment variables in the container: claim_<claim>_<request>=true, and user_<key> and
# admin_<key> for the opaque parameters of the claim's and the DeviceClass's config. The class's
# name has "gpu" in it, so kt's numProcPerNode auto counts its devices (docs/api.md).
DRA_CLASS=kt-test-gpu

# dra_template NAME NS COUNT - a ResourceClaimTemplate of COUNT devices of the class, with an
# opaque parameter the driver injects as user_trainjob=dra.
dra_template() {
    cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $1, namespace: $2}
spec:
  spec:
    devices:
      requests:
        - name: gpus
          exactly: {deviceClassName: $DRA_CLASS, count: $3}
      config:
        - requests: [gpus]
          opaque: {driver: $KT_DRA_DRIVER, parameters: {trainjob: dra}}
EOF
}

# dra_objects NS - the DeviceClass, a template of 2 devices (each of the 2 node pods gets its own
# claim: 4 devices in all) and one of 5 (more than the node has).
dra_objects() {
    cat <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $DRA_CLASS}
spec:
  selectors:
    - cel: {expression: 'device.driver == "$KT_DRA_DRIVER"'}
  config:
    - opaque: {driver: $KT_DRA_DRIVER, parameters: {class: $DRA_CLASS}}
---
EOF
    dra_template two-gpus "$1" 2
    echo ---
    dra_template five-gpus "$1" 5
}

# dra_claims TEMPLATE - spec.trainer lines: one claim per node from TEMPLATE.
dra_claims() { echo "    resourceClaimsPerNode: [{name: gpu, resourceClaimTemplateName: $1}]"; }

# The DRA TrainJob's command: print what the driver injected, wait until the test has looked at
# the allocated claims (it creates /tmp/kt-go by exec: a generated claim is deleted as soon as
# its pod is done), then the tiny DDP training.
DRA_CMD=$(jq -nc '["sh", "-c", "env | grep -E \"^(admin|user|claim)_\" | sort; until [ -e /tmp/kt-go ]; do sleep 0.2; done; exec torchrun /workspace/train_mnist.py"]')

case_dra() {
    local ns p sel
    kt_node_dra_start || { bad dra-driver-start "$(tail -n 5 "$D/dra-driver.log")"; return; }
    ok dra-driver-publishes-devices
    ns=$(kt_ns dra)
    sel=jobset.sigs.k8s.io/jobset-name=dra
    check dra-objects dra_apply "$ns"
    node_tj "$ns" dra torch-distributed "$DRA_CMD" 2 "" "$(dra_claims two-gpus)" | kc apply -f - >/dev/null
    if ! kt_poll -m "both pods of dra Running" "$WAIT" \
        kq '[.items[] | select(.status.phase == "Running")] | length == 2' pods -n "$ns" -l "$sel"; then
        kc get pods,resourceclaims -n "$ns" -o wide >"$T/dra.pending" 2>&1
        bad dra-pods-running "$(head -n 8 "$T/dra.pending")"
        return
    fi
    ok dra-pods-running
    kc get pods -n "$ns" -l "$sel" -o json >"$T/dra.pods.json"
    kc get resourceclaims -n "$ns" -o json >"$T/dra.claims.json"
    # kt built the claims into the pods, and 2 processes per node from the template's count
    check dra-pod-claims-from-kt jq -e '.items | length == 2 and all(
        .spec.resourceClaims == [{name: "gpu", resourceClaimTemplateName: "two-gpus"}] and
        (.spec.containers[] | select(.name == "node") | .resources.claims == [{name: "gpu"}]))' "$T/dra.pods.json"
    check dra-nproc-from-device-count jq -e '[.items[].spec.containers[] | select(.name == "node") |
        .env[] | select(.name == "PET_NPROC_PER_NODE") | .value] == ["2", "2"]' "$T/dra.pods.json"
    # the scheduler allocated 2 of the driver's devices on the node to each claim, 4 different
    check dra-claims-allocated jq -e --arg d "$KT_DRA_DRIVER" '.items | length == 2 and all(
        .status.allocation.devices.results | length == 2 and all(.driver == $d and .pool == "kt-node"))' \
        "$T/dra.claims.json"
    check dra-devices-distinct jq -e '[.items[].status.allocation.devices.results[].device] | unique | length == 4' \
        "$T/dra.claims.json"
    check dra-claim-reserved-for-its-pod dra_bound "$T/dra.pods.json" "$T/dra.claims.json"
    check dra-cdi-spec-per-claim dra_cdi_specs "$T/dra.claims.json"
    check dra-container-sees-injected-env kt_poll -m "both pods print the driver's variables" "$WAIT" \
        dra_env_seen "$ns" dra
    for p in $(jq -r '.items[].metadata.name' "$T/dra.pods.json"); do
        kc exec -n "$ns" "$p" -c node -- touch /tmp/kt-go
    done
    check dra-complete node_tj_wait "$ns" dra Complete
    tj_logs "$ns" dra >"$T/dra.log"
    # torchrun started 2 processes per node: 4 ranks, local ranks 0 and 1 on each pod
    check dra-torchrun-two-per-node dra_ranks "$T/dra.log"
    # a claim from a template lives as long as its pod runs; the kubelet unprepared it (the
    # driver removed its CDI spec)
    check dra-claims-gone-after-pods kt_poll -m "no ResourceClaims in $ns" "$WAIT" kq '.items | length == 0' \
        resourceclaims -n "$ns"
    check dra-cdi-specs-removed kt_poll -m "no CDI spec in $D/node/cdi" "$WAIT" dra_no_cdi

    # negative: 5 devices per pod, the node has 4: Pending, and the scheduler says why
    node_tj "$ns" dra-short torch-distributed "python3 -c pass" 2 "" "$(dra_claims five-gpus)" | kc apply -f - >/dev/null
    sel=jobset.sigs.k8s.io/jobset-name=dra-short
    check dra-short-unschedulable-cannot-allocate kt_poll -m "both pods of dra-short Unschedulable: cannot allocate" \
        "$WAIT" dra_unschedulable "$ns" "$sel"
    echo "node: the scheduler on dra-short: $(head -n 1 "$T/dra.msg")"
    check dra-short-ktctl-status-says-why dra_status_says "$ns" dra-short
    check dra-short-claims-unallocated kq '.items | length == 2 and all(.status.allocation == null)' \
        resourceclaims -n "$ns"
    check dra-short-no-cdi-spec dra_no_cdi
    # deleting the TrainJob removes its claims (with its JobSet's pods)
    kc delete trainjob -n "$ns" dra-short --wait=false >/dev/null
    check dra-short-deleted-claims-gone kt_poll -m "no ResourceClaims in $ns" "$WAIT" kq '.items | length == 0' \
        resourceclaims -n "$ns"

    # the driver stopped: its sockets existed (the check sees them), then nothing is left
    kt_node_dra_left >"$T/dra.left"
    check dra-driver-sockets-seen test "$(grep -c '^socket ' "$T/dra.left")" -ge 2
    check dra-driver-stopped-nothing-left kt_node_dra_stop
    kc delete deviceclass "$DRA_CLASS" >/dev/null
}

# dra_bound PODS CLAIMS - each pod's status names its claim, and that claim is reserved for
# exactly that pod (name and uid).
dra_bound() {
    jq -e -n --slurpfile p "$1" --slurpfile c "$2" '$p[0].items | length == 2 and all(. as $pod |
        ($pod.status.resourceClaimStatuses[]? | select(.name == "gpu") | .resourceClaimName) as $cn |
        [$c[0].items[] | select(.metadata.name == $cn) | .status.reservedFor] ==
        [[{resource: "pods", name: $pod.metadata.name, uid: $pod.metadata.uid}]])'
}

# dra_cdi_specs CLAIMS - the driver's CDI spec of each claim is on the node (containerd's
# cdi_spec_dirs) with the claim's parameters in it.
dra_cdi_specs() {
    local uid f
    for uid in $(jq -r '.items[].metadata.uid' "$1"); do
        f=$D/node/cdi/$KT_DRA_DRIVER-$uid-gpus.json
        grep -q '"user_trainjob=dra"' "$f" || { echo "no CDI spec with user_trainjob=dra: $f"; ls "$D/node/cdi"; return 1; }
    done
}

dra_no_cdi() { [ -z "$(find "$D/node/cdi" -type f)" ]; }

# dra_env_seen NS NAME - each pod printed the class's, the claim's and the per-claim variables.
dra_env_seen() {
    tj_logs "$1" "$2" >"$T/dra.env"
    [ "$(grep -c ' admin_class=kt-test-gpu$' "$T/dra.env")" = 2 ] &&
        [ "$(grep -c ' user_trainjob=dra$' "$T/dra.env")" = 2 ] &&
        [ "$(grep -cE " claim_$2_node_0_[01]_[a-z0-9_]*_gpus=true$" "$T/dra.env")" = 2 ]
}

# dra_ranks LOG - 4 ranks in all, local ranks 0 and 1 in each of the 2 pods.
dra_ranks() {
    [ "$(grep -c ' world size 4 rank ' "$1")" = 4 ] &&
        [ "$(grep ' world size 4 rank ' "$1" | awk '{ print $1, $8 }' | sort -u | wc -l)" = 4 ] &&
        [ "$(grep -c ' local_rank 1 ' "$1")" = 2 ]
}

# dra_unschedulable NS SELECTOR - both pods Pending, PodScheduled False Unschedulable, and the
# scheduler's message (kept in $T/dra.msg) says the claims cannot be allocated.
dra_unschedulable() {
    kc get pods -n "$1" -l "$2" -o json | jq -r '.items[] | select(.status.phase == "Pending") |
        .status.conditions[]? | select(.type == "PodScheduled" and .status == "False" and
        .reason == "Unschedulable") | .message' >"$T/dra.msg"
    [ "$(grep -c 'cannot allocate all claims' "$T/dra.msg")" = 2 ]
}

# dra_status_says NS NAME - `ktctl status` waits for scheduling with the scheduler's message.
dra_status_says() {
    build/plain/bin/ktctl status "$2" -n "$1" --kubeconfig "$KT_ADMIN_KUBECONFIG" -o json >"$T/dra.status" || return 1
    jq -r .waitingFor "$T/dra.status"
    jq -e --rawfile m "$T/dra.msg" '.waitingFor | startswith("waiting for scheduling: ") and
        contains("cannot allocate all claims") and (. == "waiting for scheduling: " + ($m | split("\n")[0]))' \
        "$T/dra.status" >/dev/null
}
dra_apply() { dra_objects "$1" | kc apply -f -; }

# A namespaced runtime like torch-distributed whose Job gives up at the first failure and keeps
# the failed pod (the shipped one restarts the container in place and retries with the Job's
# default backoff: minutes on a real node, and the pod is deleted at the end).
runtime_torch_once() {
    kc apply -f - >/dev/null <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-once, namespace: default, labels: {trainer.kubeflow.org/framework: torch}}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              backoffLimit: 0
              template:
                spec:
                  restartPolicy: Never
                  containers:
                    - name: node
                      image: $(kt_node_image_ref torch)
EOF
}

case_torch_fail() {
    runtime_torch_once
    node_tj default boom TrainingRuntime/torch-once "python3 /workspace/fail.py" 1 | kc apply -f - >/dev/null
    check torch-fail-failed node_tj_wait default boom Failed
    check torch-fail-reason cond_is default boom Failed \
        'FailedJobs: jobset failed due to one or more job failures (first failed job: boom-node-0)'
    check torch-fail-exit-code kq '[.items[].status.containerStatuses[0].state.terminated.exitCode] | any(. == 3)' \
        pods -n default -l jobset.sigs.k8s.io/jobset-name=boom
}
# A worker pod deleted mid-run: the Job and the JobSet's failure policy decide, and the TrainJob
# reports what the JobSet decided, as upstream does (its Failed condition is the JobSet's). With
# torch-once (backoffLimit 0, no JobSet restarts) the deletion fails the TrainJob; with the
# shipped runtime (the Job's default backoff, restartPolicy OnFailure) the Job replaces the
# pod, rank 0 restarts in place after gloo loses its peer, and the TrainJob still completes.
case_torch_pod_deleted() {
    runtime_torch_once
    node_tj default cut TrainingRuntime/torch-once "env EPOCHS=100000 torchrun /workspace/train_mnist.py" |
        kc apply -f - >/dev/null
    check torch-pod-deleted-training kt_poll -m "rank 0 training" "$WAIT" logs_say default cut 'rank 0/2 epoch 1 step 2 '
    check torch-pod-deleted-delete-worker delete_worker default cut
    check torch-pod-deleted-failed node_tj_wait default cut Failed
    check torch-pod-deleted-condition-is-the-jobsets cond_from_jobset default cut
    check torch-pod-deleted-reason cond_is default cut Failed \
        'FailedJobs: jobset failed due to one or more job failures (first failed job: cut-node-0)'
    check torch-pod-deleted-no-jobset-restart kq '(.status.restarts // 0) == 0' jobset cut -n default
    # the shipped runtime: the same deletion is retried and the run completes
    node_tj default heal torch-distributed "env EPOCHS=120 torchrun /workspace/train_mnist.py" | kc apply -f - >/dev/null
    check torch-pod-deleted-retried-training kt_poll -m "rank 0 training" "$WAIT" logs_say default heal 'rank 0/2 epoch 1 step 2 '
    check torch-pod-deleted-retried-delete-worker delete_worker default heal
    check torch-pod-deleted-retried-complete node_tj_wait default heal Complete
    check torch-pod-deleted-retried-job-counted kq '.items[0].status.failed >= 1 or
        ([.items[0].status.uncountedTerminatedPods.failed // [] | length] | .[0] >= 1)' \
        jobs -n default -l jobset.sigs.k8s.io/jobset-name=heal
    check torch-pod-deleted-retried-new-worker new_worker default heal
}
# logs_say NS NAME REGEX - the TrainJob's pods' logs have a line matching REGEX.
# (through a file: `grep -q` closing the pipe early would fail it under pipefail)
logs_say() { tj_logs "$1" "$2" >"$T/logs_say" && grep -qE -- "$3" "$T/logs_say"; }
# delete_worker NS NAME - delete the running rank-1 pod (completion index 1), remembering its uid.
delete_worker() {
    local sel="jobset.sigs.k8s.io/jobset-name=$2,batch.kubernetes.io/job-completion-index=1"
    kc get pods -n "$1" -l "$sel" --field-selector=status.phase=Running \
        -o jsonpath='{.items[0].metadata.uid}' >"$T/$2.worker-uid"
    [ -s "$T/$2.worker-uid" ] || { echo "no running rank-1 pod of $2"; return 1; }
    kc delete pods -n "$1" -l "$sel" --wait=false
}
# new_worker NS NAME - an index-1 pod that is not the deleted one ran to Succeeded.
new_worker() {
    kc get pods -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2,batch.kubernetes.io/job-completion-index=1" -o json |
        jq -e --arg old "$(cat "$T/$2.worker-uid")" \
            '[.items[] | select(.metadata.uid != $old and .status.phase == "Succeeded")] | length >= 1' >/dev/null
}
# cond_from_jobset NS NAME - the TrainJob's Failed condition carries the JobSet's reason and message.
cond_from_jobset() {
    local js
    js=$(kc get jobset "$2" -n "$1" -o json | jq -r '.status.conditions[]? | select(.type == "Failed" and .status == "True") | "\(.reason): \(.message)"')
    [ -n "$js" ] && [ "$js" = "$(tj_cond "$1" "$2" Failed)" ] ||
        { echo "jobset '$js', trainjob '$(tj_cond "$1" "$2" Failed)'"; return 1; }
}
# cond_is NS NAME TYPE WANT - the TrainJob's condition TYPE reads "reason: message" = WANT.
cond_is() {
    local got
    got=$(tj_cond "$1" "$2" "$3")
    [ "$got" = "$4" ] || { echo "condition $3: '$got', want '$4'"; return 1; }
}

case_mpi_allreduce() {
    node_tj default allreduce deepspeed-distributed "mpirun -np 2 python3 /workspace/allreduce.py" |
        kc apply -f - >/dev/null
    check mpi-allreduce-complete node_tj_wait default allreduce Complete
    tj_logs default allreduce >"$T/mpi.log"
    check mpi-allreduce-sum grep -q 'sum 3' "$T/mpi.log"
    check mpi-hostfile-secret-from-kt kq '.type == "Opaque" or .type == "kubernetes.io/ssh-auth"' \
        secret allreduce-mpi-ssh-auth -n default
}

case_xgboost() {
    node_tj default xgb xgboost-distributed "python3 /workspace/train_xgboost.py" | kc apply -f - >/dev/null
    check xgboost-complete node_tj_wait default xgb Complete
    tj_logs default xgb >"$T/xgb.log"
    check xgboost-two-workers grep -q 'world size 2' "$T/xgb.log"
}

# ---- the Kubeflow SDK on real pods (the e2e tier's venv: PyPI kubeflow, pinned there) -------
case_sdk() { kt_sdk_case; } # tests/lib_kube.sh

# ---- replicas, failover, upgrade, uninstall under a steady stream of TrainJobs -------------
# loop_start NAME - create suspended TrainJobs NAME-<i> in namespace loop until stopped; each
# create's result goes to $T/NAME.results ("ok" or the error).
loop_start() {
    kt_ns --name loop >/dev/null
    (
        i=0
        while :; do
            i=$((i + 1))
            if out=$(node_tj loop "$1-$i" torch-distributed "python3 -c pass" 1 "  suspend: true" |
                kc create -f - 2>&1); then
                echo "ok $1-$i"
            else
                echo "err $1-$i $out"
            fi
        done
    ) >"$T/$1.results" 2>&1 &
    LOOP_PID=$!
}
loop_stop() {
    kill "$LOOP_PID" 2>/dev/null
    wait "$LOOP_PID" 2>/dev/null
    LOOP_PID=""
}

# every_created_has_jobset NAME - each TrainJob the loop created (its create answered) has its
# JobSet, and every JobSet of the loop belongs to a TrainJob that exists.
every_created_has_jobset() {
    awk '$1 == "ok" { print $2 }' "$T/$1.results" | sort >"$T/$1.want"
    kc get jobsets -n loop -o json | jq -r --arg p "$1-" '.items[].metadata.name | select(startswith($p))' |
        sort >"$T/$1.js"
    kc get trainjobs -n loop -o json | jq -r --arg p "$1-" '.items[].metadata.name | select(startswith($p))' |
        sort >"$T/$1.tj"
    [ -s "$T/$1.want" ] && [ -z "$(comm -23 "$T/$1.want" "$T/$1.js")" ] &&
        [ -z "$(comm -23 "$T/$1.js" "$T/$1.tj")" ]
}

# created NAME - how many of the loop's creates were answered (ok).
node_created() { grep -c '^ok ' "$T/$1.results"; }
created_at_least() { [ "$(node_created "$1")" -ge "$2" ]; }

# none_refused NAME - every create of the loop NAME was admitted; else say how many failed and,
# for the first three, which TrainJob and the API server's error (kubectl's whole message, which
# may span lines: up to the next result line).
none_refused() {
    local n
    n=$(grep -c '^err ' "$T/$1.results")
    [ "$n" = 0 ] && return 0
    echo "$n of $(grep -c -E '^(ok|err) ' "$T/$1.results") creates failed (the first three shown):"
    awk '/^(ok|err) / { keep = ($1 == "err") && (++errs <= 3) } keep' "$T/$1.results"
    return 1
}

# under_load NAME WHAT CMD... - run CMD (the disruption and its own checks) while a client
# creates TrainJobs in a loop: 10 created before it, 10 more after it; then NAME-zero-refused
# (every create was admitted) and NAME-nothing-lost (each got its JobSet, none is stray).
under_load() {
    local name=$1 what=$2 refused
    shift 2
    loop_start "$name"
    kt_poll -m "10 TrainJobs created" "$WAIT" created_at_least "$name" 10
    "$@"
    kt_poll -m "10 more TrainJobs" "$WAIT" created_at_least "$name" $(($(node_created "$name") + 10))
    loop_stop
    refused=$(grep -c '^err ' "$T/$name.results")
    echo "node: $what: $(node_created "$name") admitted, $refused refused or failed"
    check "$name-zero-refused" none_refused "$name"
    check "$name-nothing-lost" kt_poll -m "a JobSet for every TrainJob" "$WAIT" every_created_has_jobset "$name"
}

case_leader_failover() {
    local old
    old=$(leader)
    under_load leader-failover "the leader's pod deleted" delete_leader "$old"
    echo "node: leader $old -> $(leader)"
}

delete_leader() {
    kc -n "$NS" delete pod "$1" --wait=false >/dev/null
    check leader-failover-new-leader kt_poll -m "another pod holds the Lease" "$WAIT" new_leader_is_not "$1"
}

new_leader_is_not() {
    local l
    l=$(leader)
    [ -n "$l" ] && [ "$l" != "$1" ] && kc -n "$NS" get pod "$l" >/dev/null
}

case_helm_upgrade() {
    local next="$KT_TAG-next"
    node_import_kt "$KT_TAG" "$next" || { bad helm-upgrade-image "tagging failed"; return; }
    under_load helm-upgrade "helm upgrade" check helm-upgrade-rolls \
        node_helm upgrade kt "$CHART" -n "$NS" --reuse-values --set image.tag="$next" --wait --timeout 180s
    # (the replaced pods finish their preStop sleep after helm's --wait)
    check helm-upgrade-new-image kt_poll -m "only pods of kt:$next" "$WAIT" \
        kq "[.items[].spec.containers[0].image] | all(. == \"kt:$next\") and length == 4" pods -n "$NS"
}

# Three kt-webhook replicas behind the Service, under the create loop: a pod deleted the normal
# way (its preStop sleep keeps it serving while the endpoints drop it) refuses no admission; a
# pod force-deleted (no grace: calls in flight to it fail, failurePolicy Fail refuses them) is
# counted and printed, and the Service recovers: the last ten creates are admitted, nothing lost.
case_webhook_replicas() {
    check webhook-replicas-three node_helm upgrade kt "$CHART" -n "$NS" --reuse-values \
        --set webhook.replicas=3 --wait --timeout 180s
    check webhook-replicas-three-ready kt_poll -m "3 kt-webhook pods Ready" "$WAIT" webhook_pods_ready 3
    under_load webhook-pod-deleted "a kt-webhook pod deleted" delete_webhook_pod
    local name=webhook-pod-killed refused
    loop_start "$name"
    kt_poll -m "10 TrainJobs created" "$WAIT" created_at_least "$name" 10
    kc -n "$NS" delete pod "$(webhook_pod)" --grace-period=0 --force >/dev/null 2>&1
    kt_poll -m "10 more TrainJobs" "$WAIT" created_at_least "$name" $(($(node_created "$name") + 10))
    loop_stop
    refused=$(grep -c '^err ' "$T/$name.results")
    echo "node: a kt-webhook pod force-deleted: $(node_created "$name") admitted, $refused refused or failed"
    check "$name-recovers" test "$(tail -n 10 "$T/$name.results" | grep -c '^ok ')" = 10
    check "$name-nothing-lost" kt_poll -m "a JobSet for every TrainJob" "$WAIT" every_created_has_jobset "$name"
    check webhook-replicas-back-to-three kt_poll -m "3 kt-webhook pods Ready" "$WAIT" webhook_pods_ready 3
}

webhook_pod() {
    kc -n "$NS" get pods -l app.kubernetes.io/component=webhook -o jsonpath='{.items[0].metadata.name}'
}
webhook_pods_ready() {
    kq "[.items[] | select(.metadata.deletionTimestamp == null) | select(.status.conditions[]? |
        .type == \"Ready\" and .status == \"True\")] | length == $1" pods -n "$NS" -l app.kubernetes.io/component=webhook
}
delete_webhook_pod() {
    kc -n "$NS" delete pod "$(webhook_pod)" --wait=false >/dev/null
    check webhook-pod-deleted-replaced kt_poll -m "3 kt-webhook pods Ready again" "$WAIT" webhook_pods_ready 3
}

case_helm_uninstall() {
    check helm-uninstall node_helm uninstall kt -n "$NS" --wait --timeout 120s
    check helm-uninstall-no-pods kt_poll -m "kt pods gone" "$WAIT" kq '.items | length == 0' pods -n "$NS" \
        -l app.kubernetes.io/component
    # negative: without kt-webhook's Service the API server refuses TrainJobs (failurePolicy
    # Fail) only while the webhook configurations exist; uninstall removed them, so a create
    # is admitted by the schema alone
    check helm-uninstall-webhooks-gone bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' get validatingwebhookconfiguration validator.trainer.kubeflow.org"
}

# ---- the same install with kustomize -----------------------------------------------------
# `kubectl apply --server-side -k` of an overlay of deploy/ (kt's image as deploy/ names it;
# the runtimes' images rewritten by kustomize's `images:`, as an air-gapped user would): both
# Deployments available on the real node, a TrainJob trains, `kubectl delete -k` removes kt.
case_kustomize() {
    local o=$ROOT/build/node-kustomize
    rm -rf "$o" && mkdir -p "$o"
    {
        echo "resources: [../../deploy]"
        echo "images:"
        runtime_images "  "
    } >"$o/kustomization.yaml"
    check kustomize-apply kc apply --server-side --force-conflicts -k "$o"
    check kustomize-deployments-available kt_poll -m "both Deployments available" "$WAIT" \
        kq '[.items[] | .status.availableReplicas >= 1 and .status.availableReplicas == .spec.replicas] | all and length == 2' \
        deploy -n "$NS"
    check kustomize-runtime-image-rewritten kq \
        '.spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image | startswith("kt.local/torch:")' \
        clustertrainingruntime torch-distributed
    check kustomize-webhook-ready kt_poll -m "kt-webhook answers through its Service" "$WAIT" webhook_denies
    node_tj default kz-ddp torch-distributed "torchrun /workspace/train_mnist.py" | kc apply -f - >/dev/null
    check kustomize-torch-ddp-complete node_tj_wait default kz-ddp Complete
    # (the namespace goes too: deploy/ creates it)
    check kustomize-delete kc delete -k "$o" --ignore-not-found --wait=true --timeout=120s
    check kustomize-delete-no-pods kt_poll -m "kt pods gone" "$WAIT" kq '.items | length == 0' pods -n "$NS"
}

# webhook_denies - a TrainJob naming a missing runtime is denied by kt-webhook (not by an
# unreachable webhook: the message is kt's).
webhook_denies() {
    local out
    out=$(tj_missing_runtime | kc create --dry-run=server -f - 2>&1)
    [[ "$out" == *'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.RuntimeRef: Invalid value'* ]]
}
