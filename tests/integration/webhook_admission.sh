#!/usr/bin/env bash
# tests/integration/webhook_admission.sh ENV_FILE - kt-webhook behind the REAL API server.
#
# deploy/rbac/webhook is applied (and nothing else for the webhook's identity), kt-webhook runs
# with KT_WEBHOOK_KUBECONFIG (system:serviceaccount:kubeflow-system:kubeflow-trainer-webhook)
# and throwaway certificates, and deploy/webhook/manifests.yaml is registered with its service
# clientConfig rewritten to url https://127.0.0.1:PORT/PATH + caBundle (the API server has no
# Service network). Then kubectl, as a user: invalid objects are refused with upstream's
# `admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: ...`,
# valid ones pass, runtimePatches get their time, a runtime created right before its TrainJob
# is found, warnings reach the client. The configurations are removed again at the end.
. "$(dirname "$0")/lib.sh"

bin="${KT_WEBHOOK_BIN:-$it_root/build/plain/bin/kt-webhook}" # KT_WEBHOOK_BIN: e.g. a TSan build
W="$IT_TMP/wh"
mkdir -p "$W"
WPID=""
stop_webhook() {
    kc delete validatingwebhookconfiguration validator.trainer.kubeflow.org --ignore-not-found >/dev/null 2>&1
    kc delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org --ignore-not-found >/dev/null 2>&1
    if [ -n "$WPID" ]; then
        kill -TERM "$WPID" 2>/dev/null
        wait "$WPID" 2>/dev/null
        WPID=""
    fi
    rm -rf "$IT_TMP"
}
trap stop_webhook EXIT

[ -x "$bin" ] || {
    it_fail webhook-binary "$bin missing (make)"
    it_finish
}

# ---- certificates, RBAC, daemon ----------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/ca.key" -out "$W/ca.crt" -days 2 \
    -subj /CN=kt-webhook-itest-ca 2>/dev/null &&
    openssl req -newkey rsa:2048 -nodes -keyout "$W/tls.key" -out "$W/tls.csr" \
        -subj /CN=127.0.0.1 2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$W/ext" &&
    openssl x509 -req -in "$W/tls.csr" -CA "$W/ca.crt" -CAkey "$W/ca.key" -CAcreateserial \
        -out "$W/tls.crt" -days 2 -extfile "$W/ext" 2>/dev/null || {
    it_fail webhook-certs "openssl failed"
    it_finish
}

if kc apply -k "$it_root/deploy/rbac/webhook" >"$W/rbac.log" 2>&1; then
    it_ok webhook-rbac-applied
else
    it_fail webhook-rbac-applied "$(cat "$W/rbac.log")"
fi

"$bin" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" --tls-cert-file "$W/tls.crt" \
    --tls-key-file "$W/tls.key" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 \
    --metrics-listen 127.0.0.1:0 --portfile "$W/ports" --log-level info 2>"$W/stderr" &
WPID=$!
deadline=$((SECONDS + 30))
until [ -s "$W/ports" ] || [ $SECONDS -ge $deadline ] || it_dead "$WPID"; do sleep 0.02; done
if [ ! -s "$W/ports" ]; then
    it_fail webhook-start "no portfile: $(cat "$W/stderr")"
    it_finish
