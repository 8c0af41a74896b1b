#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/reliability/yaml_bombs.sh ENV_FILE - hostile YAML into ktctl validate (docs/development.md#the-reliability-tier):
# billion laughs (10 levels of 10 aliases), 100,000-deep flow sequences, 50 MB in a file and
# on stdin, 1 MiB of random bytes (a NUL byte: binary), and 20,000 documents. Each asserts the exit code (1
# invalid, 2 unreadable or binary, 0 for the 20,000 valid documents), a clear error naming the file and
# the limit, no crash (no signal, no sanitizer report), and peak RSS (/usr/bin/time %M) under
# 128 MiB. Needs no cluster (ENV_FILE is read for the tier's uniformity).
. "$(dirname "$0")/lib.sh" "$@"
KTCTL=${KT_KTCTL_BIN:-"$KT_ROOT/build/plain/bin/ktctl"}
[ -x /usr/bin/time ] || { bad time "/usr/bin/time missing (apt-get install time)"; kt_finish; }
cd "$T" || exit 1

python3 - <<'PY' || { bad generate "python3 failed"; kt_finish; }
head = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  runtimeRef:\n    name: torch-distributed\n"
lines = ['a0: &a0 [' + ','.join(['"lol"'] * 10) + ']']
for i in range(1, 10):
    lines.append('a%d: &a%d [' % (i, i) + ','.join(['*a%d' % (i - 1)] * 10) + ']')
open('laughs.yaml', 'w').write(head % 'laughs' + '  labels:\n' + ''.join('    %s\n' % l for l in lines))
open('deep.yaml', 'w').write('[' * 100000 + ']' * 100000 + '\n')
open('many.yaml', 'w').write(''.join('---\n' + head % ('t%d' % i) for i in range(20000)))
with open('big.yaml', 'w') as f:
    f.write(head % 'big' + '  labels:\n    x: "')
    f.write('x' * (50 * 1024 * 1024))
    f.write('"\n')
PY
head -c 1048576 /dev/urandom >binary.yaml

# bomb NAME WANT_RC ERROR_REGEX FILE [stdin] - ktctl validate on FILE (or on stdin).
bomb() {
    local name=$1 want=$2 re=$3 f=$4 rc rss
    if [ "${5:-}" = stdin ]; then
        /usr/bin/time -o "$name.time" -f %M "$KTCTL" validate --allow-missing-runtimes - <"$f" >"$name.out" 2>"$name.err"
    else
        /usr/bin/time -o "$name.time" -f %M "$KTCTL" validate --allow-missing-runtimes "$f" >"$name.out" 2>"$name.err"
    fi
    rc=$?
    rss=$(tail -1 "$name.time")
    echo "  $name: exit $rc, peak rss ${rss} kB: $(cat "$name.out" "$name.err" | grep -v '^Command' | grep -E "$re" | sed -n 1p | cut -c1-160)"
    if [ "$rc" = "$want" ] && grep -qE "$re" "$name.out" "$name.err"; then
        ok "yaml-$name-clear-error"
    else
        bad "yaml-$name-clear-error" "exit $rc (want $want); output: $(head -c 300 "$name.err") $(head -c 300 "$name.out")"
    fi
    if [ "${rss:-999999}" -lt $((128 * 1024)) ]; then ok "yaml-$name-memory-bounded"; else bad "yaml-$name-memory-bounded" "peak RSS ${rss} kB"; fi
}
bomb billion-laughs 1 'laughs.yaml:[0-9]+: too many nodes \(alias expansion\)' laughs.yaml
bomb deep-100k 1 'deep.yaml:1: nesting deeper than [0-9]+ levels' deep.yaml
bomb 50mb-file 2 '^ktctl validate: big.yaml: larger than --max-input-size \([0-9]+ bytes\)' big.yaml # named once
bomb 50mb-stdin 2 '^ktctl validate: <stdin>: larger than --max-input-size \([0-9]+ bytes\)' big.yaml stdin
bomb binary 2 '^ktctl validate: binary.yaml: a NUL byte at offset [0-9]+' binary.yaml # an input error (InputBinary)
bomb 20000-documents 0 '20000 objects checked, 0 invalid' many.yaml
rel_sanitizer_clean yaml-no-sanitizer-reports ./*.err
kt_finish
