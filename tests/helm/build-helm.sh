#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/helm/build-helm.sh - the helm CLI from its Go module (helm.sh/helm/v3, pinned below),
# cached outside the repo by scripts/go_install_cached.sh. Prints the binary's path on its last line.
set -euo pipefail
HELM_VERSION=v3.22.0
exec "$(dirname "$0")/../../scripts/go_install_cached.sh" helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm \
    "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
