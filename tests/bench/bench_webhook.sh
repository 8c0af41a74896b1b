#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/bench_webhook.sh BUILD_DIR - kt-webhook against upstream Kubeflow Trainer v2.3.0's
# webhook server, side by side (docs/benchmarks.md; its targets: at least 4x upstream's reviews/s, p99 within 1 ms).
#
# The same TrainJob CREATE AdmissionReview (tests/admission/valid-torch/request.json) against the
# shipped torch-distributed ClusterTrainingRuntime, over keep-alive TLS, from Debian's wrk at
# concurrency 16. Each server is pinned to core 0 with one worker (kt-webhook --threads 1;
# upstream's manager GOMAXPROCS=1), wrk to the other cores. BENCH_ROUNDS (default 3) interleaved
# rounds of BENCH_SECONDS (default 10) each, kt then upstream, so a machine shared with other work
# loads both alike; every figure is the median over the rounds:
#   bench: webhook-c16: N reviews/s | upstream M reviews/s | ratio R
#   bench: webhook-p50 / webhook-p99: X ms | upstream Y ms
#   bench: webhook-cpu-per-review: X us | upstream Y us   (server CPU time / reviews answered)
#   bench: webhook-rss-idle / webhook-rss-load: N KB | upstream M KB  (load: VmRSS mid-run, max)
#   bench: webhook-c64: N reviews/s   (kt only, one run)
# Upstream's manager needs an API server: a plane from tests/cluster/up.sh (when its binaries
# are cached) with the shipped runtimes applied, started by tests/parity/upstream_lib.sh. Its
# binary is KT_UPSTREAM_BIN when set, else upstream_lib.sh's cache or the parity build's
# /tmp/upbuild; it is never built here: without it kt's figures print alone with
# "upstream: not built". Asserts nothing; always exits 0. wrk is installed with apt-get here when
# missing (never by `make deps`).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
b=${1:-build/plain}
bin="$b/bin/kt-webhook"
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
case_dir=tests/admission/valid-torch
runtime=deploy/runtimes/torch-distributed.yaml
say() { echo "bench: $*"; }
warn() { echo "bench: webhook: $*" >&2; }
[ -x "$bin" ] || {
    warn "$bin missing"
    exit 0
}
if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y -qq wrk >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq wrk >/dev/null 2>&1; }
    else
        sudo -n apt-get install -y -qq wrk >/dev/null 2>&1
    fi
fi
command -v wrk >/dev/null || {
    warn "wrk not available (apt-get install wrk)"
    exit 0
}

. tests/lib.sh                        # $T, kt_cleanup, kt_daemon
. tests/integration/certs_lib.sh     # it_serving_certs
PLANE=""
UP_OUT=""
webhook_bench_stop() {
    [ -n "$UP_OUT" ] && up_stop "$UP_OUT" >/dev/null 2>&1
    [ -n "$PLANE" ] && tests/cluster/down.sh "$PLANE" >/dev/null 2>&1
}
kt_cleanup webhook_bench_stop

it_serving_certs "$T" kt-bench-ca 2

# Cores: each server gets core 0, wrk the rest (core 1 on a 2-core machine).
n=$(nproc)
srv_cpu=0
gen_cpus="1-$((n - 1))"
gen_threads=$((n - 1))
if [ "$n" -lt 2 ]; then
    gen_cpus=0
    gen_threads=1
fi

