#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/reconciler_faults.sh ENV_FILE - kt-reconciler under faults while TrainJobs
# are being created (docs/development.md#the-reliability-tier). Four drills on the real API server, each with its own
# namespace and N (20) TrainJobs created ten a second in the background (each create retried
# until the API server has it, so the fault cannot lose one on the client side):
#   kill9      kill -9 of the reconciler once some JobSets exist; a new one is started;
#   apiserver  kube-apiserver restarted (tests/cluster/restart-apiserver.sh) mid-creation;
#   etcd       etcd stopped (SIGSTOP) for KT_ETCD_STALL_S (20) seconds, then SIGCONT;
#   failover   two reconcilers with leader election; kill -9 of the leader; the standby takes
#              over (the time from the kill to its "became leader" is printed, not asserted).
# Each asserts that every TrainJob ends with exactly one JobSet (same name, controlled by that
# TrainJob's uid) and one runtime snapshot ConfigMap, that nothing else was created, and that
# the surviving reconciler is ready and reconciles a TrainJob made afterwards. Every wait is
# a bounded poll or `kubectl wait`.
. "$(dirname "$0")/lib.sh" "$@"
N=${KT_FAULT_JOBS:-20}
STALL_S=${KT_ETCD_STALL_S:-20}
ETCD_STOPPED=""
kt_cleanup '[ -n "$ETCD_STOPPED" ] && kill -CONT "$ETCD_STOPPED"'

# worker [--standby] NAME [FLAG...] - a reconciler as the controller identity (kt_daemon:
# ready, or only started with --standby). Sets PID_<NAME>.
worker() {
    local standby=()
    [ "$1" = --standby ] && standby=(--standby) && shift
    kt_daemon "${standby[@]}" "$1" "$REL_RECONCILER" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
        --health-listen 127.0.0.1:0 --metrics-listen 0 --workers 2 "${@:2}"
}

fault_tj() { # fault_tj NS NAME
    printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  runtimeRef:\n    name: torch-distributed\n    kind: ClusterTrainingRuntime\n' "$2" "$1"
}
# creator NS - create t1..tN one after another, ten a second (so the fault lands mid-way),
# each POSTed as the admin and retried (bounded) until the API server has it (201, or 409 for
# a retry whose first try went through); runs in the background (CPID); writes "done" to
# $T/NS.created at the end.
creator() {
    local i
    for i in $(seq "$N"); do
        kt_poll 30 create_tj "$1" "t$i"
        sleep 0.1 # the pace of the load, not a readiness wait
    done
    echo "done" >"$T/$1.created"
}
# create_tj NS NAME - POST the TrainJob as the admin; true when the API server has it (201, or
# 409 for a retry whose first try went through).
create_tj() {
    local code
    code=$(fault_tj "$1" "$2" | curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
        --cacert "$KT_CA" --cert "$KT_CLUSTER_DIR/admin.crt" --key "$KT_CLUSTER_DIR/admin.key" \
        -H 'Content-Type: application/yaml' --data-binary @- \
        "$KT_APISERVER/apis/trainer.kubeflow.org/v1alpha1/namespaces/$1/trainjobs" 2>/dev/null)
    case "$code" in 201 | 409) return 0 ;; esac
    return 1
}
start_creator() { # start_creator NS
    creator "$1" &
    CPID=$!
    kt_cleanup "kill $CPID; wait $CPID"
}
all_created() { grep -q "done" "$T/$1.created" 2>/dev/null; }
jobsets_at_least() { [ "$(kc get jobsets -n "$1" -o name --request-timeout=5s 2>/dev/null | wc -l)" -ge "$2" ]; }

# exact NS - every TrainJob has exactly one JobSet and one snapshot ConfigMap, controlled by it.
exact() {
    local ns=$1
    kt_poll 120 all_created "$ns" || { echo "creator did not finish"; return 1; }
    kt_poll 120 jobsets_at_least "$ns" "$N" || { echo "only $(kc get jobsets -n "$ns" -o name | wc -l) of $N JobSets"; return 1; }
    kc get trainjobs -n "$ns" -o json >"$T/tj.json" &&
        kc get jobsets -n "$ns" -o json >"$T/js.json" &&
        kc get configmaps -n "$ns" -l trainer.kubeflow.org/trainjob-name -o json >"$T/cm.json" || return 1
    jq -e -n --argjson n "$N" --slurpfile tj "$T/tj.json" --slurpfile js "$T/js.json" \
        --slurpfile cm "$T/cm.json" '
        ($tj[0].items | map({key: .metadata.name, value: .metadata.uid}) | from_entries) as $uid
        | def owned: [.[] | select(.metadata.ownerReferences // [] | map(select(.controller == true
                         and .kind == "TrainJob")) | length == 1)];
        ($tj[0].items | length) == $n
        and ($js[0].items | length) == $n
        and ($cm[0].items | length) == $n
        and ($js[0].items | owned | length) == $n
        and all($js[0].items[]; .metadata.ownerReferences[0].uid == $uid[.metadata.name])
        and all($cm[0].items[]; .metadata.ownerReferences[0].uid ==
                                $uid[.metadata.labels["trainer.kubeflow.org/trainjob-name"]])' >/dev/null || {
        echo "trainjobs=$(jq '.items | length' "$T/tj.json") jobsets=$(jq '.items | length' "$T/js.json") configmaps=$(jq '.items | length' "$T/cm.json") (want $N each, owned by the TrainJob of the same name)"
        return 1
    }
}
# works NS REC - REC is alive and ready, and a TrainJob made now gets its JobSet.
works() {
    kill -0 "$(rel_pid "$2")" 2>/dev/null && kt_ready "$2" &&
        fault_tj "$1" after | kc apply -f - >/dev/null &&
        kc wait --timeout=60s --for=create jobset/after -n "$1" >/dev/null
}
# at_fault NS - print how far the creation got when the fault hit.
at_fault() {
    echo "  at the fault: $(kc get trainjobs -n "$1" -o name --request-timeout=5s | wc -l) of $N TrainJobs, $(kc get jobsets -n "$1" -o name --request-timeout=5s | wc -l) JobSets"
}

