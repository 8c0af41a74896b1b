#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/reconciler_test.sh ENV_FILE - kt-reconciler on the real API server
# (docs/internals/upstream.md#trainjob-reconcile to #runtime-finalizers), running as its non-admin identity with exactly deploy/rbac/reconciler
# applied by the admin. JobSet status is written with kubectl as upstream's integration tests
# do. Every wait is `kubectl wait` (60 s) or a bounded kt_poll on a condition; nothing sleeps for
# readiness and nothing asserts on time.
. "$(dirname "$0")/lib.sh"
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}
KTCTL="$it_root/build/plain/bin/ktctl"
KW=60s
# The reconciler as the controller-manager identity; kt_daemon NAME "$REC" "${RECF[@]}" FLAG...
# starts one and waits for its /readyz (tests/lib.sh).
# --status-batch-seconds 1: a status write that only moves jobsStatus (the barrier of many
# cases here) goes out within a second, not the default 30 (status-writes-folded tests those).
RECF=(--kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
    --status-batch-seconds 1)

kw() { kc wait --timeout=$KW "$@"; }
jp() { kc get "$@"; }

# subset A B (JSON files): every member of A is in B with the same value; arrays match
# element by element with the same length.
subset() {
    jq -e -n --slurpfile a "$1" --slurpfile b "$2" '
        def sub(x; y): if (x|type) == "object" then (y|type) == "object" and
                ([x|keys[] as $k | sub(x[$k]; y[$k])] | all)
            elif (x|type) == "array" then (y|type) == "array" and (x|length) == (y|length) and
                ([range(x|length) as $i | sub(x[$i]; y[$i])] | all)
            else x == y end;
        sub($a[0]; $b[0])' >/dev/null
}

