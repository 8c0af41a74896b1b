#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/monitoring/build-prometheus.sh - the Prometheus server from its Go module
# (github.com/prometheus/prometheus, the version promtool is built from, see build-promtool.sh),
# cached outside the repo by scripts/go_install_cached.sh. Built without the React UI assets (the
# module ships none; the tiers use the HTTP API only) and with `remove_all_sd` (file, static
# and HTTP discovery only, as build-promtool.sh). Prints the binary's path on its last line.
set -euo pipefail
PROM_VERSION=$(sed -n 's/^PROM_VERSION=//p' "$(dirname "$0")/build-promtool.sh")
exec "$(dirname "$0")/../../scripts/go_install_cached.sh" prometheus "$PROM_VERSION" \
    github.com/prometheus/prometheus/cmd/prometheus "-s -w" remove_all_sd
