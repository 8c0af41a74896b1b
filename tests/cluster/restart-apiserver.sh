#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/cluster/restart-apiserver.sh DIR [-- EXTRA_APISERVER_FLAGS...] - stop the API server of
# the cluster in DIR and start it again over the same etcd, port and certificates, then wait for
# /readyz. With "--" the given flags (possibly none) replace the extra flags of the previous start;
# without it the previous extra flags are kept. KT_APISERVER_PID in DIR/env is updated.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

restart_usage() {
    echo "usage: $0 DIR [-- EXTRA_APISERVER_FLAGS...]" >&2
    exit 2
}
[ $# -ge 1 ] || restart_usage
D=$(cd "$1" && pwd)
shift
[ -f "$D/env" ] || {
    kt_log "$D/env not found; start the cluster with up.sh first"
    exit 1
}
flags=()
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || restart_usage
    shift
    flags=("$@")
    : >"$D/apiserver.flags"
    [ $# -eq 0 ] || printf '%s\n' "$@" >"$D/apiserver.flags"
elif [ -s "$D/apiserver.flags" ]; then
    mapfile -t flags <"$D/apiserver.flags"
fi

port=$(kt_env_get "$D" KT_APISERVER_PORT)
ok=0
restart_cleanup() {
    kt_port_unlock
    if [ "$ok" -ne 1 ]; then
        kt_log "restart failed; logs follow"
        kt_print_logs "$D"
    fi
}
trap restart_cleanup EXIT
# Our own port: another up.sh must not pick it while the API server is down, and a lingering
# listener (should not happen after kt_stop) would make the start fail.
kt_port_lock
kt_stop "$(kt_env_get "$D" KT_APISERVER_PID)" kube-apiserver
kt_start_apiserver "$D" ${flags[@]+"${flags[@]}"} >/dev/null
pid=$(kt_env_get "$D" KT_APISERVER_PID)
kt_wait_listen "$pid" "$port" kube-apiserver
kt_port_unlock
kt_wait_ready "$D" "$pid"
ok=1