# ---- kt-webhook (files mode: the same runtime object upstream gets from its informer) ----
# With the environment its Deployment sets (deploy/manager/webhook.yaml: a larger malloc
# cache); KT_BENCH_GLIBC_TUNABLES= (empty) measures glibc's defaults instead.
tunables=${KT_BENCH_GLIBC_TUNABLES-glibc.malloc.tcache_count=256}
echo "bench: webhook-env: GLIBC_TUNABLES=$tunables (kt-webhook; as its Deployment)"
GLIBC_TUNABLES=$tunables kt_daemon kt taskset -c "$srv_cpu" "$bin" --tls-cert-file "$T/tls.crt" --tls-key-file "$T/tls.key" \
    --objects "$runtime" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
    --metrics-listen 0 --threads 1 --log-level warn >"$T/start.out" || {
    warn "kt-webhook did not start: $(cat "$T/start.out")"
    exit 0
}
KT_PID=$(eval echo "\$PID_kt")
KT_URL="https://127.0.0.1:$(kt_port kt webhook)/validate-trainer-kubeflow-org-v1alpha1-trainjob"

# ---- upstream's manager, when its binary is at hand ----
. tests/parity/upstream_lib.sh
up_bin=""
cands=("$UP_BIN" "/tmp/upbuild/trainer-controller-manager-$UP_VERSION")
[ -n "${KT_UPSTREAM_BIN+x}" ] && cands=("$KT_UPSTREAM_BIN") # set: the only candidate
for c in "${cands[@]}"; do
    if [ -n "$c" ] && [ -x "$c" ]; then
        up_bin=$c
        break
    fi
done
UP_PID=""
UP_URL=""
start_upstream() {
    if [ ! -x "$KT_BIN/kube-apiserver" ] || [ ! -x "$KT_BIN/etcd" ]; then
        warn "upstream: no cached kube-apiserver/etcd in $KT_BIN (scripts/cluster/build.sh)"
        return 1
    fi
    PLANE="$T/plane"
    tests/cluster/up.sh "$PLANE" >/dev/null 2>"$T/up.log" || {
        warn "upstream: tests/cluster/up.sh failed: $(tail -3 "$T/up.log")"
        return 1
    }
    "$(kt_env_get "$PLANE" KT_KUBECTL)" --kubeconfig "$(kt_env_get "$PLANE" KT_ADMIN_KUBECONFIG)" \
        apply --server-side -f "$runtime" >"$T/apply.log" 2>&1 || {
        warn "upstream: applying $runtime failed: $(tail -3 "$T/apply.log")"
        return 1
    }
    UP_BIN=$up_bin
    UP_OUT="$T/upstream"
    GOMAXPROCS=1 up_start "$PLANE" "$UP_OUT" 2>"$T/upstart.log" || {
        warn "upstream: the manager did not start: $(tail -3 "$T/upstart.log")"
        return 1
    }
    UP_PID=$(sed -n 's/^UP_PID=//p' "$UP_OUT/env")
    taskset -a -cp "$srv_cpu" "$UP_PID" >/dev/null
    UP_URL="https://127.0.0.1:$(sed -n 's/^UP_WEBHOOK_PORT=//p' "$UP_OUT/env")"
    UP_URL="$UP_URL/validate-trainer-kubeflow-org-v1alpha1-trainjob"
    UP_CA=$(sed -n 's/^UP_CA=//p' "$UP_OUT/env")
}
if [ -z "$up_bin" ]; then
    warn "upstream: not built (tests/parity/upstream_lib.sh up_build)"
elif ! start_upstream; then
    UP_PID=""
fi

# Sanity: the review must be allowed by both (a denial would benchmark the error path).
allowed() { # CA URL
    curl -sS --cacert "$1" -H 'Content-Type: application/json' \
        --data-binary "@$case_dir/request.json" "$2" 2>&1 | grep -c '"allowed":true' >/dev/null
}
allowed "$T/ca.crt" "$KT_URL" || warn "warning: kt-webhook does not allow the fixture review"
if [ -n "$UP_PID" ] && ! allowed "$UP_CA" "$UP_URL"; then
    warn "upstream: does not allow the fixture review; its figures are left out"
    UP_PID=""
fi

body=$(jq -c . "$case_dir/request.json" | sed 's/\\/\\\\/g; s/"/\\"/g')
cat >"$T/post.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = "$body"
EOF

