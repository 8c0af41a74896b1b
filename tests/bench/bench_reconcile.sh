#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/bench_reconcile.sh [BUILD_DIR] - the reconciler benchmark of docs/benchmarks.md,
# kt-reconciler side by side with upstream trainer v2.3.0's manager. Prints, asserts nothing.
#
# One local control plane (tests/cluster/up.sh) with deploy/rbac/reconciler and the
# torch-distributed runtime. Both managers get the same client limits, QPS 500 / burst 1000
# (upstream's defaults are 50/100 and kt keeps them too: these figures use LIFTED limits, the
# ones tests/parity/upstream_lib.sh gives upstream). kt runs 4 workers, upstream its
# groupKindConcurrency of 5.
#  1. idle: each manager started on the plane with only the runtimes; RSS once ready.
#  2. BENCH_ROUNDS interleaved rounds (the order alternates) on a backlog of BENCH_TRAINJOBS
#     (1,000) suspended torch TrainJobs each, in a fresh namespace per run:
#     - plain-client baseline: curl (4 parallel keep-alive connections, the reconciler's
#       client certificate) writes what the reconciler writes (the snapshot ConfigMap and the
#       JobSet by server-side apply, the objects `ktctl render` prints, and one status merge
#       patch per TrainJob);
#     - kt and upstream: the time from the manager's start until every TrainJob carries
#       Suspended=True (seen on a watch), the manager's CPU seconds (utime+stime) by then, RSS
#       then ("at drain"), RSS after BENCH_SETTLE_S (3 s: kt trims its heap one second after
#       the queue drains) and the peak (VmHWM). Then the manager stops and the objects go.
#     Prints the median of the rounds for each and the ratio kt/upstream.
#  3. growth: with BENCH_GROWTH=N (e.g. 10000), one more kt run on N TrainJobs; the cost per
#     TrainJob at both sizes. Off by default (minutes on 2 cores).
#  4. unrelated objects: 10,000 ConfigMaps and 5,000 Secrets (1 KiB each) nobody owns are
#     added (BENCH_UNRELATED=0 skips); each manager's idle RSS again.
# RSS is VmRSS, which counts the file pages the process touched (~8.9 MB for kt idle:
# GnuTLS, libc, libcurl, libcrypto...); "private" is Private_Clean + Private_Dirty (for a
# static Go binary that includes its own text); "anonymous" is RssAnon: heap, stacks and
# other memory no file backs, the part that grows with the cluster. The "library floor" line
# is tests/tools/rss_floor: the same libraries loaded and initialised, no kt code run.
# Without upstream's binary (tests/parity/upstream_lib.sh: $UP_BIN), prints kt's figures and
# `upstream: not built`.
# Knobs for measuring a change of kt itself: BENCH_KT_BEFORE=PATH runs that kt-reconciler binary
# (e.g. main's) as a third side, "before", in every round and every idle measurement, in an
# order that rotates with the rounds, and prints kt/before; BENCH_UPSTREAM=0 leaves upstream
# out and BENCH_BASELINE=0 the plain client (both run by default).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
b=${1:-build/plain}
N=${BENCH_TRAINJOBS:-1000}
ROUNDS=${BENCH_ROUNDS:-3}
SETTLE=${BENCH_SETTLE_S:-3}
QPS=500
BURST=1000
REC=${KT_BENCH_RECONCILER:-"$root/$b/bin/kt-reconciler"}
KTCTL="$root/$b/bin/ktctl"
[ -x "$REC" ] && [ -x "$KTCTL" ] || make -s "$REC" "$KTCTL" >/dev/null || exit 1
. tests/parity/upstream_lib.sh
HAVE_UP=0
[ -x "$UP_BIN" ] && [ "${BENCH_UPSTREAM:-1}" != 0 ] && HAVE_UP=1
BEFORE=${BENCH_KT_BEFORE:-}
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "bench: BENCH_KT_BEFORE=$BEFORE is not executable"; exit 1; }
. tests/lib_kube.sh # $T (kept with KT_KEEP=1), kt_cleanup, kt_daemon, kc
# shellcheck disable=SC2034 # KT_KEEP: read by tests/lib.sh at exit
[ -n "${BENCH_KEEP:-}" ] && KT_KEEP=1
W=$T
D="$W/cluster"
RPID=""
reconcile_bench_stop() {
    [ -f "$W/up/env" ] && up_stop "$W/up" 2>/dev/null
    tests/cluster/down.sh "$D" >/dev/null 2>&1
}
kt_cleanup reconcile_bench_stop
tests/cluster/up.sh "$D" >/dev/null 2>&1 || { echo "bench: reconcile-$N: cluster failed to start"; exit 0; }
. "$D/env"
kc apply -k deploy/rbac/reconciler >/dev/null && kc apply -f deploy/runtimes/torch-distributed.yaml >/dev/null || exit 0
yq -r '.users[0].user."client-certificate-data"' "$KT_RECONCILER_KUBECONFIG" | base64 -d >"$W/c.crt"
yq -r '.users[0].user."client-key-data"' "$KT_RECONCILER_KUBECONFIG" | base64 -d >"$W/c.key"
cat >"$W/config.yaml" <<YAML
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
clientConnection:
  qps: $QPS
  burst: $BURST
