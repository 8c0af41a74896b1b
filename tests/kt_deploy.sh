# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/kt_deploy.sh - install and start kt on a local cluster made by tests/cluster/up.sh
# (sourced by scripts/demo/run.sh and the e2e tier). The caller sets D (the cluster directory, whose
# env is already sourced), ROOT (the repo), WEBHOOK, RECONCILER, KTCTL (binaries) and defines
# `kc` (kubectl as admin) and `die MESSAGE`. Every wait is a bounded poll.

KT_CONFIG=${KT_CONFIG:-$ROOT/deploy/manager/controller_manager_config.yaml}

# ktd_apply - RBAC of both daemons, the shipped runtimes and the public ConfigMap the Kubeflow
# SDK reads (deploy/public, when present). KTD_RUNTIMES (default deploy/runtimes; absolute, or
# relative to ROOT) names another kustomization for the runtimes, e.g. an overlay whose `images:`
# points them at local images.
ktd_apply() {
    local k p
    : >"$D/apply.log"
    for k in deploy/rbac/reconciler deploy/rbac/webhook "${KTD_RUNTIMES:-deploy/runtimes}" deploy/public; do
        case $k in /*) p=$k ;; *) p=$ROOT/$k ;; esac
        [ -d "$p" ] || continue
        kc apply --server-side -k "$p" >>"$D/apply.log" 2>&1 || {
            cat "$D/apply.log" >&2
            die "kubectl apply -k $k failed"
        }
    done
}

# ktd_certs - serving certificates for kt-webhook (ktctl certs, local mode).
ktd_certs() {
    rm -rf "$D/certs"
    "$KTCTL" certs --dir "$D/certs" --san IP:127.0.0.1 --san DNS:localhost || die "ktctl certs failed"
}

# ktd_wait_ready NAME PID PORTFILE - bounded poll until the daemon's /readyz answers 200.
ktd_wait_ready() {
    local port deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
        kill -0 "$2" 2>/dev/null || {
            tail -20 "$D/$1.log" >&2
            die "$1 exited (log: $D/$1.log)"
        }
        if [ -s "$3" ]; then
            port=$(jq -r .health "$3")
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ] &&
                return 0
        fi
        sleep 0.05
    done
    tail -20 "$D/$1.log" >&2
    die "$1 not ready after 60s (log: $D/$1.log)"
}

ktd_record_pid() { echo "$1 $(readlink "/proc/$1/exe")" >>"$D/daemons.pids"; }

# ktd_start_webhook - kt-webhook as its ServiceAccount; sets WPID, WPORT, WHPORT, WMPORT.
ktd_start_webhook() {
    rm -f "$D/kt-webhook.ports"
    setsid "$WEBHOOK" --config "$KT_CONFIG" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
        --tls-cert-file "$D/certs/tls.crt" --tls-key-file "$D/certs/tls.key" \
        --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
        --portfile "$D/kt-webhook.ports" </dev/null >>"$D/kt-webhook.log" 2>&1 &
    WPID=$!
    ktd_record_pid "$WPID"
    ktd_wait_ready kt-webhook "$WPID" "$D/kt-webhook.ports"
    WPORT=$(jq -r .webhook "$D/kt-webhook.ports")
    # shellcheck disable=SC2034 # WHPORT, WMPORT: read by the scripts that source this file
    WHPORT=$(jq -r .health "$D/kt-webhook.ports")
    # shellcheck disable=SC2034 # see WHPORT
    WMPORT=$(jq -r .metrics "$D/kt-webhook.ports")
}

# ktd_lease_holder - the identity holding kt-reconciler's Lease (empty when none).
ktd_lease_holder() {
    kc get lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null
}

# ktd_spawn_reconciler NAME - one kt-reconciler as its ServiceAccount (certificate folder: local
# mode, so a leader injects caBundle), logging to $D/NAME.log, ports in $D/NAME.ports; sets
# KTD_PID; waits until it is ready (it need not lead).
ktd_spawn_reconciler() {
    rm -f "$D/$1.ports"
    setsid "$RECONCILER" --config "$KT_CONFIG" --kubeconfig "$KT_RECONCILER_KUBECONFIG" \
        --cert-dir "$D/certs" --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
        --portfile "$D/$1.ports" </dev/null >>"$D/$1.log" 2>&1 &
    KTD_PID=$!
    ktd_record_pid "$KTD_PID"
    ktd_wait_ready "$1" "$KTD_PID" "$D/$1.ports"
}

# ktd_start_reconciler - the kt-reconciler (ktd_spawn_reconciler kt-reconciler); sets RPID,
# RHPORT; waits until some replica holds the Lease.
ktd_start_reconciler() {
    local deadline
    ktd_spawn_reconciler kt-reconciler
    # shellcheck disable=SC2034 # RPID, RHPORT: read by the scripts that source this file
    RPID=$KTD_PID
    # shellcheck disable=SC2034 # see RPID
    RHPORT=$(jq -r .health "$D/kt-reconciler.ports")
    deadline=$((SECONDS + 60))
    until [ -n "$(ktd_lease_holder)" ]; do
        [ $SECONDS -lt $deadline ] || die "no kt-reconciler leader after 60s (log: $D/kt-reconciler.log)"
        sleep 0.1
    done
}

# KTD_PROBE - a TrainJob every validating webhook of Trainer denies (a reserved env var): sent
# with --dry-run=server, its denial proves the API server really calls the webhook.
# shellcheck disable=SC2034 # KTD_PROBE: read by the scripts that source this file
KTD_PROBE='apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: kt-probe, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {env: [{name: PET_NNODES, value: "1"}]}'

# ktd_register_webhooks PROBE_YAML - deploy/webhook's configurations with url clientConfig;
# waits until the leader injected caBundle and the validator denies PROBE_YAML (a TrainJob that
# must be refused), i.e. until the API server really calls kt-webhook.
ktd_register_webhooks() {
    local want deadline
    kc create --dry-run=client -o json -f "$ROOT/deploy/webhook/manifests.yaml" |
        jq -s --arg base "https://127.0.0.1:$WPORT" '{apiVersion: "v1", kind: "List", items: [
            .[] | if .kind == "List" then .items[] else . end
            | .webhooks |= map(.clientConfig = {url: ($base + .clientConfig.service.path)})]}' \
            >"$D/webhooks.json" &&
        kc apply --server-side --force-conflicts -f "$D/webhooks.json" >"$D/apply-webhooks.log" 2>&1 || {
        cat "$D/apply-webhooks.log" >&2
        die "registering the webhook configurations failed"
    }
    want=$(base64 -w0 <"$D/certs/ca.crt")
    deadline=$((SECONDS + 30))
    until [ "$(ktd_bundles)" = "$want" ]; do
        [ $SECONDS -lt $deadline ] || die "kt-reconciler did not inject caBundle within 30s (log: $D/kt-reconciler.log)"
        sleep 0.1
    done
    deadline=$((SECONDS + 30))
    until ktd_denies "$1"; do
        [ $SECONDS -lt $deadline ] || die "the API server does not call kt-webhook after 30s"
        sleep 0.1
    done
}

# ktd_denies PROBE_YAML - a validating webhook denies PROBE_YAML (server-side dry run).
ktd_denies() { [[ "$(echo "$1" | kc apply --dry-run=server -f - 2>&1)" == *"denied the request"* ]]; }

ktd_bundles() {
    { kc get validatingwebhookconfiguration validator.trainer.kubeflow.org -o json &&
        kc get mutatingwebhookconfiguration defaulter.trainer.kubeflow.org -o json; } 2>/dev/null |
        jq -r '.webhooks[].clientConfig.caBundle // ""' | sort -u
}
