# tests/cluster/versions.sh - the pinned versions of the test control plane (sourced).
K8S_VERSION=1.35.4
K8S_MINOR=35
ETCD_VERSION=v3.6.6
# The full chain (up.sh --full): JobSet controller (what trainer v2.3.0 pins), KWOK, and the
# coscheduling scheduler of scheduler-plugins (same k8s.io/kubernetes as above). Their binaries
# carry the version in their names inside kt_cluster_bindir.
JOBSET_VERSION=v0.12.0
KWOK_VERSION=v0.8.0
SCHEDPLUGINS_VERSION=v0.35.4-devel
# Volcano publishes no CRD YAML in a Go module (volcano.sh/volcano is refused by the proxy: 403);
# build.sh generates the PodGroup CRD from volcano.sh/apis (pinned in volcano/go.mod, the
# pseudo-version upstream trainer uses) with controller-gen, as volcano's own Makefile does.
CONTROLLER_TOOLS_VERSION=v0.21.0
# The real node's cluster DNS (up.sh --real-node), built from its Go module (tests/cluster/coredns:
# our main package with the plugins the Corefile uses; the binary's name carries a hash of it).
COREDNS_VERSION=v1.14.2
COREDNS_BIN=coredns-$COREDNS_VERSION-$(cat "$(dirname "${BASH_SOURCE[0]}")"/coredns/main.go \
    "$(dirname "${BASH_SOURCE[0]}")"/coredns/go.sum | sha256sum | cut -c1-8)
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