# render_subset NS NAME FILE [RUNTIME_FILE] - every object `ktctl render --uid <live uid>`
# prints is a subset of the live one (ignoring the SSH key bytes and the snapshot's
# data.runtime).
render_subset() {
    local ns=$1 name=$2 file=$3 uid n i kind oname args=()
    [ $# -ge 4 ] && args=(--runtime "$4")
    uid=$(jp trainjob "$name" -n "$ns" -o jsonpath='{.metadata.uid}')
    "$KTCTL" render --uid "$uid" "${args[@]}" -o json "$file" >"$T/render.json" || return 1
    n=$(jq '.items | length' "$T/render.json")
    [ "$n" -gt 0 ] || return 1
    for i in $(seq 0 $((n - 1))); do
        jq ".items[$i] | if .kind == \"Secret\" then del(.data) else . end |
            if .kind == \"ConfigMap\" and (.metadata.name | endswith(\"-runtime-snapshot\"))
            then del(.data.runtime) else . end" "$T/render.json" >"$T/want.json"
        kind=$(jq -r .kind "$T/want.json")
        oname=$(jq -r .metadata.name "$T/want.json")
        case "$(jq -r .apiVersion "$T/want.json")" in
        scheduling.volcano.sh/*) kind=podgroups.scheduling.volcano.sh ;;
        scheduling.x-k8s.io/*) kind=podgroups.scheduling.x-k8s.io ;;
        esac
        kw --for=create "$kind/$oname" -n "$ns" >/dev/null || return 1
        jp "$kind" "$oname" -n "$ns" -o json >"$T/have.json" || return 1
        if ! subset "$T/want.json" "$T/have.json"; then
            echo "$kind/$oname differs:"
            diff <(jq -S . "$T/want.json") <(jq -S . "$T/have.json") | sed -n 1,40p
            return 1
        fi
    done
}

# runtime_yaml NS NAME POLICY_YAML [PODGROUP_YAML] - a TrainingRuntime with one trainer job.
runtime_yaml() {
    cat <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: $2
  namespace: $1
spec:
  mlPolicy:
    numNodes: 1
$3
${4:-}
$(it_runtime_template)
YAML
}

# trainjob_yaml NS NAME RUNTIME KIND [EXTRA_SPEC_YAML]
trainjob_yaml() {
    cat <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $2
  namespace: $1
spec:
  runtimeRef:
    name: $3
    kind: $4
${5:-}
YAML
}

finalizers_are() { test "$(kc get $1 -o jsonpath='{.metadata.finalizers}')" = "$2"; }
no_finalizers() { test -z "$(kc get "$1" -o jsonpath='{.metadata.finalizers}')"; }
cond_json() { # cond_json TYPE REASON MESSAGE
    printf '{"type":"%s","status":"True","reason":"%s","message":"%s","lastTransitionTime":"2026-01-01T00:00:00Z"}' "$1" "$2" "$3"
}

# ---- setup -------------------------------------------------------------------------------
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || { bad rbac "apply failed"; kt_finish; }
kc apply -k "$it_root/deploy/runtimes" >/dev/null || { bad runtimes "apply failed"; kt_finish; }
# The identity really is not admin: it must not be able to write trainjobs. It lists and
# watches pods (the FailedScheduling events) and nothing more on them.
check rbac-not-admin bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i create trainjobs.trainer.kubeflow.org -A | grep -c yes >/dev/null"
check rbac-pods-list-only bash -c "'$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i watch pods -A | grep -c yes >/dev/null && ! '$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i delete pods -A | grep -c yes >/dev/null"
check rbac-can-patch-status bash -c "'$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i patch trainjobs.trainer.kubeflow.org --subresource=status -A | grep -c yes >/dev/null"
# One worker: keys are handled in arrival order, which the managedBy test relies on.
kt_daemon main "$REC" "${RECF[@]}" --workers 1 || { bad start "reconciler not ready"; kt_finish; }
ok start

NS=$(kt_ns rec)

# ---- every policy: ktctl render --uid <live uid> is a subset of the cluster --------------
policy_case() { # policy_case NAME RUNTIME_KIND RUNTIME [RUNTIME_FILE]
    local name=$1 f="$T/$1.yaml"
    trainjob_yaml "$NS" "$name" "$3" "$2" "  trainer:
    numNodes: 2" >"$f"
    if [ "$2" = TrainingRuntime ]; then
        { echo ---; kc get trainingruntime "$3" -n "$NS" -o yaml; } >>"$f"
    fi
    kc apply -f <(trainjob_yaml "$NS" "$name" "$3" "$2" "  trainer:
    numNodes: 2") >/dev/null &&
        kw --for=create "jobset/$name" -n "$NS" >/dev/null &&
        render_subset "$NS" "$name" "$f" ${4:+"$4"}
}
runtime_yaml "$NS" plainml-rt "" | kc apply -f - >/dev/null
runtime_yaml "$NS" flux-rt "    flux: {}" | kc apply -f - >/dev/null
runtime_yaml "$NS" cosched-rt "    torch: {}" "  podGroupPolicy:
    coscheduling:
      scheduleTimeoutSeconds: 90" | kc apply -f - >/dev/null
runtime_yaml "$NS" volcano-rt "    torch: {}" "  podGroupPolicy:
    volcano: {}" | kc apply -f - >/dev/null
check render-plainml policy_case plainml TrainingRuntime plainml-rt
check render-torch policy_case torch ClusterTrainingRuntime torch-distributed "$it_root/deploy/runtimes/torch-distributed.yaml"
check render-mpi policy_case mpi ClusterTrainingRuntime deepspeed-distributed "$it_root/deploy/runtimes/deepspeed-distributed.yaml"
check render-jax policy_case jax ClusterTrainingRuntime jax-distributed "$it_root/deploy/runtimes/jax-distributed.yaml"
check render-xgboost policy_case xgboost ClusterTrainingRuntime xgboost-distributed "$it_root/deploy/runtimes/xgboost-distributed.yaml"
check render-flux policy_case flux TrainingRuntime flux-rt
check render-coscheduling policy_case cosched TrainingRuntime cosched-rt
check render-volcano policy_case volcano TrainingRuntime volcano-rt
# Objects carry the selection label and the controller reference (no duplicates by name).
owned_names() { kc get cm,secret,jobset -n "$1" -l "trainer.kubeflow.org/trainjob-name=$2" -o name | sort | tr '\n' ' '; }
check owned-objects-mpi test "$(owned_names "$NS" mpi)" = "configmap/mpi-mpi-hostfile configmap/mpi-runtime-snapshot jobset.jobset.x-k8s.io/mpi secret/mpi-mpi-ssh-auth "
# The subset check itself rejects a difference (negative control).
neg_subset() {
    echo '{"spec":{"replicatedJobs":[{"name":"node","replicas":7}]}}' >"$T/neg.json"
    jp jobset torch -n "$NS" -o json >"$T/have.json"
    ! subset "$T/neg.json" "$T/have.json"
}
check render-subset-negative neg_subset

# ---- LimitRange / RuntimeClass events re-reconcile the suspended TrainJobs they affect ----
# (docs/internals/upstream.md#coscheduling-and-volcano; the PodGroup CRD is installed, so these watches run). The reconciler logs the
# keys it enqueues for each event; events of one informer are handled in order, so an event
# that must enqueue nothing is followed by one that must, and the first is checked after.
main_logged() { grep -F "$1" "$T/main.log"; }
side_watches() {
    local other
    other=$(kt_ns recother)
    runtime_yaml "$NS" rc-rt "    torch: {}" "  podGroupPolicy:
    coscheduling: {}" | sed 's/^\( *\)containers:$/\1runtimeClassName: kt-rc\n&/' |
        kc apply -f - >/dev/null &&
        tj_rt lrs cosched-rt "  suspend: true" && tj_rt rcs rc-rt "  suspend: true" &&
        kw --for=create podgroups.scheduling.x-k8s.io/lrs -n "$NS" >/dev/null &&
        kw --for=create podgroups.scheduling.x-k8s.io/rcs -n "$NS" >/dev/null || return 1
    kc create -n "$other" -f - >/dev/null <<YAML || return 1
apiVersion: v1
kind: LimitRange
metadata: {name: lr-other}
spec: {limits: [{type: Container, default: {cpu: 500m}}]}
YAML
    kc create -n "$NS" -f - >/dev/null <<YAML || return 1
apiVersion: v1
kind: LimitRange
metadata: {name: lr1}
spec: {limits: [{type: Container, default: {cpu: 500m}}]}
YAML
    # both suspended TrainJobs of the namespace, not the running cosched one, not another namespace
    kt_poll 60 main_logged "limitrange $NS/lr1 changed: re-reconciling suspended trainjobs" || return 1
    main_logged "limitrange $NS/lr1 changed" | grep -cF "\"$NS/lrs\"" >/dev/null &&
        main_logged "limitrange $NS/lr1 changed" | grep -cF "\"$NS/rcs\"" >/dev/null &&
        ! main_logged "limitrange $NS/lr1 changed" | grep -cF "\"$NS/cosched\"" >/dev/null &&
        ! main_logged "limitrange $other/lr-other" || return 1
    kc create -f - >/dev/null <<YAML || return 1
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kt-rc-unused}
handler: runc
YAML
    kc create -f - >/dev/null <<YAML || return 1
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kt-rc}
handler: runc
YAML
    # only the suspended TrainJob whose runtime names that class
    kt_poll 60 main_logged "runtimeclass kt-rc changed: re-reconciling suspended trainjobs" &&
        main_logged "runtimeclass kt-rc changed" | grep -cF "[\"$NS/rcs\"]" >/dev/null &&
        ! main_logged "runtimeclass kt-rc-unused changed" || return 1
    # the snapshot decides once the TrainJob ran: deleting the live runtime changes nothing
    kc delete trainingruntime rc-rt -n "$NS" >/dev/null &&
        kc delete runtimeclass kt-rc >/dev/null &&
        kt_poll 60 rcs_requeued_twice
}
rcs_requeued_twice() { # the log is read on every poll, not once before it
    test "$(main_logged "runtimeclass kt-rc changed" | grep -cF "[\"$NS/rcs\"]")" -ge 2
}
tj_rt() { trainjob_yaml "$NS" "$1" "$2" TrainingRuntime "${3:-}" | kc apply -f - >/dev/null; }
check limitrange-runtimeclass-requeue-suspended side_watches
kc delete runtimeclass kt-rc-unused >/dev/null 2>&1

# ---- status from the JobSet --------------------------------------------------------------
apply_ctj() { trainjob_yaml "$NS" "$1" torch-distributed ClusterTrainingRuntime "${2:-}" | kc apply -f - >/dev/null; }
status_complete() {
    it_js_status "$NS" torch '{"status":{"replicatedJobsStatus":[{"name":"node","ready":2,"succeeded":0,"failed":0,"active":2,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].active}'=2 trainjob/torch -n "$NS" >/dev/null &&
        test "$(jp trainjob torch -n "$NS" -o jsonpath='{.status.jobsStatus[0].name}/{.status.jobsStatus[0].ready}/{.status.jobsStatus[0].succeeded}')" = node/2/0 &&
        it_js_status "$NS" torch "{\"status\":{\"conditions\":[$(cond_json Completed AllJobsCompleted 'jobset completed successfully')],\"replicatedJobsStatus\":[{\"name\":\"node\",\"ready\":0,\"succeeded\":2,\"failed\":0,\"active\":0,\"suspended\":0}]}}" &&
        kw --for=condition=Complete trainjob/torch -n "$NS" >/dev/null &&
        test "$(jp trainjob torch -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Complete")].reason}|{.status.conditions[?(@.type=="Complete")].message}|{.status.jobsStatus[0].succeeded}')" = "AllJobsCompleted|jobset completed successfully|2"
}
check status-jobsstatus-and-complete status_complete
status_failed() { # status_failed TJ REASON MESSAGE
    it_js_status "$NS" "$1" "{\"status\":{\"conditions\":[$(cond_json Failed "$2" "$3")]}}" &&
        kw --for=condition=Failed "trainjob/$1" -n "$NS" >/dev/null &&
        test "$(jp trainjob "$1" -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}|{.status.conditions[?(@.type=="Failed")].message}')" = "$2|$3"
}
check status-failed-jobs status_failed jax FailedJobs "jobset failed due to one or more job failures"
check status-failed-max-restarts status_failed xgboost ReachedMaxRestarts "jobset failed due to reaching max number of restarts"
check status-failed-deadline status_failed plainml DeadlineExceeded "jobset exceeded its active deadline"
# A finished TrainJob builds nothing more: its deleted snapshot is not re-created.
finished_frozen() {
    kc delete cm torch-runtime-snapshot -n "$NS" >/dev/null &&
        kc annotate trainjob torch -n "$NS" poke=1 >/dev/null &&
        it_js_status "$NS" torch '{"status":{"replicatedJobsStatus":[{"name":"node","ready":0,"succeeded":3,"failed":0,"active":0,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].succeeded}'=3 trainjob/torch -n "$NS" >/dev/null &&
        ! kc get cm torch-runtime-snapshot -n "$NS" >/dev/null 2>&1
}
check finished-builds-nothing finished_frozen

# ---- suspend, resume, and the running JobSet left alone ----------------------------------
runtime_yaml "$NS" edit-rt "    torch: {}" | kc apply -f - >/dev/null
suspend_resume() {
    trainjob_yaml "$NS" sr edit-rt TrainingRuntime "  suspend: true" | kc apply -f - >/dev/null &&
        kw --for=condition=Suspended trainjob/sr -n "$NS" >/dev/null &&
        kw --for=jsonpath='{.spec.suspend}'=true jobset/sr -n "$NS" >/dev/null &&
        test "$(jp trainjob sr -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Suspended")].reason}')" = Suspended &&
        # the runtime is edited while suspended: the snapshot wins
        kc patch trainingruntime edit-rt -n "$NS" --type=json \
            -p '[{"op":"replace","path":"/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image","value":"edited"}]' >/dev/null &&
        kc patch trainjob sr -n "$NS" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null &&
        kw --for=condition=Suspended=false trainjob/sr -n "$NS" >/dev/null &&
        kw --for=jsonpath='{.spec.suspend}'=false jobset/sr -n "$NS" >/dev/null &&
        test "$(jp trainjob sr -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Suspended")].reason}|{.status.conditions[?(@.type=="Suspended")].message}')" = "Resumed|TrainJob is resumed" &&
        test "$(jp jobset sr -n "$NS" -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image}')" = busybox
}
check suspend-then-resume suspend_resume
running_left_alone() {
    # Someone else changes a field we own on the running JobSet; a later reconcile (proved by
    # the jobsStatus it copies) does not re-apply the JobSet.
    kc patch jobset sr -n "$NS" --type=json -p '[{"op":"replace","path":"/spec/replicatedJobs/0/replicas","value":5}]' >/dev/null &&
        it_js_status "$NS" sr '{"status":{"replicatedJobsStatus":[{"name":"node","ready":1,"succeeded":0,"failed":0,"active":1,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].active}'=1 trainjob/sr -n "$NS" >/dev/null &&
        test "$(jp jobset sr -n "$NS" -o jsonpath='{.spec.replicatedJobs[0].replicas}')" = 5
}
check running-jobset-not-reapplied running_left_alone
runtime_deleted() {
    # The runtime disappears after start: suspending still works from the snapshot.
    kc delete trainingruntime edit-rt -n "$NS" >/dev/null &&
        kc patch trainjob sr -n "$NS" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null &&
        kw --for=jsonpath='{.spec.suspend}'=true jobset/sr -n "$NS" >/dev/null &&
        kw --for=condition=Suspended trainjob/sr -n "$NS" >/dev/null &&
        test "$(jp jobset sr -n "$NS" -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image}')" = busybox &&
        test -z "$(kc get events -n "$NS" --field-selector involvedObject.name=sr,reason=TrainJobResourcesCreationFailed -o name)"
}
check runtime-deleted-after-start runtime_deleted

# ---- activeDeadlineSeconds ---------------------------------------------------------------
deadline() {
    apply_ctj dl "  activeDeadlineSeconds: 2" &&
        kw --for=condition=Failed trainjob/dl -n "$NS" >/dev/null &&
        test "$(jp trainjob dl -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}|{.status.conditions[?(@.type=="Failed")].message}')" = "DeadlineExceeded|TrainJob exceeded its active deadline" &&
        kw --for=delete jobset/dl -n "$NS" >/dev/null
}
check deadline-exceeded deadline
deadline_kept() {
    # A JobSet failure reported afterwards does not replace DeadlineExceeded (nor recreate).
    apply_ctj dl2 "  activeDeadlineSeconds: 600" && kw --for=create jobset/dl2 -n "$NS" >/dev/null &&
        it_js_status "$NS" dl2 '{"status":{"replicatedJobsStatus":[{"name":"node","ready":1,"succeeded":0,"failed":0,"active":1,"suspended":0}]}}' &&
        kw --for=jsonpath='{.status.jobsStatus[0].active}'=1 trainjob/dl2 -n "$NS" >/dev/null &&
        test -z "$(jp trainjob dl2 -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}')"
}
check deadline-pending deadline_kept

# ---- skipped and failed TrainJobs --------------------------------------------------------
managed_by() {
    trainjob_yaml "$NS" mk torch-distributed ClusterTrainingRuntime "  managedBy: kueue.x-k8s.io/multikueue" | kc apply -f - >/dev/null &&
        apply_ctj after-mk && kw --for=create jobset/after-mk -n "$NS" >/dev/null &&
        ! kc get jobset mk -n "$NS" >/dev/null 2>&1 &&
        ! kc get cm mk-runtime-snapshot -n "$NS" >/dev/null 2>&1 &&
        test -z "$(jp trainjob mk -n "$NS" -o jsonpath='{.status}')"
}
check managedby-multikueue-left-alone managed_by
unsupported() {
    trainjob_yaml "$NS" unsup whatever Foo | kc apply -f - >/dev/null &&
        kw --for=condition=Failed trainjob/unsup -n "$NS" >/dev/null &&
        test "$(jp trainjob unsup -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}|{.status.conditions[?(@.type=="Failed")].message}')" = "TrainingRuntimeNotSupported|unsupported runtime: Foo.trainer.kubeflow.org"
}
check training-runtime-not-supported unsupported
norun_event() { # the Warning event of norun as "message|type" in $T/norun.event (non-empty once it exists)
    kc get events -n "$NS" --field-selector involvedObject.name=norun,reason=TrainJobResourcesCreationFailed -o jsonpath='{.items[0].message}|{.items[0].type}' >"$T/norun.event" 2>/dev/null &&
        [ -s "$T/norun.event" ]
}
warning_event() {
    trainjob_yaml "$NS" norun no-such-runtime ClusterTrainingRuntime | kc apply -f - >/dev/null || return 1
    kt_poll 60 norun_event # events have generated names: poll for one
    test "$(cat "$T/norun.event")" = 'TrainJob resources reconciliation failed: not found ClusterTrainingRuntime specified in TrainJob: ClusterTrainingRuntime.trainer.kubeflow.org "no-such-runtime" not found|Warning' &&
        ! kc get jobset norun -n "$NS" >/dev/null 2>&1
}
check warning-event-missing-runtime warning_event

# ---- beyond upstream: an unschedulable pod gives its TrainJob a FailedScheduling event ----
# No scheduler runs here: the test writes the pod's PodScheduled condition as kube-scheduler
# does. With one worker, pod keys are handled in the order the pod watch reports them, so each
# case that must post nothing is followed by one that must (a barrier), and checked after it.
sched_events() { # sched_events TJ - the FailedScheduling events on TrainJob TJ, as JSON lines
    kc get events -n "$NS" --field-selector "involvedObject.kind=TrainJob,involvedObject.name=$1,reason=FailedScheduling" -o json |
        jq -c '.items[] | {type, message, count, uid: .involvedObject.uid, source: .source.component}'
}
n_events_with() { sched_events "$1" | jq -r .message | grep -cxF "$2"; } # n_events_with TJ MESSAGE
mkpod() { # mkpod NAME JOBSET JOBSET_UID [REPLICATED_JOB] - a pod as JobSet v0.12.0 labels it
    kc create -n "$NS" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels:
    jobset.sigs.k8s.io/jobset-name: "$2"
    jobset.sigs.k8s.io/jobset-uid: "$3"
    jobset.sigs.k8s.io/replicatedjob-name: ${4:-node}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
YAML
}
pod_cond() { # pod_cond POD STATUS REASON MESSAGE - write PodScheduled as the scheduler would
    kc patch pod "$1" -n "$NS" --subresource=status --type=merge -p "$(jq -cn --arg s "$2" --arg r "$3" --arg m "$4" \
        '{status: {conditions: [{type: "PodScheduled", status: $s, reason: $r, message: $m, lastTransitionTime: "2026-01-01T00:00:00Z"}]}}')" >/dev/null
}
unsched() { pod_cond "$1" False Unschedulable "$2"; } # unsched POD MESSAGE
GPU_MSG='0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.'
has_event() { test "$(n_events_with "$1" "$2")" -ge 1; }
wait_event() { kt_poll 60 has_event "$1" "$2"; } # wait_event TJ MESSAGE - bounded poll
sched_event_posted() {
    local uid
    apply_ctj gpu && kw --for=create jobset/gpu -n "$NS" >/dev/null || return 1
    JS_UID=$(jp jobset gpu -n "$NS" -o jsonpath='{.metadata.uid}')
    uid=$(jp trainjob gpu -n "$NS" -o jsonpath='{.metadata.uid}')
    mkpod gpu-node-0 gpu "$JS_UID" && unsched gpu-node-0 "$GPU_MSG" &&
        wait_event gpu "replicatedJob \"node\": $GPU_MSG" || return 1
    sched_events gpu >"$T/ev.json"
    test "$(wc -l <"$T/ev.json")" -eq 1 &&
        jq -e --arg u "$uid" --arg m "replicatedJob \"node\": $GPU_MSG" \
            '.type == "Warning" and .message == $m and .uid == $u and .source == "trainer-controller-manager"' "$T/ev.json" >/dev/null &&
        kc describe trainjob gpu -n "$NS" | grep -E 'Warning +FailedScheduling' | grep -cF 'Insufficient nvidia.com/gpu' >/dev/null
}
check sched-event-posted sched_event_posted
sched_event_dedup() {
    # a second pod with the same verdict: no second event; another verdict: a second event
    mkpod gpu-node-1 gpu "$JS_UID" && unsched gpu-node-1 "$GPU_MSG" &&
        mkpod gpu-launcher-0 gpu "$JS_UID" launcher && unsched gpu-launcher-0 "0/4 nodes are available: 4 Insufficient cpu." &&
        wait_event gpu 'replicatedJob "launcher": 0/4 nodes are available: 4 Insufficient cpu.' &&
        test "$(n_events_with gpu "replicatedJob \"node\": $GPU_MSG")" -eq 1 &&
        test "$(sched_events gpu | wc -l)" -eq 2
}
check sched-event-deduplicated sched_event_dedup
sched_event_not_ours() {
    local other='0/4 nodes are available: 4 node(s) did not match Pod'"'"'s node affinity/selector.'
    # a JobSet with our label but no TrainJob as its controller
    kc create -n "$NS" -f - >/dev/null <<YAML || return 1
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: plainjs
  labels: {trainer.kubeflow.org/trainjob-name: plainjs}
spec:
  replicatedJobs:
    - name: node
      template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
YAML
    mkpod plainjs-node-0 plainjs "$(jp jobset plainjs -n "$NS" -o jsonpath='{.metadata.uid}')" &&
        unsched plainjs-node-0 "$other" &&
        # TrainJob mk exists (managed elsewhere), but no JobSet of ours
        mkpod mk-node-0 mk 00000000-0000-0000-0000-000000000000 && unsched mk-node-0 "$other" &&
        # the TrainJob's JobSet name with another JobSet's uid (a pod left from an older JobSet)
        mkpod gpu-old-0 gpu 00000000-0000-0000-0000-000000000000 && unsched gpu-old-0 "$other" &&
        # pods of our JobSet that are not unschedulable: scheduled, gated, scheduler error
        mkpod gpu-node-2 gpu "$JS_UID" && pod_cond gpu-node-2 True "" "" &&
        mkpod gpu-node-3 gpu "$JS_UID" && pod_cond gpu-node-3 False SchedulingGated "$other" &&
        mkpod gpu-node-4 gpu "$JS_UID" && pod_cond gpu-node-4 False SchedulerError "$other" || return 1
    # the barrier, then nothing else was posted
    mkpod gpu-node-5 gpu "$JS_UID" && unsched gpu-node-5 "0/4 nodes are available: 4 Too many pods." &&
        wait_event gpu 'replicatedJob "node": 0/4 nodes are available: 4 Too many pods.' &&
        test "$(sched_events gpu | wc -l)" -eq 3 &&
        test -z "$(kc get events -n "$NS" --field-selector reason=FailedScheduling -o json | jq -r --arg m "$other" '.items[] | select(.message | contains($m)) | .metadata.name')" &&
        test -z "$(kc get events -n "$NS" --field-selector involvedObject.kind=TrainJob,involvedObject.name=plainjs -o name)" &&
        test -z "$(kc get events -n "$NS" --field-selector involvedObject.kind=TrainJob,involvedObject.name=mk -o name)"
}
check sched-event-only-for-our-unschedulable-pods sched_event_not_ours

# ---- legacy runtime finalizer, removed despite a concurrent writer (409s) ----------------
finalizer() {
    local writer i
    runtime_yaml "$NS" legacy-rt "    torch: {}" | kc apply -f - >/dev/null || return 1
    # a concurrent writer keeps changing the runtime, so optimistic-lock patches conflict
    (for i in $(seq 40); do kc label trainingruntime legacy-rt -n "$NS" --overwrite "w=$i" >/dev/null 2>&1; done) &
    writer=$!
    kc patch trainingruntime legacy-rt -n "$NS" --type=merge \
        -p '{"metadata":{"finalizers":["example.com/keep","trainer.kubeflow.org/resource-in-use"]}}' >/dev/null &&
        kc patch clustertrainingruntime torch-distributed --type=merge \
            -p '{"metadata":{"finalizers":["trainer.kubeflow.org/resource-in-use"]}}' >/dev/null &&
        kt_poll 60 finalizers_are "trainingruntime/legacy-rt -n $NS" '["example.com/keep"]' &&
        kt_poll 60 no_finalizers clustertrainingruntime/torch-distributed
    local rc=$?
    wait "$writer"
    kc patch trainingruntime legacy-rt -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
    return $rc
}
check legacy-finalizer-removed finalizer

# ---- a concurrent writer takes a field we own: the next apply wins it back ---------------
conflict() {
    apply_ctj cw "  suspend: true" && kw --for=jsonpath='{.spec.suspend}'=true jobset/cw -n "$NS" >/dev/null &&
        # without force the intruder gets the 409 from the API server ...
        ! kc apply --server-side --field-manager=intruder -f - <<<"apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: cw, namespace: $NS}
spec: {suspend: false}" >/dev/null 2>&1 &&
        # ... with force it takes spec.suspend over; our next reconcile forces it back
        kc apply --server-side --force-conflicts --field-manager=intruder -f - <<<"apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: cw, namespace: $NS}
spec: {suspend: false}" >/dev/null &&
        kc annotate trainjob cw -n "$NS" poke=1 >/dev/null &&
        kw --for=jsonpath='{.spec.suspend}'=true jobset/cw -n "$NS" >/dev/null &&
        test "$(owned_names "$NS" cw)" = "configmap/cw-runtime-snapshot jobset.jobset.x-k8s.io/cw "
}
check concurrent-writer-converges conflict

# (An API server restart under load is a drill of the reliability tier:
# tests/reliability/reconciler_faults.sh.)

# ---- 410 Gone: etcd compacted, API server restarted, watches resume from a compacted RV ---
gone_midrun() {
    local rev ns3 i
    ns3=$(kt_ns gone) || return 1
    for i in 1 2 3; do tj_in "$ns3" "g$i"; done
    for i in 1 2 3; do kw --for=create "jobset/g$i" -n "$ns3" >/dev/null || return 1; done
    rev=$(curl -s -X POST "$KT_ETCD/v3/kv/range" -d '{"key":"AA=="}' | jq -r .header.revision)
    [ -n "$rev" ] && [ "$rev" != null ] || return 1
    curl -s -X POST "$KT_ETCD/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null || return 1
    "$it_root/tests/cluster/restart-apiserver.sh" "$KT_CLUSTER_DIR" >/dev/null 2>&1 || return 1
    for i in 4 5 6; do tj_in "$ns3" "g$i"; done
    for i in 4 5 6; do kw --for=create "jobset/g$i" -n "$ns3" >/dev/null || return 1; done
    it_js_status "$ns3" g2 "{\"status\":{\"conditions\":[$(cond_json Failed FailedJobs 'jobset failed due to one or more job failures')]}}" &&
        kw --for=condition=Failed trainjob/g2 -n "$ns3" >/dev/null &&
        test "$(kc get jobsets -n "$ns3" -o name | wc -l)" -eq 6 &&
        kt_poll 60 relisted
}
relisted() {
    curl -sk "https://127.0.0.1:$(jq -r .metrics "$T/main.ports")/metrics" |
        grep -E '^kt_informer_relists_gone\{resource="(trainjobs|jobsets|configmaps)"\} [1-9]'
}
tj_in() { trainjob_yaml "$1" "$2" torch-distributed ClusterTrainingRuntime | kc apply -f - >/dev/null; }
check gone-410-relist-converges gone_midrun

# ---- metrics -----------------------------------------------------------------------------
scrape_metrics() {
    local port
    port=$(jq -r .metrics "$T/main.ports")
    # metrics.secureServing defaults to true: TLS with a self-signed certificate
    curl -sk "https://127.0.0.1:$port/metrics" >"$T/metrics.txt" &&
        grep -q '^controller_runtime_reconcile_total{controller="trainjob_controller",result="success"} [1-9]' "$T/metrics.txt" &&
        grep -q '^controller_runtime_reconcile_errors_total{controller="trainjob_controller"} [1-9]' "$T/metrics.txt" &&
        grep -q '^controller_runtime_reconcile_time_seconds_count{controller="trainjob_controller"} [1-9]' "$T/metrics.txt" &&
        grep -q '^workqueue_depth{name="trainjob_controller"} ' "$T/metrics.txt" &&
        grep -q '^kt_informer_watch_restarts{resource="trainjobs"} [1-9]' "$T/metrics.txt" &&
        test "$(curl -s "http://127.0.0.1:$(jq -r .health "$T/main.ports")/healthz")" = ok
}
check metrics-and-health scrape_metrics
graceful() {
    kt_daemon_stop main TERM
    local rc=$?
    grep -q 'stopped status=0' "$T/main.log" && [ "$rc" -eq 0 ]
}
check sigterm-graceful graceful

# ---- migration: unlabelled objects of TrainJobs older than the reconciler are adopted -------
# Upstream's manager did not label what it created, so the owned informers (label-selected)
# cannot see it. Before its workers start kt-reconciler lists, metadata only, the unlabelled
# objects a TrainJob controls; a TrainJob created while it was down reads exactly those live
# and labels the ones it controls; everything else (a backlog's absent objects) comes from the
# informers: no 404 GET per TrainJob. Objects with another controller, or none, stay as they
# are. ad1/ad2 are resumed TrainJobs whose JobSet runs: a JobSet seen is not re-applied, so a
# JobSet still holding only its "legacy" job proves the reconcile read it.
legacy_jobset() { # legacy_jobset NS NAME OWNER_KIND OWNER_NAME OWNER_UID - unlabelled, running
    kc apply -f - >/dev/null <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $2
  namespace: $1
  ownerReferences:
    - {apiVersion: $3, kind: ${4%%/*}, name: ${4#*/}, uid: $5, controller: true}
