#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_defaults.sh ENV_FILE - every CRD default is applied by the real API
# server: each tests/integration/defaults/<case>/input.yaml is created, read back as JSON, and
# its .spec compared with expected.json (key order ignored). KT_CAPTURE=1 writes a missing
# expected.json from the server (review it against docs/internals/upstream.md#api-types before committing).
. "$(dirname "$0")/lib.sh"

ns=$(kt_ns crd-defaults) || {
    bad crd-defaults "cannot create a namespace"
    kt_finish
}
# shellcheck disable=SC2154 # it_dir: set by tests/integration/lib.sh, sourced first
for c in "$it_dir"/defaults/*/; do
    c=${c%/}
    name=defaults/$(basename "$c")
    kind=$(it_kind "$c/input.yaml")
    obj=$(it_name "$c/input.yaml")
    path=$(it_path "$kind" "$ns")
    it_api POST "$path" "$c/input.yaml"
    if [ "$IT_CODE" != 201 ]; then
        bad "$name" "create answered $IT_CODE: $(jq -r .message "$T/body")"
        continue
    fi
    # Read back with kubectl, as a user would see it.
    if [ "$kind" = ClusterTrainingRuntime ]; then
        kc get "clustertrainingruntime/$obj" -o json >"$T/got.json"
    else
        kc -n "$ns" get "$(echo "$kind" | tr 'A-Z' 'a-z')/$obj" -o json >"$T/got.json"
    fi
    jq .spec "$T/got.json" >"$T/spec.json"
    if [ ! -f "$c/expected.json" ] && [ "${KT_CAPTURE:-}" = 1 ]; then
        cp "$T/spec.json" "$c/expected.json"
        echo "captured $c/expected.json" >&2
    fi
    it_json_eq "$name" "$c/expected.json" "$T/spec.json"
    it_api DELETE "$path/$obj"
done
kt_finish
