# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/e2e/switch.sh - case_switch of the e2e tier (sourced by tests/e2e/cases.sh): a live
# cluster switched between upstream Kubeflow Trainer v2.3.0's manager (tests/parity/
# upstream_lib.sh, its own webhooks registered) and kt, both ways, and across a kt upgrade.
#
# The chain is SW_CHAIN (default "up kt up prev kt"): upstream -> kt -> upstream -> the previous
# kt -> this kt. "prev" is kt-reconciler and kt-webhook built from the parent of the newest commit
# that changed C code (not only comments) in reconciler/ or common/ (the repo has no release
# tags; KT_E2E_PREV=REV picks another revision), cached by commit in $KT_CACHE_DIR/kt-prev/. At each link FROM -> TO:
#   under FROM, TrainJobs in every state are made in namespace e2e-switch, names s<N>-*:
#   run (2 torch pods held Running), mpi (deepspeed: launcher + node held, SSH Secret, hostfile
#   ConfigMap), gang (Coscheduling PodGroup, pods held), done (Complete), fail (Failed), held
#   (suspended), init (dataset and model initializer pods held, no trainer Job yet);
#   TO is started beside FROM (a rollover): it stands by while FROM holds the Lease, which they
#   share; FROM is stopped, TO takes the Lease, the webhooks are registered to TO's server;
#   the held pods are released (their kt.kubeflow.org/sim-run annotation set to 1s: KWOK
#   re-times a pod on every change) and the suspended TrainJob resumed: TO finishes them all;
#   compared with the snapshot taken before the switch: every object of every switch TrainJob
#   (TrainJobs, JobSets, Jobs, pods, Secrets, ConfigMaps, PodGroups) kept its uid, no pod has
#   a restart, no held TrainJob got a new pod, the conditions of finished TrainJobs are
#   unchanged and nothing new exists for them.
# Not compared (legitimate differences, docs/compatibility.md): labels and managedFields (kt
# labels upstream's objects with trainer.kubeflow.org/trainjob-name when it adopts them),
# status.startTime/completionTime (provisional, kt only: kt fills completionTime of a TrainJob
# upstream finished from its terminal condition's lastTransitionTime; upstream neither writes
# nor reads them, and its merge-patch status writes leave them), and objects new for TrainJobs
# that were not finished (the trainer Job and pods of the mid-initializer one, the pods of the
# resumed one, kt's runtime snapshot where upstream had made none): new objects count against
# finished TrainJobs, and new pods against the held ones, only.

SW_NS=e2e-switch
SW_UP_OUT=""
SW_HELD=(run mpi gang init)

SW_OLD_PIDS="" # kt daemons being replaced, while a new kt starts beside them
switch_teardown() { # run at exit (tests/e2e/run.sh's kt_cleanup)
    [ -z "$SW_UP_OUT" ] || up_stop "$SW_UP_OUT" >/dev/null 2>&1
    [ -z "$SW_OLD_PIDS" ] || sw_stop kt "$SW_OLD_PIDS"
}

# sw_code_changed REV - REV changed C code under reconciler/ or common/, not only comments or
# layout (each changed .c/.h before and after, comments removed by gcc's preprocessor, all
# whitespace dropped, compared).
sw_code_changed() {
    local f
    for f in $(git -C "$ROOT" diff --name-only "$1^" "$1" -- reconciler common | grep -E '\.[ch]$'); do
        cmp -s <(git -C "$ROOT" show "$1^:$f" 2>/dev/null | gcc -fpreprocessed -E -P -x c - 2>/dev/null | tr -d ' \t\n') \
            <(git -C "$ROOT" show "$1:$f" 2>/dev/null | gcc -fpreprocessed -E -P -x c - 2>/dev/null | tr -d ' \t\n') ||
            return 0
    done
    return 1
}

# sw_prev_rev - the parent of the newest commit that changed the daemons' code (KT_E2E_PREV
# overrides).
sw_prev_rev() {
    local c
    if [ -n "${KT_E2E_PREV:-}" ]; then
        echo "$KT_E2E_PREV"
        return 0
    fi
    for c in $(git -C "$ROOT" log -50 --format=%H -- reconciler common 2>/dev/null); do
        sw_code_changed "$c" && echo "$c^" && return 0
    done
    return 1
}

