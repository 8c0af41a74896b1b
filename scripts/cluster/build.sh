#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/cluster/build.sh [--full|--chain] - build kube-apiserver, kubectl and etcd from Go modules
# into a per-version cache outside the repo (each binary skipped when present); with --full also
# the rest of the chain (kube-controller-manager, kube-scheduler, scheduler-plugins' scheduler, the
# JobSet controller, KWOK, the real node's kubelet, kube-proxy, CoreDNS, containerd with its runc
# shim, and Kubernetes' DRA test driver); --chain is --full without the real node's binaries. It also copies the external CRDs (JobSet, scheduler-plugins
# PodGroup, Volcano PodGroup when obtainable) from the module cache.
# KT_K8S_VERSION (versions.sh) selects the Kubernetes release; the binaries that do not depend on
# it (etcd, JobSet, KWOK, scheduler-plugins, CoreDNS, the CRDs) are hard-linked from another
# release's cache directory when one has them, else built.
# Prints the cache directory on its last line. docs/development.md#the-real-control-plane-tests-and-make-run says why.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
OUT=$(kt_cluster_bindir)
# A release needs its pinned wrapper module (KT_K8S_VERSION, versions.sh); refused before anything
# is built or a cache directory made.
if ! grep -q "^[[:space:]]k8s.io/kubernetes v$K8S_VERSION\( \|$\)" "$here/modules/$(kt_k8s_module)/go.mod" 2>/dev/null; then
    echo "cluster-build: no wrapper module pins k8s.io/kubernetes v$K8S_VERSION" \
        "(scripts/cluster/modules/$(kt_k8s_module)/go.mod); make one with scripts/cluster/k8s-wrapper.sh $K8S_VERSION" >&2
    exit 1
fi
mkdir -p "$OUT"
# -mod=readonly: the committed go.sum files pin every module, so a fresh machine resolves the
# same versions (a missing checksum is an error instead of a silent new resolution).
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
FULL=0
NODE=0
case "${1:-}" in
--full) FULL=1 NODE=1 ;;
--chain) FULL=1 ;;
"") ;;
*)
    echo "usage: $0 [--full|--chain]" >&2
    exit 2
    ;;
esac
log() { echo "cluster-build: $*" >&2; }

# k8s_bins - the k8s.io/kubernetes binaries to build: the API server and kubectl always; with
# --full/--chain also kube-controller-manager and kube-scheduler, with --full the real node's
# kubelet, kube-proxy and the DRA test driver (same module, same version; docs/development.md
# "A real node").
k8s_bins() {
    echo kube-apiserver kubectl
    [ "$FULL" = 0 ] || echo kube-controller-manager kube-scheduler
    [ "$NODE" = 0 ] || echo kubelet kube-proxy "$DRA_DRIVER_BIN"
    return 0
}

# reuse NAME - hard-link (or copy) $OUT/NAME from a sibling cache directory (another Kubernetes
# release, same etcd) that has it; false when none does. For the binaries that do not depend on
# the Kubernetes release.
reuse() {
    local f
    [ ! -e "$OUT/$1" ] || return 0
    for f in "$(dirname "$OUT")"/k8s-*-etcd-"$ETCD_VERSION"/"$1"; do
        if [ ! -f "$f" ] || [ "$f" = "$OUT/$1" ]; then
            continue
        fi
        ln "$f" "$OUT/$1" 2>/dev/null || cp "$f" "$OUT/$1"
        log "$1: reused from $(basename "${f%/"$1"}")"
        return 0
    done
    return 1
}

# missing BIN... - print the names among BIN... that are not yet in $OUT.
missing() {
    local b
    for b in "$@"; do
        [ -x "$OUT/$b" ] || echo "$b"
    done
}

