#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/run.sh [CASE...] - the e2e tier: TrainJobs really run on the full local chain
# (tests/cluster/up.sh --full: kube-apiserver + etcd, kube-controller-manager, kube-scheduler,
# scheduler-plugins' Coscheduling scheduler, the JobSet controller with its webhooks, KWOK fake
# nodes), with kt-webhook registered and kt-webhook / kt-reconciler running as their
# ServiceAccounts from deploy/rbac (tests/kt_deploy.sh, as `make run` does). No status is
# written by this script: pods are scheduled by the scheduler, run and end by KWOK's stages,
# Jobs complete by the job controller, JobSets by the JobSet controller, TrainJobs by kt.
# Both daemons' metrics need a token (metrics.auth.enabled); a real Prometheus
# (tests/monitoring/prom_e2e.sh) scrapes them during the cases and the prometheus case (before switch, the last) asks it.
# Each case prints `ok NAME` / `FAIL NAME: why`; the last line is "N passed, N failed".
# CASE... restricts the run to cases whose name contains one of the words (KT_ONLY=e2e/*CASE;
# tests/lib.sh). Knobs: KT_KEEP=1 keeps the cluster folder (stopped); KT_STOP=1 stops at the
# first failure; KT_E2E_WAIT (seconds of a bounded wait, default 240); KT_POD_RUN_MS (default
# 3000 here).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT" || exit 1
. tests/lib_kube.sh
KT_TIER=e2e
[ $# -eq 0 ] || KT_ONLY=$(kt_only_args e2e "$@")
t_start=$SECONDS
WEBHOOK=${KT_WEBHOOK_BIN:-$ROOT/build/plain/bin/kt-webhook}
RECONCILER=${KT_RECONCILER_BIN:-$ROOT/build/plain/bin/kt-reconciler}
KTCTL=$ROOT/build/plain/bin/ktctl
WAIT=${KT_E2E_WAIT:-240}
export KT_POD_RUN_MS=${KT_POD_RUN_MS:-3000}
D=$(mktemp -d "${TMPDIR:-/tmp}/kt-e2e.XXXXXX")
WPID=""
RPID=""
[ "${KT_KEEP:-}" = 1 ] && echo "e2e: the cluster folder is kept: $D"
# the cluster last (cleanups run last registered first)
kt_cleanup 'tests/cluster/down.sh "$D"; [ "${KT_KEEP:-}" = 1 ] || rm -rf "$D"'
kt_cleanup 'kill -TERM $RPID $WPID; wait $RPID $WPID; declare -F switch_teardown && switch_teardown'
kt_cleanup 'declare -F prom_stop && prom_stop'
trap 'exit 130' INT TERM

# die MESSAGE - a setup step failed: FAIL and the closing line (kt_deploy.sh and prom_e2e.sh
# call it too).
die() {
    bad "$KT_TIER" "$*"
    kt_finish
}
# e2e_logs - the daemons' and controllers' last lines, after a failure.
e2e_logs() {
    local f
    for f in "$D"/kt-reconciler.log "$D"/kt-webhook.log "$D"/jobset.log "$D"/kcm.log "$D"/prometheus/prometheus.log; do
        [ -f "$f" ] && { echo "----- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
}
kt_on_fail e2e_logs

# ---- the cluster and kt ------------------------------------------------------------------
t0=$SECONDS
tests/cluster/up.sh --full "$D" >/dev/null 2>"$T/up.log" || {
    cat "$T/up.log"
    bad cluster-up "tests/cluster/up.sh --full failed"
    kt_finish
}
grep 'ready in' "$T/up.log" | sed 's/^/e2e: /'
. "$D/env"
# The shipped Configuration with metrics.auth.enabled (the Helm chart's metrics.auth.enabled):
# both daemons' /metrics are TLS and check a bearer token with TokenReview + SubjectAccessReview.
sed 's/^  secureServing: true$/&\n  auth:\n    enabled: true/' deploy/manager/controller_manager_config.yaml >"$D/kt-config.yaml"
grep -q '^    enabled: true$' "$D/kt-config.yaml" || die "metrics.auth.enabled could not be set"
export KT_CONFIG=$D/kt-config.yaml
. tests/kt_deploy.sh
. tests/monitoring/prom_e2e.sh
ktd_apply
prom_auth_setup
ktd_certs >/dev/null
ktd_start_webhook
ktd_start_reconciler
ktd_register_webhooks "$(cat <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: e2e-probe, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {env: [{name: PET_NNODES, value: "1"}]}
EOF
)"
echo "e2e: cluster and kt ready in $((SECONDS - t0))s"
# A real Prometheus scrapes both daemons during the cases; case_prometheus (before switch, the last case) asks it.
kt_only e2e/prometheus && prom_start

# ---- helpers -----------------------------------------------------------------------------


# tj_wait NS NAME WANT - bounded poll until the TrainJob has condition WANT (Complete or
# Failed); fails early when it reaches the other terminal condition.
tj_wait() {
    local st
    kt_poll "$WAIT" tj_finished "$1" "$2" 2>/dev/null
    st=$(tj_state "$1" "$2")
    case ",$st," in *",$3,"*) return 0 ;; esac
    case ",$st," in *,Complete,* | *,Failed,*)
        echo "TrainJob $1/$2 reached $st, wanted $3: $(tj_cond "$1" "$2" Failed)"
        return 1
        ;;
    esac
    echo "TrainJob $1/$2 not $3 after ${WAIT}s (conditions: ${st:-none}); pods:"
    kc get pods -n "$1" -o wide 2>&1 | sed -n 1,20p
    return 1
}


# pods_of NS TRAINJOB - the pods of the TrainJob's JobSet as JSON (a list).
pods_of() {
    kc get pods -n "$1" -l "jobset.sigs.k8s.io/jobset-name=$2" -o json | jq '.items'
}



# e2e_trainjob NS NAME RUNTIME [KIND] [TRAINER_YAML] [SPEC_YAML] - create a TrainJob.
e2e_trainjob() {
    kc apply -f - >/dev/null <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $2
  namespace: $1
spec:
  runtimeRef:
    name: $3
    kind: ${4:-ClusterTrainingRuntime}
  trainer:
    numNodes: 2
${5:-}
${6:-}
EOF
}

# e2e_runtime NS NAME POD_EXTRA JOB_EXTRA [POLICY_EXTRA] - a namespaced TrainingRuntime with one
# trainer job "node" running a torch container; POD_EXTRA and JOB_EXTRA are YAML lines under the
# pod spec / job spec (already indented), POLICY_EXTRA lines under spec.
e2e_runtime() {
    kc apply -f - >/dev/null <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: $2
  namespace: $1
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
${5:-}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
$4
              template:
                metadata:
                  annotations: {}
                spec:
$3
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
EOF
}

case_run() { # case_run NAME FUNCTION - run one case (when KT_ONLY selects e2e/NAME), timing it
    local t=$SECONDS
    kt_only "e2e/$1" || return 0
    "$2"
    prom_targets # a case may have restarted kt-reconciler on a new port
    echo "e2e: case $1: $((SECONDS - t))s"
}

. "$here/cases.sh"

for c in $E2E_CASES; do
    case_run "$c" "case_${c//-/_}"
done
echo "e2e wall time: $((SECONDS - t_start))s"
kt_finish
