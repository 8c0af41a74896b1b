# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034 # every version here is read by the scripts that source this file
# scripts/cluster/versions.sh - the pinned versions of the test control plane (sourced).
# KT_K8S_VERSION=X.Y.Z selects another Kubernetes release for the control plane (make compat,
# docs/compatibility.md): its wrapper module is scripts/cluster/modules/k8s-X.Y/ (made by k8s-wrapper.sh),
# its binaries a cache directory of their own. The default's wrapper is scripts/cluster/modules/k8s/.
# Everything else below (etcd, JobSet, KWOK, scheduler-plugins) stays pinned for every release.
K8S_DEFAULT_VERSION=1.35.4
K8S_VERSION=${KT_K8S_VERSION:-$K8S_DEFAULT_VERSION}
K8S_MINOR=${K8S_VERSION#1.}
K8S_MINOR=${K8S_MINOR%%.*}
ETCD_VERSION=v3.6.6
# The full chain (up.sh --full): JobSet controller (what trainer v2.3.0 pins), KWOK, and the
# coscheduling scheduler of scheduler-plugins (same k8s.io/kubernetes as above). Their binaries
# carry the version in their names inside kt_cluster_bindir.
JOBSET_VERSION=v0.12.0
KWOK_VERSION=v0.8.0
SCHEDPLUGINS_VERSION=v0.35.4-devel
# Volcano publishes no CRD YAML in a Go module (volcano.sh/volcano is refused by the proxy: 403);
# build.sh generates the PodGroup CRD from volcano.sh/apis (pinned in modules/volcano/go.mod, the
# pseudo-version upstream trainer uses) with controller-gen, as volcano's own Makefile does.
CONTROLLER_TOOLS_VERSION=v0.21.0
# The real node's cluster DNS (up.sh --real-node), built from its Go module (scripts/cluster/modules/coredns:
# our main package with the plugins the Corefile uses; the binary's name carries a hash of it).
COREDNS_VERSION=v1.14.2
COREDNS_BIN=coredns-$COREDNS_VERSION-$(cat "$(dirname "${BASH_SOURCE[0]}")"/modules/coredns/main.go \
    "$(dirname "${BASH_SOURCE[0]}")"/modules/coredns/go.sum | sha256sum | cut -c1-8)
# The real node's containerd and its runc shim, built from their Go module (scripts/cluster/modules/containerd):
# Debian bookworm's containerd 1.6 has no CDI, which Dynamic Resource Allocation drivers use to
# put devices into containers (containerd 1.7: enable_cdi). Both live in CONTAINERD_DIR inside
# kt_cluster_bindir (the shim is found on containerd's PATH by its fixed name).
CONTAINERD_VERSION=v1.7.35
CONTAINERD_DIR=containerd-$CONTAINERD_VERSION
# Kubernetes' own DRA test driver (k8s.io/kubernetes/test/e2e/dra/test-driver, same module and
# release as the kubelet): a kubelet plugin publishing fake devices for the real node's DRA case.
DRA_DRIVER_BIN=dra-test-driver
# kt_k8s_module - the wrapper module (a directory under scripts/cluster/modules) of K8S_VERSION.
kt_k8s_module() {
    if [ "$K8S_VERSION" = "$K8S_DEFAULT_VERSION" ]; then
        echo k8s
    else
        echo "k8s-1.$K8S_MINOR"
    fi
}
# The binaries live outside the repo, one directory per version.
kt_cluster_bindir() {
    echo "${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/cluster/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
}
# kt_certgen_bin - path of the certificate generator built from scripts/cluster/modules/certgen.
kt_certgen_bin() {
    local h
    h=$(cat "$(dirname "${BASH_SOURCE[0]}")"/modules/certgen/main.go "$(dirname "${BASH_SOURCE[0]}")"/modules/certgen/go.mod |
        sha256sum | cut -c1-12)
    echo "$(kt_cluster_bindir)/kt-certgen-$h"
}
