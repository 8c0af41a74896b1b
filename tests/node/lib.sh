# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/node/lib.sh - helpers of the real-node tier (sourced by tests/node/run.sh after the
# cluster is up: kc, node_helm, D, T, WAIT and NS are set). The test images come through the
# cluster's own helpers (tests/cluster/node.sh): kt_node_image_ref NAME (the reference pods
# use) and kt_node_images NAME... (build when needed, import; log in $D/images.log).
. tests/cluster/lib.sh
. tests/cluster/full.sh # kt_full_spawn (kt_node_dra_start)
. tests/cluster/node.sh

# node_ctr ARGS... - ctr on the node's containerd, Kubernetes' namespace.
node_ctr() { ctr --address "$KT_CONTAINERD_SOCK" -n k8s.io "$@"; }


# node_tj_wait NS NAME WANT - bounded poll until the TrainJob has condition WANT (Complete or
# Failed); fails early on the other terminal condition, printing its pods and their logs.
node_tj_wait() {
    local st
    kt_poll "$WAIT" tj_finished "$1" "$2" 2>/dev/null
    st=$(tj_state "$1" "$2")
    case ",$st," in *",$3,"*) return 0 ;; esac
    echo "TrainJob $1/$2: conditions '${st:-none}', wanted $3: $(tj_cond "$1" "$2" Failed)"
    kc get pods -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" -o wide 2>&1 | sed -n 1,10p
    kc logs -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" --prefix --tail=15 2>&1 | sed -n 1,40p
    return 1
}


# tj_logs NS NAME - the logs of every pod of the TrainJob, each line prefixed with its pod.
tj_logs() {
    local p
    for p in $(kc get pods -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" -o name); do
        kc logs -n "$1" "$p" --all-containers 2>&1 | sed "s|^|${p#pod/} |"
    done
}


# pod_wait NS NAME WANT - bounded poll until the pod reaches phase WANT (Succeeded or Failed);
# fails early on the other terminal phase, printing the pod, its log and its events.
pod_wait() {
    local ph
    kt_poll "$WAIT" kq '.status.phase == "Succeeded" or .status.phase == "Failed"' pod "$2" -n "$1" 2>/dev/null
    ph=$(kc get pod "$2" -n "$1" -o jsonpath='{.status.phase}' 2>/dev/null)
    [ "$ph" = "$3" ] && return 0
    echo "pod $1/$2: phase '${ph:-none}', wanted $3"
    kc logs -n "$1" "$2" --tail=20 2>&1
    kc get events -n "$1" --field-selector "involvedObject.name=$2" \
        -o custom-columns=REASON:.reason,MESSAGE:.message --no-headers 2>&1 | tail -n 8
    return 1
}


# leader - the holder of kt-reconciler's Lease (a pod name).
leader() {
    kc -n "$NS" get lease trainer.kubeflow.org -o jsonpath='{.spec.holderIdentity}' 2>/dev/null |
        sed 's/_.*//'
}
