# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/cluster/lib.sh - shared helpers of up.sh, restart-apiserver.sh and down.sh (sourced).
# A cluster directory DIR holds the certificates, the kubeconfigs, the logs (DIR/*.log), the
# API server's extra flags (DIR/apiserver.flags) and DIR/env, the interface other code reads.

kt_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$kt_here/../../scripts/cluster/versions.sh"
KT_BIN=$(kt_cluster_bindir)
KT_READY_TIMEOUT=${KT_READY_TIMEOUT:-90}

kt_log() { echo "cluster: $*" >&2; }

# kt_env_get DIR NAME - print one assignment of DIR/env (empty when absent).
kt_env_get() {
    [ -f "$1/env" ] || return 0
    (
        unset "$2" # the file's value only, not a same-named variable of the caller's shell
        . "$1/env"
        eval "printf '%s' \"\${$2:-}\""
    )
}

# kt_env_set DIR NAME VALUE - add or replace one assignment in DIR/env (atomically).
kt_env_set() {
    local f="$1/env" tmp="$1/env.tmp"
    touch "$f"
    grep -v "^$2=" "$f" >"$tmp" || true
    printf '%s=%q\n' "$2" "$3" >>"$tmp"
    mv "$tmp" "$f"
}

# kt_port_free PORT - true when nothing listens on 127.0.0.1:PORT (or any address).
kt_port_free() {
    [ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
}

# kt_pick_port VAR - set VAR to a free TCP port below the kernel's ephemeral range (so
# outgoing connections never take it). Callers hold the port lock until their servers listen.
kt_pick_port() {
    local lo p
    lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    for _ in $(seq 1 200); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % (lo - 20000)))
        case " ${KT_TAKEN_PORTS:-} " in *" $p "*) continue ;; esac
        if kt_port_free "$p"; then
            KT_TAKEN_PORTS="${KT_TAKEN_PORTS:-} $p"
            printf -v "$1" '%s' "$p"
            return 0
        fi
    done
    kt_log "no free port found"
    return 1
}

# kt_port_lock - serialize "pick ports, start servers, wait until they listen" across
# concurrent up.sh / restart-apiserver.sh runs. Uses fd 9 (servers must be started with 9>&-
# or they would inherit the lock); released by kt_port_unlock.
kt_port_lock() {
    exec 9>"${TMPDIR:-/tmp}/kt-cluster-ports.lock"
    flock -w 120 9
}
kt_port_unlock() { exec 9>&-; }

# kt_alive PID - true when PID is a live (non-zombie) process.
kt_alive() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# kt_wait_listen PID PORT WHAT - bounded poll until PORT listens; fails if PID dies.
kt_wait_listen() {
    local deadline=$((SECONDS + KT_READY_TIMEOUT))
    while kt_port_free "$2"; do
        kt_alive "$1" || { kt_log "$3 exited before listening on $2"; return 1; }
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "$3 not listening after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.05
    done
}

# kt_wait_http PID URL WHAT [CURL_ARGS...] - bounded poll until URL answers 200; fails early if
# PID dies.
kt_wait_http() {
    local pid=$1 url=$2 what=$3 deadline=$((SECONDS + KT_READY_TIMEOUT))
    shift 3
    until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$url")" = 200 ]; do
        kt_alive "$pid" || { kt_log "$what exited before ready"; return 1; }
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "$what not ready after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.1
    done
}

# kt_wait_ready DIR PID - bounded poll of the API server's GET /readyz.
kt_wait_ready() {
    kt_wait_http "$2" "$(kt_env_get "$1" KT_APISERVER)/readyz" kube-apiserver --cacert "$1/ca.crt"
}

# kt_stop PID WHAT - SIGTERM, bounded wait, then SIGKILL. No-op for a dead PID.
kt_stop() {
    local pid=$1
    kt_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 100); do
        kt_alive "$pid" || return 0
        sleep 0.05
    done
    kt_log "$2 ($pid) ignored SIGTERM for 5s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kt_alive "$pid" || return 0
        sleep 0.05
    done
    kt_log "$2 ($pid) still alive after SIGKILL"
    return 1
}

# kt_etcd_data_drop DIR - remove the etcd data of DIR's cluster (KT_ETCD_DATA in DIR/env: a
# tmpfs folder up.sh made, or DIR/etcd-data); anything else it names is left alone.
kt_etcd_data_drop() {
    local data
    data=$(kt_env_get "$1" KT_ETCD_DATA)
    case "$data" in
    /dev/shm/kt-etcd.* | "$1"/etcd-data) rm -rf "$data" ;;
    esac
}

