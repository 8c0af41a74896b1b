#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/cluster/up.sh [--full | --sim] [--real-node] DIR [-- EXTRA_APISERVER_FLAGS...] - start etcd + kube-apiserver on
# free ports, install our CRDs (api/*.yaml) and the external ones (JobSet, PodGroups), create the
# kubeflow-system namespace and write DIR/env. Stop it with tests/cluster/down.sh DIR.
# --full also starts the rest of a cluster minus the container runtime (tests/cluster/full.sh):
# kube-controller-manager, kube-scheduler, scheduler-plugins' Coscheduling scheduler, the JobSet
# controller with its webhooks, and KWOK with KT_NODES fake nodes; DIR/env then has KT_FULL=1.
# --sim starts the simulated chain instead (controller benchmarks, docs/benchmarks.md#simulated-chain):
# KWOK alone, whose Stages for the JobSet kind (tests/cluster/kwok/jobset-stages.yaml) report each
# JobSet running and then Completed the way the JobSet controller does, with no JobSet controller,
# Jobs, pods, schedulers or controller-manager; DIR/env then has KT_SIM=1.
# --real-node (implies --full) adds a real node (tests/cluster/node.sh): containerd, runc, CNI,
# kubelet, kube-proxy and CoreDNS, where containers really run; the KWOK nodes are then tainted
# kwok.x-k8s.io/node=fake:NoSchedule so only pods that tolerate it land there. DIR/env then has
# KT_REAL_NODE=1. Where the machine cannot run containers (not root, no cgroups, packages
# missing; with KT_REAL_NODE_OPTIONAL=1 also: the node held by another live cluster) it says why
# in one line and goes on with KWOK nodes only (KT_REAL_NODE unset).
# On failure the logs are printed and everything started is stopped again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

up_usage() {
    echo "usage: $0 [--full | --sim] [--real-node] DIR [-- EXTRA_APISERVER_FLAGS...]" >&2
    exit 2
}
FULL=0
REAL=0
SIM=0
while [ $# -gt 0 ]; do
    case "$1" in
    --full) FULL=1 ;;
    --real-node) FULL=1 REAL=1 ;;
    --sim) SIM=1 ;;
    *) break ;;
    esac
    shift
