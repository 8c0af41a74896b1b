#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/parity/tier.sh BUILD_DIR - behaviour parity of the Flux scripts with upstream v2.3.0.
#
# `ktctl render` writes the <job>-flux-entrypoint ConfigMap (entrypoint.sh, init.sh) for the
# flux golden cases; upstream's own templates (from the Go module
# github.com/kubeflow/trainer/v2@v2.3.0 in the module cache, fetched through the module proxy
# when missing; test-only, never shipped) are filled with the same values. Both pairs of
# scripts then run under bash in identical sandboxes: the absolute paths they use (/mnt/flux,
# /opt, /curve, /tmp) rewritten into a temp directory, `flux`, `hostname` and `chown`
# replaced by stubs that log their arguments, as the lead broker (with and without a
# command, flux failing or not) and as a follower (failing once, then succeeding). Compared:
# stdout, stderr, exit status, the stubs' log and every file written (path, mode, content).
# Upstream lines tests/parity/deliberate.txt accepts (each a docs/compatibility.md entry) are
# dropped first. Prints "parity: flux scripts N/M identical" and "N passed, N failed". Without Go or the
# module (offline) or PyYAML, says so and counts nothing.
set -uo pipefail
b=$(cd "$1" && pwd)
ktctl="$b/bin/ktctl"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib.sh"

upstream_dir() {
    local mod=github.com/kubeflow/trainer/v2@v2.3.0 d
    command -v go >/dev/null || return 1
    d="$(go env GOMODCACHE)/$mod"
    if [ ! -d "$d" ]; then
        (cd "$T" && nice -n 10 go mod download "$mod") >/dev/null 2>&1 || return 1
    fi
    [ -d "$d/pkg/runtime/framework/plugins/flux/templates" ] && echo "$d"
}

if [ ! -x "$ktctl" ]; then
    bad parity "$ktctl not built"
    kt_finish
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "parity: skipped (needs python3 with PyYAML)"
    kt_finish
fi
if ! up=$(upstream_dir); then
    echo "parity: skipped (no Go toolchain or upstream module github.com/kubeflow/trainer/v2@v2.3.0)"
    kt_finish
fi
tmpl="$up/pkg/runtime/framework/plugins/flux/templates"

