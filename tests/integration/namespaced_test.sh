#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/namespaced_test.sh ENV_FILE - the namespace-scoped install on the real API
# server. The RBAC is deploy/namespaced's as `kubectl kustomize` renders it (its minimal
# ClusterRole and its per-namespace Role), bound to a fresh ServiceAccount whose token
# (TokenRequest API) kt-reconciler uses, so no other test's ClusterRoleBinding can lend it
# rights. A reconciler restricted to namespace A with only the Role in A becomes ready,
# reconciles a TrainJob in A and never sees one in B (no JobSet, nothing about B and no
# "forbidden" in its log, only A's TrainJobs cached); restricted to A and C without the Role in
# C it stays unready and logs the RBAC error for C, and becomes ready once the Role is granted;
# bad namespace names are refused at start. The cluster-wide install (deploy/rbac/reconciler,
# no list) still reconciles B. Every wait is a bounded poll or `kubectl wait`.
. "$(dirname "$0")/lib.sh"
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}
T=60s
PIDS=()
SUF=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    kc delete clusterrole,clusterrolebinding "kt-ns-it-$SUF" >/dev/null 2>&1
    rm -rf "$IT_TMP"
}
trap cleanup EXIT

poll() { it_poll "$@"; }

# ---- the shipped overlay ------------------------------------------------------------------
if kc kustomize "$it_root/deploy/namespaced" >"$IT_TMP/all.yaml" 2>"$IT_TMP/kust.err"; then
    it_ok kustomize-builds
else
    it_fail kustomize-builds "$(cat "$IT_TMP/kust.err")"
    it_finish
fi
kc create --dry-run=client -o json -f "$IT_TMP/all.yaml" | jq -s '[.[] | if .kind == "List" then .items[] else . end]' >"$IT_TMP/all.json"
obj() { jq --arg k "$1" --arg n "$2" '.[] | select(.kind == $k and .metadata.name == $n)' "$IT_TMP/all.json"; }
obj ClusterRole kubeflow-trainer-controller-manager >"$IT_TMP/cr.json"
obj Role kubeflow-trainer-controller-manager >"$IT_TMP/role.json"
# No namespaced kind in the ClusterRole: only cluster-scoped reads and the metrics reviews.
check overlay-clusterrole-minimal jq -e '[.rules[].resources[]] | sort ==
    ["clustertrainingruntimes", "runtimeclasses", "subjectaccessreviews", "tokenreviews"]' "$IT_TMP/cr.json"
check overlay-clusterrole-read-only jq -e '[.rules[] | select(.resources[0] | test("reviews$") | not) | .verbs[]] | unique == ["get", "list", "watch"]' "$IT_TMP/cr.json"
check overlay-role-secrets jq -e '.metadata.namespace == "team-a" and ([.rules[].resources[]] | index("secrets") and index("configmaps") and index("trainjobs"))' "$IT_TMP/role.json"
check overlay-config-watches bash -c "jq -r '.[] | select(.kind == \"ConfigMap\" and .metadata.name == \"kubeflow-trainer-config\") | .data[]' '$IT_TMP/all.json' | grep -A1 '^watchNamespaces:' | grep -c -- '- team-a' >/dev/null"
# The whole overlay is accepted by the API server (server-side dry run; its example namespace and
# the install namespace must exist, as README says).
for ns in team-a kubeflow-system; do kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null; done
check overlay-server-dry-run kc apply --server-side --dry-run=server -f "$IT_TMP/all.yaml"

# ---- an identity with exactly the overlay's RBAC --------------------------------------------
A=$(it_ns nsa) && B=$(it_ns nsb) && C=$(it_ns nsc) && SA_NS=$(it_ns nssa) ||
    { it_fail namespaces "cannot create"; it_finish; }
