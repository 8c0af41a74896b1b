#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/parity/oracle.sh [BUILD_DIR] - the oracle tier: upstream Kubeflow Trainer v2.3.0's own
# manager (built from its Go module, tests/parity/upstream_lib.sh) against kt, on the same
# seeded inputs (tests/parity/oracle_gen.py: >= 500 TrainJobs meant valid, invalid variants,
# UPDATE pairs, runtime reviews).
#
# Two plain planes from tests/cluster/up.sh (kube-apiserver + etcd, our CRDs): one runs
# kt-reconciler and kt-webhook as their ServiceAccounts (tests/kt_deploy.sh), the other
# upstream's manager (controllers + webhook server). Both get the same runtimes and TrainJobs;
#   (a) objects: once every TrainJob's JobSet exists, the objects in the namespace are dumped,
#       normalised and compared per TrainJob;
#   (b)(c)(d) reviews: the same AdmissionReviews (TrainJob CREATE and UPDATE, TrainingRuntime and
#       ClusterTrainingRuntime CREATE/UPDATE, the defaulter) are POSTed to both webhook servers.
# Differences not accepted by an `oracle-*` entry of tests/parity/deliberate.txt (each one
# mirrored in docs/compatibility.md) fail. Prints "parity: CLASS N/M identical"
# and "N passed, N failed". Without Go, the network or python3 it fails (never skips).
# Knobs: KT_PARITY_SEED (default 19), KT_PARITY_N (TrainJobs, default 520), KT_KEEP=1 (keep
# the work folder; also kept when a check failed).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT" || exit 1
. tests/lib.sh
KT_TIER=oracle
B=$(cd "${1:-build/plain}" 2>/dev/null && pwd) || B="$ROOT/${1:-build/plain}"
WEBHOOK=${KT_WEBHOOK_BIN:-$B/bin/kt-webhook}
RECONCILER=${KT_RECONCILER_BIN:-$B/bin/kt-reconciler}
KTCTL=$B/bin/ktctl
SEED=${KT_PARITY_SEED:-19}
N=${KT_PARITY_N:-520}
W=$(mktemp -d "${TMPDIR:-/tmp}/kt-oracle.XXXXXX")
KTD=$W/kt
UPD=$W/up
# shellcheck disable=SC2034 # RPID, WPID: set by tests/kt_deploy.sh, read by the cleanup
RPID="" WPID=""
t_start=$SECONDS

# die MESSAGE - a step failed: FAIL and the closing line (tests/kt_deploy.sh calls it too).
die() {
    bad "$KT_TIER" "$*"
    kt_finish
}
# the planes last (cleanups run last registered first); the work folder stays after a failure
kt_cleanup 'tests/cluster/down.sh "$KTD"; tests/cluster/down.sh "$UPD"; [ "${KT_KEEP:-}" = 1 ] || [ "$fail" -ne 0 ] || rm -rf "$W"'
kt_cleanup 'up_stop "$W/mgr"'
kt_cleanup 'kill -TERM $RPID $WPID; wait $RPID $WPID'
trap 'exit 130' INT TERM
oracle_logs() {
    local f
    for f in "$KTD/kt-reconciler.log" "$KTD/kt-webhook.log" "$W/mgr/manager.log"; do
        [ -f "$f" ] && { echo "----- $f (last 15 lines)"; tail -n 15 "$f"; }
    done
    echo "oracle: the work folder is kept: $W"
}
kt_on_fail oracle_logs
[ "${KT_KEEP:-}" = 1 ] && echo "oracle: the work folder is kept: $W"
# oracle_add OUT WHAT - show oracle_cmp.py's output OUT and add its counts (kt_count); without
# its closing line it crashed.
oracle_add() {
    local p f
    grep -v -E '^[0-9]+ passed, [0-9]+ failed' "$1"
    [ "$(grep -cE '^[0-9]+ passed, [0-9]+ failed' "$1")" -gt 0 ] || die "oracle_cmp.py $2 crashed: $(tail -5 "$1")"
    read -r p f < <(kt_count "$1")
    pass=$((pass + p))
    fail=$((fail + f))
}
phase() { echo "oracle: $1 ($((SECONDS - t_start))s)"; }

