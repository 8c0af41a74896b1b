#!/usr/bin/env bash
# tests/cluster/build.sh - build kube-apiserver, kubectl and etcd from Go modules into a
# per-version cache outside the repo (skipped when present), and copy the external CRDs
# (JobSet, scheduler-plugins PodGroup, Volcano PodGroup when obtainable) from the module cache.
# Prints the cache directory on its last line. See shared/CLUSTER.md for the why.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
OUT=$(kt_cluster_bindir)
mkdir -p "$OUT"
# -mod=readonly: the committed go.sum files pin every module, so a fresh machine resolves the
# same versions (a missing checksum is an error instead of a silent new resolution).
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
log() { echo "cluster-build: $*" >&2; }

build_k8s() {
    if [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/kubectl" ]; then
        return 0
    fi
    local w ldf p c
    w=$(mktemp -d)
    cp "$here/k8s/go.mod" "$w/"
    [ -f "$here/k8s/go.sum" ] && cp "$here/k8s/go.sum" "$w/"
    cd "$w"
    log "resolving k8s.io/kubernetes v$K8S_VERSION"
    go mod download
    ldf="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldf="$ldf -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$K8S_MINOR"
        ldf="$ldf -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    for c in kube-apiserver kubectl; do
        log "building $c (cold: many minutes on 2 cores)"
        go build -trimpath -tags selinux,notest -ldflags "$ldf" -o "$OUT/$c.tmp" \
            "k8s.io/kubernetes/cmd/$c"
        mv "$OUT/$c.tmp" "$OUT/$c"
    done
    cd /
    rm -rf "$w"
}

build_etcd() {
    if [ -x "$OUT/etcd" ]; then
        return 0
    fi
    local w
    w=$(mktemp -d)
    cp "$here/etcd/go.mod" "$w/"
    [ -f "$here/etcd/go.sum" ] && cp "$here/etcd/go.sum" "$w/"
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
    local v
    v=$(moddir "volcano.sh/volcano@$VOLCANO_VERSION" 2>/dev/null || true)
    if [ -n "$v" ] && [ -f "$v/config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml" ]; then
        cp "$v/config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml" "$d/"
    else
        log "Volcano PodGroup CRD not obtainable from the module proxy; volcano tests will skip"
    fi
    chmod -R u+w "$d"
    touch "$d/.done"
    cd /
    rm -rf "$w"
}

# Our own tiny certificate generator (tests/cluster/certgen, stdlib only); the binary name
# carries a hash of its source so an edit rebuilds it.
build_certgen() {
    local b
    b=$(kt_certgen_bin)
    if [ -x "$b" ]; then
        return 0
    fi
    log "building $(basename "$b")"
    (cd "$here/certgen" && go build -trimpath -o "$b.tmp" .)
    mv "$b.tmp" "$b"
}

build_etcd
build_k8s
fetch_crds
build_certgen
echo "$OUT"
