# SPDX-License-Identifier: Apache-2.0
# deploy/release/lib.sh - sourced by the release scripts (not run): the repository root, kt's
# release, SOURCE_DATE_EPOCH and a helper that installs missing Debian tools with apt-get.
# shellcheck shell=bash
rel_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# kt's release: common/base/version.h is the one source (the Makefile's $(VERSION) reads the same line).
rel_version=$(sed -n 's/^#define KT_RELEASE "\(.*\)"$/\1/p' "$rel_root/common/base/version.h")
[ -n "$rel_version" ] || {
    echo "release: no KT_RELEASE in common/base/version.h" >&2
    exit 1
}
# Every date inside an artefact is the last commit's, so two runs give the same bytes.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$rel_root" log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH

# rel_need TOOL:PACKAGE... - apt-get install the packages whose tool is missing (as root, or
# through sudo), like deploy/image/build.sh does for mmdebstrap and umoci.
rel_need() {
    local want="" t
    for t in "$@"; do
        command -v "${t%%:*}" >/dev/null || want="$want ${t#*:}"
    done
    [ -n "$want" ] || return 0
    echo "release: installing$want (Debian packages)" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    # shellcheck disable=SC2086 # one word per package
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $want >/dev/null
}

# rel_check_bins DIR - the three binaries are built in DIR/bin.
rel_check_bins() {
    local f
    for f in kt-webhook kt-reconciler ktctl; do
        [ -x "$1/bin/$f" ] || {
            echo "release: $1/bin/$f missing (make)" >&2
            exit 1
        }
    done
}

# rel_source_url - where the source lives, for the image's org.opencontainers.image.source and
# the copyright file's Source: KT_SOURCE_URL, else the origin remote (an scp-like
# git@host:path becomes https://host/path); empty when neither is set.
rel_source_url() {
    local u=${KT_SOURCE_URL:-}
    [ -n "$u" ] || u=$(git -C "$rel_root" remote get-url origin 2>/dev/null || true)
    case "$u" in
    git@*:*)
        u=${u#git@}
        u="https://${u%%:*}/${u#*:}"
        ;;
    esac
    echo "${u%.git}"
}
