#!/usr/bin/env bash
# tests/run-demo.sh - `make run`: the product end to end on this machine.
#
# Starts the local control plane (tests/cluster/up.sh: etcd + kube-apiserver, our CRDs and
# JobSet's) in $KT_RUN_DIR (default /tmp/kt-run), applies deploy/rbac and deploy/runtimes,
# issues certificates with `ktctl certs`, starts kt-webhook and kt-reconciler as their own
# non-admin identities, registers the webhook configurations (url: https://127.0.0.1:PORT;
# caBundle injected by kt-reconciler's leader from the certificate folder), submits
# tests/run/example-trainjob.yaml, shows the JobSet and the TrainJob's conditions, writes the
# JobSet status the way the integration tests do (there is no JobSet controller or kubelet
# here), and prints what to try next. On a terminal it then waits for Ctrl-C; with stdin not
# a terminal, or KT_RUN_WAIT=0, it stops after the demo. Everything it started is stopped on
# exit; the folder (logs, kubeconfigs, certificates) stays for inspection.
# Knobs: KT_RUN_DIR, KT_RUN_WAIT=0, KT_WEBHOOK_BIN / KT_RECONCILER_BIN (other builds).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

D=${KT_RUN_DIR:-/tmp/kt-run}
WEBHOOK=${KT_WEBHOOK_BIN:-$root/build/plain/bin/kt-webhook}
RECONCILER=${KT_RECONCILER_BIN:-$root/build/plain/bin/kt-reconciler}
KTCTL=$root/build/plain/bin/ktctl
CONFIG=$root/deploy/manager/controller_manager_config.yaml
EXAMPLE=$root/tests/run/example-trainjob.yaml
TJ=mnist
NS=default
T0=$(date +%s%N)
WPID=""
RPID=""
CLUSTER_UP=0
STEP=0
STEPS=9

if [ -t 1 ]; then
    B=$'\033[1m'
    G=$'\033[32m'
    R=$'\033[31m'
    N=$'\033[0m'
else
    B="" G="" R="" N=""
fi
elapsed() {
    local ms=$((($(date +%s%N) - T0) / 1000000))
    printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100))
}
step() {
    STEP=$((STEP + 1))
    printf '%s==> [%d/%d] %s%s  (%s)\n' "$B" "$STEP" "$STEPS" "$*" "$N" "$(elapsed)"
}
info() { printf '    %s\n' "$@"; }
die() {
    printf '%smake run: %s%s\n' "$R" "$*" "$N" >&2
    exit 1
}

# ---- cleanup: only what this script started, by PID --------------------------------------
stop_pid() { # stop_pid PID NAME
    local i
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
    kill -TERM "$1" 2>/dev/null
    for i in $(seq 100); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$1" 2>/dev/null; then
        echo "    $2 ($1) ignored SIGTERM for 5s; killing it" >&2
        kill -KILL "$1" 2>/dev/null
    fi
    wait "$1" 2>/dev/null
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    trap '' PIPE
    if [ -n "$WPID$RPID" ] || [ "$CLUSTER_UP" = 1 ]; then
        printf '%s==> stopping%s kt-reconciler, kt-webhook and the control plane\n' "$B" "$N"
    fi
    stop_pid "$RPID" kt-reconciler
    stop_pid "$WPID" kt-webhook
    rm -f "$D/daemons.pids"
    if [ "$CLUSTER_UP" = 1 ]; then
        tests/cluster/down.sh "$D" 2>/dev/null || echo "    down.sh failed; see $D" >&2
    fi
    if [ "$rc" -eq 0 ]; then
        printf '%sdone%s in %s; logs, kubeconfigs and certificates stay in %s\n' "$G" "$N" \
            "$(elapsed)" "$D"
    else
        printf '%smake run failed%s after %s; logs in %s\n' "$R" "$N" "$(elapsed)" "$D" >&2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'echo; exit 0' INT TERM
# A closed terminal or output pipe must still stop everything (the EXIT trap runs on exit).
trap 'exit 1' HUP PIPE

# A previous run killed hard may have left its daemons (recorded by PID) and control plane.
if [ -f "$D/daemons.pids" ]; then
    while read -r pid bin; do
        if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ]; then
            echo "    stopping a daemon left by an earlier run (pid $pid)"
            kill -TERM "$pid" 2>/dev/null
        fi
    done <"$D/daemons.pids"
    rm -f "$D/daemons.pids"
fi
if [ -f "$D/env" ]; then
    tests/cluster/down.sh "$D" >/dev/null 2>&1 || true
fi

