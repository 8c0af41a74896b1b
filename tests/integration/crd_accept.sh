#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_accept.sh ENV_FILE - valid objects are accepted as they are: the shipped
# runtimes of deploy/runtimes/ (kubectl apply --server-side, strict field validation, twice) and
# the upstream-shaped objects of tests/integration/accept/ (kubectl create, strict field
# validation). Each object is read back: nothing may be pruned or changed (defaults may be added).
. "$(dirname "$0")/lib.sh"

ns=$(kt_ns crd-accept) || {
    bad crd-accept "cannot create a namespace"
    kt_finish
}

# check_stored NAME FILE KIND OBJ NSARGS... - compare FILE with what the server stored.
check_stored() {
    local name=$1 file=$2 kind=$3 obj=$4
    shift 4
    yq 'del(.metadata)' "$file" >"$T/sent.json"
    if ! kc "$@" get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o json >"$T/stored.json" 2>"$T/err"; then
        bad "$name" "read back: $(cat "$T/err")"
        return
    fi
    it_not_pruned "$name" "$T/sent.json" "$T/stored.json"
}

# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
for f in "$it_root"/deploy/runtimes/*.yaml; do
    [ -f "$f" ] || continue
    kind=$(it_kind "$f")
    [ "$kind" = Kustomization ] && continue
    obj=$(it_name "$f")
    name=shipped/$(basename "$f" .yaml)
    if ! kc apply --server-side --validate=strict -f "$f" >"$T/out" 2>&1; then
        bad "$name" "apply: $(cat "$T/out")"
        continue
    fi
    check_stored "$name" "$f" "$kind" "$obj"
    # Applying the same file again is a no-op for the object (no new generation).
    gen=$(kc get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o jsonpath='{.metadata.generation}')
    kc apply --server-side --validate=strict -f "$f" >/dev/null 2>&1
    gen2=$(kc get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o jsonpath='{.metadata.generation}')
    if [ "$gen" = "$gen2" ]; then
        ok "$name-reapply"
    else
        bad "$name-reapply" "generation $gen -> $gen2"
    fi
done

# Runtimes first (TrainJobs do not need them at the API level, but keep the natural order).
# shellcheck disable=SC2154 # it_dir: set by tests/integration/lib.sh, sourced first
for f in $(grep -l 'kind: .*TrainingRuntime$' "$it_dir"/accept/*.yaml) $(grep -L 'kind: .*TrainingRuntime$' "$it_dir"/accept/*.yaml); do
    kind=$(it_kind "$f")
    obj=$(it_name "$f")
    name=accept/$(basename "$f" .yaml)
    nsargs=(-n "$ns")
    [ "$kind" = ClusterTrainingRuntime ] && nsargs=()
    if ! kc ${nsargs[@]+"${nsargs[@]}"} create --validate=strict -f "$f" >"$T/out" 2>&1; then
        bad "$name" "create: $(cat "$T/out")"
        continue
    fi
    check_stored "$name" "$f" "$kind" "$obj" ${nsargs[@]+"${nsargs[@]}"}
done

# Strict field validation is what would catch a field our CRD lacks: prove it is on.
printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: unknown-field\nspec:\n  runtimeRef:\n    name: x\n  noSuchField: 1\n' >"$T/bad.yaml"
if kc -n "$ns" create --validate=strict -f "$T/bad.yaml" >"$T/out" 2>&1; then
    bad strict-unknown-field "an unknown field was accepted"
elif grep -q 'unknown field "spec.noSuchField"' "$T/out"; then
    ok strict-unknown-field
else
    bad strict-unknown-field "unexpected error: $(cat "$T/out")"
fi
kc delete clustertrainingruntime accept-torch-volcano --ignore-not-found >/dev/null 2>&1
# Leave the cluster as we found it: later tests dry-run objects with the same names.
for f in "$it_root"/deploy/runtimes/*.yaml $(grep -l 'kind: ClusterTrainingRuntime$' "$it_dir"/accept/*.yaml); do
    [ "$(it_kind "$f")" = ClusterTrainingRuntime ] || continue
    kc delete clustertrainingruntime "$(it_name "$f")" --ignore-not-found >/dev/null 2>&1
done
kt_finish
