# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/e2e/cases.sh - the cases of the e2e tier (sourced by tests/e2e/run.sh, which provides
# e2e_trainjob, e2e_runtime, tj_wait, pods_of; tests/lib_kube.sh kc, kt_ns, kq, tj_state,
# tj_cond; tests/lib.sh ok, bad, check, kt_poll, kt_only).
# Order matters only for speed: the long cases overlap their waiting where they can, except at
# the end: prometheus asks Prometheus about the whole run while both daemons are still the ones
# it scrapes, and switch (tests/e2e/switch.sh) runs last: it stops kt, runs upstream's manager,
# and leaves this kt running.
# shellcheck disable=SC2034 # read by tests/e2e/run.sh, which sources this file
E2E_CASES="runtimes mpi initializers failing suspend deadline gc ttl terminal unschedulable coscheduling status metrics sdk chaos prometheus switch"

# Every shipped ClusterTrainingRuntime (deploy/runtimes) runs a TrainJob to Complete. The
# torchtune runtimes claim a 20Gi volume (volumeClaimPolicies): static PersistentVolumes are
# made for them and the controller-manager's binder binds the claims.
case_runtimes() {
    local n=e2e-runtimes r rts i=0 out
    kt_ns --name $n >/dev/null
    rts=$(kc get clustertrainingruntimes -o jsonpath='{.items[*].metadata.name}')
    for r in $rts; do
        i=$((i + 1))
        kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-pv-$i}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: /tmp/kt-e2e-pv-$i}
EOF
        e2e_trainjob $n "${r//./-}" "$r" || bad "runtime-$r" "kubectl apply failed"
    done
    for r in $rts; do
        if out=$(tj_wait $n "${r//./-}" Complete); then
            ok "runtime-$r-complete ($(kc get pods -n $n -l "jobset.sigs.k8s.io/jobset-name=${r//./-}" -o name | wc -l) pods)"
        else
            bad "runtime-$r-complete" "$out"
        fi
    done
    [ "$(echo "$rts" | wc -w)" -ge 8 ] && ok "runtimes-all-shipped ($(echo "$rts" | wc -w))" ||
        bad runtimes-all-shipped "only: $rts"
}

