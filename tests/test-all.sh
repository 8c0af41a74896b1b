#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test-all.sh - what `make test` runs (docs/development.md#tests): a WERROR build, the
# no-cluster tiers plain and under ASan+UBSan, TSan for threaded tests, lint, the cluster's Go
# binaries (cached), the integration tier on the real control plane, the e2e tier on the full
# chain (TrainJobs really run on KWOK nodes; the Kubeflow SDK), the Helm chart and the OCI image
# tiers, and each fuzz target briefly.
# Every step prints its wall time; the last line is the total "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh # kt_count, kt_cleanup, kt_finish
jobs=$(nproc)
# Every make below and every make a tier script calls builds with -Werror: the Makefile
# recompiles objects whose flags changed ($(B)/.build-flags), so one setting for the whole run
# keeps build/plain from being compiled twice.
export WERROR=1
step() { # name, command... ; adds the step's "N passed, N failed" to the total
    local name=$1 out rc p f t0 t1
    shift
    echo "== $name"
    out=$(mktemp)
    t0=$(date +%s)
    "$@" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    t1=$(date +%s)
    read -r p f < <(kt_count "$out")
    [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
    [ $rc -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && p=1
    echo "== $name: $((t1 - t0))s, rc=$rc"
    if [ "$f" -ne 0 ]; then # the step's FAIL lines (or its exit status), for the summary
        grep -E '^(FAIL|not ok) ' "$out" | cut -c1-300 | grep . || echo "exit status $rc"
    fi | sed "s|^|  [${name%% (*}] |" >>"$failures"
    pass=$((pass + p))
    fail=$((fail + f))
    rm -f "$out"
}
# The cached builds of the later tiers (cluster binaries, upstream's manager, helm, Prometheus,
# the SDK venv, the real node's images) start now in the background (scripts/prefetch.sh, low
# priority, the tiers' own builders and locks): cold, they overlap the tiers before the ones
# that need them; warm, it is a few file checks. Its timings are printed at the end.
mkdir -p build
# every failure's line, printed again just before the total: a reader of a long log (or of its
# head and tail only) sees what failed without searching for it
failures=$T/failures
scripts/prefetch.sh build/prefetch >build/prefetch.log 2>&1 &
prefetch_pid=$!
kt_cleanup kill "$prefetch_pid"
step "build (WERROR=1)" make -s -j"$jobs" WERROR=1 all
step "tiers (plain)" make -s -j"$jobs" WERROR=1 unit
step "tiers (ASan+UBSan)" make -s -j"$jobs" WERROR=1 SANITIZER=address,undefined unit
if [ -n "$(ls tests/unit/test_*thread* 2>/dev/null)" ]; then
    # T= : the shell tiers run under TSan too (TESTS alone would pick only the unit binaries).
    step "threaded (TSan)" make -s -j"$jobs" WERROR=1 SANITIZER=thread unit T= \
        TESTS="$(cd tests/unit && ls test_*thread*.c | sed 's/\.c$//' | tr '\n' ' ')"
fi
step "lint" make -s lint
# ktctl validate's -o junit/sarif against the JUnit XSD and the SARIF 2.1.0 schema, and the
# pre-commit hooks on a scratch repository (PyPI tools in a venv cached outside the repo). The
# from-source build in pre-commit's cache is `make precommit`'s (about a minute), not here.
step "ktctl CI formats (JUnit XSD, SARIF schema)" tests/validate/formats.sh build/plain
step "pre-commit hooks (PyPI pre-commit, scratch repository)" tests/validate/precommit.sh build/plain
# README.md and docs/: relative links and anchors, the binaries' flags against the docs (both
# ways), --help exiting 0, the `sh runnable` blocks run; each check with its negative test.
step "docs (links, flags, runnable blocks)" tests/docs/run.sh
# The cluster's binaries, built once from Go modules and cached per version outside the repo
# (cold on a fresh machine: the slow part of the budget; warm: a few file checks).
# Only what the integration tier's plane needs (etcd, kube-apiserver, kubectl): the rest of the
# chain goes on building in the background, and the tiers that need it wait for it.
step "cluster binaries (Go builds, cached)" scripts/cluster/build.sh
if [ -x tests/integration/run.sh ]; then
    step "integration (real kube-apiserver + etcd)" tests/integration/run.sh
fi
step "parity oracle (upstream trainer v2.3.0 built from its Go module vs kt, two real planes)" tests/parity/oracle.sh build/plain
[ -x tests/reliability/run.sh ] && step "reliability (drills on a real kube-apiserver + etcd)" tests/reliability/run.sh
if [ -x tests/helm/run.sh ]; then
    step "helm chart (helm from helm.sh/helm/v3, real kube-apiserver)" tests/helm/run.sh
fi
if [ -x tests/image/run.sh ]; then
    step "image (make image: mmdebstrap + umoci; the binaries run in its rootfs)" tests/image/run.sh
fi
if [ -x tests/e2e/run.sh ]; then
    step "e2e (full chain: JobSet, controller-manager, scheduler, KWOK nodes; Kubeflow SDK; Prometheus)" tests/e2e/run.sh
fi
step "scale gate (kt, 1,000 TrainJobs on the simulated chain: API server + etcd + KWOK Stages; calibrated limits)" tests/bench/gate.sh build/plain
if [ -x tests/node/run.sh ]; then
    step "real node (kubelet, containerd, runc, CNI, kube-proxy, CoreDNS; kt by Helm as Pods; training that trains)" tests/node/run.sh
fi
if [ -n "$(ls tests/fuzz/fuzz_*.c 2>/dev/null)" ]; then
    step "fuzz" make -s fuzz
fi
wait "$prefetch_pid"
echo "== background builds (scripts/prefetch.sh; logs in build/prefetch/)"
cat build/prefetch.log
if [ -s "$failures" ]; then
    echo "== failures ($(wc -l <"$failures"), by step)"
    cat "$failures"
fi
echo "== total"
kt_finish
