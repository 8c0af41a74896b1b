#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/webhook_drain.sh ENV_FILE - how kt-webhook leaves and how its workers wait
# for a CPU (docs/operating.md#shutdown, docs/benchmarks.md#the-webhook-as-the-api-server-sees-it).
# Drain: with --drain-seconds 60, SIGTERM makes /readyz 503, closes the keep-alive connection
# that was idle, answers the request in flight on another with `Connection: close`, and still
# accepts and answers a new connection (tests/reliability/drain.py; before the signal the same
# connections are kept alive: the negative control, one of them reused after 12 s idle, past
# the first-request deadline); a second SIGTERM ends the drain and the
# daemon exits 0. Short slices: on Linux 6.12+ the worker thread that served a review runs with
# the fair scheduler's shortest slice (0.1 ms, /proc/PID/task/TID/sched se.slice) while the
# health server's thread keeps the default; older kernels print why the check is skipped.
. "$(dirname "$0")/lib.sh" "$@"
rel_webhook_start drain --drain-seconds 60 || { bad drain-start "kt-webhook did not start"; kt_finish; }

# slice_of NAME - the se.slice of each of kt-webhook's threads called NAME, one per line.
slice_of() {
    local t
    for t in /proc/"$WPID"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = "$1" ] || continue
        awk '$1 == "se.slice" { print $3 }' "$t/sched" 2>/dev/null
    done
}
# kernel_at_least MAJOR MINOR - the running kernel is at least MAJOR.MINOR.
kernel_at_least() {
    local v maj min
    v=$(uname -r)
    maj=${v%%.*}
    min=${v#*.}
    min=${min%%[!0-9]*}
    [ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}
check drain-review-before rel_review
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$HPORT/readyz"
if kernel_at_least 6 12 && [ -n "$(slice_of MHD-worker)" ]; then
    slice_of MHD-worker >"$T/worker.slices"
    slice_of MHD-single >"$T/single.slices"
    check slice-worker-short grep -qx 100000 "$T/worker.slices"
    if [ -s "$T/single.slices" ] && ! grep -qx 100000 "$T/single.slices"; then
        ok slice-health-default
    else
        bad slice-health-default "the health server's thread slices: $(tr '\n' ' ' <"$T/single.slices")"
    fi
else
    echo "  short slices not checked: kernel $(uname -r) (custom slices need Linux 6.12+) or no se.slice in /proc"
fi

python3 "$REL_DIR/drain.py" "$PORT" "$HPORT" "$T/ca.crt" "$REL_VALID" "$WPID" >"$T/drain.out" 2>&1
kt_relay "$T/drain.out" drain-client
kt_daemon_stop drain TERM
rc=$?
if [ "$rc" = 0 ] && grep -q 'second signal: ending the drain' "$T/drain.log"; then
    ok drain-second-signal-exits
else
    bad drain-second-signal-exits "exit $rc; log: $(tail -n 5 "$T/drain.log")"
fi
rel_sanitizer_clean drain-sanitizer-clean "$T/drain.log"
kt_finish