# build_module DIR PKG=NAME... - build the main packages PKG of the wrapper module in
# tests/cluster/DIR (or the wrapper's own main package, kt.invalid/cluster/DIR) into $OUT/NAME,
# all in one `go build` (the packages they share compile once and the links run side by side);
# the module's go.sum pins all.
build_module() {
    local dir=$1 w spec pkgs=() names=() i t0
    shift
    w=$(mktemp -d)
    cp "$here/modules/$dir/go.mod" "$here/modules/$dir/go.sum" "$w/"
    cp "$here/modules/$dir"/*.go "$w/" 2>/dev/null || true # a main package of our own (coredns)
    cd "$w"
    go mod download
    for spec in "$@"; do
        pkgs+=("${spec%%=*}")
        names+=("${spec#*=}")
    done
    log "building ${names[*]} (${pkgs[*]}; cold: minutes on 2 cores)"
    t0=$SECONDS
    mkdir "$w/out"
    go build -trimpath -tags selinux,notest -ldflags "$LDF" -o "$w/out/" "${pkgs[@]}"
    for i in "${!pkgs[@]}"; do
        cp "$w/out/$(basename "${pkgs[$i]}")" "$OUT/${names[$i]}.tmp"
        mv "$OUT/${names[$i]}.tmp" "$OUT/${names[$i]}"
    done
    log "built ${names[*]} in $((SECONDS - t0))s"
    cd /
    rm -rf "$w"
}

build_k8s() {
    local want=() b p
    # shellcheck disable=SC2046 # k8s_bins prints one word per binary: split on purpose
    for b in $(missing $(k8s_bins)); do
        case $b in
        "$DRA_DRIVER_BIN") want+=("k8s.io/kubernetes/test/e2e/dra/test-driver=$b") ;;
        *) want+=("k8s.io/kubernetes/cmd/$b=$b") ;;
        esac
    done
    [ ${#want[@]} -gt 0 ] || return 0
    LDF="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        LDF="$LDF -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$K8S_MINOR"
        LDF="$LDF -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    log "k8s.io/kubernetes v$K8S_VERSION (tests/cluster/$(kt_k8s_module))"
    build_module "$(kt_k8s_module)" "${want[@]}"
}

# The rest of the full chain (--full): the coscheduling scheduler of scheduler-plugins (same
# wrapper module as kubernetes: it pins the same k8s.io/kubernetes), the JobSet controller and
# KWOK (their own wrapper modules: they use newer client libraries).
build_full() {
    [ "$FULL" = 1 ] || return 0
    LDF="-s -w"
    # scheduler-plugins is built from the default release's wrapper (scripts/cluster/modules/k8s) whatever
    # KT_K8S_VERSION says: its pinned build talks to the API server like JobSet and KWOK do.
    if ! reuse "kube-scheduler-plugins-$SCHEDPLUGINS_VERSION"; then
        build_module k8s "sigs.k8s.io/scheduler-plugins/cmd/scheduler=kube-scheduler-plugins-$SCHEDPLUGINS_VERSION"
    fi
    if ! reuse "jobset-$JOBSET_VERSION"; then
        build_module jobset "sigs.k8s.io/jobset=jobset-$JOBSET_VERSION"
    fi
    if ! reuse "kwok-$KWOK_VERSION"; then
        build_module kwok "sigs.k8s.io/kwok/cmd/kwok=kwok-$KWOK_VERSION"
    fi
    [ "$NODE" = 1 ] || return 0
    if ! reuse "$COREDNS_BIN"; then
        build_module coredns "kt.invalid/cluster/coredns=$COREDNS_BIN"
    fi
    mkdir -p "$OUT/$CONTAINERD_DIR"
    local want=() b
    for b in containerd containerd-shim-runc-v2; do
        reuse "$CONTAINERD_DIR/$b" || want+=("github.com/containerd/containerd/cmd/$b=$CONTAINERD_DIR/$b")
    done
    [ ${#want[@]} -gt 0 ] || return 0
    LDF="-s -w -X github.com/containerd/containerd/version.Version=$CONTAINERD_VERSION"
    LDF="$LDF -X github.com/containerd/containerd/version.Package=github.com/containerd/containerd"
    build_module containerd "${want[@]}"
}

build_etcd() {
    if reuse etcd; then
        return 0
    fi
    local w
    w=$(mktemp -d)
    cp "$here/modules/etcd/go.mod" "$w/"
    [ -f "$here/modules/etcd/go.sum" ] && cp "$here/modules/etcd/go.sum" "$w/"
    cd "$w"
    log "building etcd $ETCD_VERSION"
    go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" \
        -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3
    mv "$OUT/etcd.tmp" "$OUT/etcd"
    cd /
    rm -rf "$w"
}

moddir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

fetch_crds() {
    local d="$OUT/crds" w
    if [ -f "$d/.done" ]; then
        return 0
    fi
    mkdir -p "$d"
    w=$(mktemp -d)
    cd "$w"
    go mod init example.invalid/kt-crds >/dev/null 2>&1
    cp "$(moddir "sigs.k8s.io/jobset@$JOBSET_VERSION")/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$d/"
    cp "$(moddir "sigs.k8s.io/scheduler-plugins@$SCHEDPLUGINS_VERSION")/manifests/coscheduling/crd.yaml" \
        "$d/scheduling.x-k8s.io_podgroups.yaml"
    chmod -R u+w "$d"
    touch "$d/.done"
    cd /
    rm -rf "$w"
}

# Our own tiny certificate generator (scripts/cluster/modules/certgen, stdlib only); the binary name
# carries a hash of its source so an edit rebuilds it.
build_certgen() {
    local b
    b=$(kt_certgen_bin)
    if [ -x "$b" ]; then
        return 0
    fi
    log "building $(basename "$b")"
    (cd "$here/modules/certgen" && go build -trimpath -o "$b.tmp" .)
    mv "$b.tmp" "$b"
}

# The Volcano PodGroup CRD, generated by controller-gen from volcano.sh/apis (see versions.sh).
# Optional: when it cannot be built the Volcano tests skip.
volcano_crd() {
    local f="$OUT/crds/scheduling.volcano.sh_podgroups.yaml" w
    if [ -f "$f" ] || reuse crds/scheduling.volcano.sh_podgroups.yaml; then
        return 0
    fi
    w=$(mktemp -d)
    cp "$here/modules/volcano/go.mod" "$here/modules/volcano/go.sum" "$here/modules/volcano/tools.go" "$w/"
    log "generating the Volcano PodGroup CRD (controller-gen $CONTROLLER_TOOLS_VERSION)"
    if (cd "$w" && GOFLAGS='' GOBIN="$w/bin" go install \
        "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION" &&
        ./bin/controller-gen crd:crdVersions=v1 paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 \
            output:crd:dir="$w/out") >"$w/log" 2>&1 &&
        [ -f "$w/out/scheduling.volcano.sh_podgroups.yaml" ]; then
        cp "$w/out/scheduling.volcano.sh_podgroups.yaml" "$f.tmp"
        mv "$f.tmp" "$f"
    else
        log "Volcano PodGroup CRD not generated; volcano tests will skip:"
        tail -5 "$w/log" >&2
    fi
    rm -rf "$w"
}

# One build at a time per cache directory (concurrent up.sh runs on a fresh machine).
exec 8>"$OUT/.build.lock"
flock 8
t_all=$SECONDS
build_etcd
build_k8s
build_full
fetch_crds
build_certgen
volcano_crd
[ $((SECONDS - t_all)) -lt 2 ] || log "all binaries ready in $((SECONDS - t_all))s"
echo "$OUT"
