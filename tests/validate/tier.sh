#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/validate/tier.sh BUILD_DIR - golden cases of `ktctl validate` (docs/ktctl.md#ktctl-validate).
#
# A case is a directory tests/validate/<case>/ with input files, a `spec` file naming the
# upstream rule it pins (docs/internals/upstream.md), the expected `stdout` and `exit`, and optionally `stderr` (compared
# when present), `args` (the command line after `validate`, one line; default: every *.yaml,
# *.yml and *.json of the case in name order), `cmd` (instead of args: the whole command line
# after `ktctl`, one line, for --help and the other subcommands) and `stdin` (fed to the
# command). Cases run inside their directory so file names in messages are relative. UPDATE=1 rewrites stdout,
# exit (and an existing stderr) from the current output: review every change against docs/internals/upstream.md.
# Also checks that common/validate/crd_schemas.c is up to date with api/ (scripts/gen/embed_crds.py).
set -uo pipefail
b=$(cd "$1" && pwd)
ktctl="$b/bin/ktctl"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib.sh" # T, ok, bad, kt_test, kt_finish
# shellcheck disable=SC2034 # read by kt_test (tests/lib.sh)
KT_TIER=validate
t0=$(date +%s%N)
if [ ! -x "$ktctl" ]; then
    bad ktctl "$ktctl not built"
    kt_finish
fi
if command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
    kt_test crd-schemas-fresh 'python3 "$root/scripts/gen/embed_crds.py" --check || { echo "crd_schemas.c is stale"; exit 1; }'
fi

# validate_case DIR - one case (a kt_test body): exit 1 saying what differs.
validate_case() {
    local dir=$1 out="$T/out" err="$T/err" rc args=() f want_rc
    if [ -f "$dir/cmd" ]; then
        read -r -a args <"$dir/cmd"
    elif [ -f "$dir/args" ]; then
        read -r -a args <"$dir/args"
        args=(validate "${args[@]}")
    else
        args=(validate)
        for f in "$dir"/*.yaml "$dir"/*.yml "$dir"/*.json; do
            [ -e "$f" ] && args+=("$(basename "$f")")
        done
    fi
    if [ -f "$dir/stdin" ]; then
        (cd "$dir" && "$ktctl" "${args[@]}" <stdin) >"$out" 2>"$err"
    else
        (cd "$dir" && "$ktctl" "${args[@]}" </dev/null) >"$out" 2>"$err"
    fi
    rc=$?
    if [ "${UPDATE:-}" = 1 ]; then
        cp "$out" "$dir/stdout"
        echo "$rc" >"$dir/exit"
        [ -f "$dir/stderr" ] && cp "$err" "$dir/stderr"
    fi
    want_rc=$(cat "$dir/exit" 2>/dev/null || echo missing)
    if [ "$rc" != "$want_rc" ]; then
        echo "exit $rc, want $want_rc"
        cat "$err"
        return 1
    elif ! diff -u "$dir/stdout" "$out"; then
        echo "stdout differs"
        return 1
    elif [ -f "$dir/stderr" ] && ! diff -u "$dir/stderr" "$err"; then
        echo "stderr differs"
        return 1
    fi
}

# needs_missing DIR - the first command the case's `needs` file names that is not on PATH.
needs_missing() {
    local f need=()
    [ -f "$1/needs" ] || return 1
    read -r -a need <"$1/needs"
    for f in "${need[@]}"; do
        command -v "$f" >/dev/null || { echo "$f" && return 0; }
    done
    return 1
}

for dir in "$here"/*/; do
    [ -f "$dir/spec" ] || continue
    name=$(basename "$dir")
    if missing=$(needs_missing "$dir"); then
        kt_only "validate/$name" && echo "SKIP $name: needs $missing on PATH"
        continue
    fi
    kt_test "$name" "validate_case '${dir%/}'"
done

# Problems, then the summary, when stdout and stderr share one pipe (a CI log): stdout is
# line-buffered. Before, the summary came first.
piped_order() {
    (cd "$here" && "$ktctl" validate --allow-missing-runtimes tj-numnodes-negative fmt-inputs/broken.yaml 2>&1 | cat) >"$T/log"
    [ "$(wc -l <"$T/log")" -eq 3 ] && [ "$(grep -c "^tj-numnodes-negative/" "$T/log")" -eq 1 ] &&
        [ "$(tail -n 1 "$T/log" | cut -c 1-15)" = "ktctl validate:" ] && return 0
    echo "piped output: the summary is not the last line"
    cat "$T/log"
    return 1
}
kt_test piped-order piped_order
# The same with -o json: the whole array before the summary.
piped_order_json() {
    (cd "$here" && "$ktctl" validate -o json --allow-missing-runtimes tj-numnodes-negative 2>&1 | cat) >"$T/log"
    [ "$(head -c 1 "$T/log")" = "[" ] && [ "$(tail -n 1 "$T/log" | cut -c 1-15)" = "ktctl validate:" ] && return 0
    echo "piped json: the summary is not after the array"
    cat "$T/log"
    return 1
}
kt_test piped-order-json piped_order_json

# kt's own repository (docs/ktctl.md "ktctl validate in CI"): only real problems. The inputs
# that are invalid on purpose (test cases) and one template that is not YAML until filled in
# are left out with --ignore; the rest must pass. Without the --ignore, the cases are found.
kt_repository() {
    local rc ignores=(--ignore 'tests/validate/*' --ignore 'tests/golden/*' --ignore 'tests/crd/cases/*'
        --ignore 'tests/fuzz/corpus/*' --ignore 'tests/integration/*' --ignore 'tests/admission/*'
        --ignore tests/cluster/kwok/stages.yaml)
    (cd "$root" && "$ktctl" validate deploy/ tests/ "${ignores[@]}") >"$T/log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && [ "$(grep -c ' 0 invalid' "$T/log")" -eq 1 ] && return 0
    echo "ktctl validate deploy/ tests/ on kt's repository: exit $rc"
    grep -v ': note: ' "$T/log"
    return 1
}
kt_test kt-repository kt_repository
kt_repository_no_ignore() {
    local rc
    (cd "$root" && "$ktctl" validate deploy/ tests/) >"$T/log" 2>&1
    rc=$?
    # Exit 2: the cases hold inputs that cannot be checked on purpose (a binary file, UTF-16).
    [ "$rc" -eq 2 ] && [ "$(grep -c '^tests/validate/tj-numnodes-negative/trainjob.yaml:9: ' "$T/log")" -eq 1 ] &&
        [ "$(grep -c '^ktctl validate: tests/validate/input-binary/blob.yaml: a NUL byte' "$T/log")" -eq 1 ] && return 0
    echo "kt's repository without --ignore: exit $rc, want 2 with the golden cases' problems"
    return 1
}
kt_test kt-repository-no-ignore kt_repository_no_ignore

echo "validate wall time: $(kt_secs "$t0")"
kt_finish
