# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/lib.sh - the one test library, sourced by every tier, runner and test script
# (docs/internals/testing.md). tests/lib_kube.sh adds the Kubernetes fixture on top.
#
# Output, the one format: a line per check, `ok NAME` or `FAIL NAME: why`, and a closing
# `N passed, N failed` (kt_finish). A C unit test (tests/test.h) prints only the closing line.
# kt_count is the one parser of it.
#
# Options, the same for every tier (environment; tests/run.sh sets them from its arguments):
#   KT_ONLY="PAT..."  run only the tests whose TIER/NAME contains a PAT (shell globs allowed)
#   KT_STOP=1         stop at the first failure and keep the state (implies KT_KEEP=1)
#   KT_KEEP=1         keep the scratch folder ($T) and the tiers' cluster folders
#
# In a test script:
#   $T                    scratch folder, removed at exit unless KT_KEEP=1
#   ok NAME / bad NAME WHY / check NAME CMD... / exits CODE CMD...
#   kt_test NAME BODY     run BODY (eval'd in a subshell) as one test: ok when it succeeds, else
#                         FAIL with its output; skipped unless KT_ONLY selects $KT_TIER/NAME
#   kt_cleanup CMD...     run CMD at exit (last registered first), where the state is made
#   kt_on_fail CMD...     run CMD before the closing line when a test failed (logs to show)
#   kt_poll [-m WHAT] SECS CMD...  the one bounded poll (every 0.1 s); 1 and a line on stderr
#                         (naming WHAT) at timeout
#   kt_dead PID           PID has exited (or is a zombie)
#   kt_daemon NAME BIN FLAG...   start a kt daemon, wait until it is ready (see below)
#   kt_finish             print `N passed, N failed`; exit 0 only when nothing failed
# In a runner:
#   kt_run_one NAME CMD...  run one test script or binary and add its counts

[ -n "${KT_LIB_LOADED:-}" ] && return 0
KT_LIB_LOADED=1
# shellcheck disable=SC2034 # KT_ROOT: read by the scripts that source this file
KT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ "${KT_STOP:-}" = 1 ] && KT_KEEP=1
pass=0
fail=0
T=$(mktemp -d "${TMPDIR:-/tmp}/kt-test.XXXXXX")
KT_CLEANUPS=()
KT_ON_FAIL=()

# kt_cleanup CMD... - register CMD (a command line, eval'd) to run at exit, last first.
kt_cleanup() { KT_CLEANUPS+=("$*"); }

