#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/plugins/tier.sh BUILD_DIR - the external-plugin tier: build the example plugins
# (build.sh, against api/kt_plugin.h only), then run every case of tests/plugins/golden/.
#
# A case is a directory golden/<case>/ with `cmd` (the ktctl arguments, one line; @PLUGINS@
# stands for BUILD_DIR/plugins), a `spec` file saying what it pins, the expected `stdout`
# (byte for byte; for renders the whole `-o json` List), optional `stderr` (byte for byte,
# else stderr is not compared) and optional `exit` (default 0). Cases run from inside their
# directory; the plugins directory is written back as @PLUGINS@ in outputs before comparing.
# UPDATE=1 rewrites stdout (and stderr when the case has one) and exit: review the change.
set -uo pipefail
b=$(cd "$1" && pwd)
ktctl="$b/bin/ktctl"
here=$(cd "$(dirname "$0")" && pwd)
plugins="$b/plugins"
pass=0
fail=0
if [ ! -x "$ktctl" ]; then
    echo "plugins: $ktctl not built"
    echo "0 passed, 1 failed"
    exit 1
fi
if "$here/build.sh" "$b"; then
    pass=$((pass + 1))
else
    echo "FAIL plugins/build.sh"
    echo "$pass passed, 1 failed"
    exit 1
fi
run_case() {
    local dir=$1 name out err rc want_rc args=() line
    name=$(basename "$dir")
    out=$(mktemp)
    err=$(mktemp)
    line=$(cat "$dir/cmd")
    read -r -a args <<<"${line//@PLUGINS@/$plugins}"
    (cd "$dir" && "$ktctl" "${args[@]}") >"$out" 2>"$err"
    rc=$?
    sed -i "s#$plugins#@PLUGINS@#g" "$out" "$err"
    want_rc=0
    [ -f "$dir/exit" ] && want_rc=$(cat "$dir/exit")
    if [ "${UPDATE:-}" = 1 ]; then
        cp "$out" "$dir/stdout"
        [ -f "$dir/stderr" ] && cp "$err" "$dir/stderr"
        if [ "$rc" -ne 0 ]; then echo "$rc" >"$dir/exit"; else rm -f "$dir/exit"; fi
        want_rc=$rc
    fi
    if [ "$rc" -eq "$want_rc" ] && cmp -s "$out" "$dir/stdout" &&
        { [ ! -f "$dir/stderr" ] || cmp -s "$err" "$dir/stderr"; }; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL plugins/$name: exit $rc (want $want_rc)"
        diff -u "$dir/stdout" "$out" | sed -n 1,40p
        if [ -f "$dir/stderr" ]; then diff -u "$dir/stderr" "$err" | sed -n 1,20p; else head -20 "$err"; fi
    fi
    rm -f "$out" "$err"
}
# docs/plugins.md's "Writing a plugin" example must be tests/plugins/minimal.c verbatim (which
# build.sh just compiled): the ```c block after the line `<!-- plugin-example: tests/plugins/minimal.c -->`.
readme="$here/../../docs/plugins.md"
if ! grep -q '^<!-- plugin-example: tests/plugins/minimal.c -->' "$readme" 2>/dev/null; then
    fail=$((fail + 1))
    echo "FAIL plugins/readme-example: no plugin-example marker in docs/plugins.md"
else
    if awk '/^<!-- plugin-example: tests\/plugins\/minimal.c -->/ { m = 1; next }
            m == 1 && /^```c$/ { m = 2; next } m == 2 && /^```$/ { exit } m == 2 { print }' \
        "$readme" | cmp -s - "$here/minimal.c"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL plugins/readme-example: docs/plugins.md's example differs from tests/plugins/minimal.c"
    fi
fi
for dir in "$here"/golden/*/; do
    [ -f "$dir/cmd" ] || continue
    run_case "${dir%/}"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
