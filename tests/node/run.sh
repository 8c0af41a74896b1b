#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/node/run.sh [CASE...] - the real-node tier (docs/development.md#a-real-node-upsh---real-node): the full local chain
# with a real node (tests/cluster/up.sh --real-node: containerd, runc, CNI, kubelet, kube-proxy,
# CoreDNS), kt installed by `helm install` of deploy/helm/kt from its own image (`make image`,
# imported into the node's containerd) as Pods, and TrainJobs whose containers really train,
# in images built from Debian packages (tests/cluster/images): torch DDP over gloo, OpenMPI
# over SSH with kt's hostfile and keys, XGBoost with kt's tracker variables.
# Where the machine cannot run containers, up.sh says why in one line and this tier says it is
# skipped (nothing is faked). Each case prints `ok NAME` / `FAIL NAME: why`; the last line is
# "N passed, N failed". CASE... restricts the run to cases whose name contains one of the words
# (KT_ONLY=node/*CASE; tests/lib.sh). Knobs: KT_KEEP=1 keeps the cluster up and its folder
# (tests/cluster/down.sh DIR stops it); KT_STOP=1 stops at the first failure (and keeps them);
# KT_NODE_DIR=DIR runs the cases on such a kept cluster instead of a new one; KT_NODE_WAIT
# (seconds of a bounded wait, default 240).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT" || exit 1
. tests/lib_kube.sh
KT_TIER=node
[ $# -eq 0 ] || KT_ONLY=$(kt_only_args node "$@")
t_start=$SECONDS
# shellcheck disable=SC2034 # WAIT: read by tests/node/cases.sh and lib.sh (kt_poll)
WAIT=${KT_NODE_WAIT:-240}
NS=kubeflow-system
# shellcheck disable=SC2034 # CHART: read by tests/node/cases.sh, sourced below
CHART=$ROOT/deploy/helm/kt
D=$(mktemp -d "${TMPDIR:-/tmp}/kt-node.XXXXXX")
# shellcheck disable=SC2034 # LOOP_PID: set by tests/node/cases.sh, read by the cleanup
LOOP_PID=""
DOWN_DONE=0
[ "${KT_KEEP:-}" = 1 ] && [ -z "${KT_NODE_DIR:-}" ] && echo "node: the cluster is kept: $D (tests/cluster/down.sh $D)"
kt_cleanup '[ "${KT_KEEP:-}" = 1 ] || { [ "$DOWN_DONE" = 1 ] || tests/cluster/down.sh "$D"; rm -rf "$D"; }'
kt_cleanup '[ -z "$LOOP_PID" ] || kill "$LOOP_PID"'
trap 'exit 130' INT TERM

# node_logs - the node's and kt's last lines, after a failure.
node_logs() {
    local f
    for f in "$D"/kubelet.log "$D"/containerd.log "$D"/jobset.log "$D"/coredns.log "$D"/kube-proxy.log; do
        [ -f "$f" ] && { echo "----- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
    [ -n "${KT_KUBECTL:-}" ] && kc -n "$NS" logs -l app.kubernetes.io/component=controller-manager \
        --tail=30 --prefix 2>/dev/null
}
kt_on_fail node_logs


# ---- the cluster -------------------------------------------------------------------------
t0=$SECONDS
if [ -n "${KT_NODE_DIR:-}" ]; then # reuse a kept cluster (development; cases must be re-runnable)
    rmdir "$D"
    D=$KT_NODE_DIR
    KT_KEEP=1
    echo "cluster: full chain with a real node ready in 0s (reused $D)" >"$T/up.log"
elif ! tests/cluster/up.sh --real-node "$D" >/dev/null 2>"$T/up.log"; then
    cat "$T/up.log"
    bad cluster-up "tests/cluster/up.sh --real-node failed"
    kt_finish
fi
. "$D/env"
if [ "${KT_REAL_NODE:-}" != 1 ]; then
    grep 'real node unavailable' "$T/up.log" | sed 's/^cluster: /node: tier skipped: /'
    kt_finish
fi
grep 'ready in' "$T/up.log" | sed 's/^cluster: /node: /'
HELM=$(tests/helm/build-helm.sh)
node_helm() { "$HELM" --kubeconfig "$KT_ADMIN_KUBECONFIG" "$@"; }
. "$here/lib.sh"
echo "node: cluster up in $((SECONDS - t0))s"

. "$here/cases.sh"
for c in $NODE_CASES; do
    kt_only "node/$c" || continue
    t=$SECONDS
    "case_${c//-/_}"
    echo "node: case $c: $((SECONDS - t))s"
done
# `make run` while this cluster holds the node: it says so and runs on KWOK nodes.
. "$here/make_run.sh"
if kt_only node/make-run; then
    t=$SECONDS
    make_run_busy
    echo "node: case make-run-busy: $((SECONDS - t))s"
fi
# The teardown is a check too: the pods drained, every process stopped and the machine as it
# was before (tests/cluster/node.sh compares its fingerprint: links, iptables chains, mounts,
# cgroups, network namespaces, the kubelet's directories, sysctls, shims).
if [ "${KT_KEEP:-}" != 1 ]; then
    t=$SECONDS
    check node-teardown-machine-as-before tests/cluster/down.sh "$D"
    echo "node: teardown: $((SECONDS - t))s"
    DOWN_DONE=1
fi
# `make run` on the real node, once the tier's cluster has released it (one real node per
# machine): scripts/demo/run.sh with stdin closed and KT_RUN_NODE=real; before it, a real node
# killed without its teardown, which that run must reap.
if [ "$DOWN_DONE" = 1 ] && kt_only node/make-run; then
    t=$SECONDS
    stale_node
    echo "node: case stale-node: $((SECONDS - t))s"
    t=$SECONDS
    make_run_real
    echo "node: case make-run-real: $((SECONDS - t))s"
fi
echo "node wall time: $((SECONDS - t_start))s"
kt_finish
