#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/lifecycle_test.sh ENV_FILE - a TrainJob's end of life on the real API
# server (the provisional lifecycle fields, docs/api.md), with kt-reconciler as its non-admin identity (deploy/rbac/reconciler):
# - terminal is terminal: the deleted JobSet (and PodGroup) of a Complete or Failed TrainJob is
#   never re-created, observed with watches, while a running TrainJob's deleted JobSet is (the
#   negative control proving the watch and the reconciler saw the same events); a later JobSet
#   status cannot clear Failed;
# - the provisional KEP-2899 fields: status.startTime / completionTime set once,
#   ttlSecondsAfterFinished (own, runtime runPolicy default, a job's 0 over a runtime's 600,
#   absent = never, changed after the finish, expired while kt-reconciler was down);
# - why a TrainJob is stuck (kt addition, upstream #3671): ResourcesCreationFailed=True with
#   the event's reason and note for a missing runtime and a ResourceQuota refusal, removed
#   once the JobSet can be created.
# No kube-controller-manager runs here: there is no garbage collector, so a TTL deletion
# (foreground propagation) shows as a deletionTimestamp plus the foregroundDeletion finalizer
# that the garbage collector would act on (the e2e tier has the collector). JobSet status is
# written with kubectl as upstream's integration tests do. Every wait is `kubectl wait` or a
# bounded poll; the only fixed waits are the observation windows of the negative checks.
. "$(dirname "$0")/lib.sh"
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}
KW=60s
WINDOW=${KT_LIFECYCLE_WINDOW:-10} # seconds a "nothing is re-created" watch observes
PID_main="" # kt_daemon main sets it; empty while no reconciler runs
kw() { kc wait --timeout=$KW "$@"; }
jp() { kc get "$@"; }
measure() { echo "$*" >>"$T/measured"; } # a figure, printed at the end

# start_main - start the reconciler (one worker: keys are handled in arrival order) and wait
# until its /readyz answers 200 (kt_daemon); READY_AT = epoch seconds it was seen ready. A
# status write that only adds startTime or moves jobsStatus goes out within 2 s (the window
# docs/operating.md#status-writes describes; default 30 s), so status-times-set-once sees a
# startTime held and then written alone, with no JobSet status to carry it.
start_main() {
    kt_daemon main "$REC" --kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --workers 1 --status-batch-seconds 2 && READY_AT=$(date +%s.%N)
}

now_rfc() { date -u +%Y-%m-%dT%H:%M:%SZ; }
epoch() { date -u -d "$1" +%s; } # epoch RFC3339
js_cond() { # js_cond NAME TYPE REASON - a True JobSet condition, lastTransitionTime now
    it_js_status "$NS" "$1" "{\"status\":{\"conditions\":[{\"type\":\"$2\",\"status\":\"True\",\"reason\":\"$3\",\"message\":\"m\",\"lastTransitionTime\":\"$(now_rfc)\"}]}}"
}
apply_tj() { # apply_tj NAME RUNTIME KIND [EXTRA_SPEC_YAML]
    kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: $NS
spec:
  runtimeRef:
    name: $2
    kind: $3
${4:-}
YAML
}
ctj() { apply_tj "$1" torch-distributed ClusterTrainingRuntime "${2:-}"; } # ctj NAME [EXTRA]
mk_runtime() { # mk_runtime NAME EXTRA_SPEC_YAML - a TrainingRuntime with one busybox job
    kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: $1
  namespace: $NS
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
$2
$(it_runtime_template)
YAML
}
js_finish() { # js_finish NAME Complete|Failed - the JobSet reports it, the TrainJob records it
    if [ "$2" = Complete ]; then js_cond "$1" Completed AllJobsCompleted; else js_cond "$1" Failed FailedJobs; fi &&
        kw --for=condition="$2" "trainjob/$1" -n "$NS" >/dev/null
}
deleting() { test -n "$(jp trainjob "$1" -n "$NS" -o jsonpath='{.metadata.deletionTimestamp}')"; }
not_deleting() { test -z "$(jp trainjob "$1" -n "$NS" -o jsonpath='{.metadata.deletionTimestamp}')"; }

# ---- setup -------------------------------------------------------------------------------
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || { bad rbac "apply failed"; kt_finish; }
kc apply -k "$it_root/deploy/runtimes" >/dev/null || { bad runtimes "apply failed"; kt_finish; }
check rbac-can-delete-trainjobs bash -c "'$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i delete trainjobs.trainer.kubeflow.org -A | grep -c yes >/dev/null"
check rbac-cannot-create-trainjobs bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i create trainjobs.trainer.kubeflow.org -A | grep -c yes >/dev/null"
start_main || { bad start "reconciler not ready"; kt_finish; }
ok start
NS=$(kt_ns life)

