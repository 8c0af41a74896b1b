# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/cluster/node.sh - a real node for `up.sh --full --real-node` (sourced by up.sh and
# down.sh; docs/development.md#a-real-node-upsh---real-node): runc + the CNI bridge from Debian,
# containerd 1.7 (CDI on) and its runc shim from their Go module, kubelet and kube-proxy from the
# pinned k8s.io/kubernetes module, CoreDNS from its Go module, all as host processes whose state
# lives under DIR/node. On demand, Kubernetes' DRA test driver as the
# node's kubelet plugin (kt_node_dra_start). Pods really run: images are built locally from
# Debian packages (tests/cluster/images) and imported; nothing is pulled.
#
# The node's network: a bridge (KT_NODE_BRIDGE, ktbr0) whose address (KT_NODE_IP, 10.244.0.1)
# is the node IP, the API server's advertised address and CoreDNS's listening address; pods
# get addresses in KT_NODE_SUBNET (10.244.0.0/24). One real node per machine at a time
# (a lock): the bridge, the node name and the kubelet's fixed paths are machine-wide.
#
# What it changes outside DIR, and undoes in kt_node_stop (kt_node_fingerprint before/after
# lets a test assert the machine is as before): sysctls (saved to DIR/node/sysctl.saved), the
# bridge, iptables chains of kube-proxy (KUBE-*) and of the CNI plugins (CNI-*), the cgroup
# subtree KT_NODE_CGROUP under each controller, /var/lib/kubelet/device-plugins,
# /var/log/containers entries, /var/lib/cni, network namespaces under /run/netns.

KT_NODE_NAME=${KT_NODE_NAME:-kt-node}
KT_NODE_BRIDGE=${KT_NODE_BRIDGE:-ktbr0}
KT_NODE_SUBNET=${KT_NODE_SUBNET:-10.244.0.0/24}
KT_NODE_IP=${KT_NODE_IP:-10.244.0.1}
KT_NODE_CGROUP=kt-node
KT_NODE_SYSCTLS="net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables
net.bridge.bridge-nf-call-ip6tables vm.overcommit_memory vm.panic_on_oom kernel.panic
kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet"
KT_NODE_COMPONENTS="coredns kube_proxy kubelet"
KT_NODE_LOCK=${TMPDIR:-/tmp}/kt-real-node.lock

# kt_node_bins - the binaries under $KT_BIN a real node runs, one word each
# (scripts/cluster/build.sh --full builds them all).
kt_node_bins() {
    echo kubelet kube-proxy "$COREDNS_BIN" "$DRA_DRIVER_BIN" "$CONTAINERD_DIR/containerd" \
        "$CONTAINERD_DIR/containerd-shim-runc-v2"
}

# kt_node_unavailable - print why this machine cannot run containers (empty when it can).
kt_node_unavailable() {
    local b
    [ "$(id -u)" = 0 ] || { echo "not root (containerd, runc and the kubelet need root)"; return; }
    [ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] ||
        { echo "no cgroups mounted under /sys/fs/cgroup"; return; }
    [ -d /proc/sys/net/bridge ] || { echo "the kernel has no bridge netfilter (br_netfilter)"; return; }
    for b in runc ctr iptables /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback; do
        command -v "$b" >/dev/null || [ -x "$b" ] ||
            { echo "$b missing (scripts/deps.sh installs containerd, runc, containernetworking-plugins)"; return; }
    done
    for b in $(kt_node_bins); do
        [ -x "$KT_BIN/$b" ] || { echo "$KT_BIN/$b not built (scripts/cluster/build.sh --full)"; return; }
    done
}

# kt_node_busy DIR - print who holds the machine's real node when it is a live cluster other
# than DIR (empty when the node is free or DIR's own). A hint only: kt_node_claim decides.
kt_node_busy() {
    local owner
    owner=$(cat "$KT_NODE_LOCK.owner" 2>/dev/null || true)
    if [ -n "$owner" ] && [ "$owner" != "$1" ] && [ -f "$owner/env" ] &&
        { kt_alive "$(kt_env_get "$owner" KT_CONTAINERD_PID)" ||
            kt_alive "$(kt_env_get "$owner" KT_APISERVER_PID)"; }; then
        echo "in use by the cluster in $owner (tests/cluster/down.sh $owner)"
    fi
}

