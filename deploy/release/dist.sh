#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/dist.sh OUTDIR - `make dist`: the source tarball OUTDIR/kt-VERSION.tar.gz, the
# committed tree of HEAD (`git archive`) under one top folder kt-VERSION/. What is not committed
# is not in it (a dirty work tree is reported, not packed). Reproducible: git archive writes
# the entries in tree order with the commit's time and fixed modes, and `gzip -n` leaves out the
# name and time, so the same commit gives the same bytes. `make` builds it after extraction
# (it needs no .git). Knob: KT_DIST_REF (default HEAD) packs another commit or tag.
set -euo pipefail
# shellcheck source=deploy/release/lib.sh
. "$(dirname "$0")/lib.sh"
out=${1:?usage: deploy/release/dist.sh OUTDIR}
ref=${KT_DIST_REF:-HEAD}
# the version of the packed commit, which need not be the work tree's
v=$(git -C "$rel_root" show "$ref:common/base/version.h" | sed -n 's/^#define KT_RELEASE "\(.*\)"$/\1/p')
name="kt-$v"
if [ -n "$(git -C "$rel_root" status --porcelain --untracked-files=no)" ]; then
    echo "dist: the work tree has uncommitted changes; the tarball holds $ref only" >&2
fi
mkdir -p "$out"
git -C "$rel_root" archive --format=tar --prefix="$name/" "$ref" | gzip -n -9 >"$out/$name.tar.gz.tmp"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
echo "dist: $out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB, $(git -C "$rel_root" rev-parse --short "$ref"))"
