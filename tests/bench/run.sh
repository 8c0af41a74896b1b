#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/run.sh BUILD_DIR - run the benchmarks; prints "bench: NAME: VALUE UNIT" lines.
#
# Asserts nothing. The render benchmark is in-process (tests/tools/bench_render.c, built
# into BUILD_DIR/tools/) on the torch golden case, pinned to one core when taskset exists.
# Other benchmarks add themselves as tests/bench/bench_*.sh BUILD_DIR.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
b=${1:-build/plain}
make -s "$b/tools/bench_render" >/dev/null || exit 1
pin=()
if command -v taskset >/dev/null; then
    pin=(taskset -c 0)
fi
"${pin[@]}" "$b/tools/bench_render" tests/golden/torch-cpu-fractional "${BENCH_SECONDS:-3}"
for s in tests/bench/bench_*.sh; do
    [ -x "$s" ] && "$s" "$b"
done
exit 0