# kt_node_claim DIR - make DIR the machine's one real node: the claim file names the cluster
# directory that owns the node; a claim whose owner's containerd or API server still runs is
# refused, a stale one taken over (checked and written under flock): what its run left set up
# is reaped first (kt_node_reap).
kt_node_claim() {
    local d=$1 owner
    (
        flock -w 60 7 || exit 1
        owner=$(kt_node_busy "$d")
        if [ -n "$owner" ]; then
            kt_log "the real node is $owner"
            exit 1
        fi
        owner=$(cat "$KT_NODE_LOCK.owner" 2>/dev/null || true)
        [ -z "$owner" ] || [ "$owner" = "$d" ] || kt_node_reap "$owner"
        echo "$d" >"$KT_NODE_LOCK.owner"
    ) 7>"$KT_NODE_LOCK"
}

# kt_node_left DIR - what the real node of the cluster in DIR still holds on the machine, as
# words (empty when nothing): its saved sysctls (its teardown never ran), processes whose
# command line names DIR, processes in the node's cgroup subtree (containers), mounts under
# DIR/node, the bridge.
kt_node_left() {
    local d=$1 n
    [ -f "$d/node/sysctl.saved" ] && printf 'teardown-not-run '
    n=$(pgrep -c -f -- "$(kt_node_re "$d")/" || true)
    [ "${n:-0}" = 0 ] || printf 'processes:%s ' "$n"
    n=$(kt_node_cgroup_pids | wc -l)
    [ "$n" = 0 ] || printf 'container-processes:%s ' "$n"
    n=$(grep -cF " $d/node/" /proc/self/mountinfo || true)
    [ "${n:-0}" = 0 ] || printf 'mounts:%s ' "$n"
    kt_node_bridge_exists && printf 'bridge:%s ' "$KT_NODE_BRIDGE"
    return 0
}

# kt_node_bridge_exists - whether the node's bridge is on the machine.
kt_node_bridge_exists() { ip link show "$KT_NODE_BRIDGE" >/dev/null 2>&1; }

