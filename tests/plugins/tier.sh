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
. "$here/../lib.sh" # T, ok, bad, check, kt_test, kt_finish
# shellcheck disable=SC2034 # read by kt_test (tests/lib.sh)
KT_TIER=plugins
if [ ! -x "$ktctl" ]; then
    bad ktctl "$ktctl not built"
    kt_finish
fi
if "$here/build.sh" "$b" >"$T/build.log" 2>&1; then
    kt_only plugins/build.sh && ok build.sh
else
    bad build.sh "$(cat "$T/build.log")"
    kt_finish
fi
# plugin_case DIR - one case (a kt_test body): exit 1 with the diff when the output differs.
plugin_case() {
    local dir=$1 out="$T/out" err="$T/err" rc want_rc args=() line
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
        return 0
    fi
    echo "exit $rc (want $want_rc)"
    diff -u "$dir/stdout" "$out" | sed -n 1,40p
    if [ -f "$dir/stderr" ]; then diff -u "$dir/stderr" "$err" | sed -n 1,20p; else head -20 "$err"; fi
    return 1
}
# docs/plugins.md's "Writing a plugin" example must be tests/plugins/minimal.c verbatim (which
# build.sh just compiled): the ```c block after the line `<!-- plugin-example: tests/plugins/minimal.c -->`.
readme="$here/../../docs/plugins.md"
readme_example() {
    if ! grep -q '^<!-- plugin-example: tests/plugins/minimal.c -->' "$readme" 2>/dev/null; then
        echo "no plugin-example marker in docs/plugins.md"
        return 1
    fi
    awk '/^<!-- plugin-example: tests\/plugins\/minimal.c -->/ { m = 1; next }
            m == 1 && /^```c$/ { m = 2; next } m == 2 && /^```$/ { exit } m == 2 { print }' \
        "$readme" >"$T/example.c"
    cmp -s "$T/example.c" "$here/minimal.c" && return 0
    echo "docs/plugins.md's example differs from tests/plugins/minimal.c"
    return 1
}
kt_test readme-example readme_example
for dir in "$here"/golden/*/; do
    [ -f "$dir/cmd" ] || continue
    kt_test "$(basename "$dir")" "plugin_case '${dir%/}'"
done
kt_finish
