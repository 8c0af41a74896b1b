#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/scale.sh [BUILD_DIR] - `make scale`: N TrainJobs through the full chain, kt and
# upstream trainer v2.3.0 side by side (docs/benchmarks.md#scale-side-by-side). Prints figures, asserts nothing about speed;
# checks correctness (every TrainJob Complete with exactly one JobSet) and exits 1 when it fails.
#
# For each N in $N (default "100"; several, e.g. N="100 300", also draw a growth chart) and each
# side in $SIDES (default kt,upstream), on a FRESH `tests/cluster/up.sh --full` plane (API server
# with an audit log, controller-manager, schedulers, JobSet controller, SCALE_NODES KWOK nodes
# whose pods run SCALE_RUN_MS):
#   kt:       deploy/rbac, deploy/runtimes, kt-webhook and kt-reconciler as their ServiceAccounts
#             (tests/kt_deploy.sh), the webhook configurations registered;
#   upstream: the same objects, upstream's manager (tests/parity/upstream_lib.sh: controller and
#             webhooks in one process, admin credentials) with the same webhook configurations
#             pointed at it.
# Both get client QPS 500 / burst 1000 (upstream_lib.sh's lifted limits) and 5 TrainJob workers.
# Then tests/bench/scale.py drives the same inputs (`scale.py gen N`: mixed shipped runtimes
# incl. torch, MPI (deepspeed, mlx), torchtune with initializers; numNodes 1-4) at SCALE_RATE
# TrainJobs/s (0: as fast as the API server answers) over SCALE_CONNS (4) keep-alive connections and times each TrainJob from its watches; the
# controller's /proc figures, the API server's /metrics before/after and its audit log give the
# rest. Results: build/scale/N-SIDE.json; table on stdout; chart build/scale/growth.svg.
# Beyond one process (kt side): SCALE_RECONCILERS=2 starts a second kt-reconciler (a standby on
# the same Lease; its RSS and CPU are reported), and SCALE_FAILOVER=KILL|TERM sends that signal
# to the leading replica once half the TrainJobs are created (N/2 / SCALE_RATE seconds into the
# creates) and times the move of the Lease to the other; correctness still needs every TrainJob
# Complete with exactly one JobSet, and controller CPU is then both replicas' sum.
# The chain's own clients (kube-controller-manager, the schedulers) get SCALE_CHAIN_QPS (5000;
# burst twice that: kwokctl's --disable-qps-limits) so that they, not their default 20-50 QPS
# limiters, set how fast pods come and go; both sides get the same chain (empty: their defaults).
# SCALE_CHAIN=sim runs each side on the simulated chain instead (`tests/cluster/up.sh --sim`,
# docs/benchmarks.md#simulated-chain): API server + etcd and KWOK's JobSet Stages, which report
# each JobSet created, active, ready 100 ms apart and Completed SCALE_RUN_MS later; no JobSet controller,
# Jobs, pods, nodes, schedulers or controller-manager (so no PersistentVolumes either), which
# takes the chain's cost out of the figures and lets N grow. SCALE_SIM_SHARDS (4) KWOK processes
# share the JobSets there (KWOK writes one JobSet status at a time); the JobSet's statuses before
# Completed (created, active, ready) come SCALE_SIM_STEP_MS (1000) apart: how far apart they
# come sets how many of them the controller sees, and so its TrainJob status writes.
# SCALE_SIM_ENGINE=jobsim plays those steps with tests/cluster/jobset_sim.py instead of KWOK (one
# JobSet watch resumed from its resourceVersion; SCALE_SIM_SHARDS connections): KWOK re-watches
# from resourceVersion 0, replaying every JobSet, which stalls the chain from about 10,000 on.
# Knobs: N, SIDES, SCALE_CHAIN (full, sim), SCALE_RATE (20), SCALE_CONNS (4), SCALE_NODES (N/10, at least 4, at most 1000), SCALE_RUN_MS (2000),
# SCALE_NAMESPACES (1: all in namespace scale; K spreads them over scale-00..: kube-controller-manager's
# Endpoints and EndpointSlice controllers match each pod change against its namespace's Services, one
# per JobSet, so one namespace of thousands slows the chain for both sides), SCALE_SETTLE_S (5),
# SCALE_TIMEOUT (600 + N s for the drain), SCALE_OUT (build/scale), SCALE_KEEP=1
# keeps the planes (logs, audit log) in the work folder printed at the start. SCALE_AUDIT_STATUS=1
# logs TrainJob status patches at level Request (their bodies) and writes what each set to
# $SCALE_OUT/N-SIDE-status.json (`scale.py status-writes`); off by default: it grows the log.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
b=${1:-build/plain}
SIZES=${N:-100}
SIDES=${SIDES:-kt,upstream}
RATE=${SCALE_RATE:-20}
CONNS=${SCALE_CONNS:-4}
NSS=${SCALE_NAMESPACES:-1}
REPLICAS=${SCALE_RECONCILERS:-1}
CHAIN_QPS=${SCALE_CHAIN_QPS-5000}
FAILOVER=${SCALE_FAILOVER:-}
case $FAILOVER in "" | KILL | TERM) ;; *) echo "scale: SCALE_FAILOVER: KILL or TERM" >&2; exit 2 ;; esac
[ -z "$FAILOVER" ] || [ "$REPLICAS" -ge 2 ] || { echo "scale: SCALE_FAILOVER needs SCALE_RECONCILERS=2" >&2; exit 2; }
[ -z "$FAILOVER" ] || awk -v r="$RATE" 'BEGIN { exit !(r > 0) }' || { echo "scale: SCALE_FAILOVER needs SCALE_RATE > 0" >&2; exit 2; }
RUN_MS=${SCALE_RUN_MS:-2000}
CHAIN=${SCALE_CHAIN:-full}
SIM_ENGINE=${SCALE_SIM_ENGINE:-kwok}
case $SIM_ENGINE in kwok | jobsim) ;; *) echo "scale: SCALE_SIM_ENGINE: kwok or jobsim" >&2; exit 2 ;; esac
case $CHAIN in full | sim) ;; *) echo "scale: SCALE_CHAIN: full or sim" >&2; exit 2 ;; esac
SETTLE=${SCALE_SETTLE_S:-5}
OUT=${SCALE_OUT:-$ROOT/build/scale}
WEBHOOK=$ROOT/$b/bin/kt-webhook
RECONCILER=$ROOT/$b/bin/kt-reconciler
KTCTL=$ROOT/$b/bin/ktctl
PY="python3 $ROOT/tests/bench/scale.py"
for x in "$WEBHOOK" "$RECONCILER" "$KTCTL"; do
    [ -x "$x" ] || make -s "$x" >/dev/null || exit 1
