#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/run.sh [TEST...] - the integration tier on a REAL kube-apiserver + etcd.
# Builds the control plane if needed (scripts/cluster/build.sh), starts one cluster in a temp dir,
# runs every executable tests/integration/*.sh (crd_*.sh first, cluster_*.sh last), every
# binary of build/plain/itests/ and build/address-undefined/itests/ (after `make -s itests`), each with the env file as $1 (shell
# tests source lib.sh and print `ok NAME` / `FAIL NAME: why` lines; C tests end with their own
# `N passed, N failed` line). Prints one line per check and a final
# `N passed, N failed`, dumps the control plane logs when something failed, and always stops the
# cluster. TEST... restricts the run to tests whose name contains one of the words.
# KT_KEEP=1 keeps the cluster directory (not the processes) and each test's scratch folder for
# inspection; KT_STOP=1 stops at the first failing check and keeps them too (tests/lib.sh).
# `tests/run.sh integration WORD...` builds first, then runs this.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
t0=$(date +%s%N)
. tests/lib.sh # kt_run_one, kt_only, kt_secs, kt_finish, KT_KEEP
KT_ONLY="${KT_ONLY:-} $(kt_only_args integration "$@")"
D=""

stop_cluster() {
    if [ -n "$D" ]; then
        tests/cluster/down.sh "$D" || echo "integration: down.sh failed" >&2
        if [ "${KT_KEEP:-}" = 1 ]; then
            echo "integration: cluster files kept in $D" >&2
        else
            rm -rf "$D"
        fi
    fi
}
kt_cleanup stop_cluster
trap 'exit 130' INT TERM

if ! scripts/cluster/build.sh >/dev/null; then
    echo "integration: scripts/cluster/build.sh failed"
    echo "0 passed, 1 failed"
    exit 1
fi
itests=()
want_itests=0 # build the C tests only when KT_ONLY selects one of them
for c in tests/integration/itest_*.c; do
    [ -f "$c" ] && kt_only "integration/$(basename "$c" .c)" && want_itests=1
done
if [ "$want_itests" = 1 ]; then
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
# TrainJob status patches audited (tests/integration/audit-policy.yaml): a test can count one
# namespace's writes, which the API server's metrics cannot
if ! tests/cluster/up.sh "$D" -- --audit-policy-file="$PWD/tests/integration/audit-policy.yaml" \
    --audit-log-path="$D/audit.log" --audit-log-mode=blocking; then
    echo "integration: tests/cluster/up.sh failed"
    echo "0 passed, $((fail + 1)) failed (wall $(kt_secs "$t0"))"
    exit 1
fi
[ "${KT_KEEP:-}" = 1 ] && echo "integration: cluster files kept in $D (KT_KEEP=1)"

# Every executable tests/integration/*.sh but lib.sh, run.sh and cluster_*.sh; crd_*.sh first.
shells=()
for t in tests/integration/crd_*.sh tests/integration/*.sh; do
    case "$t" in
    */lib.sh | */run.sh | */cluster_*) continue ;;
    esac
    case " ${shells[*]-} " in *" $t "*) continue ;; esac
    [ -x "$t" ] && shells+=("$t")
done
# Tests that start the full chain (up.sh --full) run after the others: in `make test` the
# full chain's binaries may still be building in the background (scripts/prefetch.sh) when this
# tier starts, and these wait for them.
late=" tests/integration/e2e_run_demo.sh "
for t in ${shells[@]+"${shells[@]}"}; do
    kt_only "integration/$(basename "$t")" || continue
    case "$late" in *" $t "*) continue ;; esac
    KT_ONLY='' kt_run_one "$(basename "$t" .sh)" "$t" "$D/env"
done
for b in ${itests[@]+"${itests[@]}"}; do
    kt_only "integration/$(basename "$b")" || continue
    case "$b" in
    build/plain/*) KT_ONLY='' kt_run_one "$(basename "$b")" "$b" "$D/env" ;;
    *) KT_ONLY='' kt_run_one "asan/$(basename "$b")" "$b" "$D/env" ;;
    esac
done
for t in $late; do
    [ -x "$t" ] || continue
    kt_only "integration/$(basename "$t")" || continue
    KT_ONLY='' kt_run_one "$(basename "$t" .sh)" "$t" "$D/env"
done
# Last: the harness tests restart the API server and start other clusters.
for t in tests/integration/cluster_*.sh; do
    [ -x "$t" ] || continue
    kt_only "integration/$(basename "$t")" || continue
    KT_ONLY='' kt_run_one "$(basename "$t" .sh)" "$t" "$D/env"
done

if [ "$fail" -ne 0 ]; then
    . tests/cluster/lib.sh
    kt_print_logs "$D" 2>&1
fi
echo "integration wall time: $(kt_secs "$t0")"
kt_finish
