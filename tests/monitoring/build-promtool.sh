#!/usr/bin/env bash
# tests/monitoring/build-promtool.sh - build promtool from Prometheus' Go module
# (github.com/prometheus/prometheus, pinned below: Prometheus 3.x is tagged v0.3xx.y in Go)
# into ${KT_CACHE_DIR:-~/.cache/kt}/promtool-<version>/promtool, outside the repo; skipped
# when present. Built at low priority (the machine is shared), with the module's own go.mod
# and go.sum (go install MODULE@VERSION). Prints the binary's path on its last line.
set -euo pipefail
PROM_VERSION=v0.316.0
dir="${KT_CACHE_DIR:-$HOME/.cache/kt}/promtool-$PROM_VERSION"
bin="$dir/promtool"
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.build.lock"
flock 9
if [ ! -x "$bin" ]; then
    echo "promtool-build: building promtool $PROM_VERSION (cold: several minutes)" >&2
    GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= GOBIN="$dir/tmp" \
        nice -n 19 go install -trimpath -ldflags "-s -w" \
        "github.com/prometheus/prometheus/cmd/promtool@$PROM_VERSION"
    mv "$dir/tmp/promtool" "$bin"
    rmdir "$dir/tmp"
fi
echo "$bin"
