#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/tiers.sh BUILD_DIR UNIT_BIN... - run the no-cluster tiers and print one total.
#
# Tier 1: each unit binary (prints "N passed, N failed"). Tier 2: every tests/*/tier.sh
# (golden, validate, admission, ...) called with BUILD_DIR; each prints the same line.
# VALGRIND=1 runs the unit binaries under valgrind. KT_ONLY (make unit T=...) runs only the
# matching tests (tests/only.sh). Exit 1 if anything failed.
set -uo pipefail
b=$1
shift
pass=0
fail=0
start=$(date +%s%N)
count() { # parse the last "N passed, N failed" line of $1
    local line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -z "$line" ]; then
        echo "0 1"
        return
    fi
    echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/'
}
run_one() { # name, command...
    local name=$1 out rc p f
    shift
    out=$(mktemp)
    "$@" >"$out" 2>&1
    rc=$?
    read -r p f < <(count "$out")
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
    fi
    if [ "$f" -ne 0 ] || grep -qE 'AddressSanitizer|runtime error:|ThreadSanitizer|ERROR SUMMARY: [1-9]' "$out"; then
        [ "$f" -eq 0 ] && f=1
        cat "$out"
    fi
    printf '  %-28s %4d passed, %d failed\n' "$name" "$p" "$f"
    pass=$((pass + p))
    fail=$((fail + f))
    rm -f "$out"
}
vg=()
if [ "${VALGRIND:-}" = 1 ]; then
    # shellcheck disable=SC2054 # the comma is part of valgrind's flag value
    vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect)
fi
. tests/only.sh
for t in "$@"; do
    kt_only "unit/$(basename "$t")" || continue
    run_one "unit/$(basename "$t")" "${vg[@]}" "$t"
done
for tier in tests/*/tier.sh; do
    [ -x "$tier" ] || continue
    name=$(basename "$(dirname "$tier")")
    case "$name" in
    golden | validate | admission) ;; # these pick their own cases (TIER/CASE)
    *) kt_only "$name" || continue ;;
    esac
    run_one "$name" "$tier" "$b"
done
end=$(date +%s%N)
printf "tiers (%s): %d.%01ds\n" "$b" $(((end - start) / 1000000000)) $(((end - start) / 100000000 % 10))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
