#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/compat/run.sh - `make compat`: kt against each supported Kubernetes release
# (docs/compatibility.md "Kubernetes versions"). Not part of `make test`.
#
# For each release of COMPAT_VERSIONS (default: the newest patch of 1.34-1.37 the module proxy
# serves) with KT_K8S_VERSION set to it: builds its control plane (scripts/cluster/build.sh --chain,
# cached per release outside the repo; the wrapper module is scripts/cluster/modules/k8s-X.Y/, the default
# release's is scripts/cluster/modules/k8s/), checks that each Kubernetes binary reports that release, then
# runs the tiers whose results depend on the API server:
#   integration (tests/integration/run.sh COMPAT_IT): CRD install and the schema/CEL verdicts
#     (crd_*), kt-webhook registered and answering (webhook_*, itest_webhook_store), the
#     reconciler on the API server (reconciler_test) and the C client's calls (itest_kube*);
#     the C tests once, without the ASan+UBSan rerun (KT_ITEST_ASAN=0)
#   e2e (tests/e2e/run.sh COMPAT_E2E): the full chain on KWOK nodes, every shipped runtime's
#     TrainJob to Complete (runtimes), gang scheduling (coscheduling) and the Kubeflow SDK (sdk)
# JobSet, KWOK, scheduler-plugins and etcd stay at their pinned builds (scripts/cluster/versions.sh).
# Prints one line per release (`compat X.Y.Z: ... PASSED|FAILED` with each tier's counts and wall
# times) and the final `N passed, N failed` over every check. Logs: build/compat/X.Y.Z-*.log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
. tests/lib.sh
VERSIONS=${COMPAT_VERSIONS:-1.34.4 1.35.4 1.36.3 1.37.2}
IT_WORDS=${COMPAT_IT:-crd_ webhook_ reconciler_test itest_kube}
E2E_WORDS=${COMPAT_E2E:-runtimes coscheduling sdk}
L=build/compat
mkdir -p "$L"
t_all=$SECONDS

# tier NAME LOG CMD... - run one tier into LOG; add its counts (kt_count; a tier that exits
# non-zero with no failure counted is one failure); set $line_part.
tier() {
    local name=$1 log=$2 t=$SECONDS p f rc
    shift 2
    "$@" >"$log" 2>&1
    rc=$?
    read -r p f < <(kt_count "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "FAIL $v-$name: exit status $rc without a failed check: $(tail -3 "$log" | tr '\n' ' ')"
    fi
    grep '^FAIL ' "$log" | sed "s/^FAIL /FAIL $v: /"
    pass=$((pass + p))
    fail=$((fail + f))
    vfail=$((vfail + f))
    line_part="$name $p passed, $f failed ($((SECONDS - t))s)"
}

if ! make -s all >"$L/make.log" 2>&1; then
    bad make-all "$(tail -5 "$L/make.log")"
    kt_finish
fi

# The knob's negative control: a release without a pinned wrapper is refused by name before
# anything is built (no silent fallback to the default release).
out=$(KT_K8S_VERSION=1.33.99 scripts/cluster/build.sh 2>&1)
rc=$?
d=$(KT_K8S_VERSION=1.33.99 bash -c '. scripts/cluster/versions.sh && kt_cluster_bindir')
if [ "$rc" -ne 0 ] && [ ! -e "$d" ] &&
    [ "$(grep -c 'no wrapper module pins k8s.io/kubernetes v1.33.99' <<<"$out")" -eq 1 ]; then
    ok unpinned-release-refused
else
    bad unpinned-release-refused "exit $rc, cache dir $d $([ -e "$d" ] || echo not) made: $out"
fi

results=()
for v in $VERSIONS; do
    export KT_K8S_VERSION=$v
    vfail=0
    t=$SECONDS
    if ! nice -n 10 scripts/cluster/build.sh --chain >"$L/$v-build.log" 2>&1; then
        bad "$v-build" "$(tail -5 "$L/$v-build.log" | tr '\n' ' ')"
        results+=("compat $v: build failed ($((SECONDS - t))s, $L/$v-build.log): FAILED")
        echo "${results[-1]}"
        continue
    fi
    build="build $((SECONDS - t))s"
    bin=$(tail -1 "$L/$v-build.log")
    # Each Kubernetes binary is the release asked for (the version stamped at build time).
    for b in kube-apiserver kube-controller-manager kube-scheduler; do
        got=$("$bin/$b" --version 2>&1)
        if [ "$got" = "Kubernetes v$v" ]; then ok "$v-$b-version"; else
            bad "$v-$b-version" "$got"
            vfail=$((vfail + 1))
        fi
    done
    got=$("$bin/kubectl" version --client -o json 2>&1 | jq -r .clientVersion.gitVersion 2>&1)
    if [ "$got" = "v$v" ]; then ok "$v-kubectl-version"; else
        bad "$v-kubectl-version" "$got"
        vfail=$((vfail + 1))
    fi
    # shellcheck disable=SC2086 # word lists
    tier integration "$L/$v-integration.log" env KT_ITEST_ASAN=0 tests/integration/run.sh $IT_WORDS
    it=$line_part
    # shellcheck disable=SC2086
    tier e2e "$L/$v-e2e.log" tests/e2e/run.sh $E2E_WORDS
    e2e=$line_part
    verdict=PASSED
    [ "$vfail" -eq 0 ] || verdict=FAILED
    results+=("compat $v: $build; $it; $e2e; total $((SECONDS - t))s: $verdict")
    echo "${results[-1]}"
done
unset KT_K8S_VERSION

echo "== compat summary ($(date -u +%Y-%m-%d), $((SECONDS - t_all))s)"
printf '%s\n' "${results[@]}" | tee "$L/summary.txt"
kt_finish