# MPI (deepspeed-distributed, from case_runtimes): a launcher and node pods ran, the launcher
# mounted the hostfile ConfigMap and both the SSH Secret, and the hostfile names the pods.
case_mpi() {
    local n=e2e-runtimes j=deepspeed-distributed p
    kt_only e2e/runtimes || { kt_ns --name $n >/dev/null && e2e_trainjob $n $j $j && tj_wait $n $j Complete >/dev/null; }
    p=$(pods_of $n $j)
    check mpi-launcher-and-nodes-ran jq -e '([.[] | select(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "launcher" and .status.phase == "Succeeded")] | length) == 1 and
        ([.[] | select(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node" and .status.phase == "Succeeded")] | length) >= 1' <<<"$p"
    check mpi-launcher-mounts-hostfile-and-ssh jq -e --arg j $j '[.[] | select(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "launcher")][0] |
        ([.spec.volumes[] | select(.configMap.name == ($j + "-mpi-hostfile"))] | length) == 1 and
        ([.spec.volumes[] | select(.secret.secretName == ($j + "-mpi-ssh-auth"))] | length) == 1 and
        ([.spec.containers[] | select(.name == "node") | .volumeMounts[] | select(.mountPath == "/etc/mpi")] | length) == 1' <<<"$p"
    check mpi-nodes-mount-ssh jq -e --arg j $j '[.[] | select(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node")] | length > 0 and
        all(([.spec.volumes[] | select(.secret.secretName == ($j + "-mpi-ssh-auth"))] | length) == 1)' <<<"$p"
    local hf
    hf=$(kc get configmap $j-mpi-hostfile -n $n -o jsonpath='{.data.hostfile}')
    [ "$(grep -c 'slots=1' <<<"$hf")" = 2 ] && [[ "$hf" == *"$j-launcher-0-0.$j"* ]] &&
        ok "mpi-hostfile-names-2-hosts ($(echo $hf | cut -c1-100))" || bad mpi-hostfile-names-2-hosts "got: $hf"
    check mpi-ssh-secret kc get secret $j-mpi-ssh-auth -n $n -o jsonpath='{.type}'
}

# An initializer runtime (torchtune, from case_runtimes): the trainer Job was created only after
# both initializer Jobs completed (JobSet dependsOn).
case_initializers() {
    local n=e2e-runtimes j=torchtune-llama3-2-1b jobs
    kt_only e2e/runtimes || { kt_ns --name $n >/dev/null && e2e_trainjob $n $j torchtune-llama3.2-1b && tj_wait $n $j Complete >/dev/null; }
    jobs=$(kc get jobs -n $n -l "jobset.sigs.k8s.io/jobset-name=$j" -o json)
    check initializers-complete-before-trainer jq -e '
        [.items[] | {(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]):
            {created: .metadata.creationTimestamp, done: .status.completionTime}}] | add |
        .["dataset-initializer"].done != null and .["model-initializer"].done != null and
        .node.created >= .["dataset-initializer"].done and .node.created >= .["model-initializer"].done' <<<"$jobs"
}

# A failing pod (KT_SIM_EXIT_CODE) on a runtime with backoffLimit 0: the JobSet fails and the
# TrainJob becomes Failed with the JobSet's reason and message (docs/internals/upstream.md#controller, upstream's).
case_failing() {
    local n=e2e-failing out
    kt_ns --name $n >/dev/null
    e2e_runtime $n fail-fast "" "              backoffLimit: 0"
    e2e_trainjob $n boom fail-fast TrainingRuntime "    env: [{name: KT_SIM_EXIT_CODE, value: \"3\"}]"
    if out=$(tj_wait $n boom Failed); then ok failing-pod-fails-trainjob; else bad failing-pod-fails-trainjob "$out"; fi
    # upstream copies the JobSet's Failed condition (JobSet v0.12 names the first failed Job)
    out=$(tj_cond $n boom Failed)
    local js
    js=$(kc get jobset boom -n $n -o json | jq -r '.status.conditions[] | select(.type == "Failed") | "\(.reason): \(.message)"')
    [ "$out" = "$js" ] && [[ "$out" == "FailedJobs: jobset failed due to one or more job failures"* ]] &&
        ok "failing-reason-message ($out)" || bad failing-reason-message "got: $out; JobSet: $js"
    check failing-exit-code jq -e 'any(.[]; .status.phase == "Failed" and
        .status.containerStatuses[0].state.terminated.exitCode == 3)' <<<"$(pods_of $n boom)"
    # the same TrainJob without the marker completes (the runtime itself is fine)
    e2e_trainjob $n fine fail-fast TrainingRuntime
    if out=$(tj_wait $n fine Complete); then ok failing-control-completes; else bad failing-control-completes "$out"; fi
}

# Suspended: no pods while suspended (JobSet suspended), resumed: runs to Complete.
case_suspend() {
    local n=e2e-suspend out
    kt_ns --name $n >/dev/null
    e2e_trainjob $n held torch-distributed "" "" "  suspend: true"
    kt_poll -m "JobSet held suspended" "$WAIT" kq '.spec.suspend == true' jobset held -n $n &&
        ok suspend-jobset-suspended || bad suspend-jobset-suspended "no suspended JobSet"
    kt_poll -m "Suspended condition" "$WAIT" kq 'any(.status.conditions[]?; .type == "Suspended" and .status == "True")' trainjob held -n $n &&
        ok suspend-condition || bad suspend-condition "$(tj_cond $n held Suspended)"
    [ "$(pods_of $n held | jq length)" = 0 ] && ok suspend-no-pods || bad suspend-no-pods "pods exist while suspended"
    kc patch trainjob held -n $n --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
    if out=$(tj_wait $n held Complete); then ok suspend-resumed-completes; else bad suspend-resumed-completes "$out"; fi
    [ "$(tj_cond $n held Suspended)" = "Resumed: TrainJob is resumed" ] && ok suspend-resumed-reason ||
        bad suspend-resumed-reason "$(tj_cond $n held Suspended)"
}

# activeDeadlineSeconds: pods that would run 10 minutes (KT_SIM_RUN); the TrainJob fails with
# DeadlineExceeded, its JobSet is deleted and the garbage collector removes the pods.
case_deadline() {
    local n=e2e-deadline out
    kt_ns --name $n >/dev/null
    e2e_trainjob $n late torch-distributed "" "    env: [{name: KT_SIM_RUN, value: 10m}]" "  activeDeadlineSeconds: 8"
    kt_poll -m "pods Running" "$WAIT" kq '[.items[] | select(.status.phase == "Running")] | length == 2' pods -n $n -l jobset.sigs.k8s.io/jobset-name=late &&
        ok deadline-pods-running || bad deadline-pods-running "not 2 Running pods"
    if out=$(tj_wait $n late Failed); then ok deadline-failed; else bad deadline-failed "$out"; fi
    [ "$(tj_cond $n late Failed)" = "DeadlineExceeded: TrainJob exceeded its active deadline" ] &&
        ok deadline-reason || bad deadline-reason "$(tj_cond $n late Failed)"
    kt_poll -m "JobSet and pods gone" "$WAIT" kq '[.items[] | select(.metadata.name == "late" or
        .metadata.labels["jobset.sigs.k8s.io/jobset-name"] == "late")] | length == 0' jobsets,pods -n $n &&
        ok deadline-jobset-and-pods-gone || bad deadline-jobset-and-pods-gone "left: $(kc get jobset,pods -n $n -o name | tr '\n' ' ')"
}

# Deleting a TrainJob: the real garbage collector removes its JobSet, Jobs, pods, ConfigMaps
# and Secrets (an MPI job has all of them).
case_gc() {
    local n=e2e-gc out
    kt_ns --name $n >/dev/null
    e2e_trainjob $n doomed deepspeed-distributed
    if out=$(tj_wait $n doomed Complete); then ok gc-job-completes; else bad gc-job-completes "$out"; fi
    local before
    before=$(kc get jobset,jobs,pods,configmaps,secrets -n $n -o name | grep -c doomed)
    [ "$before" -ge 6 ] && ok "gc-children-exist ($before)" || bad gc-children-exist "only $before"
    kc delete trainjob doomed -n $n --wait=false >/dev/null
    kt_poll -m "children gone" "$WAIT" kq '[.items[] | select(.metadata.name | contains("doomed"))] | length == 0' jobsets,jobs,pods,configmaps,secrets -n $n &&
        ok gc-all-children-gone || bad gc-all-children-gone "left: $(kc get jobset,jobs,pods,configmaps,secrets -n $n -o name | grep doomed | tr '\n' ' ')"
}

