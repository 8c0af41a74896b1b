#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/check-versions.sh [ROOT] - every place that names kt's release agrees with
# common/base/version.h (KT_RELEASE; KT_UPSTREAM_RELEASE for the upstream one): the chart's
# version and appVersion (deploy/helm/kt/Chart.yaml), its image.tag default (values.yaml: empty,
# i.e. the chart version, or the release), its upstream-release annotation, and the image tag
# of the kustomize install (deploy/kustomization.yaml newTag) and CHANGELOG.md's newest release.
# The docs tier (tests/docs/changelog.sh) runs it too. Prints each disagreement and
# exits 1; `make release` runs it first. ROOT defaults to this repository.
set -euo pipefail
r=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
h="$r/common/base/version.h"
v=$(sed -n 's/^#define KT_RELEASE "\(.*\)"$/\1/p' "$h")
up=$(sed -n 's/^#define KT_UPSTREAM_RELEASE "\(.*\)"$/\1/p' "$h")
bad=0
unq() { sed -e 's/^[^:]*:[[:space:]]*//' -e 's/[[:space:]]*#.*$//' -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'$/\1/"; }
same() { # same WHAT GOT WANT
    if [ "$2" != "$3" ]; then
        echo "check-versions: $1 is '$2', common/base/version.h says '$3'" >&2
        bad=1
    fi
}
c="$r/deploy/helm/kt/Chart.yaml"
same "$c version" "$(grep -m1 '^version:' "$c" | unq)" "$v"
same "$c appVersion" "$(grep -m1 '^appVersion:' "$c" | unq)" "$v"
same "$c annotation kt.kubeflow.org/upstream-release" \
    "$(grep -m1 '^  kt.kubeflow.org/upstream-release:' "$c" | unq)" "$up"
# values.yaml image.tag: the first `tag:` of the top-level image: block
tag=$(awk '/^image:/ { in_image = 1; next } /^[^ #]/ { in_image = 0 } in_image && /^  tag:/ { print; exit }' \
    "$r/deploy/helm/kt/values.yaml" | unq)
[ -z "$tag" ] || same "deploy/helm/kt/values.yaml image.tag" "$tag" "$v"
same "deploy/kustomization.yaml newTag" "$(grep -m1 'newTag:' "$r/deploy/kustomization.yaml" | unq)" "$v"
# CHANGELOG.md: the newest released section (the first `## [X.Y.Z] - DATE`, after Unreleased)
same "CHANGELOG.md newest release" \
    "$(sed -nE 's/^## \[([0-9]+\.[0-9]+\.[0-9]+)\] - .*/\1/p' "$r/CHANGELOG.md" | sed -n 1p)" "$v"
[ "$bad" -eq 0 ] && echo "check-versions: $v everywhere (upstream $up)"
exit "$bad"
