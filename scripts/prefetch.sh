#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/prefetch.sh - what `make test` starts in the background at its first step: every cached
# build a later tier needs, so that on a fresh machine the builds overlap the tiers before them
# instead of running one after another inside them. Two lanes run side by side, at low priority
# (nice 10: the tier in the foreground keeps the CPU when it wants it):
#   go:  the cluster's binaries in the order the tiers need them (scripts/cluster/build.sh, then
#        --full), upstream's manager (parity, switch), helm, Prometheus and promtool;
#   net: what is mostly download and unpacking: the Go modules of the Go lane's wrapper modules,
#        the Kubeflow SDK's venv, the real node's images (mmdebstrap).
# Every builder it calls is the one the tier calls, with the same cache and lock (flock), so a
# tier that gets there first simply waits for the build in progress and then finds the binary;
# on a warm machine every step is a file check. Nothing here counts as a test: a failed build is
# logged (the tier that needs it fails with its own message). Prints one line per step with its
# time; the last line is "prefetch: done in Ns".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
export GOWORK=off GOTOOLCHAIN=local
renice -n 10 $$ >/dev/null 2>&1 || true # every build below inherits the low priority

# step LANE NAME CMD... - run CMD (a command or a function below), its output to the log; one
# timing line.
step() {
    local lane=$1 name=$2 t0=$SECONDS rc
    shift 2
    "$@" >"$LOG_DIR/$lane-$name.log" 2>&1 </dev/null
    rc=$?
    if [ $rc = 0 ]; then
        echo "prefetch: $lane: $name ready ($((SECONDS - t0))s)"
    else
        echo "prefetch: $lane: $name FAILED ($((SECONDS - t0))s, rc=$rc): $(tail -n 2 "$LOG_DIR/$lane-$name.log" | tr '\n' ' ' | cut -c1-300)"
    fi
}

# modules - `go mod download` of every wrapper module the Go lane builds from (read-only: the
# committed go.sum files pin them), so that lane spends its time compiling.
modules() {
    local m w
    for m in scripts/cluster/modules/etcd scripts/cluster/modules/k8s scripts/cluster/modules/jobset scripts/cluster/modules/kwok \
        scripts/cluster/modules/coredns scripts/cluster/modules/containerd tests/parity/upstream; do
        [ -f "$m/go.mod" ] || continue
        w=$(mktemp -d)
        cp "$m"/go.* "$w/"
        (cd "$w" && GOFLAGS=-mod=readonly go mod download) || {
            rm -rf "$w"
            return 1
        }
        rm -rf "$w"
    done
}

# sdk - the Kubeflow SDK's venv (tests/lib_kube.sh sdk_python, the same lock).
sdk() {
    # shellcheck source=tests/lib_kube.sh
    . tests/lib_kube.sh
    sdk_python || {
        tail -n 5 "$T/pip.log"
        return 1
    }
}

# upstream - upstream trainer's manager (tests/parity/upstream_lib.sh up_build).
upstream() {
    # shellcheck source=tests/parity/upstream_lib.sh
    . tests/parity/upstream_lib.sh
    up_build
}

lane_go() {
    # In the order make test's tiers first need them: integration, its run-demo test (the
    # full chain, run last in that tier), parity, helm, e2e (Prometheus), the real node.
    step go cluster scripts/cluster/build.sh
    step go cluster-full scripts/cluster/build.sh --full
    step go upstream upstream
    step go helm tests/helm/build-helm.sh
    step go prometheus tests/monitoring/build-prometheus.sh
    step go promtool tests/monitoring/build-promtool.sh
}

lane_net() {
    step net go-modules modules
    step net sdk sdk
    # The real node's images need root (mmdebstrap --mode=root); its tier says why when not.
    if [ "$(id -u)" = 0 ]; then
        step net images tests/cluster/images/build.sh pause torch mpi xgboost
    fi
}

LOG_DIR=${1:-build/prefetch}
mkdir -p "$LOG_DIR"
t_all=$SECONDS
lane_go &
go_pid=$!
lane_net &
net_pid=$!
wait "$go_pid" "$net_pid"
echo "prefetch: done in $((SECONDS - t_all))s"