for b in "$WEBHOOK" "$RECONCILER" "$KTCTL"; do
    [ -x "$b" ] || die "$b not built (make)"
done
command -v python3 >/dev/null || die "python3 missing"
. tests/parity/upstream_lib.sh

# ---- inputs, upstream's manager, the two planes ------------------------------------------
mkdir -p "$W/gen"
python3 tests/parity/oracle_gen.py "$SEED" "$W/gen" "$N" >"$W/gen.out" || die "oracle_gen.py failed"
echo "oracle: inputs $(cat "$W/gen.out")"
tests/cluster/up.sh "$KTD" >/dev/null 2>"$W/up-kt.log" &
upk=$!
tests/cluster/up.sh "$UPD" >/dev/null 2>"$W/up-up.log" &
upu=$!
up_build || die "cannot build upstream trainer-controller-manager $UP_VERSION (needs Go and the module proxy)"
wait "$upk" || { cat "$W/up-kt.log"; die "tests/cluster/up.sh (kt plane) failed"; }
wait "$upu" || { cat "$W/up-up.log"; die "tests/cluster/up.sh (upstream plane) failed"; }
phase "planes ready"

kcp() { # kcp PLANE_DIR ARGS... - kubectl as admin on one plane
    local d=$1
    shift
    "$(kt_env_get "$d" KT_KUBECTL)" --kubeconfig "$(kt_env_get "$d" KT_ADMIN_KUBECONFIG)" \
        --cache-dir "$d/kubectl-cache" "$@"
}

# kt: as tests/kt_deploy.sh does (RBAC, shipped runtimes, certificates, both daemons as their
# ServiceAccounts); its webhook is not registered: reviews go to it directly. kc (tests/
# lib_kube.sh) is kubectl on the kt plane, whose env is sourced.
D=$KTD
. "$D/env"
. tests/lib_kube.sh
. tests/kt_deploy.sh
ktd_apply
ktd_certs >/dev/null
ktd_start_webhook
ktd_start_reconciler
kcp "$UPD" apply --server-side -k deploy/runtimes >"$W/apply-up-runtimes.log" 2>&1 ||
    die "applying deploy/runtimes (upstream plane): $(tail -3 "$W/apply-up-runtimes.log")"
up_start "$UPD" "$W/mgr" || die "upstream's manager did not start (log: $W/mgr/manager.log)"
. "$W/mgr/env"
phase "kt and upstream running"

# ---- (a) the same objects applied to both planes ------------------------------------------
for d in "$KTD" "$UPD"; do
    kcp "$d" apply --server-side -f "$W/gen/setup.json" >"$d/apply-setup.log" 2>&1 ||
        die "applying setup.json: $(tail -3 "$d/apply-setup.log")"
done
# The reviews as the API server sends them (CRD defaults), before the TrainJobs exist.
python3 tests/parity/oracle_cmp.py defaults "$W/gen/reviews.jsonl" \
    "$(kt_env_get "$KTD" KT_ADMIN_KUBECONFIG)" "$W/reviews.jsonl" || die "defaulting the reviews failed"
kcp "$KTD" apply --server-side -f "$W/gen/trainjobs.json" >"$KTD/apply-jobs.log" 2>&1 &
ak=$!
kcp "$UPD" apply --server-side -f "$W/gen/trainjobs.json" >"$UPD/apply-jobs.log" 2>&1 ||
    die "applying trainjobs.json (upstream plane): $(grep -v serverside-applied "$UPD/apply-jobs.log" | sed -n 1,3p)"