# ttlSecondsAfterFinished (provisional, KEP-2899): a TTL-3 s TrainJob goes, with its JobSet,
# Jobs, pods, ConfigMaps and Secrets (foreground deletion, the real garbage collector), about
# 3 s after its completionTime; a TTL-less one stays; a runtime's runPolicy default applies; a
# job's own 0 overrides a runtime's 600, whose other TrainJob stays.
gone_all() { # gone_all NS NAME - no TrainJob, JobSet, Job, pod, ConfigMap or Secret of NAME
    ! kc get trainjob "$2" -n "$1" >/dev/null 2>&1 &&
        kq "[.items[] | select(.metadata.name == \"$2\" or (.metadata.name | startswith(\"$2-\")))] | length == 0" \
            jobsets,jobs,pods,configmaps,secrets -n "$1"
}
case_ttl() {
    local n=e2e-ttl out completed t
    kt_ns --name $n >/dev/null
    e2e_runtime $n ttl2-rt "" "" "  runPolicy:
    ttlSecondsAfterFinished: 2"
    e2e_runtime $n ttl600-rt "" "" "  runPolicy:
    ttlSecondsAfterFinished: 600"
    e2e_trainjob $n keep torch-distributed
    e2e_trainjob $n ttl3 deepspeed-distributed "" "" "  ttlSecondsAfterFinished: 3"
    e2e_trainjob $n rt-default ttl2-rt TrainingRuntime
    e2e_trainjob $n job-zero ttl600-rt TrainingRuntime "" "  ttlSecondsAfterFinished: 0"
    e2e_trainjob $n rt-600 ttl600-rt TrainingRuntime
    if out=$(tj_wait $n keep Complete); then ok ttl-unset-completes; else bad ttl-unset-completes "$out"; fi
    # the MPI job has a ConfigMap and a Secret of its own besides the snapshot
    kt_poll -m "ttl3 completionTime" "$WAIT" kq '.status.completionTime' trainjob ttl3 -n $n ||
        bad ttl3-completes "$(tj_state $n ttl3)"
    completed=$(date -u -d "$(kc get trainjob ttl3 -n $n -o jsonpath='{.status.completionTime}')" +%s)
    if kt_poll -m "ttl3 and its objects gone" "$WAIT" gone_all $n ttl3; then
        t=$(($(date +%s) - completed))
        # completionTime has second precision: gone 3 s after it at the earliest
        [ $t -ge 3 ] && [ $t -le 20 ] && ok "ttl-3s-gone-with-children (${t}s after completionTime)" ||
            bad ttl-3s-gone-with-children "gone ${t}s after completionTime"
    else
        bad ttl-3s-gone-with-children "left: $(kc get trainjob,jobset,jobs,pods,configmaps,secrets -n $n -o name | grep ttl3 | tr '\n' ' ')"
    fi
    kt_poll -m "rt-default gone" "$WAIT" gone_all $n rt-default && ok ttl-runtime-default-applies ||
        bad ttl-runtime-default-applies "$(tj_state $n rt-default)"
    kt_poll -m "job-zero gone" "$WAIT" gone_all $n job-zero && ok ttl-job-zero-overrides-runtime-600 ||
        bad ttl-job-zero-overrides-runtime-600 "$(tj_state $n job-zero)"
    # negative: finished before the others went, these stay
    [ "$(tj_state $n keep)" = Complete ] && [ "$(tj_state $n rt-600)" = Complete ] &&
        ok ttl-unset-and-600-stay || bad ttl-unset-and-600-stay "keep: $(tj_state $n keep), rt-600: $(tj_state $n rt-600)"
}

# Terminal is terminal on the full chain: the deleted JobSet of a Complete and of a Failed
# TrainJob is not re-created, nor any Job or pod, for 30 s (three watches); the deleted JobSet
# of a running TrainJob is (the negative control, in the same window).
e2e_watch() { # e2e_watch NS KIND FILE - "EVENT NAME JOBSET" lines, started once listed
    (kc get "$2" -n "$1" --watch --output-watch-events -o json --request-timeout=90s |
        jq --unbuffered -r '"\(.type) \(.object.metadata.name) \(.object.metadata.labels["jobset.sigs.k8s.io/jobset-name"] // .object.metadata.name)"' >"$3") 2>/dev/null &
    E2E_WATCHES+=($!)
}
readded() { # readded FILE JOBSET - objects of JOBSET ADDED after the JobSet was DELETED
    awk -v j="$2" '$1 == "DELETED" && $2 == j { d = 1 } d && $1 == "ADDED" && $3 == j' "$1" | wc -l
}
ctl_back() { test "$(readded "$1" "$2")" -ge 1; }
case_terminal() {
    local n=e2e-terminal out t0 k f
    kt_ns --name $n >/dev/null
    e2e_runtime $n fail-fast "" "              backoffLimit: 0"
    e2e_trainjob $n "done" torch-distributed
    e2e_trainjob $n broke fail-fast TrainingRuntime "    env: [{name: KT_SIM_EXIT_CODE, value: \"3\"}]"
    e2e_trainjob $n busy torch-distributed "" "    env: [{name: KT_SIM_RUN, value: 10m}]"
    out=$(tj_wait $n "done" Complete) && out=$(tj_wait $n broke Failed) &&
        kt_poll -m "busy running" "$WAIT" kq '[.items[] | select(.status.phase == "Running")] | length == 2' pods -n $n -l jobset.sigs.k8s.io/jobset-name=busy ||
        { bad terminal-setup "$out"; return; }
    E2E_WATCHES=()
    for k in jobsets jobs pods; do
        e2e_watch $n $k "$T/term-$k.w"
        kt_poll -m "$k watch listed" "$WAIT" test -s "$T/term-$k.w"
    done
    t0=$SECONDS
    kc delete jobset "done" broke busy -n $n --wait=false >/dev/null
    kt_poll -m "busy's JobSet re-created" "$WAIT" ctl_back "$T/term-jobsets.w" busy &&
        ok terminal-control-running-jobset-recreated || bad terminal-control-running-jobset-recreated "not seen"
    while [ $((SECONDS - t0)) -lt 30 ]; do sleep 1; done # the observation window
    kill "${E2E_WATCHES[@]}" 2>/dev/null
    for f in "done" broke; do
        out=$(for k in jobsets jobs pods; do echo "$k=$(readded "$T/term-$k.w" $f)"; done | tr '\n' ' ')
        [ "$out" = "jobsets=0 jobs=0 pods=0 " ] && grep -q "^DELETED $f " "$T/term-jobsets.w" &&
            ok "terminal-$f-nothing-recreated-30s ($out)" || bad "terminal-$f-nothing-recreated-30s" "$out"
    done
    [ "$(tj_state $n "done")" = Complete ] && [ "$(tj_state $n broke)" = Failed ] &&
        ok terminal-conditions-kept || bad terminal-conditions-kept "done: $(tj_state $n "done"), broke: $(tj_state $n broke)"
}

