#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/cluster_harness.sh ENV_FILE - the harness itself (docs/development.md#the-real-control-plane-tests-and-make-run):
# the env file, the daemon identities (authenticated, no rights without deploy/rbac bindings),
# restart-apiserver.sh over the same etcd, a second concurrent cluster, a failed start that
# cleans up, and down.sh leaving nothing running.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
cl=$it_root/tests/cluster

for v in KT_APISERVER KT_CA KT_ETCD KT_SA_KEY KT_ADMIN_KUBECONFIG KT_WEBHOOK_KUBECONFIG \
    KT_RECONCILER_KUBECONFIG KT_KUBECTL KT_ETCD_PID KT_APISERVER_PID; do
    if [ -n "${!v:-}" ]; then
        ok "env-$v"
    else
        bad "env-$v" "missing from $1"
    fi
done
if "$KT_KUBECTL" version --client -o json | jq -e '.clientVersion.gitVersion | startswith("v1.35.")' >/dev/null; then
    ok kubectl-1.35
else
    bad kubectl-1.35 "KT_KUBECTL is $("$KT_KUBECTL" version --client 2>&1 | sed -n 1p)"
fi

# whoami KUBECONFIG USER - the identity the API server sees, with both service-account groups.
whoami_is() {
    local got
    got=$("$KT_KUBECTL" --kubeconfig "$2" auth whoami -o json 2>&1)
    if echo "$got" | jq -e --arg u "$3" '.status.userInfo.username == $u
        and (.status.userInfo.groups | index("system:serviceaccounts"))
        and (.status.userInfo.groups | index("system:serviceaccounts:kubeflow-system"))' >/dev/null 2>&1; then
        ok "$1"
    else
        bad "$1" "got: $got"
    fi
}
whoami_is identity-webhook "$KT_WEBHOOK_KUBECONFIG" system:serviceaccount:kubeflow-system:kubeflow-trainer-webhook
whoami_is identity-reconciler "$KT_RECONCILER_KUBECONFIG" \
    system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager
# Without the deploy/rbac bindings the daemons may do nothing (RBAC is really on). Other
# tests bind deploy/rbac/ on this cluster, so this is checked on the second cluster below.
check_no_rights() {
    local kcfg n
    for kcfg in "$@"; do
        n=no-rights-$(basename "$kcfg" .kubeconfig)
        if "$KT_KUBECTL" --kubeconfig "$kcfg" get trainjobs -A >"$T/out" 2>&1; then
            bad "$n" "listing trainjobs was allowed"
        elif grep -q 'Forbidden' "$T/out"; then
            ok "$n"
        else
            bad "$n" "$(cat "$T/out")"
        fi
    done
}
if [ "$(kc auth can-i '*' '*')" = yes ]; then
    ok admin-is-cluster-admin
else
    bad admin-is-cluster-admin "admin kubeconfig lacks rights"
fi
if kc get namespace kubeflow-system >/dev/null 2>&1; then
    ok namespace-kubeflow-system
else
    bad namespace-kubeflow-system "missing"
fi
if [ "$(kc get crd -o name | grep -c 'trainer.kubeflow.org')" -eq 3 ] &&
    kc get crd jobsets.jobset.x-k8s.io podgroups.scheduling.x-k8s.io >/dev/null 2>&1; then
    ok crds-installed
else
    bad crds-installed "$(kc get crd -o name | tr '\n' ' ')"
fi
if [ ! -f "$KT_BIN/crds/scheduling.volcano.sh_podgroups.yaml" ]; then
    echo "skip volcano-crd-installed: the Volcano CRD could not be generated (see build.sh)"
elif kc get crd podgroups.scheduling.volcano.sh >/dev/null 2>&1; then
    ok volcano-crd-installed
else
    bad volcano-crd-installed "podgroups.scheduling.volcano.sh missing"
fi

# restart-apiserver.sh: same port and etcd, new PID, data kept, extra flags applied.
ns=$(kt_ns harness)
kc -n "$ns" create configmap survives --from-literal=k=v >/dev/null
old_pid=$KT_APISERVER_PID
if "$cl/restart-apiserver.sh" "$KT_CLUSTER_DIR" -- --watch-cache=false 2>"$T/err"; then
    # shellcheck source=/dev/null # a cluster env file, written at run time
    new_pid=$(. "$1" && echo "$KT_APISERVER_PID")
    # shellcheck source=/dev/null # the same env file
    new_url=$(. "$1" && echo "$KT_APISERVER")
    if [ "$new_pid" != "$old_pid" ] && [ "$new_url" = "$KT_APISERVER" ] && kt_dead "$old_pid" &&
        [ "$(kc -n "$ns" get configmap survives -o jsonpath='{.data.k}')" = v ] &&
        tr '\0' ' ' <"/proc/$new_pid/cmdline" | grep -c -- '--watch-cache=false' >/dev/null; then
        ok restart-apiserver
    else
        bad restart-apiserver "pid $old_pid -> $new_pid, url $new_url"
    fi