# kt_node_re TEXT - TEXT as an extended regular expression matching itself (for pgrep -f).
kt_node_re() { printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'; }

# kt_node_cgroup_pids - the processes in the node's cgroup subtree (every hierarchy), one per line.
kt_node_cgroup_pids() {
    find /sys/fs/cgroup/*/"$KT_NODE_CGROUP" /sys/fs/cgroup/"$KT_NODE_CGROUP" -name cgroup.procs \
        -exec cat {} + 2>/dev/null | sort -u
}

# kt_node_kill_left PATH - SIGKILL what is left of a node that no longer runs: processes whose
# command line names PATH (DIR/node/ in a teardown: the shims, a kubelet, containerd; DIR/ for a
# stale cluster: all of it) and every process in the node's cgroup subtree (the containers: a
# shim killed before its container leaves the container running). One real node per machine
# (kt_node_claim), so these are the node's. Bounded wait (10 s).
kt_node_kill_left() {
    local re pids
    re=$(kt_node_re "$1")
    for _ in $(seq 1 100); do
        pids="$(pgrep -f -- "$re") $(kt_node_cgroup_pids)"
        [ -n "${pids// /}" ] || return 0
        # shellcheck disable=SC2086 # a list of PIDs, split on purpose
        kill -KILL $pids 2>/dev/null || true
        sleep 0.1
    done
    kt_log "processes of $1 still alive after SIGKILL: $pids"
    return 1
}

# kt_node_reap DIR - the real node of a run that stopped without its teardown (killed, or its
# machine's session ended) while it held the claim: its containerd and API server are gone, but
# containers, shims, mounts, the bridge, iptables chains, cgroups and sysctls may stay and would
# make the next node's set-up fail. Called under the claim's lock, only for a stale claim: kill
# what is left, undo the machine changes as kt_node_stop does, drop the run's etcd data on tmpfs.
# Says what it found in one line.
kt_node_reap() {
    local d=$1 left
    left=$(kt_node_left "$d")
    [ -n "$left" ] || return 0
    kt_log "reaping the real node of $d, whose cluster is gone without its teardown: ${left% }"
    kt_node_kill_left "$d/" || true
    kt_node_restore "$d"
    rm -f "$d/node/sysctl.saved"
    kt_etcd_data_drop "$d"
}

# kt_node_release DIR - drop DIR's claim.
kt_node_release() {
    (
        flock -w 60 7 || exit 1
        [ "$(cat "$KT_NODE_LOCK.owner" 2>/dev/null)" != "$1" ] || rm -f "$KT_NODE_LOCK.owner"
    ) 7>"$KT_NODE_LOCK"
}

# kt_node_prepare DIR - before the API server starts: take the machine's node lock, save the
# sysctls, create the bridge with the node IP. Records KT_NODE_* in DIR/env.
kt_node_prepare() {
    local d=$1 n
    mkdir -p "$d/node"
    kt_node_claim "$d" || return 1
    kt_node_fingerprint "$d" >"$d/node/fingerprint.before"
    for n in $KT_NODE_SYSCTLS; do
        echo "$n=$(sysctl -n "$n")"
    done >"$d/node/sysctl.saved"
    kt_env_set "$d" KT_NODE_NAME "$KT_NODE_NAME"
    kt_env_set "$d" KT_NODE_IP "$KT_NODE_IP"
    kt_env_set "$d" KT_NODE_BRIDGE "$KT_NODE_BRIDGE"
    kt_env_set "$d" KT_NODE_SUBNET "$KT_NODE_SUBNET"
    if kt_node_bridge_exists; then
        kt_log "the bridge $KT_NODE_BRIDGE exists, but no live kt cluster holds the real node (another" \
            "program's, or a node whose teardown failed: 'ip link del $KT_NODE_BRIDGE' removes it)"
        kt_node_release "$d"
        return 1
    fi
    ip link add "$KT_NODE_BRIDGE" type bridge
    ip addr add "$KT_NODE_IP/${KT_NODE_SUBNET#*/}" dev "$KT_NODE_BRIDGE"
    ip link set "$KT_NODE_BRIDGE" up
    sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
}