# More GPUs than any node has: the pods stay Pending (Unschedulable) and the TrainJob neither
# completes nor fails; kt-reconciler tells why with a Warning event on the TrainJob itself.
case_unschedulable() {
    local n=e2e-gpu p
    kt_ns --name $n >/dev/null
    e2e_trainjob $n greedy torch-distributed "" "    resourcesPerNode: {limits: {nvidia.com/gpu: 16}}"
    kt_poll -m "pods marked Unschedulable" "$WAIT" kq '(.items | length) == 2 and all(.items[]; .status.conditions[]? | select(.type == "PodScheduled") | .reason == "Unschedulable")' pods -n $n &&
        ok unschedulable-pods-pending || bad unschedulable-pods-pending "$(kc get pods -n $n -o wide 2>&1 | sed -n 1,10p)"
    p=$(pods_of $n greedy)
    check unschedulable-none-bound jq -e 'all(.[]; .spec.nodeName == null and .status.phase == "Pending")' <<<"$p"
    check unschedulable-scheduler-says-why jq -e 'all(.[]; .status.conditions[] | select(.type == "PodScheduled") | .message | test("Insufficient nvidia.com/gpu"))' <<<"$p"
    [ -z "$(tj_state $n greedy | grep -E 'Complete|Failed')" ] && ok unschedulable-trainjob-not-finished ||
        bad unschedulable-trainjob-not-finished "$(tj_state $n greedy)"
    if kt_poll -m "Warning event on the TrainJob" "$WAIT" kq '[.items[] | select(.message | test("Insufficient nvidia.com/gpu"))] | length == 1' events -n $n --field-selector involvedObject.kind=TrainJob,involvedObject.name=greedy,type=Warning; then
        ok "unschedulable-event-on-trainjob ($(kc get events -n $n --field-selector involvedObject.kind=TrainJob,type=Warning -o jsonpath='{.items[0].reason}: {.items[0].message}' | cut -c1-120))"
    else
        bad unschedulable-event-on-trainjob "$(kc get events -n $n -o wide 2>&1 | tail -5)"
    fi
}

