#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/build/tier.sh BUILD_DIR - the Makefile rebuilds what was compiled with other flags:
# objects depend on $(B)/.build-flags, rewritten when CC, CFLAGS, WERROR, SANITIZER, LDFLAGS or
# the libraries change (docs/development.md "Building"). One object in a scratch build folder,
# asked with `make -q` (exit 0: up to date, 1: would rebuild), in a scratch folder that keeps
# the real build untouched. Then running one test: KT_ONLY (tests/lib.sh kt_only) on BUILD_DIR's ktctl
# and tests/run.sh's usage error.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib.sh"
# The scratch build must not inherit the calling make's variables (make unit WERROR=1 passes
# them down in MAKEFLAGS) nor make test's exported WERROR.
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR SANITIZER CFLAGS LDFLAGS

sb="$T/b"
obj="$sb/common/base/str.o"
scratch_make() { make -s -C "$root" B="$sb" "$@"; }
# up_to_date VARS... - make -q says obj needs nothing with these variables.
up_to_date() { scratch_make -q "$@" "$obj" >/dev/null 2>&1; }

check builds scratch_make "$obj"
check same-flags-up-to-date up_to_date
if up_to_date WERROR=1; then
    bad werror-rebuilds "make -q WERROR=1 after a plain build says $obj is up to date"
else
    ok werror-rebuilds
fi
check werror-builds scratch_make WERROR=1 "$obj"
check werror-then-up-to-date up_to_date WERROR=1
if up_to_date CFLAGS=-DKT_FLAGS_PROBE=1 WERROR=1; then
    bad cflags-rebuilds "a new CFLAGS left $obj up to date"
else
    ok cflags-rebuilds
fi
if up_to_date; then
    bad back-to-plain-rebuilds "the plain flags after a WERROR build left $obj up to date"
else
    ok back-to-plain-rebuilds
fi
if grep -q -- '-Werror' "$sb/.build-flags" 2>/dev/null; then
    bad flags-file-follows "$sb/.build-flags still names -Werror after a plain make"
else
    ok flags-file-follows
fi

# Running one test (tests/lib.sh kt_only, tests/run.sh): a pattern picks exactly its cases; one that
# matches nothing runs none; an unknown tier is a usage error.
vt="$root/tests/validate/tier.sh"
b=${1:-build/plain}
case "$b" in /*) ;; *) b="$root/$b" ;; esac
if [ -x "$b/bin/ktctl" ]; then
    KT_ONLY=validate/tj-quantity "$vt" "$b" >"$T/one.log" 2>&1
    if [ "$(tail -n 1 "$T/one.log")" = "1 passed, 0 failed" ]; then ok only-one-case; else bad only-one-case "$(tail -n 3 "$T/one.log")"; fi
    KT_ONLY='validate/tj-quantity validate/tj-ttl' "$vt" "$b" >"$T/two.log" 2>&1
    if [ "$(tail -n 1 "$T/two.log")" = "2 passed, 0 failed" ]; then ok only-two-patterns; else bad only-two-patterns "$(tail -n 3 "$T/two.log")"; fi
    KT_ONLY=validate/no-such-case "$vt" "$b" >"$T/none.log" 2>&1
    if [ "$(tail -n 1 "$T/none.log")" = "0 passed, 0 failed" ]; then ok only-no-match; else bad only-no-match "$(tail -n 3 "$T/none.log")"; fi
fi
if exits 2 "$root/tests/run.sh" no-such-tier; then ok run-unknown-tier; else bad run-unknown-tier "tests/run.sh no-such-tier did not exit 2"; fi
kt_finish