spec:
  suspend: false
  replicatedJobs:
    - name: legacy
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, image: busybox}]
YAML
}
resumed_tj() { # resumed_tj NS NAME - not suspended, its status still says Suspended=True
    trainjob_yaml "$1" "$2" torch-distributed ClusterTrainingRuntime | kc apply -f - >/dev/null &&
        kc patch trainjob "$2" -n "$1" --subresource=status --type=merge -p \
            "{\"status\":{\"conditions\":[$(cond_json Suspended Suspended 'TrainJob is suspended')]}}" >/dev/null
}
uid_of() { jp "$1" "$2" -n "$3" -o jsonpath='{.metadata.uid}'; }
# api_gets RESOURCE_RE CODE_RE - GETs of resources matching RESOURCE_RE the API server
# answered with a code matching CODE_RE, summed over its apiserver_request_total series.
api_gets() {
    kc get --raw /metrics | awk -v res="^($1)\$" -v code="^($2)\$" '
        /^apiserver_request_total\{/ && /verb="GET"/ {
            r = $0; sub(/.*,resource="/, "", r); sub(/".*/, "", r)
            c = $0; sub(/.*[{,]code="/, "", c); sub(/".*/, "", c)
            if (r ~ res && c ~ code) s += $NF
        }
        END { print s + 0 }'
}
js_jobs() { jp jobset "$2" -n "$1" -o jsonpath='{.spec.replicatedJobs[*].name}'; }
tj_label() { jp "$1" "$2" -n "$3" -o jsonpath='{.metadata.labels.trainer\.kubeflow\.org/trainjob-name}'; }
# what a TrainJob's reconcile may read (the process's own start-up reads, such as the
# webhook configurations the certificate rotator looks for, are not per TrainJob)
TJ_KINDS='jobsets|configmaps|secrets|podgroups|trainjobs|trainingruntimes|clustertrainingruntimes'
adopt_setup() {
    local i
    AD=$(kt_ns adopt) && BK=$(kt_ns backlog) || return 1
    resumed_tj "$AD" ad1 && resumed_tj "$AD" ad2 &&
        legacy_jobset "$AD" ad1 trainer.kubeflow.org/v1alpha1 TrainJob/ad1 "$(uid_of trainjob ad1 "$AD")" &&
        legacy_jobset "$AD" ad2 trainer.kubeflow.org/v1alpha1 TrainJob/someone-else 0000-1 &&
        kc create configmap foreign -n "$AD" --from-literal=k=v >/dev/null &&
        kc patch configmap foreign -n "$AD" --type=merge -p \
            '{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"ad1","uid":"0000-2","controller":true}]}}' >/dev/null &&
        kc create configmap ad1-plain -n "$AD" --from-literal=k=v >/dev/null || return 1
    for i in $(seq 1 20); do
        trainjob_yaml "$BK" "bk$i" torch-distributed ClusterTrainingRuntime "  suspend: true"
        echo ---
    done | kc apply -f - >/dev/null || return 1
    RV_FOREIGN=$(jp configmap foreign -n "$AD" -o jsonpath='{.metadata.resourceVersion}')
    RV_PLAIN=$(jp configmap ad1-plain -n "$AD" -o jsonpath='{.metadata.resourceVersion}')
    GETS0=$(api_gets 'jobsets|configmaps' '[0-9]+') && G404_0=$(api_gets "$TJ_KINDS" 404) &&
        kc get --raw /metrics | grep '^apiserver_request_total{' >"$T/m0"
}
check adopt-setup adopt_setup
adopt_run() {
    kt_daemon adopt "$REC" "${RECF[@]}" --workers 2 --namespaces "$AD,$BK" &&
        kw --for=condition=Suspended trainjob --all -n "$BK" >/dev/null &&
        kw --for=condition=Suspended=False trainjob/ad1 trainjob/ad2 -n "$AD" >/dev/null || return 1
    GETS1=$(api_gets 'jobsets|configmaps' '[0-9]+') && G404_1=$(api_gets "$TJ_KINDS" 404) &&
        kc get --raw /metrics | grep '^apiserver_request_total{' >"$T/m1"
}
check adopt-backlog-reconciled adopt_run
# ad1's JobSet and ad2's (controlled by another TrainJob): the two the scan kept
check adopt-scan-kept-two grep -q 'unlabelled objects controlled by a TrainJob: 2$' "$T/adopt.log"
check adopt-labelled test "$(tj_label jobset ad1 "$AD")/$(js_jobs "$AD" ad1)" = ad1/legacy
check adopt-logged grep -q "labelled legacy jobsets $AD/ad1\$" "$T/adopt.log"
check adopt-other-trainjobs-left test "$(tj_label jobset ad2 "$AD")/$(js_jobs "$AD" ad2)" = /legacy
check adopt-foreign-untouched test "$(jp configmap foreign ad1-plain -n "$AD" -o jsonpath='{range .items[*]}{.metadata.resourceVersion}{.metadata.labels}/{end}')" = "$RV_FOREIGN/$RV_PLAIN/"
check adopt-backlog-applied test "$(kc get jobsets -n "$BK" -l trainer.kubeflow.org/trainjob-name -o name | wc -l)" -eq 20
# The backlog's absent JobSets and snapshot ConfigMaps were never read live: no 404 at all,
# and the GETs left are the two JobSets the scan listed (each at most once per reconcile of
# ad1/ad2: a handful, not one per TrainJob).
no_404() {
    echo "404 GETs: $((G404_1 - G404_0))"
    diff "$T/m0" "$T/m1" | grep 'code="404"'
    test "$((G404_1 - G404_0))" -eq 0
}
check adopt-no-404-gets no_404
check adopt-few-gets bash -c "d=$((GETS1 - GETS0)); echo \"GETs: \$d\"; [ \$d -ge 2 ] && [ \$d -le 8 ]"
kt_daemon_stop adopt TERM

# ---- an external plugin's own kind: watched and applied through API discovery -------------
# The plugin (built here from api/kt_plugin.h) returns a headless Service per TrainJob and
# watches Services and a kind no server serves. RBAC for plugin kinds is the admin's job: the
# test grants services to the controller identity.
cat >"$T/svc_plugin.c" <<'C'
#include <stdio.h>
#include "api/kt_plugin.h"
static const char *const watches[] = {"v1/Service", "example.invalid/v1/Nope", NULL};
static int svc_build(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    char obj[1024];
    (void)state;
    snprintf(obj, sizeof(obj),
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s-svc\","
             "\"namespace\":\"%s\"},\"spec\":{\"clusterIP\":\"None\",\"selector\":{\"app\":\"%s\"}}}",
             h->trainjob_name(c), h->trainjob_namespace(c), h->trainjob_name(c));
    return h->add_object(c, obj) == 0 ? 0 : h->fail(c, "host refused the Service");
}
KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("ExtraService", KT_EP_WATCH | KT_EP_BUILD),
    .watches = watches,
    .build = svc_build,
};
C
plugin_kind() {
    cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
        -I"$it_root" -Wl,--no-undefined -o "$T/svc_plugin.so" "$T/svc_plugin.c" &&
        kc apply -f - >/dev/null <<YAML &&
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kt-test-plugin-services}
rules:
  - apiGroups: [""]
    resources: [services]
    verbs: [get, list, watch, create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kt-test-plugin-services}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kt-test-plugin-services}
