# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/reliability/lib.sh - what every reliability drill sources first. A drill runs as
# `DRILL ENV_FILE` (ENV_FILE: DIR/env from tests/cluster/up.sh); this sources it and the test
# library (tests/lib_kube.sh: $T, ok/bad/check, kt_poll, kt_daemon, kt_cleanup, kt_finish, kc,
# kt_ns), and adds the drills' own helpers:
#   rel_check NAME CMD...    check NAME CMD, then show CMD's "  "-indented lines (its figures)
#   rel_pid NAME             the PID kt_daemon NAME started
#   rel_rss_kb PID FIELD     VmRSS or VmHWM of PID, kB
#   rel_webhook_start NAME [FLAG...]  kt_daemon NAME for kt-webhook on throwaway certificates,
#                            objects from a file (the drills aim at the daemon's listeners, not
#                            at its API-server cache); sets PORT, HPORT, MPORT, WPID
#   rel_review [SECONDS]     one valid AdmissionReview from 127.0.0.1, as the API server sends it
#   rel_sanitizer_clean NAME FILE...  ok NAME when no sanitizer report is in the files

set -uo pipefail
[ $# -ge 1 ] && [ -f "$1" ] || {
    echo "usage: $0 ENV_FILE (from tests/cluster/up.sh)" >&2
    exit 2
}
# shellcheck source=/dev/null # a cluster env file, written at run time
. "$1"
# shellcheck source=tests/lib_kube.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib_kube.sh"
# shellcheck source=tests/integration/certs_lib.sh
. "$KT_ROOT/tests/integration/certs_lib.sh" # it_serving_certs

# shellcheck disable=SC2034 # REL_DIR, REL_TOOLS: read by the drills that source this file
REL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REL_WEBHOOK=${KT_WEBHOOK_BIN:-"$KT_ROOT/build/plain/bin/kt-webhook"}
# shellcheck disable=SC2034
REL_RECONCILER=${KT_RECONCILER_BIN:-"$KT_ROOT/build/plain/bin/kt-reconciler"}
# shellcheck disable=SC2034
REL_TOOLS="$KT_ROOT/build/plain/tools"
REL_VALID="$KT_ROOT/tests/admission/valid-torch/request.json"
REL_OBJECTS="$KT_ROOT/tests/admission/valid-torch/objects.yaml"

# rel_check NAME CMD... - check NAME CMD; then CMD's lines that start with two spaces (the
# figures a drill prints, shown whether it passed or not).
rel_check() {
    check "$@"
    grep '^  ' "$T/check.out"
    return 0
}

rel_pid() { eval echo "\$PID_$1"; }

rel_rss_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; } # PID VmRSS|VmHWM

# rel_webhook_start NAME [FLAG...] - kt-webhook on 127.0.0.1 port 0 (certificates in $T, made
# once) through kt_daemon (log $T/NAME.log). Sets WPID, PORT, HPORT, MPORT.
rel_webhook_start() {
    local name=$1
    shift
    if [ ! -f "$T/tls.crt" ]; then
        it_serving_certs "$T" kt-reliability-ca 2 || return 1
    fi
    kt_daemon "$name" "$REL_WEBHOOK" "$@" --tls-cert-file "$T/tls.crt" --tls-key-file "$T/tls.key" \
        --objects "$REL_OBJECTS" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 || return 1
    # shellcheck disable=SC2034 # WPID, HPORT, MPORT: read by the drills that source this file
    WPID=$(rel_pid "$name")
    PORT=$(kt_port "$name" webhook)
    # shellcheck disable=SC2034
    HPORT=$(kt_port "$name" health)
    # shellcheck disable=SC2034
    MPORT=$(kt_port "$name" metrics)
}

# rel_review [SECONDS] - one valid review from 127.0.0.1; true when answered 200 allowed
# within SECONDS (default 5).
rel_review() {
    curl -sS --max-time "${1:-5}" --interface 127.0.0.1 --cacert "$T/ca.crt" \
        -o "$T/review.out" -H 'Content-Type: application/json' --data-binary "@$REL_VALID" \
        "https://127.0.0.1:$PORT/validate-trainer-kubeflow-org-v1alpha1-trainjob" 2>/dev/null &&
        jq -e '.response.allowed == true' "$T/review.out" >/dev/null 2>&1
}

# rel_sanitizer_clean NAME FILE... - ok NAME when no sanitizer report is in the files.
rel_sanitizer_clean() {
    local name=$1
    shift
    if grep -l -E '(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|runtime error:' "$@" >/dev/null 2>&1; then
        bad "$name" "sanitizer report in $*"
    else
        ok "$name"
    fi
}
