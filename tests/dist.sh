#!/usr/bin/env bash
# tests/dist.sh BUILD_DIR - `make dist`: dist/kt-<version>.tar.gz, a prefix layout under one
# top folder kt-<version>/:
#   bin/kt-webhook bin/kt-reconciler bin/ktctl   (stripped, from BUILD_DIR/bin)
#   share/kt/api/      the CRDs and their kustomization
#   share/kt/deploy/   the install manifests (deploy/kustomization.yaml finds ../api)
#   share/doc/kt/      README.md, docs/
#   share/man/man1/    ktctl.1, ktctl-SUBCOMMAND.1; share/man/man8/ kt-webhook.8 kt-reconciler.8
#                      (docs/man/build.sh: help2man from the binaries' --help, like `make man`)
# Install: tar -xzf kt-<version>.tar.gz -C PREFIX --strip-components=1
# The archive is reproducible (sorted, owner 0, mtime of the last commit).
# Knobs: KT_VERSION (default: git describe), KT_DIST_DIR (default: dist).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
b=${1:-build/plain}
version=${KT_VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.0.0)}
out=${KT_DIST_DIR:-dist}
name="kt-$version"

for f in kt-webhook kt-reconciler ktctl; do
    [ -x "$b/bin/$f" ] || {
        echo "dist: $b/bin/$f missing (make)" >&2
        exit 1
    }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
p="$stage/$name"
mkdir -p "$p/bin" "$p/share/kt" "$p/share/doc/kt"
for f in kt-webhook kt-reconciler ktctl; do
    install -m 0755 "$b/bin/$f" "$p/bin/$f"
    strip --strip-unneeded "$p/bin/$f" 2>/dev/null || true
done
mkdir -p "$p/share/kt/api"
cp api/*.yaml "$p/share/kt/api/"
cp -R deploy "$p/share/kt/deploy"
cp README.md "$p/share/doc/kt/"
cp -R docs "$p/share/doc/kt/docs"
docs/man/build.sh "$b/bin" "$stage/man" >/dev/null
mkdir -p "$p/share/man/man1" "$p/share/man/man8"
install -m 0644 "$stage"/man/*.1 "$p/share/man/man1/"
install -m 0644 "$stage"/man/*.8 "$p/share/man/man8/"
mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
mkdir -p "$out"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$stage" -cf - "$name" |
    gzip -n -9 >"$out/$name.tar.gz"
echo "dist: $out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB)"
