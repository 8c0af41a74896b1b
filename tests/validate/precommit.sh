#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/validate/precommit.sh [--from-source] [BUILD_DIR] - kt's pre-commit hooks
# (.pre-commit-hooks.yaml, deploy/pre-commit/ktctl-validate) run by the real pre-commit (PyPI,
# pinned in ci_venv.sh) as a user runs them: `pre-commit install` in a scratch git repository whose
# .pre-commit-config.yaml names a git copy of this work tree at its commit, then `git commit`.
# NO ktctl on PATH. The repository holds manifests, a Helm chart (Chart.yaml, values files,
# templates with {{ }}), kustomization.yaml, a GitHub workflow, other YAML and README.md.
#   --from-source (`make precommit`, about a minute): hook ktctl-validate. Missing build packages
#     refuse the commit with the apt-get line, a failing build with the build log (no stamp); the
#     first commit builds ktctl in pre-commit's cache (its time printed) and passes; plain ktctl
#     refuses the 6 non-Kubernetes files that passed the hook; an invalid TrainJob is refused with
#     FILE:LINE and the error, also in a templates/ folder that is no chart's; the second run
#     does not rebuild (stamp), an edited source does; two runs at once build once (lock);
#     ktctl-validate-system without a ktctl on PATH fails and says so.
#   default (`make test`, seconds): the build's two failures through `pre-commit try-repo ...
#     ktctl-validate` (they fail before a build), then the same commits through
#     ktctl-validate-system with BUILD_DIR's ktctl (default build/plain) on PATH; try-repo on this
#     work tree (uncommitted changes included) passes no README.md.
# Last line: N passed, N failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hook="ktctl-validate-system"
if [ "${1:-}" = --from-source ]; then
    hook="ktctl-validate"
    shift
fi
b=$(cd "${1:-$root/build/plain}" 2>/dev/null && pwd) # used by ktctl-validate-system only
# shellcheck source=tests/validate/ci_venv.sh
. "$here/ci_venv.sh" # PINS, venv, setup_venv
# shellcheck source=tests/lib.sh
. "$root/tests/lib.sh" # T, ok, bad, kt_finish
export PRE_COMMIT_HOME="$T/pc-home"
git_q() { git -c user.name=kt -c user.email=kt@example.invalid -c init.defaultBranch=main "$@" -q; }

# PATH without any folder that holds a ktctl.
nokt=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -x "$d/ktctl" ] && nokt="${nokt:+$nokt:}$d"
done

# in_repo LABEL pass|fail TEXT CMD... - CMD, run in the sample repository without ktctl on PATH,
# succeeds (pass) or fails (fail) and its output holds TEXT (a fixed string).
in_repo() {
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
    printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: %s\n' \
        "$T/kt" "$(git -C "$T/kt" rev-parse HEAD)" "$hook" >"$r/.pre-commit-config.yaml"
    (cd "$r" && git_q init && git config user.name kt && git config user.email kt@example.invalid &&
        PATH="$nokt" "$venv/bin/pre-commit" install >/dev/null && git add -A)
}

# holds LABEL CONDITION... - ok when CONDITION holds, else bad with the output of the last run.
holds() {
    local label=$1
    shift
    if "$@"; then ok "$label"; else bad "$label" "$(tail -12 "$T/out")"; fi
}

# The build's failures, before any build succeeded: missing Debian packages (pkg-config finds
# none of kt's libraries) and a compiler that fails. Through `git commit` (from source) or
# `pre-commit try-repo` on the hook repository (the cheap run).
check_build_failures() {
    local how=("$@")
    mkdir -p "$T/no-pc"
    in_repo "ktctl-validate: missing build packages refuse it with the apt-get line" fail \
        "apt-get install libmicrohttpd-dev libgnutls28-dev nettle-dev libcurl4-gnutls-dev libjansson-dev libyaml-dev" \
        env PKG_CONFIG_LIBDIR="$T/no-pc" "${how[@]}"
    in_repo "ktctl-validate: a failing build (CC=false) refuses it with the end of the build log" fail \
        "building ktctl failed (make exit 2); the end of " env CC=false "${how[@]}"
    holds "... the log names the failed compile" grep -qF "make: *** [Makefile:" "$T/out"
    holds "... and no commit was made" head_is 0
}

no_ktctl() { ! PATH="$nokt" command -v ktctl >/dev/null; }
not_rebuilt() { [ "$(builds)" = 1 ] && [ "$(stat -c %Y.%i "$ktctl")" = "$1" ]; } # one build, same file

