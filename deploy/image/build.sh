#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/image/build.sh BUILD_DIR OUT - `make image`: an OCI image archive (OUT, e.g.
# build/image/kt.oci.tar) with no registry base image: the root filesystem is made by
# mmdebstrap from Debian bookworm packages (only the shared libraries the three binaries link,
# with their dependencies; no shell, no package manager) plus kt-webhook, kt-reconciler and
# ktctl in /usr/local/bin, then umoci assembles the image (one layer; user 65532:65532;
# Cmd `ktctl --help`, the Deployments set the command). Both tools are Debian packages,
# installed here when missing. Reproducible inputs: SOURCE_DATE_EPOCH = the last commit.
# Labels (OCI annotation keys): org.opencontainers.image.title, .description, .version (the
# tag), .revision (the git commit), .source (deploy/release/lib.sh rel_source_url: KT_SOURCE_URL
# or the origin remote; left out when neither exists), .licenses (Apache-2.0), .created (the last
# commit's time, like the config's created).
# Knobs: KT_IMAGE_TAG (default: kt's release, `ktctl --version`, which the chart and deploy/ name),
# KT_DEBIAN_MIRROR (default: the system's apt sources), KT_IMAGE_SBOM=FILE also writes a
# CycloneDX SBOM of the image (deploy/release/sbom.py: the .debs mmdebstrap unpacked, read with
# dpkg-deb, and their copyright files, read before they are deleted; `make release` sets it).
#
# Load / push (docs/install.md "The image"):
#   podman load -i build/image/kt.oci.tar
#   skopeo copy oci-archive:build/image/kt.oci.tar docker://REGISTRY/kt:TAG
set -euo pipefail
[ $# -eq 2 ] || {
    echo "usage: $0 BUILD_DIR OUT.oci.tar" >&2
    exit 2
}
b=$1
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
# SOURCE_DATE_EPOCH (the last commit) and rel_source_url
# shellcheck source=deploy/release/lib.sh
. "$root/deploy/release/lib.sh"
tag=${KT_IMAGE_TAG:-}
sbom=${KT_IMAGE_SBOM:-}
case "$sbom" in "" | /*) ;; *) sbom="$PWD/$sbom" ;; esac
# The runtime libraries of the binaries (ldd of build/plain/bin/*), by package; apt adds
# their dependencies (libp11-kit0, libidn2-0, libnghttp2-14, libssh2-1, ...).
pkgs=libc6,libmicrohttpd12,libgnutls30,libnettle8,libhogweed6,libjansson4,libcurl3-gnutls,libyaml-0-2

need=""
for t in mmdebstrap umoci; do command -v "$t" >/dev/null || need="$need $t"; done
if [ -n "$need" ]; then
    echo "image: installing$need (Debian packages)" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
for bin in kt-webhook kt-reconciler ktctl; do
    [ -x "$b/bin/$bin" ] || {
        echo "image: $b/bin/$bin not built (make)" >&2
        exit 1
    }
done

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/bin"
for bin in kt-webhook kt-reconciler ktctl; do
    install -m 0755 -s "$b/bin/$bin" "$w/bin/$bin"
done
# The tag: kt's release as the binary says it (the chart version and deploy/'s newTag).
[ -n "$tag" ] || tag=$("$b/bin/ktctl" --version | awk '{ print $2 }')
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
source_url=$(rel_source_url)
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
source_label=()
[ -n "$source_url" ] && source_label=(--config.label "org.opencontainers.image.source=$source_url")

mirror=()
[ -n "${KT_DEBIAN_MIRROR:-}" ] && mirror=("$KT_DEBIAN_MIRROR")
# --variant=extract: the packages named and what they depend on, unpacked without dpkg or
# maintainer scripts (none of these libraries needs one; customize hooks do not run in this
# variant, so the tree is finished here): the binaries, a passwd/group naming the non-root
# user, the loader cache; no documentation, no apt/dpkg state. The extract hook keeps a copy
# of the unpacked .debs for the SBOM (this variant leaves no dpkg database to read).
mkdir -p "$w/debs"
mmdebstrap --quiet --mode=root --variant=extract --include="$pkgs" --format=directory \
    --extract-hook="cp \"\$1\"/var/cache/apt/archives/*.deb '$w/debs/'" \
    bookworm "$w/rootfs" "${mirror[@]}"
r="$w/rootfs"
if [ -n "$sbom" ]; then
    mkdir -p "$(dirname "$sbom")"
    python3 "$root/deploy/release/sbom.py" --debs "$w/debs" --rootfs "$r" --version "$tag" \
        --revision "$revision" --source "$source_url" --out "$sbom"
fi
rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/locale" "$r/usr/share/lintian" \
    "$r/usr/share/bug" "$r/usr/share/info" "$r/etc/apt" "$r/etc/dpkg" "$r/var/lib/apt" \
    "$r/var/lib/dpkg" "$r/var/cache" "$r/var/log"
mkdir -p "$r/usr/local/bin" "$r/tmp" "$r/home/nonroot"
chmod 1777 "$r/tmp"
chown 65532:65532 "$r/home/nonroot"
cp "$w/bin/kt-webhook" "$w/bin/kt-reconciler" "$w/bin/ktctl" "$r/usr/local/bin/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
: >"$r/etc/resolv.conf" # the kubelet mounts its own
echo kt >"$r/etc/hostname"
ldconfig -r "$r"
tar --sort=name --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime -C "$r" \
    -cf "$w/rootfs.tar" .

L="$w/layout"
umoci init --layout "$L"
umoci new --image "$L:$tag"
umoci raw add-layer --image "$L:$tag" --history.created_by "deploy/image/build.sh (mmdebstrap bookworm: $pkgs)" "$w/rootfs.tar"
umoci config --image "$L:$tag" --config.user 65532:65532 --config.workingdir / \
    --config.cmd /usr/local/bin/ktctl --config.cmd --help \
    --config.exposedports 9443/tcp --config.exposedports 8081/tcp --config.exposedports 8443/tcp \
    --config.exposedports 10443/tcp --config.env PATH=/usr/local/bin \
    --config.label org.opencontainers.image.title=kt \
    --config.label "org.opencontainers.image.description=Kubeflow Trainer v2 control plane: kt-webhook, kt-reconciler, ktctl" \
    --config.label "org.opencontainers.image.version=$tag" \
    --config.label "org.opencontainers.image.revision=$revision" \
    "${source_label[@]}" \
    --config.label org.opencontainers.image.licenses=Apache-2.0 \
    --config.label "org.opencontainers.image.created=$created" \
    --architecture amd64 --os linux --created "$created"
umoci gc --layout "$L"
mkdir -p "$(dirname "$out")"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$L" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "image: $out ($(du -h "$out" | cut -f1), tag $tag)" >&2
