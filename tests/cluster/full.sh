# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/cluster/full.sh - the rest of the chain for `up.sh --full` (sourced by up.sh after the
# API server is ready and the CRDs are Established): kube-controller-manager, kube-scheduler,
# scheduler-plugins' scheduler (Coscheduling, as a second scheduler), the JobSet controller with
# its webhooks registered by url, and KWOK playing the kubelets of fake nodes.
#
# Knobs (environment, read when up.sh --full starts):
#   KT_NODES (4), KT_NODE_CPU (16), KT_NODE_MEMORY (64Gi), KT_NODE_GPU (8 nvidia.com/gpu)
#   KT_POD_STEP_MS (100)  delay of each simulated step before Running (create, init, ready)
#   KT_POD_RUN_MS (3000)  how long a Job's pod stays Running before it completes
#   KT_SIM_SHARDS (1)     up.sh --sim: KWOK processes sharing the JobSets (kt_full_sim)
#   KT_SIM_ENGINE (kwok)  up.sh --sim: kwok (the Stages of kwok/jobset-stages.yaml) or jobsim
#                         (jobset_sim.py: the same steps, for many thousand JobSets)
#   KT_CHAIN_QPS (unset)  client QPS of kube-controller-manager and both schedulers (burst
#                         twice that); unset keeps their defaults (kcm 20/30, scheduler 50/100).
#                         `make scale` lifts them as kwokctl's --disable-qps-limits does.
# Pod markers (see docs/development.md "The full chain"): a container env var KT_SIM_EXIT_CODE=N (N != 0) makes
# the pod fail with exit code N instead of succeeding; the annotation kt.kubeflow.org/sim-run or
# a container env var KT_SIM_RUN (a Go duration: "90s", "10m") overrides KT_POD_RUN_MS for one pod.

# kwok-1..kwok-15: the further KWOK shards of the simulated chain (KT_SIM_SHARDS)
KT_FULL_COMPONENTS="jobsim kwok $(printf 'kwok-%s ' $(seq 15))jobset schedplugins scheduler kcm"

# kt_full_spawn NAME CMD... - start CMD in the background (log DIR/NAME.log), record its pid.
kt_full_spawn() {
    local name=$1 pid
    shift
    "$@" </dev/null >>"$D/$name.log" 2>&1 9>&- &
    pid=$!
    disown "$pid" 2>/dev/null || true
    kt_env_set "$D" "KT_$(echo "$name" | tr a-z- A-Z_)_PID" "$pid"
    echo "$pid"
}

# Component flags shared by the Kubernetes binaries: admin credentials (these are the cluster,
# not the product under test), no leader election, health on a loopback port.
kt_full_kube_flags() { # PORT
    echo --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 \
        --secure-port="$1" --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics
}

# kt_full_qps_flags - --kube-api-qps/--kube-api-burst from KT_CHAIN_QPS (nothing when unset).
kt_full_qps_flags() {
    [ -z "${KT_CHAIN_QPS:-}" ] || echo --kube-api-qps="$KT_CHAIN_QPS" --kube-api-burst="$((KT_CHAIN_QPS * 2))"
}

kt_full_kcm() {
    local port pid
    kt_pick_port port
    # shellcheck disable=SC2046
    pid=$(kt_full_spawn kcm "$KT_BIN/kube-controller-manager" $(kt_full_kube_flags "$port") $(kt_full_qps_flags) \
        --root-ca-file="$D/ca.crt" --service-account-private-key-file="$D/sa.key" \
        --controllers='*' --use-service-account-credentials=false \
        --concurrent-job-syncs=10 --concurrent-gc-syncs=20)
    kt_env_set "$D" KT_KCM_PORT "$port"
    kt_wait_http "$pid" "https://127.0.0.1:$port/healthz" kcm -k
}