subjects:
  - {kind: ServiceAccount, name: kubeflow-trainer-controller-manager, namespace: kubeflow-system}
YAML
        kt_daemon plug "$REC" "${RECF[@]}" --workers 1 --plugin "$T/svc_plugin.so" &&
        grep -q 'plugin ExtraService: watching owned v1/Service' "$T/plug.log" &&
        grep -q 'plugin ExtraService watches example.invalid/v1/Nope: not watched' "$T/plug.log" &&
        tj_rt psvc plainml-rt && kw --for=create service/psvc-svc -n "$NS" >/dev/null &&
        test "$(jp service psvc-svc -n "$NS" -o jsonpath='{.metadata.labels.trainer\.kubeflow\.org/trainjob-name}/{.metadata.ownerReferences[0].kind}/{.spec.clusterIP}')" = psvc/TrainJob/None || return 1
    # deleting the owned Service is a watch event on the owner: it comes back
    local uid
    uid=$(jp service psvc-svc -n "$NS" -o jsonpath='{.metadata.uid}')
    kc delete service psvc-svc -n "$NS" >/dev/null &&
        kt_poll 60 bash -c "test -n \"\$('$KT_KUBECTL' --kubeconfig '$KT_ADMIN_KUBECONFIG' get service psvc-svc -n '$NS' -o jsonpath='{.metadata.uid}' 2>/dev/null | grep -v '^$uid\$')\""
}
check plugin-kind-discovered-watched-applied plugin_kind
kt_daemon_stop plug TERM
kc delete clusterrolebinding,clusterrole kt-test-plugin-services >/dev/null 2>&1

