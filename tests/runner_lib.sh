# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/runner_lib.sh - what the integration and reliability runners share (sourced by
# tests/integration/run.sh and tests/reliability/run.sh; they set pass=0 fail=0 first).
#   secs START_NS        "S.mmms" since START_NS (date +%s%N)
#   wanted NAME [WORD...] true when no WORD is given or NAME contains one of them
#   run_one NAME CMD...  run a test, relay its output under "== NAME (time)", add its ok/FAIL
#                        lines to pass/fail. A C test (tests/test.h) prints no ok lines but ends
#                        with "N passed, N failed", which is counted instead; a test that exits
#                        non-zero without a FAIL line counts as one failure, one that prints
#                        nothing and exits 0 as one pass.

secs() { local ms=$((($(date +%s%N) - $1) / 1000000)); echo "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"; }

wanted() {
    local w
    [ $# -ge 2 ] || return 0
    for w in "${@:2}"; do
        case "$1" in *"$w"*) return 0 ;; esac
    done
    return 1
}

run_one() {
    local name=$1 out rc p f t
    shift
    out=$(mktemp)
    t=$(date +%s%N)
    "$@" >"$out" 2>&1
    rc=$?
    echo "== $name ($(secs "$t"))"
    cat "$out"
    p=$(grep -c '^ok ' "$out")
    f=$(grep -c '^FAIL ' "$out")
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        read -r p f < <(sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$out" | tail -1)
        p=${p:-0}
        f=${f:-0}
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "FAIL $name: exit status $rc"
    fi
    if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        p=1
        echo "ok $name"
    fi
    pass=$((pass + p))
    fail=$((fail + f))
    rm -f "$out"
}
