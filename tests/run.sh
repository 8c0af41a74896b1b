#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/run.sh TIER [PATTERN...] - run one tier, or only its tests whose name contains a PATTERN
# (shell globs allowed). The one way to run one test (docs/development.md "Tests"):
#   tests/run.sh validate tj-quantity      one golden case of ktctl validate
#   tests/run.sh unit test_yaml            one unit binary
#   tests/run.sh integration gc_           the integration tests whose names contain gc_
# TIER: unit golden validate admission plugins (cases), build certs cluster dist install parity
# (whole tiers of make unit), lint, docs, formats, precommit, integration, e2e, node,
# reliability (PATTERN: test, case or drill names), helm, image, gate (the scale gate), oracle,
# fuzz (PATTERN: target).
# KT_KEEP=1 keeps the scratch and cluster folders, KT_STOP=1 stops at the first failure, KT_ONLY
# selects tests (tests/lib.sh). B=build/VARIANT picks the build (build/plain).
set -euo pipefail
cd "$(dirname "$0")/.."
run_usage() {
    sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
[ $# -ge 1 ] || run_usage
tier=$1
shift
b=${B:-build/plain}
variant=${b#build/}
case "$variant" in plain) san= ;; thread) san=thread ;; *) san=${variant//-/,} ;; esac
# only TIER PATTERN... - the KT_ONLY patterns naming TIER's tests (tests/lib.sh kt_only).
only() {
    local t=$1 p out=
    shift
    for p in "$@"; do out+="$t/*$p "; done
    echo "$out"
}
build() { make -s -j"$(nproc)" SANITIZER="$san" all; }
case "$tier" in
unit)
    make -s -j"$(nproc)" SANITIZER="$san" unit T="$(only unit "$@")"
    ;;
golden | validate | admission | plugins)
    build
    KT_ONLY="$(only "$tier" "$@")" "tests/$tier/tier.sh" "$b"
    ;;
build | certs | cluster | dist | install | parity)
    [ $# -eq 0 ] || echo "run.sh: the $tier tier runs as a whole (patterns ignored)" >&2
    build
    "tests/$tier/tier.sh" "$b"
    ;;
lint) make -s lint ;;
docs) tests/docs/run.sh ;;
formats | precommit)
    build
    "tests/validate/$tier.sh" "$b"
    ;;
integration | e2e | node | reliability)
    build
    "tests/$tier/run.sh" "$@"
    ;;
helm | image) "tests/$tier/run.sh" ;;
gate) tests/bench/gate.sh "$b" ;;
oracle)
    build
    tests/parity/oracle.sh "$b"
    ;;
fuzz) tests/fuzz/run.sh "$@" ;;
*) run_usage ;;
esac
