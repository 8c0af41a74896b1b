#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/metrics_auth_test.sh ENV_FILE - kt-reconciler's (and, part 5,
# kt-webhook's) metrics on the real API
# server: TLS (metrics.secureServing) with TokenReview + SubjectAccessReview in front
# (metrics.auth.enabled), run as the reconciler's non-admin identity with exactly
# deploy/rbac/reconciler applied. Tokens come from the TokenRequest API (`kubectl create
# token`). No token 401, a token without kt-metrics-reader 403, with it 200 and the metrics
# text; the plain-HTTP switch (secureServing false, auth off) still answers. Readiness is a
# bounded poll on /readyz; nothing sleeps for readiness and nothing asserts on time.
. "$(dirname "$0")/lib.sh"
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}
KTCTL="$it_root/build/plain/bin/ktctl"
SUF=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
kt_cleanup kc delete clusterrolebinding "kt-metrics-it-$SUF"

# config NAME SECURE AUTH - a Configuration file with metrics.secureServing and auth.enabled.
config() {
    cat >"$T/$1.yaml" <<EOF
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
metrics:
  bindAddress: ":8443"
  secureServing: $2
  auth:
    enabled: $3
certManagement:
  enable: false
EOF
}

# The daemons as their own identities, started and waited for by kt_daemon NAME BIN FLAG...
# (tests/lib.sh); MP is then set to the metrics port (kt_port NAME metrics).
RECF=(--kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --workers 1)

# get URL [CURL_ARGS...] - sets CODE and writes the body to $T/out.
get() {
    local url=$1
    shift
    CODE=$(curl -sS --max-time 20 -o "$T/out" -w '%{http_code}' "$@" "$url" 2>"$T/curl.err") || CODE=000
}
# answered NAME CODE BODY_REGEX - the last get answered CODE with a body matching BODY_REGEX.
answered() {
    if [ "$CODE" = "$2" ] && grep -Eq "$3" "$T/out"; then
        ok "$1"
    else
        bad "$1" "got $CODE: $(head -c 300 "$T/out") $(head -c 200 "$T/curl.err")"
    fi
}
reviews() { # reviews KIND - kt_metrics_auth_reviews_total{kind=KIND} in $T/out
    sed -n "s/^kt_metrics_auth_reviews_total{kind=\"$1\"} \\([0-9]*\\).*/\\1/p" "$T/out"
}

kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || { bad rbac "apply failed"; kt_finish; }
check rbac-tokenreviews "$KT_KUBECTL" --kubeconfig "$KT_RECONCILER_KUBECONFIG" auth can-i create tokenreviews.authentication.k8s.io
check rbac-subjectaccessreviews "$KT_KUBECTL" --kubeconfig "$KT_RECONCILER_KUBECONFIG" auth can-i create subjectaccessreviews.authorization.k8s.io
check rbac-metrics-reader-role bash -c "kc() { '$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' \"\$@\"; }; \
    kc get clusterrole kt-metrics-reader -o json | jq -e '.rules == [{\"nonResourceURLs\":[\"/metrics\"],\"verbs\":[\"get\"]}]'"

NS=$(kt_ns metrics) || { bad namespace "cannot create"; kt_finish; }
kc create serviceaccount nobody -n "$NS" >/dev/null && kc create serviceaccount scraper -n "$NS" >/dev/null &&
    kc create clusterrolebinding "kt-metrics-it-$SUF" --clusterrole=kt-metrics-reader \
        --serviceaccount="$NS:scraper" >/dev/null || { bad accounts "cannot create"; kt_finish; }
NOBODY=$(kc create token nobody -n "$NS") && SCRAPER=$(kc create token scraper -n "$NS") ||
    { bad tokens "kubectl create token failed"; kt_finish; }

