#!/usr/bin/env bash
# tests/integration/reconciler_test.sh ENV_FILE - kt-reconciler on the real API server
# (SPEC §5.1-5.5), running as its non-admin identity with exactly deploy/rbac/reconciler
# applied by the admin. JobSet status is written with kubectl as upstream's integration tests
# do. Every wait is `kubectl wait` (60 s) or a bounded poll on a condition; nothing sleeps for
# readiness and nothing asserts on time.
. "$(dirname "$0")/lib.sh"
REC="$it_root/build/plain/bin/kt-reconciler"
KTCTL="$it_root/build/plain/bin/ktctl"
T=60s
PIDS=()

cleanup_recs() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
}
trap 'cleanup_recs; rm -rf "$IT_TMP"' EXIT

check() { # check NAME CMD... - ok when CMD succeeds
    local name=$1
    shift
    if "$@" >"$IT_TMP/check.out" 2>&1; then it_ok "$name"; else it_fail "$name" "$(head -c 600 "$IT_TMP/check.out")"; fi
}
kw() { kc wait --timeout=$T "$@"; }
jp() { kc get "$@"; }

# start_rec NAME [FLAGS...] - start a reconciler as the controller-manager identity and wait
# (bounded poll) until its /readyz answers 200.
start_rec() {
    local name=$1 port i
    shift
    rm -f "$IT_TMP/$name.ports"
    "$REC" --kubeconfig "$KT_RECONCILER_KUBECONFIG" --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --portfile "$IT_TMP/$name.ports" "$@" \
        >>"$IT_TMP/$name.log" 2>&1 &
    eval "PID_$name=$!"
    PIDS+=($!)
    for i in $(seq 600); do
        if [ -s "$IT_TMP/$name.ports" ]; then
            port=$(jq -r .health "$IT_TMP/$name.ports")
            if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; then
                return 0
            fi
        fi
        kill -0 "$(eval echo "\$PID_$name")" 2>/dev/null || break
        sleep 0.1
    done
    echo "reconciler $name did not become ready" >&2
    cat "$IT_TMP/$name.log" >&2
    return 1
}
stop_rec() { # stop_rec NAME [SIGNAL]
    local pid
    pid=$(eval echo "\$PID_$1")
    kill "-${2:-TERM}" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

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
    "$KTCTL" render --uid "$uid" "${args[@]}" -o json "$file" >"$IT_TMP/render.json" || return 1
    n=$(jq '.items | length' "$IT_TMP/render.json")
    [ "$n" -gt 0 ] || return 1
    for i in $(seq 0 $((n - 1))); do
        jq ".items[$i] | if .kind == \"Secret\" then del(.data) else . end |
            if .kind == \"ConfigMap\" and (.metadata.name | endswith(\"-runtime-snapshot\"))
            then del(.data.runtime) else . end" "$IT_TMP/render.json" >"$IT_TMP/want.json"
        kind=$(jq -r .kind "$IT_TMP/want.json")
        oname=$(jq -r .metadata.name "$IT_TMP/want.json")
        case "$(jq -r .apiVersion "$IT_TMP/want.json")" in
        scheduling.volcano.sh/*) kind=podgroups.scheduling.volcano.sh ;;
        scheduling.x-k8s.io/*) kind=podgroups.scheduling.x-k8s.io ;;
        esac
        kw --for=create "$kind/$oname" -n "$ns" >/dev/null || return 1
        jp "$kind" "$oname" -n "$ns" -o json >"$IT_TMP/have.json" || return 1
        if ! subset "$IT_TMP/want.json" "$IT_TMP/have.json"; then
            echo "$kind/$oname differs:"
            diff <(jq -S . "$IT_TMP/want.json") <(jq -S . "$IT_TMP/have.json") | head -40
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
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: busybox
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

js_status() { # js_status NS NAME JSON - write the JobSet status as the JobSet controller would
    kc patch jobset "$2" -n "$1" --subresource=status --type=merge -p "$3" >/dev/null
}
cond_json() { # cond_json TYPE REASON MESSAGE
    printf '{"type":"%s","status":"True","reason":"%s","message":"%s","lastTransitionTime":"2026-01-01T00:00:00Z"}' "$1" "$2" "$3"
}

# ---- setup -------------------------------------------------------------------------------
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || { it_fail rbac "apply failed"; it_finish; }
kc apply -k "$it_root/deploy/runtimes" >/dev/null || { it_fail runtimes "apply failed"; it_finish; }
# The identity really is not admin: it must not be able to read pods or write trainjobs.
check rbac-not-admin bash -c "! '$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i create trainjobs.trainer.kubeflow.org -A | grep -q yes"
check rbac-can-patch-status bash -c "'$KT_KUBECTL' --kubeconfig '$KT_RECONCILER_KUBECONFIG' auth can-i patch trainjobs.trainer.kubeflow.org --subresource=status -A | grep -q yes"
# One worker: keys are handled in arrival order, which the managedBy test relies on.
start_rec main --workers 1 || { it_fail start "reconciler not ready"; it_finish; }
it_ok start

NS=$(it_ns rec)

# ---- every policy: ktctl render --uid <live uid> is a subset of the cluster --------------
policy_case() { # policy_case NAME RUNTIME_KIND RUNTIME [RUNTIME_FILE]
    local name=$1 f="$IT_TMP/$1.yaml"
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
check owned-objects-mpi test "$(owned_names "$NS" mpi)" = "configmap/mpi-mpi-hostfile configmap/mpi-runtime-snapshot secret/mpi-mpi-ssh-auth jobset.jobset.x-k8s.io/mpi "
it_finish
