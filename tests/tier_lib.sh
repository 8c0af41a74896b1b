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
sdk_python() {
    local v="${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/sdk/kubeflow-$KT_SDK_VERSION"
    if [ ! -x "$v/bin/python" ] || ! "$v/bin/python" -c 'import kubeflow.trainer' 2>/dev/null; then
        rm -rf "$v"
        { python3 -m venv "$v" && "$v/bin/pip" install -q "kubeflow==$KT_SDK_VERSION"; } >"$T/pip.log" 2>&1 ||
            return 1
    fi
    echo "$v/bin/python"
}
