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
# no list) still reconciles B. Every wait is a bounded kt_poll or `kubectl wait`.
. "$(dirname "$0")/lib.sh"
REC=${KT_RECONCILER_BIN:-"$it_root/build/plain/bin/kt-reconciler"}
KW=60s
SUF=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
kt_cleanup kc delete clusterrole,clusterrolebinding "kt-ns-it-$SUF"

# ---- the shipped overlay ------------------------------------------------------------------
if kc kustomize "$it_root/deploy/namespaced" >"$T/all.yaml" 2>"$T/kust.err"; then
    ok kustomize-builds
else
    bad kustomize-builds "$(cat "$T/kust.err")"
    kt_finish
fi
kc create --dry-run=client -o json -f "$T/all.yaml" | jq -s '[.[] | if .kind == "List" then .items[] else . end]' >"$T/all.json"
overlay_obj() { jq --arg k "$1" --arg n "$2" '.[] | select(.kind == $k and .metadata.name == $n)' "$T/all.json"; }
overlay_obj ClusterRole kubeflow-trainer-controller-manager >"$T/cr.json"
overlay_obj Role kubeflow-trainer-controller-manager >"$T/role.json"
# No namespaced kind in the ClusterRole: only cluster-scoped reads and the metrics reviews.
check overlay-clusterrole-minimal jq -e '[.rules[].resources[]] | sort ==
    ["clustertrainingruntimes", "runtimeclasses", "subjectaccessreviews", "tokenreviews"]' "$T/cr.json"
check overlay-clusterrole-read-only jq -e '[.rules[] | select(.resources[0] | test("reviews$") | not) | .verbs[]] | unique == ["get", "list", "watch"]' "$T/cr.json"
check overlay-role-secrets jq -e '.metadata.namespace == "team-a" and ([.rules[].resources[]] | index("secrets") and index("configmaps") and index("trainjobs"))' "$T/role.json"
check overlay-config-watches bash -c "jq -r '.[] | select(.kind == \"ConfigMap\" and .metadata.name == \"kubeflow-trainer-config\") | .data[]' '$T/all.json' | grep -A1 '^watchNamespaces:' | grep -c -- '- team-a' >/dev/null"
# The whole overlay is accepted by the API server (server-side dry run; its example namespace and
# the install namespace must exist, as README says).
for ns in team-a kubeflow-system; do kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null; done
check overlay-server-dry-run kc apply --server-side --dry-run=server -f "$T/all.yaml"

# ---- an identity with exactly the overlay's RBAC --------------------------------------------
A=$(kt_ns nsa) && B=$(kt_ns nsb) && C=$(kt_ns nsc) && SA_NS=$(kt_ns nssa) ||
    { bad namespaces "cannot create"; kt_finish; }
SA=kt-rec-$SUF
kc create serviceaccount "$SA" -n "$SA_NS" >/dev/null || { bad sa "cannot create"; kt_finish; }
jq --arg n "kt-ns-it-$SUF" '.metadata = {name: $n}' "$T/cr.json" | kc apply -f - >/dev/null &&
    kc create clusterrolebinding "kt-ns-it-$SUF" --clusterrole="kt-ns-it-$SUF" \
        --serviceaccount="$SA_NS:$SA" >/dev/null || { bad clusterrole "cannot create"; kt_finish; }
grant() { # grant NS - the overlay's Role + a RoleBinding for the identity in NS
    jq --arg ns "$1" '.metadata = {name: "kt-reconciler", namespace: $ns}' "$T/role.json" | kc apply -f - >/dev/null &&
        kc create rolebinding kt-reconciler -n "$1" --role=kt-reconciler --serviceaccount="$SA_NS:$SA" >/dev/null
}
grant "$A" || { bad role "cannot create"; kt_finish; }
TOKEN=$(kc create token "$SA" -n "$SA_NS" --duration=1h) || { bad token "kubectl create token failed"; kt_finish; }
cat >"$T/sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kt, cluster: {server: "$KT_APISERVER", certificate-authority: "$KT_CA"}}]
users: [{name: sa, user: {token: "$TOKEN"}}]
contexts: [{name: kt, context: {cluster: kt, user: sa, namespace: $SA_NS}}]
current-context: kt
EOF
sa_can() { "$KT_KUBECTL" --kubeconfig "$T/sa.kubeconfig" auth can-i "$@" 2>/dev/null | grep -cx yes >/dev/null; }
sa_cannot() { ! sa_can "$@"; }
check rbac-secrets-in-a sa_can get secrets -n "$A"
check rbac-no-secrets-in-b sa_cannot get secrets -n "$B"
check rbac-no-secrets-cluster-wide sa_cannot list secrets -A
check rbac-no-kube-system-configmaps sa_cannot list configmaps -n kube-system
check rbac-clustertrainingruntimes-read-only sa_cannot patch clustertrainingruntimes.trainer.kubeflow.org

