#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/golden/tier.sh BUILD_DIR - run every render golden case with BUILD_DIR/bin/ktctl.
#
# A case is a directory tests/golden/<case>/ holding trainjob.yaml, runtime.yaml (passed
# with --runtime), optional objects.yaml (--objects), optional `args` (extra flags, one
# line), a `spec` file citing the rule it pins (docs/internals/upstream.md), and either expected.json (the whole
# `ktctl render -o json` List, byte for byte) or `error` (the exact stderr; exit code 1, or
# the number in an optional `exit` file). Cases run from inside their directory so file
# names in messages are relative. UPDATE=1 rewrites expected.json / error from the current
# output: review every change against docs/internals/upstream.md before committing it.
set -uo pipefail
b=$(cd "$1" && pwd)
ktctl="$b/bin/ktctl"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh" # T, ok, bad, kt_test, kt_finish
# shellcheck disable=SC2034 # read by kt_test (tests/lib.sh)
KT_TIER=golden
if [ ! -x "$ktctl" ]; then
    bad ktctl "$ktctl not built"
    kt_finish
fi
# golden_case DIR - one case (a kt_test body): exit 1 with the diff when the output differs.
golden_case() {
    local dir=$1 out="$T/out" err="$T/err" rc want_rc args=()
    if [ -f "$dir/args" ]; then
        read -r -a args <"$dir/args"
    fi
    [ -f "$dir/runtime.yaml" ] && args+=(--runtime runtime.yaml)
    [ -f "$dir/objects.yaml" ] && args+=(--objects objects.yaml)
    (cd "$dir" && "$ktctl" render -o json "${args[@]}" trainjob.yaml) >"$out" 2>"$err"
    rc=$?
    if [ -f "$dir/error" ] || { [ "${UPDATE:-}" = 1 ] && [ $rc -ne 0 ]; }; then
        want_rc=1
        [ -f "$dir/exit" ] && want_rc=$(cat "$dir/exit")
        if [ "${UPDATE:-}" = 1 ]; then
            cp "$err" "$dir/error"
            rm -f "$dir/expected.json"
        fi
        [ $rc -eq "$want_rc" ] && cmp -s "$err" "$dir/error" && return 0
        echo "exit $rc (want $want_rc)"
        diff -u "$dir/error" "$err" | sed -n 1,40p
    else
        [ "${UPDATE:-}" = 1 ] && [ $rc -eq 0 ] && cp "$out" "$dir/expected.json"
        [ $rc -eq 0 ] && cmp -s "$out" "$dir/expected.json" && return 0
        echo "exit $rc"
        cat "$err"
        diff -u "$dir/expected.json" "$out" | sed -n 1,60p
    fi
    return 1
}
for dir in "$here"/*/; do
    [ -f "$dir/trainjob.yaml" ] || continue
    kt_test "$(basename "$dir")" "golden_case '${dir%/}'"
done
kt_finish
