#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/image/run.sh - `make image` (deploy/image/build.sh): the archive is an OCI image layout
# whose index names kt's release (the tag the chart and deploy/ use), one layer, config user
# 65532:65532, Cmd `ktctl --help`, the daemons' ports; unpacked, the root filesystem has the
# three binaries and their shared libraries and nothing to run them with (no shell, no
# package manager), and the binaries run in it (chroot, as 65532): `ktctl --version`,
# `kt-webhook --help`, `ktctl validate` on the shipped runtimes, kt-reconciler's usage. Negative
# control: without libjansson in a copy of the tree, ktctl cannot start (the tree's own
# libraries are what runs). Needs root (mmdebstrap --mode=root, chroot). Not a tier.sh:
# `make unit` must not need Debian mirrors. Prints `N passed, N failed`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=${KT_BUILD_DIR:-$root/build/plain}
. "$root/tests/lib.sh" # T, ok, bad, check, kt_finish
out="$T/kt.oci.tar"
if "$root/deploy/image/build.sh" "$B" "$out" >"$T/build.log" 2>&1; then
    ok image-built
else
    bad image-built "$(tail -5 "$T/build.log")"
    kt_finish
fi
L="$T/layout"
mkdir -p "$L" "$T/rootfs"
tar -xf "$out" -C "$L" || {
    bad image-archive "not a tar"
    kt_finish
}
check image-oci-layout jq -e '.imageLayoutVersion == "1.0.0"' "$L/oci-layout"
release=$("$B/bin/ktctl" --version | awk '{ print $2 }')
check image-ref-is-release jq -e --arg r "$release" '.manifests | length == 1 and .[0].annotations["org.opencontainers.image.ref.name"] == $r' "$L/index.json"
check image-chart-names-release grep -qx "version: $release" "$root/deploy/helm/kt/Chart.yaml"
check image-deploy-names-release grep -q "newTag: \"$release\"" "$root/deploy/kustomization.yaml"
blob() { echo "$L/blobs/sha256/${1#sha256:}"; }
man=$(blob "$(jq -r '.manifests[0].digest' "$L/index.json")")
cfg=$(blob "$(jq -r .config.digest "$man")")
check image-one-layer jq -e '.layers | length == 1' "$man"
check image-user-nonroot jq -e '.config.User == "65532:65532"' "$cfg"
check image-cmd jq -e '.config.Cmd == ["/usr/local/bin/ktctl","--help"] and (.config.Entrypoint // null) == null' "$cfg"
check image-ports jq -e '.config.ExposedPorts | keys == ["10443/tcp","8081/tcp","8443/tcp","9443/tcp"]' "$cfg"
check image-os-arch jq -e '.os == "linux" and .architecture == "amd64"' "$cfg"
# every blob's digest is its content's sha256
digests_ok() {
    local f
    for f in "$L"/blobs/sha256/*; do
        [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || return 1
    done
}
check image-digests digests_ok
r="$T/rootfs"
tar -xzf "$(blob "$(jq -r '.layers[0].digest' "$man")")" -C "$r" || bad image-layer "cannot unpack"
check image-binaries test -x "$r/usr/local/bin/kt-webhook" -a -x "$r/usr/local/bin/kt-reconciler" -a -x "$r/usr/local/bin/ktctl"
check image-no-shell bash -c "! ls '$r/bin/sh' '$r/usr/bin/sh' '$r/bin/bash' >/dev/null 2>&1"
check image-no-package-manager bash -c "! ls '$r/usr/bin/dpkg' '$r/usr/bin/apt' '$r/var/lib/dpkg' >/dev/null 2>&1"
check image-passwd-nonroot grep -qx 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' "$r/etc/passwd"
as_nonroot() { chroot --userspec=65532:65532 "$1" "${@:2}"; } # as_nonroot ROOTFS CMD...
check image-ktctl-version bash -c "test \"\$(chroot --userspec=65532:65532 '$r' /usr/local/bin/ktctl --version)\" = \"\$('$B/bin/ktctl' --version)\""
check image-webhook-help bash -c "chroot --userspec=65532:65532 '$r' /usr/local/bin/kt-webhook --help | grep -c '^Usage: kt-webhook' >/dev/null"
# (no grep -q: it would close the pipe at the first line and the daemon die of SIGPIPE, not exit 2)
check image-reconciler-usage bash -c "chroot --userspec=65532:65532 '$r' /usr/local/bin/kt-reconciler --no-such-flag 2>&1 | grep '^Usage: kt-reconciler' >/dev/null; test \${PIPESTATUS[0]} -eq 2"
mkdir -p "$r/tmp/rt" && cp "$root"/deploy/runtimes/*.yaml "$r/tmp/rt/"
check image-ktctl-validate as_nonroot "$r" /usr/local/bin/ktctl validate /tmp/rt
# negative control: the tree's libraries are the ones used
check image-has-libjansson test -e "$r/usr/lib/x86_64-linux-gnu/libjansson.so.4"
cp -a "$r" "$T/broken"
rm -f "$T/broken"/usr/lib/x86_64-linux-gnu/libjansson.so.4*
ldconfig -r "$T/broken"
check image-negative-missing-lib bash -c "! chroot --userspec=65532:65532 '$T/broken' /usr/local/bin/ktctl --version"
kt_finish
