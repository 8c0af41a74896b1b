#!/usr/bin/env bash
# tests/validate/precommit.sh [BUILD_DIR] - kt's pre-commit hooks (.pre-commit-hooks.yaml,
# deploy/pre-commit/ktctl-validate) run by the real pre-commit (PyPI, pinned in ci_venv.sh) as a
# user runs them: `pre-commit install` in a scratch git repository whose .pre-commit-config.yaml
# names a git copy of this work tree at its commit, then `git commit`, with NO ktctl on PATH.
#   - hook ktctl-validate: missing build packages refuse the commit with the apt-get line; a
#     failing build refuses it with the build log; then the first commit builds ktctl in
#     pre-commit's cache (its time is printed) and passes good manifests next to a Helm chart,
#     values files, kustomization.yaml, a GitHub workflow and other YAML, which plain ktctl
#     refuses; a commit with an invalid TrainJob is refused with FILE:LINE and the error, also in
#     a templates/ folder that is no chart's; the second run does not rebuild (the stamp), an
#     edited source does; two runs at once build once (the lock).
#   - hook ktctl-validate-system: fails clearly without a ktctl on PATH, checks with BUILD_DIR's.
#   - pre-commit try-repo on this work tree (uncommitted changes included), README.md not passed.
# Last line: N passed, N failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=$(cd "${1:-$root/build/plain}" && pwd)
# shellcheck source=tests/validate/ci_venv.sh
. "$here/ci_venv.sh" # PINS, venv, setup_venv
# shellcheck source=tests/tier_lib.sh
. "$root/tests/tier_lib.sh" # T, ok, bad, tier_finish
export PRE_COMMIT_HOME="$T/pc-home"
git_q() { git -c user.name=kt -c user.email=kt@example.invalid -c init.defaultBranch=main "$@" -q; }

# PATH without any folder that holds a ktctl.
nokt=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -x "$d/ktctl" ] && nokt="${nokt:+$nokt:}$d"
done

# run LABEL pass|fail TEXT CMD... - CMD, run in the sample repository without ktctl on PATH,
# succeeds (pass) or fails (fail) and its output holds TEXT (a fixed string).
run() {
    local label=$1 want=$2 text=$3 rc=0
    shift 3
    (cd "$T/repo" && PATH="$nokt" "$@") >"$T/out" 2>&1 || rc=$?
    if { [ "$want" = pass ] && [ $rc -eq 0 ]; } || { [ "$want" = fail ] && [ $rc -ne 0 ]; }; then
        if grep -qF -- "$text" "$T/out"; then
            ok "$label"
            return 0
        fi
    fi
    bad "$label" "exit $rc, want $want and \"$text\": $(tail -12 "$T/out")"
    return 1
}
head_is() { [ "$(git -C "$T/repo" rev-list --count HEAD 2>/dev/null || echo 0)" = "$1" ]; }
builds() { wc -l <"$clone/build/pre-commit/builds.log" 2>/dev/null || echo 0; }

# The hook repository: this work tree's files (uncommitted changes included) committed in a
# fresh git repository, as pre-commit would fetch kt at a commit.
hook_repo() {
    mkdir -p "$T/kt"
    (cd "$root" && git ls-files -co --exclude-standard -z |
        tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$T/kt" &&
        (cd "$T/kt" && git_q init && git add -A && git_q commit -m kt)
}

# The user's repository: manifests, a Helm chart, and YAML that is not Kubernetes objects.
sample_repo() {
    local r="$T/repo" c="$T/repo/charts/demo"
    mkdir -p "$r/deploy" "$c/templates" "$r/.github/workflows" "$r/config" "$r/k8s/templates"
    cp "$here/fmt-inputs/valid.yaml" "$r/deploy/valid.yaml" # a runtime, its TrainJob, a ConfigMap
    printf 'apiVersion: v2\nname: demo\nversion: 0.1.0\nappVersion: "1.0"\n' >"$c/Chart.yaml"
    printf 'replicas: 2\nimage: {repository: pytorch/pytorch, tag: latest}\n' >"$c/values.yaml"
    printf 'replicas: 4\n' >"$c/values-prod.yaml"
    cat >"$c/templates/trainjob.yaml" <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {{ .Release.Name }}
  labels:
    {{- include "demo.labels" . | nindent 4 }}
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: {{ .Values.replicas }}
EOF
    printf '{{- define "demo.labels" -}}\napp: demo\n{{- end }}\n' >"$c/templates/_helpers.tpl"
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy/valid.yaml]\n' \
        >"$r/kustomization.yaml"
    printf 'on: [push]\njobs:\n  test: {runs-on: ubuntu-latest, steps: [{run: make test}]}\n' \
        >"$r/.github/workflows/ci.yml"
    printf 'settings:\n  retries: 3\n  hosts: [a, b]\n' >"$r/config/app.yaml"
    printf '# notes\nnot: [yaml\n' >"$r/README.md"
    printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: ktctl-validate\n' \
        "$T/kt" "$(git -C "$T/kt" rev-parse HEAD)" >"$r/.pre-commit-config.yaml"
    (cd "$r" && git_q init && git config user.name kt && git config user.email kt@example.invalid &&
        PATH="$nokt" "$venv/bin/pre-commit" install >/dev/null && git add -A)
}