# sw_prev_bins - build (once, cached by commit) the previous kt's daemons; prints their folder.
sw_prev_bins() {
    local rev dir tmp rc=0
    rev=$(sw_prev_rev)
    rev=$(git -C "$ROOT" rev-parse --verify -q "$rev^{commit}") || {
        echo "no revision $rev in $ROOT (needs the git history)" >&2
        return 1
    }
    dir="${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/kt-prev/$rev"
    mkdir -p "$dir"
    exec 7>"$dir/.lock"
    flock -w 1800 7 || return 1
    if [ ! -x "$dir/bin/kt-reconciler" ] || [ ! -x "$dir/bin/kt-webhook" ]; then
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/kt-prev.XXXXXX")
        echo "e2e: building kt $(git -C "$ROOT" log -1 --format='%h (%cs %s)' "$rev" | cut -c1-80)" >&2
        if git -C "$ROOT" archive "$rev" | tar -x -C "$tmp" &&
            nice make -C "$tmp" -j2 build/plain/bin/kt-reconciler build/plain/bin/kt-webhook >"$tmp.log" 2>&1; then
            mkdir -p "$dir/bin"
            cp "$tmp/build/plain/bin/kt-reconciler" "$tmp/build/plain/bin/kt-webhook" "$dir/bin/"
            cp "$tmp/deploy/manager/controller_manager_config.yaml" "$dir/"
        else
            tail -20 "$tmp.log" >&2
            rc=1
        fi
        rm -rf "$tmp" "$tmp.log"
    fi
    exec 7>&-
    [ $rc = 0 ] && echo "$dir"
}

# sw_stop CTRL [PIDS] - stop upstream's manager (up) or kt's two daemons (kt, prev: PIDS, by
# default the current RPID and WPID, which are then cleared).
sw_stop() {
    local p
    if [ "$1" = up ]; then
        up_stop "$SW_UP_OUT" >/dev/null 2>&1
        SW_UP_OUT=""
        return 0
    fi
    for p in ${2:-$RPID $WPID}; do
        kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    [ -n "${2:-}" ] && return 0
    RPID=""
    WPID=""
}

# sw_register_up - deploy/webhook's configurations pointed at upstream's webhook server (url
# clientConfig, its CA as caBundle); waits until the API server calls it (the probe is denied).
sw_register_up() {
    kc create --dry-run=client -o json -f "$ROOT/deploy/webhook/manifests.yaml" |
        jq -s --arg base "https://127.0.0.1:$UP_WEBHOOK_PORT" --arg ca "$(base64 -w0 <"$UP_CA")" \
            '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
            | .webhooks |= map(.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
            >"$D/webhooks-up.json" &&
        kc apply --server-side --force-conflicts --field-manager=kt-e2e-switch -f "$D/webhooks-up.json" \
            >"$T/sw-reg.log" 2>&1 || return 1
    kt_poll -m "upstream's webhook denies the probe" 30 ktd_denies "$KTD_PROBE"
}

# sw_launch CTRL - start upstream's manager (up: leader election on, as upstream ships it), this
# kt (kt) or the previous kt (prev). Each stands by until it holds the Lease
# kubeflow-system/trainer.kubeflow.org, the same for all of them.
sw_launch() {
    case $1 in
    up)
        # up_start waits for the machine-wide port lock, which other local clusters' starts
        # can hold past its 120 s on a shared machine: up to three tries
        local try
        for try in 1 2 3; do
            SW_UP_OUT="$D/upstream-$SECONDS-$try"
            UP_LEASE_NAMESPACE=kubeflow-system up_start "$D" "$SW_UP_OUT" 2>>"$T/sw-up.log" && break
            echo "e2e: upstream's manager did not start (try $try): $(tail -1 "$T/sw-up.log")" >&2
            SW_UP_OUT=""
            [ $try -lt 3 ] || return 1
        done
        . "$SW_UP_OUT/env"
        ;;
    kt | prev)
        # ktd_start_* set RPID/WPID/WPORT (children of this shell, so sw_stop can wait for
        # them); a daemon that does not start ends the tier (kt_deploy.sh's die)
        local r=$RECONCILER w=$WEBHOOK c=$KT_CONFIG
        if [ "$1" = prev ]; then
            RECONCILER=$SW_PREV/bin/kt-reconciler
            WEBHOOK=$SW_PREV/bin/kt-webhook
            KT_CONFIG=$SW_PREV/controller_manager_config.yaml
        fi
        ktd_start_webhook
        ktd_start_reconciler
        RECONCILER=$r
        WEBHOOK=$w
        KT_CONFIG=$c
        ;;
    *) return 1 ;;
    esac
}