YAML
CLK=$(getconf CLK_TCK)

trainjobs() { # trainjobs NS COUNT - suspended torch TrainJobs as one JSON List
    jq -n --arg ns "$1" --argjson n "$2" '{apiVersion: "v1", kind: "List", items: [range($n) as $i |
        {apiVersion: "trainer.kubeflow.org/v1alpha1", kind: "TrainJob",
         metadata: {name: "tj\($i)", namespace: $ns},
         spec: {runtimeRef: {name: "torch-distributed"}, suspend: true, trainer: {numNodes: 2}}}]}'
}
wall_s() { date +%s.%N; }
since() { echo "$(wall_s) - $1" | bc | awk '{printf "%.2f", $1}'; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
anon() { awk '/RssAnon/ {print $2}' "/proc/$1/status"; } # heap, stacks: no file pages at all
# private KB (Private_Clean + Private_Dirty): RSS without the shared library pages
priv() { awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s}' "/proc/$1/smaps_rollup"; }
cpu_s() { awk -v t="$CLK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
median_in() { sort -g | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
ratio_of() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b}'; }
rec() { echo "$1 $2" >>"$W/results"; } # rec NAME VALUE - one sample
med() { awk -v k="$1" '$1 == k {print $2}' "$W/results" | median_in; }

# ---- starting and stopping the managers ----
start_kt() { # start_kt [BIN] - kt_daemon: returns once ready (the drain's watch runs meanwhile); log $W/rec.log
    kt_daemon rec "${1:-$REC}" --config "$W/config.yaml" --kubeconfig "$KT_RECONCILER_KUBECONFIG" --workers 4 \
        --health-listen 127.0.0.1:0 --metrics-listen 0 --log-level warn
    RPID=$(eval echo "\$PID_rec")
    MPID=$RPID
}
stop_kt() {
    kt_daemon_stop rec
    RPID=""
}
start_up() { # up_start waits for upstream's /readyz (its webhook server), not its caches
    rm -rf "$W/up"
    up_start "$D" "$W/up" 2>>"$W/up.log" || return 1
    MPID=$(sed -n 's/^UP_PID=//p' "$W/up/env")
}
stop_up() { up_stop "$W/up" 2>>"$W/up.log"; }
bin_of() { if [ "$1" = before ]; then echo "$BEFORE"; else echo "$REC"; fi; } # bin_of kt|before
stop_side() { if [ "$1" = up ]; then stop_up; else stop_kt; fi; }

# idle NAME - start a manager, wait until ready and for the caches (2 s), record its RSS
idle() {
    local who=$1 tag=$2
    if [ "$who" = kt ] || [ "$who" = before ]; then
        start_kt "$(bin_of "$who")" >"$W/start.out" || { echo "bench: kt-reconciler not ready"; tail -5 "$W/rec.log"; return 1; }
    else
        start_up || { echo "bench: upstream manager not ready"; return 1; }
    fi
    sleep 2
    rec "$who-rss-$tag" "$(rss "$MPID")"
    rec "$who-priv-$tag" "$(priv "$MPID")"
    rec "$who-anon-$tag" "$(anon "$MPID")"
    stop_side "$who"
}

# ---- watching TrainJob status ----
count_until() { # count_until N - read names until N distinct ones were seen (line by line)
    local -A seen=()
    local name
    while read -r name; do
        seen[$name]=1
        if [ "${#seen[@]}" -ge "$1" ]; then
            kill "$(cat "$W/curl.pid")" # ends the watch, so the pipeline ends
            echo "done"
            return 0
        fi
    done
    return 1
}
watch_status() { # watch_status NS COUNT - in the background; WPID
    local rv
    rv=$(kc get --raw "/apis/trainer.kubeflow.org/v1alpha1/namespaces/$1/trainjobs?limit=1" | jq -r .metadata.resourceVersion)
    (echo "$BASHPID" >"$W/curl.pid" && exec curl -sN --cacert "$KT_CA" --cert "$W/c.crt" --key "$W/c.key" \
        "$KT_APISERVER/apis/trainer.kubeflow.org/v1alpha1/namespaces/$1/trainjobs?watch=1&resourceVersion=$rv&timeoutSeconds=900") |
        jq --unbuffered -r 'select(.object.status.conditions // [] | map(select(.type == "Suspended" and .status == "True")) | length > 0) | .object.metadata.name' |
        count_until "$2" >"$W/watch.out" &
    WPID=$!
}
clear_ns() { # the objects of a run (no controller-manager here: nothing deletes them for us)
    local r
    for r in /apis/trainer.kubeflow.org/v1alpha1/namespaces/$1/trainjobs \
        /apis/jobset.x-k8s.io/v1alpha2/namespaces/$1/jobsets /api/v1/namespaces/$1/configmaps; do
        kc delete --raw "$r" >/dev/null
    done
}

# drain WHO NS COUNT TAG - one backlog drained by kt or upstream
drain() {
    local who=$1 ns=$2 n=$3 tag=$4 t0 secs
    kc create namespace "$ns" >/dev/null
    trainjobs "$ns" "$n" >"$W/tj.json"
    kc create -f "$W/tj.json" >/dev/null || return 1
    watch_status "$ns" "$n"
    t0=$(wall_s)
    if [ "$who" != up ]; then
        start_kt "$(bin_of "$who")" >"$W/start.out"
    else
        start_up || { kill "$(cat "$W/curl.pid")" 2>/dev/null; return 1; }
    fi
    wait "$WPID"
    secs=$(since "$t0")
    if [ "$(cat "$W/watch.out")" != "done" ]; then
        echo "bench: $who did not drain $n TrainJobs"
    else
        rec "$who-drain-$tag" "$secs"
        rec "$who-cpu-$tag" "$(cpu_s "$MPID")"
        rec "$who-rss-$tag-drain" "$(rss "$MPID")"
        sleep "$SETTLE"
        rec "$who-rss-$tag" "$(rss "$MPID")"
        rec "$who-priv-$tag" "$(priv "$MPID")"
        rec "$who-anon-$tag" "$(anon "$MPID")"
        rec "$who-hwm-$tag" "$(hwm "$MPID")"
        rec "$who-jobsets-$tag" "$(kc get jobsets -n "$ns" -o name | wc -l)"
    fi
    stop_side "$who"
    clear_ns "$ns"
}

# ---- the plain-client baseline ----
render_baseline() { # render_baseline NS
    trainjobs "$1" "$N" >"$W/base.json"
    jq -c '.items[] | ., "---"' "$W/base.json" | sed 's/^"---"$/---/' >"$W/base.yaml"
    "$KTCTL" render --uid 00000000-0000-4000-8000-000000000000 --runtime deploy/runtimes/torch-distributed.yaml \
        -o json "$W/base.yaml" >"$W/objs.json" || { echo "bench: render failed"; return 1; }
    rm -rf "$W/o"
    mkdir -p "$W/o"
    echo '{"status":{"conditions":[{"type":"Suspended","status":"True","reason":"Suspended","message":"TrainJob is suspended","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' >"$W/o/status.json"
    jq -c '.items[]' "$W/objs.json" | awk -v dir="$W/o" '{f = dir "/" NR ".json"; print > f; close(f)}'
}
baseline() { # baseline NS
    local ns=$1 tls i t0 bad
    kc create namespace "$ns" >/dev/null
    render_baseline "$ns" || return 1
    kc create -f "$W/base.json" >/dev/null || return 1
    # with "next" every URL group needs its own TLS and output options
    tls=$(printf 'silent\ncacert = "%s"\ncert = "%s"\nkey = "%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n' "$KT_CA" "$W/c.crt" "$W/c.key")
    {
        i=0
        jq -r '.items[] | "\(.kind) \(.metadata.name)"' "$W/objs.json" | while read -r kind name; do
            i=$((i + 1))
            case "$kind" in
            ConfigMap) p="/api/v1/namespaces/$ns/configmaps/$name" ;;
            JobSet) p="/apis/jobset.x-k8s.io/v1alpha2/namespaces/$ns/jobsets/$name" ;;
            *) continue ;;
            esac
            printf 'url = "%s%s?fieldManager=trainer&force=true"\nrequest = "PATCH"\nheader = "Content-Type: application/apply-patch+yaml"\ndata-binary = "@%s/%s.json"\n%s\n' \
                "$KT_APISERVER" "$p" "$W/o" "$i" "$tls"
        done
        for i in $(seq 0 $((N - 1))); do
            printf 'url = "%s/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs/tj%s/status"\nrequest = "PATCH"\nheader = "Content-Type: application/merge-patch+json"\ndata-binary = "@%s/status.json"\n%s\n' \
                "$KT_APISERVER" "$ns" "$i" "$W/o" "$tls"
        done
    } | sed '$d' >"$W/curl.cfg" # no "next" after the last group
    t0=$(wall_s)
    curl -s --no-progress-meter --parallel --parallel-max 4 -K "$W/curl.cfg" >"$W/codes.txt" 2>"$W/curl.err"
    rec base-drain "$(since "$t0")"
    bad=$(grep -vc '^20[01]$' "$W/codes.txt")
    [ "$bad" = 0 ] || echo "bench: baseline: $bad non-2xx answers"
    clear_ns "$ns" # the managers must not see them (their objects have a foreign UID)
}

