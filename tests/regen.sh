#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/regen.sh [--self-test] - every generated file kt commits is what its generator writes
# today, and names that generator in its first three lines (a step of `make lint`). Each
# generator under scripts/gen/ runs into a temporary folder and its output is compared byte for
# byte (cmp) with the committed file; a difference prints the file and the command that
# regenerates it. About 5 s. gotypes.c is checked only when upstream's Go modules are in the
# module cache (nothing is downloaded here; the line says so otherwise). Not checked here (the
# module proxy and minutes): the wrapper modules scripts/cluster/modules/k8s-X.Y/, written by
# scripts/cluster/k8s-wrapper.sh X.Y.Z. --self-test first proves the comparison fails on a copy
# with one byte changed and on a file that does not name its generator, and passes on an
# unchanged copy; it prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# GENERATED: "file generator command" per line; the command regenerates the file in place.
GENERATED="api/trainer.kubeflow.org_trainjobs.yaml scripts/gen/gen_crds.py python3 scripts/gen/gen_crds.py
api/trainer.kubeflow.org_trainingruntimes.yaml scripts/gen/gen_crds.py python3 scripts/gen/gen_crds.py
api/trainer.kubeflow.org_clustertrainingruntimes.yaml scripts/gen/gen_crds.py python3 scripts/gen/gen_crds.py
common/validate/crd_schemas.c scripts/gen/embed_crds.py python3 scripts/gen/embed_crds.py
common/base/gotypes.c scripts/gen/gen_gotypes.py python3 scripts/gen/gen_gotypes.py"

# regen OUT - every generator's output under OUT (the committed files' relative paths). A file a
# generator could not write is left out (regen_compare then says why).
regen() {
    local out=$1 rc
    mkdir -p "$out/api" "$out/common/validate" "$out/common/base"
    python3 scripts/gen/gen_crds.py "$out" >"$out/gen_crds.log" 2>&1 || cat "$out/gen_crds.log"
    python3 scripts/gen/embed_crds.py --out "$out/common/validate/crd_schemas.c" >"$out/embed.log" 2>&1 ||
        cat "$out/embed.log"
    python3 scripts/gen/gen_gotypes.py --out "$out/common/base/gotypes.c" >"$out/gotypes.log" 2>&1
    rc=$?
    if [ "$rc" = 3 ]; then
        echo "regen: common/base/gotypes.c not checked: upstream's Go modules are not in the module cache ($(tail -n 1 "$out/gotypes.log"))"
        touch "$out/gotypes.skip"
    elif [ "$rc" != 0 ]; then
        cat "$out/gotypes.log"
    fi
}

# regen_compare ROOT OUT - each committed file under ROOT names its generator in its first three
# lines and equals OUT's; false (with one line per file) otherwise. Prints the count checked.
regen_compare() {
    local root=$1 out=$2 f gen cmd bad=0 n=0
    while read -r f gen cmd; do
        if [ "$f" = common/base/gotypes.c ] && [ -f "$out/gotypes.skip" ]; then
            continue
        fi
        n=$((n + 1))
        if [ "$(head -n 3 "$root/$f" | grep -cF "$gen")" = 0 ]; then
            echo "regen: $f does not name its generator ($gen) in its first three lines"
            bad=$((bad + 1))
        elif [ ! -f "$out/$f" ]; then
            echo "regen: $gen wrote no $f (above); regenerate with: $cmd"
            bad=$((bad + 1))
        elif ! cmp -s "$root/$f" "$out/$f"; then
            echo "regen: $f differs from what $gen writes ($(cmp "$root/$f" "$out/$f" 2>&1)); regenerate with: $cmd"
            bad=$((bad + 1))
        fi
    done <<<"$GENERATED"
    [ "$bad" = 0 ] && echo "regen: $n generated files are what their generators write"
    [ "$bad" = 0 ]
}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
regen "$T/out" || exit 1

if [ "${1:-}" = --self-test ]; then
    pass=0 fail=0
    expect() { # expect NAME WANT_RC ROOT - compare ROOT with the regenerated files
        local rc
        regen_compare "$3" "$T/out" >"$T/self.out" 2>&1
        rc=$?
        if [ "$rc" = "$2" ]; then
            pass=$((pass + 1))
        else
            echo "FAIL: $1 (regen_compare exited $rc, wanted $2): $(cat "$T/self.out")"
            fail=$((fail + 1))
        fi
    }
    while read -r f _; do
        mkdir -p "$T/copy/$(dirname "$f")"
        cp "$f" "$T/copy/$f"
    done <<<"$GENERATED"
    expect "an unchanged copy passes" 0 "$T/copy"
    # One byte changed in the middle of crd_schemas.c.
    f=$T/copy/common/validate/crd_schemas.c
    half=$(($(wc -c <"$f") / 2))
    cp "$f" "$T/saved.c"
    { head -c "$half" "$T/saved.c"; printf '#'; tail -c +$((half + 2)) "$T/saved.c"; } >"$f"
    expect "a copy with one byte changed fails" 1 "$T/copy"
    if [ "$(grep -c 'crd_schemas.c differs from what scripts/gen/embed_crds.py writes.*regenerate with: python3 scripts/gen/embed_crds.py' "$T/self.out")" = 1 ]; then
        pass=$((pass + 1))
    else
        echo "FAIL: the changed byte is reported with the file and its regenerating command: $(cat "$T/self.out")"
        fail=$((fail + 1))
    fi
    cp "$T/saved.c" "$f"
    # A file (and its regenerated twin) without its generator's name in the first lines.
    g=api/trainer.kubeflow.org_trainjobs.yaml
    cp "$T/copy/$g" "$T/saved.yaml"
    cp "$T/out/$g" "$T/saved-out.yaml"
    sed -i '2d' "$T/copy/$g" "$T/out/$g"
    expect "a file not naming its generator fails" 1 "$T/copy"
    cp "$T/saved.yaml" "$T/copy/$g"
    cp "$T/saved-out.yaml" "$T/out/$g"
    expect "the restored copy passes again" 0 "$T/copy"
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
fi
regen_compare . "$T/out"