# ktctl status (and `kubectl kt status` through bin/kubectl-kt on PATH) on the full chain:
# pending-unschedulable (the scheduler's message), suspended, running, failed, complete, a
# missing TrainJob (exit 1, kubectl's NotFound line), a user without rights on TrainJobs
# (kt-webhook's ServiceAccount: exit 1, a Forbidden line) and one without rights on Jobs and
# events (kt-reconciler's: the view with a note for each), -o json / yaml, --watch (keeps
# watching a running TrainJob, returns on a finished one), a bad --context.
# KT_E2E_STATUS_OUT=DIR keeps two outputs (unschedulable.txt, failed.txt) for docs/metrics.md.
kst() { "$KTCTL" status --kubeconfig "$KT_ADMIN_KUBECONFIG" -n e2e-status "$@"; }
case_status() {
    local n=e2e-status out rc
    kt_ns --name $n >/dev/null
    e2e_runtime $n fail-fast "" "              backoffLimit: 0"
    e2e_trainjob $n greedy torch-distributed "" "    resourcesPerNode: {limits: {nvidia.com/gpu: 16}}"
    e2e_trainjob $n held torch-distributed "" "" "  suspend: true"
    e2e_trainjob $n boom fail-fast TrainingRuntime "    env: [{name: KT_SIM_EXIT_CODE, value: \"3\"}]"
    e2e_trainjob $n fine torch-distributed
    e2e_trainjob $n slow torch-distributed "" "    env: [{name: KT_SIM_RUN, value: 10m}]"
    kt_poll -m "greedy pods Unschedulable" "$WAIT" kq '(.items | length) == 2 and all(.items[]; .status.conditions[]? | select(.type == "PodScheduled") | .reason == "Unschedulable")' pods -n $n -l jobset.sigs.k8s.io/jobset-name=greedy
    out=$(kst greedy)
    [ -z "${KT_E2E_STATUS_OUT:-}" ] || echo "$out" >"$KT_E2E_STATUS_OUT/unschedulable.txt"
    if grep -q '^Status:    waiting for scheduling: 0/[0-9]* nodes are available: .*Insufficient nvidia.com/gpu' <<<"$out" &&
        [ "$(grep -c '^    Pending pod greedy-node-.*: Unschedulable: 0/[0-9]* nodes are available' <<<"$out")" = 2 ] &&
        grep -q '^  node: pods Pending 2 Running 0' <<<"$out"; then
        ok "status-unschedulable ($(grep '^Status:' <<<"$out" | cut -c1-110))"
    else
        bad status-unschedulable "$out"
    fi
    kt_poll -m "held Suspended" "$WAIT" kq 'any(.status.conditions[]?; .type == "Suspended" and .status == "True")' trainjob held -n $n
    out=$(kst held -o json)
    jq -e '.waitingFor == "suspended" and .jobSet.suspended == true and .trainJob.suspend == true' <<<"$out" >/dev/null &&
        ok status-suspended-json || bad status-suspended-json "$out"
    out=$(kst held -o yaml)
    grep -q '^waitingFor: suspended$' <<<"$out" && ok status-suspended-yaml || bad status-suspended-yaml "$out"
    if kt_poll -m "slow running" "$WAIT" sh -c "'$KTCTL' status --kubeconfig '$KT_ADMIN_KUBECONFIG' -n $n slow | grep -c '^Status:    running: 2/2 pods Running$' >/dev/null"; then
        ok status-running
    else
        bad status-running "$(kst slow)"
    fi
    out=$(timeout 5 "$KTCTL" status --kubeconfig "$KT_ADMIN_KUBECONFIG" -n $n slow -w)
    rc=$?
    [ $rc = 124 ] && [ "$(grep -c '^TrainJob:' <<<"$out")" = 1 ] && ok status-watch-running-keeps-watching ||
        bad status-watch-running-keeps-watching "exit $rc: $out"
    kc delete trainjob slow -n $n --wait=false >/dev/null
    tj_wait $n boom Failed >/dev/null
    out=$(kst boom)
    [ -z "${KT_E2E_STATUS_OUT:-}" ] || echo "$out" >"$KT_E2E_STATUS_OUT/failed.txt"
    grep -q "^Status:    finished: Failed — FailedJobs: jobset failed due to one or more job failures" <<<"$out" &&
        ok "status-failed ($(grep '^Status:' <<<"$out" | cut -c1-100))" || bad status-failed "$out"
    tj_wait $n fine Complete >/dev/null
    out=$(KUBECONFIG=$KT_ADMIN_KUBECONFIG PATH="$ROOT/bin:$PATH" "$KT_KUBECTL" kt status fine -n $n 2>&1)
    grep -q '^Status:    finished: Complete' <<<"$out" && grep -q '^  node: pods Pending 0 Running 0 Succeeded 2 Failed 0$' <<<"$out" &&
        ok status-complete-kubectl-plugin || bad status-complete-kubectl-plugin "$out"
    out=$(timeout 10 "$KTCTL" status --kubeconfig "$KT_ADMIN_KUBECONFIG" -n $n fine --watch)
    rc=$?
    [ $rc = 0 ] && [ "$(grep -c '^TrainJob:' <<<"$out")" = 1 ] && ok status-watch-finished-returns ||
        bad status-watch-finished-returns "exit $rc: $out"
    out=$(kst nope 2>&1)
    rc=$?
    [ $rc = 1 ] && [ "$out" = "Error from server (NotFound): trainjobs.trainer.kubeflow.org \"nope\" not found in namespace \"$n\"" ] &&
        ok status-missing || bad status-missing "exit $rc: $out"
    out=$("$KTCTL" status --kubeconfig "$KT_WEBHOOK_KUBECONFIG" -n $n fine 2>&1)
    rc=$?
    [ $rc = 1 ] && grep -q '^Error from server (Forbidden): trainjobs.trainer.kubeflow.org "fine" is forbidden: User "system:serviceaccount:[^"]*" cannot get resource "trainjobs"' <<<"$out" &&
        ok "status-forbidden ($(cut -c1-90 <<<"$out"))" || bad status-forbidden "exit $rc: $out"
    out=$("$KTCTL" status --kubeconfig "$KT_RECONCILER_KUBECONFIG" -n $n fine 2>&1)
    rc=$?
    [ $rc = 0 ] && grep -q '^Status:    finished: Complete' <<<"$out" && grep -q '^Note: jobs: Forbidden: ' <<<"$out" &&
        ok status-partial-rights || bad status-partial-rights "exit $rc: $out"
    out=$(kst fine --context nope 2>&1)
    rc=$?
    [ $rc = 1 ] && grep -q 'nope' <<<"$out" && ok status-bad-context || bad status-bad-context "exit $rc: $out"
    out=$("$KTCTL" status 2>&1)
    [ $? = 2 ] && ok status-usage || bad status-usage "$out"
}