for b in "$KTCTL" "$WEBHOOK" "$RECONCILER"; do
    [ -x "$b" ] || die "$b is missing: run 'make' first (make run builds it)"
done
for b in "$WEBHOOK" "$RECONCILER"; do
    case "$("$b" --help 2>&1)" in *--kubeconfig*) continue ;; esac
    die "$(basename "$b") in this build does not run (\`$b --help\` printed no usage); the demo needs both daemons"
done

# ---- 1. control plane --------------------------------------------------------------------
step "control plane: etcd + kube-apiserver + CRDs in $D"
. tests/cluster/versions.sh
if [ ! -x "$(kt_cluster_bindir)/kube-apiserver" ]; then
    info "first run: building kube-apiserver, kubectl and etcd from Go modules into" \
        "$(kt_cluster_bindir) (cached afterwards; this is the slow part)"
fi
mkdir -p "$D"
CLUSTER_UP=1
# setsid: Ctrl-C must reach only this script, which then stops the daemons before the
# control plane (kube-apiserver and etcd would otherwise die first from the same SIGINT).
# Its progress (on a first run: the Go builds) goes to the terminal and to $D/up.log.
setsid tests/cluster/up.sh "$D" 2>&1 >/dev/null </dev/null | tee "$D/up.log" | sed 's/^/    /' ||
    die "tests/cluster/up.sh failed (log: $D/up.log)"
. "$D/env"
kc() { "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" --cache-dir "$D/kubectl-cache" "$@"; }
info "API server $KT_APISERVER (kube-apiserver $(kc version -o json 2>/dev/null | jq -r .serverVersion.gitVersion))"

# ---- 2. RBAC and runtimes ----------------------------------------------------------------
step "RBAC for both daemons (deploy/rbac) and the shipped runtimes (deploy/runtimes)"
kc apply --server-side -k deploy/rbac/reconciler >"$D/apply.log" 2>&1 &&
    kc apply --server-side -k deploy/rbac/webhook >>"$D/apply.log" 2>&1 &&
    kc apply --server-side -k deploy/runtimes >>"$D/apply.log" 2>&1 || {
    cat "$D/apply.log" >&2
    die "kubectl apply failed"
}
info "$(kc get clustertrainingruntimes -o name | wc -l) ClusterTrainingRuntimes:" \
    "$(kc get clustertrainingruntimes -o jsonpath='{.items[*].metadata.name}')"

# ---- 3. certificates ---------------------------------------------------------------------
step "certificates: ktctl certs --dir $D/certs --san IP:127.0.0.1 --san DNS:localhost"
rm -rf "$D/certs"
"$KTCTL" certs --dir "$D/certs" --san IP:127.0.0.1 --san DNS:localhost | sed 's/^/    /' ||
    die "ktctl certs failed"

# wait_ready NAME PID PORTFILE - bounded poll until the daemon's /readyz answers 200.
wait_ready() {
    local port deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
        kill -0 "$2" 2>/dev/null || {
            tail -20 "$D/$1.log" >&2
            die "$1 exited (log: $D/$1.log)"
        }
        if [ -s "$3" ]; then
            port=$(jq -r .health "$3")
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ] &&
                return 0
        fi
        sleep 0.05
    done
    tail -20 "$D/$1.log" >&2
    die "$1 not ready after 60s (log: $D/$1.log)"
}
record_pid() { echo "$1 $(readlink "/proc/$1/exe")" >>"$D/daemons.pids"; }

# ---- 4. kt-webhook -----------------------------------------------------------------------
step "kt-webhook as system:serviceaccount:kubeflow-system:kubeflow-trainer-webhook"
rm -f "$D/kt-webhook.ports"
setsid "$WEBHOOK" --config "$CONFIG" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
    --tls-cert-file "$D/certs/tls.crt" --tls-key-file "$D/certs/tls.key" \
    --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --portfile "$D/kt-webhook.ports" </dev/null >"$D/kt-webhook.log" 2>&1 &
WPID=$!
record_pid "$WPID"
wait_ready kt-webhook "$WPID" "$D/kt-webhook.ports"
WPORT=$(jq -r .webhook "$D/kt-webhook.ports")
WHPORT=$(jq -r .health "$D/kt-webhook.ports")
WMPORT=$(jq -r .metrics "$D/kt-webhook.ports")
info "ready: webhook https://127.0.0.1:$WPORT, health http://127.0.0.1:$WHPORT (pid $WPID)"

# ---- 5. kt-reconciler --------------------------------------------------------------------
step "kt-reconciler as system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager"
INJECT=reconciler
rflags=()
if [[ "$("$RECONCILER" --help 2>&1)" == *--cert-dir* ]]; then
    rflags=(--cert-dir "$D/certs")
