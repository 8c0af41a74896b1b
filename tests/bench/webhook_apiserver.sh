#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/webhook_apiserver.sh [BUILD_DIR] - kt-webhook as the API server times it, beside
# upstream v2.3.0's webhook server on the same creates (docs/benchmarks.md#the-webhook-as-the-api-server-sees-it).
# One plain plane (tests/cluster/up.sh: API server + etcd, the CRDs, the shipped runtimes); kt-webhook
# from BUILD_DIR (build/plain) as its ServiceAccount (tests/kt_deploy.sh) registered under the
# shipped webhook names; upstream's manager (tests/parity/upstream_lib.sh; left out when its binary
# is not built) registered again under the names prefixed `up.`; with WH_REF=BINARY a second
# kt-webhook (e.g. an older build) under `ref.`. Every create so calls every server, in the same
# instant and under the same load. WH_ROUNDS (2) rounds of WH_N (300) suspended TrainJob creates
# at WH_RATE (20) per second over WH_CONNS (1) keep-alive connections; with WH_RECONCILER=1 a
# kt-reconciler runs during the rounds (the load a TrainJob controller puts on the API server while
# TrainJobs are created, as kt's side of `make scale` has it). Each round prints
# (tests/bench/webhook_apiserver.py) the API server's apiserver_admission_webhook_admission_duration_seconds per
# webhook, each server's CPU and its threads' wait for a CPU after wake-ups (schedstat), and
# the connections each server saw. Asserts nothing; exits 1 when the plane or a create fails.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
b=${1:-build/plain}
WEBHOOK=$ROOT/$b/bin/kt-webhook
RECONCILER=$ROOT/$b/bin/kt-reconciler
KTCTL=$ROOT/$b/bin/ktctl
for x in "$WEBHOOK" "$RECONCILER" "$KTCTL"; do
    [ -x "$x" ] || make -s "$x" >/dev/null || exit 1
done
. tests/parity/upstream_lib.sh
. tests/lib_kube.sh # kc, kt_poll, kt_cleanup, $T
D=$T/plane
UP=""
WPID="" RPID="" REF_PID=""
wa_die() {
    echo "webhook_apiserver: $*" >&2
    exit 1
}
die() { wa_die "$@"; } # for tests/kt_deploy.sh
wa_stop() {
    local p
    for p in $RPID $REF_PID $WPID; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    [ -z "$UP" ] || up_stop "$UP" 2>/dev/null
    [ -f "$D/env" ] && tests/cluster/down.sh "$D" >/dev/null 2>&1
}
kt_cleanup wa_stop

mkdir -p "$D"
tests/cluster/up.sh "$D" >"$T/up.log" 2>&1 || {
    tail -20 "$T/up.log" >&2
    wa_die "tests/cluster/up.sh failed"
}
. "$D/env"
. tests/kt_deploy.sh
ktd_apply
ktd_certs >/dev/null
ktd_start_webhook
procs=("kt:$WPID:$WPORT")
# hooks PREFIX PORT CA - deploy/webhook's configurations renamed with PREFIX, pointed at PORT.
hooks() {
    kc create --dry-run=client -o json -f deploy/webhook/manifests.yaml |
        jq -s --arg p "$1" --arg base "https://127.0.0.1:$2" --arg ca "$(base64 -w0 <"$3")" '.[]
            | if .kind == "List" then .items[] else . end | .metadata.name = ($p + .metadata.name)
            | .webhooks |= map(.name = ($p + .name)
                | .clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})'
}
{
    hooks "" "$WPORT" "$D/certs/ca.crt"
    if [ -n "${WH_REF:-}" ]; then
        rm -f "$D/ref.ports"
        setsid "$WH_REF" --config "$KT_CONFIG" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" \
            --tls-cert-file "$D/certs/tls.crt" --tls-key-file "$D/certs/tls.key" --listen 127.0.0.1:0 \
            --health-listen 127.0.0.1:0 --metrics-listen 0 --portfile "$D/ref.ports" \
            </dev/null >>"$D/ref-webhook.log" 2>&1 &
        REF_PID=$!
        ktd_wait_ready ref-webhook "$REF_PID" "$D/ref.ports"
        procs+=("ref:$REF_PID:$(jq -r .webhook "$D/ref.ports")")
        hooks ref. "$(jq -r .webhook "$D/ref.ports")" "$D/certs/ca.crt"
    fi
    if [ -x "$UP_BIN" ] && up_start "$D" "$T/up" 2>>"$T/up.log"; then
        UP=$T/up
        procs+=("upstream:$(sed -n 's/^UP_PID=//p' "$UP/env"):$(sed -n 's/^UP_WEBHOOK_PORT=//p' "$UP/env")")
        hooks up. "$(sed -n 's/^UP_WEBHOOK_PORT=//p' "$UP/env")" "$UP/certs/ca.crt"
    else
        echo "webhook_apiserver: upstream's manager not built or not started ($UP_BIN): kt alone" >&2
    fi
} >"$D/webhooks.ndjson" # (no pipe: REF_PID, UP and procs stay in this shell)
jq -s '{apiVersion: "v1", kind: "List", items: .}' "$D/webhooks.ndjson" >"$D/webhooks.json"
kc apply --server-side --force-conflicts -f "$D/webhooks.json" >"$D/apply-webhooks.log" 2>&1 ||
    wa_die "registering the webhook configurations failed: $(cat "$D/apply-webhooks.log")"
kt_poll -m "the API server calls the webhooks" 30 ktd_denies "$KTD_PROBE" || wa_die "no webhook call after 30s"
if [ "${WH_RECONCILER:-0}" = 1 ]; then
    ktd_start_reconciler
    procs+=("reconciler:$RPID")
fi
procs+=("apiserver:$KT_APISERVER_PID")
rc=0
for r in $(seq "${WH_ROUNDS:-2}"); do
    echo "webhook_apiserver: round $r, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 tests/bench/webhook_apiserver.py "$KT_APISERVER" "$KT_CA" "$D/admin.crt" "$D/admin.key" \
        "${WH_N:-300}" "${WH_RATE:-20}" "${WH_CONNS:-1}" "r$r" "${procs[@]}" || rc=1
done
exit "$rc"
