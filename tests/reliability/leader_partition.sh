#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/leader_partition.sh ENV_FILE - leadership expires on time (docs/development.md#the-reliability-tier): a
# leader that cannot renew within renewDeadline stops acting before a standby can take the
# Lease, so two replicas never act at once. Two drills on the real API server:
#   - a silent partition: the leader reaches kube-apiserver through tests/tools/tcp_relay,
#     which stops forwarding bytes while keeping every socket open (no error ever reaches the
#     leader's requests);
#   - etcd stopped (SIGSTOP of the etcd pid from ENV_FILE; always SIGCONTed).
# Each asserts that the old leader logged "leader election lost" and exited 1, and that its
# log line comes before the standby's "became leader" (one clock, one machine: an order, not
# a duration). Every wait is a bounded poll; nothing sleeps for readiness.
. "$(dirname "$0")/lib.sh" "$@"
RELAY="$REL_TOOLS/tcp_relay"
ETCD_STOPPED=""
kt_cleanup '[ -n "$ETCD_STOPPED" ] && kill -CONT "$ETCD_STOPPED"'

# elector NAME KUBECONFIG CONFIG - start a reconciler (kt_daemon: ready).
elector() {
    kt_daemon "$1" "$REL_RECONCILER" --kubeconfig "$2" --config "$3" --health-listen 127.0.0.1:0 \
        --metrics-listen 0 --workers 1
}
identity_of() { sed -n 's/.*leader election on lease=[^ ]* identity=\([^ ]*\).*/\1/p' "$T/$1.log" | tail -1; }
holder() { kc get lease "$1" -n kubeflow-system -o jsonpath='{.spec.holderIdentity}'; }
lease_held_by() { test "$(holder "$1")" = "$2"; } # LEASE IDENTITY
log_has() { grep -q "$2" "$T/$1.log"; }            # NAME TEXT
stamp() { grep -m1 "$2" "$T/$1.log" | cut -d' ' -f1; } # the line's RFC 3339 time

# le_config NAME LEASE - a Configuration with short durations (lease 4 s > renew 3 s).
le_config() {
    cat >"$T/$1" <<YAML
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: true
  resourceName: $2
  resourceNamespace: kubeflow-system
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
YAML
}

# handover OLD NEW LEASE - OLD stepped down (logged, exit 1) before NEW acquired LEASE.
handover() {
    local old=$1 new=$2 rc lost won
    kt_poll 60 kt_dead "$(rel_pid "$old")" || { echo "$old still running: $(tail -5 "$T/$old.log")"; return 1; }
    wait "$(rel_pid "$old")"
    rc=$?
    [ "$rc" = 1 ] || { echo "$old exited $rc, want 1"; return 1; }
    log_has "$old" 'leader election lost' || { echo "$old did not log the loss"; return 1; }
    kt_poll 60 lease_held_by "$3" "$(identity_of "$new")" || { echo "$new never acquired $3"; return 1; }
    kt_poll 60 log_has "$new" 'became leader' || return 1
    lost=$(stamp "$old" 'leader election lost')
    won=$(stamp "$new" 'became leader')
    echo "  $old lost at $lost, $new became leader at $won"
    [[ "$lost" < "$won" ]] || { echo "two leaders: $new acquired before $old stepped down"; return 1; }
}

kc apply -k "$KT_ROOT/deploy/rbac/reconciler" >/dev/null || { bad rbac "apply failed"; kt_finish; }
[ -x "$RELAY" ] || { bad relay "$RELAY missing (make itests)"; kt_finish; }
suffix=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')

# ---- a silent partition between the leader and kube-apiserver ----------------------------
partition() {
    local lease=kt-partition-$suffix
    le_config part.yaml "$lease"
    "$RELAY" "${KT_APISERVER##*:}" "$T/relay.port" 2>"$T/relay.log" &
    RELAY_PID=$!
    kt_cleanup "kill $RELAY_PID; wait $RELAY_PID"
    kt_poll 60 test -s "$T/relay.port" || return 1
    sed "s#server: .*#server: https://127.0.0.1:$(cat "$T/relay.port")#" \
        "$KT_RECONCILER_KUBECONFIG" >"$T/relay.kubeconfig"
    elector pa "$T/relay.kubeconfig" "$T/part.yaml" || return 1
    kt_poll 60 lease_held_by "$lease" "$(identity_of pa)" || { echo "pa never led"; return 1; }
    elector pb "$KT_RECONCILER_KUBECONFIG" "$T/part.yaml" || return 1
    # the standby stays a standby while the leader renews (each way this can fail says which)
    kt_poll 10 log_has pa 'became leader' || { echo "pa holds $lease but never logged 'became leader'"; return 1; }
    ! log_has pb 'became leader' || { echo "pb became leader before the cut: $(grep -m3 'leader' "$T/pa.log")"; return 1; }
    lease_held_by "$lease" "$(identity_of pa)" || { echo "the lease moved before the cut: holder $(holder "$lease")"; return 1; }
    local cut
    cut=$(date +%s%3N)
    kill -USR1 "$RELAY_PID"
    handover pa pb "$lease" || return 1
    echo "  partition: pa stopped $(($(date -d "$(stamp pa 'leader election lost')" +%s%3N) - cut)) ms after the cut (renewDeadline 3s), pb led $(($(date -d "$(stamp pb 'became leader')" +%s%3N) - cut)) ms after it"
}
rel_check leader-silent-partition-steps-down-first partition
[ -n "${PID_pb:-}" ] && kill -TERM "$PID_pb" 2>/dev/null

# ---- etcd stopped -------------------------------------------------------------------------
etcd_stall() {
    local lease=kt-etcd-stall-$suffix
    le_config etcd.yaml "$lease"
    elector ea "$KT_RECONCILER_KUBECONFIG" "$T/etcd.yaml" || return 1
    kt_poll 60 lease_held_by "$lease" "$(identity_of ea)" || { echo "ea never led"; return 1; }
    elector eb "$KT_RECONCILER_KUBECONFIG" "$T/etcd.yaml" || return 1
    ! log_has eb 'became leader' || { echo "eb became leader before etcd stopped: $(grep -m3 'leader' "$T/ea.log")"; return 1; }
    ETCD_STOPPED=$KT_ETCD_PID
    local cut
    cut=$(date +%s%3N)
    kill -STOP "$KT_ETCD_PID"
    # the leader steps down while etcd is still stopped
    kt_poll 60 kt_dead "$(rel_pid ea)" || { echo "ea did not step down with etcd stopped"; return 1; }
    kill -CONT "$KT_ETCD_PID"
    ETCD_STOPPED=""
    handover ea eb "$lease" || return 1
    echo "  etcd stopped: ea stopped $(($(date -d "$(stamp ea 'leader election lost')" +%s%3N) - cut)) ms after SIGSTOP (renewDeadline 3s)"
}
rel_check leader-etcd-stopped-steps-down etcd_stall
[ -n "$ETCD_STOPPED" ] && kill -CONT "$ETCD_STOPPED"
ETCD_STOPPED=""
check no-sanitizer-reports bash -c "! grep -A40 -E '(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|runtime error:' '$T'/*.log"

kt_finish
