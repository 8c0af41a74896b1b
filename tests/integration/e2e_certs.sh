#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/e2e_certs.sh ENV_FILE - certificates end to end on the REAL API server.
#
# Both daemons run as their own identities with exactly deploy/rbac/ applied. kt-reconciler's
# leader owns the Secret kubeflow-trainer-webhook-cert (managed mode, --cert-sans IP:127.0.0.1
# because the API server reaches the webhook at https://127.0.0.1:PORT), a small loop plays
# kubelet (copies the Secret into the folder kt-webhook reads, atomically, as a Secret volume
# would), and kt-webhook serves whatever lands there. Checked:
# - kt-webhook is not ready until certificates exist, then ready;
# - the RBAC is exactly enough (can-i yes and no);
# - a CA about to expire is rotated under a stream of admissions (server-side dry runs through
#   both webhooks) and none fails: the new caBundle (new CA + old CA) is injected before the
#   Secret changes, and the webhook reloads the new pair;
# - the API server trusts the new certificate through the injected caBundle; TrainJobs
#   are admitted and reconciled into JobSets;
# - a caBundle overwritten by someone else is put back by the leader.
. "$(dirname "$0")/lib.sh"

WEBHOOK=${KT_WEBHOOK_BIN:-$it_root/build/plain/bin/kt-webhook}
REC=${KT_RECONCILER_BIN:-$it_root/build/plain/bin/kt-reconciler}
KTCTL=$it_root/build/plain/bin/ktctl
CONFIG=$it_root/deploy/manager/controller_manager_config.yaml
SECRET=kubeflow-trainer-webhook-cert
W="$T/e2e"
M="$W/mount" # what a kubelet would mount at /tmp/k8s-webhook-server/serving-certs
mkdir -p "$W" "$M"
# At exit (last registered first): the admission stream and "kubelet" stop, the daemons
# (kt_daemon) stop, then the configurations and the Secret go.
kt_cleanup "kc delete validatingwebhookconfiguration validator.trainer.kubeflow.org --ignore-not-found;" \
    "kc delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org --ignore-not-found;" \
    "kc delete secret $SECRET -n kubeflow-system --ignore-not-found"

b64pem() { base64 -w0 <"$1"; }

for b in "$WEBHOOK" "$REC" "$KTCTL"; do
    [ -x "$b" ] || { bad e2e-binaries "$b missing (make)"; kt_finish; }
done
if [[ "$("$REC" --help 2>&1)" != *--cert-sans* ]]; then
    bad e2e-reconciler-rotator "kt-reconciler has no certificate rotator flags (--cert-dir, --cert-sans): certs/rotator.h is not wired into reconciler/main.c"
    kt_finish
fi

# ---- RBAC: exactly deploy/rbac -------------------------------------------------------------
kc apply --server-side -k "$it_root/deploy/rbac/reconciler" >"$W/rbac.log" 2>&1 &&
    kc apply --server-side -k "$it_root/deploy/rbac/webhook" >>"$W/rbac.log" 2>&1 &&
    kc apply --server-side -k "$it_root/deploy/runtimes" >>"$W/rbac.log" 2>&1
check e2e-rbac-and-runtimes-applied test $? -eq 0
can_i() { # can_i KUBECONFIG VERB RESOURCE [ARGS...] - "yes" or "no"
    local k=$1
    shift
    "$KT_KUBECTL" --kubeconfig "$k" auth can-i "$@" 2>/dev/null || true
}
rc_=$KT_RECONCILER_KUBECONFIG
wh_=$KT_WEBHOOK_KUBECONFIG
rbac_table() {
    local got
    got="$(can_i "$rc_" get secret/$SECRET -n kubeflow-system) $(can_i "$rc_" update secret/$SECRET -n kubeflow-system)"
    got="$got $(can_i "$rc_" update secret/other -n kubeflow-system) $(can_i "$rc_" update secret/$SECRET -n default)"
    got="$got $(can_i "$rc_" update validatingwebhookconfigurations/validator.trainer.kubeflow.org)"
    got="$got $(can_i "$rc_" update mutatingwebhookconfigurations/defaulter.trainer.kubeflow.org)"
    got="$got $(can_i "$rc_" update validatingwebhookconfigurations/someone-else)"
    got="$got $(can_i "$rc_" delete validatingwebhookconfigurations/validator.trainer.kubeflow.org)"
    got="$got $(can_i "$wh_" get secret/$SECRET -n kubeflow-system)"
    got="$got $(can_i "$wh_" update validatingwebhookconfigurations/validator.trainer.kubeflow.org)"
    test "$got" = "yes yes no no yes yes no no no no"
}
check e2e-rbac-exact rbac_table

