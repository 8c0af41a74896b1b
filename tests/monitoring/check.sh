#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/monitoring/check.sh [PROMTOOL] - promtool on deploy/monitoring: `check rules` on the
# PrometheusRule's rule groups, `test rules` (tests/monitoring/rules_test.yaml: every alert
# fires, and stays quiet on a negative case; checked: each alert has both), and every Grafana dashboard query parsed as
# PromQL (each panel target becomes a recording rule for `check rules`; $__rate_interval and
# the dashboard variables are substituted first). PROMTOOL defaults to the cached build of
# tests/monitoring/build-promtool.sh. Prints `ok NAME` / `FAIL NAME: why` and `N passed, N failed`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pt=${1:-$("$here/build-promtool.sh" | tail -1)}
. "$root/tests/lib.sh" # T, ok, bad, kt_finish
# The rule file: the PrometheusRule's spec (its last key), de-indented by 2.
sed -n '/^spec:$/,$p' "$root/deploy/monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$T/rules.yaml"
if out=$("$pt" check rules "$T/rules.yaml" 2>&1); then ok "promtool-check-rules ($(grep -o 'SUCCESS: [0-9]* rules found' <<<"$out"))"; else bad promtool-check-rules "$out"; fi
cp "$here/rules_test.yaml" "$T/"
if out=$(cd "$T" && "$pt" test rules rules_test.yaml 2>&1); then ok promtool-test-rules; else bad promtool-test-rules "$out"; fi
# each_alert_tested RULES TESTS - every alert of RULES has a test where it fires (exp_alerts
# with entries) and one where it stays quiet (exp_alerts: []); prints what is missing.
each_alert_tested() {
    local a missing=""
    for a in $(sed -n 's/^ *- alert: //p' "$1"); do
        awk -v a="$a" '$1 == "alertname:" { cur = $2 } $1 == "exp_alerts:" && cur == a { if ($2 == "[]") q = 1; else f = 1 }
            END { exit !(q && f) }' "$2" || missing="$missing $a"
    done
    [ -z "$missing" ] || { echo "no firing and quiet test for:$missing"; return 1; }
}
if out=$(each_alert_tested "$T/rules.yaml" "$here/rules_test.yaml"); then
    ok "rules-tests-fire-and-quiet ($(grep -c '^ *- alert: ' "$T/rules.yaml") alerts, each firing and quiet)"
else
    bad rules-tests-fire-and-quiet "$out"
fi
# negative: without its quiet case, an alert is reported
sed '/alertname: KubeflowTrainerNoLeader/{n;s/exp_alerts: \[\]/exp_alerts:/}' "$here/rules_test.yaml" >"$T/no-neg.yaml"
if ! out=$(each_alert_tested "$T/rules.yaml" "$T/no-neg.yaml") && [[ "$out" == *KubeflowTrainerNoLeader* ]]; then
    ok rules-tests-fire-and-quiet-negative
else
    bad rules-tests-fire-and-quiet-negative "a rules_test.yaml without NoLeader's quiet case passed: $out"
fi
n=$(jq '[.panels[] | .targets[]?] | length' "$root/deploy/monitoring/dashboard.json")
jq -r '[.panels[] | .targets[]? | .expr] | to_entries[] |
    "      - record: panel_\(.key)\n        expr: \(.value | gsub("\\$__rate_interval"; "5m")
        | gsub("\\$namespace"; ".*") | gsub("\\$runtime"; ".*") | gsub("\\$job"; ".*") | @json)"' \
    "$root/deploy/monitoring/dashboard.json" | { echo "groups:"; echo "  - name: dashboard"; echo "    rules:"; cat; } >"$T/panels.yaml"
if out=$("$pt" check rules "$T/panels.yaml" 2>&1) && [ "$n" -gt 0 ]; then ok "dashboard-queries-parse ($n queries)"; else bad dashboard-queries-parse "$out"; fi
jq -e '.templating.list | map(.name) | index("datasource") != null and index("namespace") != null and index("runtime") != null' \
    "$root/deploy/monitoring/dashboard.json" >/dev/null && ok dashboard-variables || bad dashboard-variables "datasource, namespace, runtime"
kt_finish