kt_full_scheduler() {
    local port pid
    kt_pick_port port
    # shellcheck disable=SC2046
    pid=$(kt_full_spawn scheduler "$KT_BIN/kube-scheduler" $(kt_full_kube_flags "$port") $(kt_full_qps_flags))
    kt_env_set "$D" KT_SCHEDULER_PORT "$port"
    kt_wait_http "$pid" "https://127.0.0.1:$port/healthz" scheduler -k
}

# scheduler-plugins' scheduler as a second scheduler named scheduler-plugins-scheduler with the
# Coscheduling plugin (runtimes select it with schedulerName, docs/internals/upstream.md#coscheduling-and-volcano).
kt_full_schedplugins() {
    local port pid
    kt_pick_port port
    cat >"$D/schedplugins.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: $D/admin.kubeconfig
$([ -z "${KT_CHAIN_QPS:-}" ] || printf '  qps: %s\n  burst: %s' "$KT_CHAIN_QPS" "$((KT_CHAIN_QPS * 2))")
profiles:
- schedulerName: scheduler-plugins-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
EOF
    pid=$(kt_full_spawn schedplugins "$KT_BIN/kube-scheduler-plugins-$SCHEDPLUGINS_VERSION" \
        --config="$D/schedplugins.yaml" --bind-address=127.0.0.1 --secure-port="$port" \
        --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics)
    kt_env_set "$D" KT_SCHEDPLUGINS_PORT "$port"
    kt_env_set "$D" KT_SCHEDPLUGINS_NAME scheduler-plugins-scheduler
    kt_wait_http "$pid" "https://127.0.0.1:$port/healthz" schedplugins -k
}

# The JobSet controller: its internal certificate management off, serving its webhooks on
# loopback with the API server's serving certificate (issued by the cluster CA for 127.0.0.1);
# the webhook configurations name it by url, with the same paths and rules as JobSet's own.
kt_full_jobset() {
    local wport hport pid
    kt_pick_port wport
    kt_pick_port hport
    mkdir -p "$D/jobset-certs"
    cp "$D/apiserver.crt" "$D/jobset-certs/tls.crt"
    cp "$D/apiserver.key" "$D/jobset-certs/tls.key"
    cat >"$D/jobset.yaml" <<EOF
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $wport
  certDir: $D/jobset-certs
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: 127.0.0.1:$hport
clientConnection:
  qps: 500
  burst: 500
EOF
    pid=$(kt_full_spawn jobset env KUBECONFIG="$D/admin.kubeconfig" \
        "$KT_BIN/jobset-$JOBSET_VERSION" --config="$D/jobset.yaml" --zap-log-level=info)
    kt_env_set "$D" KT_JOBSET_WEBHOOK_PORT "$wport"
    kt_wait_http "$pid" "http://127.0.0.1:$hport/readyz" jobset
    kt_full_jobset_webhooks "https://127.0.0.1:$wport" "$(base64 -w0 <"$D/ca.crt")"
}