# ---- 1. TLS + authn/authz, self-signed certificate (no certificate folder) ----
mkdir -p "$T/rtmp"
export TMPDIR="$T/rtmp" # the self-signed pair stays in memory: nothing may appear here
config auth true true
if kt_daemon auth "$REC" "${RECF[@]}" --config "$T/auth.yaml"; then
    MP=$(kt_port auth metrics)
    U="https://127.0.0.1:$MP/metrics"
    get "$U" -k
    answered no-token-401 401 '^Unauthorized$'
    get "$U" -k -H "Authorization: Basic dXNlcjpwdw=="
    answered basic-auth-401 401 '^Unauthorized$'
    get "$U" -k -H "Authorization: Bearer not-a-token"
    answered invalid-token-401 401 '^Unauthorized$'
    get "$U" -k -H "Authorization: Bearer $NOBODY"
    answered no-role-403 403 "^Authorization denied for user system:serviceaccount:$NS:nobody\$"
    get "$U" -k -H "Authorization: Bearer $SCRAPER"
    answered with-role-200 200 '^workqueue_depth\{name="trainjob_controller"\} [0-9]'
    check with-role-metrics-text grep -q '^# TYPE controller_runtime_reconcile_total counter$' "$T/out"
    check with-role-content-type grep -q 'text/plain; version=0.0.4' <(curl -sk -D - -o /dev/null -H "Authorization: Bearer $SCRAPER" "$U")
    # a second scrape is answered from the cache: no new review is sent
    get "$U" -k -H "Authorization: Bearer $SCRAPER"
    t1=$(reviews tokenreview) s1=$(reviews subjectaccessreview)
    get "$U" -k -H "Authorization: Bearer $SCRAPER"
    t2=$(reviews tokenreview) s2=$(reviews subjectaccessreview)
    check reviews-cached test -n "$t1" -a "$t1" = "$t2" -a -n "$s1" -a "$s1" = "$s2"
    # concurrent requests: 40 made-up tokens and 20 scrapes with the cached token, 10 at a
    # time; every made-up token costs exactly one TokenReview, the scrapes none
    for i in $(seq 40); do echo "fake-$SUF-$i"; done >"$T/req.list"
    for i in $(seq 20); do echo "$SCRAPER"; done >>"$T/req.list"
    shuf "$T/req.list" | xargs -P 10 -I TOKEN curl -sk --max-time 30 -o /dev/null \
        -w '%{http_code}\n' -H "Authorization: Bearer TOKEN" "$U" >"$T/codes"
    check concurrent-answers test "$(sort "$T/codes" | uniq -c | awk '{printf "%s:%s ", $2, $1}')" = "200:20 401:40 "
    get "$U" -k -H "Authorization: Bearer $SCRAPER"
    check concurrent-reviews test "$(reviews tokenreview)" = "$((t2 + 40))" -a "$(reviews subjectaccessreview)" = "$s2"
    # the role allows get on /metrics only: another verb or path is refused (SAR per request)
    get "$U" -k -X POST -H "Authorization: Bearer $SCRAPER"
    answered with-role-post-403 403 "^Authorization denied for user system:serviceaccount:$NS:scraper\$"
    get "https://127.0.0.1:$MP/debug/pprof" -k -H "Authorization: Bearer $SCRAPER"
    answered with-role-other-path-403 403 "^Authorization denied for user system:serviceaccount:$NS:scraper\$"
    # /healthz is allowed to everyone by the API server's system:public-info-viewer role: the
    # review passes and the path is not served here (only /metrics is, with auth on)
    get "https://127.0.0.1:$MP/healthz" -k -H "Authorization: Bearer $NOBODY"
    answered public-path-allowed-404 404 '^404 page not found$'
    get "http://127.0.0.1:$MP/metrics" -H "Authorization: Bearer $SCRAPER"
    check plain-http-refused test "$CODE" != 200
    check self-signed-cert bash -c "echo | openssl s_client -connect 127.0.0.1:$MP 2>/dev/null | openssl x509 -noout -ext subjectAltName | grep -c 'IP Address:127.0.0.1' >/dev/null"
    check self-signed-in-memory grep -q 'self-signed certificate (in memory)' "$T/auth.log"
    check self-signed-nothing-on-disk test -z "$(ls -A "$T/rtmp")"
    it_stop_clean auth