# The kubeflow_trainer_ metrics of both daemons, scraped over TLS: the counters agree with
# what the case did (2 + 1 created, 2 completed, 1 failed FailedJobs, 1 suspended, 1 resumed,
# 1 deleted, 3 JobSets timed), states, phases, webhook decisions, build_info; no TrainJob name
# as a label value; `promtool check metrics` on both expositions (promtool built from
# Prometheus' Go module, tests/monitoring/build-promtool.sh); deploy/monitoring's alerts and
# dashboard queries through promtool (tests/monitoring/check.sh: check rules, test rules).
scrape() { # scrape PORT - with the e2e-prometheus ServiceAccount's token (metrics.auth.enabled)
    curl -sS --max-time 10 --cacert "$D/certs/ca.crt" -H "Authorization: Bearer $(cat "$D/scraper.token")" \
        "https://127.0.0.1:$1/metrics"
}
mval() { # mval FILE REGEX - the sum of the samples whose line matches REGEX
    grep -E "$2" "$1" | awk '{s += $NF} END {print s + 0}'
}
case_metrics() {
    local n=e2e-metrics m=$T/reconciler.metrics w=$T/webhook.metrics port pt L wpid seen
    kt_ns --name $n >/dev/null
    # the JobSets as the API server reports them (list, then watch), for the JobSets that ever
    # had a ready Job: what kubeflow_trainer_trainjob_first_job_ready_seconds must have counted
    kc get jobsets -n $n --watch --output-watch-events -o json >"$T/metrics-jobsets.watch" 2>/dev/null &
    wpid=$!
    e2e_runtime $n fail-fast "" "              backoffLimit: 0"
    e2e_trainjob $n m-ok torch-distributed
    e2e_trainjob $n m-bad fail-fast TrainingRuntime "    env: [{name: KT_SIM_EXIT_CODE, value: \"3\"}]"
    e2e_trainjob $n m-held torch-distributed "" "" "  suspend: true"
    kt_poll -m "m-held Suspended" "$WAIT" kq 'any(.status.conditions[]?; .type == "Suspended" and .status == "True")' trainjob m-held -n $n
    kc patch trainjob m-held -n $n --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
    tj_wait $n m-ok Complete >/dev/null && tj_wait $n m-bad Failed >/dev/null && tj_wait $n m-held Complete >/dev/null
    kc delete trainjob m-ok -n $n --wait=false >/dev/null
    port=$(jq -r .metrics "$D/kt-reconciler.ports")
    L='namespace="e2e-metrics",runtime="ClusterTrainingRuntime",runtime_name="torch-distributed",framework="torch"'
    kt_poll -m "deleted counted" "$WAIT" sh -c "curl -sS --max-time 5 --cacert '$D/certs/ca.crt' -H 'Authorization: Bearer $(cat "$D/scraper.token")' https://127.0.0.1:$port/metrics | grep -c '^kubeflow_trainer_trainjobs_deleted_total{$L} 1' >/dev/null"
    scrape "$port" >"$m"
    scrape "$WMPORT" >"$w"
    kill -TERM "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
    seen=$(jq -s '[.[].object | select(any(.status.replicatedJobsStatus[]?; .ready > 0)) | .metadata.uid] | unique | length' "$T/metrics-jobsets.watch")
    # KWOK pods are Ready while Running (KT_POD_RUN_MS), so each of the three JobSets had one
    [ "$seen" = 3 ] && ok "metrics-jobsets-had-ready-jobs (watch: $seen of 3)" ||
        bad metrics-jobsets-had-ready-jobs "the watch saw $seen JobSets with status.replicatedJobsStatus[].ready > 0"
    local got
    got="created=$(mval "$m" "^kubeflow_trainer_trainjobs_created_total\{$L\}"),$(mval "$m" '^kubeflow_trainer_trainjobs_created_total\{namespace="e2e-metrics",runtime="TrainingRuntime",runtime_name="fail-fast"')"
    got="$got completed=$(mval "$m" "^kubeflow_trainer_trainjobs_completed_total\{$L\}")"
    got="$got failed=$(mval "$m" '^kubeflow_trainer_trainjobs_failed_total\{namespace="e2e-metrics",.*reason="FailedJobs"')"
    got="$got suspended=$(mval "$m" "^kubeflow_trainer_trainjobs_suspended_total\{$L\}")"
    got="$got resumed=$(mval "$m" "^kubeflow_trainer_trainjobs_resumed_total\{$L\}")"
    got="$got deleted=$(mval "$m" "^kubeflow_trainer_trainjobs_deleted_total\{$L\}")"
    got="$got jobsets=$(mval "$m" '^kubeflow_trainer_trainjob_jobset_created_seconds_count\{namespace="e2e-metrics"')"
    got="$got finished=$(mval "$m" '^kubeflow_trainer_trainjob_duration_seconds_count\{namespace="e2e-metrics"')"
    # one per JobSet that had a ready Job (m-bad's pods fail after running)
    got="$got ready=$(mval "$m" '^kubeflow_trainer_trainjob_first_job_ready_seconds_count\{namespace="e2e-metrics"')"
    got="$got states=$(mval "$m" '^kubeflow_trainer_trainjobs_by_state\{namespace="e2e-metrics",state="Complete"'),$(mval "$m" '^kubeflow_trainer_trainjobs_by_state\{namespace="e2e-metrics",state="Failed"')"
    [ "$got" = "created=2,1 completed=2 failed=1 suspended=1 resumed=1 deleted=1 jobsets=3 finished=3 ready=$seen states=1,1" ] &&
        ok "metrics-counters-agree ($got)" || bad metrics-counters-agree "got $got; $(grep "e2e-metrics" "$m" | grep -v _bucket | sed -n 1,30p)"
    [ "$(mval "$m" '^kubeflow_trainer_reconcile_phase_duration_seconds_count\{phase="Build"\}')" -gt 0 ] &&
        [ "$(mval "$m" '^kubeflow_trainer_reconcile_phase_duration_seconds_count\{phase="PostExecution"\}')" -gt 0 ] &&
        grep -q '^kubeflow_trainer_build_info{component="reconciler",.*} 1$' "$m" &&
        grep -q '^controller_runtime_reconcile_total{' "$m" &&
        ok metrics-phases-build-info || bad metrics-phases-build-info "$(grep -E 'phase|build_info' "$m" | grep -v _bucket)"
    [ "$(mval "$w" '^kubeflow_trainer_webhook_validation_total\{resource="trainjobs",operation="CREATE",result="allowed"\}')" -ge 3 ] &&
        grep -q '^kubeflow_trainer_build_info{component="webhook",' "$w" &&
        ok metrics-webhook-decisions || bad metrics-webhook-decisions "$(grep kubeflow_trainer "$w")"
    if grep -h '^kubeflow_trainer_' "$m" "$w" | grep -cE '"(m-ok|m-bad|m-held|greedy|boom|fine|held|slow)"|"m-(ok|bad|held)-' >/dev/null; then
        bad metrics-no-object-names "$(grep -hE '"(m-ok|m-bad|m-held)' "$m" "$w" | sed -n 1,3p)"
    else
        ok "metrics-no-object-names ($(cat "$m" "$w" | grep -c '^kubeflow_trainer_') kubeflow_trainer_ samples)"
    fi
    if pt=$("$ROOT/tests/monitoring/build-promtool.sh" 2>"$T/promtool-build.log" | tail -1) && [ -x "$pt" ]; then
        check metrics-promtool-reconciler "$pt" check metrics <"$m"
        check metrics-promtool-webhook "$pt" check metrics <"$w"
        check metrics-rules-and-dashboard "$ROOT/tests/monitoring/check.sh" "$pt"
    else
        bad metrics-promtool "promtool could not be built: $(tail -3 "$T/promtool-build.log")"
    fi
}

