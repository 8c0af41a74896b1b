#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/demo/run.sh - `make run`: the product end to end on this machine.
#
# Starts the local cluster in $KT_RUN_DIR (default /tmp/kt-run) with tests/cluster/up.sh --full:
# etcd + kube-apiserver, kube-controller-manager, kube-scheduler, the JobSet controller with its
# webhooks, and KWOK playing the kubelets of four fake nodes (no container runs). Where the
# machine can run containers (root, cgroups, containerd/runc/CNI from `make deps`) and no other
# cluster holds it, it adds the real node (up.sh --real-node: containerd, runc, kubelet,
# kube-proxy, CoreDNS): the example's pods then run the torch image (tests/cluster/images, built
# from Debian packages and imported; the shipped runtime is pointed at it by a kustomize
# `images:` overlay) and really train, their log lines streamed here. Then it applies
# deploy/rbac, deploy/runtimes and the public ConfigMap, issues certificates with `ktctl certs`,
# starts kt-webhook and kt-reconciler as their own non-admin identities, registers the webhook
# configurations (url: https://127.0.0.1:PORT; caBundle injected by kt-reconciler's leader from
# the certificate folder), submits scripts/demo/example-trainjob.yaml and follows it: JobSet, Jobs,
# pods scheduled onto fake nodes, Running, Succeeded, and the TrainJob Complete. Nothing here
# writes any status: every transition comes from the controllers. Then it prints what to try next. On a terminal it then waits for Ctrl-C; with stdin not
# a terminal, or KT_RUN_WAIT=0, it stops after the demo. Everything it started is stopped on
# exit; the folder (logs, kubeconfigs, certificates) stays for inspection.
# Knobs: KT_RUN_DIR, KT_RUN_WAIT=0, KT_WEBHOOK_BIN / KT_RECONCILER_BIN (other builds),
# KT_RUN_NODE=auto (default: the real node where possible, else KWOK, saying why in one line),
# real (fail without it) or kwok (fake nodes only).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1

D=${KT_RUN_DIR:-/tmp/kt-run}
WEBHOOK=${KT_WEBHOOK_BIN:-$root/build/plain/bin/kt-webhook}
RECONCILER=${KT_RECONCILER_BIN:-$root/build/plain/bin/kt-reconciler}
KTCTL=$root/build/plain/bin/ktctl
EXAMPLE=$root/scripts/demo/example-trainjob.yaml
TJ=mnist
NS=default
T0=$(date +%s%N)
WPID=""
RPID=""
LOGS_PID=""
RUN_NODE=${KT_RUN_NODE:-auto}
CLUSTER_UP=0
STEP=0
STEPS=10

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
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
    kill -TERM "$1" 2>/dev/null
    for _ in $(seq 100); do
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
    stop_pid "$LOGS_PID" "kubectl logs"
    stop_pid "$RPID" kt-reconciler
    stop_pid "$WPID" kt-webhook
    rm -f "$D/daemons.pids"
    if [ "$CLUSTER_UP" = 1 ]; then
        tests/cluster/down.sh "$D" 2>"$D/down.log" || echo "    down.sh failed; see $D/down.log" >&2
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
case $RUN_NODE in
auto | real) up_mode=--real-node ;;
kwok) up_mode=--full ;;
*) die "KT_RUN_NODE=$RUN_NODE: want auto, real or kwok" ;;
esac
if [ "$up_mode" = --real-node ]; then
    step "local cluster in $D: etcd, kube-apiserver, controller-manager, scheduler, JobSet, KWOK nodes, a real node where possible"
else
    step "local cluster in $D: etcd, kube-apiserver, controller-manager, scheduler, JobSet, KWOK nodes"
fi
. scripts/cluster/versions.sh
if [ ! -x "$(kt_cluster_bindir)/kube-controller-manager" ] || [ ! -x "$(kt_cluster_bindir)/kwok-$KWOK_VERSION" ]; then
    info "first run: building the cluster's binaries from Go modules into" \
        "$(kt_cluster_bindir) (cached afterwards; this is the slow part: ~20 min on 2 cores)"
fi
mkdir -p "$D"
CLUSTER_UP=1
# setsid: Ctrl-C must reach only this script, which then stops the daemons before the
# control plane (kube-apiserver and etcd would otherwise die first from the same SIGINT).
# Its progress (on a first run: the Go builds) goes to the terminal and to $D/up.log.
KT_REAL_NODE_OPTIONAL=1 setsid tests/cluster/up.sh "$up_mode" "$D" 2>&1 >/dev/null </dev/null |
    tee "$D/up.log" | sed 's/^/    /' || die "tests/cluster/up.sh failed (log: $D/up.log)"