kc apply -k "$KT_ROOT/deploy/rbac/reconciler" >/dev/null || { bad rbac "apply failed"; kt_finish; }
kc apply -k "$KT_ROOT/deploy/runtimes" >/dev/null || { bad runtimes "apply failed"; kt_finish; }

# ---- kill -9 under load --------------------------------------------------------------------
kill9() {
    local ns
    ns=$(kt_ns kill9) || return 1
    worker k1 || return 1
    start_creator "$ns"
    kt_poll 120 jobsets_at_least "$ns" 5 || { echo "no JobSets before the kill"; return 1; }
    # shellcheck disable=SC2154 # PID_k1: set by worker k1 (eval "PID_$name=...")
    kill -KILL "$PID_k1"
    wait "$PID_k1" 2>/dev/null
    at_fault "$ns"
    worker k2 && exact "$ns" && works "$ns" k2 && KILL9_NS=$ns
}
rel_check kill9-under-load-exactly-one-jobset kill9
kt_daemon_stop k2
# Negative (no reconciler running): TrainJob "after"'s JobSet replaced by one nobody
# controls. The counts still match (N + 1 of each); the ownership check must catch it.
stray() {
    [ -n "${KILL9_NS:-}" ] || return 1
    local n0=$N
    N=$((N + 1))
    exact "$KILL9_NS" || { N=$n0; echo "the baseline does not pass"; return 1; }
    kc get jobset after -n "$KILL9_NS" -o json |
        jq '.metadata |= {name: "stray", namespace: .namespace}' | kc create -f - >/dev/null &&
        kc delete jobset after -n "$KILL9_NS" >/dev/null || { N=$n0; return 1; }
    ! exact "$KILL9_NS"
    local rc=$?
    N=$n0
    return $rc
}
rel_check exactness-check-catches-a-stray-jobset stray

# ---- kube-apiserver restart under load -----------------------------------------------------
apiserver() {
    local ns
    ns=$(kt_ns apirestart) || return 1
    worker a1 || return 1
    start_creator "$ns"
    kt_poll 120 jobsets_at_least "$ns" 5 || return 1
    at_fault "$ns"
    "$KT_ROOT/tests/cluster/restart-apiserver.sh" "$KT_CLUSTER_DIR" >"$T/restart.log" 2>&1 || { cat "$T/restart.log"; return 1; }
    exact "$ns" && works "$ns" a1
}
rel_check apiserver-restart-under-load-exactly-one-jobset apiserver
kt_daemon_stop a1

# ---- etcd stalled ----------------------------------------------------------------------------
etcd() {
    local ns
    ns=$(kt_ns etcdstall) || return 1
    worker e1 || return 1
    start_creator "$ns"
    kt_poll 120 jobsets_at_least "$ns" 5 || return 1
    at_fault "$ns"
    ETCD_STOPPED=$KT_ETCD_PID
    kill -STOP "$KT_ETCD_PID"
    sleep "$STALL_S" # the drill's stall (a fault's duration, not a readiness wait)
    kill -CONT "$KT_ETCD_PID"
    # shellcheck disable=SC2034 # ETCD_STOPPED: read by the cleanup registered above
    ETCD_STOPPED=""
    exact "$ns" && works "$ns" e1
}
rel_check etcd-stall-under-load-exactly-one-jobset etcd
kt_daemon_stop e1

# ---- leader failover under load ------------------------------------------------------------
cat >"$T/le.yaml" <<YAML
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: true
  resourceName: kt-failover-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
  resourceNamespace: kubeflow-system
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
YAML
lease_failover() {
    local ns t0 t1
    ns=$(kt_ns failover) || return 1
    worker l1 --config "$T/le.yaml" || return 1
    worker --standby l2 --config "$T/le.yaml" || return 1
    start_creator "$ns"
    kt_poll 120 jobsets_at_least "$ns" 5 || return 1
    grep -q 'became leader' "$T/l1.log" && ! grep -q 'became leader' "$T/l2.log" || { echo "l1 should lead, l2 stand by"; return 1; }
    at_fault "$ns"
    t0=$(date +%s%N)
    # shellcheck disable=SC2154 # PID_l1: set by worker l1 (eval "PID_$name=...")
    kill -KILL "$PID_l1"
    wait "$PID_l1" 2>/dev/null
    kt_poll 60 grep -q 'became leader' "$T/l2.log" || { echo "standby never led"; return 1; }
    t1=$(date +%s%N)
    echo "  failover: standby led $(((t1 - t0) / 1000000)) ms after the kill (leaseDuration 4s)"
    exact "$ns" && kt_poll 60 kt_ready l2 && works "$ns" l2
}
rel_check leader-failover-under-load-no-duplicates lease_failover
kt_daemon_stop l2
check no-sanitizer-reports bash -c "! grep -l -E '(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|runtime error:' '$T'/*.log"
kt_finish
