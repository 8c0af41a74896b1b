#!/usr/bin/env bash
# tests/helm/build-helm.sh - build the helm CLI from its Go module (helm.sh/helm/v3, pinned
# below) into ${KT_CACHE_DIR:-~/.cache/kt}/helm-<version>/helm, outside the repo; skipped when
# present. Built at low priority (nice -n 10): the machine is shared. Uses helm's own go.mod
# and go.sum (go install MODULE@VERSION), so the dependency set is the one helm released.
# Prints the binary's path on its last line.
set -euo pipefail
HELM_VERSION=v3.22.0
dir="${KT_CACHE_DIR:-$HOME/.cache/kt}/helm-$HELM_VERSION"
bin="$dir/helm"
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.build.lock"
flock 9
if [ ! -x "$bin" ]; then
    echo "helm-build: building helm $HELM_VERSION from helm.sh/helm/v3 (cold: several minutes)" >&2
    ldf="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
    GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= GOBIN="$dir/tmp" \
        nice -n 10 go install -trimpath -ldflags "$ldf" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    mv "$dir/tmp/helm" "$bin"
    rmdir "$dir/tmp"
fi
echo "$bin"
