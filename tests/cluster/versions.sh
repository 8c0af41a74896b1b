# tests/cluster/versions.sh - the pinned versions of the test control plane (sourced).
K8S_VERSION=1.35.4
K8S_MINOR=35
ETCD_VERSION=v3.6.6
JOBSET_VERSION=v0.12.0
SCHEDPLUGINS_VERSION=v0.35.4-devel
VOLCANO_VERSION=v1.13.0
# The binaries live outside the repo, one directory per version.
kt_cluster_bindir() {
    echo "${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/cluster/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
}
# kt_certgen_bin - path of the certificate generator built from tests/cluster/certgen.
kt_certgen_bin() {
    local h
    h=$(cat "$(dirname "${BASH_SOURCE[0]}")"/certgen/main.go "$(dirname "${BASH_SOURCE[0]}")"/certgen/go.mod |
        sha256sum | cut -c1-12)
    echo "$(kt_cluster_bindir)/kt-certgen-$h"
}
