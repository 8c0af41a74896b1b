# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/tier_lib.sh - shared by the shell tiers (sourced, not run): a scratch folder $T removed
# on exit, and the checks that count into the final "N passed, N failed" line.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
check() { # check NAME CMD... - CMD succeeds
    local name=$1
    shift
    if "$@" >"$T/out" 2>&1; then ok "$name"; else bad "$name" "$(head -c 600 "$T/out")"; fi
}
exits() { # exits CODE CMD... - CMD exits with CODE
    local want=$1
    shift
    "$@" >/dev/null 2>&1
    [ $? -eq "$want" ]
}
tier_finish() { # print the closing line; the tier's exit status
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}

# The Kubeflow SDK (PyPI `kubeflow`, pinned) in a venv in the cache outside the repo, one per
# version; used by the e2e and real-node tiers.
KT_SDK_VERSION=0.5.0
# sdk_python - print the venv's python, making the venv when missing (pip's log: $T/pip.log).
# One maker at a time (flock on VENV.lock: tests/prefetch.sh may be making it in the background).
sdk_python() {
    local v="${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/sdk/kubeflow-$KT_SDK_VERSION" rc=0
    mkdir -p "$(dirname "$v")"
    exec 6>"$v.lock"
    flock -w 1800 6 || rc=1
    if [ $rc = 0 ] && { [ ! -x "$v/bin/python" ] || ! "$v/bin/python" -c 'import kubeflow.trainer' 2>/dev/null; }; then
        rm -rf "$v"
        { python3 -m venv "$v" && "$v/bin/pip" install -q "kubeflow==$KT_SDK_VERSION"; } >"$T/pip.log" 2>&1 ||
            rc=1
    fi
    exec 6>&-
    [ $rc = 0 ] && echo "$v/bin/python"
}

# ---- helpers of the tiers on a cluster (e2e, real node): they call kc (kubectl as admin,
# defined by the tier) and read WAIT (seconds) and CASES (the words given on the command line)

# wanted NAME - NAME contains one of CASES (or CASES is empty).
wanted() {
    local w
    [ ${#CASES[@]} -gt 0 ] || return 0
    for w in "${CASES[@]}"; do
        case "$1" in *"$w"*) return 0 ;; esac
    done
    return 1
}

# ns NAME - a fresh namespace.
ns() {
    kc create namespace "$1" >/dev/null 2>&1 || kc get namespace "$1" >/dev/null
}

# tj_state NS NAME - the TrainJob's True conditions, comma-separated.
tj_state() {
    kc get trainjob "$2" -n "$1" -o json 2>/dev/null |
        jq -r '[.status.conditions[]? | select(.status == "True") | .type] | join(",")'
}

# tj_cond NS NAME TYPE - "reason: message" of the TrainJob's condition TYPE.
tj_cond() {
    kc get trainjob "$2" -n "$1" -o json 2>/dev/null |
        jq -r --arg t "$3" '.status.conditions[]? | select(.type == $t) | "\(.reason): \(.message)"'
}

# kq FILTER GET_ARGS... - true when `kubectl get GET_ARGS -o json` satisfies the jq FILTER
# (a list answers with .items). The predicate for wait_for.
kq() {
    local f=$1
    shift
    kc get "$@" -o json 2>/dev/null | jq -e "$f" >/dev/null
}

# wait_for DESC CMD... - bounded poll (WAIT seconds) until CMD (a command or function) succeeds.
wait_for() {
    local desc=$1 deadline=$((SECONDS + WAIT))
    shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || {
            echo "timed out after ${WAIT}s waiting for: $desc"
            return 1
        }
        sleep 0.5
    done
}