fi
PORT=$(jq .webhook "$W/ports")
HPORT=$(jq .health "$W/ports")
until [ "$(curl -s --max-time 2 "http://127.0.0.1:$HPORT/readyz")" = ok ] ||
    [ $SECONDS -ge $deadline ] || it_dead "$WPID"; do sleep 0.02; done
if [ "$(curl -s --max-time 2 "http://127.0.0.1:$HPORT/readyz")" = ok ]; then
    it_ok webhook-ready-after-cache-sync
else
    it_fail webhook-ready-after-cache-sync "readyz: $(curl -s "http://127.0.0.1:$HPORT/readyz")"
    cat "$W/stderr"
    it_finish
fi

# ---- register the configurations: service -> url + caBundle --------------------------------
ca_b64=$(base64 -w0 <"$W/ca.crt")
python3 - "$it_root/deploy/webhook/manifests.yaml" "$PORT" "$ca_b64" >"$W/hooks.yaml" <<'EOF'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
for d in docs:
    for h in d["webhooks"]:
        path = h["clientConfig"]["service"]["path"]
        h["clientConfig"] = {"url": "https://127.0.0.1:%s%s" % (sys.argv[2], path),
                             "caBundle": sys.argv[3]}
print(yaml.safe_dump_all(docs, sort_keys=False))
EOF
if kc apply -f "$W/hooks.yaml" >"$W/hooks.log" 2>&1; then
    it_ok webhook-configurations-registered
else
    it_fail webhook-configurations-registered "$(cat "$W/hooks.log")"
    it_finish
fi

ns=$(it_ns webhook) || {
    it_fail webhook-namespace "cannot create a namespace"
    it_finish
}
kc apply -f "$it_root/deploy/runtimes/torch-distributed.yaml" >/dev/null 2>&1

# tj NAME [SPEC_EXTRA_YAML] - a TrainJob on torch-distributed in $ns.
tj() {
    cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: $ns
spec:
  runtimeRef:
    name: ${3:-torch-distributed}
${4:+    kind: $4}
$2
EOF
}

reserved=$(tj bad-env '  trainer:
    env:
      - name: PET_NNODES
        value: "3"')
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"3"}]: must not have reserved envs, invalid envs configured: [PET_NNODES]'

# The API server picks up new webhook configurations asynchronously: poll (bounded) with a
# server-side dry run until our validator answers.
deadline=$((SECONDS + 30))
until echo "$reserved" | kc apply --dry-run=server -f - 2>&1 | grep -qF "$want" ||
    [ $SECONDS -ge $deadline ]; do sleep 0.1; done

# ---- denials, exactly as upstream's client output ------------------------------------------
echo "$reserved" >"$W/bad-env.yaml"
out=$(kc apply -f "$W/bad-env.yaml" 2>&1)
if [ "$out" = "Error from server (Forbidden): error when creating \"$W/bad-env.yaml\": $want" ]; then
    it_ok webhook-denies-reserved-env
else
    it_fail webhook-denies-reserved-env "got: $out"
fi

out=$(tj no-runtime "" nope | kc apply -f - 2>&1)
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.RuntimeRef: Invalid value: {"name":"nope","apiGroup":"trainer.kubeflow.org","kind":"ClusterTrainingRuntime"}: clustertrainingruntimes.trainer.kubeflow.org "nope" not found: specified clusterTrainingRuntime must be created before the TrainJob is created'
if [[ "$out" == *": $want" ]]; then
    it_ok webhook-denies-missing-runtime
else
    it_fail webhook-denies-missing-runtime "got: $out"
fi

out=$(tj bad-manager '  runtimePatches:
    - manager: nodomain' | kc apply -f - 2>&1)
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimePatches.manager: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")'
if [[ "$out" == *": $want" ]]; then
    it_ok webhook-denies-bad-manager
else
    it_fail webhook-denies-bad-manager "got: $out"
fi

out=$(
    kc apply -f - 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: two-replicas
  namespace: $ns
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          replicas: 2
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
EOF
)
want='admission webhook "validator.trainingruntime.trainer.kubeflow.org" denied the request: spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1'
if [[ "$out" == *": $want" ]]; then
    it_ok webhook-denies-runtime-replicas
else
    it_fail webhook-denies-runtime-replicas "got: $out"
fi

# ---- valid objects pass; the defaulter stamps runtimePatches --------------------------------
out=$(tj good '  suspend: true
  trainer:
    numNodes: 2
  runtimePatches:
    - manager: acme.io/scheduler
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector:
                          pool: a' | kc apply -f - 2>&1)
if [[ "$out" == *"trainjob.trainer.kubeflow.org/good created"* ]]; then
    it_ok webhook-allows-valid-trainjob
else
    it_fail webhook-allows-valid-trainjob "got: $out"
fi
t1=$(kc -n "$ns" get trainjob good -o jsonpath='{.spec.runtimePatches[0].time}' 2>&1)
if [[ "$t1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]; then
    it_ok webhook-stamps-runtime-patch-time
else
    it_fail webhook-stamps-runtime-patch-time "time: '$t1'"
fi
# An unrelated update keeps the stamped time (the patch is equal ignoring time).
kc -n "$ns" patch trainjob good --type merge -p '{"metadata":{"labels":{"x":"y"}}}' >/dev/null 2>&1
t2=$(kc -n "$ns" get trainjob good -o jsonpath='{.spec.runtimePatches[0].time}' 2>&1)
if [ "$t2" = "$t1" ]; then
    it_ok webhook-keeps-time-on-unrelated-update
else
    it_fail webhook-keeps-time-on-unrelated-update "was '$t1', now '$t2'"
fi
# Changing the patches of a running (unsuspended) TrainJob is refused.
kc -n "$ns" patch trainjob good --type merge -p '{"spec":{"suspend":false}}' >/dev/null 2>&1
out=$(kc -n "$ns" patch trainjob good --type json \
    -p '[{"op":"replace","path":"/spec/runtimePatches/0/manager","value":"acme.io/other"}]' 2>&1)
want='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is suspended before or after the update'
if [[ "$out" == *"$want" ]]; then
    it_ok webhook-denies-patch-change-while-running
else
    it_fail webhook-denies-patch-change-while-running "got: $out"
fi

# Suspended: the change is allowed after the webhook reads the JobSet (GET; none exists here).
kc -n "$ns" patch trainjob good --type merge -p '{"spec":{"suspend":true}}' >/dev/null 2>&1
out=$(kc -n "$ns" patch trainjob good --type json \
    -p '[{"op":"replace","path":"/spec/runtimePatches/0/manager","value":"acme.io/other"}]' 2>&1)
t3=$(kc -n "$ns" get trainjob good -o jsonpath='{.spec.runtimePatches[0].manager} {.spec.runtimePatches[0].time}' 2>&1)
if [[ "$out" == *"patched"* ]] && [[ "$t3" =~ ^acme.io/other\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]]; then
    it_ok webhook-allows-patch-change-while-suspended
else
    it_fail webhook-allows-patch-change-while-suspended "got: $out / $t3"
fi

# ---- a runtime created right before its TrainJob (one apply, two documents) --------------
out=$(
    kc apply -f - 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: fresh
  namespace: $ns
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
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
---
$(tj uses-fresh "" fresh TrainingRuntime)
EOF
)
if [[ "$out" == *"trainjob.trainer.kubeflow.org/uses-fresh created"* ]]; then
    it_ok webhook-finds-runtime-created-just-before
else
    it_fail webhook-finds-runtime-created-just-before "got: $out"
fi

# ---- warnings reach the client -------------------------------------------------------------
kc apply -f - >"$W/dep.out" 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: old-$ns
  labels:
    trainer.kubeflow.org/support: deprecated
spec:
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
EOF
if grep -qF "Warning: ClusterTrainingRuntime \"old-$ns\" is deprecated and will be removed" "$W/dep.out"; then
    it_ok webhook-runtime-deprecation-warning
else
    it_fail webhook-runtime-deprecation-warning "got: $(cat "$W/dep.out")"
fi
out=$(tj uses-old "" "old-$ns" | kc apply -f - 2>&1)
if [[ "$out" == *"Warning: Referenced ClusterTrainingRuntime \"old-$ns\" is deprecated"* ]] &&
    [[ "$out" == *"created"* ]]; then
    it_ok webhook-trainjob-deprecation-warning
else
    it_fail webhook-trainjob-deprecation-warning "got: $out"
fi
# Runtime deleted: an update of its TrainJob is refused (SPEC §9.13).
kc delete clustertrainingruntime "old-$ns" >/dev/null 2>&1
out=$(kc -n "$ns" patch trainjob uses-old --type merge -p '{"spec":{"suspend":true}}' 2>&1)
if [[ "$out" == *"specified clusterTrainingRuntime must be created before the TrainJob is created"* ]]; then
    it_ok webhook-denies-update-after-runtime-deleted
else
    it_fail webhook-denies-update-after-runtime-deleted "got: $out"
fi

# ---- least privilege: the webhook's identity can read runtimes and JobSets, nothing more ----
wk() { "$KT_KUBECTL" --kubeconfig "$KT_WEBHOOK_KUBECONFIG" --cache-dir "$KT_CLUSTER_DIR/kubectl-cache" "$@"; }
can=$(wk auth can-i list clustertrainingruntimes.trainer.kubeflow.org 2>/dev/null)
cannot=""
for v in "create trainjobs.trainer.kubeflow.org" "get secrets" "list configmaps" \
    "update validatingwebhookconfigurations" "create jobsets.jobset.x-k8s.io"; do
    # shellcheck disable=SC2086
    [ "$(wk auth can-i $v 2>/dev/null)" = yes ] && cannot="$cannot [$v]"
done
if [ "$can" = yes ] && [ -z "$cannot" ]; then
    it_ok webhook-rbac-least-privilege
else
    it_fail webhook-rbac-least-privilege "list runtimes: '$can'; unexpectedly allowed:$cannot"
fi

# ---- the daemon: healthy, no sanitizer reports, clean stop ----------------------------------
if grep -qE 'AddressSanitizer|runtime error:|ThreadSanitizer' "$W/stderr"; then
    it_fail webhook-stderr-clean "$(cat "$W/stderr")"
else
    it_ok webhook-stderr-clean
fi
kc delete validatingwebhookconfiguration validator.trainer.kubeflow.org >/dev/null 2>&1
kc delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org >/dev/null 2>&1
kill -TERM "$WPID"
if wait "$WPID"; then
    it_ok webhook-sigterm-clean-exit
else
    it_fail webhook-sigterm-clean-exit "exit status $?"
fi
WPID=""
kc delete clustertrainingruntime torch-distributed --ignore-not-found >/dev/null 2>&1
it_finish