# sw_register CTRL - the webhook configurations pointed at CTRL's webhook server (kt's leader
# injects its caBundle, which ktd_register_webhooks waits for).
sw_register() {
    case $1 in
    up) sw_register_up ;;
    *) ktd_register_webhooks "$KTD_PROBE" ;;
    esac
}

# sw_acted CTRL MARK - CTRL took the Lease (kt logs "became leader", past line MARK of the log
# every kt-reconciler appends to; client-go's elector in upstream's own log "successfully
# acquired lease"). kt-reconciler starts its workers only as the leader.
sw_acted() {
    if [ "$1" = up ]; then
        grep -q 'successfully acquired lease' "$SW_UP_OUT/manager.log"
    else
        tail -n "+$(($2 + 1))" "$D/kt-reconciler.log" | grep -c 'became leader' >/dev/null
    fi
}
sw_new_holder() { # sw_new_holder OLD - the Lease is held, by someone else than OLD
    local h
    h=$(ktd_lease_holder)
    [ -n "$h" ] && [ "$h" != "$1" ]
}

# sw_switch L FROM TO - TO started while FROM runs, as a Deployment rollover does: for 5 s TO
# stands by (the Lease stays FROM's, TO neither leads nor labels anything); FROM stopped, TO
# takes the Lease (at once when kt releases it on SIGTERM, after leaseDuration when upstream,
# which does not release, stopped); then the webhooks go to TO.
sw_switch() {
    local l=$1 from=$2 to=$3 h0 mark t
    h0=$(ktd_lease_holder)
    mark=$(wc -l <"$D/kt-reconciler.log")
    [ "$from" = up ] || SW_OLD_PIDS="$RPID $WPID"
    sw_launch "$to" || {
        bad "$l-start-$to" "$(tail -3 "$T/sw-up.log" 2>/dev/null)"
        return 1
    }
    t=$SECONDS
    while [ $((SECONDS - t)) -lt 5 ]; do sleep 1; done # the observation window
    if [ -n "$h0" ] && [ "$(ktd_lease_holder)" = "$h0" ] && ! sw_acted "$to" "$mark"; then
        ok "$l-$to-stands-by-beside-$from (5 s; Lease held by $from's $h0)"
    else
        bad "$l-$to-stands-by-beside-$from" "Lease before: '$h0', now: '$(ktd_lease_holder)'; $to acted: $(sw_acted "$to" "$mark" && echo yes || echo no)"
    fi
    t=$SECONDS
    if [ "$from" = up ]; then sw_stop up; else sw_stop "$from" "$SW_OLD_PIDS"; fi
    SW_OLD_PIDS=""
    [ "$to" != up ] || { RPID="" && WPID=""; }
    if kt_poll -m "$to takes the Lease" "$WAIT" sw_new_holder "$h0" && sw_register "$to"; then
        ok "$l-$to-leads ($((SECONDS - t))s from stopping $from to $to holding the Lease and its webhook answering)"
    else
        bad "$l-$to-leads" "Lease: '$(ktd_lease_holder)'; see $D"
        return 1
    fi
}

