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
. "$here/../lib.sh"
pass=0
fail=0
t0=$(date +%s%N)
if [ ! -x "$ktctl" ]; then
    echo "validate: $ktctl not built"
    echo "0 passed, 1 failed"
    exit 1
fi
if kt_only validate/crd-schemas-fresh && command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
    if python3 "$root/scripts/gen/embed_crds.py" --check; then
        pass=$((pass + 1))
    else
        echo "FAIL crd_schemas.c is stale"
        fail=$((fail + 1))
    fi
fi

run_case() {
    local dir=$1 name out err rc args=() f want_rc
    name=$(basename "$dir")
    if [ -f "$dir/needs" ]; then
        read -r -a args <"$dir/needs"
        for f in "${args[@]}"; do
            if ! command -v "$f" >/dev/null; then
                echo "SKIP $name: needs $f on PATH"
                return
            fi
        done
    fi
    out=$(mktemp)
    err=$(mktemp)
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
        echo "FAIL $name: exit $rc, want $want_rc"
        cat "$err"
        fail=$((fail + 1))
    elif ! diff -u "$dir/stdout" "$out"; then
        echo "FAIL $name: stdout differs"
        fail=$((fail + 1))
    elif [ -f "$dir/stderr" ] && ! diff -u "$dir/stderr" "$err"; then
        echo "FAIL $name: stderr differs"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
    rm -f "$out" "$err"
}

for dir in "$here"/*/; do
    [ -f "$dir/spec" ] || continue
    kt_only "validate/$(basename "$dir")" || continue
    run_case "${dir%/}"
done
# Problems, then the summary, when stdout and stderr share one pipe (a CI log): stdout is
# line-buffered. Before, the summary came first.
log=$(mktemp)
if kt_only validate/piped-order; then
    (cd "$here" && "$ktctl" validate --allow-missing-runtimes tj-numnodes-negative fmt-inputs/broken.yaml 2>&1 | cat) >"$log"
    if [ "$(wc -l <"$log")" -eq 3 ] && [ "$(grep -c "^tj-numnodes-negative/" "$log")" -eq 1 ] &&
        [ "$(tail -n 1 "$log" | cut -c 1-15)" = "ktctl validate:" ]; then
        pass=$((pass + 1))
    else
        echo "FAIL piped output: the summary is not the last line"
        cat "$log"
        fail=$((fail + 1))
    fi
    # The same with -o json: the whole array before the summary.
    (cd "$here" && "$ktctl" validate -o json --allow-missing-runtimes tj-numnodes-negative 2>&1 | cat) >"$log"
    if [ "$(head -c 1 "$log")" = "[" ] && [ "$(tail -n 1 "$log" | cut -c 1-15)" = "ktctl validate:" ]; then
        pass=$((pass + 1))
    else
        echo "FAIL piped json: the summary is not after the array"
        cat "$log"
        fail=$((fail + 1))
    fi
fi

if kt_only validate/kt-repository; then
    # kt's own repository (docs/ktctl.md "ktctl validate in CI"): only real problems. The inputs
    # that are invalid on purpose (test cases) and one template that is not YAML until filled in
    # are left out with --ignore; the rest must pass. Without the --ignore, the cases are found.
    ignores=(--ignore 'tests/validate/*' --ignore 'tests/golden/*' --ignore 'tests/crd/cases/*'
        --ignore 'tests/fuzz/corpus/*' --ignore 'tests/integration/*' --ignore 'tests/admission/*'
        --ignore tests/cluster/kwok/stages.yaml)
    (cd "$root" && "$ktctl" validate deploy/ tests/ "${ignores[@]}") >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$(grep -c ' 0 invalid' "$log")" -eq 1 ]; then
        pass=$((pass + 1))
    else
        echo "FAIL ktctl validate deploy/ tests/ on kt's repository: exit $rc"
        grep -v ': note: ' "$log"
        fail=$((fail + 1))
    fi
    (cd "$root" && "$ktctl" validate deploy/ tests/) >"$log" 2>&1
    rc=$?
    # Exit 2: the cases hold inputs that cannot be checked on purpose (a binary file, UTF-16).
    if [ "$rc" -eq 2 ] && [ "$(grep -c '^tests/validate/tj-numnodes-negative/trainjob.yaml:9: ' "$log")" -eq 1 ] &&
        [ "$(grep -c '^ktctl validate: tests/validate/input-binary/blob.yaml: a NUL byte' "$log")" -eq 1 ]; then
        pass=$((pass + 1))
    else
        echo "FAIL kt's repository without --ignore: exit $rc, want 2 with the golden cases' problems"
        fail=$((fail + 1))
    fi
fi
rm -f "$log"

ms=$((($(date +%s%N) - t0) / 1000000))
echo "validate wall time: $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
