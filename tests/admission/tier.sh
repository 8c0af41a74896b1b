#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/admission/tier.sh BUILD_DIR - AdmissionReview golden cases over real TLS (docs/internals/style.md#golden-directories, #no-sleeps).
#
# Each tests/admission/<case>/ holds:
#   request.json   the body POSTed (or request.raw, sent byte for byte)
#   objects.yaml   runtimes/JobSets kt-webhook sees (--objects); optional
#   flags          extra kt-webhook flags, one line (e.g. --feature-gates X=true); optional
#   response.json  the expected body (keys compared order-insensitively); in a mutating
#                  response "patch" is written decoded (a JSONPatch array) and a time the
#                  webhook stamped (an RFC 3339 value not found in the request) as "<NOW>"
#   path           the URL path; optional (default: the validator of request.kind.kind)
#   content-type   optional (default application/json)
#   status         the expected HTTP status; optional (default 200)
#   spec           the upstream rule the case pins (a heading of docs/internals/upstream.md)
# kt-webhook is started from BUILD_DIR/bin/kt-webhook per case with throwaway certificates
# (openssl), port 0 and --portfile. Then the bad-input checks: a client that never finishes
# its TLS handshake, one that never sends a request, one that sends its headers slowly; the
# daemon must keep answering and stop cleanly on SIGTERM. (The HTTP abuse list, the memory
# and connection floods live in the reliability tier, tests/reliability/.) Every daemon's log is
# scanned for sanitizer reports. Prints "N passed, N failed". KT_ADMISSION_BLESS=1 rewrites
# every response.json from what the daemon answers (review the diff before committing).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=${1:-build/plain}
case "$b" in /*) ;; *) b="$root/$b" ;; esac
bin="$b/bin/kt-webhook"
. "$root/tests/lib.sh" # T, ok, bad, kt_only, kt_daemon, kt_poll, kt_finish
valid_req="$here/valid-torch/request.json"

if [ ! -x "$bin" ]; then
    bad build "$bin missing"
    kt_finish
fi

# Throwaway CA + serving certificate for 127.0.0.1.
. "$root/tests/integration/certs_lib.sh"
if ! it_serving_certs "$T" kt-admission-test-ca 2; then
    bad certs "openssl failed"
    kt_finish
fi

# adm_webhook_start NAME OBJECTS [FLAG...] - start kt-webhook as daemon NAME (tests/lib.sh
# kt_daemon: port file, log $T/NAME.log, ready); sets PORT, HPORT, MPORT.
adm_webhook_start() {
    kt_daemon "$1" "$bin" "${@:3}" --tls-cert-file "$T/tls.crt" --tls-key-file "$T/tls.key" --objects "$2" \
        --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 || return 1
    PORT=$(kt_port "$1" webhook)
    HPORT=$(kt_port "$1" health)
    MPORT=$(kt_port "$1" metrics)
}

gone() { ! kill -0 "$1" 2>/dev/null; }

# adm_webhook_stop NAME - SIGTERM, wait (bounded), its exit status 0, no sanitizer report in its log.
adm_webhook_stop() {
    local pid rc
    pid=$(eval echo "\$PID_$1")
    kill -TERM "$pid" 2>/dev/null
    if ! kt_poll 5 gone "$pid"; then
        bad "$1" "kt-webhook did not stop within 5 s of SIGTERM"
        kill -KILL "$pid" 2>/dev/null
    fi
    kt_daemon_stop "$1"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        bad "$1" "kt-webhook exited with $rc"
    fi
    if grep -qE 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$T/$1.log"; then
        bad "$1" "sanitizer report in kt-webhook's log: $(cat "$T/$1.log")"
    fi
}

# review PATH CONTENT_TYPE BODY_FILE OUT - POST to kt-webhook at $PORT; sets CODE.
review() {
    CODE=$(curl -sS --max-time 20 --cacert "$T/ca.crt" -o "$4" -w '%{http_code}' \
        -H "Content-Type: $2" --data-binary "@$3" "https://127.0.0.1:$PORT$1") || CODE=000
}

default_path() {
    case "$(jq -r '.request.kind.kind // ""' "$1" 2>/dev/null)" in
    TrainingRuntime) echo /validate-trainer-kubeflow-org-v1alpha1-trainingruntime ;;
    ClusterTrainingRuntime) echo /validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime ;;
    *) echo /validate-trainer-kubeflow-org-v1alpha1-trainjob ;;
    esac
}

# normalize GOT REQUEST - decode the patch; stamped times (RFC 3339, not in the request)
# become "<NOW>".
normalize() {
    local times='[]'
    [ -f "$2" ] && times=$(jq -c '[.. | strings | select(test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))] | unique' "$2" 2>/dev/null || echo '[]')
    jq -S --argjson seen "$times" '
        if (.response.patch? // null) != null then
            .response.patch |= (@base64d | fromjson
                | map(if (.value? | type) == "string"
                          and (.value | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))
                          and ((.value as $v | $seen | index($v)) == null)
                      then .value = "<NOW>" else . end))
        else . end' "$1"
}

admission_case() {
    local d=$1 name req ct path want_status objects flags
    name=$(basename "$d")
    req="$d/request.json"
    [ -f "$d/request.raw" ] && req="$d/request.raw"
    ct="application/json"
    [ -f "$d/content-type" ] && ct=$(cat "$d/content-type")
    path=$(default_path "$d/request.json")
    [ -f "$d/path" ] && path=$(cat "$d/path")
    want_status=200
    [ -f "$d/status" ] && want_status=$(cat "$d/status")
    objects="$d/objects.yaml"
    [ -f "$objects" ] || objects="$T/empty.yaml"
    flags=()
    [ -f "$d/flags" ] && read -r -a flags <"$d/flags"
    if ! daemon_for "$objects" ${flags[@]+"${flags[@]}"}; then
        bad "$name" "kt-webhook did not start"
        return
    fi
    review "$path" "$ct" "$req" "$T/$name.out"
    if [ "$CODE" != "$want_status" ]; then
        bad "$name" "HTTP $CODE, want $want_status: $(head -c 400 "$T/$name.out")"
    elif ! normalize "$T/$name.out" "$d/request.json" >"$T/$name.got" 2>"$T/$name.jqerr"; then
        bad "$name" "response is not JSON: $(head -c 400 "$T/$name.out")"
    elif [ "${KT_ADMISSION_BLESS:-}" = 1 ]; then
        cp "$T/$name.got" "$d/response.json" # a changed expectation is a reviewed decision
        ok "$name"
    elif ! diff -u <(jq -S . "$d/response.json") "$T/$name.got" >"$T/$name.diff"; then
        bad "$name" "response differs:"
        sed 's/^/    /' "$T/$name.diff"
    else
        ok "$name"
    fi
}

# daemon_for OBJECTS [FLAG...] - one kt-webhook per distinct objects file content and flags
# (started on first use, stopped after the cases); sets PORT.
declare -A d_port
daemons=()
daemon_for() {
    local h
    h=$({ cat "$1"; echo "${*:2}"; } | md5sum | cut -c1-12)
    if [ -z "${d_port[$h]:-}" ]; then
        adm_webhook_start "objects_$h" "$1" "${@:2}" || return 1
        d_port[$h]=$PORT
        daemons+=("$h")
    fi
    PORT=${d_port[$h]}
}

: >"$T/empty.yaml"
for d in "$here"/*/; do
    [ -f "$d/response.json" ] || continue
    kt_only "admission/$(basename "$d")" || continue
    admission_case "${d%/}"
