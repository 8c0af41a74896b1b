# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/integration/webhook_lib.sh - kt-webhook behind the REAL API server, for the
# webhook_*.sh tests (sourced after lib.sh; not executable, so run.sh does not run it).
#
# wh_setup: throwaway certificates (openssl), deploy/rbac/webhook applied, kt-webhook started
# as its own identity (KT_WEBHOOK_KUBECONFIG) on port 0 by kt_daemon (daemon "webhook": PID_webhook,
# $T/webhook.log, $T/webhook.ports), ready (/readyz, so the runtime cache has synced), and
# deploy/webhook/manifests.yaml registered with each service clientConfig rewritten to url
# https://127.0.0.1:PORT/PATH + caBundle. Sets PORT and W. At exit the configurations are
# removed and the daemon stopped (kt_cleanup). KT_WEBHOOK_BIN picks another build (e.g. TSan),
# KT_WEBHOOK_LOG_LEVEL the log level, KT_WEBHOOK_KEEP_LOG=FILE keeps the daemon's log.

bin="${KT_WEBHOOK_BIN:-$it_root/build/plain/bin/kt-webhook}"
W="$T/wh"
mkdir -p "$W"
kt_cleanup "kc delete validatingwebhookconfiguration validator.trainer.kubeflow.org --ignore-not-found;" \
    "kc delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org --ignore-not-found"
[ -n "${KT_WEBHOOK_KEEP_LOG:-}" ] && kt_cleanup "cp '$T/webhook.log' '$KT_WEBHOOK_KEEP_LOG'"

wh_setup() {
    [ -x "$bin" ] || {
        bad webhook-binary "$bin missing (make)"
        kt_finish
    }

    # ---- certificates, RBAC, daemon ------------------------------------------------------
    it_serving_certs "$W" kt-webhook-itest-ca 2 || {
        bad webhook-certs "openssl failed"
        kt_finish
    }
    if kc apply -k "$it_root/deploy/rbac/webhook" >"$W/rbac.log" 2>&1; then
        ok webhook-rbac-applied
    else
        bad webhook-rbac-applied "$(cat "$W/rbac.log")"
    fi
    if kt_daemon webhook "$bin" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" --tls-cert-file "$W/tls.crt" \
        --tls-key-file "$W/tls.key" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --log-level "${KT_WEBHOOK_LOG_LEVEL:-info}" >"$W/start.out"; then
        ok webhook-ready-after-cache-sync
    else
        bad webhook-ready-after-cache-sync "$(cat "$W/start.out")"
        kt_finish
    fi
    PORT=$(kt_port webhook webhook)

    # ---- register the configurations: service -> url + caBundle ----------------------------
    ca_b64=$(base64 -w0 <"$W/ca.crt")
    python3 - "$it_root/deploy/webhook/manifests.yaml" "$PORT" "$ca_b64" >"$W/hooks.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
for d in docs:
    for h in d["webhooks"]:
        path = h["clientConfig"]["service"]["path"]
        h["clientConfig"] = {"url": "https://127.0.0.1:%s%s" % (sys.argv[2], path),
                             "caBundle": sys.argv[3]}
print(yaml.safe_dump_all(docs, sort_keys=False))
PY
    if kc apply -f "$W/hooks.yaml" >"$W/hooks.log" 2>&1; then
        ok webhook-configurations-registered
    else
        bad webhook-configurations-registered "$(cat "$W/hooks.log")"
        kt_finish
    fi
}

# wh_effective YAML WANT - a server-side dry run of YAML prints WANT. The API server picks up
# webhook configurations asynchronously: callers poll it (kt_poll 30 wh_effective ...).
wh_effective() {
    echo "$1" | kc apply --dry-run=server -f - 2>&1 | grep -cF "$2" >/dev/null
}