# ---- 1. idle ----
: >"$W/results"
SIDES="kt${BEFORE:+ before}$([ "$HAVE_UP" = 1 ] && echo " up")"
sides_in_order() { # sides_in_order R - the sides in round R's order (each side leads in turn)
    local -a a
    read -ra a <<<"$SIDES"
    local n=${#a[@]} i
    for ((i = 0; i < n; i++)); do printf '%s ' "${a[$(((i + $1 - 1) % n))]}"; done
}
for who in $SIDES; do
    idle "$who" idle || exit 0
done

# ---- 2. interleaved rounds ----
for r in $(seq "$ROUNDS"); do
    [ "${BENCH_BASELINE:-1}" = 0 ] || baseline "base-$r"
    for who in $(sides_in_order "$r"); do
        drain "$who" "$who-$r" "$N" "$N"
    done
done

# ---- 3. growth ----
G=${BENCH_GROWTH:-0}
[ "$G" -gt 0 ] && drain kt growth "$G" "$G"

# ---- 4. unrelated objects ----
if [ "${BENCH_UNRELATED:-1}" != 0 ]; then
    kc create namespace unrelated >/dev/null
    pad=$(head -c 768 /dev/zero | tr '\0' x)
    for kind in ConfigMap:10000 Secret:5000; do
        k=${kind%%:*} c=${kind#*:}
        jq -n --arg k "$k" --arg pad "$pad" --argjson n "$c" '{apiVersion: "v1", kind: "List", items: [range($n) as $i |
            {apiVersion: "v1", kind: $k, metadata: {name: "u\($i)", namespace: "unrelated",
             labels: {app: "someone-else"}}} + (if $k == "Secret" then {stringData: {v: $pad}} else {data: {v: $pad}} end)]}' |
            kc create -f - >/dev/null
    done
    for who in $SIDES; do
        idle "$who" unrelated
    done
