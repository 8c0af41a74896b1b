#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/validate/tier.sh BUILD_DIR - golden cases of `ktctl validate` (DESIGN.md interface).
#
# A case is a directory tests/validate/<case>/ with input files, a `spec` file naming the
# SPEC section it pins, the expected `stdout` and `exit`, and optionally `stderr` (compared
# when present), `args` (the command line after `validate`, one line; default: every *.yaml,
# *.yml and *.json of the case in name order), `cmd` (instead of args: the whole command line
# after `ktctl`, one line, for --help and the other subcommands) and `stdin` (fed to the
# command). Cases run inside their directory so file names in messages are relative. UPDATE=1 rewrites stdout,
# exit (and an existing stderr) from the current output: review every change against SPEC.
# Also checks that common/validate/crd_schemas.c is up to date with api/ (tests/crd/embed_crds.py).
set -uo pipefail
b=$(cd "$1" && pwd)
ktctl="$b/bin/ktctl"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pass=0
fail=0
t0=$(date +%s%N)
if [ ! -x "$ktctl" ]; then
    echo "validate: $ktctl not built"
    echo "0 passed, 1 failed"
    exit 1
fi
if command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
    if python3 "$root/tests/crd/embed_crds.py" --check; then
        pass=$((pass + 1))
    else
        echo "FAIL crd_schemas.c is stale"
        fail=$((fail + 1))
    fi
fi

run_case() {
    local dir=$1 name out err rc args=() f want_rc
    name=$(basename "$dir")
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
    run_case "${dir%/}"
done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "validate wall time: $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