# sw_runtimes - the namespaced runtimes of the case: fail-fast (backoffLimit 0), gang
# (Coscheduling), init (dataset and model initializers before the trainer, dependsOn).
sw_runtimes() {
    e2e_runtime $SW_NS sw-fail "" "              backoffLimit: 0"
    e2e_runtime $SW_NS sw-gang "                  schedulerName: ${KT_SCHEDPLUGINS_NAME:-scheduler-plugins-scheduler}" "" \
        "  podGroupPolicy:
    coscheduling:
      scheduleTimeoutSeconds: 60"
    kc apply -f - >/dev/null <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: sw-init, namespace: $SW_NS}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: ghcr.io/kubeflow/trainer/dataset-initializer:v2.3.0
                      env: [{name: STORAGE_URI, value: "hf://tatsu-lab/alpaca"}, {name: KT_SIM_RUN, value: 30m}]
        - name: model-initializer
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
            spec:
              template:
                spec:
                  containers:
                    - name: model-initializer
                      image: ghcr.io/kubeflow/trainer/model-initializer:v2.3.0
                      env: [{name: STORAGE_URI, value: "hf://meta-llama/Llama-3.2-1B-Instruct"}, {name: KT_SIM_RUN, value: 30m}]
        - name: node
          dependsOn:
            - {name: dataset-initializer, status: Complete}
            - {name: model-initializer, status: Complete}
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
EOF
}

# sw_make P - TrainJobs P-run, P-mpi, P-gang, P-done, P-fail, P-held, P-init.
sw_make() {
    local p=$1 hold='    env: [{name: KT_SIM_RUN, value: 30m}]'
    e2e_trainjob $SW_NS "$p-run" torch-distributed "" "$hold" &&
        e2e_trainjob $SW_NS "$p-mpi" deepspeed-distributed "" "$hold" &&
        e2e_trainjob $SW_NS "$p-gang" sw-gang TrainingRuntime "$hold" &&
        e2e_trainjob $SW_NS "$p-done" torch-distributed &&
        e2e_trainjob $SW_NS "$p-fail" sw-fail TrainingRuntime "    env: [{name: KT_SIM_EXIT_CODE, value: \"3\"}]" &&
        e2e_trainjob $SW_NS "$p-held" torch-distributed "" "" "  suspend: true" &&
        e2e_trainjob $SW_NS "$p-init" sw-init TrainingRuntime
}

