#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/cluster/down.sh DIR - stop what up.sh [--full] [--real-node] DIR started (the chain's
# components first; then the real node: its pods drained, its processes stopped, the machine
# restored and checked;
# then kube-apiserver and etcd; by PID: SIGTERM, then SIGKILL after a bounded wait) and remove the tmpfs etcd data. Idempotent:
# running it again, or on a DIR whose start failed half-way, is fine. DIR itself is kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 1 ] || {
    echo "usage: $0 DIR" >&2
    exit 2
}
D=$1
[ -f "$D/env" ] || exit 0
rc=0
. "$here/full.sh"
. "$here/node.sh"
# the controllers first (nothing re-creates the pods the node then drains), the node while the
# API server still answers
kt_full_stop "$D" || rc=1
kt_node_stop "$D" || rc=1
kt_stop "$(kt_env_get "$D" KT_APISERVER_PID)" kube-apiserver || rc=1
kt_stop "$(kt_env_get "$D" KT_ETCD_PID)" etcd || rc=1
kt_etcd_data_drop "$D"
exit "$rc"