SA=kt-rec-$SUF
kc create serviceaccount "$SA" -n "$SA_NS" >/dev/null || { it_fail sa "cannot create"; it_finish; }
jq --arg n "kt-ns-it-$SUF" '.metadata = {name: $n}' "$IT_TMP/cr.json" | kc apply -f - >/dev/null &&
    kc create clusterrolebinding "kt-ns-it-$SUF" --clusterrole="kt-ns-it-$SUF" \
        --serviceaccount="$SA_NS:$SA" >/dev/null || { it_fail clusterrole "cannot create"; it_finish; }
grant() { # grant NS - the overlay's Role + a RoleBinding for the identity in NS
    jq --arg ns "$1" '.metadata = {name: "kt-reconciler", namespace: $ns}' "$IT_TMP/role.json" | kc apply -f - >/dev/null &&
        kc create rolebinding kt-reconciler -n "$1" --role=kt-reconciler --serviceaccount="$SA_NS:$SA" >/dev/null
}
grant "$A" || { it_fail role "cannot create"; it_finish; }
TOKEN=$(kc create token "$SA" -n "$SA_NS" --duration=1h) || { it_fail token "kubectl create token failed"; it_finish; }
cat >"$IT_TMP/sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kt, cluster: {server: "$KT_APISERVER", certificate-authority: "$KT_CA"}}]
users: [{name: sa, user: {token: "$TOKEN"}}]
contexts: [{name: kt, context: {cluster: kt, user: sa, namespace: $SA_NS}}]
current-context: kt
EOF
can() { "$KT_KUBECTL" --kubeconfig "$IT_TMP/sa.kubeconfig" auth can-i "$@" 2>/dev/null | grep -cx yes >/dev/null; }
cannot() { ! can "$@"; }
check rbac-secrets-in-a can get secrets -n "$A"
check rbac-no-secrets-in-b cannot get secrets -n "$B"
check rbac-no-secrets-cluster-wide cannot list secrets -A
check rbac-no-kube-system-configmaps cannot list configmaps -n kube-system
check rbac-clustertrainingruntimes-read-only cannot patch clustertrainingruntimes.trainer.kubeflow.org

cat >"$IT_TMP/config.yaml" <<EOF
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
metrics:
  secureServing: false
certManagement:
  enable: false
EOF

# start_rec NAME KUBECONFIG [FLAGS...] - start a reconciler; sets PID_NAME, HP_NAME and MP_NAME
# once its ports file is written (not waiting for readiness).
start_rec() {
    local name=$1 kcfg=$2
    shift 2
    rm -f "$IT_TMP/$name.ports"
    "$REC" --kubeconfig "$kcfg" --config "$IT_TMP/config.yaml" --health-listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --portfile "$IT_TMP/$name.ports" --workers 2 "$@" \
        >>"$IT_TMP/$name.log" 2>&1 &
    eval "PID_$name=$!"
    PIDS+=($!)
    for _ in $(seq 600); do
        [ -s "$IT_TMP/$name.ports" ] && break
        kill -0 "$(eval echo "\$PID_$name")" 2>/dev/null || return 1
        sleep 0.1
    done
    eval "HP_$name=$(jq -r .health "$IT_TMP/$name.ports")"
    eval "MP_$name=$(jq -r .metrics "$IT_TMP/$name.ports")"
}
not_in_log() { ! grep -Fi -- "$2" "$IT_TMP/$1.log"; }
owned_by() { # owned_by NS NAME - JobSet NAME's controller is TrainJob NAME
    kc get jobset "$2" -n "$1" -o json |
        jq -e --arg n "$2" '.metadata.ownerReferences[0] | .kind == "TrainJob" and .name == $n and .controller'
}
tj_status() { kc get trainjob "$2" -n "$1" -o json | jq -e "$3"; } # tj_status NS NAME JQ
# backoff_grows NAME NS - the third retry delay of trainjobs' LIST in NS is longer than the
# first (exponential backoff: [0.1, 0.3] s, then [0.4, 1.2] s), so a refusal is no storm.
backoff_grows() {
    local d
    mapfile -t d < <(sed -n "s/.*list: .*; retrying in \\([0-9.]*\\)s resource=trainjobs namespace=$2\$/\\1/p" "$IT_TMP/$1.log")
    [ "${#d[@]}" -ge 3 ] && awk -v a="${d[0]}" -v c="${d[2]}" 'BEGIN { exit !(c > a) }'
}
readyz() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(eval echo "\$HP_$1")/readyz"; }
readyz_body() { curl -s "http://127.0.0.1:$(eval echo "\$HP_$1")/readyz"; }
ready() { test "$(readyz "$1")" = 200; }
cached() { # cached NAME RESOURCE - kt_informer_objects{resource=RESOURCE}
    curl -s "http://127.0.0.1:$(eval echo "\$MP_$1")/metrics" |
        sed -n "s/^kt_informer_objects{resource=\"$2\"} \\([0-9]*\\).*/\\1/p"
}
runtime() { # runtime NS - a TrainingRuntime "rt" in NS
    kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: rt
  namespace: $1
spec:
  mlPolicy:
    numNodes: 1
$(it_runtime_template)
YAML
}
trainjob() { # trainjob NS NAME
    kc apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $2
  namespace: $1
spec:
  runtimeRef:
    name: rt
    kind: TrainingRuntime
YAML
}
for ns in "$A" "$B" "$C"; do runtime "$ns" || it_fail "runtime-$ns" "apply failed"; done