# fill CASE_DIR OUT_DIR: kt's scripts from ktctl render, upstream's templates filled with the
# values the case implies (the same inputs upstream's generate* functions read).
fill() {
    local dir=$1 out=$2
    mkdir -p "$out"
    (cd "$dir" && "$ktctl" render -o json --runtime runtime.yaml trainjob.yaml) >"$out/render.json" ||
        return 1
    python3 - "$out" "$tmpl" <<'EOF'
import json, sys
out, tmpl = sys.argv[1], sys.argv[2]
items = json.load(open(out + "/render.json"))["items"]
cm = next(o for o in items if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-flux-entrypoint"))
js = next(o for o in items if o["kind"] == "JobSet")
open(out + "/kt-entry.sh", "w").write(cm["data"]["entrypoint.sh"])
open(out + "/kt-init.sh", "w").write(cm["data"]["init.sh"])
# The values upstream's generators compute, read back from the rendered objects' inputs.
name, ns = js["metadata"]["name"], js["metadata"]["namespace"]
node = next(r for r in js["spec"]["replicatedJobs"] if r["name"] == "node")
pod = node["template"]["spec"]["template"]["spec"]
nodes = node["template"]["spec"]["parallelism"]
c = next(c for c in pod["containers"] if c["name"] == "node")
env = {e["name"]: e.get("value", "") for e in c.get("env", [])}
tasks = int(json.load(open(out + "/tasks")))
gpus = int(json.load(open(out + "/gpus")))
def rng(n, s=0):
    return "%d" % s if n == 1 else "%d-%d" % (s, s + n - 1)
hosts = "%s-node-0-[%s]" % (name, rng(nodes))
dev = env.get("FLUX_NETWORK_DEVICE", "eth0")
queue = env.get("FLUX_QUEUE_POLICY", "fcfs")
broker = open(tmpl + "/broker.toml").read() % (
    "tcp://" + dev + ":%p", "tcp://%%h.%s.%s.svc.cluster.local:%%p" % (name, ns), hosts, queue)
init = open(tmpl + "/init.sh").read() % ("/opt/view", name + "-0", hosts, broker)
rspec = "--cores=" + rng(tasks)
flags = "-N %d -n %d" % (nodes, tasks * nodes)
if gpus > 0:
    flags += " -g %d" % gpus
    rspec += " --gpu=" + rng(gpus)
entry = open(tmpl + "/entrypoint.sh").read() % (rspec, name + "-node-0-0", flags)
open(out + "/up-entry.sh", "w").write(entry)
open(out + "/up-init.sh", "w").write(init)
EOF
}

# sandbox DIR: the file tree the scripts expect, under DIR.
sandbox() {
    local s=$1
    mkdir -p "$s/mnt/flux/software/pkg" "$s/opt/views/._view/abc123/bin" "$s/opt/software/pkg" \
        "$s/curve" "$s/tmp" "$s/stub"
    echo "tool" >"$s/opt/views/._view/abc123/bin/tool"
    mkdir -p "$s/opt/views/._view/abc123/lib/python3.11"
    echo "py" >"$s/opt/views/._view/abc123/bin/python3.11"
    echo "lib" >"$s/opt/software/pkg/lib"
    echo "cert" >"$s/curve/curve.cert"
    cat >"$s/stub/flux" <<'EOF'
#!/bin/bash
echo "flux $*" >>"$SANDBOX/trace"
n=$(cat "$SANDBOX/flux-fails" 2>/dev/null || echo 0)
if [ "$n" -gt 0 ]; then
    echo $((n - 1)) >"$SANDBOX/flux-fails"
    exit 3
fi
exit 0
EOF
    printf '#!/bin/bash\necho "$HOSTNAME_STUB"\n' >"$s/stub/hostname"
    printf '#!/bin/bash\necho "chown $*" >>"$SANDBOX/trace"\n' >"$s/stub/chown"
    printf '#!/bin/bash\necho "sleep $*" >>"$SANDBOX/trace"\n' >"$s/stub/sleep"
    chmod +x "$s/stub/"*
}

# sandbox_run SCRIPT SANDBOX HOST FAILS [ARG]: the script with its paths moved into the sandbox.
sandbox_run() {
    local script=$1 s=$2 host=$3 fails=$4
    shift 4
    sed -e "s#/mnt/flux#@SB@/mnt/flux#g" -e "s#/opt/#@SB@/opt/#g" -e "s#/curve/#@SB@/curve/#g" \
        -e "s#/tmp/#@SB@/tmp/#g" -e "s#@SB@#$s#g" "$script" >"$s/script.sh"
    echo "$fails" >"$s/flux-fails"
    (cd "$s" && env -i PATH="$s/stub:/usr/bin:/bin" HOME="$s" SANDBOX="$s" HOSTNAME_STUB="$host" \
        bash "$s/script.sh" "$@" >"$s/stdout" 2>"$s/stderr")
    echo "exit $?" >>"$s/stdout"
    rm -f "$s/script.sh" "$s/flux-fails"
    # Every file: path, mode, content (sandbox prefix removed).
    (cd "$s" && find . -path ./stub -prune -o -print | LC_ALL=C sort | while read -r f; do
        printf '%s %s\n' "$f" "$(stat -c %a "$f")"
        [ -f "$f" ] && sed "s#$s#SANDBOX#g" "$f"
    done) >"$s/../$(basename "$s").snapshot"
}

# accepted SNAPSHOT: drop the lines of upstream's side that tests/parity/deliberate.txt
# accepts.
accepted() {
    local re
    while IFS=$'\t' read -r _ re; do
        grep -v -E "$re" "$1" >"$1.tmp"
        mv "$1.tmp" "$1"
    done < <(grep -v -e '^#' -e '^oracle-' -e '^$' "$here/deliberate.txt")
}

# compare NAME A_SCRIPT B_SCRIPT HOST FAILS [ARG]
compare() {
    local name=$1 a=$2 c=$3
    shift 3
    rm -rf "$T/a" "$T/b" "$T/a.snapshot" "$T/b.snapshot"
    sandbox "$T/a"
    sandbox "$T/b"
    sandbox_run "$a" "$T/a" "$@"
    sandbox_run "$c" "$T/b" "$@"
    accepted "$T/a.snapshot"
    if diff -u "$T/a.snapshot" "$T/b.snapshot" >"$T/diff"; then
        ok "$name"
    else
        bad "$name" "differs from upstream's:"
        sed -n 1,40p "$T/diff"
    fi
}

cases=0
for dir in "$root"/tests/golden/flux-basic "$root"/tests/golden/flux-single-node; do
    name=$(basename "$dir")
    out="$T/$name"
    mkdir -p "$out"
    # tasks and GPUs per node as the case sets them (numProcPerNode, nvidia.com/gpu limits).
    python3 - "$dir" "$out" <<'EOF'
import sys, yaml
d, out = sys.argv[1], sys.argv[2]
tj = yaml.safe_load(open(d + "/trainjob.yaml"))
rt = yaml.safe_load(open(d + "/runtime.yaml"))
tr = (tj.get("spec") or {}).get("trainer") or {}
tasks = tr.get("numProcPerNode", ((rt["spec"].get("mlPolicy") or {}).get("flux") or {}).get("numProcPerNode", 1))
res = tr.get("resourcesPerNode")
if res is None:
    for rj in rt["spec"]["template"]["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            if rj["name"] == "node" and c["name"] == "node":
                res = c.get("resources")
gpus = int(((res or {}).get("limits") or {}).get("nvidia.com/gpu", 0))
open(out + "/tasks", "w").write(str(tasks))
open(out + "/gpus", "w").write(str(gpus))
EOF
    if ! fill "$dir" "$out"; then
        bad "$name" "render failed"
        continue
    fi
    lead=$(grep -o 'mainHost="[^"]*"' "$out/up-entry.sh" | sed -n 1p | cut -d'"' -f2)
    compare "$name init.sh" "$out/up-init.sh" "$out/kt-init.sh" "$lead" 0
    compare "$name entrypoint.sh lead with command" "$out/up-entry.sh" "$out/kt-entry.sh" "$lead" 0 "train --epochs 2"
    compare "$name entrypoint.sh lead, flux fails" "$out/up-entry.sh" "$out/kt-entry.sh" "$lead" 1 "train"
    compare "$name entrypoint.sh lead without command" "$out/up-entry.sh" "$out/kt-entry.sh" "$lead" 0
    compare "$name entrypoint.sh follower retrying" "$out/up-entry.sh" "$out/kt-entry.sh" other-host 2 "train"
    cases=$((cases + 5))
done
# shellcheck disable=SC2154 # pass: the count of tests/lib.sh
echo "parity: flux scripts $pass/$cases identical"
kt_finish
