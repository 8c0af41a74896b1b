#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_accept.sh ENV_FILE - valid objects are accepted as they are: the shipped
# runtimes of deploy/runtimes/ (kubectl apply --server-side, strict field validation, twice) and
# the upstream-shaped objects of tests/integration/accept/ (kubectl create, strict field
# validation). Each object is read back: nothing may be pruned or changed (defaults may be added).
. "$(dirname "$0")/lib.sh"

ns=$(it_ns crd-accept) || {
    it_fail crd-accept "cannot create a namespace"
    it_finish
}

# check_stored NAME FILE KIND OBJ NSARGS... - compare FILE with what the server stored.
check_stored() {
    local name=$1 file=$2 kind=$3 obj=$4
    shift 4
    yq 'del(.metadata)' "$file" >"$IT_TMP/sent.json"
    if ! kc "$@" get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o json >"$IT_TMP/stored.json" 2>"$IT_TMP/err"; then
        it_fail "$name" "read back: $(cat "$IT_TMP/err")"
        return
    fi
    it_not_pruned "$name" "$IT_TMP/sent.json" "$IT_TMP/stored.json"
}

# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
for f in "$it_root"/deploy/runtimes/*.yaml; do
    [ -f "$f" ] || continue
    kind=$(it_kind "$f")
    [ "$kind" = Kustomization ] && continue
    obj=$(it_name "$f")
    name=shipped/$(basename "$f" .yaml)
    if ! kc apply --server-side --validate=strict -f "$f" >"$IT_TMP/out" 2>&1; then
        it_fail "$name" "apply: $(cat "$IT_TMP/out")"
        continue
    fi
    check_stored "$name" "$f" "$kind" "$obj"
    # Applying the same file again is a no-op for the object (no new generation).
    gen=$(kc get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o jsonpath='{.metadata.generation}')
    kc apply --server-side --validate=strict -f "$f" >/dev/null 2>&1
    gen2=$(kc get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o jsonpath='{.metadata.generation}')
    if [ "$gen" = "$gen2" ]; then
        it_ok "$name-reapply"
    else
        it_fail "$name-reapply" "generation $gen -> $gen2"
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
    if ! kc ${nsargs[@]+"${nsargs[@]}"} create --validate=strict -f "$f" >"$IT_TMP/out" 2>&1; then
        it_fail "$name" "create: $(cat "$IT_TMP/out")"
        continue
    fi
    check_stored "$name" "$f" "$kind" "$obj" ${nsargs[@]+"${nsargs[@]}"}
done

# Strict field validation is what would catch a field our CRD lacks: prove it is on.
printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: unknown-field\nspec:\n  runtimeRef:\n    name: x\n  noSuchField: 1\n' >"$IT_TMP/bad.yaml"
if kc -n "$ns" create --validate=strict -f "$IT_TMP/bad.yaml" >"$IT_TMP/out" 2>&1; then
    it_fail strict-unknown-field "an unknown field was accepted"
elif grep -q 'unknown field "spec.noSuchField"' "$IT_TMP/out"; then
    it_ok strict-unknown-field
else
    it_fail strict-unknown-field "unexpected error: $(cat "$IT_TMP/out")"
fi
kc delete clustertrainingruntime accept-torch-volcano --ignore-not-found >/dev/null 2>&1
# Leave the cluster as we found it: later tests dry-run objects with the same names.
for f in "$it_root"/deploy/runtimes/*.yaml $(grep -l 'kind: ClusterTrainingRuntime$' "$it_dir"/accept/*.yaml); do
    [ "$(it_kind "$f")" = ClusterTrainingRuntime ] || continue
    kc delete clustertrainingruntime "$(it_name "$f")" --ignore-not-found >/dev/null 2>&1
done
it_finish
