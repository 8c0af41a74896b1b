#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/docs/changelog.sh [ROOT] - the checks of CHANGELOG.md (docs/releasing.md "The
# changelog"), for the docs tier; prints `ok NAME` / `FAIL NAME: why` / `skip NAME: why` and
# "N passed, N failed"; exits 1 on a failure.
#   form:    the first version heading is `## [Unreleased]`, then `## [X.Y.Z] - YYYY-MM-DD`.
#   version: the newest released version equals KT_RELEASE (common/base/version.h), the Helm
#            chart's version (deploy/helm/kt/Chart.yaml) and deploy/'s image newTag.
#   moved:   in a git checkout, every commit reachable from HEAD that touches product code
#            (PRODUCT below: common/ webhook/ reconciler/ cli/ api/ certs/ deploy/) is an ancestor of (or is) a commit touching CHANGELOG.md, unless
#            its message has the trailer line `Changelog: none`. In other words: after the
#            last change to the code, the changelog changed. Without .git (a source tarball)
#            this one is skipped with a note.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
PRODUCT=(common webhook reconciler cli api certs deploy)
. "$here/../lib.sh" # T, ok, bad, kt_finish

c=CHANGELOG.md
if [ ! -f "$c" ]; then
    bad "changelog: exists" "no $c"
    kt_finish
fi
heads=$(grep -E '^## ' "$c")
first=$(sed -n 1p <<<"$heads")
if [ "$first" = "## [Unreleased]" ]; then
    ok "changelog: ## [Unreleased] comes first"
else
    bad "changelog: ## [Unreleased] comes first" "the first ## heading is '$first'"
fi
badform=$(sed 1d <<<"$heads" | grep -vE '^## \[[0-9]+\.[0-9]+\.[0-9]+\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$' || true)
if [ -z "$badform" ]; then
    ok "changelog: every release heading is ## [X.Y.Z] - YYYY-MM-DD"
else
    bad "changelog: every release heading is ## [X.Y.Z] - YYYY-MM-DD" "$(head -n 1 <<<"$badform")"
fi

# Every version string (CHANGELOG's newest release, the chart, deploy's tag) against version.h:
# deploy/release/check-versions.sh, the check `make release` runs first.
if "$here/../../deploy/release/check-versions.sh" "$root" >"$T/cv.out" 2>&1; then
    ok "changelog: newest release = KT_RELEASE = the chart's versions = deploy newTag"
else
    bad "changelog: newest release = KT_RELEASE = the chart's versions = deploy newTag" \
        "$(tr '\n' ' ' <"$T/cv.out")"
fi

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
    echo "skip changelog: moved when code moved: not a git checkout (a source tarball?)"
else
    # The commits touching product code that no CHANGELOG.md commit has after them.
    late=$({
        echo HEAD
        git rev-list HEAD -- "$c" | sed 's/^/^/'
    } | git rev-list --stdin -- "${PRODUCT[@]}")
    stray=""
    for x in $late; do
        msg=$(git log -1 --format=%B "$x")
        if ! grep -qiE '^Changelog:[[:space:]]*none[[:space:]]*$' <<<"$msg"; then
            stray="$stray $x"
        fi
    done
    if [ -z "$stray" ]; then
        ok "changelog: moved when code moved (no product commit after the last CHANGELOG.md commit)"
    else
        n=$(wc -w <<<"$stray")
        bad "changelog: moved when code moved" "$n commit(s) change ${PRODUCT[*]} after the last change to $c (add a line under ## [Unreleased], or the trailer 'Changelog: none'): $(for x in $stray; do git log -1 --format='%h %s' "$x" | cut -c1-80; done | sed -n 1,5p | tr '\n' ';')"
    fi
fi
kt_finish
