#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/dist/tier.sh BUILD_DIR - the binary tarball (`make bindist`, deploy/release/bindist.sh)
# end to end, outside the repo: build it from BUILD_DIR into a temp folder, check its README
# names the Debian packages of the libraries the binaries link, install it into a temp prefix, and from a folder outside
# the work tree run the installed ktctl (validate the shipped runtimes and an example, refuse
# a bad one, issue certificates), the daemons' usage and the man pages (share/man/man1, man8:
# each one there, groff renders it without a warning, `man -M PREFIX/share/man` finds it).
# Nothing here needs a cluster.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=${1:-build/plain}
case "$b" in /*) ;; *) b="$root/$b" ;; esac
. "$root/tests/lib.sh"

n="kt-test-linux-$(dpkg --print-architecture)"
if KT_VERSION="test" "$root/deploy/release/bindist.sh" "$b" "$T/dist" >"$T/dist.log" 2>&1; then
    ok dist-builds
else
    bad dist-builds "$(cat "$T/dist.log")"
    kt_finish
fi
tgz="$T/dist/$n.tar.gz"
tar -tzf "$tgz" | sort >"$T/list"
for f in kt-test/share/doc/kt/LICENSE kt-test/share/doc/kt/README.binary kt-test/bin/ktctl kt-test/bin/kt-webhook kt-test/bin/kt-reconciler \
    kt-test/share/kt/api/kustomization.yaml kt-test/share/kt/api/trainer.kubeflow.org_trainjobs.yaml \
    kt-test/share/kt/deploy/kustomization.yaml kt-test/share/kt/deploy/runtimes/torch-distributed.yaml \
    kt-test/share/kt/deploy/manager/controller_manager_config.yaml kt-test/share/doc/kt/README.md \
    kt-test/share/man/man8/kt-webhook.8 kt-test/share/man/man8/kt-reconciler.8 \
    kt-test/share/man/man1/ktctl.1 kt-test/share/man/man1/ktctl-validate.1 \
    kt-test/share/man/man1/ktctl-render.1 kt-test/share/man/man1/ktctl-certs.1 \
    kt-test/share/man/man1/ktctl-status.1; do
    f=$n/${f#kt-test/}
    if grep -qx "$f" "$T/list"; then ok "dist-has $f"; else bad "dist-has $f" "not in the tarball"; fi
done
check dist-one-top-folder test "$(grep -vc "^$n/" "$T/list")" -eq 0
check dist-no-chart-or-scripts test "$(grep -cE '/deploy/(helm|image|release)/' "$T/list")" -eq 0
check dist-no-build-junk test "$(grep -cE '\.(o|d|a)$|/build/' "$T/list")" -eq 0

P="$T/prefix"
mkdir -p "$P" "$T/elsewhere"
check dist-installs tar -xzf "$tgz" -C "$P" --strip-components=1
cd "$T/elsewhere" || exit 1
# README.binary's apt-get line: the package of each library a binary links (NEEDED), never one
# it does not (ldd -> dpkg -S, so it follows the build).
grep '^    apt-get install ' "$P/share/doc/kt/README.binary" >apt-line
check dist-readme-names-jansson grep -qw libjansson4 apt-line
check dist-readme-names-microhttpd grep -qw libmicrohttpd12 apt-line
check dist-readme-not-unlinked bash -c "! grep -qw -e libssl3 -e libsystemd0 apt-line"
check dist-ktctl-validate-runtimes bash -c "'$P/bin/ktctl' validate '$P/share/kt/deploy/runtimes' 2>&1 | grep -c '8 objects checked, 0 invalid' >/dev/null"
cp "$root/scripts/demo/example-trainjob.yaml" job.yaml
check dist-ktctl-validate-example "$P/bin/ktctl" validate job.yaml "$P/share/kt/deploy/runtimes/torch-distributed.yaml"
sed 's/name: EPOCHS$/name: PET_NNODES/' job.yaml >bad.yaml
check dist-ktctl-refuses-bad bash -c "'$P/bin/ktctl' validate bad.yaml '$P/share/kt/deploy/runtimes/torch-distributed.yaml' | grep -c 'must not have reserved envs' >/dev/null; test \${PIPESTATUS[0]} -eq 1"
check dist-ktctl-render bash -c "'$P/bin/ktctl' render --runtime '$P/share/kt/deploy/runtimes/torch-distributed.yaml' -o json job.yaml | jq -e '[.items[].kind] == [\"ConfigMap\",\"JobSet\"]'"
check dist-ktctl-certs bash -c "'$P/bin/ktctl' certs -q --dir certs --san IP:127.0.0.1 && test -s certs/tls.crt && test -s certs/ca.key"
check dist-webhook-usage bash -c "'$P/bin/kt-webhook' --help 2>&1 | grep -c -- --tls-cert-file >/dev/null"
check dist-reconciler-usage bash -c "'$P/bin/kt-reconciler' --help 2>&1 | grep -c -- --kubeconfig >/dev/null"
for m in "$P"/share/man/man*/*; do
    check "dist-man-renders ${m#"$P"/}" bash -c "w=\$(groff -ww -z -man '$m' 2>&1); echo \"\$w\"; test -z \"\$w\""
done
export LC_ALL=C MANWIDTH=200 MANPAGER=cat
check dist-man-finds-ktctl-certs bash -c "man -M '$P/share/man' ktctl-certs | grep -c 'issue the CA and the serving certificate of kt-webhook' >/dev/null"
check dist-man-finds-kt-webhook bash -c "man -M '$P/share/man' 8 kt-webhook | grep -c -- '--tls-cert-file' >/dev/null"
kt_finish