. "$D/env"
REAL=${KT_REAL_NODE:-0}
[ "$REAL" = 1 ] || [ "$RUN_NODE" != real ] || die "KT_RUN_NODE=real, but the real node is unavailable (see above)"
kc() { "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" --cache-dir "$D/kubectl-cache" "$@"; }
info "API server $KT_APISERVER (kube-apiserver $(kc version -o json 2>/dev/null | jq -r .serverVersion.gitVersion))"
nodes() { # nodes SELECTOR
    kc get nodes -l "$1" -o json | jq -r '[.items[] | "\(.metadata.name) (\(.status.allocatable.cpu) CPU, \(.status.allocatable.memory), \(.status.allocatable["nvidia.com/gpu"] // "0") GPU)"] | join(", ")'
}
if [ "$REAL" = 1 ]; then
    info "real node (containerd, runc, kubelet, kube-proxy, CoreDNS): $(nodes kt.kubeflow.org/real-node=true)"
    info "nodes (simulated by KWOK, tainted: only pods that tolerate it land there): $(nodes type=kwok)"
else
    info "nodes (simulated by KWOK): $(nodes type=kwok)"
fi

# ---- 2. RBAC, runtimes, public ConfigMap -------------------------------------------------
ROOT=$root
. tests/kt_deploy.sh
if [ "$REAL" = 1 ]; then
    # The air-gapped way: the shipped runtime files stay as they are; a kustomize overlay's
    # `images:` points torch-distributed at the locally built image, imported into containerd.
    step "RBAC for both daemons (deploy/rbac), the shipped runtimes (deploy/runtimes, torch image built here), deploy/public"
    info "the torch image (Debian's python3-torch; the first run builds it from Debian packages, ~4 min)"
    # import.sh builds when needed, imports, and prints "NAME REF".
    torch_ref=$(tests/cluster/images/import.sh "$KT_CONTAINERD_SOCK" torch 2>"$D/images.log" |
        awk '$1 == "torch" { print $2 }')
    [ -n "$torch_ref" ] || die "building or importing the torch image failed (log: $D/images.log)"
    mkdir -p "$D/runtimes"
    # (kustomize takes no absolute resource paths)
    printf '%s\n' "resources: [$(realpath --relative-to="$D/runtimes" "$root/deploy/runtimes")]" "images:" \
        "  - {name: pytorch/pytorch, newName: ${torch_ref%:*}, newTag: \"${torch_ref##*:}\"}" \
        >"$D/runtimes/kustomization.yaml"
    KTD_RUNTIMES=$D/runtimes
    info "$torch_ref in the node's containerd; torch-distributed points at it ($D/runtimes/kustomization.yaml)"
else
    step "RBAC for both daemons (deploy/rbac), the shipped runtimes (deploy/runtimes), deploy/public"
fi
ktd_apply
info "$(kc get clustertrainingruntimes -o name | wc -l) ClusterTrainingRuntimes:" \
    "$(kc get clustertrainingruntimes -o jsonpath='{.items[*].metadata.name}')"

# ---- 3. certificates ---------------------------------------------------------------------
step "certificates: ktctl certs --dir $D/certs --san IP:127.0.0.1 --san DNS:localhost"
ktd_certs >"$D/certs.log"
sed 's/^/    /' "$D/certs.log"

# ---- 4. kt-webhook -----------------------------------------------------------------------
step "kt-webhook as system:serviceaccount:kubeflow-system:kubeflow-trainer-webhook"
: >"$D/kt-webhook.log"
ktd_start_webhook
info "ready: webhook https://127.0.0.1:$WPORT, health http://127.0.0.1:$WHPORT (pid $WPID)"

# ---- 5. kt-reconciler --------------------------------------------------------------------
step "kt-reconciler as system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager"
: >"$D/kt-reconciler.log"
ktd_start_reconciler
info "ready: health http://127.0.0.1:$RHPORT (pid $RPID); Lease trainer.kubeflow.org held by $(ktd_lease_holder)"

# ---- 6. webhook configurations -----------------------------------------------------------
step "webhook configurations (deploy/webhook) with url https://127.0.0.1:$WPORT"
bad=$(sed -e "s/name: $TJ\$/name: $TJ-reserved-env/" -e 's/name: EPOCHS$/name: PET_NNODES/' "$EXAMPLE")
ktd_register_webhooks "$bad"
info "caBundle injected by kt-reconciler's leader from $D/certs/ca.crt (local mode, --cert-dir)"

# ---- 7. the webhook at work --------------------------------------------------------------
step "the webhook at work: a TrainJob that sets a reserved env var is refused"
out=$(echo "$bad" | kc apply -f - 2>&1)
info "\$ kubectl apply -f <the example with env PET_NNODES>" "$out"
[[ "$out" == *'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request'* ]] ||
    die "expected the validating webhook to deny it"

# ---- 8. the example TrainJob -------------------------------------------------------------
step "submit scripts/demo/example-trainjob.yaml (TrainJob $TJ on torch-distributed, 2 nodes)"
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
info "TrainJob conditions:" "${c:-      (none yet)}"

# ---- 9. the job runs --------------------------------------------------------------------
if [ "$REAL" = 1 ]; then
    step "the job runs: JobSet controller -> Jobs -> scheduler -> pods on the real node $KT_NODE_NAME (torchrun, gloo)"
