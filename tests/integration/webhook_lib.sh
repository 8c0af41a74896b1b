# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/integration/webhook_lib.sh - kt-webhook behind the REAL API server, for the
# webhook_*.sh tests (sourced after lib.sh; not executable, so run.sh does not run it).
#
# wh_setup: throwaway certificates (openssl), deploy/rbac/webhook applied, kt-webhook started
# as its own identity (KT_WEBHOOK_KUBECONFIG) on port 0 with --portfile, ready (/readyz, so
# the runtime cache has synced), and deploy/webhook/manifests.yaml registered with each
# service clientConfig rewritten to url https://127.0.0.1:PORT/PATH + caBundle. Sets PORT,
# HPORT, WPID, W. The EXIT trap removes the configurations and stops the daemon.
# KT_WEBHOOK_BIN picks another build (e.g. TSan), KT_WEBHOOK_LOG_LEVEL the log level,
# KT_WEBHOOK_KEEP_LOG=FILE keeps the daemon's stderr.

bin="${KT_WEBHOOK_BIN:-$it_root/build/plain/bin/kt-webhook}"
W="$T/wh"
mkdir -p "$W"
WPID=""
stop_webhook() {
    kc delete validatingwebhookconfiguration validator.trainer.kubeflow.org --ignore-not-found >/dev/null 2>&1
    kc delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org --ignore-not-found >/dev/null 2>&1
    if [ -n "$WPID" ]; then
        kill -TERM "$WPID" 2>/dev/null
        wait "$WPID" 2>/dev/null
        WPID=""
    fi
    [ -n "${KT_WEBHOOK_KEEP_LOG:-}" ] && cp "$W/stderr" "$KT_WEBHOOK_KEEP_LOG"
    rm -rf "$T"
}
trap stop_webhook EXIT

wh_setup() {
    [ -x "$bin" ] || {
        bad webhook-binary "$bin missing (make)"
        kt_finish
}

# ---- certificates, RBAC, daemon ----------------------------------------------------------
it_serving_certs "$W" kt-webhook-itest-ca 2 || {
    bad webhook-certs "openssl failed"
    kt_finish
}

if kc apply -k "$it_root/deploy/rbac/webhook" >"$W/rbac.log" 2>&1; then
    ok webhook-rbac-applied
else
    bad webhook-rbac-applied "$(cat "$W/rbac.log")"
fi

"$bin" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" --tls-cert-file "$W/tls.crt" \
    --tls-key-file "$W/tls.key" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
    --metrics-listen 127.0.0.1:0 --portfile "$W/ports" --log-level "${KT_WEBHOOK_LOG_LEVEL:-info}" \
    2>"$W/stderr" &
WPID=$!
deadline=$((SECONDS + 30))
until [ -s "$W/ports" ] || [ $SECONDS -ge $deadline ] || it_dead "$WPID"; do sleep 0.02; done
if [ ! -s "$W/ports" ]; then
    bad webhook-start "no portfile: $(cat "$W/stderr")"
    kt_finish
fi
PORT=$(jq .webhook "$W/ports")
HPORT=$(jq .health "$W/ports")
until [ "$(curl -s --max-time 2 "http://127.0.0.1:$HPORT/readyz")" = ok ] ||
    [ $SECONDS -ge $deadline ] || it_dead "$WPID"; do sleep 0.02; done
if [ "$(curl -s --max-time 2 "http://127.0.0.1:$HPORT/readyz")" = ok ]; then
    ok webhook-ready-after-cache-sync
else
    bad webhook-ready-after-cache-sync "readyz: $(curl -s "http://127.0.0.1:$HPORT/readyz")"
    cat "$W/stderr"
    kt_finish
fi

# ---- register the configurations: service -> url + caBundle --------------------------------
ca_b64=$(base64 -w0 <"$W/ca.crt")
python3 - "$it_root/deploy/webhook/manifests.yaml" "$PORT" "$ca_b64" >"$W/hooks.yaml" <<'EOF'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
for d in docs:
    for h in d["webhooks"]:
        path = h["clientConfig"]["service"]["path"]
        h["clientConfig"] = {"url": "https://127.0.0.1:%s%s" % (sys.argv[2], path),
                             "caBundle": sys.argv[3]}
print(yaml.safe_dump_all(docs, sort_keys=False))
EOF
if kc apply -f "$W/hooks.yaml" >"$W/hooks.log" 2>&1; then
    ok webhook-configurations-registered
else
    bad webhook-configurations-registered "$(cat "$W/hooks.log")"
    kt_finish
fi

}

# wh_wait_effective YAML WANT - the API server picks up webhook configurations
# asynchronously: poll (bounded) a server-side dry run of YAML until its output has WANT.
wh_wait_effective() {
    local deadline=$((SECONDS + 30))
    until echo "$1" | kc apply --dry-run=server -f - 2>&1 | grep -cF "$2" >/dev/null ||
        [ $SECONDS -ge $deadline ]; do sleep 0.1; done
}