check_hooks() {
    local t0 secs mtime
    if PATH="$nokt" command -v ktctl >/dev/null; then
        bad "no ktctl on PATH" "$(PATH="$nokt" command -v ktctl)"
    else
        ok "no ktctl on PATH for the hooks"
    fi
    hook_repo || {
        bad "hook repository" "could not copy $root"
        return
    }
    sample_repo
    mkdir -p "$T/no-pc"
    # Missing Debian packages: pkg-config finds none of kt's libraries.
    run "ktctl-validate: missing build packages refuse the commit with the apt-get line" fail \
        "apt-get install libmicrohttpd-dev libgnutls28-dev nettle-dev libcurl4-gnutls-dev libjansson-dev libyaml-dev" \
        env PKG_CONFIG_LIBDIR="$T/no-pc" git commit -qm first
    head_is 0 && ok "... and no commit was made" || bad "no commit" "$(git -C "$T/repo" log --oneline)"
    clone=$(dirname "$(dirname "$(dirname "$(ls "$PRE_COMMIT_HOME"/repo*/deploy/pre-commit/ktctl-validate)")")")
    # A build that fails (the compiler fails) fails the hook, and no ktctl is left to run.
    run "ktctl-validate: a failing build refuses the commit with the build log" fail \
        "building ktctl failed (make exit 2); the end of $clone/build/pre-commit/build.log:" \
        env CC=false git commit -qm first
    head_is 0 && [ ! -e "$clone/build/pre-commit/ktctl.stamp" ] && ok "... no commit, no stamp" ||
        bad "failed build" "a commit or a stamp was made"
    # The first real commit: pre-commit's clone builds ktctl; chart and other YAML pass.
    t0=$(date +%s)
    run "ktctl-validate: the first commit builds ktctl and passes manifests, a Helm chart, values, kustomization, CI and other YAML" \
        pass "ktctl validate" git commit -qm first
    secs=$(($(date +%s) - t0))
    echo "   (first commit, ktctl built from source in pre-commit's cache: ${secs}s; $(tail -1 "$clone/build/pre-commit/builds.log" 2>/dev/null))"
    head_is 1 || bad "first commit" "not made"
    local f rc refused=0
    for f in charts/demo/templates/trainjob.yaml charts/demo/Chart.yaml charts/demo/values.yaml \
        .github/workflows/ci.yml config/app.yaml .pre-commit-config.yaml; do
        rc=0
        (cd "$T/repo" && "$clone/build/pre-commit/bin/ktctl" validate "$f") >/dev/null 2>&1 || rc=$?
        [ $rc -eq 1 ] && refused=$((refused + 1))
    done
    [ $refused = 6 ] && ok "... and plain ktctl refuses those 6 non-Kubernetes files (the hook's filtering is what passed them)" ||
        bad "plain ktctl on non-Kubernetes YAML" "refused $refused of 6"
    # A bad commit: the file and line of the problem.
    cp "$root/tests/validate/tj-numnodes-negative/trainjob.yaml" "$T/repo/deploy/job.yaml"
    git -C "$T/repo" add deploy/job.yaml
    mtime=$(stat -c %Y.%i "$clone/build/pre-commit/bin/ktctl")
    run "ktctl-validate: an invalid TrainJob refuses the commit with its file and line" fail \
        "deploy/job.yaml:9: TrainJob/nn-neg: spec.trainer.numNodes: Invalid value: -1" git commit -qm bad
    head_is 1 || bad "bad commit" "was made"
    [ "$(builds)" = 1 ] && [ "$(stat -c %Y.%i "$clone/build/pre-commit/bin/ktctl")" = "$mtime" ] &&
        ok "... the second run did not rebuild ktctl (stamp)" || bad "stamp" "$(cat "$clone/build/pre-commit/builds.log")"
    # In a templates/ folder that is no Helm chart's, a manifest is still checked.
    git -C "$T/repo" mv deploy/job.yaml k8s/templates/job.yaml
    run "ktctl-validate: the same TrainJob in k8s/templates/ (no Chart.yaml) is still refused" fail \
        "k8s/templates/job.yaml:9: TrainJob/nn-neg: spec.trainer.numNodes" git commit -qm bad
    git -C "$T/repo" rm -qf k8s/templates/job.yaml
    sed -i 's/^  name: job$/  name: job2/' "$T/repo/deploy/valid.yaml"
    git -C "$T/repo" add deploy/valid.yaml
    run "ktctl-validate: the fixed commit passes" pass "ktctl validate" git commit -qm good
    head_is 2 || bad "good commit" "not made"
    # The stamp's negative: a source newer than the stamp rebuilds (make recompiles that file).
    touch "$clone/cli/main.c"
    run "ktctl-validate: after a source changed in the clone, the next run rebuilds" pass "ktctl validate" \
        "$venv/bin/pre-commit" run --all-files
    [ "$(builds)" = 2 ] && ok "... one more build" || bad "rebuild" "$(builds) builds"
    # The lock: two runs at once with no stamp build once.
    rm -f "$clone/build/pre-commit/ktctl.stamp"
    (cd "$T/repo" && PATH="$nokt" "$clone/deploy/pre-commit/ktctl-validate" deploy/valid.yaml) >"$T/l1" 2>&1 &
    local p1=$!
    (cd "$T/repo" && PATH="$nokt" "$clone/deploy/pre-commit/ktctl-validate" deploy/valid.yaml) >"$T/l2" 2>&1
    local r2=$? r1=0
    wait $p1 || r1=$?
    [ $r1 = 0 ] && [ $r2 = 0 ] && [ "$(builds)" = 3 ] && ok "two runs at once: both pass, one build (lock)" ||
        bad "lock" "exits $r1 $r2, $(builds) builds: $(cat "$T/l1" "$T/l2")"
    # ktctl-validate-system: the ktctl on PATH.
    cp "$root/tests/validate/tj-numnodes-negative/trainjob.yaml" "$T/repo/deploy/job.yaml"
    run "ktctl-validate-system: without a ktctl on PATH it fails and says so" fail "no ktctl on PATH" \
        "$venv/bin/pre-commit" try-repo "$T/kt" ktctl-validate-system --files deploy/job.yaml
    nokt="$b/bin:$nokt"
    run "ktctl-validate-system: with BUILD_DIR's ktctl on PATH, the same file and line" fail \
        "deploy/job.yaml:9: TrainJob/nn-neg: spec.trainer.numNodes: Invalid value: -1" \
        "$venv/bin/pre-commit" try-repo "$T/kt" ktctl-validate-system --files deploy/job.yaml
    run "ktctl-validate-system: valid manifests and the chart pass" pass "Passed" \
        "$venv/bin/pre-commit" try-repo "$T/kt" ktctl-validate-system --all-files
    run "pre-commit try-repo on this work tree: the hook sees no other file types (README.md not passed)" \
        pass "(no files to check)Skipped" "$venv/bin/pre-commit" try-repo "$root" ktctl-validate-system --files README.md
}

if [ ! -x "$b/bin/ktctl" ]; then
    bad "ktctl" "$b/bin/ktctl not built"
elif ! setup_venv >"$T/venv.log" 2>&1; then
    bad "venv $venv" "$(tail -5 "$T/venv.log")"
else
    echo "pre-commit $("$venv/bin/pre-commit" --version | sed 's/^pre-commit //')"
    check_hooks
fi
tier_finish
