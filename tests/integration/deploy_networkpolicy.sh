#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/deploy_networkpolicy.sh ENV_FILE - the optional deploy/networkpolicy is
# accepted by the real API server once API-SERVER-CIDR is replaced (server-side dry run), and
# refused while the placeholder is left in (so an unedited apply cannot block admission).
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
"$KT_KUBECTL" kustomize "$it_root/deploy/networkpolicy" >"$T/np.yaml" ||
    { bad networkpolicy-builds "kustomize failed"; kt_finish; }
if sed 's#API-SERVER-CIDR#10.0.0.0/24#' "$T/np.yaml" |
    kc apply --dry-run=server -f - >"$T/out" 2>&1; then
    ok networkpolicy-accepted-with-cidr
else
    bad networkpolicy-accepted-with-cidr "$(cat "$T/out")"
fi
if kc apply --dry-run=server -f "$T/np.yaml" >"$T/out" 2>&1; then
    bad networkpolicy-placeholder-refused "the unedited placeholder was accepted"
elif grep -q 'API-SERVER-CIDR' "$T/out"; then
    ok networkpolicy-placeholder-refused
else
    bad networkpolicy-placeholder-refused "unexpected error: $(cat "$T/out")"
fi
kt_finish