# ---- 1. restricted to A, only the Role in A: ready, reconciles A, ignores B ----------------
if start_rec only_a "$IT_TMP/sa.kubeconfig" --namespaces "$A" && poll ready only_a; then
    it_ok only-a-ready
    trainjob "$B" tj-b
    trainjob "$A" tj-a
    check only-a-jobset-built kc wait --timeout=$T --for=create "jobset/tj-a" -n "$A"
    trainjob "$A" tj-a2 # created after tj-b: its JobSet means tj-b had its chance
    check only-a-second-jobset kc wait --timeout=$T --for=create "jobset/tj-a2" -n "$A"
    check only-a-ignores-b test -z "$(kc get jobsets -n "$B" -o name)"
    check only-a-caches-a-only test "$(cached only_a trainjobs)" = 2
    check only-a-log-no-b not_in_log only_a "$B"
    check only-a-log-no-forbidden not_in_log only_a forbidden
    check only-a-log-says-scope grep -q "watching namespace $A (namespace-scoped)" "$IT_TMP/only_a.log"
    check only-a-jobset-owned owned_by "$A" tj-a
    check only-a-b-untouched tj_status "$B" tj-b '.status == null or .status == {}'
    it_stop_clean only_a
else
    it_fail only-a-ready "readyz $(readyz only_a): $(tail -5 "$IT_TMP/only_a.log")"
fi

# ---- 2. negative: A and C listed, no Role in C: not ready, the RBAC error named -------------
if start_rec no_c "$IT_TMP/sa.kubeconfig" --namespaces "$A,$C"; then
    check no-c-forbidden-logged poll grep -q "list: .*forbidden.*resource=[a-z.]* namespace=$C" "$IT_TMP/no_c.log"
    check no-c-error-names-identity grep -q "system:serviceaccount:$SA_NS:$SA" "$IT_TMP/no_c.log"
    check no-c-not-ready test "$(readyz no_c)" = 503
    # /readyz says which informer, which namespace and why (not A's: A has listed)
    body=$(readyz_body no_c)
    if [[ "$body" == "informers not synced: "*" namespace=$C: list: "*orbidden* ]]; then
        it_ok no-c-readyz-names-namespace
    else
        it_fail no-c-readyz-names-namespace "body: $body"
    fi
    check no-c-backoff poll backoff_grows no_c "$C"
    check no-c-a-listed grep -q "watching namespace $A" "$IT_TMP/no_c.log"
    grant "$C" || it_fail role-c "cannot create"
    check no-c-ready-after-grant poll ready no_c
    check no-c-readyz-ok test "$(readyz_body no_c)" = ok
    trainjob "$C" tj-c
    check no-c-reconciles-c kc wait --timeout=$T --for=create "jobset/tj-c" -n "$C"
    it_stop_clean no_c
