# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/integration/lib.sh - helpers for the shell integration tests (sourced).
# A test script is run as `SCRIPT ENV_FILE` (ENV_FILE = DIR/env written by tests/cluster/up.sh).
# The core (ok, bad, check, kt_test, kt_poll, kt_daemon, kt_finish, $T) is tests/lib.sh and the
# cluster fixture (kc, kt_ns, kq, tj_state) tests/lib_kube.sh; this file adds the integration
# tier's own helpers. A test prints `ok NAME` / `FAIL NAME: why` lines and ends with kt_finish.

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
. "$it_root/tests/lib_kube.sh" # T, ok, bad, check, kt_test, kt_poll, kt_daemon, kt_finish, kc, kt_ns

# it_stop_clean NAME - SIGTERM the daemon $PID_NAME and check it exits 0 (under ASan: no leak,
# no error), as NAME-clean-exit; the failure quotes $T/NAME.log.
it_stop_clean() {
    local rc
    kt_daemon_stop "$1"
    rc=$?
    if [ "$rc" = 0 ]; then ok "$1-clean-exit"; else bad "$1-clean-exit" "exit $rc: $(grep -A30 -m1 -E 'ERROR|Sanitizer|leak' "$T/$1.log" | { head -c 3000; cat >/dev/null; })"; fi
}

# it_api METHOD PATH [BODY_FILE [CONTENT_TYPE]] - one request as admin. Sets IT_CODE (HTTP
# status) and writes the response body to $T/body.
it_api() {
    local args=(-sS -o "$T/body" -w '%{http_code}' --cacert "$KT_CA" -X "$1")
    args+=(--cert "$KT_CLUSTER_DIR/admin.crt" --key "$KT_CLUSTER_DIR/admin.key")
    if [ $# -ge 3 ]; then
        args+=(-H "Content-Type: ${4:-application/yaml}" --data-binary "@$3")
    fi
    # shellcheck disable=SC2034 # IT_CODE: the HTTP code, read by the callers
    IT_CODE=$(curl "${args[@]}" "$KT_APISERVER$2") || IT_CODE=000
}

# it_js_status NS NAME JSON - write JobSet NAME's status (a merge patch) as the JobSet
# controller would.
it_js_status() {
    kc patch jobset "$2" -n "$1" --subresource=status --type=merge -p "$3" >/dev/null
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

# it_json_eq NAME WANT_FILE GOT_FILE - compare two JSON documents key-order-insensitively.
it_json_eq() {
    if diff -u <(jq -S . "$2") <(jq -S . "$3") >"$T/diff"; then
        ok "$1"
    else
        bad "$1" "JSON differs (want $2):"
        sed 's/^/    /' "$T/diff"
    fi
}

# it_not_pruned NAME SENT_JSON STORED_JSON - every scalar leaf of SENT is in STORED unchanged
# (the API server pruned nothing and rewrote nothing; defaults may add more).
it_not_pruned() {
    local missing n
    n=$(jq '[paths(scalars)] | length' "$2" 2>/dev/null || echo 0)
    if [ "${n:-0}" -eq 0 ]; then
        bad "$1" "nothing to compare in $2"
        return
    fi
    if ! missing=$(jq -n --slurpfile a "$2" --slurpfile b "$3" -r '
        $a[0] as $x | $b[0] as $y
        | [$x | paths(scalars)]
        | map(. as $p | select(($x | getpath($p)) != ($y | getpath($p))))
        | map(map(tostring) | join(".")) | .[]'); then
        bad "$1" "jq failed on $2 / $3"
        return
    fi
    if [ -z "$missing" ]; then
        ok "$1"
    else
        bad "$1" "fields pruned or changed: $(echo "$missing" | sed -n 1,5p | tr '\n' ' ')"
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
