# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/reliability/lib.sh - helpers for the reliability drills (sourced after
# tests/integration/lib.sh, so ENV_FILE, kc, ok/bad/kt_poll/kt_finish are there).
# rel_rss_kb, rel_webhook_start (kt-webhook on throwaway certificates, objects from a
# file: the drills aim at the daemon's listeners, not at its API-server cache) and
# rel_review (one valid AdmissionReview from 127.0.0.1, as the API server would send it).

# shellcheck disable=SC2034 # REL_DIR, REL_TOOLS: read by the drills that source this file
REL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REL_WEBHOOK=${KT_WEBHOOK_BIN:-"$it_root/build/plain/bin/kt-webhook"}
REL_TOOLS="$it_root/build/plain/tools"
REL_VALID="$it_root/tests/admission/valid-torch/request.json"
REL_OBJECTS="$it_root/tests/admission/valid-torch/objects.yaml"
REL_PIDS=()

rel_cleanup() {
    local p
    for p in ${REL_PIDS[@]+"${REL_PIDS[@]}"}; do kill "$p" 2>/dev/null; done
    for p in ${REL_PIDS[@]+"${REL_PIDS[@]}"}; do wait "$p" 2>/dev/null; done
}
kt_cleanup rel_cleanup


rel_rss_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; } # PID VmRSS|VmHWM

# rel_webhook_start NAME [FLAG...] - kt-webhook on 127.0.0.1 port 0 (certificates in
# $T, made once); waits for its portfile and /readyz. Sets WPID, PORT, HPORT, MPORT.
rel_webhook_start() {
    local name=$1 pf="$T/$1.ports"
    shift
    if [ ! -f "$T/tls.crt" ]; then
        it_serving_certs "$T" kt-reliability-ca 2 || return 1
    fi
    rm -f "$pf"
    "$REL_WEBHOOK" "$@" --tls-cert-file "$T/tls.crt" --tls-key-file "$T/tls.key" \
        --objects "$REL_OBJECTS" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --portfile "$pf" 2>"$T/$name.stderr" &
    WPID=$!
    REL_PIDS+=("$WPID")
    kt_poll 30 test -s "$pf" || { cat "$T/$name.stderr"; return 1; }
    PORT=$(jq .webhook "$pf")
    HPORT=$(jq .health "$pf")
    # shellcheck disable=SC2034 # MPORT: read by the drills that source this file
    MPORT=$(jq .metrics "$pf")
    kt_poll 30 rel_readyz || { cat "$T/$name.stderr"; return 1; }
}
rel_readyz() { [ "$(curl -s --max-time 2 "http://127.0.0.1:$HPORT/readyz")" = ok ]; }

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
