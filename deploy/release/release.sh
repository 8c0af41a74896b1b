#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/release.sh [OUTDIR [PART...]] - `make release`: kt's release artefacts in one
# folder, OUTDIR (default build/release/VERSION), each name carrying VERSION (KT_RELEASE of
# common/base/version.h):
#   kt-VERSION.tar.gz                the source tarball (dist.sh: git archive of HEAD)
#   kt-VERSION-linux-amd64.tar.gz    the binary tarball (bindist.sh)
#   kt_VERSION-1_amd64.deb           the Debian package (deb.sh; lintian-clean)
#   kt-VERSION.oci.tar               the OCI image archive tagged VERSION (deploy/image/build.sh)
#   kt-VERSION.sbom.cdx.json         the image's CycloneDX SBOM (sbom.py, from its .debs)
#   kt-VERSION.tgz                   the Helm chart (helm package deploy/helm/kt)
#   SHA256SUMS                       sha256sum of all of the above (`sha256sum -c SHA256SUMS`)
# PARTS (default: all of them, then SHA256SUMS, after removing an earlier run's kt-* kt_* and
# SHA256SUMS from OUTDIR): dist bindist deb
# image chart. First it checks that the chart, its values and deploy/ name VERSION
# (check-versions.sh) and that the image has a source URL; then it builds the binaries once,
# with Debian's hardening flags (dpkg-buildflags, hardening=+all, and --as-needed) in
# KT_RELEASE_BUILD (default build/release-obj), so the tarball, the .deb and the image ship the
# same binaries. Debian tools missing here are installed with apt-get; helm comes from
# tests/helm/build-helm.sh (built once from its Go module, cached) unless KT_HELM names one.
# Knobs: KT_SOURCE_URL (the image's org.opencontainers.image.source and the .deb's Homepage;
# default: the origin remote), KT_MAINTAINER, KT_DEBIAN_MIRROR, KT_HELM.
set -euo pipefail
# shellcheck source=deploy/release/lib.sh
. "$(dirname "$0")/lib.sh"
here="$rel_root/deploy/release"
v=$rel_version
out=${1:-$rel_root/build/release/$v}
shift || true
parts=("$@")
all=0
[ ${#parts[@]} -gt 0 ] || {
    parts=(dist bindist deb image chart)
    all=1
}
want() { [[ " ${parts[*]} " == *" $1 "* ]]; }
obj=${KT_RELEASE_BUILD:-$rel_root/build/release-obj}

"$here/check-versions.sh" "$rel_root" >&2
if want image; then
    [ -n "$(rel_source_url)" ] || {
        echo "release: no source URL for the image's org.opencontainers.image.source label:" \
            "set KT_SOURCE_URL or add a git remote named origin" >&2
        exit 1
    }
fi
[ -n "$(git -C "$rel_root" status --porcelain --untracked-files=no)" ] &&
    echo "release: the work tree has uncommitted changes; the binaries are built from it, the source tarball from HEAD" >&2
[ -f "$rel_root/NOTICE" ] || {
    echo "release: no NOTICE at the top of the repository (deploy/release/notice.sh >NOTICE)" >&2
    exit 1
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
if [ "$all" = 1 ]; then
    # an earlier run's artefacts (only names a release writes: OUTDIR may be any folder)
    find "$out" -mindepth 1 -maxdepth 1 -type f \( -name 'kt-*' -o -name 'kt_*' -o -name SHA256SUMS \) -delete
fi

if want bindist || want deb || want image; then
    rel_need dpkg-buildflags:dpkg-dev help2man:help2man
    export DEB_BUILD_MAINT_OPTIONS=hardening=+all
    cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
    ldflags="$(dpkg-buildflags --get LDFLAGS) -Wl,--as-needed"
    echo "release: building the binaries in $obj ($cflags; $ldflags)" >&2
    nice -n 10 make -C "$rel_root" -s -j"$(nproc)" B="$obj" CFLAGS="$cflags" LDFLAGS="$ldflags" \
        KT_SOURCE_URL="$(rel_source_url)" \
        "$obj/bin/kt-webhook" "$obj/bin/kt-reconciler" "$obj/bin/ktctl" >/dev/null
    got=$("$obj/bin/ktctl" --version | awk '{ print $2 }')
    [ "$got" = "$v" ] || {
        echo "release: $obj/bin/ktctl --version says $got, not $v" >&2
        exit 1
    }
fi

want dist && "$here/dist.sh" "$out"
want bindist && "$here/bindist.sh" "$obj" "$out"
want deb && "$here/deb.sh" "$obj" "$out"
if want image; then
    KT_IMAGE_TAG=$v KT_IMAGE_SBOM="$out/kt-$v.sbom.cdx.json" \
        nice -n 10 "$rel_root/deploy/image/build.sh" "$obj" "$out/kt-$v.oci.tar"
fi
if want chart; then
    helm=${KT_HELM:-$("$rel_root/tests/helm/build-helm.sh" | tail -n 1)}
    # helm follows the crds/ link to api/ and says so on stderr; that is the intent
    "$helm" package "$rel_root/deploy/helm/kt" --destination "$out" 2>&1 | grep -v 'found symbolic link' || true
    [ -f "$out/kt-$v.tgz" ] || {
        echo "release: helm package wrote no $out/kt-$v.tgz" >&2
        exit 1
    }
fi

if [ "$all" = 1 ]; then
    (
        cd "$out"
        find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort >"$w/files"
        xargs sha256sum <"$w/files" >SHA256SUMS
        sha256sum --quiet -c SHA256SUMS
    )
    echo "release: $out"
    (cd "$out" && find . -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort | while read -r f; do
        printf '  %-36s %8s KiB\n' "$f" "$(du -k "$f" | cut -f1)"
    done)
fi