done
for h in ${daemons[@]+"${daemons[@]}"}; do
    adm_webhook_stop "objects_$h"
done

# ---- bad input against one daemon --------------------------------------------------------
# (a section, not indented: KT_ONLY=admission/robustness runs it alone)
if kt_only admission/robustness; then
name=robustness
started=0
adm_webhook_start "$name" "$here/valid-torch/objects.yaml" && started=1
if [ "$started" = 0 ]; then
    bad "$name" "kt-webhook did not start"
    kt_finish
fi
healthy() { # CHECK - the daemon still answers a valid review and /healthz
    review /validate-trainer-kubeflow-org-v1alpha1-trainjob application/json "$valid_req" "$T/h.out"
    if [ "$CODE" = 200 ] && jq -e '.response.allowed == true' "$T/h.out" >/dev/null &&
        [ "$(curl -sS --max-time 5 "http://127.0.0.1:$HPORT/healthz")" = ok ]; then
        ok "$1"
    else
        bad "$1" "daemon unhealthy (HTTP $CODE)"
    fi
}

# Clients that never finish: TCP only, a TLS ClientHello cut short, headers sent slowly.
exec 5<>"/dev/tcp/127.0.0.1/$PORT"
exec 6<>"/dev/tcp/127.0.0.1/$PORT"
printf '\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03' >&6
(
    {
        printf 'POST /validate-trainer-kubeflow-org-v1alpha1-trainjob HTTP/1.1\r\n'
        sleep 30
    } | timeout 40 openssl s_client -quiet -connect "127.0.0.1:$PORT" >/dev/null 2>&1
) &
slow=$!
# A client dripping header lines every 0.5 s is never idle for the idle timeout; the header
# deadline (10 s from accept) cuts it before it has sent its 120 lines.
(
    printf 'POST /validate-trainer-kubeflow-org-v1alpha1-trainjob HTTP/1.1\r\n'
    for ((i = 0; i < 120; i++)); do
        printf 'X-Drip-%d: a\r\n' "$i"
        echo "$i" >"$T/drip.n"
        sleep 0.5
    done
) | timeout 90 openssl s_client -quiet -connect "127.0.0.1:$PORT" >/dev/null 2>&1 &
dripper=$!
healthy stalled-clients-do-not-block

# Plain HTTP and TLS 1.1 are refused.
if curl -sS --max-time 5 -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null; then
    bad plain-http "plain HTTP got an answer"
else
    ok plain-http
fi
if curl -sS --max-time 5 --cacert "$T/ca.crt" --tls-max 1.1 -o /dev/null \
    "https://127.0.0.1:$PORT/healthz" 2>/dev/null; then
    bad tls11 "TLS 1.1 handshake succeeded"
else
    ok tls11
fi

# TLS 1.3 key exchange: finite-field groups are refused, ECDHE groups accepted.
if echo | timeout 10 openssl s_client -tls1_3 -groups ffdhe2048:ffdhe3072 \
    -connect "127.0.0.1:$PORT" 2>/dev/null | grep -c 'BEGIN CERTIFICATE\|Server certificate' >/dev/null; then
    bad tls13-ffdhe "a TLS 1.3 handshake with only ffdhe groups succeeded"
else
    ok tls13-ffdhe
fi
if echo | timeout 10 openssl s_client -tls1_3 -groups X25519 -connect "127.0.0.1:$PORT" 2>/dev/null |
    grep -c 'Server certificate' >/dev/null; then
    ok tls13-x25519
else
    bad tls13-x25519 "a TLS 1.3 handshake with X25519 failed"
fi

# Readiness and metrics.
if [ "$(curl -sS --max-time 5 "http://127.0.0.1:$HPORT/readyz")" = ok ]; then ok readyz; else bad readyz "not ready"; fi
curl -sS --max-time 5 --cacert "$T/ca.crt" "https://127.0.0.1:$MPORT/metrics" >"$T/metrics"
if grep -q 'kt_webhook_admission_reviews_total{webhook="validator.trainjob.trainer.kubeflow.org",verdict="allowed"}' "$T/metrics" &&
    grep -q 'kt_http_request_duration_seconds_bucket' "$T/metrics"; then
    ok metrics
else
    bad metrics "review counter or latency histogram missing"
fi
# Trainer metrics: decisions by resource, operation and result; build info; bounded labels
# (no object name of the reviews sent above, e.g. "valid-torch"'s TrainJob, is a label value).
if grep -q '^kubeflow_trainer_webhook_validation_total{resource="trainjobs",operation="CREATE",result="allowed"} [1-9]' "$T/metrics" &&
    grep -q '^kubeflow_trainer_build_info{component="webhook",git_version="[^"]*",upstream_version="v2.3.0",api_version="trainer.kubeflow.org/v1alpha1"} 1$' "$T/metrics"; then
    ok trainer-metrics
else
    bad trainer-metrics "kubeflow_trainer_webhook_validation_total or build_info missing: $(grep kubeflow_trainer "$T/metrics" | sed -n 1,5p)"
fi
names=$(cat "$here"/*/request.json 2>/dev/null | grep -o '"name": *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/' | sort -u | grep -v '^$' || true)
leaked=""
for n in $names; do
    if grep '^kubeflow_trainer_webhook' "$T/metrics" | grep -c "\"$n\"" >/dev/null; then leaked="$leaked $n"; fi
done
if [ -z "$leaked" ] && [ -n "$names" ]; then ok trainer-metrics-labels; else bad trainer-metrics-labels "object names as labels:$leaked (names seen: $(echo $names | wc -w))"; fi

# The stalled connections are cut by the server's timeout (10 s): reading fd 5 ends.
if timeout 20 cat <&5 >/dev/null 2>&1; then ok idle-timeout; else bad idle-timeout "idle connection not closed"; fi
exec 5>&- 6>&-
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
wait "$dripper" 2>/dev/null
sent=$(cat "$T/drip.n" 2>/dev/null || echo none)
echo "  header deadline: the dripping client was cut after header line $sent"
if [ "$sent" != none ] && [ "$sent" -lt 119 ]; then
    ok header-deadline
else
    bad header-deadline "a client dripping headers was not cut off (sent line $sent of 119)"
fi
healthy after-timeouts
adm_webhook_stop "$name"

fi

# ---- certificates: not ready without them; picked up when they appear; reloaded ---------
if kt_only admission/certs; then
name=certs
mkdir -p "$T/late"
if kt_daemon --standby "$name" "$bin" --tls-cert-file "$T/late/tls.crt" --tls-key-file "$T/late/tls.key" \
    --objects "$T/empty.yaml" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 0; then
    PORT=$(kt_port "$name" webhook)
    HPORT=$(kt_port "$name" health)
    r=$(curl -sS --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$HPORT/readyz")
    case "$r" in *"certificates are not ready"*" 503") ok readyz-no-certs ;; *) bad readyz-no-certs "got '$r'" ;; esac
    cp "$T/tls.crt" "$T/tls.key" "$T/late/"
    if kt_poll 10 kt_ready "$name"; then
        ok readyz-certs-appear
    else
        bad readyz-certs-appear "readyz: '$(curl -s --max-time 2 "http://127.0.0.1:$HPORT/readyz")'"
    fi
    # A new CA and pair replace the files: new connections get the new certificate.
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca2.key" -out "$T/ca2.crt" -days 2 \
        -subj /CN=kt-admission-test-ca2 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout "$T/n.key" -out "$T/n.csr" -subj /CN=127.0.0.1 2>/dev/null
    openssl x509 -req -in "$T/n.csr" -CA "$T/ca2.crt" -CAkey "$T/ca2.key" -CAcreateserial \
        -out "$T/n.crt" -days 2 -extfile "$T/ext" 2>/dev/null
    cp "$T/n.key" "$T/late/tls.key.new" && cp "$T/n.crt" "$T/late/tls.crt.new" &&
        mv "$T/late/tls.key.new" "$T/late/tls.key" && mv "$T/late/tls.crt.new" "$T/late/tls.crt"
    new_cert_served() { # the webhook answers a review over the new CA (HTTP code in $T/got)
        curl -s --max-time 2 --cacert "$T/ca2.crt" -o /dev/null -w '%{http_code}' \
            -H 'Content-Type: application/json' --data-binary "@$valid_req" \
            "https://127.0.0.1:$PORT/validate-trainer-kubeflow-org-v1alpha1-trainjob" >"$T/got"
        [ "$(cat "$T/got")" = 200 ]
    }
    kt_poll 10 new_cert_served
    got=$(cat "$T/got" 2>/dev/null)
    if [ "$got" = 200 ]; then ok cert-reload; else bad cert-reload "new certificate not served (HTTP $got)"; fi
else
    bad "$name" "kt-webhook did not start: $(cat "$T/$name.log")"
fi
adm_webhook_stop "$name"

fi

kt_finish
