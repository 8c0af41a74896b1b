#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/tiers.sh BUILD_DIR UNIT_BIN... - run the no-cluster tiers and print one total.
#
# Tier 1: each unit binary (prints "N passed, N failed"). Tier 2: every tests/*/tier.sh
# (golden, validate, admission, ...) called with BUILD_DIR; each prints the same line.
# VALGRIND=1 runs the unit binaries under valgrind. KT_ONLY (make unit T=...) runs only the
# matching tests (tests/lib.sh kt_only). Exit 1 if anything failed.
set -uo pipefail
b=$1
shift
. tests/lib.sh # kt_run_one, kt_only, kt_finish
# shellcheck disable=SC2034 # read by kt_run_one
KT_RUN_QUIET=1
start=$(date +%s%N)
vg=()
if [ "${VALGRIND:-}" = 1 ]; then
    # shellcheck disable=SC2054 # the comma is part of valgrind's flag value
    vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect)
fi
for t in "$@"; do
    kt_only "unit/$(basename "$t")" || continue
    kt_run_one "unit/$(basename "$t")" "${vg[@]}" "$t"
done
for tier in tests/*/tier.sh; do
    [ -x "$tier" ] || continue
    name=$(basename "$(dirname "$tier")")
    case "$name" in
    golden | validate | admission | plugins) ;; # these pick their own cases (TIER/CASE)
    *) kt_only "$name" || continue ;;
    esac
    kt_run_one "$name" "$tier" "$b"
done
end=$(date +%s%N)
printf "tiers (%s): %d.%01ds\n" "$b" $(((end - start) / 1000000000)) $(((end - start) / 100000000 % 10))
kt_finish
