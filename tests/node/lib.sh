# tests/node/lib.sh - helpers of the real-node tier (sourced by tests/node/run.sh after the
# cluster is up: kc, helm, D, T, WAIT and NS are set).



# image_ref NAME - the reference of a test image (tests/cluster/images; built and imported by
# up.sh --real-node or node_images).
image_ref() {
    tests/cluster/images/build.sh "$1" 2>>"$D/images.log" | awk -v n="$1" '$1 == n { print $2 }'
}

# node_images NAME... - build (cached) and import test images into the node's containerd.
node_images() {
    tests/cluster/images/import.sh "$KT_CONTAINERD_SOCK" "$@" >>"$D/images.log" 2>&1
}

# node_ctr ARGS... - ctr on the node's containerd, Kubernetes' namespace.
node_ctr() { ctr --address "$KT_CONTAINERD_SOCK" -n k8s.io "$@"; }


# tj_wait NS NAME WANT - bounded poll until the TrainJob has condition WANT (Complete or
# Failed); fails early on the other terminal condition, printing its pods and their logs.
tj_wait() {
    local st deadline=$((SECONDS + WAIT))
    while :; do
        st=$(tj_state "$1" "$2")
        case ",$st," in *",$3,"*) return 0 ;; esac
        case ",$st," in *,Complete,* | *,Failed,*) break ;; esac
        [ $SECONDS -lt $deadline ] || break
        sleep 0.5
    done
    echo "TrainJob $1/$2: conditions '${st:-none}', wanted $3: $(tj_cond "$1" "$2" Failed)"
    kc get pods -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" -o wide 2>&1 | head -10
    kc logs -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" --prefix --tail=15 2>&1 | head -40
    return 1
}


# tj_logs NS NAME - the logs of every pod of the TrainJob, each line prefixed with its pod.
tj_logs() {
    local p
    for p in $(kc get pods -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" -o name); do
        kc logs -n "$1" "$p" --all-containers 2>&1 | sed "s|^|${p#pod/} |"
    done
}


# leader - the holder of kt-reconciler's Lease (a pod name).
leader() {
    kc -n "$NS" get lease trainer.kubeflow.org -o jsonpath='{.spec.holderIdentity}' 2>/dev/null |
        sed 's/_.*//'
}
