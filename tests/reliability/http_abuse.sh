#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/http_abuse.sh ENV_FILE - the HTTP abuse list against one kt-webhook
# (docs/development.md#the-reliability-tier), over TLS from 127.0.0.1: a 10 MB body and a 10 MB chunked body (413), 100,000-deep
# JSON (400), invalid UTF-8 in a string (400), a 100 KB header (431), wrong methods (405), an
# unknown path (404), a wrong content type (415), truncated, uid-less and non-object reviews
# (400). Each case asserts the status and the answer's message; after each one a valid review
# must still be answered (200, allowed). At the end the daemon stops cleanly on SIGTERM, and one
# started with --log-level warn serves the same.
. "$(dirname "$0")/lib.sh" "$@"
rel_webhook_start abuse || { bad abuse-start "kt-webhook did not start"; kt_finish; }
U="https://127.0.0.1:$PORT/validate-trainer-kubeflow-org-v1alpha1-trainjob"
cd "$T" || exit 1

head -c $((10 * 1024 * 1024)) /dev/zero | tr '\0' a >big
python3 -c "print('{\"a\":' * 100000 + '1' + '}' * 100000)" >deep.json
python3 - "$REL_VALID" <<'PY' >utf8.json
import sys
s = open(sys.argv[1], 'rb').read()
sys.stdout.buffer.write(s.replace(b'"namespace"', b'"name\xff\xfespace"', 1))
PY
jq -c 'del(.request.uid)' "$REL_VALID" >nouid.json
printf '{"request":' >truncated.json
printf '[1,2]' >array.json

# case NAME WANT_STATUS MESSAGE_REGEX CURL_ARGS...|big-header - one request; then a valid review.
case_() {
    local name=$1 want=$2 re=$3 code
    shift 3
    if [ "$1" = big-header ]; then # see tests/reliability/big_header.py: curl races the reset
        code=$(python3 "$REL_DIR/big_header.py" 127.0.0.1 "$PORT" "/${U#https://*/}" ca.crt 100000 \
            "$REL_VALID" resp 2>curl.err) || code=000
        code=${code:-000}
    else
        code=$(curl -sS --max-time 30 --cacert ca.crt -o resp -w '%{http_code}' "$@" 2>curl.err) || code=000
    fi
    if [ "$code" = "$want" ] && grep -qE "$re" resp; then
        ok "abuse-$name"
    else
        bad "abuse-$name" "HTTP $code (want $want): $(head -c 300 resp) $(cat curl.err)"
    fi
    if rel_review 5; then ok "abuse-$name-then-valid-review"; else bad "abuse-$name-then-valid-review" "no valid answer"; fi
}
J=(-H 'Content-Type: application/json')
case_ body-10mb 413 'request body too large: the limit is 3145728 bytes' "${J[@]}" --data-binary @big "$U"
case_ chunked-10mb 413 'request body too large' "${J[@]}" -H 'Transfer-Encoding: chunked' --data-binary @big "$U"
case_ chunked-valid 200 '"allowed":true' "${J[@]}" -H 'Transfer-Encoding: chunked' --data-binary @"$REL_VALID" "$U"
case_ deep-json 400 "couldn't decode AdmissionReview: .*(depth|nesting|maximum)" "${J[@]}" --data-binary @deep.json "$U"
case_ invalid-utf8 400 "couldn't decode AdmissionReview" "${J[@]}" --data-binary @utf8.json "$U"
case_ header-100kb 431 'header was too big' big-header
case_ method-get 405 'method not allowed' "$U"
case_ method-put 405 'method not allowed' -X PUT "${J[@]}" --data-binary @"$REL_VALID" "$U"
case_ unknown-path 404 'page not found' "${J[@]}" --data-binary @"$REL_VALID" "https://127.0.0.1:$PORT/validate-nothing"
case_ content-type 415 'contentType=text/plain, expected application/json' -H 'Content-Type: text/plain' --data-binary @"$REL_VALID" "$U"
case_ truncated-review 400 "couldn't decode AdmissionReview" "${J[@]}" --data-binary @truncated.json "$U"
case_ review-without-uid 400 'request.uid is required' "${J[@]}" --data-binary @nouid.json "$U"
case_ review-not-an-object 400 'unsupported AdmissionReview apiVersion' "${J[@]}" --data-binary @array.json "$U"
if [ "$(curl -s --max-time 5 "http://127.0.0.1:$HPORT/healthz")" = ok ]; then ok abuse-healthz-after; else bad abuse-healthz-after "healthz not ok"; fi
kt_daemon_stop abuse
rc=$?
if [ "$rc" = 0 ]; then ok abuse-clean-exit; else bad abuse-clean-exit "kt-webhook exited $rc"; fi
# At --log-level warn the daemon logs less and serves the same: it is ready and answers a valid
# review, and is still running for its SIGTERM (it once exited 0 at once at that level).
if rel_webhook_start quiet --log-level warn >"$T/quiet.out" && rel_review 5 && kill -0 "$WPID" 2>/dev/null; then
    kt_daemon_stop quiet
    rc=$?
    if [ "$rc" = 0 ]; then ok abuse-log-level-warn-serves; else bad abuse-log-level-warn-serves "exit $rc on SIGTERM"; fi
else
    bad abuse-log-level-warn-serves "not serving: $(cat "$T/quiet.out")"
fi
rel_sanitizer_clean abuse-no-sanitizer-reports "$T/abuse.log" "$T/quiet.log"
kt_finish