else
    bad restart-apiserver "$(tail -5 "$T/err")"
fi
# Without "--" the previous extra flags are kept.
"$cl/restart-apiserver.sh" "$KT_CLUSTER_DIR" 2>"$T/err" || bad restart-apiserver-keep "$(tail -5 "$T/err")"
# shellcheck source=/dev/null # a cluster env file, written at run time
pid=$(. "$1" && echo "$KT_APISERVER_PID")
if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -c -- '--watch-cache=false' >/dev/null; then
    ok restart-apiserver-keeps-flags
else
    bad restart-apiserver-keeps-flags "--watch-cache=false lost"
fi
# Back to the standard flags for the tests that follow.
"$cl/restart-apiserver.sh" "$KT_CLUSTER_DIR" -- 2>"$T/err" || bad restart-apiserver-back "$(tail -5 "$T/err")"
# shellcheck source=/dev/null # a cluster env file, written at run time
KT_APISERVER_PID=$(. "$1" && echo "$KT_APISERVER_PID")
if ! tr '\0' ' ' <"/proc/$KT_APISERVER_PID/cmdline" | grep -c -- '--watch-cache=false' >/dev/null; then
    ok restart-apiserver-flags-replaced
else
    bad restart-apiserver-flags-replaced "--watch-cache=false still set"
fi

# up.sh refuses a directory with a running cluster.
if "$cl/up.sh" "$KT_CLUSTER_DIR" >"$T/out" 2>&1; then
    bad up-twice-same-dir "second up.sh on a live DIR succeeded"
else
    ok up-twice-same-dir
fi

# A second cluster next to this one: its own ports, both answer, down.sh stops it all.
d2=$(mktemp -d)
if "$cl/up.sh" "$d2" >"$T/out" 2>&1; then
    e2=$(. "$d2/env" && echo "$KT_APISERVER $KT_ETCD $KT_APISERVER_PID $KT_ETCD_PID $KT_ETCD_DATA")
    read -r a2 etcd2 ap2 ep2 data2 <<<"$e2"
    if [ "$a2" != "$KT_APISERVER" ] && [ "$etcd2" != "$KT_ETCD" ] &&
        "$KT_KUBECTL" --kubeconfig "$d2/admin.kubeconfig" get ns kubeflow-system >/dev/null 2>&1 &&
        kc get ns "$ns" >/dev/null 2>&1; then
        ok second-cluster
    else
        bad second-cluster "ports $a2 $etcd2 vs $KT_APISERVER $KT_ETCD"
    fi
    check_no_rights "$d2/webhook.kubeconfig" "$d2/controller-manager.kubeconfig"
    "$cl/down.sh" "$d2"
    if kt_dead "$ap2" && kt_dead "$ep2" && [ ! -e "$data2" ]; then
        ok down-stops-everything
    else
        bad down-stops-everything "left: apiserver $ap2 etcd $ep2 data $data2"
    fi
    if "$cl/down.sh" "$d2"; then
        ok down-idempotent
    else
        bad down-idempotent "second down.sh failed"
    fi
else
    bad second-cluster "$(grep -v '^[IWE][0-9]\{4\} \|^{' "$T/out" | tail -20)"
fi
rm -rf "$d2"

# A start that fails (bad API server flag) exits non-zero, prints the logs, leaves nothing.
d3=$(mktemp -d)
if "$cl/up.sh" "$d3" -- --no-such-flag >"$T/out" 2>&1; then
    bad up-failure-cleans-up "up.sh with a bad flag succeeded"
    "$cl/down.sh" "$d3"
else
    ep3=$(. "$d3/env" && echo "$KT_ETCD_PID")
    ap3=$(. "$d3/env" && echo "$KT_APISERVER_PID")
    # shellcheck disable=SC2010 # ls of a glob that may match nothing, compared with one exact path
    if grep -q 'unknown flag: --no-such-flag' "$T/out" && kt_dead "$ep3" && kt_dead "$ap3" &&
        [ -z "$(ls -d /dev/shm/kt-etcd.* 2>/dev/null | grep -Fx "$(. "$d3/env" && echo "$KT_ETCD_DATA")")" ]; then
        ok up-failure-cleans-up
    else
        bad up-failure-cleans-up "etcd $ep3 / apiserver $ap3 alive or no log: $(tail -3 "$T/out")"
    fi
fi
rm -rf "$d3"
kt_finish
