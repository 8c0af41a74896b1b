#!/usr/bin/env bash
# tests/cluster/images/import.sh SOCKET NAME... - make the test images NAME... (build.sh: pause,
# torch, mpi, xgboost) present in the containerd listening on SOCKET, namespace k8s.io, where the
# kubelet's CRI finds them: builds them when the cache lacks them, then imports (and unpacks into
# the default snapshotter) each archive unless an image named REF with the archive's manifest
# digest is already there. Prints `NAME REF` per image on stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "images: $*" >&2; }

[ $# -ge 2 ] || {
    echo "usage: $0 SOCKET NAME... (pause torch mpi xgboost)" >&2
    exit 2
}
sock=$1
shift
ctr=(ctr --address "$sock" --namespace k8s.io)

# present_digest REF - the target digest of image REF in the containerd, empty when absent.
present_digest() {
    "${ctr[@]}" images ls "name==$1" | awk -v r="$1" '$1 == r { print $3 }'
}

lines=$("$here/build.sh" "$@")
while read -r name ref path; do
    want=$(tar -xOf "$path" ./index.json | jq -r '.manifests[0].digest')
    if [ "$(present_digest "$ref")" = "$want" ]; then
        log "$ref already imported ($want)"
    else
        t0=$(date +%s)
        "${ctr[@]}" images import "$path" >&2 </dev/null
        got=$(present_digest "$ref")
        [ "$got" = "$want" ] || {
            log "importing $path did not create $ref@$want (found: '${got:-nothing}')"
            exit 1
        }
        log "imported $ref in $(($(date +%s) - t0)) s"
    fi
    echo "$name $ref"
done <<<"$lines"
