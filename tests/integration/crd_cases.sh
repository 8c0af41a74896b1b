#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_cases.sh ENV_FILE - the CRD schema/CEL contract, one directory per case
# under tests/integration/crd/ (the pinned messages are what `ktctl validate` must reproduce):
#   input.yaml        the object, created with POST (application/yaml) in a fresh namespace
#   patch.json        optional: a JSON merge patch applied after input.yaml was created (201)
#   expected.code     the HTTP status of the last request (201 create, 200 patch, 422 invalid)
#   expected.message  for a 4xx, the exact Status .message the API server returns
#   expected.causes   for a 4xx, its .details.causes, one per line: REASON<TAB>FIELD<TAB>MESSAGE
#                     (jq @tsv escaping: backslash, tab, newline as \\, \t, \n)
#                     (one element of the aggregate each, as `ktctl validate` prints them)
#   subresource       optional: "status" sends the patch to the status subresource
#   spec              the upstream rule the case pins (a heading of docs/internals/upstream.md)
# KT_CAPTURE=1 writes missing expected.* files from the server's answer (review them!).
. "$(dirname "$0")/lib.sh"

ns=$(it_ns crd-cases) || {
    it_fail crd-cases "cannot create a namespace"
    it_finish
}

# run_case DIR - one case; prints its result.
run_case() {
    local c=$1 name kind objname path want sub f
    name=crd/$(basename "$c")
    kind=$(it_kind "$c/input.yaml")
    objname=$(it_name "$c/input.yaml")
    path=$(it_path "$kind" "$ns") || {
        it_fail "$name" "unknown kind $kind"
        return
    }
    it_api POST "$path" "$c/input.yaml"
    if [ -f "$c/patch.json" ]; then
        if [ "$IT_CODE" != 201 ]; then
            it_fail "$name" "create before the patch answered $IT_CODE: $(jq -r .message "$IT_TMP/body" 2>/dev/null)"
            return
        fi
        sub=""
        [ -f "$c/subresource" ] && sub=/$(cat "$c/subresource")
        it_api PATCH "$path/$objname$sub" "$c/patch.json" application/merge-patch+json
    fi
    want=$(cat "$c/expected.code")
    if [ "$IT_CODE" != "$want" ]; then
        it_fail "$name" "HTTP $IT_CODE, want $want: $(jq -r .message "$IT_TMP/body" 2>/dev/null)"
    elif [ "$want" -lt 400 ]; then
        it_ok "$name"
    else
        jq -j .message "$IT_TMP/body" >"$IT_TMP/message"
        jq -r '.details.causes // [] | .[] | [.reason, .field, .message] | @tsv' "$IT_TMP/body" >"$IT_TMP/causes"
        for f in message causes; do
            if [ ! -f "$c/expected.$f" ] && [ "${KT_CAPTURE:-}" = 1 ]; then
                cp "$IT_TMP/$f" "$c/expected.$f"
                echo "captured $c/expected.$f" >&2
            fi
        done
        if ! cmp -s "$IT_TMP/message" "$c/expected.message"; then
            it_fail "$name" "message differs
    got:  $(cat "$IT_TMP/message")
    want: $(cat "$c/expected.message" 2>/dev/null)"
        elif ! diff -u "$c/expected.causes" "$IT_TMP/causes" >"$IT_TMP/diff" 2>&1; then
            it_fail "$name" "causes differ:
$(sed 's/^/    /' "$IT_TMP/diff")"
        else
            it_ok "$name"
        fi
    fi
    it_api DELETE "$path/$objname"
}

# shellcheck disable=SC2154 # it_dir: set by tests/integration/lib.sh, sourced first
for c in "$it_dir"/crd/*/; do
    run_case "${c%/}"
done
it_finish