sw_pods_running() { # sw_pods_running JOBSET N [RJOB] - N pods Running (of RJOB only)
    kq "[.items[] | select(.status.phase == \"Running\" and
        (\"${3:-}\" == \"\" or .metadata.labels[\"jobset.sigs.k8s.io/replicatedjob-name\"] == \"${3:-}\"))] | length == $2" \
        pods -n $SW_NS -l "jobset.sigs.k8s.io/jobset-name=$1"
}
sw_cond() { # sw_cond NAME TYPE - the TrainJob has condition TYPE=True
    kq "any(.status.conditions[]?; .type == \"$2\" and .status == \"True\")" trainjob "$1" -n $SW_NS
}

# sw_states P - wait until P's TrainJobs are in their states (the bounded waits of run.sh).
sw_states() {
    local p=$1
    kt_poll -m "$p-done Complete" "$WAIT" sw_cond "$p-done" Complete &&
        kt_poll -m "$p-fail Failed" "$WAIT" sw_cond "$p-fail" Failed &&
        kt_poll -m "$p-held Suspended" "$WAIT" sw_cond "$p-held" Suspended &&
        kt_poll -m "$p-held's JobSet suspended" "$WAIT" kq '.spec.suspend == true' jobset "$p-held" -n $SW_NS &&
        kt_poll -m "$p-run pods Running" "$WAIT" sw_pods_running "$p-run" 2 &&
        kt_poll -m "$p-mpi launcher and node Running" "$WAIT" sw_pods_running "$p-mpi" 2 &&
        kt_poll -m "$p-mpi Secret and hostfile" "$WAIT" kq '.items | length == 2' secret/"$p-mpi-mpi-ssh-auth" configmap/"$p-mpi-mpi-hostfile" -n $SW_NS &&
        kt_poll -m "$p-gang pods Running" "$WAIT" sw_pods_running "$p-gang" 2 &&
        kt_poll -m "$p-gang PodGroup" "$WAIT" kc get podgroups.scheduling.x-k8s.io "$p-gang" -n $SW_NS &&
        kt_poll -m "$p-init initializer pods Running" "$WAIT" sw_pods_running "$p-init" 2 &&
        kq '[.items[] | select(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node")] | length == 0' \
            jobs -n $SW_NS -l "jobset.sigs.k8s.io/jobset-name=$p-init" ||
        { echo "$p-init has a trainer Job before its initializers finished"; return 1; }
}

# sw_snap FILE - every object of the switch TrainJobs: kind, name, uid, the TrainJob it belongs
# to (by name: the JobSet, PodGroup and TrainJob carry it, Jobs and pods their JobSet's label,
# Secrets and ConfigMaps start with it), pod restarts, TrainJob conditions and whether finished.
sw_snap() {
    kc get trainjobs,jobsets,jobs,pods,secrets,configmaps,podgroups.scheduling.x-k8s.io -n $SW_NS -o json |
        jq '[.items[] | select(.kind == "TrainJob") | .metadata.name] as $tjs | [.items[] |
            (.metadata.labels["jobset.sigs.k8s.io/jobset-name"] // .metadata.name) as $n |
            ([$tjs[] | select(. as $t | $n == $t or ($n | startswith($t + "-")))] | max_by(length)) as $tj |
            select($tj != null) |
            {kind, name: .metadata.name, uid: .metadata.uid, tj: $tj,
             rjob: (.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] // null),
             restarts: ([.status.containerStatuses[]?.restartCount] | add // 0),
             conds: (if .kind == "TrainJob" then [.status.conditions[]? | {type, status, reason, message, lastTransitionTime}] else null end),
             finished: (.kind == "TrainJob" and any(.status.conditions[]?; (.type == "Complete" or .type == "Failed") and .status == "True"))}]' \
            >"$1"
}

# sw_compare BEFORE AFTER - one line per difference the switch must not make (none: empty).
sw_compare() {
    jq -n -r --slurpfile b "$1" --slurpfile a "$2" --arg held "${SW_HELD[*]}" '
        ($b[0] | map({key: "\(.kind)/\(.name)", value: .}) | from_entries) as $B |
        ($a[0] | map({key: "\(.kind)/\(.name)", value: .}) | from_entries) as $A |
        ([$b[0][] | select(.finished) | .tj]) as $fin |
        ($B | to_entries[] | .key as $k | .value as $o |
            if $A[$k] == null then "gone \($k) (uid \($o.uid))"
            elif $A[$k].uid != $o.uid then "re-created \($k): uid \($o.uid) -> \($A[$k].uid)"
            elif $o.conds != null and $o.finished and $A[$k].conds != $o.conds then
                "conditions of finished \($k) changed: \($o.conds | tojson) -> \($A[$k].conds | tojson)"
            else empty end),
        ($a[0][] | select(.restarts > 0) | "restarted \(.kind)/\(.name): restartCount \(.restarts)"),
        ($a[0][] | select($B["\(.kind)/\(.name)"] == null) |
            if (.tj | IN($fin[])) then "new \(.kind)/\(.name) for finished TrainJob \(.tj)"
            elif .kind == "Pod" and (.tj | test("-(" + ($held | gsub(" "; "|")) + ")$")) and
                (.tj | endswith("-init") | not) then "new Pod/\(.name) for held TrainJob \(.tj)"
            elif .kind == "Pod" and (.tj | endswith("-init")) and .rjob != "node" then
                "new initializer Pod/\(.name) of \(.tj)"
            else empty end)'
}

# sw_new_of BEFORE AFTER TJ - objects of TJ in AFTER that BEFORE lacks (the control of "new").
sw_new_of() {
    jq -n --slurpfile b "$1" --slurpfile a "$2" --arg tj "$3" \
        '[$b[0][] | "\(.kind)/\(.name)"] as $old | [$a[0][] | select(.tj == $tj and ("\(.kind)/\(.name)" | IN($old[]) | not))] | length'
}

# sw_release P - the held pods of P end (KWOK re-times a pod when it changes). The MPI node
# pod ends before its launcher: a JobSet that completes deletes its still-active Jobs (JobSet's
# own behaviour, whichever controller runs), which would remove objects the comparison expects.
sw_release() {
    local j sel
    for j in "${SW_HELD[@]}"; do
        sel="jobset.sigs.k8s.io/jobset-name=$1-$j"
        if [ "$j" = mpi ]; then
            kc annotate pods -n $SW_NS -l "$sel,jobset.sigs.k8s.io/replicatedjob-name=node" --overwrite \
                kt.kubeflow.org/sim-run=1s >/dev/null &&
                kt_poll -m "$1-mpi node Job Complete" "$WAIT" kq 'any(.status.conditions[]?; .type == "Complete" and .status == "True")' \
                    job "$1-mpi-node-0" -n $SW_NS || return 1
        fi
        kc annotate pods -n $SW_NS -l "$sel" --overwrite kt.kubeflow.org/sim-run=1s >/dev/null || return 1
    done
}

# sw_link N FROM TO - one switch with its checks (names switch-N-FROM-TO-*).
sw_link() {
    local p="s$1" l="switch-$1-$2-$3" out t j n=""
    if out=$(sw_make "$p" 2>&1 && sw_states "$p"); then
        ok "$l-states-made-under-$2 ($p-: run mpi gang held Running/Suspended, done Complete, fail Failed, init mid-initializer)"
    else
        bad "$l-states-made-under-$2" "$out"
        return 1
    fi
    sw_snap "$T/sw-$p-before.json"
    sw_switch "$l" "$2" "$3" || return 1
    kc patch trainjob "$p-held" -n $SW_NS --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
    sw_release "$p" || bad "$l-release" "kubectl annotate failed or the MPI node Job did not complete"
    for j in run mpi gang held init; do
        if out=$(tj_wait $SW_NS "$p-$j" Complete); then n="$n $j"; else bad "$l-$3-finishes-$j" "$out"; fi
    done
    [ -n "$n" ] && ok "$l-$3-finishes-what-$2-started (Complete:$n)"
    sw_snap "$T/sw-$p-after.json"
    out=$(sw_compare "$T/sw-$p-before.json" "$T/sw-$p-after.json")
    [ -z "$out" ] &&
        ok "$l-uids-conditions-kept ($(jq length "$T/sw-$p-before.json") objects of $(jq '[.[] | select(.kind == "TrainJob")] | length' "$T/sw-$p-before.json") TrainJobs, $(jq '[.[] | select(.finished)] | length' "$T/sw-$p-before.json") finished: same uids, no restart, conditions unchanged, nothing new for them)" ||
        bad "$l-uids-conditions-kept" "$(head -c 1500 <<<"$out")"
    # the control of "nothing new": the mid-initializer TrainJob got its trainer Job and pods
    # from TO after the switch, and the comparison saw them
    n=$(sw_new_of "$T/sw-$p-before.json" "$T/sw-$p-after.json" "$p-init")
    [ "$n" -ge 2 ] && ok "$l-control-init-trainer-made-by-$3 ($n new objects)" ||
        bad "$l-control-init-trainer-made-by-$3" "$n new objects for $p-init"
}

# sw_control - the comparison fails on planted differences: a ConfigMap of a finished MPI
# TrainJob deleted and re-created (new uid) and a new Secret named after a finished TrainJob (on
# the cluster), and the Complete condition's message of a finished TrainJob changed (in the
# snapshot only: the controller owns the status of the live TrainJob).
sw_control() {
    local out f
    sw_snap "$T/sw-ctl-before.json"
    kc get configmap s1-mpi-mpi-hostfile -n $SW_NS -o json |
        jq 'del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.ownerReferences)' >"$T/sw-cm.json"
    kc delete configmap s1-mpi-mpi-hostfile -n $SW_NS >/dev/null &&
        kc create -f "$T/sw-cm.json" >/dev/null &&
        kc create secret generic s1-done-planted -n $SW_NS --from-literal=x=y >/dev/null
    sw_snap "$T/sw-ctl-after.json"
    jq 'map(if .kind == "TrainJob" and .name == "s1-run" then .conds |= map(if .type == "Complete" then .message = "planted" else . end) else . end)' \
        "$T/sw-ctl-after.json" >"$T/sw-ctl-after2.json" && mv "$T/sw-ctl-after2.json" "$T/sw-ctl-after.json"
    out=$(sw_compare "$T/sw-ctl-before.json" "$T/sw-ctl-after.json")
    f=$(grep -c -e '^re-created ConfigMap/s1-mpi-mpi-hostfile' -e '^new Secret/s1-done-planted for finished' \
        -e '^conditions of finished TrainJob/s1-run changed' <<<"$out")
    [ "$f" = 3 ] && ok "switch-control-comparison-catches-planted (re-created hostfile, new Secret, changed condition)" ||
        bad switch-control-comparison-catches-planted "got: $out"
}

case_switch() {
    local chain i out t
    read -ra chain <<<"${SW_CHAIN:-up kt up prev kt}"
    . "$ROOT/tests/parity/upstream_lib.sh"
    up_build 2>>"$T/sw-up.log" || {
        bad switch-upstream-build "$(tail -3 "$T/sw-up.log")"
        return
    }
    # A clone without history (git clone --depth 1) has no earlier kt to build: said in one
    # line, and the chain goes on without the upgrade link (KT_E2E_PREV=REV still works when
    # REV was fetched).
    if [[ " ${chain[*]} " == *" prev "* ]] && [ -z "${KT_E2E_PREV:-}" ] &&
        [ "$(git -C "$ROOT" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
        echo "e2e: switch: the upgrade link (previous kt -> this kt) needs the git history; this clone is shallow"
        chain=(up kt up kt)
    fi
    if [[ " ${chain[*]} " == *" prev "* ]]; then
        if SW_PREV=$(sw_prev_bins 2>"$T/sw-prev.log"); then
            ok "switch-prev-built ($(basename "$SW_PREV" | cut -c1-12): $(git -C "$ROOT" log -1 --format=%s "$(basename "$SW_PREV")" | cut -c1-60))"
        else
            bad switch-prev-built "$(tail -5 "$T/sw-prev.log")"
            chain=(up kt up kt)
        fi
    fi
    kt_ns --name $SW_NS >/dev/null
    sw_runtimes
    # the case starts under the first controller (this kt runs now)
    if [ "${chain[0]}" != kt ]; then
        sw_switch switch-0 kt "${chain[0]}" || {
            sw_restore "${chain[0]}"
            return
        }
    fi
    for ((i = 0; i + 1 < ${#chain[@]}; i++)); do
        sw_link $((i + 1)) "${chain[i]}" "${chain[i + 1]}" || break
    done
    # a new TrainJob completes under the last controller
    if [ $((i + 1)) = ${#chain[@]} ]; then
        e2e_trainjob $SW_NS last-new torch-distributed
        if out=$(tj_wait $SW_NS last-new Complete); then ok "switch-new-trainjob-completes-under-${chain[i]}"; else
            bad "switch-new-trainjob-completes-under-${chain[i]}" "$out"; fi
        sw_control
    fi
    # later cases expect this kt with its webhook
    if [ "${chain[i]}" != kt ] || [ $((i + 1)) != ${#chain[@]} ]; then
        sw_restore "${chain[i]}"
    fi
}

# sw_restore CTRL - after a broken chain: stop CTRL (and any kt), start this kt again.
sw_restore() {
    local h
    h=$(ktd_lease_holder)
    sw_stop "$1"
    sw_stop kt
    sw_launch kt && kt_poll -m "kt takes the Lease" "$WAIT" sw_new_holder "$h" && sw_register kt ||
        bad switch-restore-kt "kt did not start again"
}
