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

ns=$(kt_ns crd-cases) || {
    bad crd-cases "cannot create a namespace"
    kt_finish
}

# crd_case DIR - one case; prints its result.
crd_case() {
    local c=$1 name kind objname path want sub f
    name=crd/$(basename "$c")
    kind=$(it_kind "$c/input.yaml")
    objname=$(it_name "$c/input.yaml")
    path=$(it_path "$kind" "$ns") || {
        bad "$name" "unknown kind $kind"
        return
    }
    it_api POST "$path" "$c/input.yaml"
    if [ -f "$c/patch.json" ]; then
        if [ "$IT_CODE" != 201 ]; then
            bad "$name" "create before the patch answered $IT_CODE: $(jq -r .message "$T/body" 2>/dev/null)"
            return
        fi
        sub=""
        [ -f "$c/subresource" ] && sub=/$(cat "$c/subresource")
        it_api PATCH "$path/$objname$sub" "$c/patch.json" application/merge-patch+json
    fi
    want=$(cat "$c/expected.code")
    if [ "$IT_CODE" != "$want" ]; then
        bad "$name" "HTTP $IT_CODE, want $want: $(jq -r .message "$T/body" 2>/dev/null)"
    elif [ "$want" -lt 400 ]; then
        ok "$name"
    else
        jq -j .message "$T/body" >"$T/message"
        jq -r '.details.causes // [] | .[] | [.reason, .field, .message] | @tsv' "$T/body" >"$T/causes"
        for f in message causes; do
            if [ ! -f "$c/expected.$f" ] && [ "${KT_CAPTURE:-}" = 1 ]; then
                cp "$T/$f" "$c/expected.$f"
                echo "captured $c/expected.$f" >&2
            fi
        done
        if ! cmp -s "$T/message" "$c/expected.message"; then
            bad "$name" "message differs
    got:  $(cat "$T/message")
    want: $(cat "$c/expected.message" 2>/dev/null)"
        elif ! diff -u "$c/expected.causes" "$T/causes" >"$T/diff" 2>&1; then
            bad "$name" "causes differ:
$(sed 's/^/    /' "$T/diff")"
        else
            ok "$name"
        fi
    fi
    it_api DELETE "$path/$objname"
}

# shellcheck disable=SC2154 # it_dir: set by tests/integration/lib.sh, sourced first
for c in "$it_dir"/crd/*/; do
    crd_case "${c%/}"
done
kt_finish
