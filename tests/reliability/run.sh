#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/run.sh [DRILL...] - the reliability tier (docs/development.md#the-reliability-tier): the drills of
# tests/reliability/*.sh on one real control plane (tests/cluster/up.sh: etcd +
# kube-apiserver), each run as `DRILL ENV_FILE` and printing `ok NAME` / `FAIL NAME: why`
# lines like the integration tests. Builds what the drills need (`make -s itests`: the
# binaries and tests/tools/*). Prints one line per check and a final `N passed, N failed`,
# dumps the control plane logs when something failed, and always stops the cluster (its folder
# is kept with KT_KEEP=1). DRILL... restricts the run to drills whose file name contains one of
# the words (or KT_ONLY=reliability/PATTERN); KT_STOP=1 stops at the first failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
t0=$(date +%s%N)
. tests/lib.sh # kt_run_one, kt_only, kt_secs, kt_finish, KT_KEEP
KT_ONLY="${KT_ONLY:-} $(kt_only_args reliability "$@")"
D=""
# plane_down - stop the control plane (its folder is in $T: kept with KT_KEEP=1).
plane_down() { [ -z "$D" ] || tests/cluster/down.sh "$D"; }
kt_cleanup plane_down
trap 'exit 130' INT TERM

if ! scripts/cluster/build.sh >/dev/null; then
    echo "reliability: scripts/cluster/build.sh failed"
    echo "0 passed, 1 failed"
    exit 1
fi
if ! make -s WERROR=1 itests >/dev/null; then
    echo "reliability: make itests failed"
    echo "0 passed, 1 failed"
    exit 1
fi
D=$T/cluster
mkdir -p "$D"
if ! tests/cluster/up.sh "$D" >/dev/null; then
    echo "reliability: tests/cluster/up.sh failed"
    echo "0 passed, 1 failed"
    exit 1
fi
for t in tests/reliability/*.sh; do
    case "$t" in */lib.sh | */run.sh) continue ;; esac
    [ -x "$t" ] || continue
    kt_only "reliability/$(basename "$t")" || continue
    KT_ONLY='' kt_run_one "$(basename "$t" .sh)" "$t" "$D/env"
done
# shellcheck disable=SC2154 # fail: the count of tests/lib.sh (kt_run_one)
if [ "$fail" -ne 0 ]; then
    . tests/cluster/lib.sh
    kt_print_logs "$D" 2>&1
fi
echo "reliability wall time: $(kt_secs "$t0")"
kt_finish
