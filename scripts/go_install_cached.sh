#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/go_install_cached.sh NAME VERSION PACKAGE [LDFLAGS [TAGS]] - a Go tool the tiers need
# (helm, promtool): `go install PACKAGE@VERSION` with the module's own go.mod and go.sum (the
# dependency set its authors released) into ${KT_CACHE_DIR:-~/.cache/kt}/NAME-VERSION/NAME
# (NAME-VERSION-TAGS with build tags, commas as dashes), outside the repo; skipped when
# present; one build at a time per binary (flock); built at low priority (nice -n 10: the
# machine is shared). NAME is PACKAGE's last element (what go install names the binary).
# LDFLAGS default "-s -w". Prints the binary's path on its last line.
set -euo pipefail
[ $# -ge 3 ] || {
    echo "usage: $0 NAME VERSION PACKAGE [LDFLAGS]" >&2
    exit 2
}
name=$1 version=$2 pkg=$3 ldf=${4:--s -w} tags=${5:-}
dir="${KT_CACHE_DIR:-$HOME/.cache/kt}/$name-$version${tags:+-${tags//,/-}}"
bin="$dir/$name"
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.build.lock"
flock 9
if [ ! -x "$bin" ]; then
    echo "go-install: building $name $version from $pkg (cold: several minutes)" >&2
    GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS='' GOBIN="$dir/tmp" \
        nice -n 10 go install -trimpath -tags "$tags" -ldflags "$ldf" "$pkg@$version"
    mv "$dir/tmp/$name" "$bin"
    rmdir "$dir/tmp"
fi
echo "$bin"