# ---- an install whose RBAC predates the pod watch still reconciles -----------------------
rec_can_list_pods() { "$KT_KUBECTL" --kubeconfig "$KT_RECONCILER_KUBECONFIG" auth can-i list pods -A | grep -c yes >/dev/null; }
rec_cannot_list_pods() { ! rec_can_list_pods; }
no_pods_rbac() {
    kc get clusterrole kubeflow-trainer-controller-manager -o json |
        jq 'del(.metadata.resourceVersion, .metadata.managedFields) | .rules |= map(select(.resources != ["pods"]))' |
        kc replace -f - >/dev/null &&
        kt_poll 60 rec_cannot_list_pods &&
        kt_daemon norbac "$REC" "${RECF[@]}" --workers 1 && apply_ctj norbac1 && kw --for=create jobset/norbac1 -n "$NS" >/dev/null &&
        kt_poll 60 grep -q 'list: .*resource=pods' "$T/norbac.log"
}
check old-rbac-without-pods-still-reconciles no_pods_rbac
kt_daemon_stop norbac TERM
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null
check rbac-pods-restored kt_poll 60 rec_can_list_pods

# ---- leader election: one leader, standby idle, failover on release and on expiry --------
cat >"$T/le.yaml" <<YAML
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: true
  resourceName: trainer.kubeflow.org
  resourceNamespace: kubeflow-system
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
YAML
identity_of() { sed -n 's/.*leader election on lease=[^ ]* identity=\([^ ]*\).*/\1/p' "$T/$1.log" | tail -1; }
lease_holder_is() { kw --for=jsonpath='{.spec.holderIdentity}'="$1" lease/trainer.kubeflow.org -n kubeflow-system >/dev/null; }
leader_election() {
    local a b
    kt_daemon la "$REC" "${RECF[@]}" --config "$T/le.yaml" && a=$(identity_of la) && [ -n "$a" ] &&
        kw --for=create lease/trainer.kubeflow.org -n kubeflow-system >/dev/null && lease_holder_is "$a" &&
        kt_daemon lb "$REC" "${RECF[@]}" --config "$T/le.yaml" && b=$(identity_of lb) && [ -n "$b" ] &&
        apply_ctj le1 && kw --for=create jobset/le1 -n "$NS" >/dev/null &&
        ! grep -q 'started .* workers' "$T/lb.log" &&
        lease_holder_is "$a" || return 1
    # graceful stop releases the lease: the standby takes over
    kt_daemon_stop la TERM
    lease_holder_is "$b" && kt_poll 60 grep -q 'started .* workers' "$T/lb.log" &&
        apply_ctj le2 && kw --for=create jobset/le2 -n "$NS" >/dev/null || return 1
    # a crashed leader: the lease expires and a new replica takes it
    kt_daemon_stop lb KILL
    kt_daemon la2 "$REC" "${RECF[@]}" --config "$T/le.yaml" && a=$(identity_of la2) && lease_holder_is "$a" &&
        apply_ctj le3 && kw --for=create jobset/le3 -n "$NS" >/dev/null &&
        test "$(jp lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.leaseTransitions}')" -ge 2
}
check leader-election-failover leader_election
kt_daemon_stop la2 TERM

