#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/cluster/tier.sh [BUILD_DIR] - the no-cluster checks of the local cluster's scripts (a tier
# of `make unit`; needs no Go and no network: `go` is a stub on PATH that logs its calls).
#   kwok-stages-cached: with KWOK's module already in the module cache, up.sh --full's stage
#     lookup (kt_full_kwok_stages in full.sh) builds DIR/kwok-stages.yaml without running
#     `go mod download` (which asks the module proxy at every start);
#   kwok-stages-download: without it, `go mod download` is run once and its Dir is used.
#   jobsim-*: jobset_sim.py's steps, statuses and run times as kwok/jobset-stages.yaml has them
#     (tests/cluster/jobset_sim_check.py).
# Prints `ok NAME` / `FAIL NAME: why` and "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT" || exit 1
. tests/lib.sh
. scripts/cluster/versions.sh

# A module folder with the stage files kt_full_kwok_stages reads.
fake_module() { # DIR
    local f
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        pod/general/pod-create.yaml pod/general/pod-init-container-running.yaml \
        pod/general/pod-init-container-completed.yaml pod/general/pod-ready.yaml \
        pod/general/pod-delete.yaml; do
        mkdir -p "$(dirname "$1/kustomize/stage/$f")"
        printf 'kind: Stage\nmetadata: {name: %s}\nspec: {delay: {durationMilliseconds: 1000, jitterDurationMilliseconds: 5000}}\n' \
            "$(basename "$f" .yaml)" >"$1/kustomize/stage/$f"
    done
}
mkdir -p "$T/stub" "$T/cache" "$T/elsewhere"
cat >"$T/stub/go" <<EOF
#!/bin/sh
echo "go \$*" >>"$T/go.log"
case "\$1 \$2" in
"env GOMODCACHE") echo "$T/cache" ;;
"mod download") [ -d "$T/elsewhere/kwok" ] || exit 1
    printf '{\n\t"Path": "sigs.k8s.io/kwok",\n\t"Dir": "%s",\n\t"Sum": "h1:x"\n}\n' "$T/elsewhere/kwok" ;;
*) exit 1 ;;
esac
EOF
chmod +x "$T/stub/go"

stages() { # run kt_full_kwok_stages as up.sh --full does, with the stub go; DIR = $T/d
    rm -rf "$T/d" "$T/go.log"
    mkdir -p "$T/d"
    (
        PATH="$T/stub:$PATH"
        . tests/cluster/lib.sh
        . tests/cluster/full.sh
        D="$T/d" KT_POD_STEP_MS=7 kt_full_kwok_stages
    ) >"$T/stages.out" 2>&1
}

fake_module "$T/cache/sigs.k8s.io/kwok@$KWOK_VERSION"
if ! stages; then
    bad kwok-stages-cached "kt_full_kwok_stages failed: $(head -c 400 "$T/stages.out")"
elif grep -q 'mod download' "$T/go.log" 2>/dev/null; then
    bad kwok-stages-cached "go mod download ran although the module is in the module cache ($(tr '\n' ';' <"$T/go.log"))"
elif ! grep -q 'durationMilliseconds: 7' "$T/d/kwok-stages.yaml" || [ "$(grep -c 'name: pod-ready' "$T/d/kwok-stages.yaml")" != 1 ]; then
    bad kwok-stages-cached "DIR/kwok-stages.yaml lacks the rewritten stages: $(head -c 300 "$T/d/kwok-stages.yaml")"
else
    ok kwok-stages-cached
fi

rm -rf "$T/cache/sigs.k8s.io"
fake_module "$T/elsewhere/kwok"
if ! stages; then
    bad kwok-stages-download "kt_full_kwok_stages failed: $(head -c 400 "$T/stages.out")"
elif [ "$(grep -c 'mod download' "$T/go.log")" != 1 ]; then
    bad kwok-stages-download "want one go mod download, got: $(tr '\n' ';' <"$T/go.log")"
elif ! grep -q 'durationMilliseconds: 7' "$T/d/kwok-stages.yaml"; then
    bad kwok-stages-download "DIR/kwok-stages.yaml lacks the rewritten stages"
else
    ok kwok-stages-download
fi

python3 tests/cluster/jobset_sim_check.py >"$T/jobsim.out" 2>&1
while read -r word name why; do
    case $word in
    ok) ok "$name" ;;
    FAIL) bad "${name%:}" "$why" ;;
    *) bad jobsim-check "unexpected output: $word $name $why" ;;
    esac
done <"$T/jobsim.out"
[ -s "$T/jobsim.out" ] || bad jobsim-check "tests/cluster/jobset_sim_check.py printed nothing"

kt_finish
