#!/usr/bin/env bash
# tests/cluster/images/test.sh [NAME...] - check the test images for real: start a throwaway
# containerd (Debian containerd 1.6 + runc; root, state, socket and runc root under a temp dir; CRI
# plugin disabled), import.sh the images NAME... (default: all four) into it and run each with
# `ctr run --rm --net-host`: pause exits 0 on SIGTERM; torch trains DDP with torchrun on 2 ranks
# (world size 2, loss down) and fail.py exits 3; mpi runs allreduce.py with mpirun -np 2 locally
# and over SSH into a second container running sshd with a Secret-like ~/.ssh (ECDSA P-521 key
# in id_rsa, modes 0640/0644), as root and as the DeepSpeed runtime's mpiuser; xgboost trains
# with 2 workers + tracker. Then stops containerd and removes the directory (no mounts,
# containers or processes left). Prints `ok NAME` / `FAIL NAME: why` and the closing line
# (tests/lib.sh); exits non-zero when a check fails. Needs root.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"

D=$(mktemp -d /tmp/imgtest.XXXXXX)
SOCK=$D/containerd.sock
CPID=""

# ctr_ ARGS... - ctr against the throwaway containerd, namespace k8s.io.
ctr_() { ctr --address "$SOCK" --namespace k8s.io --connect-timeout 10s "$@"; }

# run_ ID REF [CTR_RUN_OPTION...] -- [COMMAND...] - ctr run --rm with host networking and our
# runc root (stdin /dev/null).
run_() {
    local id=$1 ref=$2 opts=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    ctr_ run --rm --net-host --runc-root "$D/runc" "${opts[@]}" "$ref" "$id" "$@" </dev/null
}

# start_containerd - write the config and start containerd; wait until it answers.
start_containerd() {
    cat >"$D/config.toml" <<EOF
version = 2
root = "$D/root"
state = "$D/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$D/opt"
EOF
    containerd --config "$D/config.toml" >"$D/containerd.log" 2>&1 9>&- &
    CPID=$!
    kt_poll 10 containerd_answers && kill -0 "$CPID" 2>/dev/null && return 0
    cat "$D/containerd.log" >&2
    return 1
}
containerd_answers() { ! kill -0 "$CPID" 2>/dev/null || ctr --address "$SOCK" version; } # or died

# images_test_cleanup - kill leftover tasks, stop containerd, unmount and remove $D.
images_test_cleanup() {
    local id m
    if [ -n "$CPID" ]; then
        for id in $(ctr_ task ls -q 2>/dev/null); do ctr_ task kill -s SIGKILL "$id" 2>/dev/null || true; done
        sleep 0.5
        for id in $(ctr_ container ls -q 2>/dev/null); do
            ctr_ task delete -f "$id" >/dev/null 2>&1 || true
            ctr_ container delete "$id" >/dev/null 2>&1 || true
        done
        kill "$CPID" 2>/dev/null || true
        wait "$CPID" 2>/dev/null || true
    fi
    for m in $(awk -v d="$D" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r); do
        umount -l "$m" || true
    done
    rm -rf --one-file-system "$D"
}
kt_cleanup images_test_cleanup

# test_pause REF - the sandbox process runs until SIGTERM and then exits 0.
test_pause() {
    local rc=0
    run_ pause-test "$1" -- &
    local p=$!
    sleep 2
    ctr_ task ls | grep -c '^pause-test .*RUNNING' >/dev/null || echo "pause-test not running"
    ctr_ task kill -s SIGTERM pause-test
    wait "$p" || rc=$?
    check "pause exits 0 on SIGTERM (rc $rc)" eval "[ $rc = 0 ]"
}

# test_torch REF - torchrun DDP on 2 ranks: both see world size 2, the loss goes down; fail.py exits 3.
test_torch() {
    local out rc=0 p=$((20000 + RANDOM % 10000))
    # --master_port: host networking, and 29500 may be taken on a shared machine.
    out=$(run_ torch-test "$1" -- torchrun --nnodes=1 --nproc_per_node=2 --master_port="$p" \
        /workspace/train_mnist.py 2>&1) || rc=$?
    echo "$out" | grep -E '^(world size|rank [01]/2 (epoch [0-9]+ step 1 |done))' >&2 || true
    [ "$rc" = 0 ] || echo "$out" >&2
    check "torch DDP exits 0 (rc $rc)" eval "[ $rc = 0 ]"
    check "both ranks see world size 2" eval \
        "[ \$(echo \"\$out\" | grep -c '^world size 2 rank [01] ') = 2 ]"
    check "loss decreases on both ranks" eval \
        "[ \$(echo \"\$out\" | awk '/done final loss/ && \$6 < \$9' | wc -l) = 2 ]"
    rc=0
    out=$(run_ torch-fail "$1" -- python3 /workspace/fail.py 2>&1) || rc=$?
    echo "$out" | tail -2 >&2
    check "fail.py exits 3 (rc $rc)" eval "[ $rc = 3 ]"
}