# ---- the leader renews in place: one PUT on its last write (client-go's fast path; the scale
# gate bounds its Lease GETs). A foreign write to the Lease makes that PUT conflict: the leader
# reads the Lease, writes again and keeps it, no transition ----------------------------------
lease_renew_time() { jp lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.renewTime}'; }
lease_moved_from() { [ "$(lease_renew_time)" != "$1" ]; }
lease_in_place() {
    local a t0 _
    kt_daemon lf "$REC" "${RECF[@]}" --config "$T/le.yaml" && a=$(identity_of lf) && lease_holder_is "$a" || return 1
    t0=$(jp lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.leaseTransitions}')
    for _ in 1 2 3; do # three renewals, none through the fallback
        kt_poll 10 lease_moved_from "$(lease_renew_time)" || return 1
    done
    [ "$(grep -c 'in place' "$T/lf.log")" = 0 ] || return 1
    kc annotate lease trainer.kubeflow.org -n kubeflow-system kt-test/foreign="$RANDOM" --overwrite >/dev/null &&
        kt_poll 30 grep -q 'renewing lease .* in place: .*; reading it' "$T/lf.log" || return 1
    for _ in 1 2; do
        kt_poll 10 lease_moved_from "$(lease_renew_time)" || return 1
    done
    # shellcheck disable=SC2154 # PID_lf: set by kt_daemon lf (tests/lib.sh)
    kill -0 "$PID_lf" && ! grep -q 'leadership lost' "$T/lf.log" && lease_holder_is "$a" &&
        test "$(jp lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.leaseTransitions}')" = "$t0"
}
check lease-renewed-in-place-foreign-write-kept lease_in_place
kt_daemon_stop lf TERM