# ---- terminal is terminal ----------------------------------------------------------------
mk_runtime cosched-rt "  podGroupPolicy:
    coscheduling: {}"
# watch_kind KIND FILE NAME - a background watch of KIND in NS writing "EVENT NAME" lines;
# returns once its initial list has shown NAME, so no later event is missed.
watch_kind() {
    (kc get "$1" -n "$NS" --watch --output-watch-events -o json --request-timeout=$((WINDOW + 30))s |
        jq --unbuffered -r '"\(.type) \(.object.metadata.name)"' >"$2") 2>/dev/null &
    WATCH_PIDS+=($!)
    kt_poll 60 grep -qx "ADDED $3" "$2"
}
# added FILE NAME - the number of times NAME was ADDED after it was first DELETED (re-created).
added() { awk -v n="$2" '$2 == n && $1 == "DELETED" { d = 1 } d && $2 == n && $1 == "ADDED"' "$1" | wc -l; }
recreated() { test "$(added "$1" "$2")" -ge 1; } # recreated FILE NAME
terminal_case() { # terminal_case Complete|Failed NAME CONTROL
    local what=$1 n=$2 ctl=$3 t0
    WATCH_PIDS=()
    apply_tj "$n" cosched-rt TrainingRuntime && apply_tj "$ctl" cosched-rt TrainingRuntime &&
        kw --for=create "jobset/$n" "jobset/$ctl" "podgroups.scheduling.x-k8s.io/$n" -n "$NS" >/dev/null &&
        js_finish "$n" "$what" || return 1
    watch_kind jobsets "$T/js-$n.w" "$n" && watch_kind podgroups.scheduling.x-k8s.io "$T/pg-$n.w" "$n" || return 1
    t0=$(date +%s)
    # the finished TrainJob first, then the running control (one worker: handled in order)
    kc delete jobset "$n" -n "$NS" --wait=false >/dev/null &&
        kc delete podgroups.scheduling.x-k8s.io "$n" -n "$NS" --wait=false >/dev/null &&
        kc annotate trainjob "$n" -n "$NS" poke=1 >/dev/null &&
        kc delete jobset "$ctl" -n "$NS" --wait=false >/dev/null || return 1
    # negative control: the running TrainJob's JobSet comes back (the watch sees it)
    kt_poll 60 recreated "$T/js-$n.w" "$ctl" || { echo "control not re-created"; return 1; }
    grep -qx "DELETED $n" "$T/js-$n.w" || { echo "the watch missed the deletion"; return 1; }
    while [ $(($(date +%s) - t0)) -lt "$WINDOW" ]; do sleep 0.5; done # the observation window
    kill "${WATCH_PIDS[@]}" 2>/dev/null
    local msg
    msg="$what: JobSet ADDED $(added "$T/js-$n.w" "$n"), PodGroup ADDED $(added "$T/pg-$n.w" "$n") in ${WINDOW}s; control re-created"
    measure "$msg"
    echo "$msg"
    test "$(added "$T/js-$n.w" "$n")" = 0 && test "$(added "$T/pg-$n.w" "$n")" = 0 &&
        ! jp jobset "$n" -n "$NS" >/dev/null 2>&1 &&
        test "$(jp trainjob "$n" -n "$NS" -o jsonpath="{.status.conditions[?(@.type==\"$what\")].status}")" = True
}
check terminal-complete-jobset-not-recreated terminal_case Complete term-done term-ctl1
check terminal-failed-jobset-not-recreated terminal_case Failed term-fail term-ctl2
failed_kept() {
    # A JobSet that later reports no failure (conditions cleared, pods active) cannot clear
    # Failed: the jobsStatus it carries is copied (the barrier), Failed stays True.
    ctj fk && kw --for=create jobset/fk -n "$NS" >/dev/null && js_finish fk Failed &&
        it_js_status "$NS" fk '{"status":{"conditions":[],"replicatedJobsStatus":[{"name":"node","ready":1,"succeeded":0,"failed":0,"active":1,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].active}'=1 trainjob/fk -n "$NS" >/dev/null &&
        test "$(jp trainjob fk -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}|{.status.conditions[?(@.type=="Failed")].reason}')" = "True|FailedJobs"
}
check terminal-failed-not-cleared-by-jobset failed_kept

# ---- status.startTime / completionTime (provisional) -------------------------------------
times() { jp trainjob "$1" -n "$NS" -o jsonpath='{.status.startTime}|{.status.completionTime}'; }
status_times() {
    local s1 t
    ctj st && kw --for=create jobset/st -n "$NS" >/dev/null &&
        kw --for=jsonpath='{.status.startTime}' trainjob/st -n "$NS" >/dev/null || return 1
    s1=$(times st)
    [ -n "${s1%|}" ] && [ "${s1#*|}" = "" ] || { echo "start: $s1"; return 1; }
    # a later status change (the barrier: jobsStatus copied) keeps startTime
    it_js_status "$NS" st '{"status":{"replicatedJobsStatus":[{"name":"node","ready":1,"succeeded":0,"failed":0,"active":1,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].active}'=1 trainjob/st -n "$NS" >/dev/null &&
        test "$(times st)" = "$s1" || { echo "startTime moved: $(times st)"; return 1; }
    js_finish st Complete && kw --for=jsonpath='{.status.completionTime}' trainjob/st -n "$NS" >/dev/null || return 1
    t=$(times st)
    test "${t%|*}" = "${s1%|}" &&
        test "${t#*|}" = "$(jp trainjob st -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Complete")].lastTransitionTime}')" || { echo "complete: $t"; return 1; }
    # set once: another JobSet status later changes neither
    it_js_status "$NS" st '{"status":{"replicatedJobsStatus":[{"name":"node","ready":0,"succeeded":2,"failed":0,"active":0,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].succeeded}'=2 trainjob/st -n "$NS" >/dev/null &&
        test "$(times st)" = "$t"
}
check status-times-set-once status_times
suspended_times() {
    # created suspended: no startTime (negative); resumed: startTime set
    ctj sus "  suspend: true" && kw --for=condition=Suspended trainjob/sus -n "$NS" >/dev/null &&
        test "$(times sus)" = "|" &&
        kc patch trainjob sus -n "$NS" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null &&
        kw --for=jsonpath='{.status.startTime}' trainjob/sus -n "$NS" >/dev/null &&
        test "$(jp trainjob sus -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Suspended")].reason}')" = Resumed
}
check status-times-suspended-then-resumed suspended_times

