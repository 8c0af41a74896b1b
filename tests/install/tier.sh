#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/install/tier.sh BUILD_DIR - `make install` / `make uninstall` (deploy/release/install.sh,
# which the Makefile runs) in a temporary DESTDIR with PREFIX=/usr: the files land where the GNU
# variables say, the installed ktctl runs from a folder outside the work tree (--version equals
# version.h, validates the installed runtimes, refuses a bad TrainJob; kubectl-kt is it), man -M
# finds the installed pages, and uninstall leaves nothing behind. Negative: a relative PREFIX, a
# DESTDIR path that is a file and a DESTDIR the user may not write are refused with a clear error
# and nothing written; uninstall with another PREFIX refuses; a file uninstall did not install stays.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=${1:-build/plain}
case "$b" in /*) ;; *) b="$root/$b" ;; esac
. "$root/tests/lib.sh"
inst="$root/deploy/release/install.sh"
version=$(make -s -C "$root" print-version)

S="$T/stage"
U="$S/usr"
if PREFIX=/usr DESTDIR="$S" "$inst" install "$b" >"$T/install.log" 2>&1; then
    ok install-runs
else
    bad install-runs "$(tail -c 600 "$T/install.log")"
fi
for f in bin/kt-webhook bin/kt-reconciler bin/ktctl share/man/man1/ktctl.1 share/man/man1/ktctl-validate.1 \
    share/man/man8/kt-webhook.8 share/man/man8/kt-reconciler.8 share/kt/api/kustomization.yaml \
    share/kt/api/trainer.kubeflow.org_trainjobs.yaml share/kt/deploy/kustomization.yaml \
    share/kt/deploy/runtimes/torch-distributed.yaml share/doc/kt/LICENSE share/doc/kt/NOTICE \
    share/doc/kt/CHANGELOG.md share/doc/kt/docs/install.md share/kt/deploy/helm/kt/crds/kustomization.yaml; do
    check "installed /usr/$f" test -f "$U/$f"
done
check "installed /usr/bin/kubectl-kt -> ktctl" test "$(readlink "$U/bin/kubectl-kt")" = ktctl
check "installed binaries are executable" test -x "$U/bin/ktctl" -a -x "$U/bin/kt-webhook" -a -x "$U/bin/kt-reconciler"
check "no scripts under share/kt" test "$(find "$U/share/kt" -name '*.sh' | wc -l)" -eq 0
for d in image release pre-commit; do
    check "no deploy/$d tooling under share/kt" test ! -e "$U/share/kt/deploy/$d"
done
check "nothing outside PREFIX" test "$(find "$S" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1

mkdir -p "$T/elsewhere"
cd "$T/elsewhere" || exit 1
check "installed ktctl --version = version.h ($version)" test "$("$U/bin/ktctl" --version | awk '{ print $1, $2 }')" = "ktctl $version"
check "installed kubectl-kt --version" test "$("$U/bin/kubectl-kt" --version | awk '{ print $2 }')" = "$version"
check "installed ktctl validates the installed runtimes" \
    bash -c "'$U/bin/ktctl' validate '$U/share/kt/deploy/runtimes' 2>&1 | grep -c 'objects checked, 0 invalid' >/dev/null"
cp "$root/scripts/demo/example-trainjob.yaml" job.yaml
sed 's/name: EPOCHS$/name: PET_NNODES/' job.yaml >bad.yaml
check "installed ktctl validates a good TrainJob" "$U/bin/ktctl" validate job.yaml "$U/share/kt/deploy/runtimes/torch-distributed.yaml"
check "installed ktctl refuses a bad TrainJob" bash -c "'$U/bin/ktctl' validate bad.yaml '$U/share/kt/deploy/runtimes/torch-distributed.yaml' >out 2>&1; rc=\$?; grep -q 'must not have reserved envs' out && test \$rc -eq 1"
export LC_ALL=C MANWIDTH=200 MANPAGER=cat
check "man -M finds ktctl-validate" bash -c "man -M '$U/share/man' ktctl-validate >out 2>&1; grep -q -- '--allow-missing-runtimes' out"
check "man -M finds kt-webhook(8)" bash -c "man -M '$U/share/man' 8 kt-webhook >out 2>&1; grep -q -- '--tls-cert-file' out"

# uninstall: refused under another PREFIX, then everything goes
check "negative: uninstall with another PREFIX refuses" bash -c "PREFIX=/opt DESTDIR='$S' '$inst' uninstall >out 2>&1; rc=\$?; grep -q 'kt is not installed there' out && test \$rc -eq 1 && test -f '$U/bin/ktctl'"
mkdir -p "$T/stage-b"
cp -a "$S/." "$T/stage-b/"
echo mine >"$T/stage-b/usr/share/kt/deploy/my-overlay.yaml"
check "uninstall runs" env PREFIX=/usr DESTDIR="$S" "$inst" uninstall
left=$(find "$S" -mindepth 1)
check "uninstall leaves nothing behind" test -z "$left"
check "uninstall keeps a file it did not install" bash -c "PREFIX=/usr DESTDIR='$T/stage-b' '$inst' uninstall >out 2>&1 && test \"\$(find '$T/stage-b' -type f)\" = '$T/stage-b/usr/share/kt/deploy/my-overlay.yaml' && grep -q 'kept, not empty' out"
check "negative: a manifest entry outside kt's directories is refused" bash -c "PREFIX=/usr DESTDIR='$T/stage-c' '$inst' install '$b' >/dev/null && echo 'f /etc/passwd' >>'$T/stage-c/usr/share/kt/installed-files' && ! PREFIX=/usr DESTDIR='$T/stage-c' '$inst' uninstall >out 2>&1 && grep -q 'outside kt' out && test -f '$T/stage-c/usr/bin/ktctl'"

# install refusals: nothing may be written
install_refused() { # NAME WANT DESTDIR CMD...: CMD exits 1 printing WANT, and DESTDIR holds no file
    local name=$1 want=$2 d=$3
    shift 3
    "$@" >"$T/ref.out" 2>&1
    local rc=$?
    if [ $rc -eq 1 ] && grep -q -- "$want" "$T/ref.out" && [ "$(find "$d" -type f ! -name blocker 2>/dev/null | wc -l)" -eq 0 ]; then
        ok "negative: $name"
    else
        bad "negative: $name" "rc=$rc $(head -c 300 "$T/ref.out"); files: $(find "$d" -type f 2>/dev/null | sed -n 1,3p)"
    fi
}
install_refused "a relative PREFIX is refused" "PREFIX must be an absolute path" "$T/stage-d" \
    env PREFIX=usr DESTDIR="$T/stage-d" "$inst" install "$b"
mkdir -p "$T/stage-e"
: >"$T/stage-e/blocker"
install_refused "a DESTDIR that is a file is refused" "is not a directory" "$T/stage-e" \
    env PREFIX=/usr DESTDIR="$T/stage-e/blocker" "$inst" install "$b"
mkdir -p "$T/ro"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    chmod 0711 "$T" # nobody may pass through, not write
    install_refused "a DESTDIR the user may not write is refused" "cannot write to $T/ro" "$T/ro" \
        setpriv --reuid=65534 --regid=65534 --clear-groups env PREFIX=/usr DESTDIR="$T/ro" "$inst" install "$b"
else
    chmod 0555 "$T/ro"
    install_refused "a DESTDIR the user may not write is refused" "cannot write to $T/ro" "$T/ro" \
        env PREFIX=/usr DESTDIR="$T/ro" "$inst" install "$b"
fi
kt_finish