# Coscheduling (scheduler-plugins' scheduler, selected by schedulerName): a gang that fits is
# placed and completes; a gang of 5 pods needing 8 GPUs each on 4 nodes of 8 GPUs gets NO pod
# bound (all or nothing) where the default scheduler, for the same job, binds 4 of the 5.
case_coscheduling() {
    local n=e2e-gang out p
    kt_ns --name $n >/dev/null
    e2e_runtime $n gang "                  schedulerName: ${KT_SCHEDPLUGINS_NAME:-scheduler-plugins-scheduler}" "" \
        "  podGroupPolicy:
    coscheduling:
      scheduleTimeoutSeconds: 30"
    e2e_runtime $n plain "" ""
    e2e_trainjob $n fits gang TrainingRuntime "    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}"
    if out=$(tj_wait $n fits Complete); then ok coscheduling-gang-fits-completes; else bad coscheduling-gang-fits-completes "$out"; fi
    check coscheduling-podgroup-made kc get podgroups.scheduling.x-k8s.io fits -n $n
    kc apply -f - >/dev/null <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: toobig, namespace: $n}
spec:
  runtimeRef: {name: gang, kind: TrainingRuntime}
  trainer: {numNodes: 5, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: greedy, namespace: $n}
spec:
  runtimeRef: {name: plain, kind: TrainingRuntime}
  trainer: {numNodes: 5, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}, env: [{name: KT_SIM_EXIT_CODE, value: "1"}]}
  suspend: true
EOF
    kt_poll -m "gang pods all rejected" "$WAIT" kq '(.items | length) == 5 and all(.items[]; any(.status.conditions[]?; .type == "PodScheduled" and .status == "False"))' pods -n $n -l jobset.sigs.k8s.io/jobset-name=toobig &&
        ok coscheduling-gang-seen-by-scheduler || bad coscheduling-gang-seen-by-scheduler "$(kc get pods -n $n -o wide | sed -n 1,10p)"
    p=$(pods_of $n toobig)
    check coscheduling-all-or-nothing jq -e 'all(.[]; .spec.nodeName == null)' <<<"$p"
    # the contrast: the default scheduler places 4 of the same 5 pods (with the gang gone)
    kc delete trainjob toobig -n $n >/dev/null
    kt_poll -m "gang pods gone" "$WAIT" kq '.items | length == 0' pods -n $n -l jobset.sigs.k8s.io/jobset-name=toobig
    kc patch trainjob greedy -n $n --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
    kt_poll -m "default scheduler binds 4 of 5" "$WAIT" kq '[.items[] | select(.spec.nodeName != null)] | length == 4' pods -n $n -l jobset.sigs.k8s.io/jobset-name=greedy &&
        ok coscheduling-contrast-default-binds-4-of-5 || bad coscheduling-contrast-default-binds-4-of-5 "$(kc get pods -n $n -o wide | sed -n 1,10p)"
    kc delete trainjob greedy -n $n --wait=false >/dev/null
}

# Chaos: 50 TrainJobs; kt-reconciler is killed with SIGKILL while they run and started again:
# every TrainJob completes, exactly one JobSet each, and no pod beyond what the jobs asked for.
case_chaos() {
    local n=e2e-chaos i done_n jobsets pods
    kt_ns --name $n >/dev/null
    for i in $(seq -w 1 50); do
        cat <<EOF
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: c$i, namespace: $n}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 1}
EOF
    done >"$T/chaos.yaml"
    kc apply -f "$T/chaos.yaml" >/dev/null
    kt_poll -m "some pods running" "$WAIT" kq '[.items[] | select(.status.phase == "Running")] | length >= 5' pods -n $n
    kill -KILL "$RPID"
    wait "$RPID" 2>/dev/null
    done_n=$(kc get trainjobs -n $n -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "Complete" and .status == "True"))] | length')
    ok "chaos-killed-reconciler (SIGKILL with $done_n of 50 complete)"
    ktd_start_reconciler
    kt_poll -m "all 50 Complete" "$WAIT" kq '[.items[] | select(any(.status.conditions[]?; .type == "Complete" and .status == "True"))] | length == 50' trainjobs -n $n &&
        ok chaos-all-complete || bad chaos-all-complete "$(kc get trainjobs -n $n --no-headers | awk '{print $NF}' | sort | uniq -c | tr '\n' ' ')"
    jobsets=$(kc get jobsets -n $n -o json | jq '[.items[].metadata.name] | (length == 50 and (unique | length) == 50)')
    [ "$jobsets" = true ] && ok chaos-one-jobset-each || bad chaos-one-jobset-each "$(kc get jobsets -n $n -o name | wc -l) JobSets"
    pods=$(kc get pods -n $n -o json | jq '[.items[] | .metadata.labels["jobset.sigs.k8s.io/jobset-name"]] | group_by(.) | map(length) | unique')
    [ "$(echo "$pods" | jq -c .)" = "[1]" ] && ok chaos-one-pod-each || bad chaos-one-pod-each "pods per JobSet: $pods"
}

