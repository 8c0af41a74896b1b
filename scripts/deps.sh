#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/deps.sh - install exactly the Debian packages kt uses, only when missing: the build,
# the sanitizers and tools of the tiers, the real node's container runtime (containerd, runc,
# the CNI plugins, iptables; tests/cluster/node.sh), the image builders (mmdebstrap, umoci) and
# the man pages' tools (help2man writes them from --help, groff checks them; `make man`).
# Runs `apt-get update` at most once, and only when something is missing.
set -euo pipefail
pkgs="build-essential pkg-config libmicrohttpd-dev libgnutls28-dev nettle-dev libjansson-dev
libcurl4-gnutls-dev libyaml-dev clang libclang-rt-14-dev clang-format valgrind openssl curl jq
containerd runc containernetworking-plugins iptables mmdebstrap umoci help2man groff-base shellcheck"
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -c "install ok installed" >/dev/null; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    exit 0
fi
echo "deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
