# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/node/make_run.sh - `make run` (scripts/demo/run.sh, stdin closed) and the real node
# (sourced by tests/node/run.sh; uses its ok/bad/check, T and D).
#   make_run_busy - while the tier's cluster holds the node: KT_RUN_NODE=auto says in one line
#                   that the node is in use and runs the demo on KWOK nodes; a bad KT_RUN_NODE
#                   is refused before anything starts.
#   stale_node    - after the tier's teardown: a second real node with a container running,
#                   every process of its cluster then killed (as when a run's session ends hard):
#                   its containers, shims' mounts, bridge, cgroups and sysctls stay behind.
#   make_run_real - then: KT_RUN_NODE=real reaps that stale node (tests/cluster/node.sh
#                   kt_node_reap), the example trains on the real node, its log lines stream
#                   into the output, everything stops cleanly and nothing of the stale node is left.

# demo NAME [VAR=VALUE...] - run the demo in $T/NAME.dir with the given environment; output in
# $T/NAME.out, exit code in $T/NAME.rc.
demo() {
    local name=$1
    shift
    env "$@" KT_RUN_DIR="$T/$name.dir" scripts/demo/run.sh </dev/null >"$T/$name.out" 2>&1
    echo $? >"$T/$name.rc"
}
says() { grep -qE -- "$2" "$T/$1.out"; } # says NAME REGEX
demo_ok() { [ "$(cat "$T/$1.rc")" = 0 ] && says "$1" '^It works\.'; }
# demo_left NAME - no daemon of the demo still running (its --portfile names its folder)
demo_left() {
    local c
    for c in /proc/[0-9]*/cmdline; do
        tr '\0' ' ' <"$c" 2>/dev/null | grep -cF -- "--portfile $T/$1.dir/" >/dev/null && return 0
    done 2>/dev/null
    return 1
}

no_daemon_left() { ! demo_left "$1"; }

make_run_busy() {
    demo bad-mode KT_RUN_NODE=bogus
    check make-run-bad-mode-refused bash -c "[ \"\$(cat '$T/bad-mode.rc')\" != 0 ] &&
        grep -q 'KT_RUN_NODE=bogus: want auto, real or kwok' '$T/bad-mode.out' && [ ! -e '$T/bad-mode.dir/env' ]"
    demo busy KT_RUN_NODE=auto
    check make-run-node-busy-says-why says busy "real node unavailable: in use by the cluster in $D"
    check make-run-node-busy-falls-back-to-kwok says busy ': Succeeded on kwok-node-'
    check make-run-node-busy-complete demo_ok busy
    demo_ok busy || grep -vE '^    [IWE][0-9]{4} ' "$T/busy.out" | tail -n 40 | sed 's/^/    make run: /'
    check make-run-node-busy-node-still-ours kc get node "$KT_NODE_NAME"
}

# node_left DIR - what DIR's real node still holds on the machine (tests/cluster/node.sh).
node_left() { bash -c '. tests/cluster/lib.sh && . tests/cluster/node.sh && kt_node_left "$1"' _ "$1"; }

stale_k() { "$KT_KUBECTL" --kubeconfig "$S/admin.kubeconfig" "$@"; }

stale_node() {
    local pause
    S=$(mktemp -d "${TMPDIR:-/tmp}/kt-node-stale.XXXXXX")
    kt_cleanup 'tests/cluster/down.sh "$S"; rm -rf "$S"'
    if ! tests/cluster/up.sh --real-node "$S" >/dev/null 2>"$T/stale-up.log"; then
        bad stale-node-up "$(tail -n 5 "$T/stale-up.log")"
        return 1
    fi
    pause=$(tests/cluster/images/build.sh pause 2>/dev/null | awk '$1 == "pause" { print $2 }')
    stale_k run stale --image="$pause" --image-pull-policy=Never --restart=Never \
        --overrides='{"spec": {"nodeName": "kt-node", "automountServiceAccountToken": false}}' >/dev/null
    check stale-node-container-runs stale_k wait pod/stale --for=condition=Ready --timeout="${WAIT}s"
    # the hard stop: every process of the cluster at once, nothing gets to clean up
    # (the pattern's [/] keeps the poll's own command line from matching it)
    pkill -KILL -f -- "${S}[/]"
    kt_poll -m "processes of $S gone" 10 bash -c "! pgrep -f -- '${S}[/]'"
    node_left "$S" >"$T/stale.left"
    check stale-node-left-set-up grep -E 'teardown-not-run .*container-processes:[0-9]+ mounts:[0-9]+ bridge:' "$T/stale.left"
}

make_run_real() {
    demo real KT_RUN_NODE=real
    check make-run-real-reaped-stale-node says real "reaping the real node of $S, whose cluster is gone"
    node_left "$S" >"$T/stale.after"
    check make-run-real-nothing-of-stale-node-left test ! -s "$T/stale.after"
    check make-run-real-complete demo_ok real
    demo_ok real || grep -vE '^    [IWE][0-9]{4} ' "$T/real.out" | tail -n 40 | sed 's/^/    make run: /'
    check make-run-real-ten-steps test "$(grep -c '^==> \[[0-9]*/10\]' "$T/real.out")" = 10
    check make-run-real-pods-on-real-node says real ': Succeeded on kt-node$'
    check make-run-real-not-on-kwok bash -c "! grep -q ': Running on kwok-node-' '$T/real.out'"
    check make-run-real-image-local says real 'image kt\.local/torch:'
    check make-run-real-logs-both-ranks bash -c "[ \$(grep -cE '^      \| \[pod/mnist-node-0-[01]-[a-z0-9]+/node\] world size 2 rank [01]' '$T/real.out') = 2 ]"
    check make-run-real-logs-loss-went-down says real '\| \[pod/mnist-node-0-0-[a-z0-9]+/node\] rank 0/2 done final loss'
    check make-run-real-condition says real 'Complete=True reason=AllJobsCompleted'
    check make-run-real-teardown bash -c "! grep -qE 'down.sh failed|make run failed' '$T/real.out' ||
        { tail -n 20 '$T/real.dir/down.log'; false; }"
    check make-run-real-no-daemon-left no_daemon_left real
    echo "node: make run on the real node: $(grep -o 'Demo took [0-9.]*s' "$T/real.out")," \
        "$(grep -o 'done in [0-9.]*s' "$T/real.out")"
}