# ---- Lease renewals do not queue behind the workers' requests -----------------------------
# clientConnection qps 4: a backlog of 40 TrainJobs needs ~20 s of the workers' budget. With
# one limiter shared by workers and elector a renewal would wait behind it past renewDeadline
# (3 s) and the leader would exit; the elector's own budget keeps the lease.
sed 's/^leaderElection:/clientConnection: {qps: 4, burst: 4}\nleaderElection:/' "$T/le.yaml" >"$T/le-qps.yaml"
lease_qps() {
    local i a t0
    kt_daemon lq "$REC" "${RECF[@]}" --config "$T/le-qps.yaml" --workers 4 && a=$(identity_of lq) &&
        lease_holder_is "$a" || return 1
    t0=$(jp lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.leaseTransitions}')
    for i in $(seq 1 40); do
        trainjob_yaml "$NS" "lq$i" torch-distributed ClusterTrainingRuntime ""
        echo ---
    done | kc apply -f - >/dev/null || return 1
    for i in $(seq 1 40); do
        kw --for=create "jobset/lq$i" -n "$NS" >/dev/null || return 1
    done
    # shellcheck disable=SC2154 # PID_lq: set by kt_daemon lq (tests/lib.sh)
    kill -0 "$PID_lq" && ! grep -q 'leadership lost' "$T/lq.log" && lease_holder_is "$a" &&
        test "$(jp lease trainer.kubeflow.org -n kubeflow-system -o jsonpath='{.spec.leaseTransitions}')" = "$t0"
}
check lease-renewals-own-qps-budget lease_qps
kt_daemon_stop lq TERM