done
. tests/parity/upstream_lib.sh
. tests/lib_kube.sh # kc, kt_poll, kt_cleanup
mkdir -p "$OUT"
W=$(mktemp -d "${TMPDIR:-/tmp}/kt-scale.XXXXXX")
echo "scale: work folder $W; results in $OUT"
D=""
WPID=""
RPID=""
SPID=""
FPID=""
scale_die() {
    echo "scale: $*" >&2
    exit 1
}
stop_all() { # the daemons of the current plane (by PID), then the plane
    local p
    [ -z "$FPID" ] || kill "$FPID" 2>/dev/null
    for p in $RPID $SPID $WPID; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    RPID="" SPID="" WPID="" FPID=""
    [ -f "$W/up/env" ] && up_stop "$W/up" 2>/dev/null
    rm -rf "$W/up"
    [ -n "$D" ] && [ -f "$D/env" ] && tests/cluster/down.sh "$D" >/dev/null 2>&1
    if [ -n "$D" ] && [ -z "${SCALE_KEEP:-}" ]; then rm -rf "$D"; fi
    D=""
}
scale_finish() {
    stop_all
    [ -n "${SCALE_KEEP:-}" ] || rm -rf "$W"
}
kt_cleanup scale_finish
trap 'exit 130' INT TERM

