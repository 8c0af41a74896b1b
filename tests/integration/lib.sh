# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/integration/lib.sh - helpers for the shell integration tests (sourced).
# A test script is run as `SCRIPT ENV_FILE` (ENV_FILE = DIR/env written by tests/cluster/up.sh).
# It prints one line per check, `ok NAME` or `FAIL NAME: why`, and exits non-zero when any
# check failed (it_finish). tests/integration/run.sh counts those lines.

set -uo pipefail
it_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # it_root: read by the test files sourced after this library
it_root=$(cd "$it_dir/../.." && pwd)
. "$it_dir/certs_lib.sh"
[ $# -ge 1 ] && [ -f "$1" ] || {
    echo "usage: $0 ENV_FILE (from tests/cluster/up.sh)" >&2
    exit 2
}
# shellcheck source=/dev/null # a cluster env file, written at run time
. "$1"
IT_TMP=$(mktemp -d)
trap 'rm -rf "$IT_TMP"' EXIT
IT_FAILS=0
IT_PASSES=0

# check NAME CMD... - ok NAME when CMD succeeds, else FAIL with the start of its output.
check() {
    local name=$1
    shift
    if "$@" >"$IT_TMP/check.out" 2>&1; then it_ok "$name"; else it_fail "$name" "$(head -c 600 "$IT_TMP/check.out")"; fi
}

# it_stop_clean NAME - SIGTERM the daemon $PID_NAME and check it exits 0 (under ASan: no leak,
# no error), as NAME-clean-exit; the failure quotes $IT_TMP/NAME.log.
it_stop_clean() {
    local pid rc
    pid=$(eval echo "\$PID_$1")
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    if [ "$rc" = 0 ]; then it_ok "$1-clean-exit"; else it_fail "$1-clean-exit" "exit $rc: $(grep -A30 -m1 -E 'ERROR|Sanitizer|leak' "$IT_TMP/$1.log" | { head -c 3000; cat >/dev/null; })"; fi
}

it_ok() {
    IT_PASSES=$((IT_PASSES + 1))
    echo "ok $1"
}
it_fail() {
    IT_FAILS=$((IT_FAILS + 1))
    echo "FAIL $1: $2"
}
it_finish() {
    [ "$IT_FAILS" -eq 0 ]
    exit $?
}

# kc ARGS... - the 1.35 kubectl as the cluster admin.
kc() {
    "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" --cache-dir "$KT_CLUSTER_DIR/kubectl-cache" "$@"
}

# it_ns PREFIX - create a fresh namespace (there is no namespace controller to reuse one) and
# print its name.
it_ns() {
    local ns
    ns="$1-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
    kc create namespace "$ns" >/dev/null || return 1
    echo "$ns"
}

# it_api METHOD PATH [BODY_FILE [CONTENT_TYPE]] - one request as admin. Sets IT_CODE (HTTP
# status) and writes the response body to $IT_TMP/body.
it_api() {
    local args=(-sS -o "$IT_TMP/body" -w '%{http_code}' --cacert "$KT_CA" -X "$1")
    args+=(--cert "$KT_CLUSTER_DIR/admin.crt" --key "$KT_CLUSTER_DIR/admin.key")
    if [ $# -ge 3 ]; then
        args+=(-H "Content-Type: ${4:-application/yaml}" --data-binary "@$3")
    fi
    # shellcheck disable=SC2034 # IT_CODE: the HTTP code, read by the callers
    IT_CODE=$(curl "${args[@]}" "$KT_APISERVER$2") || IT_CODE=000
}

# it_kind FILE / it_name FILE - top-level kind and metadata.name of a one-document YAML file
# (plain awk: python's yq costs ~0.2 s a call).
it_kind() { awk '/^kind:/ { print $2; exit }' "$1"; }
it_name() { awk '/^metadata:/ { m = 1; next } m && /^  name:/ { print $2; exit } /^[^ #]/ { m = 0 }' "$1"; }

# it_path KIND NAMESPACE [NAME] - the REST path of a Trainer object.
it_path() {
    local p=/apis/trainer.kubeflow.org/v1alpha1 r
    case "$1" in
    TrainJob) r=trainjobs ;;
    TrainingRuntime) r=trainingruntimes ;;
    ClusterTrainingRuntime) r=clustertrainingruntimes ;;
    *) return 1 ;;
    esac
    if [ "$1" != ClusterTrainingRuntime ]; then
        p="$p/namespaces/$2"
    fi
    echo "$p/$r${3:+/$3}"
}

# it_dead PID - true when PID is gone or a zombie (reaped later by whoever adopted it).
it_dead() {
    ! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# it_json_eq NAME WANT_FILE GOT_FILE - compare two JSON documents key-order-insensitively.
it_json_eq() {
    if diff -u <(jq -S . "$2") <(jq -S . "$3") >"$IT_TMP/diff"; then
        it_ok "$1"
    else
        it_fail "$1" "JSON differs (want $2):"
        sed 's/^/    /' "$IT_TMP/diff"
    fi
}

# it_not_pruned NAME SENT_JSON STORED_JSON - every scalar leaf of SENT is in STORED unchanged
# (the API server pruned nothing and rewrote nothing; defaults may add more).
it_not_pruned() {
    local missing n
    n=$(jq '[paths(scalars)] | length' "$2" 2>/dev/null || echo 0)
    if [ "${n:-0}" -eq 0 ]; then
        it_fail "$1" "nothing to compare in $2"
        return
    fi
    if ! missing=$(jq -n --slurpfile a "$2" --slurpfile b "$3" -r '
        $a[0] as $x | $b[0] as $y
        | [$x | paths(scalars)]
        | map(. as $p | select(($x | getpath($p)) != ($y | getpath($p))))
        | map(map(tostring) | join(".")) | .[]'); then
        it_fail "$1" "jq failed on $2 / $3"
        return
    fi
    if [ -z "$missing" ]; then
        it_ok "$1"
    else
        it_fail "$1" "fields pruned or changed: $(echo "$missing" | sed -n 1,5p | tr '\n' ' ')"
    fi
}

# it_runtime_template [REPLICAS] - print the `  template:` block of a (Cluster)TrainingRuntime
# spec: one replicated job "node" (the trainer ancestor step) running a busybox container, with
# `replicas: REPLICAS` when given. For use in an unquoted heredoc as `$(it_runtime_template)`
# directly under `spec:`.
it_runtime_template() {
    printf '  template:\n    spec:\n      replicatedJobs:\n        - name: node\n'
    if [ -n "${1:-}" ]; then
        printf '          replicas: %s\n' "$1"
    fi
    cat <<'YAML'
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: busybox
YAML
}

# it_poll CMD... - run CMD every 0.1 s until it succeeds (output discarded), at most IT_POLL_S
# seconds (default 60): for conditions `kubectl wait` cannot express. Returns 1 on timeout.
it_poll() {
    for _ in $(seq $((${IT_POLL_S:-60} * 10))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
