# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/only.sh - sourced by the tiers: which tests to run. KT_ONLY (set by `make unit T=...`,
# `make check T=...` and tests/run) holds space-separated patterns; a test runs when its full
# name, TIER/NAME (unit/test_yaml, golden/torch-basic, validate/tj-quantity, admission/...),
# contains one of them. A pattern may use shell globs: `tj-*-negative`. Empty: everything.

# kt_only NAME - NAME is wanted.
kt_only() {
    local p
    [ -n "${KT_ONLY:-}" ] || return 0
    for p in $KT_ONLY; do
        # shellcheck disable=SC2053 # $p unquoted on purpose: a glob
        [[ $1 == *$p* ]] && return 0
    done
    return 1
}
