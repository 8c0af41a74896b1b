#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/status_server_test.sh ENV_FILE - the feature gate TrainJobStatus (docs/internals/upstream.md#trainjobstatus-plugin,
# docs/internals/upstream.md#status-server; alpha, off by default) on the real API server:
#  - kt-webhook without the gate has no status server; with --feature-gates TrainJobStatus=true
#    it serves one on --status-listen as its own identity (deploy/rbac/webhook plus
#    deploy/rbac/webhook/status-server), and the answers for: a real projected token with the
#    right audience (200, status.trainerStatus written with field manager trainer-status), no
#    or malformed Authorization (403), a token with another audience or of another namespace's
#    service account (403), bad JSON or a lastUpdatedTime that is not RFC 3339 (422 Invalid
#    payload), a lastUpdatedTime with a fraction and an offset (stored and echoed as metav1.Time
#    serialises: UTC, whole seconds), no trainerStatus (200, nothing
#    written), an invalid trainerStatus (422 with the API server's message), a missing TrainJob
#    (404 Train job not found), another path or method (404 Not found), a body over 64 KiB (413);
#  - kt-reconciler without the gate builds no <trainjob>-tls-config and no status env; with it,
#    the trainer container gets the env, the mount and the projected volume, and the ConfigMap
#    holds ca.crt copied from the certificate Secret in the operator namespace.
. "$(dirname "$0")/lib.sh"
WH=${KT_WEBHOOK_BIN:-"$it_root/build/plain/bin/kt-webhook"}
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}
kt_cleanup kc delete secret kubeflow-trainer-webhook-cert -n kubeflow-system --ignore-not-found

it_serving_certs "$T" kt-status-itest-ca 2 || {
    bad status-certs "openssl failed"
    kt_finish
}
kc create namespace kubeflow-system >/dev/null 2>&1 # the operator namespace; may exist
kc apply -k "$it_root/deploy/rbac/webhook" >"$T/rbac.log" 2>&1 &&
    kc apply -k "$it_root/deploy/rbac/webhook/status-server" >>"$T/rbac.log" 2>&1 &&
    kc apply -k "$it_root/deploy/rbac/reconciler" >>"$T/rbac.log" 2>&1 ||
    {
        bad status-rbac "$(cat "$T/rbac.log")"
        kt_finish
    }

# The webhook as its own identity with the test certificate (kt_daemon NAME "$WH" "${WHF[@]}" FLAG...).
WHF=(--kubeconfig "$KT_WEBHOOK_KUBECONFIG" --tls-cert-file "$T/tls.crt" --tls-key-file "$T/tls.key"
    --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 0)

# ---- gate off: no status server ----------------------------------------------------------
kt_daemon off "$WH" "${WHF[@]}" --status-listen 127.0.0.1:0
p=$(kt_port off webhook 2>/dev/null)
if [ -n "$p" ] && [ -z "$(jq -r '.status // empty' "$T/off.ports")" ] &&
    ! grep -q "status server" "$T/off.log"; then
    ok status-server-off-by-default
else
    bad status-server-off-by-default "ports: $(cat "$T/off.ports" 2>/dev/null); $(cat "$T/off.log")"
fi
kt_daemon_stop off

# ---- gate on ------------------------------------------------------------------------------
# kt_daemon waits for /readyz: the webhook's runtime cache has synced
kt_daemon on "$WH" "${WHF[@]}" --status-listen 127.0.0.1:0 --feature-gates TrainJobStatus=true
SP=$(jq -r '.status // empty' "$T/on.ports" 2>/dev/null)
if [ -z "$SP" ]; then
    bad status-server-listens "$(cat "$T/on.log")"
    kt_finish
fi
ok status-server-listens

ns=$(kt_ns status) || {
    bad status-ns "cannot create a namespace"
    kt_finish
}
other=$(kt_ns status-other) || {
    bad status-ns "cannot create a namespace"
    kt_finish
}
cat >"$T/tj.yaml" <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj
  namespace: $ns
spec:
  runtimeRef:
    name: torch-distributed
  suspend: true