else
    bad auth-start "$(tail -5 "$T/auth.log")"
fi

# ---- 2. TLS with a given certificate folder, verified against its CA ----
"$KTCTL" certs -q --dir "$T/certs" --san IP:127.0.0.1 >/dev/null
if kt_daemon dir "$REC" "${RECF[@]}" --config "$T/auth.yaml" --metrics-cert-dir "$T/certs"; then
    MP=$(kt_port dir metrics)
    get "https://127.0.0.1:$MP/metrics" --cacert "$T/certs/ca.crt" -H "Authorization: Bearer $SCRAPER"
    answered cert-dir-verified-200 200 '^# TYPE '
    get "https://127.0.0.1:$MP/metrics" --cacert "$T/certs/ca.crt"
    answered cert-dir-no-token-401 401 '^Unauthorized$'
    get "https://127.0.0.1:$MP/metrics" --cacert "$KT_CA" -H "Authorization: Bearer $SCRAPER"
    check cert-dir-other-ca-refused test "$CODE" = 000
    it_stop_clean dir
else
    bad dir-start "$(tail -5 "$T/dir.log")"
fi
nx_no_tls() { # a missing --metrics-cert-dir: the daemon runs, its metrics port completes no TLS
    local c
    kt_daemon --standby nx "$REC" --kubeconfig "$KT_RECONCILER_KUBECONFIG" --config "$T/auth.yaml" \
        --metrics-cert-dir /nonexistent --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 || return 1
    c=$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$(kt_port nx metrics)/metrics")
    kt_daemon_stop nx
    test "$c" = 000
}
check missing-cert-dir-not-ready nx_no_tls

# ---- 3. the plain-HTTP switch: secureServing false, auth off (anyone may read) ----
config plain false false
if kt_daemon plain "$REC" "${RECF[@]}" --config "$T/plain.yaml"; then
    MP=$(kt_port plain metrics)
    get "http://127.0.0.1:$MP/metrics"
    answered plain-http-200 200 '^workqueue_depth\{name="trainjob_controller"\} '
    get "https://127.0.0.1:$MP/metrics" -k
    check plain-no-tls test "$CODE" = 000
    it_stop_clean plain
else
    bad plain-start "$(tail -5 "$T/plain.log")"
fi

# ---- 4. TLS without auth (the upstream default: secureServing true, auth.enabled false) ----
config tls true false
if kt_daemon tls "$REC" "${RECF[@]}" --config "$T/tls.yaml"; then
    MP=$(kt_port tls metrics)
    get "https://127.0.0.1:$MP/metrics" -k
    answered tls-no-auth-200 200 '^# TYPE '
    get "https://127.0.0.1:$MP/healthz" -k
    answered tls-no-auth-healthz 200 '^ok'
    it_stop_clean tls
else
    bad tls-start "$(tail -5 "$T/tls.log")"
fi

# ---- 5. kt-webhook's metrics: the same filter, as its own identity with deploy/rbac/webhook ----
WH=${KT_WEBHOOK_BIN:-"$it_root/build/plain/bin/kt-webhook"}
kc apply -k "$it_root/deploy/rbac/webhook" >/dev/null || bad webhook-rbac "apply failed"
check webhook-rbac-tokenreviews "$KT_KUBECTL" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" auth can-i create tokenreviews.authentication.k8s.io
check webhook-rbac-subjectaccessreviews "$KT_KUBECTL" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" auth can-i create subjectaccessreviews.authorization.k8s.io
WHF=(--kubeconfig "$KT_WEBHOOK_KUBECONFIG" --tls-cert-file "$T/certs/tls.crt" --tls-key-file "$T/certs/tls.key"
    --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0)
