#!/usr/bin/env bash
# tests/bench/bench_reconcile.sh [BUILD_DIR] - the reconciler benchmark of DESIGN.md "Targets".
#
# On a fresh local control plane (tests/cluster/up.sh), with deploy/rbac/reconciler applied:
#  1. plain-client baseline: curl (4 parallel keep-alive connections, the reconciler's own
#     client certificate) writes, for 1,000 existing TrainJobs, what the reconciler writes:
#     the snapshot ConfigMap and the JobSet (server-side apply, the exact objects
#     `ktctl render` prints) and one status merge patch each;
#  2. kt-reconciler (4 workers, client QPS limit lifted to 1000/2000 as for the baseline) is
#     started idle (RSS idle), stopped, 1,000 suspended torch TrainJobs are created, and the
#     time from its start until every TrainJob has its status written (Suspended=True, seen
#     on a watch) is measured; the JobSets and snapshots are then counted (RSS with 1,000).
# Prints `bench: reconcile-1000: X s (plain client baseline Y s)`,
# `bench: reconciler-rss-idle: N KB` and `bench: reconciler-rss-1000: N KB` (VmRSS, which
# counts the shared library pages the process touched, ~10 MB of libcrypto, GnuTLS, libc...),
# and the same as private memory (Private_Clean + Private_Dirty of smaps_rollup). Asserts
# nothing.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
b=${1:-build/plain}
N=${BENCH_TRAINJOBS:-1000}
REC=${KT_BENCH_RECONCILER:-"$root/$b/bin/kt-reconciler"}
KTCTL="$root/$b/bin/ktctl"
[ -x "$REC" ] && [ -x "$KTCTL" ] || make -s "$REC" "$KTCTL" >/dev/null || exit 1
W=$(mktemp -d "${TMPDIR:-/tmp}/kt-bench-rec.XXXXXX")
D="$W/cluster"
RPID=""
finish() {
    [ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
    tests/cluster/down.sh "$D" >/dev/null 2>&1
    [ -n "${BENCH_KEEP:-}" ] || rm -rf "$W"
}
trap finish EXIT
tests/cluster/up.sh "$D" >/dev/null 2>&1 || { echo "bench: reconcile-$N: cluster failed to start"; exit 0; }
. "$D/env"
kc() { "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" --cache-dir "$D/kubectl-cache" "$@"; }
kc apply -k deploy/rbac/reconciler >/dev/null && kc apply -f deploy/runtimes/torch-distributed.yaml >/dev/null || exit 0
yq -r '.users[0].user."client-certificate-data"' "$KT_RECONCILER_KUBECONFIG" | base64 -d >"$W/c.crt"
yq -r '.users[0].user."client-key-data"' "$KT_RECONCILER_KUBECONFIG" | base64 -d >"$W/c.key"
cat >"$W/config.yaml" <<YAML
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
clientConnection:
  qps: 1000
  burst: 2000
YAML

trainjobs() { # trainjobs NS - N suspended torch TrainJobs as one JSON List
    jq -n --arg ns "$1" --argjson n "$N" '{apiVersion: "v1", kind: "List", items: [range($n) as $i |
        {apiVersion: "trainer.kubeflow.org/v1alpha1", kind: "TrainJob",
         metadata: {name: "tj\($i)", namespace: $ns},
         spec: {runtimeRef: {name: "torch-distributed"}, suspend: true, trainer: {numNodes: 2}}}]}'
}
now() { date +%s.%N; }
count_until() { # count_until N - read names until N distinct ones were seen (line by line)
    local -A seen=()
    local name
    while read -r name; do
        seen[$name]=1
        if [ "${#seen[@]}" -ge "$1" ]; then
            kill "$(cat "$W/curl.pid")" # ends the watch, so the pipeline ends
            echo done
            return 0
        fi
    done
    return 1
}
since() { echo "$(now) - $1" | bc | awk '{printf "%.2f", $1}'; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# private KB (Private_Clean + Private_Dirty): RSS without the shared library pages
priv() { awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s}' "/proc/$1/smaps_rollup"; }

# ---- the reconciler ----
start_rec() {
    rm -f "$W/ports"
    "$REC" --config "$W/config.yaml" --kubeconfig "$KT_RECONCILER_KUBECONFIG" --workers 4 \
        --health-listen 127.0.0.1:0 --metrics-listen 0 --portfile "$W/ports" --log-level warn \
        2>>"$W/rec.log" &
    RPID=$!
}
wait_ready() {
    local i
    for i in $(seq 1200); do
        [ -s "$W/ports" ] &&
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(jq -r .health "$W/ports")/readyz")" = 200 ] && return 0
        sleep 0.05
    done
    return 1
}
# idle: caches synced on a cluster with only the runtimes
start_rec
wait_ready || { echo "bench: reconciler not ready"; cat "$W/rec.log"; exit 0; }
idle=$(rss "$RPID")
idle_priv=$(priv "$RPID")
kill "$RPID" && wait "$RPID"
RPID=""

