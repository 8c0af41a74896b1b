#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/plugins/build.sh BUILD_DIR - build the example plugins into BUILD_DIR/plugins/*.so.
# Each is compiled from its own file against api/kt_plugin.h ONLY (no libkt.a): that is the
# contract. Warnings are errors. Sanitizer builds of the host load them unchanged.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$1/plugins"
mkdir -p "$out"
cc=${CC:-cc}
# shellcheck disable=SC2054 # commas inside a compiler flag, not between elements
flags=(-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wcast-qual -Wwrite-strings -fPIC -shared -fvisibility=hidden
    -I"$root" -Wl,--no-undefined)
build_plugin() { # name source [extra flags]
    local name=$1 src=$2
    shift 2
    "$cc" "${flags[@]}" "$@" -o "$out/$name.so" "$root/tests/plugins/$src"
}
build_plugin tensorflow tensorflow.c
build_plugin mxnet mxnet.c
build_plugin require_label require_label.c
build_plugin extra_configmap extra_configmap.c
build_plugin minimal minimal.c
build_plugin status_stub status_stub.c
build_plugin bad_abi bad_abi.c
build_plugin bad_minor bad_abi.c -DBAD_MINOR
build_plugin bad_claim bad_abi.c -DBAD_CLAIM