# ---- a CA 30 days from expiry, a fresh serving certificate, in the Secret ----------------
kc delete secret "$SECRET" -n kubeflow-system --ignore-not-found >/dev/null 2>&1
old_at=$(($(date +%s) - 10 * 365 * 86400 + 30 * 86400))
"$KTCTL" certs -q --dir "$W/old" --issued-at "$old_at" --san IP:127.0.0.1 &&
    "$KTCTL" certs -q --dir "$W/old" --renew-server --san IP:127.0.0.1 &&
    kc create secret generic "$SECRET" -n kubeflow-system --from-file="$W/old/ca.crt" \
        --from-file="$W/old/ca.key" --from-file="$W/old/tls.crt" --from-file="$W/old/tls.key" >/dev/null
check e2e-aging-secret-created test $? -eq 0

# ---- kt-webhook: not ready without certificates ----------------------------------------
kt_daemon --standby wh "$WEBHOOK" --config "$CONFIG" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
    --tls-cert-file "$M/tls.crt" --tls-key-file "$M/tls.key" --listen 127.0.0.1:0 \
    --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 || { bad e2e-webhook-start "$(cat "$T/wh.log")"; kt_finish; }
PORT=$(kt_port wh webhook)
HPORT=$(kt_port wh health)
out=$(curl -s --max-time 2 -w ' %{http_code}' "http://127.0.0.1:$HPORT/readyz")
check e2e-webhook-not-ready-without-certs test "$out" = "certificates are not ready 503"

# ---- "kubelet": copy the Secret into the mounted folder when it changes -----------------
sync_secret() {
    local last="" cur k
    while [ ! -f "$W/stop-sync" ]; do
        if kc get secret "$SECRET" -n kubeflow-system -o json >"$W/sync.json" 2>/dev/null; then
            cur=$(jq -r '.data["tls.crt"] // ""' "$W/sync.json")
            if [ -n "$cur" ] && [ "$cur" != "$last" ]; then
                mkdir -p "$W/stage"
                for k in ca.crt tls.key tls.crt; do
                    jq -r --arg k "$k" '.data[$k] // ""' "$W/sync.json" | base64 -d >"$W/stage/$k"
                done
                # A Secret volume swaps all files at once; the webhook acts on tls.crt and
                # checks the pair, so the key goes first.
                mv "$W/stage/ca.crt" "$M/ca.crt"
                mv "$W/stage/tls.key" "$M/tls.key"
                mv "$W/stage/tls.crt" "$M/tls.crt"
                last=$cur
                echo "synced $(date +%T.%N)" >>"$W/sync.log"
            fi
        fi
        sleep 0.1
    done
}
sync_secret &
kt_cleanup "touch $W/stop-sync; wait $!"
check e2e-webhook-ready-once-certs-land kt_poll 30 kt_ready wh