# kt_node_fingerprint DIR - what a real node may leave behind on the machine, one line per item:
# links, iptables chains, mounts under DIR/node, the shared containerd root or the kubelet's,
# network namespaces, the kubelet's fixed directories, watched sysctls, shims.
kt_node_fingerprint() (
    set +e +o pipefail
    local n f t
    ip -o link show | awk -F': ' '{ print "link " $2 }' | sed 's/@.*//' | grep -v '^link veth' || true
    ip -o link show | grep -c ' veth' | sed 's/^/veths /'
    for f in iptables ip6tables; do
        for t in filter nat mangle; do
            "$f-save" -t "$t" 2>/dev/null | grep -E '^:(KUBE|CNI)' | sed "s/^:\([^ ]*\).*/chain $f $t \1/"
        done
    done
    grep -E "$1/node|$(kt_node_croot)|/run/netns|/var/lib/kubelet" /proc/self/mountinfo | awk '{ print "mount " $5 }'
    ls -d /sys/fs/cgroup/*/"$KT_NODE_CGROUP" 2>/dev/null | sed 's/^/cgroup /'
    ls /run/netns 2>/dev/null | sed 's/^/netns /'
    for n in /var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni; do
        [ -e "$n" ] && echo "path $n $(find "$n" 2>/dev/null | wc -l)"
    done
    for n in $KT_NODE_SYSCTLS; do
        echo "sysctl $n=$(sysctl -n "$n" 2>/dev/null)"
    done
    # live shims only: a shim SIGKILLed by a reap or a teardown stays a zombie until PID 1 gets
    # round to it, and that is nothing left behind
    ps -eo stat=,comm= | awk '$1 !~ /^Z/ && $2 ~ /^containerd-shim/ { n++ } END { print "shims " n + 0 }'
    return 0
)

kt_node_k() { "$KT_BIN/kubectl" --kubeconfig "$D/admin.kubeconfig" --cache-dir "$D/kubectl-cache" "$@"; }

# kt_node_croot - containerd's root, shared by the runs on this machine (see below).
kt_node_croot() { echo "${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/node-containerd"; }

# kt_node_containerd - containerd with its own root, state, socket and config under DIR/node;
# CDI on, its specs read from DIR/node/cdi (where a DRA driver writes them: kt_node_dra_start).
kt_node_containerd() {
    local n=$D/node c pid
    c=$n/containerd
    # The content store and snapshots persist across runs (one real node per machine at a
    # time): imported images stay, so only a changed image is imported again.
    local croot
    croot=$(kt_node_croot)
    mkdir -p "$croot" "$c/state" "$c/opt" "$n/cni" "$n/cni-ipam" "$n/cdi"
    cat >"$n/cni/10-kt.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "kt", "plugins": [
  {"type": "bridge", "bridge": "$KT_NODE_BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$n/cni-ipam",
            "ranges": [[{"subnet": "$KT_NODE_SUBNET", "gateway": "$KT_NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
    cat >"$c/config.toml" <<EOF
version = 2
root = "$croot"
state = "$c/state"
[grpc]
  address = "$n/containerd.sock"
[ttrpc]
  address = "$n/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$(kt_node_image_ref pause)"
  restrict_oom_score_adj = true
  disable_hugetlb_controller = true
  enable_cdi = true
  cdi_spec_dirs = ["$n/cdi"]
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$n/cni"
EOF
    # (the shim is looked up on PATH by its name: ours first)
    pid=$(PATH="$KT_BIN/$CONTAINERD_DIR:$PATH" kt_full_spawn containerd "$KT_BIN/$CONTAINERD_DIR/containerd" \
        --config "$c/config.toml")
    kt_env_set "$D" KT_CONTAINERD_SOCK "$n/containerd.sock"
    local deadline=$((SECONDS + KT_READY_TIMEOUT))
    until ctr --address "$n/containerd.sock" version >/dev/null 2>&1; do
        kt_alive "$pid" || { kt_log "containerd exited (log: $D/containerd.log)"; return 1; }
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "containerd not answering after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.1
    done
}

# kt_node_image_ref NAME - the reference of a locally built image (tests/cluster/images).
kt_node_image_ref() {
    # shellcheck disable=SC2154 # kt_here: set by tests/cluster/lib.sh, sourced first
    "$kt_here/images/build.sh" "$1" 2>>"$D/images.log" | awk -v n="$1" '$1 == n { print $2 }'
}

# kt_node_images NAME... - build (cached) and import images into the node's containerd.
kt_node_images() {
    "$kt_here/images/import.sh" "$(kt_env_get "$D" KT_CONTAINERD_SOCK)" "$@" >>"$D/images.log" 2>&1 || {
        kt_log "importing images $* failed (log: $D/images.log)"
        tail -n 20 "$D/images.log" >&2
        return 1
    }
}

kt_node_kubelet() {
    local n=$D/node port hport pid
    kt_pick_port port
    kt_pick_port hport
    mkdir -p "$n/kubelet" "$n/pod-logs"
    kt_kubeconfig "$D" node "system:node:$KT_NODE_NAME" # certificates: kt-certgen with KT_CERTGEN_NODE_IP
    : >"$n/resolv.conf"
    # the kubelet's cgroupRoot must exist in every hierarchy (kt_node_restore removes it)
    local cg
    for cg in /sys/fs/cgroup/*/; do
        [ -f "${cg}cgroup.procs" ] && mkdir -p "$cg$KT_NODE_CGROUP"
    done
    cat >"$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$KT_NODE_CGROUP
cgroupsPerQOS: true
address: $KT_NODE_IP
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $hport
tlsCertFile: $D/kubelet.crt
tlsPrivateKeyFile: $D/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $D/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [$KT_NODE_IP]
resolvConf: $n/resolv.conf
failSwapOn: false
syncFrequency: 5s
fileCheckFrequency: 5s
nodeStatusReportFrequency: 10s
serializeImagePulls: false
podLogsDir: $n/pod-logs
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
protectKernelDefaults: false
localStorageCapacityIsolation: true
maxPods: 110
kubeAPIQPS: 50
kubeAPIBurst: 100
EOF
    pid=$(kt_full_spawn kubelet "$KT_BIN/kubelet" --config="$n/kubelet.yaml" \
        --kubeconfig="$D/node.kubeconfig" --root-dir="$n/kubelet" --cert-dir="$n/kubelet/pki" \
        --container-runtime-endpoint="unix://$n/containerd.sock" \
        --hostname-override="$KT_NODE_NAME" --node-ip="$KT_NODE_IP" \
        --node-labels="kt.kubeflow.org/real-node=true" --v=1)
    kt_env_set "$D" KT_KUBELET_PORT "$port"
    kt_wait_http "$pid" "http://127.0.0.1:$hport/healthz" kubelet
    local deadline=$((SECONDS + KT_READY_TIMEOUT))
    until [ "$(kt_node_k get node "$KT_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
        kt_alive "$pid" || { kt_log "kubelet exited (log: $D/kubelet.log)"; return 1; }
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "node $KT_NODE_NAME not Ready after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.1
    done
}

kt_node_kube_proxy() {
    local n=$D/node hport mport pid
    kt_pick_port hport
    kt_pick_port mport
    kt_kubeconfig "$D" kube-proxy system:kube-proxy
    cat >"$n/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $D/kube-proxy.kubeconfig}
hostnameOverride: $KT_NODE_NAME
clusterCIDR: $KT_NODE_SUBNET
mode: iptables
healthzBindAddress: 127.0.0.1:$hport
metricsBindAddress: 127.0.0.1:$mport
conntrack: {maxPerCore: 0, min: 0}
EOF
    pid=$(kt_full_spawn kube-proxy "$KT_BIN/kube-proxy" --config="$n/kube-proxy.yaml" --v=1)
    kt_wait_http "$pid" "http://127.0.0.1:$hport/healthz" kube-proxy
}

# CoreDNS as a host process on the node IP (the kubelet's clusterDNS): the kubernetes plugin
# answers cluster.local from the API server (Services, and the per-pod hostnames of headless
# Services that JobSet relies on: <jobset>-<job>-<i>-<j>.<subdomain>.<ns>.svc.cluster.local).
# Nothing is forwarded: no resolver outside the machine is reachable.
kt_node_coredns() {
    local n=$D/node hport pid
    kt_pick_port hport
    cat >"$n/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 {
    bind $KT_NODE_IP
    errors
    health 127.0.0.1:$hport
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $D/admin.kubeconfig
        pods insecure
        ttl 5
    }
    cache 5
}
.:53 {
    bind $KT_NODE_IP
    errors
    template ANY ANY {
        rcode NXDOMAIN
    }
}
EOF
    pid=$(kt_full_spawn coredns "$KT_BIN/$COREDNS_BIN" -conf "$n/Corefile")
    kt_wait_http "$pid" "http://127.0.0.1:$hport/health" coredns
}