# ---- ttlSecondsAfterFinished (provisional) -----------------------------------------------
ttl_own() {
    # TTL 3: the deletion comes about 3 s after the recorded finish (API timestamps, seconds)
    local completed del
    ctj ttl3 "  ttlSecondsAfterFinished: 3" && ctj nottl && kw --for=create jobset/ttl3 jobset/nottl -n "$NS" >/dev/null &&
        js_finish nottl Complete && js_finish ttl3 Complete && kt_poll 60 deleting ttl3 || return 1
    completed=$(epoch "$(jp trainjob ttl3 -n "$NS" -o jsonpath='{.status.completionTime}')")
    del=$(epoch "$(jp trainjob ttl3 -n "$NS" -o jsonpath='{.metadata.deletionTimestamp}')")
    measure "ttl 3: deletionTimestamp - completionTime = $((del - completed)) s"
    [ $((del - completed)) -ge 3 ] && [ $((del - completed)) -le 5 ] &&
        # foreground: the garbage collector's finalizer; the Complete condition was recorded
        jp trainjob ttl3 -n "$NS" -o jsonpath='{.metadata.finalizers}' | grep -c foregroundDeletion >/dev/null &&
        test "$(jp trainjob ttl3 -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}')" = True &&
        # negative: the TTL-less TrainJob, finished before it, is left alone
        not_deleting nottl
}
check ttl-own-deletes-after-3s ttl_own
ttl_runtime() {
    # runtime default 0 applies; a job's own 600 overrides it (negative); a job's own 0
    # overrides a runtime's 600
    mk_runtime ttl0-rt "  runPolicy:
    ttlSecondsAfterFinished: 0" && mk_runtime ttl600-rt "  runPolicy:
    ttlSecondsAfterFinished: 600" &&
        apply_tj rt-default ttl0-rt TrainingRuntime && apply_tj rt-override ttl0-rt TrainingRuntime "  ttlSecondsAfterFinished: 600" &&
        apply_tj job-zero ttl600-rt TrainingRuntime "  ttlSecondsAfterFinished: 0" && apply_tj rt-600 ttl600-rt TrainingRuntime &&
        kw --for=create jobset/rt-default jobset/rt-override jobset/job-zero jobset/rt-600 -n "$NS" >/dev/null &&
        js_finish rt-override Complete && js_finish rt-600 Failed && js_finish rt-default Complete && js_finish job-zero Failed &&
        kt_poll 60 deleting rt-default && kt_poll 60 deleting job-zero &&
        not_deleting rt-override && not_deleting rt-600
}
check ttl-runtime-default-and-overrides ttl_runtime
ttl_changed() {
    # mutable: a finished TrainJob's TTL shortened from 600 to 0 deletes it; kept in the spec
    test "$(jp trainjob rt-override -n "$NS" -o jsonpath='{.spec.ttlSecondsAfterFinished}')" = 600 &&
        kc patch trainjob rt-override -n "$NS" --type=merge -p '{"spec":{"ttlSecondsAfterFinished":0}}' >/dev/null &&
        kt_poll 60 deleting rt-override
}
check ttl-changed-after-finish ttl_changed
ttl_restart() {
    # kill -9 after the finish is recorded, wait past the TTL (the fault itself), restart:
    # deleted at once
    local completed t1
    ctj ttlr "  ttlSecondsAfterFinished: 2" && kw --for=create jobset/ttlr -n "$NS" >/dev/null &&
        js_finish ttlr Complete || return 1
    kill -9 "$PID_main"
    wait "$PID_main" 2>/dev/null
    PID_main=""
    completed=$(epoch "$(jp trainjob ttlr -n "$NS" -o jsonpath='{.status.completionTime}')") || return 1
    while [ "$(date +%s)" -le $((completed + 3)) ]; do sleep 0.2; done
    not_deleting ttlr || { echo "deleted while no reconciler ran"; return 1; }
    start_main && kt_poll 60 deleting ttlr || return 1
    t1=$(date +%s.%N)
    measure "expired while down: deletionTimestamp seen $(awk -v a="$t1" -v b="$READY_AT" 'BEGIN { printf "%.2f", a - b }') s after /readyz"
}
check ttl-expired-while-down-acts-at-start ttl_restart

