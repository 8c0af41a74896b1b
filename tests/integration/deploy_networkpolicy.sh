#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/deploy_networkpolicy.sh ENV_FILE - the optional deploy/networkpolicy is
# accepted by the real API server once API-SERVER-CIDR is replaced (server-side dry run), and
# refused while the placeholder is left in (so an unedited apply cannot block admission).
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
"$KT_KUBECTL" kustomize "$it_root/deploy/networkpolicy" >"$IT_TMP/np.yaml" ||
    { it_fail networkpolicy-builds "kustomize failed"; it_finish; }
if sed 's#API-SERVER-CIDR#10.0.0.0/24#' "$IT_TMP/np.yaml" |
    kc apply --dry-run=server -f - >"$IT_TMP/out" 2>&1; then
    it_ok networkpolicy-accepted-with-cidr
else
    it_fail networkpolicy-accepted-with-cidr "$(cat "$IT_TMP/out")"
fi
if kc apply --dry-run=server -f "$IT_TMP/np.yaml" >"$IT_TMP/out" 2>&1; then
    it_fail networkpolicy-placeholder-refused "the unedited placeholder was accepted"
elif grep -q 'API-SERVER-CIDR' "$IT_TMP/out"; then
    it_ok networkpolicy-placeholder-refused
else
    it_fail networkpolicy-placeholder-refused "unexpected error: $(cat "$IT_TMP/out")"
fi
it_finish