else
    it_fail no-c-start "$(tail -5 "$IT_TMP/no_c.log")"
fi

# ---- 3. bad names are refused at start, clearly ---------------------------------------------
bad_start() { # bad_start NAME WANT_REGEX ARGS... - exits 1 and logs WANT_REGEX
    local name=$1 want=$2 rc
    shift 2
    "$REC" --kubeconfig "$IT_TMP/sa.kubeconfig" --health-listen 127.0.0.1:0 --metrics-listen 0 "$@" >"$IT_TMP/$name.log" 2>&1
    rc=$?
    if [ "$rc" = 1 ] && grep -Eq "$want" "$IT_TMP/$name.log"; then it_ok "$name"; else it_fail "$name" "exit $rc: $(tail -3 "$IT_TMP/$name.log")"; fi
}
bad_start bad-flag-name 'startup failed: --namespaces: watchNamespaces\[1\]: Invalid value: "Team_B": a lowercase RFC 1123 label' \
    --config "$IT_TMP/config.yaml" --namespaces "$A,Team_B"
bad_start bad-flag-empty 'watchNamespaces\[1\]: Invalid value: ""' --config "$IT_TMP/config.yaml" --namespaces "$A,"
bad_start bad-flag-duplicate "watchNamespaces\\[1\\]: Invalid value: \"$A\": duplicate namespace" \
    --config "$IT_TMP/config.yaml" --namespaces "$A,$A"
{ cat "$IT_TMP/config.yaml"; printf 'watchNamespaces:\n  - ok\n  - -bad\n'; } >"$IT_TMP/bad.yaml"
bad_start bad-config-name "bad.yaml:[0-9]+: invalid configuration: watchNamespaces\\[1\\]: Invalid value: \"-bad\"" --config "$IT_TMP/bad.yaml"
{ cat "$IT_TMP/config.yaml"; printf 'watchNamespaces: team-a\n'; } >"$IT_TMP/bad2.yaml"
bad_start bad-config-type 'cannot unmarshal string into Go struct field Configuration.watchNamespaces of type \[\]string' --config "$IT_TMP/bad2.yaml"

# ---- 4. the config file's list, and the flag's "" = all namespaces ---------------------------
{ cat "$IT_TMP/config.yaml"; printf 'watchNamespaces:\n  - %s\n' "$A"; } >"$IT_TMP/ns.yaml"
cp "$IT_TMP/ns.yaml" "$IT_TMP/config.yaml"
if start_rec from_file "$IT_TMP/sa.kubeconfig" && poll ready from_file; then
    check from-file-scope grep -q "watching namespace $A (namespace-scoped)" "$IT_TMP/from_file.log"
    check from-file-caches-a test "$(cached from_file trainjobs)" = 2
    it_stop_clean from_file
else
    it_fail from-file-ready "$(tail -5 "$IT_TMP/from_file.log")"
fi

# ---- 5. the cluster-wide install (no list) still reconciles every namespace -----------------
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || it_fail rbac-cluster "apply failed"
if start_rec cluster "$KT_RECONCILER_KUBECONFIG" --namespaces "" && poll ready cluster; then
    check cluster-log-all grep -q "watching all namespaces" "$IT_TMP/cluster.log"
    check cluster-reconciles-b kc wait --timeout=$T --for=create "jobset/tj-b" -n "$B"
    it_stop_clean cluster
else
    it_fail cluster-ready "$(tail -5 "$IT_TMP/cluster.log")"
fi
it_finish
