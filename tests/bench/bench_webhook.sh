#!/usr/bin/env bash
# tests/bench/bench_webhook.sh BUILD_DIR - kt-webhook throughput, latency and memory
# (DESIGN.md "Targets": TrainJob validation against a cached torch runtime, TLS keep-alive,
# Debian's wrk, server and load generator pinned to different cores, concurrency 16 and 64).
#
# Prints, asserting nothing:
#   bench: webhook: N reviews/s          (best of the c16 / c64 runs)
#   bench: webhook-c16: N reviews/s, bench: webhook-c64: N reviews/s
#   bench: webhook-p50: X ms, bench: webhook-p99: X ms   (c16 run)
#   bench: webhook-rss-idle: N KB, bench: webhook-rss-load: N KB (VmHWM after the load)
# wrk is installed with apt-get here when missing (never by `make deps`). BENCH_SECONDS
# (default 10) sets each run's duration.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
b=${1:-build/plain}
bin="$b/bin/kt-webhook"
secs=${BENCH_SECONDS:-10}
[ -x "$bin" ] || {
    echo "bench: webhook: $bin missing" >&2
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
    echo "bench: webhook: wrk not available (apt-get install wrk)" >&2
    exit 0
}

T=$(mktemp -d)
PID=""
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca.key" -out "$T/ca.crt" -days 2 \
    -subj /CN=kt-bench-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$T/tls.key" -out "$T/tls.csr" -subj /CN=127.0.0.1 \
    2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$T/ext"
openssl x509 -req -in "$T/tls.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial \
    -out "$T/tls.crt" -days 2 -extfile "$T/ext" 2>/dev/null

# Cores: the server gets the first half, wrk the rest (one each on a 2-core machine).
n=$(nproc)
half=$(((n + 1) / 2))
srv_cpus="0-$((half - 1))"
gen_cpus="$half-$((n - 1))"
[ "$n" -lt 2 ] && gen_cpus=0
gen_threads=$((n - half))
[ "$gen_threads" -lt 1 ] && gen_threads=1

case_dir=tests/admission/valid-torch
taskset -c "$srv_cpus" "$bin" --tls-cert-file "$T/tls.crt" --tls-key-file "$T/tls.key" \
    --objects "$case_dir/objects.yaml" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
    --metrics-listen 0 --threads "$half" --portfile "$T/ports" --log-level warn 2>"$T/stderr" &
PID=$!
for ((i = 0; i < 1000; i++)); do
    [ -s "$T/ports" ] && break
    sleep 0.01
done
[ -s "$T/ports" ] || {
    echo "bench: webhook: kt-webhook did not start: $(cat "$T/stderr")" >&2
    exit 0
}
port=$(jq .webhook "$T/ports")
rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status"; }
echo "bench: webhook-rss-idle: $(rss VmRSS) KB"

body=$(jq -c . "$case_dir/request.json" | sed 's/\\/\\\\/g; s/"/\\"/g')
cat >"$T/post.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = "$body"
EOF
url="https://127.0.0.1:$port/validate-trainer-kubeflow-org-v1alpha1-trainjob"
# Sanity: the fixture must be allowed (a denial would benchmark the error path).
curl -sS --cacert "$T/ca.crt" -H 'Content-Type: application/json' \
    --data-binary "@$case_dir/request.json" "$url" | grep -q '"allowed":true' ||
    echo "bench: webhook: warning: the fixture review is not allowed" >&2

# to_ms VALUE - wrk prints 812.00us / 1.23ms / 1.01s.
to_ms() {
    awk -v v="$1" 'BEGIN {
        n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
        if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
        printf "%.3f", n }'
}
best=0
for c in 16 64; do
    taskset -c "$gen_cpus" wrk -t"$gen_threads" -c"$c" -d"${secs}s" --latency -s "$T/post.lua" \
        "$url" >"$T/wrk$c" 2>&1
    rps=$(awk '/^Requests\/sec:/ { printf "%d", $2 }' "$T/wrk$c")
    errs=$(awk '/Non-2xx|Socket errors/ { print }' "$T/wrk$c")
    echo "bench: webhook-c$c: ${rps:-0} reviews/s${errs:+ ($errs)}"
    [ "${rps:-0}" -gt "$best" ] && best=$rps
    if [ "$c" = 16 ]; then
        p50=$(awk '$1 == "50%" { print $2 }' "$T/wrk$c")
        p99=$(awk '$1 == "99%" { print $2 }' "$T/wrk$c")
    fi
done
echo "bench: webhook: $best reviews/s"
echo "bench: webhook-p50: $(to_ms "${p50:-0}") ms"
echo "bench: webhook-p99: $(to_ms "${p99:-0}") ms"
echo "bench: webhook-rss-load: $(rss VmHWM) KB"
kill -TERM "$PID"
wait "$PID" 2>/dev/null
PID=""
exit 0