# kt_full_jobset_webhooks BASEURL CABUNDLE - register JobSet's four webhooks; wait until the
# API server calls them.
kt_full_jobset_webhooks() {
    hook() { # NAME PATH GROUP RESOURCE OPS [SELECTOR]
        printf -- '- name: %s\n  admissionReviewVersions: [v1]\n  sideEffects: None\n' "$1"
        printf '  failurePolicy: Fail\n  clientConfig: {url: "%s%s", caBundle: "%s"}\n' "$base" "$2" "$ca"
        printf '  rules: [{apiGroups: ["%s"], apiVersions: ["%s"], operations: [%s], resources: ["%s"]}]\n' \
            "$3" "$([ "$3" = "" ] && echo v1 || echo v1alpha2)" "$5" "$4"
        [ -z "${6:-}" ] || printf '  objectSelector: {matchExpressions: [{key: %s, operator: Exists}]}\n' "$6"
    }
    local base=$1 ca=$2
    {
        echo "apiVersion: admissionregistration.k8s.io/v1"
        echo "kind: MutatingWebhookConfiguration"
        echo "metadata: {name: jobset-mutating-webhook-configuration}"
        echo "webhooks:"
        hook mjobset.kb.io /mutate-jobset-x-k8s-io-v1alpha2-jobset jobset.x-k8s.io jobsets CREATE
        hook mpod.kb.io /mutate--v1-pod "" pods CREATE jobset.sigs.k8s.io/jobset-name
        echo "---"
        echo "apiVersion: admissionregistration.k8s.io/v1"
        echo "kind: ValidatingWebhookConfiguration"
        echo "metadata: {name: jobset-validating-webhook-configuration}"
        echo "webhooks:"
        hook vjobset.kb.io /validate-jobset-x-k8s-io-v1alpha2-jobset jobset.x-k8s.io jobsets "CREATE, UPDATE"
        hook vpod.kb.io /validate--v1-pod "" pods CREATE jobset.sigs.k8s.io/jobset-name
    } >"$D/jobset-webhooks.yaml"
    kt_full_k apply --server-side -f "$D/jobset-webhooks.yaml" >>"$D/jobset.log" 2>&1 || {
        kt_log "registering JobSet's webhooks failed (log: $D/jobset.log)"
        return 1
    }
    # Both must answer: the defaulter sets restartPolicy OnFailure on a valid JobSet, and the
    # validator refuses a first replicatedJob with dependsOn.
    local js='{"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"kt-probe","namespace":"default"},"spec":{"replicatedJobs":[{"name":"a","replicas":1,DEP"template":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}}]}}'
    local dep='"dependsOn":[{"name":"b","status":"Complete"}],'
    local deadline=$((SECONDS + KT_READY_TIMEOUT)) out="" mut=""
    until [ "$mut" = OnFailure ] && [[ "$out" == *"DependsOn can't be set for the first ReplicatedJob"* ]]; do
        [ "$SECONDS" -lt "$deadline" ] || {
            kt_log "JobSet's webhooks not answering after ${KT_READY_TIMEOUT}s: defaulted restartPolicy '$mut'; $out"
            return 1
        }
        sleep 0.1
        mut=$(echo "${js/DEP/}" | kt_full_k create --dry-run=server -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.spec.restartPolicy}' -f - 2>&1 || true)
        out=$(echo "${js/DEP/$dep}" | kt_full_k create --dry-run=server -f - 2>&1 || true)
    done
}

