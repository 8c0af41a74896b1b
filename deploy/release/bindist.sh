#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/bindist.sh BUILD_DIR OUTDIR - `make bindist`: the binary tarball
# OUTDIR/kt-VERSION-linux-ARCH.tar.gz (ARCH: dpkg --print-architecture, e.g. amd64), a prefix
# layout under one top folder kt-VERSION-linux-ARCH/:
#   bin/kt-webhook bin/kt-reconciler bin/ktctl   (stripped, from BUILD_DIR/bin)
#   share/kt/api/      the CRDs and their kustomization
#   share/kt/deploy/   the install manifests (deploy/kustomization.yaml finds ../api); not the
#                      chart, the image and release scripts (they ship as their own artefacts)
#   share/doc/kt/      README.md, docs/, LICENSE, NOTICE (when the repository has one) and
#                      README.binary: what to install it with and the Debian packages it needs,
#                      derived from the binaries (ldd -> dpkg -S), not typed by hand
#   share/man/man1/    ktctl.1, ktctl-SUBCOMMAND.1; share/man/man8/ kt-webhook.8 kt-reconciler.8
#                      (docs/man/build.sh: help2man from the binaries' --help, like `make man`)
# Install: tar -xzf kt-VERSION-linux-ARCH.tar.gz -C PREFIX --strip-components=1
# Reproducible: sorted, owner 0, mtime of the last commit, gzip -n.
# Knob: KT_VERSION (default: kt's release from common/base/version.h).
set -euo pipefail
# shellcheck source=deploy/release/lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -eq 2 ] || {
    echo "usage: $0 BUILD_DIR OUTDIR" >&2
    exit 2
}
b=$1
out=$2
version=${KT_VERSION:-$rel_version}
arch=$(dpkg --print-architecture)
name="kt-$version-linux-$arch"
rel_check_bins "$b"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
p="$stage/$name"
mkdir -p "$p/bin" "$p/share/kt/api" "$p/share/doc/kt"
for f in kt-webhook kt-reconciler ktctl; do
    install -m 0755 "$b/bin/$f" "$p/bin/$f"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$p/bin/$f"
done
cd "$rel_root"
cp api/*.yaml "$p/share/kt/api/"
cp -R deploy "$p/share/kt/deploy"
rm -rf "$p/share/kt/deploy/helm" "$p/share/kt/deploy/image" "$p/share/kt/deploy/release" \
    "$p/share/kt/deploy/pre-commit"
cp README.md LICENSE "$p/share/doc/kt/"
# NOTICE lists the libraries linked into the binaries and their licences; shipped with them
# whenever the repository has one.
[ -f NOTICE ] && cp NOTICE "$p/share/doc/kt/"
cp -R docs "$p/share/doc/kt/docs"
docs/man/build.sh "$b/bin" "$stage/man" >/dev/null
mkdir -p "$p/share/man/man1" "$p/share/man/man8"
install -m 0644 "$stage"/man/*.1 "$p/share/man/man1/"
install -m 0644 "$stage"/man/*.8 "$p/share/man/man8/"

# The packages that hold the libraries the binaries link directly (their NEEDED entries, found
# where ldd resolves them, owned per dpkg -S); apt installs what those depend on.
: >"$stage/pkgs"
for f in kt-webhook kt-reconciler ktctl; do
    ldd "$p/bin/$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' >"$stage/ldd"
    objdump -p "$p/bin/$f" | awk '$1 == "NEEDED" { print $2 }' >"$stage/needed"
    while read -r lib; do
        path=$(awk -v l="$lib" '$1 == l { print $2 }' "$stage/ldd")
        [ -n "$path" ] || {
            echo "bindist: ldd does not resolve $lib of $f" >&2
            exit 1
        }
        # merged /usr: the loader may name /lib/... for a file dpkg knows as /usr/lib/...
        o=""
        for c in "$path" "$(readlink -f "$path")" "/usr$path"; do
            o=$(dpkg -S "$c" 2>/dev/null) && break
        done
        [ -n "$o" ] || {
            echo "bindist: no Debian package owns $path ($lib of $f)" >&2
            exit 1
        }
        echo "${o%%:*}" >>"$stage/pkgs"
    done <"$stage/needed"
done
pkgs=$(sort -u "$stage/pkgs")
[ -n "$pkgs" ] || {
    echo "bindist: no Debian package found for the binaries' libraries" >&2
    exit 1
}
pkgline=$(echo "$pkgs" | tr '\n' ' ' | sed 's/ $//')
# shellcheck disable=SC1091 # the build machine's
os=$(. /etc/os-release && echo "$PRETTY_NAME")
cat >"$p/share/doc/kt/README.binary" <<EOF
kt $version for Linux ($arch): kt-webhook, kt-reconciler and ktctl, built on $os.

Install into a prefix (e.g. /usr/local or \$HOME/.local):

    tar -xzf $name.tar.gz -C PREFIX --strip-components=1
    PREFIX/bin/ktctl --version
    man -M PREFIX/share/man ktctl

The binaries link these shared libraries' packages (Debian $(cut -d. -f1 /etc/debian_version) names; a
Debian or Ubuntu release with the same library versions works, where Ubuntu may add a t64 suffix):

    apt-get install $pkgline

The Debian package kt_${version}-1_${arch}.deb of the same release installs them for you.
Licence: Apache-2.0 (LICENSE); the libraries and their licences: NOTICE.
The install manifests are in share/kt/deploy (kubectl apply --server-side -k share/kt/deploy).
EOF
[ -f NOTICE ] || sed -i 's/; the libraries and their licences: NOTICE//' "$p/share/doc/kt/README.binary"

mkdir -p "$out"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$stage" -cf - "$name" |
    gzip -n -9 >"$out/$name.tar.gz.tmp"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
echo "bindist: $out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB; needs $pkgline)"