# to_ms VALUE - wrk prints 812.00us / 1.23ms / 1.01s.
to_ms() {
    awk -v v="$1" 'BEGIN {
        n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
        if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
        printf "%.3f", n }'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }

# wrk_run WHO PID URL CONC - one wrk run; appends to $T/WHO.{rps,p50,p99,cpu,rss}.
wrk_run() {
    local who=$1 pid=$2 url=$3 c=$4 t0 t1 reqs sampler
    t0=$(cpu_ticks "$pid")
    (sleep "$(awk -v s="$secs" 'BEGIN { print s / 2 }')" && rss_kb "$pid" >>"$T/$who.rss") &
    sampler=$!
    taskset -c "$gen_cpus" wrk -t"$gen_threads" -c"$c" -d"${secs}s" --latency -s "$T/post.lua" \
        "$url" >"$T/wrk.out" 2>&1
    wait "$sampler"
    t1=$(cpu_ticks "$pid")
    reqs=$(awk '/ requests in / { print $1 }' "$T/wrk.out")
    awk '/^Requests\/sec:/ { printf "%d\n", $2 }' "$T/wrk.out" >>"$T/$who.rps"
    to_ms "$(awk '$1 == "50%" { print $2 }' "$T/wrk.out")" >>"$T/$who.p50"
    echo >>"$T/$who.p50"
    to_ms "$(awk '$1 == "99%" { print $2 }' "$T/wrk.out")" >>"$T/$who.p99"
    echo >>"$T/$who.p99"
    awk -v a="$t0" -v b="$t1" -v n="${reqs:-0}" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.1f\n", (n > 0 ? (b - a) / hz * 1e6 / n : 0) }' >>"$T/$who.cpu"
    grep -E 'Non-2xx|Socket errors' "$T/wrk.out" >&2
}
file_median() { [ -s "$1" ] && sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
maxof() { [ -s "$1" ] && sort -n "$1" | tail -n 1; }
ratio_or_dash() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

kt_idle=$(rss_kb "$KT_PID")
[ -n "$UP_PID" ] && up_idle=$(rss_kb "$UP_PID")
for ((r = 0; r < rounds; r++)); do
    wrk_run kt "$KT_PID" "$KT_URL" 16
    [ -n "$UP_PID" ] && wrk_run up "$UP_PID" "$UP_URL" 16
done

side_by_side() { # NAME KT_VALUE UP_VALUE UNIT [RATIO]
    if [ -n "$UP_PID" ]; then
        say "$1: $2 $4 | upstream $3 $4${5:+ | ratio $5}"
    else
        say "$1: $2 $4"
    fi
}
[ -n "$UP_PID" ] || say "webhook: upstream: not built or not running (kt alone)"
say "webhook-rounds: $rounds interleaved x ${secs}s, c16, one core each"
k=$(file_median "$T/kt.rps")
u=$(file_median "$T/up.rps" 2>/dev/null)
side_by_side webhook-c16 "$k" "$u" reviews/s "$(ratio_or_dash "$k" "$u")"
side_by_side webhook-p50 "$(file_median "$T/kt.p50")" "$(file_median "$T/up.p50" 2>/dev/null)" ms
side_by_side webhook-p99 "$(file_median "$T/kt.p99")" "$(file_median "$T/up.p99" 2>/dev/null)" ms
k=$(file_median "$T/kt.cpu")
u=$(file_median "$T/up.cpu" 2>/dev/null)
side_by_side webhook-cpu-per-review "$k" "$u" us "$(ratio_or_dash "$u" "$k")"
side_by_side webhook-rss-idle "$kt_idle" "${up_idle:-}" KB
side_by_side webhook-rss-load "$(maxof "$T/kt.rss")" "$(maxof "$T/up.rss" 2>/dev/null)" KB
: >"$T/c64.rps"
wrk_run c64 "$KT_PID" "$KT_URL" 64
say "webhook-c64: $(cat "$T/c64.rps") reviews/s (kt)"
exit 0