kt__exit() {
    local rc=$? i
    for ((i = ${#KT_CLEANUPS[@]} - 1; i >= 0; i--)); do
        eval "${KT_CLEANUPS[i]}" >/dev/null 2>&1
    done
    if [ "${KT_KEEP:-}" = 1 ]; then
        echo "kept: $T" >&2
    else
        rm -rf "$T"
    fi
    return $rc
}
trap kt__exit EXIT

# kt_only NAME - NAME (TIER/NAME) is selected by KT_ONLY (everything when KT_ONLY is empty).
kt_only() {
    local p pats
    read -ra pats <<<"${KT_ONLY:-}"
    [ ${#pats[@]} -gt 0 ] || return 0
    for p in "${pats[@]}"; do
        # shellcheck disable=SC2053 # $p unquoted on purpose: a glob
        [[ $1 == *$p* ]] && return 0
    done
    return 1
}

# kt_only_args TIER PATTERN... - the KT_ONLY value selecting TIER's tests named by the patterns
# (a runner's command-line words); empty when none is given.
kt_only_args() {
    local t=$1 p out=
    shift
    for p in "$@"; do out+="$t/*$p "; done
    echo "$out"
}

ok() {
    pass=$((pass + 1))
    echo "ok $1"
}

bad() {
    fail=$((fail + 1))
    echo "FAIL $1: $2"
    if [ "${KT_STOP:-}" = 1 ]; then
        [ "$(type -t kt_dump_namespaces)" = function ] && kt_dump_namespaces
        echo "stopped at the first failure (KT_STOP=1); scratch kept in $T"
        kt_finish
    fi
}

# check NAME CMD... - ok when CMD succeeds, else FAIL with the start of its output.
check() {
    local name=$1
    shift
    if "$@" >"$T/check.out" 2>&1; then ok "$name"; else bad "$name" "$(head -c 600 "$T/check.out")"; fi
}

# exits CODE CMD... - CMD exits with CODE (its output discarded).
exits() {
    local want=$1
    shift
    "$@" >/dev/null 2>&1
    [ $? -eq "$want" ]
}

# kt_test NAME BODY - one named test: BODY runs in a subshell (its state stays there); ok when
# it exits 0, else FAIL with the last lines of its output and a dump of the namespaces it made
# (tests/lib_kube.sh kt_ns). Skipped unless KT_ONLY selects ${KT_TIER:-test}/NAME.
kt_test() {
    local name=$1 body=$2 rc
    kt_only "${KT_TIER:-test}/$name" || return 0
    : >"$T/.test-namespaces"
    (eval "$body") >"$T/test.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        ok "$name"
        return 0
    fi
    if [ -s "$T/.test-namespaces" ] && [ "$(type -t kt_dump_namespaces)" = function ]; then
        kt_dump_namespaces "$T/.test-namespaces" >>"$T/test.out" 2>&1
    fi
    bad "$name" "exit $rc: $(tail -c 2000 "$T/test.out")"
    return 1
}

# kt_relay FILE [STRAY] - count FILE's `ok NAME` / `FAIL NAME: why` lines (the output of a
# check written in another language) as this script's; with STRAY, any other line is a failure
# named STRAY.
kt_relay() {
    local line r
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "${line#ok }" ;;
        "FAIL "*)
            r=${line#FAIL }
            bad "${r%%: *}" "${r#*: }"
            ;;
        *) [ -z "${2:-}" ] || bad "$2" "$line" ;;
        esac
    done <"$1"
}

# kt_poll [-m WHAT] SECS CMD... - run CMD (output discarded) every 0.1 s until it succeeds, for
# at most SECS seconds (a whole number). 1, and a line on stderr naming WHAT (default: CMD), on
# timeout.
kt_poll() {
    local what='' n i
    [ "$1" = -m ] && what=$2 && shift 2
    n=$(($1 * 10))
    shift
    for ((i = 0; i < n; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "timed out after $((n / 10))s waiting for: ${what:-$*}" >&2
    return 1
}

# kt_dead PID - PID is gone or a zombie (to be reaped by whoever adopted it).
kt_dead() {
    ! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# kt_port NAME KEY - port KEY (health, metrics, webhook, status) of daemon NAME's port file.
kt_port() { jq -r ".$2" "$T/$1.ports"; }

# kt_ready NAME - daemon NAME's /readyz answers 200.
kt_ready() {
    [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(kt_port "$1" health)/readyz")" = 200 ]
}

# kt_daemon [--standby] NAME BIN FLAG... - start kt-webhook or kt-reconciler BIN with FLAG...
# plus --portfile $T/NAME.ports (give --health-listen 127.0.0.1:0 and the listeners it needs);
# stdout and stderr go to $T/NAME.log. Sets PID_NAME, registers its stop at exit, and waits
# (KT_DAEMON_WAIT seconds, default 60) for the port file and, unless --standby (a reconciler
# that is not the leader is never ready), /readyz. On failure prints the log's tail; 1.
kt_daemon() {
    local standby=0 name bin pid
    [ "$1" = --standby ] && standby=1 && shift
    name=$1 bin=$2
    shift 2
    rm -f "$T/$name.ports"
    "$bin" "$@" --portfile "$T/$name.ports" >>"$T/$name.log" 2>&1 &
    pid=$!
    eval "PID_$name=$pid"
    kt_cleanup "kill $pid; wait $pid"
    if kt_poll "${KT_DAEMON_WAIT:-60}" kt__started "$name" "$pid" "$standby"; then
        kill -0 "$pid" 2>/dev/null && return 0
    fi
    echo "$name did not become ready; its log:"
    tail -n 40 "$T/$name.log"
    return 1
}
kt__started() { # NAME PID STANDBY - ready, or dead (kt_daemon then reports it)
    kill -0 "$2" 2>/dev/null || return 0
    [ -s "$T/$1.ports" ] || return 1
    [ "$3" = 1 ] || kt_ready "$1"
}

# kt_daemon_stop NAME [SIGNAL] - signal daemon NAME (TERM) and wait; its exit status.
kt_daemon_stop() {
    local pid
    pid=$(eval echo "\$PID_$1")
    kill -"${2:-TERM}" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# kt_on_fail CMD... - run CMD (a command line, eval'd; its output shown) in kt_finish when a test
# failed, before the closing line: the logs worth reading.
kt_on_fail() { KT_ON_FAIL+=("$*"); }

kt_finish() {
    local c
    if [ "$fail" -ne 0 ]; then
        for c in "${KT_ON_FAIL[@]}"; do eval "$c"; done
    fi
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

# kt_count FILE - "P F" from the last `N passed, N failed` line of FILE; without one, the
# number of `ok ` and `FAIL ` lines. The one parser of the format.
kt_count() {
    local line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -n "$line" ]; then
        echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/'
    else
        echo "$(grep -c '^ok ' "$1") $(grep -c '^FAIL ' "$1")"
    fi
}

# kt_secs START_NS - "S.mmms" since START_NS (date +%s%N).
kt_secs() {
    local ms=$((($(date +%s%N) - $1) / 1000000))
    echo "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"
}

# kt_run_one NAME CMD... - run one test script or binary and add its counts to pass/fail. It
# failed when it exits non-zero (then at least one failure), printed a sanitizer or valgrind
# report; one that printed nothing to count while exiting 0 counts as one pass. Its output is
# shown under "== NAME (time)". With KT_RUN_QUIET=1 (the no-cluster tiers, whose tests all end
# with the closing line) only a failure's output is shown, then one summary line, and a test
# without the closing line failed. With KT_STOP=1 a failure ends the runner.
kt_run_one() {
    local name=$1 out rc p f t0 closing
    shift
    out="$T/run-one.out"
    t0=$(date +%s%N)
    "$@" >"$out" 2>&1
    rc=$?
    read -r p f < <(kt_count "$out")
    closing=$(grep -cE '^[0-9]+ passed, [0-9]+ failed' "$out")
    if [ "${KT_RUN_QUIET:-}" = 1 ] && [ "$closing" -eq 0 ]; then
        echo "FAIL $name: no closing 'N passed, N failed' line" >>"$out"
        f=$((f + 1))
    fi
    [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
    if grep -qE 'AddressSanitizer|runtime error:|ThreadSanitizer|ERROR SUMMARY: [1-9]' "$out"; then
        [ "$f" -eq 0 ] && f=1
    fi
    [ $rc -eq 0 ] && [ "$closing" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && p=1
    if [ "${KT_RUN_QUIET:-}" = 1 ]; then
        [ "$f" -eq 0 ] || cat "$out"
        printf '  %-28s %4d passed, %d failed\n' "$name" "$p" "$f"
    else
        echo "== $name ($(kt_secs "$t0"))"
        cat "$out"
        [ $rc -ne 0 ] && [ "$(grep -c '^FAIL ' "$out")" -eq 0 ] && echo "FAIL $name: exit status $rc"
    fi
    pass=$((pass + p))
    fail=$((fail + f))
    if [ "$f" -ne 0 ] && [ "${KT_STOP:-}" = 1 ]; then
        echo "stopped at the first failure (KT_STOP=1)"
        kt_finish
    fi
    return 0
}