done
[ $# -ge 1 ] || up_usage
[ "$SIM" = 0 ] || [ "$FULL" = 0 ] || up_usage
D=$1
shift
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || up_usage
    shift
fi
t0=$(date +%s%N)

if [ ! -x "$KT_BIN/kube-apiserver" ] || [ ! -x "$KT_BIN/kubectl" ] || [ ! -x "$KT_BIN/etcd" ] ||
    [ ! -f "$KT_BIN/crds/.done" ] || [ ! -x "$(kt_certgen_bin)" ]; then
    "$root/scripts/cluster/build.sh" >/dev/null
fi
if [ "$FULL" = 1 ]; then
    for b in kube-controller-manager kube-scheduler "kube-scheduler-plugins-$SCHEDPLUGINS_VERSION" \
        "jobset-$JOBSET_VERSION" "kwok-$KWOK_VERSION"; do
        if [ ! -x "$KT_BIN/$b" ]; then
            "$root/scripts/cluster/build.sh" --chain >/dev/null
            break
        fi
    done
fi
if [ "$SIM" = 1 ] && [ ! -x "$KT_BIN/kwok-$KWOK_VERSION" ]; then
    "$root/scripts/cluster/build.sh" --chain >/dev/null
fi
if [ "$REAL" = 1 ]; then
    . "$here/full.sh"
    . "$here/node.sh"
    for b in $(kt_node_bins); do
        [ -x "$KT_BIN/$b" ] || "$root/scripts/cluster/build.sh" --full >/dev/null
    done
    no_node=$(kt_node_unavailable)
    # KT_REAL_NODE_OPTIONAL=1 (make run): a node held by another live cluster is a reason too.
    [ -n "$no_node" ] || [ "${KT_REAL_NODE_OPTIONAL:-}" != 1 ] ||
        no_node=$(kt_node_busy "$(cd "$D" 2>/dev/null && pwd || echo "$D")")
    if [ -n "$no_node" ]; then
        kt_log "real node unavailable: $no_node; pods run on KWOK nodes only"
        REAL=0
    fi
fi

mkdir -p "$D"
D=$(cd "$D" && pwd)
if [ -f "$D/env" ] && { kt_alive "$(kt_env_get "$D" KT_APISERVER_PID)" ||
    kt_alive "$(kt_env_get "$D" KT_ETCD_PID)"; }; then
    kt_log "$D already has a running cluster; run down.sh first"
    exit 1
fi
rm -f "$D/env" "$D"/*.log
: >"$D/apiserver.flags"
[ $# -eq 0 ] || printf '%s\n' "$@" >"$D/apiserver.flags"

ok=0
up_cleanup() {
    kt_port_unlock
    if [ "$ok" -ne 1 ]; then
        kt_log "up.sh failed; logs follow"
        kt_print_logs "$D"
        for f in "$D"/kcm.log "$D"/scheduler.log "$D"/schedplugins.log "$D"/jobset.log "$D"/kwok.log \
            "$D"/containerd.log "$D"/kubelet.log "$D"/kube-proxy.log "$D"/coredns.log; do
            [ -f "$f" ] && { echo "----- $f (last 40 lines) -----"; tail -n 40 "$f"; } >&2
        done
        [ -f "$D/crds.log" ] && { echo "----- $D/crds.log -----"; cat "$D/crds.log"; } >&2
        "$here/down.sh" "$D" || true
        kt_log "up.sh failed${why:+: $why}"
    fi
}
trap up_cleanup EXIT
why=""
set -E # the ERR trap also inside functions: a failing step names its line
trap 'why="line $LINENO: $BASH_COMMAND"' ERR

[ "$REAL" = 0 ] || kt_node_prepare "$D"
kt_gen_certs "$D"

data=""
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    data=$(mktemp -d /dev/shm/kt-etcd.XXXXXX)
else
    data="$D/etcd-data"
    mkdir -p "$data"
fi
kt_env_set "$D" KT_ETCD_DATA "$data"
kt_env_set "$D" KT_CA "$D/ca.crt"
kt_env_set "$D" KT_SA_KEY "$D/sa.key"
kt_env_set "$D" KT_SA_PUB "$D/sa.pub"
kt_env_set "$D" KT_KUBECTL "$KT_BIN/kubectl"
kt_env_set "$D" KT_BIN "$KT_BIN"
kt_env_set "$D" KT_CLUSTER_DIR "$D"

kt_port_lock
ep='' pp='' ap='' # kt_pick_port sets each
kt_pick_port ep
kt_pick_port pp
kt_pick_port ap
kt_env_set "$D" KT_ETCD "http://127.0.0.1:$ep"
kt_env_set "$D" KT_APISERVER_PORT "$ap"
kt_env_set "$D" KT_APISERVER "https://127.0.0.1:$ap"

# The backend quota at etcd's largest (8 GiB) rather than its 2 GiB default: `make scale` at
# N = 50,000 stores that many TrainJobs, JobSets and ConfigMaps, with their history until the
# API server's compaction.
"$KT_BIN/etcd" --name kt --data-dir "$data" \
    --listen-client-urls "http://127.0.0.1:$ep" --advertise-client-urls "http://127.0.0.1:$ep" \
    --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
    --initial-cluster "kt=http://127.0.0.1:$pp" \
    --unsafe-no-fsync=true --quota-backend-bytes=8589934592 --log-level=warn \
    </dev/null >"$D/etcd.log" 2>&1 9>&- &
epid=$!
disown "$epid" 2>/dev/null || true
kt_env_set "$D" KT_ETCD_PID "$epid"

kt_start_apiserver "$D" "$@" >/dev/null
apid=$(kt_env_get "$D" KT_APISERVER_PID)
kt_wait_listen "$epid" "$ep" etcd
kt_wait_listen "$apid" "$ap" kube-apiserver
kt_port_unlock

for n in admin webhook controller-manager; do
    kt_kubeconfig "$D" "$n" "$n"
done
kt_env_set "$D" KT_ADMIN_KUBECONFIG "$D/admin.kubeconfig"
kt_env_set "$D" KT_WEBHOOK_KUBECONFIG "$D/webhook.kubeconfig"
kt_env_set "$D" KT_RECONCILER_KUBECONFIG "$D/controller-manager.kubeconfig"
kt_wait_ready "$D" "$apid"
ms_ready=$((($(date +%s%N) - t0) / 1000000))

k() { "$KT_BIN/kubectl" --kubeconfig "$D/admin.kubeconfig" --cache-dir "$D/kubectl-cache" "$@"; }
crds=()
for f in "$root"/api/*.yaml "$KT_BIN"/crds/*.yaml; do
    if [ -f "$f" ] && grep -q '^kind: CustomResourceDefinition' "$f"; then
        crds+=(-f "$f")
    fi
done
k apply --server-side --force-conflicts "${crds[@]}" >"$D/crds.log" 2>&1 || {
    cat "$D/crds.log" >&2
    exit 1
}
# Bounded poll until every CRD is Established (one list per round; no watch to be cut).
deadline=$((SECONDS + KT_READY_TIMEOUT))
until k get crd -o json 2>>"$D/crds.log" | jq -e '[.items[] | [.status.conditions[]? |
        select(.type == "Established" and .status == "True")] | length == 1] | all' >/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        cat "$D/crds.log" >&2
        kt_log "CRDs not Established after ${KT_READY_TIMEOUT}s"
        exit 1
    fi
    sleep 0.1
done
k create namespace kubeflow-system >/dev/null
if [ "$FULL" = 1 ]; then
    . "$here/full.sh"
    kt_full_start
fi
if [ "$SIM" = 1 ]; then
    . "$here/full.sh"
    kt_port_lock
    kt_full_sim
    kt_port_unlock
fi
if [ "$REAL" = 1 ]; then
    kt_node_start
    k taint nodes -l type=kwok kwok.x-k8s.io/node=fake:NoSchedule >/dev/null
fi

ok=1
ms=$((($(date +%s%N) - t0) / 1000000))
what=""
[ "$FULL" = 1 ] && what="full chain "
[ "$SIM" = 1 ] && what="simulated chain "
[ "$REAL" = 1 ] && what="full chain with a real node "
kt_log "${what}ready in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s (/readyz after $((ms_ready / 1000)).$(printf '%03d' $((ms_ready % 1000)))s, then CRDs): $(kt_env_get "$D" KT_APISERVER)"
echo "export KUBECONFIG=$D/admin.kubeconfig  # kubectl: $KT_BIN/kubectl" >&2
