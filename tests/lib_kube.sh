# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/lib_kube.sh - the Kubernetes fixture on top of tests/lib.sh (sourced after a cluster's
# env file from tests/cluster/up.sh: KT_KUBECTL, KT_ADMIN_KUBECONFIG, KT_CLUSTER_DIR).
#   kc ARGS...               kubectl as the cluster admin
#   kt_ns PREFIX             a fresh namespace PREFIX-xxxxxxxx (printed), dumped when its test fails
#   kt_ns --name NAME        the namespace NAME, made when missing (shared by cases), dumped likewise
#   kt_dump_namespaces [F]   TrainJobs, JobSets, pods and events of the namespaces made (or of F)
#   kq FILTER GET_ARGS...    `kubectl get GET_ARGS -o json` satisfies the jq FILTER
#   tj_state NS NAME         the TrainJob's True conditions, comma-separated
#   tj_cond NS NAME TYPE     "reason: message" of the TrainJob's condition TYPE
#   tj_finished NS NAME      the TrainJob is Complete or Failed
#   kt_sdk_case              the Kubeflow SDK case of the e2e and real-node tiers

# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kc() {
    "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" --cache-dir "${KT_CLUSTER_DIR:-$T}/kubectl-cache" "$@"
}

# kt_ns PREFIX - create a fresh namespace (no namespace controller may run to reuse one) and
# print its name; recorded for kt_dump_namespaces. kt_ns --name NAME: the namespace NAME (made
# when missing: cases share it, a kept cluster is reused).
kt_ns() {
    local ns
    if [ "$1" = --name ]; then
        ns=$2
        kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null || return 1
    else
        ns="$1-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
        kc create namespace "$ns" >/dev/null || return 1
    fi
    echo "$ns" >>"$T/.namespaces"
    [ -f "$T/.test-namespaces" ] && echo "$ns" >>"$T/.test-namespaces"
    echo "$ns"
}

# kt_dump_namespaces [FILE] - for each namespace in FILE (default: every one kt_ns made), its
# TrainJobs, JobSets and pods (wide) and its events, oldest first; at most 60 lines each.
kt_dump_namespaces() {
    local f=${1:-$T/.namespaces} ns
    [ -s "$f" ] || return 0
    sort -u "$f" | while read -r ns; do
        echo "---- namespace $ns"
        {
            kc get trainjobs.trainer.kubeflow.org,jobsets.jobset.x-k8s.io,pods -n "$ns" -o wide
            kc get events -n "$ns" --sort-by=.lastTimestamp
        } 2>&1 | sed -n 1,60p
    done
}

kq() {
    local f=$1
    shift
    kc get "$@" -o json 2>/dev/null | jq -e "$f" >/dev/null
}

tj_state() {
    kc get trainjob "$2" -n "$1" -o json 2>/dev/null |
        jq -r '[.status.conditions[]? | select(.status == "True") | .type] | join(",")'
}

# tj_finished NS NAME - the TrainJob is Complete or Failed.
tj_finished() {
    local st
    st=",$(tj_state "$1" "$2"),"
    [[ $st == *,Complete,* || $st == *,Failed,* ]]
}

tj_cond() {
    kc get trainjob "$2" -n "$1" -o json 2>/dev/null |
        jq -r --arg t "$3" '.status.conditions[]? | select(.type == $t) | "\(.reason): \(.message)"'
}

# The Kubeflow SDK (PyPI `kubeflow`, pinned) in a venv in the cache outside the repo, one per
# version; used by the e2e and real-node tiers.
KT_SDK_VERSION=0.5.0
# sdk_python - print the venv's python, making the venv when missing (pip's log: $T/pip.log).
# One maker at a time (flock on VENV.lock: scripts/prefetch.sh may be making it in the background).
sdk_python() {
    local v="${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/sdk/kubeflow-$KT_SDK_VERSION" rc=0
    mkdir -p "$(dirname "$v")"
    exec 6>"$v.lock"
    flock -w 1800 6 || rc=1
    if [ $rc = 0 ] && { [ ! -x "$v/bin/python" ] || ! "$v/bin/python" -c 'import kubeflow.trainer' 2>/dev/null; }; then
        rm -rf "$v"
        { python3 -m venv "$v" && "$v/bin/pip" install -q "kubeflow==$KT_SDK_VERSION"; } >"$T/pip.log" 2>&1 ||
            rc=1
    fi
    exec 6>&-
    [ $rc = 0 ] && echo "$v/bin/python"
}

# kt_sdk_case - the Kubeflow SDK case of the e2e and real-node tiers: tests/$KT_TIER/sdk_test.py
# in sdk_python's venv against namespace $KT_TIER-sdk; its `ok` / `FAIL` lines become this
# script's (and an exit without a FAIL line one failure).
kt_sdk_case() {
    local py rc
    py=$(sdk_python) || {
        bad sdk-install "$(tail -5 "$T/pip.log")"
        return
    }
    kt_ns --name "$KT_TIER-sdk" >/dev/null
    KUBECONFIG=$KT_ADMIN_KUBECONFIG "$py" "$KT_ROOT/tests/$KT_TIER/sdk_test.py" "$KT_TIER-sdk" >"$T/sdk.out" 2>&1
    rc=$?
    kt_relay "$T/sdk.out"
    [ $rc -eq 0 ] || [ "$(grep -c '^FAIL ' "$T/sdk.out")" -gt 0 ] || bad sdk-run "exit $rc: $(tail -15 "$T/sdk.out")"
}