else
    step "the job runs: JobSet controller -> Jobs -> scheduler -> pods on KWOK nodes"
fi
# snapshot - one line per Job and per pod (phase, node); printed again whenever it changes.
snapshot() {
    kc get jobs,pods -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$TJ" -o json 2>/dev/null | jq -r '
        .items[] | if .kind == "Job" then
            "      job \(.metadata.name): active=\(.status.active // 0) succeeded=\(.status.succeeded // 0) failed=\(.status.failed // 0)\([.status.conditions[]? | select(.status == "True") | " " + .type] | join(""))"
        else
            "      pod \(.metadata.name): \(.status.phase)\(if .spec.nodeName then " on " + .spec.nodeName else "" end)"
        end' | sort
}
tjstate() {
    kc get trainjob "$TJ" -n "$NS" -o json 2>/dev/null |
        jq -r '[.status.conditions[]? | select(.status == "True") | .type] | join(",")'
}
# follow_logs SNAPSHOT - once every pod of the JobSet has started, stream their logs here
# (kubectl logs -f, one prefix per pod) until the containers end.
follow_logs() {
    local n
    n=$(grep -c '^      pod ' <<<"$1")
    [ "$n" -ge 2 ] && ! grep -qE '^      pod .*: Pending' <<<"$1" || return 0
    kc logs -f -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$TJ" --prefix --tail=-1 \
        --max-log-requests=10 2>&1 | sed -u 's/^/      | /' &
    LOGS_PID=$!
}
last=""
deadline=$((SECONDS + ${KT_RUN_TIMEOUT:-300}))
while :; do
    cur=$(snapshot)
    if [ -n "$cur" ] && [ "$cur" != "$last" ]; then
        printf '    at %s:\n%s\n' "$(elapsed)" "$cur"
        last=$cur
    fi
    [ "$REAL" = 0 ] || [ -n "$LOGS_PID" ] || follow_logs "$cur"
    st=$(tjstate)
    case ",$st," in
    *,Complete,* | *,Failed,*) break ;;
    esac
    [ $SECONDS -lt $deadline ] || die "TrainJob $TJ not finished after ${KT_RUN_TIMEOUT:-300}s (logs: $D/*.log)"
    sleep 0.3
done

# ---- 10. the outcome ---------------------------------------------------------------------
if [ -n "$LOGS_PID" ]; then # the containers have ended: the stream ends by itself (bounded)
    for _ in $(seq 100); do kill -0 "$LOGS_PID" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$LOGS_PID" "kubectl logs"
    LOGS_PID=""
fi
step "TrainJob $TJ finished: conditions set by kt-reconciler from the JobSet's own status"
info "TrainJob conditions:" "$(conds)"
info "jobsStatus: $(kc get trainjob "$TJ" -n "$NS" -o jsonpath='{.status.jobsStatus}')"
case ",$(tjstate)," in
*,Complete,*) ;;
*) die "TrainJob $TJ did not complete (logs: $D/*.log)" ;;
esac

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
  $KTCTL validate deploy/runtimes $EXAMPLE
  curl -sk https://127.0.0.1:$WMPORT/metrics | grep -v '^#' | head   # kt-webhook metrics (TLS)
  curl -s http://127.0.0.1:$RHPORT/readyz             # kt-reconciler readiness

  logs: $D/kt-webhook.log  $D/kt-reconciler.log  $D/apiserver.log
EOF
if [ "$REAL" = 1 ]; then
    cat <<EOF
  kubectl get pods -o wide; kubectl get nodes            # $KT_NODE_NAME is real; kwok-node-* are KWOK's fakes
  kubectl logs -l jobset.sigs.k8s.io/jobset-name=$TJ --prefix   # what the training printed
  kubectl delete trainjob $TJ                           # the garbage collector removes its JobSet, Jobs, pods
  (containers run in containerd under the kubelet: ctr --address $KT_CONTAINERD_SOCK -n k8s.io containers ls)

EOF
else
    cat <<EOF
  kubectl get pods -o wide; kubectl get nodes            # fake nodes: KWOK plays the kubelets
  kubectl delete trainjob $TJ                           # the garbage collector removes its JobSet, Jobs, pods
  (no container runs: each pod is Running for ${KT_POD_RUN_MS:-3000} ms, then Succeeded; KT_SIM_EXIT_CODE=N fails it)

EOF
fi
if [ -t 0 ] && [ "${KT_RUN_WAIT:-1}" != 0 ]; then
    printf '%sRunning.%s Press Ctrl-C to stop everything.\n' "$B" "$N"
    while kill -0 "$WPID" 2>/dev/null && kill -0 "$RPID" 2>/dev/null; do
        sleep 1
    done
    die "a daemon exited unexpectedly (logs: $D/kt-webhook.log, $D/kt-reconciler.log)"
fi
echo "stdin is not a terminal (or KT_RUN_WAIT=0): stopping now; run 'make run' in a terminal to keep it up."
