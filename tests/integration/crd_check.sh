#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_check.sh ENV_FILE - tests/crd/check.sh on this tier's API server: the
# offline checks of api/ and deploy/runtimes/, then the CRDs applied and Established, the shipped
# runtimes surviving pruning, and every tests/crd/cases/*.yaml answered as its `# expect:` line
# says (the cases `ktctl validate`'s golden specs cite as pinned on the API server).
set -uo pipefail
[ $# -ge 1 ] && [ -f "$1" ] || {
    echo "usage: $0 ENV_FILE (from tests/cluster/up.sh)" >&2
    exit 2
}
# shellcheck source=/dev/null # a cluster env file, written at run time
. "$1"
exec "$(dirname "$0")/../crd/check.sh" --kubeconfig "$KT_ADMIN_KUBECONFIG"