YAML
kc apply -f "$T/tj.yaml" >/dev/null && kc -n "$ns" create serviceaccount trainer >/dev/null &&
    kc -n "$other" create serviceaccount trainer >/dev/null || {
    bad status-setup "cannot create the TrainJob or service accounts"
    kt_finish
}
aud="trainer.kubeflow.org/v1alpha1/namespaces/$ns/trainjobs/tj/status"
tok=$(kc -n "$ns" create token trainer --audience "$aud")
tok_aud=$(kc -n "$ns" create token trainer --audience "https://kubernetes.default.svc")
tok_other=$(kc -n "$other" create token trainer --audience "$aud")
url="https://127.0.0.1:$SP/apis/$aud"

# status_post URL TOKEN BODY_FILE - sets CODE, body in $T/resp
status_post() {
    local auth=()
    [ -n "$2" ] && auth=(-H "Authorization: $2")
    CODE=$(curl -sS --cacert "$T/ca.crt" -o "$T/resp" -w '%{http_code}' -X POST \
        -H 'Content-Type: application/json' "${auth[@]}" --data-binary "@$3" "$1") || CODE=000
}
replied() { # replied NAME CODE MESSAGE - the last answer
    if [ "$CODE" = "$2" ] && { [ -z "$3" ] || [ "$(jq -r .message "$T/resp")" = "$3" ]; }; then
        ok "$1"
    else
        bad "$1" "HTTP $CODE: $(head -c 400 "$T/resp")"
    fi
}
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf '{"trainerStatus":{"progressPercentage":42,"estimatedRemainingSeconds":90,"metrics":[{"name":"loss","value":"0.25"}],"lastUpdatedTime":"%s"}}' "$now" >"$T/ok.json"
printf '{"trainerStatus": ' >"$T/bad.json"
printf '{}' >"$T/empty.json"
printf '{"trainerStatus":{"progressPercentage":200,"lastUpdatedTime":"%s"}}' "$now" >"$T/invalid.json"
head -c 70000 /dev/zero | tr '\0' ' ' >"$T/big.json"
# lastUpdatedTime as a Python client sends it (fraction, +00:00) and a time Go cannot parse
printf '{"trainerStatus":{"progressPercentage":42,"lastUpdatedTime":"%s.858523+00:00"}}' "${now%Z}" >"$T/frac.json"
printf '{"trainerStatus":{"progressPercentage":42,"lastUpdatedTime":"yesterday"}}' >"$T/badtime.json"

status_post "$url" "Bearer $tok" "$T/ok.json"
replied status-update-accepted 200 ""
check status-update-echoes jq -e '.trainerStatus.progressPercentage == 42' "$T/resp"
check status-trainerstatus-written sh -c "test \"\$(\"$KT_KUBECTL\" --kubeconfig \"$KT_ADMIN_KUBECONFIG\" -n $ns get trainjob tj -o jsonpath='{.status.trainerStatus.progressPercentage}/{.status.trainerStatus.metrics[0].value}')\" = 42/0.25"
check status-field-manager-trainer-status sh -c "\"$KT_KUBECTL\" --kubeconfig \"$KT_ADMIN_KUBECONFIG\" -n $ns get trainjob tj --show-managed-fields -o json | jq -e '[.metadata.managedFields[] | select(.manager == \"trainer-status\" and .subresource == \"status\")] | length == 1'"
status_post "$url" "Bearer $tok" "$T/frac.json"
replied status-time-fraction-accepted 200 ""
check status-time-echoed-as-metav1 jq -e --arg t "$now" '.trainerStatus.lastUpdatedTime == $t' "$T/resp"
check status-time-stored-as-metav1 sh -c "test \"\$(\"$KT_KUBECTL\" --kubeconfig \"$KT_ADMIN_KUBECONFIG\" -n $ns get trainjob tj -o jsonpath='{.status.trainerStatus.lastUpdatedTime}')\" = $now"
status_post "$url" "Bearer $tok" "$T/badtime.json"
replied status-bad-time-422 422 "Invalid payload"
status_post "$url" "bearer   $tok" "$T/ok.json"
replied status-bearer-scheme-case-insensitive 200 ""
status_post "$url" "" "$T/ok.json"
replied status-no-token-forbidden 403 Forbidden
status_post "$url" "Bearer $tok extra" "$T/ok.json"
replied status-three-fields-forbidden 403 Forbidden
status_post "$url" "Basic $tok" "$T/ok.json"
replied status-other-scheme-forbidden 403 Forbidden
status_post "$url" "Bearer $tok_aud" "$T/ok.json"
replied status-wrong-audience-forbidden 403 Forbidden
status_post "$url" "Bearer $tok_other" "$T/ok.json"
replied status-other-namespace-forbidden 403 Forbidden
status_post "$url" "Bearer not-a-token" "$T/ok.json"
replied status-garbage-token-forbidden 403 Forbidden
status_post "$url" "Bearer $tok" "$T/bad.json"
replied status-bad-json-422 422 "Invalid payload"
status_post "$url" "Bearer $tok" "$T/empty.json"
replied status-no-trainerstatus-200 200 ""
check status-no-trainerstatus-echo jq -e '. == {}' "$T/resp"
status_post "$url" "Bearer $tok" "$T/invalid.json"
if [ "$CODE" = 422 ] && jq -r .message "$T/resp" | grep -c 'progressPercentage' >/dev/null; then
    ok status-invalid-status-422
