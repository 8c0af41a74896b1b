#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/monitoring/build-promtool.sh - promtool from Prometheus' Go module
# (github.com/prometheus/prometheus, pinned below: Prometheus 3.x is tagged v0.3xx.y in Go),
# cached outside the repo by scripts/go_install_cached.sh. Built with Prometheus' documented
# `remove_all_sd` tag: only the file, static and HTTP service discoveries, the ones the tiers
# use (the cloud providers' SDKs are most of a cold build). Prints the binary's path on its last line.
set -euo pipefail
PROM_VERSION=v0.316.0
exec "$(dirname "$0")/../../scripts/go_install_cached.sh" promtool "$PROM_VERSION" \
    github.com/prometheus/prometheus/cmd/promtool "-s -w" remove_all_sd