# mpi_over_ssh REF USER DIR PORT - mpirun in a launcher container whose hostfile names only
# 127.0.0.2 (not a local address to OpenMPI, so it starts orted over ssh) against sshd in a
# worker container, both as USER (root: Secret at /root/.ssh, root's sshd on PORT; mpiuser: the
# DeepSpeed layout, Secret at /home/mpiuser/.ssh owned by group fsGroup 1000, its own sshd on
# 2222 from /home/mpiuser/.sshd_config, the client's default port). ctr's default spec mounts a
# tmpfs on /run, hiding the image's /run/sshd (the kubelet does not), so root's worker makes it.
mpi_over_ssh() {
    local ref=$1 user=$2 s=$3 port=$4 home=/root out rc=0 as=() sshd args worker
    sshd=(sh -c "mkdir -p /run/sshd && exec /usr/sbin/sshd -De -p $port")
    args="-o ConnectionAttempts=10 -p $port"
    if [ "$user" = mpiuser ]; then
        home=/home/mpiuser
        as=(setpriv --reuid 1000 --regid 1000 --clear-groups)
        sshd=("${as[@]}" /usr/sbin/sshd -De -f /home/mpiuser/.sshd_config)
        args="-o ConnectionAttempts=10"
    fi
    run_ "mpi-worker-$user" "$ref" --mount "type=bind,src=$s,dst=$home/.ssh,options=rbind:ro" \
        -- "${sshd[@]}" >"$D/sshd-$user.log" 2>&1 &
    worker=$!
    sleep 2
    out=$(run_ "mpi-launcher-$user" "$ref" --mount "type=bind,src=$s,dst=$home/.ssh,options=rbind:ro" \
        --mount "type=bind,src=$D/hostfile,dst=/etc/mpi/hostfile,options=rbind:ro" \
        --env OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile \
        --env OMPI_MCA_orte_keep_fqdn_hostnames=true --env OMPI_MCA_orte_set_default_slots=2 \
        --env "OMPI_MCA_plm_rsh_args=$args" --env "HOME=$home" \
        -- "${as[@]}" mpirun -np 2 python3 /workspace/allreduce.py 2>&1) || rc=$?
    echo "$out" >&2
    ctr_ task kill -s SIGTERM "mpi-worker-$user" || true
    wait "$worker" || true
    grep 'Accepted publickey' "$D/sshd-$user.log" >&2 || cat "$D/sshd-$user.log" >&2
    check "mpirun as $user over ssh into the sshd container (rc $rc)" eval \
        "[ $rc = 0 ] && echo \"\$out\" | grep -c 'allreduce sum 3 expected 3 ok' >/dev/null"
    check "sshd accepted the Secret's key for $user" eval \
        "grep -q 'Accepted publickey for $user' '$D/sshd-$user.log'"
}

# test_mpi REF - mpirun -np 2 in one container; then over SSH, with the Secret's key layout
# (docs/internals/upstream.md#mpi: an ECDSA P-521 key in id_rsa mode 0640, id_rsa.pub and authorized_keys 0644).
test_mpi() {
    local out rc=0 s="$D/ssh"
    out=$(run_ mpi-local "$1" -- mpirun --allow-run-as-root -np 2 python3 /workspace/allreduce.py 2>&1) || rc=$?
    echo "$out" >&2
    check "local mpirun allreduce (rc $rc)" eval "[ $rc = 0 ] && echo \"\$out\" | grep -c 'allreduce sum 3 expected 3 ok' >/dev/null"
    mkdir -p "$s"
    ssh-keygen -q -t ecdsa -b 521 -m PEM -N '' -f "$s/key"
    install -m 0640 -g 1000 "$s/key" "$s/id_rsa"
    install -m 0644 -g 1000 "$s/key.pub" "$s/id_rsa.pub"
    install -m 0644 -g 1000 "$s/key.pub" "$s/authorized_keys"
    rm -f "$s/key" "$s/key.pub"
    printf '127.0.0.2 slots=2\n' >"$D/hostfile"
    mpi_over_ssh "$1" root "$s" $((20000 + RANDOM % 10000))
    mpi_over_ssh "$1" mpiuser "$s" 2222
}

# test_xgboost REF - two workers (task 0 also runs the tracker) in one container.
test_xgboost() {
    local out rc=0 p=$((20000 + RANDOM % 10000))
    out=$(run_ xgb-test "$1" --env DMLC_TRACKER_URI=127.0.0.1 --env "DMLC_TRACKER_PORT=$p" \
        --env DMLC_NUM_WORKER=2 -- sh -c 'DMLC_TASK_ID=0 python3 /workspace/train_xgboost.py & p=$!
            DMLC_TASK_ID=1 python3 /workspace/train_xgboost.py; r1=$?; wait $p; r0=$?
            exit $((r0 | r1))' 2>&1) || rc=$?
    echo "$out" | grep -E '^(world size|rank [01]/2 (round (0|9) |done))' >&2 || true
    [ "$rc" = 0 ] || echo "$out" >&2
    check "xgboost 2 workers exit 0 (rc $rc)" eval "[ $rc = 0 ]"
    check "both xgboost workers see world size 2" eval \
        "[ \$(echo \"\$out\" | grep -c '^world size 2 rank [01] ') = 2 ]"
}

# need_test_tools - install containerd, runc and ssh-keygen (Debian packages) when missing.
need_test_tools() {
    local need="" t
    for t in containerd:containerd runc:runc ssh-keygen:openssh-client; do
        command -v "${t%%:*}" >/dev/null || need="$need ${t#*:}"
    done
    [ -n "$need" ] || return 0
    echo "images-test: installing$need (Debian packages)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null ||
        {
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
        }
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(pause torch mpi xgboost)
need_test_tools || { bad images-test-tools "installing containerd, runc or ssh-keygen failed"; kt_finish; }
start_containerd || { bad containerd-starts "see its log above"; kt_finish; }
lines=$("$here/import.sh" "$SOCK" "${names[@]}") || { bad images-import "import.sh failed"; kt_finish; }
# Idempotence: a second import finds every image present.
"$here/import.sh" "$SOCK" "${names[@]}" >/dev/null 2>"$T/reimport.log"
check images-import-idempotent test "$(grep -vc 'already imported' "$T/reimport.log")" = 0
while read -r name ref <&3; do
    echo "images-test: $name: $ref"
    "test_$name" "$ref"
done 3<<<"$lines"
ctr_ images ls >&2
kt_finish