# ---- status writes: fewer than upstream's, none that changes nothing ----------------------
# SW_N TrainJobs created at once, five workers, this reconciler alone on the API server (the
# others are stopped; --namespaces keeps it to its own). Each JobSet reports three statuses
# (written with kubectl as the JobSet controller would): active, ready, Completed, each
# reconciled before the next comes (the reconcile count grows by SW_N at least). Upstream
# v2.3.0 patches a TrainJob's status whenever the status it computes differs from the cached
# one: 3 per TrainJob here when its queue keeps up. kt holds a write that only adds startTime
# or moves jobsStatus (docs/operating.md#status-writes; the window here, 120 s, outlasts the
# steps) and folds it into the write of Complete: exactly 1 PATCH per TrainJob, carrying
# startTime, the last jobsStatus and Complete. main before this (no holding) sent 4: startTime,
# active, ready, Complete. And no PATCH is a no-op: the API server's TrainJob status PATCHes
# in this namespace (the tier's audit log, every code; on a cluster without it the API server's
# apiserver_request_total, which counts every namespace) equal the TrainJob MODIFIED events a
# watch sees (nothing else writes these TrainJobs).
SW_N=10
SW_AUDIT="${KT_CLUSTER_DIR:-}/audit.log"
# sw_audited NS - the audit log's TrainJob status PATCHes in NS: "COUNT" then one line per
# request (name, code, user agent) for the failure message
sw_audited() {
    jq -r --arg ns "$1" 'select(.verb == "patch" and .objectRef.subresource == "status" and
        .objectRef.resource == "trainjobs" and .objectRef.namespace == $ns and
        .stage == "ResponseComplete") | "\(.objectRef.name) \(.responseStatus.code) \(.userAgent)"' \
        "$SW_AUDIT" >"$T/sw.audit" || return 1
    wc -l <"$T/sw.audit"
}
# api_count VERB RESOURCE SUBRESOURCE - the API server's requests, every code
api_count() {
    kc get --raw /metrics | awk -v verb="verb=\"$1\"" -v res="resource=\"$2\"" -v subr="subresource=\"$3\"" '
        /^apiserver_request_total\{/ && index($0, verb) && index($0, res) && index($0, subr) { s += $NF }
        END { print s + 0 }'
}
sw_all() { # sw_all JSONPATH WANT - every TrainJob of $SW shows WANT at JSONPATH
    test "$(jp trainjobs -n "$SW" -o jsonpath="{range .items[*]}$1{\"\\n\"}{end}" | grep -c -x -F "$2")" = "$SW_N"
}
sw_reconciles() { # the sw reconciler's reconciles so far, every result
    curl -sk "https://127.0.0.1:$(jq -r .metrics "$T/sw.ports")/metrics" |
        awk '/^controller_runtime_reconcile_total\{controller="trainjob_controller"/ { s += $NF } END { print s + 0 }'
}
sw_reconciled() { [ "$(sw_reconciles)" -ge "$1" ]; } # sw_reconciled COUNT
sw_step() { # sw_step JOBSET_STATUS_JSON - written to every JobSet, then reconciled
    local i n
    n=$(sw_reconciles)
    for i in $(seq 1 "$SW_N"); do it_js_status "$SW" "sw$i" "$1" || return 1; done
    kt_poll 60 sw_reconciled $((n + SW_N))
}
jobs_json() { # jobs_json READY SUCCEEDED ACTIVE
    printf '"replicatedJobsStatus":[{"name":"node","ready":%s,"succeeded":%s,"failed":0,"active":%s,"suspended":0}]' "$1" "$2" "$3"
}
# sw_watching - the watch on $SW is live: a probe TrainJob created after kubectl started may
# still come before its watch does, so each try creates a new probe until the watch reports one.
sw_watching() {
    local k
    for k in $(seq 1 20); do
        trainjob_yaml "$SW" "sw0-$k" torch-distributed ClusterTrainingRuntime "  suspend: true" |
            kc apply -f - >/dev/null || return 1
        if kt_poll 3 grep -q "ADDED sw0-$k" "$T/sw.watch"; then
            kc delete trainjobs -n "$SW" --all >/dev/null
            return 0
        fi
    done
    echo "the kubectl watch on $SW never reported a probe TrainJob"
    return 1
}
status_writes() {
    local i p0 p1 wpid mod n src
    SW=$(kt_ns writes) && p0=$(api_count PATCH trainjobs status) || return 1
    # kubectl itself (not through kc) so that $! is its PID; stopped at exit too
    "$KT_KUBECTL" --kubeconfig "$KT_ADMIN_KUBECONFIG" get trainjobs -n "$SW" --watch-only \
        --output-watch-events -o jsonpath='{.type} {.object.metadata.name} rv={.object.metadata.resourceVersion} start={.object.status.startTime} conditions={.object.status.conditions[*].type}{"\n"}' >"$T/sw.watch" 2>&1 &
    wpid=$!
    kt_cleanup "kill $wpid"
    sw_watching || return 1
    kt_daemon sw "$REC" "${RECF[@]}" --workers 5 --namespaces "$SW" --status-batch-seconds 120 || return 1
    for i in $(seq 1 "$SW_N"); do
        trainjob_yaml "$SW" "sw$i" torch-distributed ClusterTrainingRuntime ""
        echo ---
    done | kc apply -f - >/dev/null || return 1
    for i in $(seq 1 "$SW_N"); do kw --for=create "jobset/sw$i" -n "$SW" >/dev/null || return 1; done
    # held: no startTime written yet (negative: without holding it goes out with the JobSet)
    sw_all '{.status.startTime}' '' || { echo "startTime written before the window ended"; return 1; }
    sw_step "{\"status\":{$(jobs_json 0 0 1)}}" && sw_step "{\"status\":{$(jobs_json 1 0 1)}}" &&
        sw_all '{.status.jobsStatus[0].ready}' '' || { echo "a jobsStatus step was written"; return 1; }
    for i in $(seq 1 "$SW_N"); do
        it_js_status "$SW" "sw$i" "{\"status\":{\"conditions\":[$(cond_json Completed AllJobsCompleted 'jobset completed successfully')],$(jobs_json 0 1 0)}}" || return 1
    done
    kt_poll 60 sw_all '{.status.conditions[?(@.type=="Complete")].status}' True &&
        sw_all '{.status.jobsStatus[0].succeeded}' 1 || return 1
    test "$(jp trainjobs -n "$SW" -o jsonpath='{range .items[*]}{.status.startTime}{"\n"}{end}' | grep -c .)" = "$SW_N" ||
        { echo "startTime missing from the Complete write"; return 1; }
    sleep 2 # the TrainJobs' own MODIFIED events reconciled: any PATCH they cause counts too
    p1=$(api_count PATCH trainjobs status)
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
    mod=$(grep -c '^MODIFIED sw[1-9]' "$T/sw.watch")
    n=$((p1 - p0)) src="API server, every namespace"
    if [ -f "$SW_AUDIT" ]; then
        n=$(sw_audited "$SW") && src="audit log, $SW; API server, every namespace: $((p1 - p0))" || return 1
    fi
    echo "status PATCHes: $n for $SW_N TrainJobs (want $SW_N; $src), TrainJob MODIFIED events: $mod" |
        tee "$T/sw.figure"
    test "$n" -eq "$SW_N" && test "$n" -eq "$mod" && return 0
    # what each write was, for the reader of a failure
    cat "$T/sw.audit" 2>/dev/null
    grep '^MODIFIED' "$T/sw.watch"
    return 1
}
check status-writes-folded-no-noop status_writes
echo "measured: $(cat "$T/sw.figure" 2>/dev/null)"
kt_daemon_stop sw TERM
# Every reconciler exited; with a sanitizer build (KT_RECONCILER_BIN) this catches leaks and UB.
check no-sanitizer-reports bash -c "! grep -l -E '(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|runtime error:' '$T'/*.log"

kt_finish