# ---- webhook configurations, trusted with the (aging) CA ---------------------------------
kc create --dry-run=client -o json -f "$it_root/deploy/webhook/manifests.yaml" |
    jq -s --arg base "https://127.0.0.1:$PORT" --arg ca "$(b64pem "$W/old/ca.crt")" '
        {apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
        | .webhooks |= map(.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
        >"$W/hooks.json" &&
    kc apply --server-side --force-conflicts -f "$W/hooks.json" >/dev/null
check e2e-webhook-configurations-registered test $? -eq 0

NS=$(kt_ns e2e-certs) || { bad e2e-namespace "cannot create a namespace"; kt_finish; }
tj_yaml() { # tj_yaml NAME [ENV_NAME]
    cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: $NS
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 1
    env:
      - name: ${2:-EPOCHS}
        value: "1"
EOF
}
# Wait (bounded) until the API server uses the new configurations: our validator denies.
denied() { [[ "$(tj_yaml x PET_NNODES | kc create --dry-run=server -f - 2>&1)" == *"denied the request"* ]]; }
check e2e-validator-answers kt_poll 30 denied

# ---- a stream of admissions across the rotation ------------------------------------------
stream() {
    local i=0 out
    while [ ! -f "$W/stop-stream" ]; do
        i=$((i + 1))
        if out=$(tj_yaml "s-$i" | kc create --dry-run=server -f - 2>&1); then
            echo "ok $(date +%s%N)" >>"$W/stream.log"
        else
            echo "FAIL $(date +%s%N) $out" >>"$W/stream.log"
        fi
    done
}
: >"$W/stream.log"
stream &
STREAMPID=$!
kt_cleanup "touch $W/stop-stream; wait $STREAMPID"
n_ok() { grep -c '^ok ' "$W/stream.log"; }
at_least() { [ "$(n_ok)" -ge "$1" ]; }
check e2e-stream-flows-before-rotation kt_poll 60 at_least 10

# the leader: --standby, its readiness is not this test's subject (the rotation is)
kt_daemon --standby rec "$REC" --config "$CONFIG" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
    --cert-sans IP:127.0.0.1 --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 ||
    bad e2e-reconciler-start "$(tail -5 "$T/rec.log")"
old_ca=$(b64pem "$W/old/ca.crt")
secret_ca() { kc get secret "$SECRET" -n kubeflow-system -o jsonpath='{.data.ca\.crt}'; }
rotated() { local c; c=$(secret_ca) && [ -n "$c" ] && [ "$c" != "$old_ca" ]; }
check e2e-leader-rotates-aging-ca kt_poll 60 rotated
secret_ca | base64 -d >"$W/new-ca.crt"
# The webhook serves the new pair once "kubelet" copied it: TLS verifies against the new CA.
serves_new() { [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$W/new-ca.crt" "https://127.0.0.1:$PORT/healthz")" != 000 ]; }
check e2e-webhook-reloads-new-pair kt_poll 30 serves_new
n_before=$(n_ok)
check e2e-stream-flows-after-rotation kt_poll 60 at_least $((n_before + 20))
touch "$W/stop-stream"
wait "$STREAMPID" 2>/dev/null
fails=$(grep -c '^FAIL ' "$W/stream.log")
if [ "$fails" -eq 0 ]; then
    ok "e2e-no-admission-failed-during-rotation ($(n_ok) admissions)"
else
    bad e2e-no-admission-failed-during-rotation "$fails of $(wc -l <"$W/stream.log") failed: $(grep -m3 '^FAIL ' "$W/stream.log")"
fi

# ---- what the leader left behind -----------------------------------------------------------
bundle_check() {
    local pem
    for k in validatingwebhookconfiguration/validator.trainer.kubeflow.org \
        mutatingwebhookconfiguration/defaulter.trainer.kubeflow.org; do
        kc get "$k" -o json | jq -r '.webhooks[].clientConfig.caBundle'
    done | sort -u >"$W/bundles"
    [ "$(wc -l <"$W/bundles")" -eq 1 ] || return 1
    pem=$(base64 -d <"$W/bundles")
    # new CA first, then the old one (still valid for 30 days)
    [ "$pem" = "$(cat "$W/new-ca.crt")"$'\n'"$(cat "$W/old/ca.crt")" ] ||
        [ "$pem" = "$(cat "$W/new-ca.crt")$(cat "$W/old/ca.crt")" ]
}
check e2e-cabundle-new-then-old-ca bundle_check
prev_ok() { test "$(kc get secret "$SECRET" -n kubeflow-system -o jsonpath='{.data.ca-previous\.crt}')" = "$old_ca"; }
check e2e-secret-keeps-previous-ca prev_ok
new_tls_ok() {
    kc get secret "$SECRET" -n kubeflow-system -o jsonpath='{.data.tls\.crt}' | base64 -d >"$W/new-tls.crt" &&
        openssl verify -CAfile "$W/new-ca.crt" "$W/new-tls.crt" &&
        ! openssl verify -CAfile "$W/old/ca.crt" "$W/new-tls.crt"
}
check e2e-new-serving-cert-chains-to-new-ca new_tls_ok
check e2e-reconciler-logged-rotation grep -q 'issued a new CA' "$T/rec.log"

# ---- both daemons together: admitted and reconciled ----------------------------------------
tj_yaml e2e-real | kc create -f - >/dev/null
check e2e-trainjob-reconciled-into-jobset kc wait --for=create "jobset/e2e-real" -n "$NS" --timeout=60s
out=$(tj_yaml e2e-bad PET_NNODES | kc create -f - 2>&1)
check e2e-trainjob-denied-through-trusted-webhook test "${out#*admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request: }" != "$out"

# ---- drift: someone else's caBundle is replaced by the leader ------------------------------
kc patch mutatingwebhookconfiguration defaulter.trainer.kubeflow.org --type=json \
    -p '[{"op":"replace","path":"/webhooks/0/clientConfig/caBundle","value":"QUJD"}]' >/dev/null
repaired() { bundle_check; }
check e2e-leader-repairs-overwritten-cabundle kt_poll 30 repaired

touch "$W/stop-sync"
kt_finish
