#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/cluster/k8s-wrapper.sh X.Y.Z - write the pinned wrapper module of k8s.io/kubernetes vX.Y.Z
# into scripts/cluster/modules/k8s-X.Y/ (go.mod + go.sum, resolved through the module proxy with `go mod
# tidy`), for KT_K8S_VERSION=X.Y.Z (make compat). The default version's wrapper is
# scripts/cluster/modules/k8s/ (it also pins scheduler-plugins). The staging modules to replace, the go
# directive and the godebug default are read from that tag's own go.mod (docs/compatibility.md).
set -euo pipefail
if [ $# -ne 1 ] || ! [[ $1 =~ ^1\.([0-9]+)\.[0-9]+$ ]]; then
    echo "usage: $0 X.Y.Z (a k8s.io/kubernetes release)" >&2
    exit 2
fi
v=$1
minor=${BASH_REMATCH[1]}
here=$(cd "$(dirname "$0")" && pwd)
out="$here/modules/k8s-1.$minor"
export GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=mod
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"
gomod=$(go mod download -json "k8s.io/kubernetes@v$v" | jq -r .GoMod)
go mod init "kt.invalid/cluster/k8s-1.$minor" >/dev/null 2>&1
go mod edit -go="$(sed -n 's/^go //p' "$gomod")" \
    -godebug="$(sed -n 's/^godebug //p' "$gomod")"
for m in $(sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*|\1|p' "$gomod"); do
    go mod edit -replace="$m=$m@v0.$minor.${v##*.}"
done
tools=()
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy; do
    tools+=("k8s.io/kubernetes/cmd/$b@v$v")
done
go get -tool "${tools[@]}"
go mod tidy
mkdir -p "$out"
cp go.mod go.sum "$out/"
echo "$out"