# ---- 1. plain-client baseline ----
kc create namespace bench-base >/dev/null
trainjobs bench-base >"$W/base.json"
kc create -f "$W/base.json" >/dev/null || exit 0
jq -c '.items[] | ., "---"' "$W/base.json" | sed 's/^"---"$/---/' >"$W/base.yaml"
"$KTCTL" render --uid 00000000-0000-4000-8000-000000000000 --runtime deploy/runtimes/torch-distributed.yaml \
    -o json "$W/base.yaml" >"$W/objs.json" || { echo "bench: render failed"; exit 0; }
mkdir -p "$W/o"
status='{"status":{"conditions":[{"type":"Suspended","status":"True","reason":"Suspended","message":"TrainJob is suspended","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}'
echo "$status" >"$W/o/status.json"
jq -c '.items[]' "$W/objs.json" | awk -v dir="$W/o" '{f = dir "/" NR ".json"; print > f; close(f)}'
# with "next" every URL group needs its own TLS and output options
tls=$(printf 'silent\ncacert = "%s"\ncert = "%s"\nkey = "%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n' "$KT_CA" "$W/c.crt" "$W/c.key")
{
    i=0
    jq -r '.items[] | "\(.kind) \(.metadata.name)"' "$W/objs.json" | while read -r kind name; do
        i=$((i + 1))
        case "$kind" in
        ConfigMap) p="/api/v1/namespaces/bench-base/configmaps/$name" ;;
        JobSet) p="/apis/jobset.x-k8s.io/v1alpha2/namespaces/bench-base/jobsets/$name" ;;
        *) continue ;;
        esac
        printf 'url = "%s%s?fieldManager=trainer&force=true"\nrequest = "PATCH"\nheader = "Content-Type: application/apply-patch+yaml"\ndata-binary = "@%s/%s.json"\n%s\n' \
            "$KT_APISERVER" "$p" "$W/o" "$i" "$tls"
    done
    for i in $(seq 0 $((N - 1))); do
        printf 'url = "%s/apis/trainer.kubeflow.org/v1alpha1/namespaces/bench-base/trainjobs/tj%s/status"\nrequest = "PATCH"\nheader = "Content-Type: application/merge-patch+json"\ndata-binary = "@%s/status.json"\n%s\n' \
            "$KT_APISERVER" "$i" "$W/o" "$tls"
    done
} | sed '$d' >"$W/curl.cfg" # no "next" after the last group
t0=$(now)
curl -s --no-progress-meter --parallel --parallel-max 4 -K "$W/curl.cfg" >"$W/codes.txt" 2>"$W/curl.err"
base=$(since "$t0")
bad=$(grep -vc '^20[01]$' "$W/codes.txt")
# the reconciler must not see the baseline's TrainJobs (their objects have a foreign UID)
for r in /apis/trainer.kubeflow.org/v1alpha1/namespaces/bench-base/trainjobs \
    /apis/jobset.x-k8s.io/v1alpha2/namespaces/bench-base/jobsets /api/v1/namespaces/bench-base/configmaps; do
    kc delete --raw "$r" >/dev/null
done

# ---- 2. 1,000 TrainJobs ----
kc create namespace bench >/dev/null
trainjobs bench >"$W/tj.json"
kc create -f "$W/tj.json" >/dev/null || exit 0
rv=$(kc get --raw "/apis/trainer.kubeflow.org/v1alpha1/namespaces/bench/trainjobs?limit=1" | jq -r .metadata.resourceVersion)
# watch TrainJob status from here on; done when N distinct TrainJobs carry Suspended=True
(echo "$BASHPID" >"$W/curl.pid" && exec curl -sN --cacert "$KT_CA" --cert "$W/c.crt" --key "$W/c.key" \
    "$KT_APISERVER/apis/trainer.kubeflow.org/v1alpha1/namespaces/bench/trainjobs?watch=1&resourceVersion=$rv&timeoutSeconds=300") |
    jq --unbuffered -r 'select(.object.status.conditions // [] | map(select(.type == "Suspended" and .status == "True")) | length > 0) | .object.metadata.name' |
    count_until "$N" >"$W/watch.out" &
wpid=$!
t0=$(now)
start_rec
wait "$wpid"
rec=$(since "$t0")
full=$(rss "$RPID")
full_priv=$(priv "$RPID")
js=$(kc get jobsets -n bench -o name | wc -l)
cms=$(kc get cm -n bench -l trainer.kubeflow.org/trainjob-name -o name | wc -l)
echo "bench: reconcile-$N: $rec s (plain client baseline $base s)"
echo "bench: reconciler-rss-idle: $idle KB"
echo "bench: reconciler-rss-$N: $full KB"
echo "bench: reconciler-rss-growth-per-trainjob: $(((full - idle) / N)) KB"
echo "bench: reconciler-private-idle: $idle_priv KB"
echo "bench: reconciler-private-$N: $full_priv KB"
echo "bench: reconcile-$N-check: jobsets=$js snapshots=$cms baseline-non-2xx=$bad"
exit 0