check_hooks() {
    local t0 secs mtime f rc skipped=0 ktctl="$b/bin/ktctl"
    holds "no ktctl on PATH for the hooks" no_ktctl
    if ! hook_repo; then
        bad "hook repository" "could not copy $root"
        return
    fi
    sample_repo
    if [ "$hook" = ktctl-validate ]; then
        check_build_failures git commit -qm first
        clone=$(ls -d "$PRE_COMMIT_HOME"/repo*/deploy/pre-commit/ktctl-validate)
        clone=${clone%/deploy/pre-commit/ktctl-validate}
        ktctl="$clone/build/pre-commit/bin/ktctl"
        holds "... nor a stamp" test ! -e "$clone/build/pre-commit/ktctl.stamp"
    else
        check_build_failures "$venv/bin/pre-commit" try-repo "$T/kt" ktctl-validate --files deploy/valid.yaml
        nokt="$b/bin:$nokt" # ktctl-validate-system runs BUILD_DIR's ktctl
    fi
    # The first commit: manifests, a Helm chart, values, kustomization, CI and other YAML pass.
    t0=$(date +%s)
    in_repo "$hook: the first commit passes manifests, a Helm chart, values, kustomization, CI and other YAML" \
        pass "ktctl validate" git commit -qm first
    secs=$(($(date +%s) - t0))
    if [ "$hook" = ktctl-validate ]; then
        echo "   (first commit, ktctl built from source in pre-commit's cache: ${secs}s; builds.log: $(tail -1 "$clone/build/pre-commit/builds.log" 2>/dev/null))"
    fi
    holds "... the commit was made" head_is 1
    for f in charts/demo/templates/trainjob.yaml charts/demo/Chart.yaml charts/demo/values.yaml \
        .github/workflows/ci.yml config/app.yaml .pre-commit-config.yaml; do
        rc=0
        (cd "$T/repo" && "$ktctl" validate "$f") >/dev/null 2>"$T/plain.err" || rc=$?
        [ $rc -ne 0 ] || [ "$(grep -c ": note: skipped: " "$T/plain.err")" != 1 ] ||
            skipped=$((skipped + 1))
    done
    # ktctl itself skips them too, each with a note (docs/ktctl.md "ktctl validate").
    holds "... and plain ktctl skips those 6 non-Kubernetes files with a note (exit 0)" \
        test $skipped = 6
    # A bad commit: the file and line of the problem.
    cp "$root/tests/validate/tj-numnodes-negative/trainjob.yaml" "$T/repo/deploy/job.yaml"
    git -C "$T/repo" add deploy/job.yaml
    mtime=$(stat -c %Y.%i "$ktctl")
    in_repo "$hook: an invalid TrainJob refuses the commit with its file and line" fail \
        "deploy/job.yaml:9: TrainJob/nn-neg: spec.trainer.numNodes: Invalid value: -1" git commit -qm bad
    holds "... no commit was made" head_is 1
    if [ "$hook" = ktctl-validate ]; then
        holds "... and the second run did not rebuild ktctl (stamp)" \
            not_rebuilt "$mtime"
    fi
    # In a templates/ folder that is no Helm chart's, a manifest is still checked.
    git -C "$T/repo" mv deploy/job.yaml k8s/templates/job.yaml
    in_repo "$hook: the same TrainJob in k8s/templates/ (no Chart.yaml) is still refused" fail \
        "k8s/templates/job.yaml:9: TrainJob/nn-neg: spec.trainer.numNodes" git commit -qm bad
    git -C "$T/repo" rm -qf k8s/templates/job.yaml
    sed -i 's/^  name: job$/  name: job2/' "$T/repo/deploy/valid.yaml"
    git -C "$T/repo" add deploy/valid.yaml
    in_repo "$hook: the fixed commit passes" pass "ktctl validate" git commit -qm good
    holds "... the commit was made" head_is 2
    # With the user's own `exclude:` replacing the hook's, the script still skips the chart's
    # files and YAML without apiVersion/kind.
    printf '        exclude: "^$"\n' >>"$T/repo/.pre-commit-config.yaml"
    in_repo "$hook: with exclude overridden, all files still pass (the script skips the chart and other YAML)" \
        pass "skipped charts/demo/Chart.yaml (a Helm chart's" \
        env KT_HOOK_VERBOSE=1 "$venv/bin/pre-commit" run --all-files --verbose
    holds "... and lists what it skipped" grep -qF "skipped .github/workflows/ci.yml (no apiVersion or kind" "$T/out"
    if [ "$hook" = ktctl-validate ]; then
        # The stamp's negative: a source newer than the stamp rebuilds (make recompiles that file).
        touch "$clone/cli/main.c"
        in_repo "ktctl-validate: after a source changed in the clone, the next run rebuilds" pass \
            "ktctl validate" "$venv/bin/pre-commit" run --all-files
        holds "... one more build" test "$(builds)" = 2
        # The lock: two runs at once with no stamp build once.
        rm -f "$clone/build/pre-commit/ktctl.stamp"
        (cd "$T/repo" && PATH="$nokt" "$clone/deploy/pre-commit/ktctl-validate" deploy/valid.yaml) >"$T/l1" 2>&1 &
        local p1=$! r1=0 r2=0
        (cd "$T/repo" && PATH="$nokt" "$clone/deploy/pre-commit/ktctl-validate" deploy/valid.yaml) >"$T/l2" 2>&1 || r2=$?
        wait $p1 || r1=$?
        cat "$T/l1" "$T/l2" >"$T/out"
        holds "two runs at once: both pass, one build (lock)" test "$r1$r2 $(builds)" = "00 3"
        # ktctl-validate-system without a ktctl on PATH.
        cp "$root/tests/validate/tj-numnodes-negative/trainjob.yaml" "$T/repo/deploy/job.yaml"
        in_repo "ktctl-validate-system: without a ktctl on PATH it fails and says so" fail "no ktctl on PATH" \
            "$venv/bin/pre-commit" try-repo "$T/kt" ktctl-validate-system --files deploy/job.yaml
        rm "$T/repo/deploy/job.yaml"
    else
        in_repo "pre-commit try-repo on this work tree: the hook sees no other file types (README.md not passed)" \
            pass "(no files to check)Skipped" "$venv/bin/pre-commit" try-repo "$root" "$hook" --files README.md
    fi
}

if [ "$hook" = ktctl-validate-system ] && [ ! -x "$b/bin/ktctl" ]; then
    bad "ktctl" "$b/bin/ktctl not built"
elif ! setup_venv >"$T/venv.log" 2>&1; then
    bad "venv $venv" "$(tail -5 "$T/venv.log")"
else
    echo "pre-commit $("$venv/bin/pre-commit" --version | sed 's/^pre-commit //')"
    check_hooks
fi
kt_finish