# ---- why a TrainJob is stuck, in its status (kt addition, upstream #3671) ------------------
cf() { jp trainjob "$1" -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="ResourcesCreationFailed")].status}|{.status.conditions[?(@.type=="ResourcesCreationFailed")].reason}|{.status.conditions[?(@.type=="ResourcesCreationFailed")].message}'; }
cf_is() { test "$(cf "$1")" = "$2"; }     # cf_is TJ WANT
cf_has() { [[ "$(cf "$1")" == *"$2"* ]]; } # cf_has TJ TEXT
missing_runtime() {
    # the runtime is created afterwards: the condition goes, the JobSet comes
    apply_tj stuck later-rt TrainingRuntime &&
        kt_poll 60 cf_is stuck "True|TrainJobResourcesCreationFailed|TrainJob resources reconciliation failed: TrainingRuntime specified in TrainJob is not found: TrainingRuntime.trainer.kubeflow.org \"later-rt\" not found" || { cf stuck; return 1; }
    measure "stuck TrainJob's STATE column: $(kc get trainjob stuck -n "$NS" --no-headers | awk '{print $2}')"
    mk_runtime later-rt "" && kc annotate trainjob stuck -n "$NS" poke=1 >/dev/null &&
        kw --for=create jobset/stuck -n "$NS" >/dev/null && kt_poll 60 cf_is stuck "||"
}
check stuck-missing-runtime-then-created missing_runtime
quota() {
    # A ResourceQuota of 0 JobSets (its status written as the quota controller would; none
    # runs here): the API server refuses the JobSet and the TrainJob says so; without the
    # quota the JobSet is created and the condition removed.
    kc create -n "$NS" -f - >/dev/null <<YAML || return 1
apiVersion: v1
kind: ResourceQuota
metadata: {name: no-jobsets}
spec: {hard: {count/jobsets.jobset.x-k8s.io: "0"}}
YAML
    kc patch resourcequota no-jobsets -n "$NS" --subresource=status --type=merge \
        -p '{"status":{"hard":{"count/jobsets.jobset.x-k8s.io":"0"},"used":{"count/jobsets.jobset.x-k8s.io":"0"}}}' >/dev/null &&
        ctj quota && kt_poll 60 cf_has quota "True|TrainJobResourcesCreationFailed|TrainJob resources reconciliation failed: " &&
        cf_has quota "exceeded quota: no-jobsets" && ! jp jobset quota -n "$NS" >/dev/null 2>&1 || { cf quota; return 1; }
    kc delete resourcequota no-jobsets -n "$NS" >/dev/null &&
        kc annotate trainjob quota -n "$NS" poke=1 >/dev/null &&
        kw --for=create jobset/quota -n "$NS" >/dev/null && kt_poll 60 cf_is quota "||"
}
check stuck-quota-refusal-then-lifted quota

# The garbage collector's part, by hand (there is none here): drop the finalizers.
for n in ttl3 rt-default job-zero rt-override ttlr; do
    kc patch trainjob "$n" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
done
if [ -n "$PID_main" ]; then
    it_stop_clean main
    PID_main=""
fi
sed 's/^/measured: /' "$T/measured" 2>/dev/null
check reconciler-log-clean bash -c "! grep -E 'AddressSanitizer|runtime error:' '$T/main.log'"
kt_finish
