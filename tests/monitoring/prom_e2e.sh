# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/monitoring/prom_e2e.sh - a real Prometheus in the e2e tier (sourced by tests/e2e/run.sh,
# which provides D, T, ROOT, WAIT, kc, die, ok, bad and the daemons' portfiles; kt_poll is tests/lib.sh's). Prometheus is built
# from its Go module (tests/monitoring/build-prometheus.sh, cached outside the repo), stores in
# D/prometheus and scrapes both daemons every second the way deploy/monitoring's ServiceMonitor
# makes the Prometheus Operator scrape them: HTTPS verified with the serving CA under the
# ServiceMonitor's serverName, a bearer token (a ServiceAccount's, bound to kt-metrics-reader),
# its honorLabels, and the target labels the Operator sets (job = the Service, namespace,
# service, pod, container, endpoint). Three more jobs scrape both daemons and must fail: a wrong
# token (401), a token without the role (403), the wrong CA. It also loads deploy/monitoring's alert rules. A
# `kubectl get trainjobs --watch` records every TrainJob the cases make, for the counters.
# Nothing here sleeps for readiness: every wait is a bounded poll.

. "$ROOT/tests/cluster/lib.sh" # kt_port_lock, kt_pick_port
PROM_DIR=$D/prometheus
PROM_PID=""
PROM_WATCH_PID=""
PROM_URL=""

# prom_auth_setup - ServiceAccounts e2e-prometheus (bound to kt-metrics-reader) and e2e-norole in
# kubeflow-system and their tokens ($D/scraper.token, $D/norole.token); the e2e daemons run with
# metrics.auth.enabled, so every scrape of the tier (curl or Prometheus) carries a token.
prom_auth_setup() {
    kc create serviceaccount e2e-prometheus -n kubeflow-system >/dev/null &&
        kc create serviceaccount e2e-norole -n kubeflow-system >/dev/null &&
        kc create clusterrolebinding e2e-prometheus-metrics --clusterrole=kt-metrics-reader \
            --serviceaccount=kubeflow-system:e2e-prometheus >/dev/null &&
        kc create token e2e-prometheus -n kubeflow-system --duration=4h >"$D/scraper.token" &&
        kc create token e2e-norole -n kubeflow-system --duration=4h >"$D/norole.token" ||
        die "ServiceAccount tokens for the metrics scrapers could not be made"
}

# prom_targets - (re)write the file_sd targets from the daemons' portfiles (kt-reconciler gets
# a new port when a case restarts it); Prometheus re-reads the file on change.
prom_targets() {
    local rp wp
    [ -n "$PROM_PID" ] || return 0
    rp=$(jq -r .metrics "$D/kt-reconciler.ports") wp=$(jq -r .metrics "$D/kt-webhook.ports")
    jq -n --arg r "127.0.0.1:$rp" --arg w "127.0.0.1:$wp" '
        def t($addr; $svc; $pod; $c): {targets: [$addr], labels: {job: $svc, namespace: "kubeflow-system",
            service: $svc, pod: $pod, container: $c, endpoint: "monitoring-port"}};
        [t($r; "kubeflow-trainer-controller-manager-metrics"; "kubeflow-trainer-controller-manager-0"; "manager"),
         t($w; "kubeflow-trainer-controller-manager"; "kubeflow-trainer-webhook-0"; "webhook")]' >"$PROM_DIR/targets.new"
    cp "$PROM_DIR/targets.new" "$PROM_DIR/neg.new"
    if cmp -s "$PROM_DIR/targets.new" "$PROM_DIR/targets.json"; then
        rm -f "$PROM_DIR/targets.new" "$PROM_DIR/neg.new"
        return 0
    fi
    mv "$PROM_DIR/targets.new" "$PROM_DIR/targets.json"
    mv "$PROM_DIR/neg.new" "$PROM_DIR/neg.json"
    # Prometheus applies a file_sd change within ~10 s (its discovery and scrape managers
    # each batch updates every 5 s): wait (bounded poll) until it scrapes the new ports
    [ -z "$PROM_URL" ] || kt_poll -m "Prometheus scraping kt on ports $rp and $wp" "$WAIT" prom_targets_live "$rp" "$wp" ||
        echo "e2e: Prometheus did not pick up the new targets" >&2
}

# prom_targets_live RPORT WPORT - every active target is on one of these ports and up or,
# for the negatives, scraped (down).
prom_targets_live() {
    curl -sfG "$PROM_URL/api/v1/targets" --data-urlencode state=active |
        jq -e --arg r "127.0.0.1:$1" --arg w "127.0.0.1:$2" '.data.activeTargets | length == 8 and
            all(.labels.instance == $r or .labels.instance == $w) and all(.health != "unknown") and
            all(select(.scrapePool | startswith("serviceMonitor/")) | .health == "up")'
}