else
    bad status-invalid-status-422 "HTTP $CODE: $(head -c 400 "$T/resp")"
fi
check status-invalid-not-written sh -c "test \"\$(\"$KT_KUBECTL\" --kubeconfig \"$KT_ADMIN_KUBECONFIG\" -n $ns get trainjob tj -o jsonpath='{.status.trainerStatus.progressPercentage}')\" = 42"
aud_missing="trainer.kubeflow.org/v1alpha1/namespaces/$ns/trainjobs/missing/status"
tok_missing=$(kc -n "$ns" create token trainer --audience "$aud_missing")
status_post "https://127.0.0.1:$SP/apis/$aud_missing" "Bearer $tok_missing" "$T/ok.json"
replied status-missing-trainjob-404 404 "Train job not found"
status_post "https://127.0.0.1:$SP/apis/trainer.kubeflow.org/v1alpha1/namespaces/$ns/trainjobs/tj" "Bearer $tok" "$T/ok.json"
replied status-other-path-404 404 "Not found"
CODE=$(curl -sS --cacert "$T/ca.crt" -o "$T/resp" -w '%{http_code}' "$url") || CODE=000
replied status-get-404 404 "Not found"
status_post "$url" "Bearer $tok" "$T/big.json"
replied status-body-over-64k-413 413 "Payload too large"
# the same token for another TrainJob's path: its audience does not match
status_post "https://127.0.0.1:$SP/apis/$aud_missing" "Bearer $tok" "$T/ok.json"
replied status-token-for-other-trainjob-forbidden 403 Forbidden
kt_daemon_stop on

# ---- the reconciler's TrainJobStatus plugin -----------------------------------------------
opns=kubeflow-system
kc -n "$opns" create secret generic kubeflow-trainer-webhook-cert --from-file=ca.crt="$T/ca.crt" \
    --dry-run=client -o yaml | kc apply -f - >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: rt
  namespace: $ns
spec:
  mlPolicy:
    numNodes: 1
$(it_runtime_template)
YAML
# The reconciler in local certificate mode (no Secret written): kt_daemon NAME "$REC" "${RECF[@]}" FLAG...
mkdir -p "$T/certdir"
cp "$T/ca.crt" "$T/certdir/ca.crt"
RECF=(--kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 --metrics-listen 0 --cert-dir "$T/certdir")
# job NAME - create a TrainJob on runtime rt and wait (bounded) for its JobSet
job() {
    kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: $ns
spec:
  runtimeRef:
    name: rt
    kind: TrainingRuntime
YAML
    kt_poll 60 jobset_json "$1"
}
jobset_json() { kc -n "$ns" get jobset "$1" -o json >"$T/$1.jobset.json" 2>/dev/null; } # jobset_json NAME
node_env() { # node_env JOBSET_JSON NAME
    jq -r --arg n "$2" '.spec.replicatedJobs[0].template.spec.template.spec.containers[0].env // [] | map(select(.name == $n))[0].value // empty' "$1"
}

