# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/integration/certs_lib.sh - throwaway TLS certificates for the shell tests (sourced;
# not executable, so run.sh does not run it). Sourced by lib.sh and by tests/admission/tier.sh,
# which runs without a cluster and so cannot source lib.sh.

# it_serving_certs DIR CN DAYS - a throwaway CA (DIR/ca.crt, ca.key, common name CN) and a
# serving certificate for 127.0.0.1 signed by it (DIR/tls.crt, tls.key). Fails when openssl does.
it_serving_certs() {
    local d=$1
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" -days "$3" \
        -subj "/CN=$2" 2>/dev/null &&
        openssl req -newkey rsa:2048 -nodes -keyout "$d/tls.key" -out "$d/tls.csr" \
            -subj /CN=127.0.0.1 2>/dev/null &&
        printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$d/ext" &&
        openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
            -out "$d/tls.crt" -days "$3" -extfile "$d/ext" 2>/dev/null
}
