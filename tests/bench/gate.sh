#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/gate.sh [BUILD_DIR] - the scale gate of `make test` (docs/benchmarks.md#scale-gate):
# one kt run of tests/bench/scale.sh on the simulated chain, in the scenario that
# tests/bench/gate/limits.json names, checked against the limits calibrated there, Kueue's way:
# wall time (the drain), create -> JobSet p99, controller RSS (steady and peak) and CPU within the
# mean of the calibration runs plus 20%; every request per TrainJob (by verb and resource) within
# the largest of those runs plus 0.05, except where a hand-set override says why; and every
# TrainJob Complete with exactly one JobSet. Prints ok/FAIL per figure and `N passed, N failed`.
#
#   tests/bench/gate.sh --calibrate K [--loosen WHY] [BUILD_DIR]
# runs the scenario K (>= 5) times and rewrites limits.json from those runs (kept in it, with the
# commit and the load average). A limit that would go up is refused unless --loosen says why; the
# reason stays in the file's notes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
K=0 WHY=''
while [ $# -gt 0 ]; do
    case $1 in
    --calibrate) K=$2 && shift 2 ;;
    --loosen) WHY=$2 && shift 2 ;;
    *) break ;;
    esac
done
b=${1:-build/plain}
L=tests/bench/gate/limits.json
[ -f "$L" ] || { bad scale-gate/limits "$L is missing" && kt_finish; }
# The scenario: fixed in limits.json, so a run and its limits always match.
sc() { jq -r ".scenario.$1" "$L"; }
run() { # OUT - one run of the scenario, results in OUT/N-kt.json
    SCALE_CHAIN=sim SIDES=kt N=$(sc n) SCALE_RATE=$(sc rate) SCALE_CONNS=$(sc conns) \
        SCALE_NAMESPACES=$(sc namespaces) SCALE_RUN_MS=$(sc run_ms) SCALE_SIM_STEP_MS=$(sc step_ms) \
        SCALE_SIM_SHARDS=$(sc shards) SCALE_OUT=$1 tests/bench/scale.sh "$b" >"$1.log" 2>&1
}
if [ "$K" -gt 0 ]; then
    res=() loads=''
    for i in $(seq "$K"); do
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        loads+="${loads:+;}$load"
        echo "scale-gate: calibration run $i of $K (load average $load)"
        run "$T/cal-$i" || { tail -20 "$T/cal-$i.log" && exit 1; }
        res+=("$T/cal-$i/$(sc n)-kt.json")
    done
    python3 tests/bench/scale.py calibrate --limits "$L" --loosen "$WHY" --commit "$(git rev-parse --short HEAD)" \
        --load "$loads" "${res[@]}"
    exit
fi
echo "scale-gate: N=$(sc n) kt on the simulated chain (load average $(cut -d' ' -f1-3 /proc/loadavg))"
# what else uses the CPU just before and after the run (a 1 s sample each; information for a
# reader of a CPU figure, not a check)
echo "scale-gate: other processes on the CPU before the run: $(python3 tests/bench/scale.py busy)"
if run "$T/run"; then
    echo "scale-gate: other processes on the CPU after the run: $(python3 tests/bench/scale.py busy)"
    python3 tests/bench/scale.py gate "$L" "$T/run/$(sc n)-kt.json" >"$T/gate.out" 2>"$T/gate.err" ||
        bad scale-gate/checker "$(tail -c 1500 "$T/gate.err")"
    kt_relay "$T/gate.out" scale-gate/checker
    cat "$T/gate.err"
else
    bad scale-gate/run "tests/bench/scale.sh failed: $(tail -c 1500 "$T/run.log")"
fi
kt_finish