# prom_config - prometheus.yml from deploy/monitoring/servicemonitor.yaml's endpoint (scheme,
# path, serverName, honorLabels) and the PrometheusRule's rule groups.
prom_config() {
    local sm=$ROOT/deploy/monitoring/servicemonitor.yaml scheme path server honor
    scheme=$(sed -n 's/^ *scheme: //p' "$sm")
    path=$(sed -n 's/^ *path: //p' "$sm")
    server=$(sed -n 's/^ *serverName: //p' "$sm")
    honor=$(sed -n 's/^ *honorLabels: //p' "$sm")
    sed -n '/^spec:$/,$p' "$ROOT/deploy/monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$PROM_DIR/rules.yaml"
    cat >"$PROM_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yaml]
scrape_configs:
  - job_name: serviceMonitor/kubeflow-system/kubeflow-trainer/0
    scheme: ${scheme:-http}
    metrics_path: ${path:-/metrics}
    honor_labels: ${honor:-false}
    authorization: {credentials_file: $D/scraper.token}
    tls_config: {ca_file: $D/certs/ca.crt, server_name: $server}
    file_sd_configs: [{files: [targets.json]}]
  - job_name: negative-wrong-token
    scrape_interval: 2s
    scheme: https
    authorization: {credentials: not-a-token}
    tls_config: {ca_file: $D/certs/ca.crt, server_name: $server}
    file_sd_configs: [{files: [neg.json]}]
    relabel_configs: [{target_label: job, replacement: negative-wrong-token}]
  - job_name: negative-no-role
    scrape_interval: 2s
    scheme: https
    authorization: {credentials_file: $D/norole.token}
    tls_config: {ca_file: $D/certs/ca.crt, server_name: $server}
    file_sd_configs: [{files: [neg.json]}]
    relabel_configs: [{target_label: job, replacement: negative-no-role}]
  - job_name: negative-wrong-ca
    scrape_interval: 2s
    scheme: https
    authorization: {credentials_file: $D/scraper.token}
    tls_config: {ca_file: $D/ca.crt, server_name: $server}
    file_sd_configs: [{files: [neg.json]}]
    relabel_configs: [{target_label: job, replacement: negative-wrong-ca}]
EOF
}

# prom_start - build (cached) and start Prometheus and the TrainJob watch; sets PROM_URL and
# prints the build and start times.
prom_start() {
    local t0=$SECONDS t1 bin port
    bin=$("$ROOT/tests/monitoring/build-prometheus.sh" 2>"$T/prometheus-build.log" | tail -1)
    [ -x "$bin" ] || die "Prometheus could not be built: $(tail -3 "$T/prometheus-build.log")"
    t1=$SECONDS
    PROM_BUILD_S=$((t1 - t0))
    mkdir -p "$PROM_DIR/data"
    prom_config
    PROM_PID=starting prom_targets
    kt_port_lock
    kt_pick_port port || die "no free port for Prometheus"
    setsid "$bin" --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
        --web.listen-address="127.0.0.1:$port" --storage.tsdb.retention.time=1d --log.level=warn \
        </dev/null >>"$PROM_DIR/prometheus.log" 2>&1 9>&- & # (9: the port lock, not inherited)
    PROM_PID=$!
    PROM_URL=http://127.0.0.1:$port
    kt_poll 60 prom_ready_or_dead
    kt_port_unlock
    kill -0 "$PROM_PID" 2>/dev/null || { tail -20 "$PROM_DIR/prometheus.log" >&2; die "Prometheus exited"; }
    prom_ready_or_dead || die "Prometheus not ready after 60s"
    PROM_READY_S=$((SECONDS - t1))
    # shellcheck disable=SC2034 # PROM_START: read by tests/e2e/cases.sh (case_prometheus)
    PROM_START=$(date +%s.%N)
    # every TrainJob of the run, as the API server reports it (list, then watch: no gap)
    kc get trainjobs -A --watch --output-watch-events -o json >"$PROM_DIR/trainjobs.watch" 2>"$PROM_DIR/watch.err" &
    PROM_WATCH_PID=$!
    echo "e2e: prometheus $(sed -n 's/^PROM_VERSION=//p' "$ROOT/tests/monitoring/build-promtool.sh") (Go module, $bin): build step ${PROM_BUILD_S}s, ready ${PROM_READY_S}s after its start at $PROM_URL"
}

# prom_ready_or_dead - Prometheus answers /-/ready, or its process is gone.
prom_ready_or_dead() {
    kill -0 "$PROM_PID" 2>/dev/null || return 0
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$PROM_URL/-/ready")" = 200 ]
}

# prom_stop - stop Prometheus and the watch (by PID).
prom_stop() {
    local p
    for p in $PROM_WATCH_PID $PROM_PID; do
        kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    PROM_PID="" PROM_WATCH_PID=""
}