wait "$ak" || die "applying trainjobs.json (kt plane): $(grep -v serverside-applied "$KTD/apply-jobs.log" | sed -n 1,3p)"
a_kt=$(kcp "$KTD" get trainjobs -n parity -o name | wc -l)
a_up=$(kcp "$UPD" get trainjobs -n parity -o name | wc -l)
[ "$a_kt" = "$a_up" ] || die "TrainJobs admitted by the two API servers differ: kt $a_kt, upstream $a_up"
# The JobSets to expect: TrainJobs not managed by an external controller.
want=$(kcp "$KTD" get trainjobs -n parity -o json |
    jq '[.items[] | select((.spec.managedBy // "trainer.kubeflow.org/trainjob-controller") == "trainer.kubeflow.org/trainjob-controller")] | length')
echo "oracle: $a_kt TrainJobs applied to both planes ($want for the trainer controller)"
KINDS=trainjobs.trainer.kubeflow.org,jobsets.jobset.x-k8s.io,configmaps,secrets,podgroups.scheduling.x-k8s.io,podgroups.scheduling.volcano.sh
deadline=$((SECONDS + 180))
left() { echo $((deadline > SECONDS ? deadline - SECONDS : 0)); } # seconds to the deadline
jobsets_made() { [ "$(kcp "$1" get jobsets.jobset.x-k8s.io -n parity -o name | wc -l)" -ge "$want" ]; } # PLANE_DIR
for d in "$KTD" "$UPD"; do
    kt_poll "$(left)" jobsets_made "$d" 2>/dev/null
done
# JobSets exist; wait (bounded) until both planes hold the same number of objects and of
# TrainJobs with a status written (the status is patched after the objects are applied). kt's
# startTime/completionTime (deliberate.txt oracle-status-times) are not counted: upstream
# never writes them, so counting them would wait out the deadline every run.
sig() {
    kcp "$1" get "$KINDS" -n parity -o json |
        jq -r '[(.items | length), ([.items[] | select(.kind == "TrainJob" and
            ((.status // {}) | del(.startTime, .completionTime) | length > 0))] | length)] | @tsv'
}
converged() { [ "$(sig "$KTD")" = "$(sig "$UPD")" ]; }
kt_poll "$(left)" converged 2>/dev/null ||
    echo "oracle: the planes did not converge (objects, TrainJobs with a status): kt $(sig "$KTD" | tr '\t' ' '), upstream $(sig "$UPD" | tr '\t' ' ')"
phase "objects built"
kcp "$KTD" get "$KINDS" -n parity -o json >"$W/kt-objects.json" || die "dump (kt) failed"
kcp "$UPD" get "$KINDS" -n parity -o json >"$W/up-objects.json" || die "dump (upstream) failed"
python3 tests/parity/oracle_cmp.py objects "$W/kt-objects.json" "$W/up-objects.json" \
    "$W/gen/trainjobs.json" tests/parity/deliberate.txt "$W" >"$W/objects.out" 2>&1
oracle_add "$W/objects.out" objects

# Negative cases: a planted difference must fail the comparison.
mkdir -p "$W/selftest"
python3 tests/parity/oracle_cmp.py selftest "$W/kt-objects.json" "$W/up-objects.json" \
    "$W/gen/trainjobs.json" tests/parity/deliberate.txt "$W/selftest" >"$W/selftest.out" 2>&1
oracle_add "$W/selftest.out" selftest

# ---- (b)(c)(d) the same reviews to both webhook servers -----------------------------------
python3 tests/parity/oracle_cmp.py reviews "$W/reviews.jsonl" "https://127.0.0.1:$WPORT" \
    "$KTD/certs/ca.crt" "https://127.0.0.1:$UP_WEBHOOK_PORT" "$UP_CA" tests/parity/deliberate.txt \
    "$W" >"$W/reviews.out" 2>&1
oracle_add "$W/reviews.out" reviews
phase "done"
kt_finish