kt_daemon recoff "$REC" "${RECF[@]}"
if job off-job && [ -z "$(node_env "$T/off-job.jobset.json" KUBEFLOW_TRAINER_SERVER_URL)" ] &&
    ! kc -n "$ns" get configmap off-job-tls-config >/dev/null 2>&1; then
    ok status-plugin-off-by-default
else
    bad status-plugin-off-by-default "$(cat "$T/recoff.log" | tail -5)"
fi
kt_daemon_stop recoff

kt_daemon recon "$REC" "${RECF[@]}" --feature-gates TrainJobStatus=true
if job on-job; then
    ok status-plugin-jobset-built
    js="$T/on-job.jobset.json"
    want="https://kubeflow-trainer-controller-manager.$opns.svc:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/$ns/trainjobs/on-job/status"
    check status-plugin-url test "$(node_env "$js" KUBEFLOW_TRAINER_SERVER_URL)" = "$want"
    check status-plugin-ca-env test "$(node_env "$js" KUBEFLOW_TRAINER_SERVER_CA_CERT)" = /var/run/secrets/kubeflow/trainer/ca.crt
    check status-plugin-token-env test "$(node_env "$js" KUBEFLOW_TRAINER_SERVER_TOKEN)" = /var/run/secrets/kubeflow/trainer/token
    check status-plugin-volume jq -e --arg a "trainer.kubeflow.org/v1alpha1/namespaces/$ns/trainjobs/on-job/status" \
        '.spec.replicatedJobs[0].template.spec.template.spec.volumes[] | select(.name == "kubeflow-trainer-token") | .projected.sources[0].serviceAccountToken.audience == $a and .projected.sources[1].configMap.name == "on-job-tls-config"' "$js"
    check status-plugin-mount jq -e '.spec.replicatedJobs[0].template.spec.template.spec.containers[0].volumeMounts[] | select(.name == "kubeflow-trainer-token") | .readOnly == true and .mountPath == "/var/run/secrets/kubeflow/trainer"' "$js"
    kc -n "$ns" get configmap on-job-tls-config -o json >"$T/cm.json" 2>&1
    check status-plugin-ca-configmap sh -c "jq -j '.data[\"ca.crt\"]' \"$T/cm.json\" | cmp - \"$T/ca.crt\""
    check status-plugin-configmap-owned jq -e '.metadata.ownerReferences[0].kind == "TrainJob" and .metadata.ownerReferences[0].controller == true' "$T/cm.json"
else
    bad status-plugin-jobset-built "$(tail -5 "$T/recon.log")"
fi
# without the Secret: the build fails with upstream's message (a Warning event)
kc -n "$opns" delete secret kubeflow-trainer-webhook-cert >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: nosecret
  namespace: $ns
spec:
  runtimeRef:
    name: rt
    kind: TrainingRuntime
YAML
secret_event() { # the Warning event of nosecret names the missing Secret
    kc -n "$ns" get events --field-selector involvedObject.name=nosecret -o json 2>/dev/null |
        jq -e '.items[] | select(.message | contains("failed to look up status server tls secret"))' >/dev/null
}
if kt_poll 60 secret_event && ! kc -n "$ns" get jobset nosecret >/dev/null 2>&1; then
    ok status-plugin-missing-secret-event
else
    bad status-plugin-missing-secret-event "$(tail -5 "$T/recon.log")"
fi
kt_daemon_stop recon
# sanitizer builds (KT_WEBHOOK_BIN / KT_RECONCILER_BIN) report into the logs at exit
if grep -lE 'Sanitizer|runtime error' "$T"/*.log; then
    bad status-sanitizers "$(grep -hE -A5 'Sanitizer|runtime error' "$T"/*.log | sed -n 1,40p)"
else
    ok status-daemons-clean-exit
fi
kt_finish