cat >"$T/config.yaml" <<EOF
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
metrics:
  secureServing: false
certManagement:
  enable: false
EOF

# A reconciler: kt_daemon [--standby] NAME "$REC" --kubeconfig KUBECONFIG "${RECF[@]}" FLAG...
# (tests/lib.sh; --standby: wait for its ports only, not for /readyz).
RECF=(--config "$T/config.yaml" --health-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --workers 2)
not_in_log() { ! grep -Fi -- "$2" "$T/$1.log"; }
owned_by() { # owned_by NS NAME - JobSet NAME's controller is TrainJob NAME
    kc get jobset "$2" -n "$1" -o json |
        jq -e --arg n "$2" '.metadata.ownerReferences[0] | .kind == "TrainJob" and .name == $n and .controller'
}
tj_status() { kc get trainjob "$2" -n "$1" -o json | jq -e "$3"; } # tj_status NS NAME JQ
# backoff_grows NAME NS - the third retry delay of trainjobs' LIST in NS is longer than the
# first (exponential backoff: [0.1, 0.3] s, then [0.4, 1.2] s), so a refusal is no storm.
backoff_grows() {
    local d
    mapfile -t d < <(sed -n "s/.*list: .*; retrying in \\([0-9.]*\\)s resource=trainjobs namespace=$2\$/\\1/p" "$T/$1.log")
    [ "${#d[@]}" -ge 3 ] && awk -v a="${d[0]}" -v c="${d[2]}" 'BEGIN { exit !(c > a) }'
}
rz_code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(kt_port "$1" health)/readyz"; } # rz_code NAME
rz_body() { curl -s "http://127.0.0.1:$(kt_port "$1" health)/readyz"; }                             # rz_body NAME
informer_objects() { # informer_objects NAME RESOURCE - kt_informer_objects{resource=RESOURCE}
    curl -s "http://127.0.0.1:$(kt_port "$1" metrics)/metrics" |
        sed -n "s/^kt_informer_objects{resource=\"$2\"} \\([0-9]*\\).*/\\1/p"
}
ns_runtime() { # ns_runtime NS - a TrainingRuntime "rt" in NS
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
ns_trainjob() { # ns_trainjob NS NAME
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
for ns in "$A" "$B" "$C"; do ns_runtime "$ns" || bad "runtime-$ns" "apply failed"; done

# ---- 1. restricted to A, only the Role in A: ready, reconciles A, ignores B ----------------
if kt_daemon only_a "$REC" --kubeconfig "$T/sa.kubeconfig" "${RECF[@]}" --namespaces "$A"; then
    ok only-a-ready
    ns_trainjob "$B" tj-b
    ns_trainjob "$A" tj-a
    check only-a-jobset-built kc wait --timeout=$KW --for=create "jobset/tj-a" -n "$A"
    ns_trainjob "$A" tj-a2 # created after tj-b: its JobSet means tj-b had its chance
    check only-a-second-jobset kc wait --timeout=$KW --for=create "jobset/tj-a2" -n "$A"
    check only-a-ignores-b test -z "$(kc get jobsets -n "$B" -o name)"
    check only-a-caches-a-only test "$(informer_objects only_a trainjobs)" = 2
    check only-a-log-no-b not_in_log only_a "$B"
    check only-a-log-no-forbidden not_in_log only_a forbidden
    check only-a-log-says-scope grep -q "watching namespace $A (namespace-scoped)" "$T/only_a.log"
    check only-a-jobset-owned owned_by "$A" tj-a
    check only-a-b-untouched tj_status "$B" tj-b '.status == null or .status == {}'
    it_stop_clean only_a
else
    bad only-a-ready "readyz $(rz_code only_a): $(tail -5 "$T/only_a.log")"
fi

# ---- 2. negative: A and C listed, no Role in C: not ready, the RBAC error named -------------
if kt_daemon --standby no_c "$REC" --kubeconfig "$T/sa.kubeconfig" "${RECF[@]}" --namespaces "$A,$C"; then
    check no-c-forbidden-logged kt_poll 60 grep -q "list: .*forbidden.*resource=[a-z.]* namespace=$C" "$T/no_c.log"
    check no-c-error-names-identity grep -q "system:serviceaccount:$SA_NS:$SA" "$T/no_c.log"
    check no-c-not-ready test "$(rz_code no_c)" = 503
    # /readyz says which informer, which namespace and why (not A's: A has listed)
    body=$(rz_body no_c)
    if [[ "$body" == "informers not synced: "*" namespace=$C: list: "*orbidden* ]]; then
        ok no-c-readyz-names-namespace
    else
        bad no-c-readyz-names-namespace "body: $body"
    fi
    check no-c-backoff kt_poll 60 backoff_grows no_c "$C"
    check no-c-a-listed grep -q "watching namespace $A" "$T/no_c.log"
    grant "$C" || bad role-c "cannot create"
    check no-c-ready-after-grant kt_poll 60 kt_ready no_c
    check no-c-readyz-ok test "$(rz_body no_c)" = ok
    ns_trainjob "$C" tj-c
    check no-c-reconciles-c kc wait --timeout=$KW --for=create "jobset/tj-c" -n "$C"
    it_stop_clean no_c
else
    bad no-c-start "$(tail -5 "$T/no_c.log")"
fi

# ---- 3. bad names are refused at start, clearly ---------------------------------------------
bad_start() { # bad_start NAME WANT_REGEX ARGS... - exits 1 and logs WANT_REGEX
    local name=$1 want=$2 rc
    shift 2
    "$REC" --kubeconfig "$T/sa.kubeconfig" --health-listen 127.0.0.1:0 --metrics-listen 0 "$@" >"$T/$name.log" 2>&1
    rc=$?
    if [ "$rc" = 1 ] && grep -Eq "$want" "$T/$name.log"; then ok "$name"; else bad "$name" "exit $rc: $(tail -3 "$T/$name.log")"; fi
}
bad_start bad-flag-name 'startup failed: --namespaces: watchNamespaces\[1\]: Invalid value: "Team_B": a lowercase RFC 1123 label' \
    --config "$T/config.yaml" --namespaces "$A,Team_B"
bad_start bad-flag-empty 'watchNamespaces\[1\]: Invalid value: ""' --config "$T/config.yaml" --namespaces "$A,"
bad_start bad-flag-duplicate "watchNamespaces\\[1\\]: Invalid value: \"$A\": duplicate namespace" \
    --config "$T/config.yaml" --namespaces "$A,$A"
{ cat "$T/config.yaml"; printf 'watchNamespaces:\n  - ok\n  - -bad\n'; } >"$T/bad.yaml"
bad_start bad-config-name "bad.yaml:[0-9]+: invalid configuration: watchNamespaces\\[1\\]: Invalid value: \"-bad\"" --config "$T/bad.yaml"
{ cat "$T/config.yaml"; printf 'watchNamespaces: team-a\n'; } >"$T/bad2.yaml"
bad_start bad-config-type 'cannot unmarshal string into Go struct field Configuration.watchNamespaces of type \[\]string' --config "$T/bad2.yaml"

# ---- 4. the config file's list, and the flag's "" = all namespaces ---------------------------
{ cat "$T/config.yaml"; printf 'watchNamespaces:\n  - %s\n' "$A"; } >"$T/ns.yaml"
cp "$T/ns.yaml" "$T/config.yaml"
if kt_daemon from_file "$REC" --kubeconfig "$T/sa.kubeconfig" "${RECF[@]}"; then
    check from-file-scope grep -q "watching namespace $A (namespace-scoped)" "$T/from_file.log"
    check from-file-caches-a test "$(informer_objects from_file trainjobs)" = 2
    it_stop_clean from_file
else
    bad from-file-ready "$(tail -5 "$T/from_file.log")"
fi

# ---- 5. the cluster-wide install (no list) still reconciles every namespace -----------------
kc apply -k "$it_root/deploy/rbac/reconciler" >/dev/null || bad rbac-cluster "apply failed"
if kt_daemon cluster "$REC" --kubeconfig "$KT_RECONCILER_KUBECONFIG" "${RECF[@]}" --namespaces ""; then
    check cluster-log-all grep -q "watching all namespaces" "$T/cluster.log"
    check cluster-reconciles-b kc wait --timeout=$KW --for=create "jobset/tj-b" -n "$B"
    it_stop_clean cluster
else
    bad cluster-ready "$(tail -5 "$T/cluster.log")"
fi
kt_finish