CLK=$(getconf CLK_TCK)
# kb PID FIELD, cpu PID: JSON numbers, or null when the process is gone (the table shows "-")
kb() { awk -v k="$2:" '$1 == k {v = $2} END {print v == "" ? "null" : v}' "/proc/$1/status" 2>/dev/null || echo null; }
cpu() { awk -v t="$CLK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat" 2>/dev/null || echo null; }
# own_metrics SIDE FILE - the webhook server's own /metrics (kt-webhook's TLS port; upstream's
# manager's plain one), for its controller_runtime_webhook_latency_seconds.
own_metrics() {
    if [ "$1" = kt ]; then
        curl -sk --max-time 10 "https://127.0.0.1:$WMPORT/metrics" >"$2"
    else
        curl -s --max-time 10 "http://127.0.0.1:$(sed -n 's/^UP_METRICS_PORT=//p' "$W/up/env")/metrics" >"$2"
    fi || echo "scale: $1's own /metrics could not be read" >&2
}
# start_standby - a second kt-reconciler on the same Lease (SPID); ready without leading.
start_standby() {
    ktd_spawn_reconciler kt-reconciler-2
    SPID=$KTD_PID
}
# leads PORTFILE - the reconciler of PORTFILE reports leader_election_master_status 1.
leads() {
    curl -sk --max-time 5 "https://127.0.0.1:$(jq -r .metrics "$1")/metrics" |
        grep -c '^leader_election_master_status{.*} 1$' >/dev/null
}
# lease_moved OLD - the Lease has a holder other than OLD.
lease_moved() {
    local h
    h=$(ktd_lease_holder) && [ -n "$h" ] && [ "$h" != "$1" ]
}
# failover N - (background) N/2 / RATE seconds into the creates, signal the leading replica and
# time the Lease's move to the other; writes $W/failover.json (survivor PID, figures).
failover() {
    local lpid spid old moved="" t0 t1
    sleep "$(awk -v n="$1" -v r="$RATE" 'BEGIN { print n / 2 / r }')"
    if leads "$D/kt-reconciler.ports"; then lpid=$RPID spid=$SPID; else lpid=$SPID spid=$RPID; fi
    old=$(ktd_lease_holder)
    local lcpu scpu srss
    lcpu=$(cpu "$lpid") scpu=$(cpu "$spid") srss=$(kb "$spid" VmRSS)
    t0=$(date +%s.%N)
    kill -"$FAILOVER" "$lpid"
    kt_poll 120 lease_moved "$old" && moved=yes
    t1=$(date +%s.%N)
    jq -n --arg sig "$FAILOVER" --argjson lpid "$lpid" --argjson spid "$spid" --argjson lcpu "$lcpu" \
        --argjson scpu "$scpu" --argjson srss "$srss" --arg moved "$moved" \
        --argjson s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
        '{signal: $sig, leader_pid: $lpid, survivor_pid: $spid, leader_cpu: $lcpu,
          standby_cpu: $scpu, standby_rss: $srss, moved: ($moved == "yes"), seconds: $s}' >"$W/failover.json"
}

# The same Configuration for kt as upstream_lib.sh gives upstream: client QPS 500 / burst 1000.
yq -y '.clientConnection.qps = 500 | .clientConnection.burst = 1000' \
    deploy/manager/controller_manager_config.yaml >"$W/config.yaml" || scale_die "yq failed"
export KT_CONFIG=$W/config.yaml
# Audit: every request at Metadata level except the fake nodes' heartbeats.
cat >"$W/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: None
    namespaces: [kube-node-lease]
  - level: None
    resources: [{group: "", resources: [nodes, nodes/status]}]
EOF
[ "${SCALE_AUDIT_STATUS:-0}" = 1 ] && cat >>"$W/audit-policy.yaml" <<'EOF'
  - level: Request
    verbs: [patch]
    resources: [{group: trainer.kubeflow.org, resources: [trainjobs/status]}]
EOF
echo "  - level: Metadata" >>"$W/audit-policy.yaml"

