#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/cache_strangers.sh ENV_FILE - strangers cannot grow the reconciler's cache
# (docs/development.md#the-reliability-tier). Anyone who may create ConfigMaps can put our label
# (trainer.kubeflow.org/trainjob-name) on them; such objects without a TrainJob controller
# must cost the reconciler (almost) nothing, on the watch path and on a restart's relist.
# 300 labelled 1 MB ConfigMaps; the reconciler's RSS (/proc/PID/status) is compared with its
# RSS before them: a memory bound, not a time. Positive case: a TrainJob made afterwards is
# still reconciled (its JobSet appears). Every wait is a bounded poll.
. "$(dirname "$0")/lib.sh" "$@"
N=${KT_STRANGERS:-300}
# ASan's quarantine (256 MiB) would keep every freed 1 MB object: keep it small so RSS
# measures what the reconciler keeps (no effect on the plain build).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"

# reconciler NAME - start a reconciler (kt_daemon: ready). Sets REC_PID, MPORT.
reconciler() {
    kt_daemon "$1" "$REL_RECONCILER" --kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --workers 1 || return 1
    REC_PID=$(rel_pid "$1")
    MPORT=$(kt_port "$1" metrics)
}
informer_holds() { # informer_holds N - the configmaps informer holds at least N objects
    local n
    n=$(curl -sk "https://127.0.0.1:$MPORT/metrics" | sed -n 's/^kt_informer_objects{resource="configmaps"} \([0-9]*\).*/\1/p')
    [ "${n:-0}" -ge "$1" ]
}

kc apply -k "$KT_ROOT/deploy/rbac/reconciler" >/dev/null || { bad rbac "apply failed"; kt_finish; }
kc apply -k "$KT_ROOT/deploy/runtimes" >/dev/null || { bad runtimes "apply failed"; kt_finish; }
NS=$(kt_ns strangers) || { bad namespace "cannot create"; kt_finish; }
reconciler first || { bad start "reconciler not ready"; kt_finish; }
before_kb=$(rel_rss_kb "$REC_PID" VmRSS)
have=$(curl -sk "https://127.0.0.1:$MPORT/metrics" | sed -n 's/^kt_informer_objects{resource="configmaps"} \([0-9]*\).*/\1/p')

# N labelled ConfigMaps of 1 MB each, no owner.
head -c $((1000 * 1000)) /dev/zero | tr '\0' 'x' >"$T/blob"
mk_stranger() { # mk_stranger I
    {
        printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"stranger-%s","namespace":"%s","labels":{"trainer.kubeflow.org/trainjob-name":"nobody"}},"data":{"blob":"' "$1" "$NS"
        cat "$T/blob"
        printf '"}}'
    } | curl -sS -o /dev/null -w '%{http_code}\n' --cacert "$KT_CA" \
        --cert "$KT_CLUSTER_DIR/admin.crt" --key "$KT_CLUSTER_DIR/admin.key" \
        -H 'Content-Type: application/json' --data-binary @- \
        "$KT_APISERVER/api/v1/namespaces/$NS/configmaps"
}
export -f mk_stranger
export T NS KT_CA KT_CLUSTER_DIR KT_APISERVER
seq "$N" | xargs -P 4 -I{} bash -c 'mk_stranger {}' >"$T/codes"
if [ "$(grep -c '^201$' "$T/codes")" = "$N" ]; then
    ok strangers-created
else
    bad strangers-created "$(sort "$T/codes" | uniq -c | tr '\n' ' ')"
fi

# The watch path: all N seen (and stored as identities), RSS flat.
if kt_poll 120 informer_holds $((have + N)); then ok strangers-watched; else bad strangers-watched "informer did not see $N objects"; fi
after_kb=$(rel_rss_kb "$REC_PID" VmRSS)
growth=$((after_kb - before_kb))
echo "  watch: rss before=${before_kb}kB after=${after_kb}kB growth=${growth}kB hwm=$(rel_rss_kb "$REC_PID" VmHWM)kB for $N x 1 MB"
# Whole objects would be N MB; identities are ~N x 200 B. The bound leaves room for the
# allocator's retained free space after the 1 MB events, not for the objects.
if [ "$growth" -le $((32 * 1024)) ]; then ok strangers-watch-rss-flat; else bad strangers-watch-rss-flat "RSS grew by ${growth} kB"; fi

# The relist path: a restart lists the N strangers page by page.
kt_daemon_stop first
reconciler second || { bad restart "reconciler not ready after restart"; kt_finish; }
if informer_holds $((have + N)); then ok strangers-relisted; else bad strangers-relisted "informer holds fewer than $N"; fi
rss=$(rel_rss_kb "$REC_PID" VmRSS)
hwm=$(rel_rss_kb "$REC_PID" VmHWM)
echo "  relist: rss=${rss}kB hwm=${hwm}kB (first start: ${before_kb}kB)"
if [ $((rss - before_kb)) -le $((32 * 1024)) ]; then ok strangers-relist-rss-flat; else bad strangers-relist-rss-flat "RSS ${rss} kB after relisting, ${before_kb} kB before the strangers"; fi
# One page of 20 full objects may be in memory at once (body text + parsed), never all N.
if [ "$hwm" -le $((before_kb + 96 * 1024)) ]; then ok strangers-relist-peak-bounded; else bad strangers-relist-peak-bounded "peak ${hwm} kB"; fi

# Still working: a TrainJob made now is reconciled.
cat <<YAML | kc apply -f - >/dev/null
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: after-strangers
  namespace: $NS
spec:
  runtimeRef:
    name: torch-distributed
    kind: ClusterTrainingRuntime
YAML
if kc wait --timeout=60s --for=create "jobset/after-strangers" -n "$NS" >/dev/null 2>&1; then
    ok trainjob-reconciled-after-strangers
else
    bad trainjob-reconciled-after-strangers "no JobSet: $(tail -5 "$T/second.log")"
fi
kt_daemon_stop second
if grep -l -E '(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|runtime error:' "$T"/*.log >/dev/null; then
    bad no-sanitizer-reports "see the logs"
else
    ok no-sanitizer-reports
fi
kt_finish