else
    INJECT=script
fi
rm -f "$D/kt-reconciler.ports"
setsid "$RECONCILER" --config "$CONFIG" --kubeconfig "$KT_RECONCILER_KUBECONFIG" "${rflags[@]}" \
    --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --portfile "$D/kt-reconciler.ports" </dev/null >"$D/kt-reconciler.log" 2>&1 &
RPID=$!
record_pid "$RPID"
wait_ready kt-reconciler "$RPID" "$D/kt-reconciler.ports"
RHPORT=$(jq -r .health "$D/kt-reconciler.ports")
deadline=$((SECONDS + 30))
until [ -n "$(kc get lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" ] ||
    [ $SECONDS -ge $deadline ]; do sleep 0.1; done
info "ready: health http://127.0.0.1:$RHPORT (pid $RPID); Lease trainer.kubeflow.org held by $(kc get lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || echo '?')"

# ---- 6. webhook configurations -----------------------------------------------------------
step "webhook configurations (deploy/webhook) with url https://127.0.0.1:$WPORT"
kc create --dry-run=client -o json -f deploy/webhook/manifests.yaml |
    jq -s --arg base "https://127.0.0.1:$WPORT" '{apiVersion: "v1", kind: "List", items: [
        .[] | if .kind == "List" then .items[] else . end
        | .webhooks |= map(.clientConfig = {url: ($base + .clientConfig.service.path)})]}' \
        >"$D/webhooks.json" &&
    kc apply --server-side --force-conflicts -f "$D/webhooks.json" >"$D/apply-webhooks.log" 2>&1 || {
    cat "$D/apply-webhooks.log" >&2
    die "registering the webhook configurations failed"
}
want=$(base64 -w0 <"$D/certs/ca.crt")
bundles() {
    { kc get validatingwebhookconfiguration validator.trainer.kubeflow.org -o json &&
        kc get mutatingwebhookconfiguration defaulter.trainer.kubeflow.org -o json; } 2>/dev/null |
        jq -r '.webhooks[].clientConfig.caBundle // ""' | sort -u
}
if [ "$INJECT" = reconciler ]; then
    deadline=$((SECONDS + 30))
    until [ "$(bundles)" = "$want" ] || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
    [ "$(bundles)" = "$want" ] || die "kt-reconciler did not inject caBundle within 30s (log: $D/kt-reconciler.log)"
    info "caBundle injected by kt-reconciler's leader from $D/certs/ca.crt (local mode, --cert-dir)"
else
    for k in validatingwebhookconfiguration/validator.trainer.kubeflow.org \
        mutatingwebhookconfiguration/defaulter.trainer.kubeflow.org; do
        n=$(kc get "$k" -o json | jq '.webhooks | length')
        patch=$(jq -n --arg b "$want" --argjson n "$n" \
            '[range($n) | {op: "add", path: "/webhooks/\(.)/clientConfig/caBundle", value: $b}]')
        kc patch "$k" --type=json -p "$patch" >/dev/null || die "caBundle patch failed"
    done
    info "NOTE: this kt-reconciler build has no --cert-dir (certs/rotator.h not wired in yet):" \
        "the script injected caBundle itself with kubectl patch"
fi
# The API server picks configurations up asynchronously: wait until the validator answers.
bad=$(sed -e "s/name: $TJ\$/name: $TJ-reserved-env/" -e 's/name: EPOCHS$/name: PET_NNODES/' "$EXAMPLE")
deadline=$((SECONDS + 30))
until [[ "$(echo "$bad" | kc apply --dry-run=server -f - 2>&1)" == *"denied the request"* ]] ||
    [ $SECONDS -ge $deadline ]; do sleep 0.1; done

# ---- 7. the webhook at work --------------------------------------------------------------
step "the webhook at work: a TrainJob that sets a reserved env var is refused"
out=$(echo "$bad" | kc apply -f - 2>&1)
info "\$ kubectl apply -f <the example with env PET_NNODES>" "$out"
[[ "$out" == *'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request'* ]] ||
    die "expected the validating webhook to deny it"

# ---- 8. the example TrainJob -------------------------------------------------------------
step "submit tests/run/example-trainjob.yaml (TrainJob $TJ on torch-distributed, 2 nodes)"
kc apply -f "$EXAMPLE" | sed 's/^/    /' || die "kubectl apply of the example failed"
kc wait --for=create "jobset/$TJ" -n "$NS" --timeout=60s >/dev/null ||
    die "no JobSet $TJ after 60s (log: $D/kt-reconciler.log)"