if kt_daemon wauth "$WH" "${WHF[@]}" --config "$T/auth.yaml"; then
    MP=$(kt_port wauth metrics)
    U="https://127.0.0.1:$MP/metrics"
    get "$U" --cacert "$T/certs/ca.crt"
    answered webhook-no-token-401 401 '^Unauthorized$'
    get "$U" --cacert "$T/certs/ca.crt" -H "Authorization: Bearer not-a-token"
    answered webhook-invalid-token-401 401 '^Unauthorized$'
    get "$U" --cacert "$T/certs/ca.crt" -H "Authorization: Bearer $NOBODY"
    answered webhook-no-role-403 403 "^Authorization denied for user system:serviceaccount:$NS:nobody\$"
    get "$U" --cacert "$T/certs/ca.crt" -H "Authorization: Bearer $SCRAPER"
    answered webhook-with-role-200 200 '^# TYPE kt_metrics_auth_reviews_total counter$'
    check webhook-with-role-webhook-metrics grep -q '^# TYPE controller_runtime_webhook_requests_in_flight gauge$' "$T/out"
    t1=$(reviews tokenreview) s1=$(reviews subjectaccessreview)
    get "$U" --cacert "$T/certs/ca.crt" -H "Authorization: Bearer $SCRAPER"
    check webhook-reviews-cached test -n "$t1" -a "$t1" = "$(reviews tokenreview)" -a -n "$s1" -a "$s1" = "$(reviews subjectaccessreview)"
    get "https://127.0.0.1:$MP/debug/pprof" --cacert "$T/certs/ca.crt" -H "Authorization: Bearer $SCRAPER"
    answered webhook-other-path-403 403 "^Authorization denied for user system:serviceaccount:$NS:scraper\$"
    it_stop_clean wauth
else
    bad webhook-auth-start "$(tail -5 "$T/wauth.log")"
fi
# without auth (the default) anyone may read the webhook's metrics, over TLS
if kt_daemon wtls "$WH" "${WHF[@]}" --config "$T/tls.yaml"; then
    MP=$(kt_port wtls metrics)
    get "https://127.0.0.1:$MP/metrics" --cacert "$T/certs/ca.crt"
    answered webhook-tls-no-auth-200 200 '^# TYPE '
    it_stop_clean wtls
else
    bad webhook-tls-start "$(tail -5 "$T/wtls.log")"
fi
# an identity that may not list runtimes: never ready, and /readyz says which list and why
cat >"$T/nobody.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kt, cluster: {server: "$KT_APISERVER", certificate-authority: "$KT_CA"}}]
users: [{name: nobody, user: {token: "$NOBODY"}}]
contexts: [{name: kt, context: {cluster: kt, user: nobody}}]
current-context: kt
EOF
kt_daemon --standby wnobody "$WH" --kubeconfig "$T/nobody.kubeconfig" --config "$T/tls.yaml" \
    --tls-cert-file "$T/certs/tls.crt" --tls-key-file "$T/certs/tls.key" --listen 127.0.0.1:0 \
    --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
nobody_named() { # /readyz of wnobody: 503 naming the forbidden runtime list
    [ -s "$T/wnobody.ports" ] || return 1
    curl -s -w ' %{http_code}' "http://127.0.0.1:$(jq -r .health "$T/wnobody.ports")/readyz" >"$T/wnobody.readyz"
    grep -qE '^runtime cache is not synced: (cluster)?trainingruntimes: list: .*[Ff]orbidden.* 503$' "$T/wnobody.readyz"
}
if kt_poll 60 nobody_named; then
    ok webhook-readyz-names-forbidden-list
else
    bad webhook-readyz-names-forbidden-list "readyz: $(cat "$T/wnobody.readyz" 2>/dev/null); log: $(tail -3 "$T/wnobody.log")"
fi
it_stop_clean wnobody
# reviewing needs a cluster: --objects with metrics.auth.enabled is refused at start
"$WH" --objects "$it_root/deploy/runtimes/torch-distributed.yaml" --config "$T/auth.yaml" \
    --tls-cert-file "$T/certs/tls.crt" --tls-key-file "$T/certs/tls.key" --listen 127.0.0.1:0 \
    --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 >"$T/wobj.log" 2>&1
rc=$?
check webhook-objects-refused test "$rc" != 0
check webhook-objects-message grep -q 'metrics.auth.enabled: reviewing tokens needs a cluster, not --objects' "$T/wobj.log"
kt_finish
