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
