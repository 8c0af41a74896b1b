# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/parity/upstream_lib.sh - upstream Kubeflow Trainer v2.3.0's manager as a test oracle
# (sourced; not executable). Test-only: built from the Go module through the module proxy into a
# per-version cache outside the repo, never shipped.
#
#   up_build                 build the manager once into $UP_BIN (flock; skipped when present);
#                            prints the build time on stderr. Fails loudly without Go/network.
#   up_start PLANE_DIR OUT   start it against a plane made by tests/cluster/up.sh (admin
#                            kubeconfig from PLANE_DIR/env): certificate management and leader
#                            election off, webhook server on a free 127.0.0.1 port with a
#                            throwaway certificate (OUT/certs/ca.crt signs it), health and plain
#                            metrics on free ports; waits until /readyz answers 200 (bounded
#                            poll). Writes OUT/env: UP_PID, UP_WEBHOOK_PORT, UP_HEALTH_PORT,
#                            UP_METRICS_PORT, UP_CA. Log: OUT/manager.log.
#                            UP_LEASE_NAMESPACE=NS turns leader election on as upstream ships it
#                            (Lease trainer.kubeflow.org in NS, 15 s / 10 s / 2 s); /readyz does
#                            not wait for leadership.
#   up_stop OUT              SIGTERM (then SIGKILL after a bounded wait) the manager of OUT/env.
#
# Facts used (upstream's cmd/trainer-controller-manager and pkg/config): flags --config and
# --feature-gates plus zap's; the Configuration's webhook.port/host, health.healthProbeBindAddress,
# metrics.bindAddress/secureServing, leaderElection.leaderElect, certManagement.enable; with
# certificate management off the webhook server reads tls.crt/tls.key from controller-runtime's
# default folder $TMPDIR/k8s-webhook-server/serving-certs; /readyz turns 200 once the webhook
# server listens; the kubeconfig comes from $KUBECONFIG (controller-runtime's GetConfig).

UP_VERSION=v2.3.0
_up_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_up_root=$(cd "$_up_here/../.." && pwd)
UP_DIR="${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/upstream/trainer-$UP_VERSION"
UP_BIN="$UP_DIR/trainer-controller-manager"
. "$_up_root/tests/cluster/lib.sh"
. "$_up_root/tests/integration/certs_lib.sh"

up_log() { echo "upstream: $*" >&2; }

# up_build - the manager binary at $UP_BIN (built from tests/parity/upstream/go.mod, whose go.sum
# pins every module: -mod=readonly, so a fresh machine resolves the same versions).
up_build() {
    local t0 rc=0
    [ -x "$UP_BIN" ] && return 0
    command -v go >/dev/null || {
        up_log "no Go toolchain: cannot build upstream trainer $UP_VERSION"
        return 1
    }
    mkdir -p "$UP_DIR"
    exec 8>"$UP_DIR/.lock"
    flock -w 3600 8 || {
        up_log "timed out waiting for $UP_DIR/.lock"
        exec 8>&-
        return 1
    }
    if [ ! -x "$UP_BIN" ]; then
        t0=$SECONDS
        up_log "building trainer-controller-manager $UP_VERSION (cold: minutes on 2 cores)"
        (
            cd "$_up_here/upstream" &&
                GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly nice -n 10 \
                    go build -o "$UP_BIN.tmp" github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
        ) && mv "$UP_BIN.tmp" "$UP_BIN" || rc=1
        if [ "$rc" = 0 ]; then
            up_log "built trainer-controller-manager in $((SECONDS - t0))s"
        else
            rm -f "$UP_BIN.tmp"
            up_log "building trainer-controller-manager $UP_VERSION failed"
        fi
    fi
    exec 8>&-
    return "$rc"
}

# up_start PLANE_DIR OUT_DIR
up_start() {
    local plane=$1 out=$2 wp hp mp pid tmp
    [ -x "$UP_BIN" ] || up_build || return 1
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    tmp="$out/tmp"
    mkdir -p "$out/certs" "$tmp/k8s-webhook-server/serving-certs"
    it_serving_certs "$out/certs" kt-parity-upstream-ca 2 || {
        up_log "openssl failed"
        return 1
    }
    cp "$out/certs/tls.crt" "$out/certs/tls.key" "$tmp/k8s-webhook-server/serving-certs/"
    kt_port_lock || {
        up_log "the port lock (shared with every local cluster's start) not acquired within 120s"
        return 1
    }
    kt_pick_port wp && kt_pick_port hp && kt_pick_port mp || {
        kt_port_unlock
        return 1
    }
    cat >"$out/config.yaml" <<EOF
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:$hp
metrics:
  bindAddress: 127.0.0.1:$mp
  secureServing: false
webhook:
  port: $wp
  host: 127.0.0.1
leaderElection:
$(if [ -n "${UP_LEASE_NAMESPACE:-}" ]; then
        printf '  leaderElect: true\n  resourceName: trainer.kubeflow.org\n  resourceNamespace: %s\n' "$UP_LEASE_NAMESPACE"
        printf '  leaseDuration: 15s\n  renewDeadline: 10s\n  retryPeriod: 2s\n'
    else
        printf '  leaderElect: false\n'
    fi)
controller:
  groupKindConcurrency:
    TrainJob.trainer.kubeflow.org: 5
    TrainingRuntime.trainer.kubeflow.org: 1
    ClusterTrainingRuntime.trainer.kubeflow.org: 1
certManagement:
  enable: false
clientConnection:
  qps: 500
  burst: 1000
EOF
    KUBECONFIG="$(kt_env_get "$plane" KT_ADMIN_KUBECONFIG)" TMPDIR="$tmp" \
        setsid "$UP_BIN" --config "$out/config.yaml" --zap-log-level=info \
        </dev/null >"$out/manager.log" 2>&1 9>&- &
    pid=$!
    {
        echo "UP_PID=$pid"
        echo "UP_WEBHOOK_PORT=$wp"
        echo "UP_HEALTH_PORT=$hp"
        echo "UP_METRICS_PORT=$mp"
        echo "UP_CA=$out/certs/ca.crt"
    } >"$out/env"
    KT_READY_TIMEOUT=${KT_READY_TIMEOUT:-120} kt_wait_http "$pid" "http://127.0.0.1:$hp/readyz" \
        trainer-controller-manager || {
        kt_port_unlock
        tail -30 "$out/manager.log" >&2
        up_stop "$out"
        return 1
    }
    kt_port_unlock
    up_log "trainer-controller-manager $UP_VERSION ready (pid $pid, webhook 127.0.0.1:$wp)"
}

# up_stop OUT_DIR
up_stop() {
    local pid
    [ -f "$1/env" ] || return 0
    pid=$(sed -n 's/^UP_PID=//p' "$1/env")
    [ -n "$pid" ] || return 0
    kt_stop "$pid" trainer-controller-manager
}
