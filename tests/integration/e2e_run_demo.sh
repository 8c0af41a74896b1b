#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/e2e_run_demo.sh ENV_FILE - `make run`'s script (scripts/demo/run.sh) with
# stdin closed, in a temporary KT_RUN_DIR, on KWOK nodes (KT_RUN_NODE=kwok; the real-node tier
# runs it on the real node): it starts its own full chain (up.sh --full), both
# daemons and the example, which runs for real (pods on KWOK nodes, Succeeded, TrainJob
# Complete, no status written by the script), prints every step and "It works.", exits 0, and
# leaves no process behind.
# (The shared cluster of ENV_FILE is not used.)
. "$(dirname "$0")/lib.sh"

D="$T/run"
out="$T/run.out"
# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
KT_RUN_NODE=kwok KT_RUN_DIR=$D "$it_root/scripts/demo/run.sh" </dev/null >"$out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^It works\.' "$out"; then
    ok "run-demo-stdin-closed ($(grep -o 'Demo took [0-9.]*s' "$out"))"
else
    bad run-demo-stdin-closed "exit $rc: $(tail -30 "$out")"
fi
steps=$(grep -c '^==> \[[0-9]*/10\]' "$out")
if [ "$steps" -eq 10 ]; then ok run-demo-progress-steps; else bad run-demo-progress-steps "$steps of 10 steps printed"; fi
if grep -qi 'writes JobSet status\|--subresource=status' "$out"; then
    bad run-demo-writes-no-status "the demo still writes status"
else
    ok run-demo-writes-no-status
fi
for want in ': Running on kwok-node-' ': Succeeded on kwok-node-' 'nodes (simulated by KWOK)' \
    'export KUBECONFIG=' \
    'denied the request' 'Complete=True reason=AllJobsCompleted' 'stdin is not a terminal'; do
    if grep -qF "$want" "$out"; then ok "run-demo-says: $want"; else bad "run-demo-says: $want" "missing"; fi
done
left=""
for v in KT_APISERVER_PID KT_ETCD_PID KT_KCM_PID KT_SCHEDULER_PID KT_SCHEDPLUGINS_PID KT_JOBSET_PID KT_KWOK_PID; do
    pid=$(. "$D/env" 2>/dev/null && eval "echo \${$v:-}")
    [ -n "$pid" ] && ! it_dead "$pid" && left="$left $v=$pid"
done
for c in /proc/[0-9]*/cmdline; do # a daemon of the demo still running (pgrep may be absent)
    if tr '\0' ' ' <"$c" 2>/dev/null | grep -cF -- "--portfile $D/" >/dev/null; then
        p=${c#/proc/}
        left="$left daemon=${p%/cmdline}"
    fi
done 2>/dev/null
if [ -z "$left" ]; then ok run-demo-cleans-up; else bad run-demo-cleans-up "still running:$left"; fi
kt_finish