# ---- Dynamic Resource Allocation: Kubernetes' DRA test driver as the node's kubelet plugin ----
# The driver name it publishes (its --drivername default); devices are named device-00, ...
KT_DRA_DRIVER=test-driver.cdi.k8s.io
KT_DRA_DEVICES=4

# kt_node_dra_start - unless it runs: the DRA test driver (scripts/cluster/build.sh --full) as a
# kubelet plugin of the node, with the cluster's admin credentials (it is the cluster here, not
# the product): its registration socket in the kubelet's plugins_registry/, its DRA socket in
# plugins/KT_DRA_DRIVER/ (both under the kubelet's --root-dir, DIR/node/kubelet), its CDI specs in
# DIR/node/cdi (containerd's cdi_spec_dirs). Bounded wait until its ResourceSlice for the node
# lists KT_DRA_DEVICES devices. Log: DIR/dra-driver.log; records KT_DRA_DRIVER_PID. D is set.
kt_node_dra_start() {
    local n=$D/node pid deadline=$((SECONDS + KT_READY_TIMEOUT))
    pid=$(kt_env_get "$D" KT_DRA_DRIVER_PID)
    if ! kt_alive "$pid"; then
        mkdir -p "$n/kubelet/plugins/$KT_DRA_DRIVER" # (it makes only the parent of its socket's folder)
        pid=$(KUBECONFIG=$D/admin.kubeconfig kt_full_spawn dra-driver "$KT_BIN/$DRA_DRIVER_BIN" \
            kubelet-plugin --node-name "$(kt_env_get "$D" KT_NODE_NAME)" --num-devices "$KT_DRA_DEVICES" \
            --cdi-dir "$n/cdi" --plugin-registration-path "$n/kubelet/plugins_registry" \
            --datadir "$n/kubelet/plugins")
    fi
    until [ "$(kt_node_dra_devices)" = "$KT_DRA_DEVICES" ]; do
        kt_alive "$pid" || { kt_log "the DRA test driver exited (log: $D/dra-driver.log)"; return 1; }
        [ "$SECONDS" -lt "$deadline" ] ||
            { kt_log "no ResourceSlice with $KT_DRA_DEVICES devices after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.1
    done
}

# kt_node_dra_slices - the driver's ResourceSlices of the node (JSON list). D is set.
kt_node_dra_slices() {
    kt_node_k get resourceslices -o json \
        --field-selector "spec.nodeName=$(kt_env_get "$D" KT_NODE_NAME),spec.driver=$KT_DRA_DRIVER"
}

# kt_node_dra_devices - how many devices the driver's ResourceSlices of the node list.
kt_node_dra_devices() { kt_node_dra_slices 2>/dev/null | jq '[.items[].spec.devices[]?] | length'; }

# kt_node_dra_left - what the driver left, one line each: its sockets under the kubelet's root
# dir, its ResourceSlices of the node (when the API server answers), CDI spec files. D is set.
kt_node_dra_left() {
    local n=$D/node
    find "$n/kubelet/plugins_registry" "$n/kubelet/plugins/$KT_DRA_DRIVER" -type s 2>/dev/null | sed 's/^/socket /'
    find "$n/cdi" -type f 2>/dev/null | sed 's/^/cdi-spec /'
    if kt_alive "$(kt_env_get "$D" KT_APISERVER_PID)"; then
        kt_node_dra_slices 2>/dev/null | jq -r '.items[].metadata.name' | sed 's/^/resourceslice /'
    fi
}

# kt_node_dra_stop - stop the driver (it removes its sockets) and delete its ResourceSlices of
# the node (the kubelet would 30 s after the plugin goes; a driver's uninstall does it at once);
# then nothing of it may be left (kt_node_dra_left, printed). No-op when it never ran. D is set.
kt_node_dra_stop() {
    local pid rc=0 left
    pid=$(kt_env_get "$D" KT_DRA_DRIVER_PID)
    [ -n "$pid" ] || return 0
    kt_stop "$pid" dra-driver || rc=1
    kt_env_set "$D" KT_DRA_DRIVER_PID ""
    if kt_alive "$(kt_env_get "$D" KT_APISERVER_PID)"; then
        kt_node_k delete resourceslices --ignore-not-found --field-selector \
            "spec.nodeName=$(kt_env_get "$D" KT_NODE_NAME),spec.driver=$KT_DRA_DRIVER" >/dev/null || rc=1
    fi
    left=$(kt_node_dra_left)
    if [ -n "$left" ]; then
        kt_log "the DRA test driver left behind: $(echo "$left" | tr '\n' ' ')"
        rc=1
    fi
    return "$rc"
}

# kt_node_start - after the full chain: containerd, the images, kubelet, kube-proxy, CoreDNS.
kt_node_start() {
    local t
    kt_node_containerd || return 1
    kt_node_force_clean "$D" # containers an earlier run left in the shared content store
    kt_log "containerd ready"
    kt_node_images pause || return 1
    for t in kubelet kube_proxy coredns; do
        local t0=$SECONDS
        kt_port_lock
        "kt_node_$t" || { kt_port_unlock; return 1; }
        kt_port_unlock
        kt_log "$t ready ($((SECONDS - t0))s)"
    done
    kt_env_set "$D" KT_REAL_NODE 1
}

# kt_node_drain DIR - delete every pod on the node and wait until the kubelet has torn each
# down (containers stopped, sandbox network removed by the CNI plugins) and the API server
# no longer lists it. Bounded; best effort (the forced cleanup below follows).
kt_node_drain() {
    local d=$1 deadline=$((SECONDS + 60))
    kt_alive "$(kt_env_get "$d" KT_KUBELET_PID)" && kt_alive "$(kt_env_get "$d" KT_APISERVER_PID)" || return 0
    # A 1 s grace: the node is going away, and a container that ignores SIGTERM (a shell
    # sleeping as PID 1) would otherwise hold the teardown for the default 30 s.
    kt_node_k delete pods -A --field-selector "spec.nodeName=$KT_NODE_NAME" --grace-period=1 --wait=false \
        >/dev/null 2>&1 || true
    while [ -n "$(kt_node_k get pods -A --field-selector "spec.nodeName=$KT_NODE_NAME" -o name 2>/dev/null)" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "pods still on $KT_NODE_NAME after 60s"; return 1; }
        sleep 0.2
    done
}

# kt_node_force_clean DIR - whatever the drain left: running tasks and containers in the node's
# containerd, then (containerd stopped) mounts under DIR/node, netns, CNI chains, cgroups.
kt_node_force_clean() {
    local d=$1 s c ns
    s=$(kt_env_get "$d" KT_CONTAINERD_SOCK)
    if [ -n "$s" ] && [ -S "$s" ]; then
        for c in $(ctr --address "$s" -n k8s.io tasks ls -q 2>/dev/null); do
            ctr --address "$s" -n k8s.io tasks kill -s KILL "$c" >/dev/null 2>&1 || true
        done
        for c in $(ctr --address "$s" -n k8s.io tasks ls -q 2>/dev/null); do
            ctr --address "$s" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true
        done
        for c in $(ctr --address "$s" -n k8s.io containers ls -q 2>/dev/null); do
            ctr --address "$s" -n k8s.io containers delete "$c" >/dev/null 2>&1 || true
        done
    fi
}

# kt_node_restore DIR - after every node process is stopped: unmount, remove the bridge, the
# CNI and KUBE chains, the cgroup subtree and the kubelet's fixed paths; restore the sysctls.
kt_node_restore() {
    local d=$1 m cg ns
    grep -E " ($d/node|$(kt_node_croot))" /proc/self/mountinfo | awk '{ print $5 }' | sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done
    for ns in /run/netns/cni-*; do
        [ -e "$ns" ] || continue
        ns=${ns##*/}
        grep -qx "netns $ns" "$d/node/fingerprint.before" 2>/dev/null && continue
        umount "/run/netns/$ns" 2>/dev/null || true
        rm -f "/run/netns/$ns"
    done
    ip link del "$(kt_env_get "$d" KT_NODE_BRIDGE)" 2>/dev/null || true
    "$KT_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
    kt_node_drop_chains iptables
    kt_node_drop_chains ip6tables
    for cg in /sys/fs/cgroup/*/"$KT_NODE_CGROUP"; do
        [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
    kt_node_restore_paths "$d"
    if [ -f "$d/node/sysctl.saved" ]; then
        # shellcheck disable=SC2046 # the saved file holds key=value words, split on purpose
        sysctl -qw $(cat "$d/node/sysctl.saved") >/dev/null 2>&1 || true
    fi
}

# kt_node_drop_chains IPTABLES - remove the KUBE-* and CNI-* chains (and the rules jumping to
# them) that the kubelet, kube-proxy and the CNI plugins left in every table. One real node per
# machine (kt_node_claim), so these are ours.
kt_node_drop_chains() {
    local f=$1 t chain rule
    for t in nat filter mangle; do
        for chain in $("$f-save" -t "$t" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\).*/\1/p'); do
            "$f" -t "$t" -S 2>/dev/null | grep -E -- "-j $chain( |$)" | sed 's/^-A/-D/' |
                while read -r rule; do eval "$f" -t "$t" "$rule" 2>/dev/null || true; done
        done
        for chain in $("$f-save" -t "$t" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\).*/\1/p'); do
            "$f" -t "$t" -F "$chain" 2>/dev/null || true
        done
        for chain in $("$f-save" -t "$t" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\).*/\1/p'); do
            "$f" -t "$t" -X "$chain" 2>/dev/null || true
        done
    done
}

# kt_node_restore_paths DIR - the kubelet's and CNI's fixed paths: what did not exist before
# the node started is removed; /var/log/containers loses the links into DIR.
kt_node_restore_paths() {
    local d=$1 p
    for p in /var/lib/kubelet /var/log/pods /var/lib/cni; do
        grep -q "^path $p " "$d/node/fingerprint.before" 2>/dev/null || rm -rf "$p"
    done
    if grep -q "^path /var/log/containers " "$d/node/fingerprint.before" 2>/dev/null; then
        find /var/log/containers -xtype l -delete 2>/dev/null || true
    else
        rm -rf /var/log/containers
    fi
}

# kt_node_stop DIR - drain, stop the DRA test driver, CoreDNS, kube-proxy, kubelet, clean containerd, stop it,
# restore the machine; then compare its fingerprint with the one taken before (a difference
# is printed and fails).
kt_node_stop() {
    local d=$1 c rc=0
    [ -f "$d/node/sysctl.saved" ] || return 0
    kt_node_drain "$d" || rc=1
    # (after the drain: the kubelet unprepares the pods' claims through the driver)
    D=$d kt_node_dra_stop || rc=1
    for c in $KT_NODE_COMPONENTS; do
        kt_stop "$(kt_env_get "$d" "KT_$(echo "$c" | tr a-z A-Z)_PID")" "$c" || rc=1
    done
    kt_node_force_clean "$d"
    kt_stop "$(kt_env_get "$d" KT_CONTAINERD_PID)" containerd || rc=1
    pkill -f "containerd-shim-runc-v2 .*-address $d/node/containerd.sock" 2>/dev/null || true
    # A shim told to stop may still be exiting: poll (at most 10 s) before the fingerprint
    # counts shims, or a dying one reads as left behind.
    for _ in $(seq 1 100); do
        pgrep -f "containerd-shim-runc-v2 .*-address $d/node/containerd.sock" >/dev/null || break
        sleep 0.1
    done
    # what a node whose processes were killed leaves (containers without their shim)
    kt_node_kill_left "$d/node/" || rc=1
    kt_node_restore "$d"
    kt_node_fingerprint "$d" >"$d/node/fingerprint.after"
    if ! diff -u "$d/node/fingerprint.before" "$d/node/fingerprint.after" >"$d/node/fingerprint.diff"; then
        kt_log "the real node left the machine changed:"
        cat "$d/node/fingerprint.diff" >&2
        rc=1
    fi
    rm -f "$d/node/sysctl.saved"
    kt_node_release "$d"
    return "$rc"
}
