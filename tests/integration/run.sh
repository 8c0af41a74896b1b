#!/usr/bin/env bash
# tests/integration/run.sh [TEST...] - the integration tier on a REAL kube-apiserver + etcd.
# Builds the control plane if needed (tests/cluster/build.sh), starts one cluster in a temp dir,
# runs every executable tests/integration/*.sh (crd_*.sh first, cluster_*.sh last), every
# binary of build/plain/itests/ and build/address-undefined/itests/ (after `make -s itests`), each with the env file as $1 (shell
# tests source lib.sh and print `ok NAME` / `FAIL NAME: why` lines; C tests end with their own
# `N passed, N failed` line). Prints one line per check and a final
# `N passed, N failed`, dumps the control plane logs when something failed, and always stops the
# cluster. TEST... restricts the run to tests whose name contains one of the words.
# KT_KEEP_CLUSTER=1 keeps the cluster directory (not the processes) for inspection.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
t0=$(date +%s%N)
pass=0
fail=0
D=""

elapsed() {
    local ms=$((($(date +%s%N) - t0) / 1000000))
    echo "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"
}
teardown() {
    if [ -n "$D" ]; then
        tests/cluster/down.sh "$D" || echo "integration: down.sh failed" >&2
        if [ "${KT_KEEP_CLUSTER:-}" = 1 ]; then
            echo "integration: cluster files kept in $D" >&2
        else
            rm -rf "$D"
        fi
    fi
}
trap teardown EXIT
trap 'exit 130' INT TERM

wanted() {
    local w
    [ $# -ge 2 ] || return 0
    for w in "${@:2}"; do
        case "$1" in *"$w"*) return 0 ;; esac
    done
    return 1
}

# run_one NAME CMD... - run a test, relay its output, count its ok/FAIL lines (a test that
# exits non-zero without printing FAIL counts as one failure, one that prints nothing and
# exits 0 as one pass).
run_one() {
    local name=$1 out rc p f t
    shift
    out=$(mktemp)
    t=$(date +%s%N)
    "$@" >"$out" 2>&1
    rc=$?
    t=$((($(date +%s%N) - t) / 1000000))
    echo "== $name ($((t / 1000)).$(printf '%03d' $((t % 1000)))s)"
    cat "$out"
    p=$(grep -c '^ok ' "$out")
    f=$(grep -c '^FAIL ' "$out")
    # C tests (tests/test.h) end with their own "N passed, N failed" line.
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

if ! tests/cluster/build.sh >/dev/null; then
    echo "integration: tests/cluster/build.sh failed"
    echo "0 passed, 1 failed"
    exit 1
fi
itests=()
if ls tests/integration/itest_*.c >/dev/null 2>&1; then
    # The C tests run twice: plain and under ASan+UBSan, so faults on the real API server are
    # memory-checked too (KT_ITEST_ASAN=0 skips the second build and run).
    variants=(plain)
    [ "${KT_ITEST_ASAN:-1}" = 1 ] && variants+=(address-undefined)
    for v in "${variants[@]}"; do
        san=""
        [ "$v" = plain ] || san=address,undefined
        if make -s SANITIZER="$san" WERROR=1 itests; then
            for b in "build/$v/itests/itest_"*; do
                [ -x "$b" ] && itests+=("$b")
            done
        else
            echo "FAIL make-itests: make -s SANITIZER=$san itests failed"
            fail=$((fail + 1))
        fi
    done
fi

D=$(mktemp -d "${TMPDIR:-/tmp}/kt-itest.XXXXXX")
if ! tests/cluster/up.sh "$D"; then
    echo "integration: tests/cluster/up.sh failed"
    echo "0 passed, $((fail + 1)) failed (wall $(elapsed))"
    exit 1
fi

# Every executable tests/integration/*.sh but lib.sh, run.sh and cluster_*.sh; crd_*.sh first.
shells=()
for t in tests/integration/crd_*.sh tests/integration/*.sh; do
    case "$t" in
    */lib.sh | */run.sh | */cluster_*) continue ;;
    esac
    case " ${shells[*]-} " in *" $t "*) continue ;; esac
    [ -x "$t" ] && shells+=("$t")
done
for t in ${shells[@]+"${shells[@]}"}; do
    wanted "$t" "$@" || continue
    run_one "$(basename "$t" .sh)" "$t" "$D/env"
done
for b in ${itests[@]+"${itests[@]}"}; do
    wanted "$b" "$@" || continue
    case "$b" in
    build/plain/*) run_one "$(basename "$b")" "$b" "$D/env" ;;
    *) run_one "asan/$(basename "$b")" "$b" "$D/env" ;;
    esac
done
# Last: the harness tests restart the API server and start other clusters.
for t in tests/integration/cluster_*.sh; do
    [ -x "$t" ] || continue
    wanted "$t" "$@" || continue
    run_one "$(basename "$t" .sh)" "$t" "$D/env"
done

if [ "$fail" -ne 0 ]; then
    . tests/cluster/lib.sh
    kt_print_logs "$D" 2>&1
fi
echo "integration wall time: $(elapsed)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