# KWOK: pod and node stages. Node stages and the pod steps up to Running are KWOK's own (read
# from its module, the delays rewritten to KT_POD_STEP_MS); completion and failure are ours.
kt_full_kwok_stages() {
    local m f step=${KT_POD_STEP_MS:-100} run=${KT_POD_RUN_MS:-3000}
    # The module cache first: Go extracts a module into a temporary folder and renames it, so its
    # folder exists only complete. `go mod download` (which asks the module proxy) only without it.
    m="$(go env GOMODCACHE 2>/dev/null)/sigs.k8s.io/kwok@$KWOK_VERSION"
    if [ ! -d "$m/kustomize/stage" ]; then
        # shellcheck disable=SC2154 # kt_here: set by tests/cluster/lib.sh, sourced first
        m=$(cd "$kt_here/../../scripts/cluster/modules/kwok" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" |
            sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    fi
    [ -d "$m/kustomize/stage" ] || { kt_log "KWOK module $KWOK_VERSION not in the module cache"; return 1; }
    : >"$D/kwok-stages.yaml"
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        pod/general/pod-create.yaml pod/general/pod-init-container-running.yaml \
        pod/general/pod-init-container-completed.yaml pod/general/pod-ready.yaml \
        pod/general/pod-delete.yaml; do
        echo "---" >>"$D/kwok-stages.yaml"
        sed -e "s/durationMilliseconds: [0-9]*/durationMilliseconds: $step/" \
            -e "s/jitterDurationMilliseconds: [0-9]*/jitterDurationMilliseconds: $step/" \
            "$m/kustomize/stage/$f" >>"$D/kwok-stages.yaml"
    done
    echo "---" >>"$D/kwok-stages.yaml"
    sed -e "s/@RUN_MS@/$run/g" -e "s/@JITTER_MS@/$((run + run / 10 + 1))/g" "$kt_here/kwok/stages.yaml" \
        >>"$D/kwok-stages.yaml"
}

# kt_full_nodes - create KT_NODES fake nodes managed by KWOK; wait until each is Ready and
# untainted (the node-lifecycle controller removes node.kubernetes.io/not-ready).
kt_full_nodes() {
    local i n=${KT_NODES:-4}
    for i in $(seq 0 $((n - 1))); do
        cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    type: kwok
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
status:
  capacity: &cap
    cpu: "${KT_NODE_CPU:-16}"
    memory: ${KT_NODE_MEMORY:-64Gi}
    pods: "110"
    nvidia.com/gpu: "${KT_NODE_GPU:-8}"
  allocatable: *cap
EOF
    done >"$D/nodes.yaml"
    kt_full_k create -f "$D/nodes.yaml" >>"$D/kwok.log" 2>&1 || { kt_log "creating nodes failed"; return 1; }
    local deadline=$((SECONDS + KT_READY_TIMEOUT))
    until [ "$(kt_full_k get nodes -l type=kwok -o json 2>/dev/null | jq '[.items[] |
            select((.spec.taints // []) == [] and ([.status.conditions[]? |
            select(.type == "Ready" and .status == "True")] | length) == 1)] | length')" = "$n" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "fake nodes not Ready and untainted after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.2
    done
    kt_env_set "$D" KT_NODES "$n"
}

kt_full_kwok() {
    local port pid
    kt_full_kwok_stages || return 1
    kt_pick_port port
    pid=$(kt_full_spawn kwok "$KT_BIN/kwok-$KWOK_VERSION" --kubeconfig="$D/admin.kubeconfig" \
        --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
        --node-lease-duration-seconds=40 --server-address="127.0.0.1:$port" \
        --config="$D/kwok-stages.yaml")
    kt_env_set "$D" KT_KWOK_PORT "$port"
    kt_wait_http "$pid" "http://127.0.0.1:$port/healthz" kwok
    kt_full_nodes
}