# kt_print_logs DIR - dump the control plane logs (last lines) to stderr.
kt_print_logs() {
    local f
    for f in "$1"/etcd.log "$1"/apiserver.log; do
        [ -f "$f" ] || continue
        echo "----- $f (last 80 lines) -----" >&2
        tail -n 80 "$f" >&2
    done
}

# kt_apiserver_mode_flags DIR - the flags that differ with a real node (KT_NODE_IP in DIR/env,
# docs/development.md#a-real-node-upsh---real-node): pods reach the API server through the kubernetes Service (bound on all
# addresses, advertised on the node IP, endpoints kept by the lease reconciler), they get
# ServiceAccount tokens, kubelets are authorized as nodes and reached for logs and exec. Without
# a node: loopback only, no endpoints, no ServiceAccount admission (the tests' historic plane).
kt_apiserver_mode_flags() {
    local ip
    ip=$(kt_env_get "$1" KT_NODE_IP)
    if [ -z "$ip" ]; then
        echo --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
            --authorization-mode=RBAC --disable-admission-plugins=ServiceAccount
        return 0
    fi
    echo --bind-address=0.0.0.0 --advertise-address="$ip" --endpoint-reconciler-type=lease \
        --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
        --kubelet-preferred-address-types=InternalIP,Hostname \
        --kubelet-certificate-authority="$1/ca.crt" \
        --kubelet-client-certificate="$1/kubelet-client.crt" --kubelet-client-key="$1/kubelet-client.key"
}

# kt_start_apiserver DIR EXTRA_FLAG... - start kube-apiserver in the background (port and
# certificates from DIR/env); records KT_APISERVER_PID. Appends to DIR/apiserver.log.
kt_start_apiserver() {
    local d=$1 port etcd pid
    shift
    port=$(kt_env_get "$d" KT_APISERVER_PORT)
    etcd=$(kt_env_get "$d" KT_ETCD)
    echo "=== kube-apiserver start $(date -u +%FT%TZ): $*" >>"$d/apiserver.log"
    # shellcheck disable=SC2046
    "$KT_BIN/kube-apiserver" \
        --etcd-servers="$etcd" \
        --cert-dir="$d" --tls-cert-file="$d/apiserver.crt" --tls-private-key-file="$d/apiserver.key" \
        --secure-port="$port" \
        --client-ca-file="$d/ca.crt" \
        --service-account-issuer="https://127.0.0.1:$port" \
        --service-account-key-file="$d/sa.pub" --service-account-signing-key-file="$d/sa.key" \
        --service-cluster-ip-range=10.0.0.0/24 \
        $(kt_apiserver_mode_flags "$d") --allow-privileged=true \
        --enable-priority-and-fairness=false \
        "$@" </dev/null >>"$d/apiserver.log" 2>&1 9>&- &
    pid=$!
    disown "$pid" 2>/dev/null || true
    kt_env_set "$d" KT_APISERVER_PID "$pid"
    echo "$pid"
}

# kt_kubeconfig DIR NAME USER - DIR/NAME.kubeconfig for client cert DIR/NAME.{crt,key},
# everything embedded so the file is self-contained.
kt_kubeconfig() {
    local d=$1 n=$2 url
    url=$(kt_env_get "$d" KT_APISERVER)
    cat >"$d/$n.kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: kt
  cluster:
    server: $url
    certificate-authority-data: $(base64 -w0 <"$d/ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $(base64 -w0 <"$d/$n.crt")
    client-key-data: $(base64 -w0 <"$d/$n.key")
contexts:
- name: kt
  context:
    cluster: kt
    user: $3
current-context: kt
KCFG
    chmod 600 "$d/$n.kubeconfig"
}

# kt_gen_certs DIR - CA, serving cert, service-account key pair and the client identities
# (scripts/cluster/modules/certgen: openssl refuses the 73-byte service-account common names).
kt_gen_certs() {
    KT_CERTGEN_NODE_IP=$(kt_env_get "$1" KT_NODE_IP) KT_CERTGEN_NODE_NAME=$(kt_env_get "$1" KT_NODE_NAME) \
        "$(kt_certgen_bin)" "$1"
}
