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
# left_over DIR - what the demo in DIR started and still runs: a recorded PID that is alive and still the process the
# demo started (its output goes to a log in the demo's folder, so neither a PID the system has
# since given to another process nor one that has closed its files on its way out counts), or a
# daemon whose command line names the folder.
left_over() {
    local v pid c p d=$1
    for v in $(grep -oE '^KT_[A-Z0-9_]+_PID' "$d/env" 2>/dev/null); do # every component up.sh recorded
        pid=$(. "$d/env" 2>/dev/null && eval "echo \${$v:-}")
        [ -n "$pid" ] && ! kt_dead "$pid" || continue
        case "$(readlink "/proc/$pid/fd/1" 2>/dev/null)" in "$d"/*) echo "$v=$pid" ;; esac
    done
    for c in /proc/[0-9]*/cmdline; do # a daemon of the demo still running (pgrep may be absent)
        if tr '\0' ' ' <"$c" 2>/dev/null | grep -cF -- "--portfile $d/" >/dev/null; then
            p=${c#/proc/}
            echo "daemon=${p%/cmdline}"
        fi
    done 2>/dev/null
}
# down.sh has waited for each process it stopped; the grace covers one that is still in the
# kernel's exit path on a loaded machine (what is left after it is reported with its state)
nothing_left() { [ -z "$(left_over "$D")" ]; }
left=""
if ! kt_poll -m "the demo's processes to be gone" 10 nothing_left; then
    for l in $(left_over "$D"); do
        p=${l#*=}
        left="$left $l [$(grep -m1 '^State:' "/proc/$p/status" 2>/dev/null | tr -s '\t ' ' ')"
        left="$left wchan=$(cat "/proc/$p/wchan" 2>/dev/null) $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)]"
    done
    left="$left; down.log: $(tail -c 1500 "$D/down.log" 2>/dev/null)"
fi
if [ -z "$left" ]; then ok run-demo-cleans-up; else bad run-demo-cleans-up "still running:$left"; fi
# the check itself: a process recorded the same way and still running is found
mkdir "$T/decoy"
sleep 300 >"$T/decoy/decoy.log" 2>&1 &
printf 'KT_DECOY_PID=%s\n' "$!" >"$T/decoy/env"
check run-demo-cleans-up-finds-a-leftover [ "$(left_over "$T/decoy")" = "KT_DECOY_PID=$!" ]
kill "$!"
kt_finish