info "kt-reconciler created JobSet $TJ; what it asks for:"
kc get jobset "$TJ" -n "$NS" -o json | jq -r '
    .spec.replicatedJobs[] | . as $r | .template.spec.template.spec.containers[] |
    "      replicatedJob \($r.name): \($r.replicas) x parallelism \($r.template.spec.parallelism), image \(.image)",
    "        command: \(.command // [] | join(" "))",
    "        env: \([.env[]? | "\(.name)=\(.value // "<\(.valueFrom | keys[0])>")"] | join(" "))",
    "        resources: \(.resources | tojson)"'
info "owned objects: $(kc get configmaps,jobsets -n "$NS" -l "trainer.kubeflow.org/trainjob-name=$TJ" -o name | tr '\n' ' ')"
conds() {
    kc get trainjob "$TJ" -n "$NS" -o json |
        jq -r '.status.conditions // [] | .[] | "      \(.type)=\(.status) reason=\(.reason) message=\"\(.message)\""'
}
c=$(conds)
info "TrainJob conditions:" "${c:-      (none yet: the JobSet has no status)}"

# ---- 9. completion, simulated ------------------------------------------------------------
step "simulate the JobSet finishing: THIS SCRIPT writes JobSet status Completed"
info "(no JobSet controller or kubelet runs here; the integration tests write JobSet status" \
    "the same way, as upstream's do: kubectl patch jobset $TJ --subresource=status)"
now=$(date -u +%FT%TZ)
kc patch jobset "$TJ" -n "$NS" --subresource=status --type=merge -p "{\"status\":{
    \"conditions\":[{\"type\":\"Completed\",\"status\":\"True\",\"reason\":\"AllJobsCompleted\",
    \"message\":\"jobset completed successfully\",\"lastTransitionTime\":\"$now\"}],
    \"replicatedJobsStatus\":[{\"name\":\"node\",\"ready\":0,\"succeeded\":2,\"failed\":0,
    \"active\":0,\"suspended\":0}]}}" >/dev/null || die "writing the JobSet status failed"
kc wait --for=condition=Complete "trainjob/$TJ" -n "$NS" --timeout=60s >/dev/null ||
    die "TrainJob $TJ did not become Complete (log: $D/kt-reconciler.log)"
info "kt-reconciler mirrored it into the TrainJob:" "$(conds)"
info "jobsStatus: $(kc get trainjob "$TJ" -n "$NS" -o jsonpath='{.status.jobsStatus}')"

printf '\n%sIt works.%s Demo took %s. Try next (in another terminal):\n\n' "$G" "$N" "$(elapsed)"
cat <<EOF
  export KUBECONFIG=$KT_ADMIN_KUBECONFIG
  export PATH=$KT_BIN:\$PATH            # kubectl $("$KT_KUBECTL" version --client -o json 2>/dev/null | jq -r .clientVersion.gitVersion)
  kubectl get trainjobs,jobsets -A
  kubectl get trainjob $TJ -o yaml
  kubectl get jobset $TJ -o yaml
  kubectl get clustertrainingruntimes
  sed 's/name: $TJ\$/name: my-job/' $EXAMPLE | kubectl apply -f -
  kubectl get jobset my-job -o jsonpath='{.spec.replicatedJobs[0].replicas}{"\\n"}'
  kubectl patch trainjob my-job --type=merge -p '{"spec":{"suspend":true}}'
  kubectl get events -n default
  $KTCTL render --runtime deploy/runtimes/torch-distributed.yaml $EXAMPLE
  $KTCTL validate deploy/runtimes tests/run
  curl -sk https://127.0.0.1:$WMPORT/metrics | grep -v '^#' | head   # kt-webhook metrics (TLS)
  curl -s http://127.0.0.1:$RHPORT/readyz             # kt-reconciler readiness

  logs: $D/kt-webhook.log  $D/kt-reconciler.log  $D/apiserver.log
  (no kube-controller-manager here: deleting a TrainJob leaves its JobSet; no pods run)

EOF
if [ -t 0 ] && [ "${KT_RUN_WAIT:-1}" != 0 ]; then
    printf '%sRunning.%s Press Ctrl-C to stop everything.\n' "$B" "$N"
    while kill -0 "$WPID" 2>/dev/null && kill -0 "$RPID" 2>/dev/null; do
        sleep 1
    done
    die "a daemon exited unexpectedly (logs: $D/kt-webhook.log, $D/kt-reconciler.log)"
fi
echo "stdin is not a terminal (or KT_RUN_WAIT=0): stopping now; run 'make run' in a terminal to keep it up."