# The real Kubeflow SDK (PyPI `kubeflow`, pinned below) against kt: list_runtimes, train,
# wait_for_job_status Running then Complete, get_job steps, get_job_events, delete_job; then
# ttlSecondsAfterFinished: a TrainJob on a runtime with a runPolicy TTL and one with its own TTL
# (patched in: the SDK drops an option setting it) complete and are deleted by kt, after which
# get_job raises (RuntimeError from the 404) and list_jobs omits them; a TTL-less one stays. The venv
# lives in the cache outside the repo, one per SDK version (tests/lib_kube.sh sdk_python).
case_sdk() { kt_sdk_case; } # tests/lib_kube.sh

# The real Prometheus (tests/monitoring/prom_e2e.sh, started before the cases, scraping both
# daemons every second over HTTPS with the serving CA and a ServiceAccount token as
# deploy/monitoring's ServiceMonitor does): asked at the end of the run by
# tests/monitoring/prom_check.py. Both targets up; the wrong-token, no-role and wrong-CA
# scrapes down with 401 / 403 / a certificate error; every dashboard panel's queries show data
# over the run (namespace All and one namespace); every alert rule evaluates (health ok) and the
# series it compares exist; the lifecycle counters equal what the API server saw (a kubectl
# watch of TrainJobs from before the first case); the series counts; an SVG chart of TrainJobs
# by state over the run (build/artifacts/e2e-trainjobs-by-state.svg). Needs the workload of
# the metrics case (a failure, a suspension, a deletion): run alone, it runs that case first;
# then two TrainJobs (m-late1, m-late2) more in that namespace.
prom_all_scraped() { # every target (the negatives too) has been scraped at least once
    curl -sfG "$PROM_URL/api/v1/targets" --data-urlencode state=active |
        jq -e '.data.activeTargets | length == 8 and all(.health != "unknown")'
}
prom_scraped_since() { # prom_scraped_since T - both daemons' last scrapes are later than T
    curl -sfG "$PROM_URL/api/v1/query" --data-urlencode 'query=timestamp(up{job=~"kubeflow-trainer-.*"})' |
        jq -e --argjson t "$1" '.data.result | length == 2 and all(.value[1] | tonumber > $t)'
}
case_prometheus() {
    local start end py=$ROOT/tests/monitoring/prom_check.py svg=$ROOT/build/artifacts/e2e-trainjobs-by-state.svg
    [ -n "$PROM_PID" ] || { bad prometheus "Prometheus is not running"; return; }
    kt_only e2e/metrics || case_metrics
    # Two more TrainJobs, one after the other, each once Prometheus has scraped what the one
    # before did: Prometheus sees a counter or histogram series move only after its first
    # sample, and the reconciler's series for e2e-metrics may be new (the chaos case restarts
    # it, and a new process starts its series afresh). On a long-running cluster every
    # TrainJob but a namespace's first is such; this gives the latency quantiles a rate.
    local late
    for late in m-late1 m-late2; do
        end=$(($(date +%s) + 1))
        kt_poll -m "a scrape after the cases" "$WAIT" prom_scraped_since "$end"
        e2e_trainjob e2e-metrics $late torch-distributed
        tj_wait e2e-metrics $late Complete >/dev/null || bad prometheus-late-trainjob "$late not Complete"
    done
    # bounded poll until both daemons were scraped twice after the last change (increase()
    # needs two samples)
    start=${PROM_START%.*} end=$(($(date +%s) + 1))
    kt_poll -m "two scrapes of both daemons after the cases" "$WAIT" prom_scraped_since "$end" ||
        bad prometheus-scraped "no scrape of both daemons after the cases"
    # the negative targets (scraped every 2 s) too, also when kt-reconciler got a new port
    kt_poll -m "every target scraped" "$WAIT" prom_all_scraped || bad prometheus-scraped "a target never scraped"
    # the queries' end: just after that scrape (a range selector ends at its evaluation time)
    end=$(curl -sfG "$PROM_URL/api/v1/query" --data-urlencode 'query=max(timestamp(up{job=~"kubeflow-trainer-.*"}))' |
        jq -r '.data.result[0].value[1] | tonumber + 0.5')
    mkdir -p "$(dirname "$svg")"
    {
        python3 "$py" targets "$PROM_URL"
        python3 "$py" panels "$PROM_URL" "$start" "$end" "$ROOT/deploy/monitoring/dashboard.json"
        python3 "$py" rules "$PROM_URL" "$start" "$end"
        python3 "$py" counters "$PROM_URL" "$start" "$end" "$PROM_DIR/trainjobs.watch"
        python3 "$py" series "$PROM_URL" "$start" "$end"
        python3 "$py" chart "$PROM_URL" "$start" "$end" "$svg"
    } >"$T/prom-check.out" 2>&1
    local s rest
    while IFS= read -r line; do
        s=${line%% *} rest=${line#* }
        case $s in
            ok) ok "$rest" ;;
            FAIL) bad "${rest%%:*}" "${rest#*: }" ;;
            *) echo "$line" ;;
        esac
    done <"$T/prom-check.out"
    echo "e2e: chart of TrainJobs by state: $svg"
}
# shellcheck disable=SC2154 # here: set by tests/e2e/run.sh, which sources this file
. "$here/switch.sh"