fi

# ---- report ----
report() { # report LABEL KEY UNIT
    local k u b line
    k=$(med "kt-$2")
    [ -n "$k" ] || return 0
    line="bench: $1: kt $k $3"
    if [ -n "$BEFORE" ]; then
        b=$(med "before-$2")
        line+=", before ${b:-?} $3, kt/before $(ratio_of "$k" "$b")"
    fi
    if [ "$HAVE_UP" = 1 ]; then
        u=$(med "up-$2")
        line+=", upstream ${u:-?} $3, kt/upstream $(ratio_of "$k" "$u")"
    fi
    echo "$line"
}
echo "bench: reconciler ($ROUNDS interleaved rounds, medians; client QPS $QPS burst $BURST for both)"
report "idle rss" rss-idle KB
report "idle private" priv-idle KB
report "idle anonymous" anon-idle KB
# The floor under kt's figures: its shared libraries loaded and initialised, no kt code run.
FLOOR="$root/$b/tools/rss_floor"
[ -x "$FLOOR" ] || make -s "$b/tools/rss_floor" >/dev/null 2>&1
[ -x "$FLOOR" ] && echo "bench: library floor (tests/tools/rss_floor: kt's libraries loaded and initialised): $("$FLOOR" | sed 's/=/ /g; s/\([0-9]\) /\1 KB, /g') KB"
report "reconcile-$N drain" "drain-$N" s
report "reconcile-$N cpu" "cpu-$N" s
report "rss-$N at drain" "rss-$N-drain" KB
report "rss-$N settled" "rss-$N" KB
report "private-$N settled" "priv-$N" KB
report "anonymous-$N settled" "anon-$N" KB
report "peak rss-$N" "hwm-$N" KB
base=$(med base-drain)
[ "${BENCH_BASELINE:-1}" = 0 ] || echo "bench: reconcile-$N plain-client baseline: $base s; kt drain/baseline $(ratio_of "$(med "kt-drain-$N")" "$base")"
per() { # per WHO TAG COUNT - KB per TrainJob above idle
    local a i
    a=$(med "$1-rss-$2")
    i=$(med "$1-rss-idle")
    [ -n "$a" ] && [ -n "$i" ] && awk -v a="$a" -v i="$i" -v n="$3" 'BEGIN {printf "%.1f", (a - i) / n}'
}
echo "bench: rss per TrainJob at $N: kt $(per kt "$N" "$N") KB${BEFORE:+, before $(per before "$N" "$N") KB}$([ "$HAVE_UP" = 1 ] && echo ", upstream $(per up "$N" "$N") KB")"
echo "bench: cpu per TrainJob at $N: kt $(awk -v a="$(med "kt-cpu-$N")" -v n="$N" 'BEGIN {printf "%.2f", a / n * 1000}') ms${BEFORE:+, before $(awk -v a="$(med "before-cpu-$N")" -v n="$N" 'BEGIN {printf "%.2f", a / n * 1000}') ms}"
if [ "$G" -gt 0 ]; then
    echo "bench: reconcile-$G drain: kt $(med "kt-drain-$G") s (kt only)"
    echo "bench: reconcile-$G cpu: kt $(med "kt-cpu-$G") s"
    echo "bench: rss-$G settled: kt $(med "kt-rss-$G") KB, anonymous $(med "kt-anon-$G") KB"
    echo "bench: rss per TrainJob at $G: kt $(per kt "$G" "$G") KB"
    echo "bench: cpu per TrainJob: kt $(awk -v a="$(med "kt-cpu-$N")" -v n="$N" 'BEGIN {printf "%.2f", a / n * 1000}') ms at $N, $(awk -v a="$(med "kt-cpu-$G")" -v n="$G" 'BEGIN {printf "%.2f", a / n * 1000}') ms at $G"
fi
if [ "${BENCH_UNRELATED:-1}" != 0 ]; then
    report "idle rss with 10000 unrelated ConfigMaps + 5000 Secrets" rss-unrelated KB
    report "idle anonymous with them" anon-unrelated KB
    echo "bench: unrelated objects: kt idle rss $(med kt-rss-idle) -> $(med kt-rss-unrelated) KB$([ "$HAVE_UP" = 1 ] && echo ", upstream $(med up-rss-idle) -> $(med up-rss-unrelated) KB")"
fi
echo "bench: checks: kt jobsets per run $(med "kt-jobsets-$N")${BEFORE:+, before $(med "before-jobsets-$N")}$([ "$HAVE_UP" = 1 ] && echo ", upstream $(med "up-jobsets-$N")")"
[ "$HAVE_UP" = 1 ] || [ "${BENCH_UPSTREAM:-1}" = 0 ] || echo "bench: upstream: not built"
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