# register_upstream_webhooks - deploy/webhook's configurations with url clientConfig pointing at
# upstream's manager and its CA; wait until the validator denies the probe.
register_upstream_webhooks() {
    local port ca
    port=$(sed -n 's/^UP_WEBHOOK_PORT=//p' "$W/up/env")
    ca=$(base64 -w0 <"$W/up/certs/ca.crt")
    kc create --dry-run=client -o json -f deploy/webhook/manifests.yaml |
        jq -s --arg base "https://127.0.0.1:$port" --arg ca "$ca" '{apiVersion: "v1", kind: "List", items: [
            .[] | if .kind == "List" then .items[] else . end
            | .webhooks |= map(.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
            >"$D/webhooks.json" &&
        kc apply --server-side --force-conflicts -f "$D/webhooks.json" >"$D/apply-webhooks.log" 2>&1 ||
        scale_die "registering the webhook configurations for upstream failed"
    kt_poll 30 probe_denied || scale_die "the API server does not call upstream's webhook after 30s"
}
# probe_denied - the API server calls the validating webhook, which denies $KTD_PROBE.
probe_denied() { [[ "$(echo "$KTD_PROBE" | kc apply --dry-run=server -f - 2>&1)" == *"denied the request"* ]]; }

# one SIDE N - one fresh plane, one side, N TrainJobs; writes $OUT/N-SIDE.json
one() {
    local side=$1 n=$2 nodes pid who cert key i tt
    nodes=${SCALE_NODES:-$((n / 10 > 1000 ? 1000 : n / 10 > 4 ? n / 10 : 4))}
    [ "$CHAIN" = full ] || nodes=0
    D=$W/$side-$n
    if [ "$CHAIN" = full ]; then
        echo "scale: N=$n $side: plane with $nodes KWOK nodes (up.sh --full)"
    else
        echo "scale: N=$n $side: simulated chain (up.sh --sim, JobSet steps by $SIM_ENGINE)"
    fi
    # Three tries: on a shared machine the port lock (cluster/lib.sh) may be held for minutes.
    for i in 1 2 3; do
        KT_NODES=$nodes KT_POD_RUN_MS=$RUN_MS KT_CHAIN_QPS=$CHAIN_QPS KT_SIM_SHARDS=${SCALE_SIM_SHARDS:-4} KT_SIM_ENGINE=$SIM_ENGINE \
            KT_POD_STEP_MS=$([ "$CHAIN" = sim ] && echo "${SCALE_SIM_STEP_MS:-1000}" || echo "${KT_POD_STEP_MS:-100}") tests/cluster/up.sh "--$CHAIN" "$D" -- \
            --audit-policy-file="$W/audit-policy.yaml" --audit-log-path="$D/audit.log" \
            >"$W/up-$side-$n.log" 2>&1 && break
        tests/cluster/down.sh "$D" >/dev/null 2>&1
        [ "$i" = 3 ] || { echo "scale: up.sh failed, retrying: $(grep 'failed' "$W/up-$side-$n.log" | tail -1)"; continue; }
        tail -20 "$W/up-$side-$n.log" >&2
        scale_die "tests/cluster/up.sh --$CHAIN failed"
    done
    . "$D/env"
    . tests/kt_deploy.sh
    ktd_apply
    if [ "$side" = kt ]; then
        ktd_certs >/dev/null
        ktd_start_webhook
        ktd_start_reconciler
        [ "$REPLICAS" -lt 2 ] || start_standby
        ktd_register_webhooks "$KTD_PROBE"
        pid=$RPID
        who="user:system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager"
        who+=",user:system:serviceaccount:kubeflow-system:kubeflow-trainer-webhook"
    else
        up_start "$D" "$W/up" 2>>"$W/up-$side-$n.log" || scale_die "upstream's manager did not start (log: $W/up/manager.log)"
        register_upstream_webhooks
        pid=$(sed -n 's/^UP_PID=//p' "$W/up/env")
        who="agent:trainer-controller-manager/"
    fi
    $PY gen "$n" --namespaces "$NSS" >"$W/inputs-$n.json"
    for i in $(jq -r '[.[].metadata.namespace] | unique[]' "$W/inputs-$n.json"); do
        kc create namespace "$i" >/dev/null || scale_die "kubectl create namespace $i failed"
    done
    # torchtune claims a 20Gi volume per TrainJob: one static PersistentVolume each.
    tt=0 # (the simulated chain has no controller-manager to bind claims: none there)
    [ "$CHAIN" = sim ] || tt=$(jq '[.[] | select(.spec.runtimeRef.name | startswith("torchtune"))] | length' "$W/inputs-$n.json")
    for i in $(seq "$tt"); do # (none for a small N without torchtune: then nothing to create)
        printf -- '---\n{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"scale-pv-%s"},"spec":{"capacity":{"storage":"100Gi"},"accessModes":["ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Retain","hostPath":{"path":"/tmp/kt-scale-pv-%s"}}}\n' "$i" "$i"
    done >"$W/pvs.yaml"
    [ "$tt" = 0 ] || kc create -f "$W/pvs.yaml" >/dev/null || scale_die "creating PersistentVolumes failed"
    sleep 2 # caches synced
    local rss_idle metrics_b="$D/metrics.before" metrics_a="$D/metrics.after"
    rss_idle=$(kb "$pid" VmRSS)
    kc get --raw /metrics >"$metrics_b"
    own_metrics "$side" "$D/own.before"
    cert=$D/admin.crt key=$D/admin.key
    echo "scale: N=$n $side: creating $n TrainJobs at $RATE/s (0: unpaced) over $CONNS connections (controller pid $pid)"
    rm -f "$W/failover.json"
    if [ "$side" = kt ] && [ -n "$FAILOVER" ]; then
        failover "$n" &
        FPID=$!
    fi
    $PY drive --server "$KT_APISERVER" --ca "$KT_CA" --cert "$cert" --key "$key" \
        --inputs "$W/inputs-$n.json" --rate "$RATE" --conns "$CONNS" --pid "$pid" ${SPID:+--pid "$SPID"} --timeout "${SCALE_TIMEOUT:-$((600 + n))}" \
        --out "$W/drive.json" || scale_die "scale.py drive failed"
    local rss_drain c wc=null wh=null fo=null sb=null
    if [ -n "$FPID" ]; then
        wait "$FPID"
        FPID=""
        [ -s "$W/failover.json" ] || scale_die "the failover did not happen"
        fo=$(cat "$W/failover.json")
        pid=$(jq .survivor_pid "$W/failover.json")
    elif [ -n "$SPID" ]; then
        sb="{\"rss\": $(kb "$SPID" VmRSS), \"cpu\": $(cpu "$SPID")}"
    fi
    rss_drain=$(kb "$pid" VmRSS)
    sleep "$SETTLE"
    kc get --raw /metrics >"$metrics_a"
    own_metrics "$side" "$D/own.after"
    c=$(cpu "$pid")
    [ "$fo" = null ] || c=$(jq -n --argjson a "$c" --argjson f "$fo" '$a + $f.leader_cpu')
    if [ "$side" = kt ]; then
        wc=$(cpu "$WPID")
        wh=$(kb "$WPID" VmHWM)
    fi
    $PY metrics "$metrics_b" "$metrics_a" "$D/own.before" "$D/own.after" >"$W/metrics.json"
    $PY audit --since "$(jq .t0 "$W/drive.json")" "$who" "$D"/audit*.log >"$W/audit.json"
    if [ "${SCALE_AUDIT_STATUS:-0}" = 1 ]; then
        $PY status-writes --since "$(jq .t0 "$W/drive.json")" "$who" "$D"/audit*.log >"$OUT/$n-$side-status.json" &&
            jq -r '"status patches by what they set (\(.trainjobs) TrainJobs, \(.patches) patches):",
                   (.by_shape | to_entries[] | "  \(.value)\t\(.key)")' "$OUT/$n-$side-status.json"
    fi
    jq -n --arg side "$side" --arg chain "$CHAIN" --arg engine "$([ "$CHAIN" = sim ] && echo "$SIM_ENGINE")" --argjson n "$n" --argjson rate "$RATE" --argjson run_ms "$RUN_MS" \
        --argjson nodes "$nodes" --argjson nss "$NSS" --argjson rss_idle "$rss_idle" --argjson rss_drain "$rss_drain" \
        --argjson rss_steady "$(kb "$pid" VmRSS)" --argjson hwm "$(kb "$pid" VmHWM)" \
        --argjson anon_steady "$(kb "$pid" RssAnon)" --argjson cpu "$c" --argjson wh_cpu "$wc" \
        --argjson wh_hwm "$wh" --argjson failover "$fo" --argjson standby "$sb" \
        --argjson replicas "$([ "$side" = kt ] && echo "$REPLICAS" || echo 1)" --slurpfile drive "$W/drive.json" \
        --slurpfile metrics "$W/metrics.json" --slurpfile audit "$W/audit.json" \
        '{side: $side, chain: $chain, sim_engine: (if $engine == "" then null else $engine end), n: $n, rate: $rate, run_ms: $run_ms, plane_nodes: $nodes, namespaces: $nss, rss_idle: $rss_idle,
          rss_drain: $rss_drain, rss_steady: $rss_steady, hwm: $hwm, anon_steady: $anon_steady,
          cpu: $cpu, wh_cpu: $wh_cpu, wh_hwm: $wh_hwm, replicas: $replicas, failover: $failover,
          standby: $standby, drive: $drive[0], metrics: $metrics[0],
          audit: $audit[0]}' >"$OUT/$n-$side.json" || scale_die "writing $OUT/$n-$side.json failed"
    stop_all
}

results=()
for n in $SIZES; do
    for side in ${SIDES//,/ }; do
        case $side in
        kt) ;;
        upstream) [ -x "$UP_BIN" ] || up_build || scale_die "upstream's manager cannot be built" ;;
        *) scale_die "SIDES: unknown side $side (kt, upstream)" ;;
        esac
        one "$side" "$n"
        results+=("$OUT/$n-$side.json")
    done
done
svg=()
[ "$(echo "$SIZES" | wc -w)" -gt 1 ] && svg=(--svg "$OUT/growth.svg")
$PY report "${svg[@]}" "${results[@]}"
