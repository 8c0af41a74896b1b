#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/integration/crd_kubectl.sh ENV_FILE - what a kubectl user sees (docs/internals/upstream.md#group-kinds-and-crd-shape): the
# TrainJob printer columns (STATE = type of the condition that is True, SUSPENDED, AGE) and `kubectl explain`
# printing our CRD descriptions.
. "$(dirname "$0")/lib.sh"

ns=$(kt_ns crd-kubectl) || {
    bad crd-kubectl "cannot create a namespace"
    kt_finish
}
# shellcheck disable=SC2154 # it_root: set by tests/integration/lib.sh, sourced first
crd=$it_root/api/trainer.kubeflow.org_trainjobs.yaml

# cols_row NAME SPEC_EXTRA CONDITIONS_JSON - create TrainJob NAME (SPEC_EXTRA: extra spec
# lines), write its status conditions as the reconciler would (admin, status subresource) and
# print its `kubectl get trainjobs --no-headers` row.
cols_row() {
    printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: %s\nspec:\n  runtimeRef:\n    name: torch-distributed\n%b' "$1" "$2" |
        kc -n "$ns" create -f - >/dev/null || return 1
    if [ -n "$3" ]; then
        kc -n "$ns" patch trainjob "$1" --subresource=status --type=merge -p "{\"status\":{\"conditions\":$3}}" >/dev/null || return 1
    fi
    kc -n "$ns" get trainjob "$1" --no-headers | tr -s ' '
}
cond() { # cond TYPE STATUS REASON
    printf '{"type":"%s","status":"%s","reason":"%s","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}' "$@"
}
row_is() { # row_is CHECK WANT GOT - WANT is the row without its AGE column
    if [ "${3% *}" = "$2" ]; then ok "$1"; else bad "$1" "want '$2 <age>', got '$3'"; fi
}

cols_row cols "" "" >/dev/null
kc -n "$ns" get trainjobs >"$T/get" 2>&1
if [ "$(head -1 "$T/get" | tr -s ' ')" = "NAME STATE SUSPENDED AGE" ]; then
    ok printer-columns-header
else
    bad printer-columns-header "got: $(head -1 "$T/get")"
fi
# No conditions yet: the STATE cell is blank (custom columns print nothing, not <none>);
# SUSPENDED shows the defaulted spec.suspend.
if awk 'NR == 2 { exit !($1 == "cols" && $2 == "false" && NF == 3) }' "$T/get"; then
    ok printer-columns-no-status
else
    bad printer-columns-no-status "got: $(sed -n 2p "$T/get")"
fi

# STATE is the type of the condition that is True now (upstream #3963), not of the last one.
row_is printer-columns-suspended "susp Suspended true" \
    "$(cols_row susp '  suspend: true\n' "[$(cond Suspended True Suspended)]")"
# Resumed and running: Suspended=False is the only condition. Upstream v2.3.0's column
# (.status.conditions[-1:].type) shows Suspended here; ours shows nothing, and SUSPENDED false.
row_is printer-columns-resumed-running "resumed false" \
    "$(cols_row resumed '' "[$(cond Suspended False Resumed)]")"
row_is printer-columns-complete "done Complete false" \
    "$(cols_row "done" '' "[$(cond Suspended False Resumed),$(cond Complete True AllJobsCompleted)]")"
# Failed before the last condition in the list: still the True one.
row_is printer-columns-failed "failed Failed false" \
    "$(cols_row failed '' "[$(cond Failed True FailedJobs),$(cond Suspended False Resumed)]")"
# Negative control: the v2.3.0 column on the resumed job would say Suspended.
last=$(kc -n "$ns" get trainjob resumed -o 'custom-columns=S:.status.conditions[-1:].type' --no-headers)
if [ "$last" = Suspended ]; then
    ok printer-columns-old-jsonpath-was-wrong
else
    bad printer-columns-old-jsonpath-was-wrong "the last-condition column gave '$last'"
fi
kc -n "$ns" get trainjob cols -o wide >"$T/get" 2>&1
if [ "$(head -1 "$T/get" | tr -s ' ')" = "NAME STATE SUSPENDED AGE" ]; then
    ok printer-columns-wide
else
    bad printer-columns-wide "got: $(head -1 "$T/get")"
fi
# The runtimes have no printer columns: the default NAME AGE table.
printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata:\n  name: cols\nspec:\n  mlPolicy:\n    torch: {}\n' |
    kc -n "$ns" create -f - >/dev/null
kc -n "$ns" get trainingruntimes >"$T/get" 2>&1
if [ "$(head -1 "$T/get" | tr -s ' ')" = "NAME AGE" ] && awk 'NR == 2 { exit !($1 == "cols" && NF == 2) }' "$T/get"; then
    ok runtimes-default-columns
else
    bad runtimes-default-columns "got: $(cat "$T/get")"
fi

# explain: the description of spec.trainer and of each of its fields is printed (whitespace
# normalised, kubectl wraps long lines).
norm() { tr -s ' \n\t' '   ' | sed 's/^ //; s/ $//'; }
kc explain trainjob.spec.trainer >"$T/explain" 2>&1
out=$(norm <"$T/explain")
sch='.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.trainer'
yq . "$crd" >"$T/crd.json"
desc=$(jq -r "$sch.description" "$T/crd.json" | norm)
if [ -n "$desc" ] && [ "$desc" != null ] && [[ "$out" == *"$desc"* ]]; then
    ok explain-trainer-description
else
    bad explain-trainer-description "'$desc' not in: $(head -5 "$T/explain")"
fi
for f in $(jq -r "$sch.properties | keys | .[]" "$T/crd.json"); do
    d=$(jq -r "$sch.properties.$f.description" "$T/crd.json" | norm)
    if [ "$d" = null ] || [ -z "$d" ]; then
        bad "explain-trainer-$f" "no description in the CRD"
    elif [[ "$out" == *"$f"*"$d"* ]]; then
        ok "explain-trainer-$f"
    else
        bad "explain-trainer-$f" "'$d' not printed"
    fi
done
if grep -q '^GROUP: *trainer.kubeflow.org' "$T/explain" && grep -q '^KIND: *TrainJob' "$T/explain"; then
    ok explain-header
else
    bad explain-header "got: $(head -3 "$T/explain")"
fi
# A field that does not exist is an error.
if kc explain trainjob.spec.nosuchfield >/dev/null 2>&1; then
    bad explain-unknown-field "kubectl explain accepted spec.nosuchfield"
else
    ok explain-unknown-field
fi
kc -n "$ns" delete trainjob/cols trainingruntime/cols >/dev/null
kt_finish
