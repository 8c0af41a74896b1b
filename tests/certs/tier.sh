#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/certs/tier.sh BUILD_DIR - `ktctl certs` as a user runs it, cross-checked with
# openssl: the four files and their modes, the SANs, the chain, --renew-server keeping the
# CA, --issued-at, the folder being created, and the usage errors (exit 2) and failures
# (exit 1). No cluster, no clock assertions (validity is checked with -attime/-checkend
# relative to the --issued-at given).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=${1:-build/plain}
case "$b" in /*) ;; *) b="$root/$b" ;; esac
K="$b/bin/ktctl"
. "$root/tests/lib.sh"

check certs-writes-folder "$K" certs -q --dir "$T/a/b" --san IP:127.0.0.1 --san DNS:localhost
check certs-modes test "$(stat -c '%a' "$T/a/b/ca.crt" "$T/a/b/ca.key" "$T/a/b/tls.crt" "$T/a/b/tls.key" | tr '\n' ' ')" = "644 600 644 600 "
check certs-chain openssl verify -CAfile "$T/a/b/ca.crt" "$T/a/b/tls.crt"
sans() { openssl x509 -in "$1" -noout -ext subjectAltName | tail -1 | tr -d ' '; }
check certs-server-sans test "$(sans "$T/a/b/tls.crt")" = "DNS:kubeflow-trainer-controller-manager.kubeflow-system.svc,DNS:localhost,IPAddress:127.0.0.1"
check certs-ca-names test "$(openssl x509 -in "$T/a/b/ca.crt" -noout -subject -nameopt RFC2253)" = "subject=CN=kubeflow-trainer-ca,O=kubeflow-trainer"
check certs-key-pkcs1 grep -q 'BEGIN RSA PRIVATE KEY' "$T/a/b/tls.key"
check certs-service-namespace "$K" certs -q --dir "$T/s" --service hooks --namespace team-a
check certs-service-namespace-san test "$(sans "$T/s/tls.crt")" = "DNS:hooks.team-a.svc"

# --issued-at: valid from then - 1h for one year (server) and ten years (CA).
at=1800000000
check certs-issued-at "$K" certs -q --dir "$T/old" --issued-at "$at"
check certs-issued-at-chain openssl verify -attime $((at + 86400)) -CAfile "$T/old/ca.crt" "$T/old/tls.crt"
check certs-issued-at-expired bash -c "! openssl verify -attime $((at + 366 * 86400)) -CAfile '$T/old/ca.crt' '$T/old/tls.crt'"

# --renew-server: same CA, new serving certificate, still chains.
cp "$T/a/b/ca.crt" "$T/ca.before"
cp "$T/a/b/tls.crt" "$T/tls.before"
check certs-renew-server "$K" certs -q --dir "$T/a/b" --renew-server --san IP:127.0.0.1
check certs-renew-keeps-ca cmp "$T/a/b/ca.crt" "$T/ca.before"
check certs-renew-new-cert bash -c "! cmp -s '$T/a/b/tls.crt' '$T/tls.before'"
check certs-renew-chain openssl verify -CAfile "$T/a/b/ca.crt" "$T/a/b/tls.crt"

# Failures and usage errors.
check certs-bad-san-usage exits 2 "$K" certs --dir "$T/x" --san 'DNS:bad name'
check certs-bad-san-writes-nothing test ! -e "$T/x"
check certs-unknown-flag exits 2 "$K" certs --bogus
check certs-missing-value exits 2 "$K" certs --dir
check certs-bad-issued-at exits 2 "$K" certs --issued-at soon
check certs-empty-dir exits 2 "$K" certs --dir ""
rm -f "$T/a/b/ca.key"
check certs-renew-needs-ca-key exits 1 "$K" certs --dir "$T/a/b" --renew-server
check certs-renew-needs-folder exits 1 "$K" certs --dir "$T/none" --renew-server
: >"$T/file"
check certs-dir-is-file exits 1 "$K" certs --dir "$T/file"
check certs-help exits 0 "$K" certs --help
# A CA already in DIR is not replaced silently (docs/ktctl.md#ktctl-certs): refused, files untouched; --force
# replaces it; --force with --renew-server is a usage error.
cp "$T/old/ca.crt" "$T/ca.kept"
check certs-existing-ca-refused exits 1 "$K" certs -q --dir "$T/old"
check certs-existing-ca-untouched cmp "$T/old/ca.crt" "$T/ca.kept"
check certs-force-replaces-ca "$K" certs -q --dir "$T/old" --force
check certs-force-new-ca bash -c "! cmp -s '$T/old/ca.crt' '$T/ca.kept'"
check certs-force-chain openssl verify -CAfile "$T/old/ca.crt" "$T/old/tls.crt"
check certs-force-and-renew exits 2 "$K" certs --dir "$T/old" --force --renew-server
"$K" certs --help >"$T/certs-help.txt"
for flag in --dir --service --namespace --san --renew-server --force --issued-at --quiet; do
    check "certs-help-lists$flag" test "$(grep -c -- "^      [-a-z, ]*$flag" "$T/certs-help.txt")" = 1
done
kt_finish