# kt_full_sim - the simulated chain (up.sh --sim): KWOK alone (no node carries its annotation; it
# has no node or pod Stages), with the Stages of kwok/jobset-stages.yaml that write each JobSet's
# status as the JobSet controller does: created, active, ready (KT_POD_STEP_MS, 100, apart), then
# Completed (Failed with KT_SIM_EXIT_CODE) KT_POD_RUN_MS (3000) later; no JobSet controller,
# Jobs, pods, schedulers or controller-manager. KWOK plays a custom resource's Stages with one
# worker (one PATCH at a time), so KT_SIM_SHARDS (1; at most 16) KWOK processes share the JobSets
# by the first hex digit of their uid (each watches them all: one more JobSet watcher per shard).
kt_full_sim() {
    local port pid step=${KT_POD_STEP_MS:-100} run=${KT_POD_RUN_MS:-3000} k=${KT_SIM_SHARDS:-1} i digits
    local jitter=$((run + run / 10 + 1)) # a run lasts between run and jitter ms (KWOK's jitter)
    case ${KT_SIM_ENGINE:-kwok} in
    kwok) ;;
    jobsim) kt_full_jobsim "$step" "$run" "$jitter"; return ;;
    *) kt_log "KT_SIM_ENGINE: kwok or jobsim"; return 1 ;;
    esac
    [[ "$k" =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le 16 ] || { kt_log "KT_SIM_SHARDS: 1 to 16"; return 1; }
    # KWOK reads the kind's schema from /openapi/v3 once, at start: wait until the API server
    # publishes JobSet's there (it follows the CRD's Established condition by a moment).
    local deadline=$((SECONDS + KT_READY_TIMEOUT))
    until kt_full_k get --raw /openapi/v3 2>/dev/null | jq -e '.paths["apis/jobset.x-k8s.io/v1alpha2"]' >/dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || { kt_log "JobSet not in /openapi/v3 after ${KT_READY_TIMEOUT}s"; return 1; }
        sleep 0.1
    done
    for i in $(seq 0 $((k - 1))); do
        # shard i: the uids whose first hex digit's index is i modulo k
        digits=$(for d in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do echo "$d"; done | awk -v k="$k" -v i="$i" 'NR % k == (i + 1) % k' |
            sed "s/.*/'&'/" | paste -sd, -)
        sed -e "s/[0-9]* # @STEP_MS@$/$step/" -e "s/[0-9]* # @RUN_MS@$/$run/" -e "s/[0-9]* # @JITTER_MS@$/$jitter/" \
            "$kt_here/kwok/jobset-stages.yaml" |
            if [ "$k" = 1 ]; then cat; else
                sed "s/^    matchExpressions:\$/&\n    - key: '.metadata.uid | .[0:1]'\n      operator: 'In'\n      values: [$digits]/"
            fi >"$D/kwok-stages-$i.yaml"
        kt_pick_port port
        pid=$(kt_full_spawn "kwok$([ "$i" = 0 ] || echo "-$i")" "$KT_BIN/kwok-$KWOK_VERSION" \
            --kubeconfig="$D/admin.kubeconfig" --manage-all-nodes=false \
            --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
            --server-address="127.0.0.1:$port" --config="$D/kwok-stages-$i.yaml")
        [ "$i" != 0 ] || kt_env_set "$D" KT_KWOK_PORT "$port"
        kt_wait_http "$pid" "http://127.0.0.1:$port/healthz" kwok
    done
    kt_env_set "$D" KT_SIM 1
}

# kt_full_jobsim STEP_MS RUN_MS JITTER_MS - the simulated chain's JobSet steps from jobset_sim.py instead of
# KWOK (KT_SIM_ENGINE=jobsim; why: the script's header and docs/benchmarks.md "Simulated chain"):
# one JobSet watch resumed from its last resourceVersion, KT_SIM_SHARDS keep-alive connections
# for the status PATCHes, the same markers and run-time jitter as the Stages.
kt_full_jobsim() {
    local port pid
    kt_pick_port port
    pid=$(kt_full_spawn jobsim python3 "$kt_here/jobset_sim.py" --server "$(kt_env_get "$D" KT_APISERVER)" \
        --ca "$D/ca.crt" --cert "$D/admin.crt" --key "$D/admin.key" --port "$port" \
        --step-ms "$1" --run-ms "$2" --jitter-ms "$3" --conns "${KT_SIM_SHARDS:-1}")
    kt_wait_http "$pid" "http://127.0.0.1:$port/healthz" jobsim || return 1
    kt_env_set "$D" KT_SIM 1
}

kt_full_k() { "$KT_BIN/kubectl" --kubeconfig "$D/admin.kubeconfig" --cache-dir "$D/kubectl-cache" "$@"; }

# kt_full_start - start every component in order (controllers before the nodes they tend).
kt_full_start() {
    local t
    for t in kcm scheduler schedplugins jobset kwok; do
        local t0=$SECONDS
        kt_port_lock
        "kt_full_$t" || { kt_port_unlock; return 1; }
        kt_port_unlock
        kt_log "$t ready ($((SECONDS - t0))s)"
    done
    kt_env_set "$D" KT_FULL 1
}

# kt_full_stop DIR - stop the chain's components (before the API server).
kt_full_stop() {
    local c rc=0
    for c in $KT_FULL_COMPONENTS; do
        kt_stop "$(kt_env_get "$1" "KT_$(echo "$c" | tr a-z- A-Z_)_PID")" "$c" || rc=1
    done
    return "$rc"
}
