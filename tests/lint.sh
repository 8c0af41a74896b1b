#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/lint.sh - banned functions (strcpy, sprintf, atoi, ...), raw allocation outside
# common/base/mem.c, a second copy of KT_ARRAY_SIZE or FNV-1a (and KT_ARRAY_SIZE's pointer
# check, compiled), the layering of common/
# (tests/layers.py, common/README.md), the SPDX licence line of every source file
# (deploy/release/spdx.sh), every generated file equal to its generator's output
# (tests/regen.sh), each of those three after its self-test; over every shell script:
# -S warning of shellcheck, bash -n, no pipe into an early-closing reader, no shell function name
# with two bodies under tests/ or scripts/ (tests/shlint.py), each after a self-test; no citation of a
# document outside the repository or of a tracker number (and every cited docs anchor
# existing); the clang-format check.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh # ok, bad, kt_finish
files=$(git ls-files -co --exclude-standard '*.c' '*.h' | grep -v '^build/')
banned='\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|gets)\s*\('
hits=$(grep -nE "$banned" $files | grep -vE '^\S+:[0-9]+:\s*(/\*|\*)' || true)
if [ -n "$hits" ]; then
    echo "lint: banned functions:"
    echo "$hits"
    bad banned-functions "see above"
else
    ok banned-functions
fi
raw=$(grep -nE '\b(malloc|realloc|calloc)\s*\(' $files | grep -v '^common/base/mem.c:' |
    grep -vE '^\S+:[0-9]+:\s*(/\*|\*)' | grep -v 'kt_x' || true)
if [ -n "$raw" ]; then
    echo "lint: raw allocation outside common/base/mem.c:"
    echo "$raw"
    bad raw-allocation "see above"
else
    ok raw-allocation
fi
# One copy of each primitive: an array's length is KT_ARRAY_SIZE (common/base/mem.h), and FNV-1a
# lives in common/base/hash.h only (its primes nowhere else). tests/plugins/ are out-of-tree
# plugin examples built against the plugin ABI alone, so they keep the long form.
dup=$(grep -nE 'sizeof\(([A-Za-z_][A-Za-z0-9_>.-]*)\) */ *sizeof\(\1\[0\]\)|/ *sizeof\(\([a-z]\)\[0\]\)|1099511628211|16777619' $files |
    grep -vE '^(common/base/mem\.h:|common/base/hash\.h:|tests/plugins/|tests/unit/test_base\.c:)' || true)
if [ -n "$dup" ]; then
    echo "lint: use KT_ARRAY_SIZE / common/base/hash.h:"
    echo "$dup"
    bad one-copy-of-each-primitive "see above"
else
    ok one-copy-of-each-primitive
fi
# KT_ARRAY_SIZE rejects a pointer at compile time: an array compiles cleanly (-Wpedantic -Wvla
# -Werror), a pointer fails with the macro's negative array size even with -Wsizeof-pointer-div
# (which would catch it first) turned off.
arr_dir=$(mktemp -d)
printf '#include "common/base/mem.h"\nconst int a[] = {1, 2, 3};\nconst char *const b[4][2];\n%s\n' \
    'int n(void) { return (int)KT_ARRAY_SIZE(a) + (int)KT_ARRAY_SIZE(b); }' >"$arr_dir/ok.c"
printf '#include "common/base/mem.h"\nint n(const int *p);\n%s\n' \
    'int n(const int *p) { return (int)KT_ARRAY_SIZE(p); }' >"$arr_dir/bad.c"
arr_cc() { "${CC:-cc}" -std=c11 -Wall -Wextra -Wpedantic -Wvla -Werror -I. -fsyntax-only "$@"; }
if arr_cc "$arr_dir/ok.c" >"$arr_dir/ok.log" 2>&1 &&
    ! arr_cc -Wno-sizeof-pointer-div "$arr_dir/bad.c" >"$arr_dir/bad.log" 2>&1 &&
    grep -c 'negative' "$arr_dir/bad.log" >/dev/null; then
    ok array-size-rejects-pointer
else
    echo "lint: KT_ARRAY_SIZE must compile for an array and fail for a pointer:"
    cat "$arr_dir/ok.log" "$arr_dir/bad.log"
    bad array-size-rejects-pointer "see above"
fi
rm -rf "$arr_dir"
# Layers: no include from a higher layer, no include circle. The self-test first proves the
# check fails on a bad include and on a circle.
if python3 tests/layers.py --self-test >/dev/null && python3 tests/layers.py; then
    ok layering
else
    python3 tests/layers.py --self-test | grep -v ' 0 failed' || true
    echo "lint: layering (see common/README.md)"
    bad layering "see above"
fi
# SPDX: every source file kt owns names its licence (docs/releasing.md). The self-test first proves
# the check finds a file without the line and that --fix adds it in the right place.
if deploy/release/spdx.sh --self-test >"${TMPDIR:-/tmp}/kt-spdx.$$" 2>&1 && deploy/release/spdx.sh --check; then
    ok spdx
else
    grep -v ' 0 failed' "${TMPDIR:-/tmp}/kt-spdx.$$" || true
    echo "lint: SPDX-License-Identifier missing (deploy/release/spdx.sh --fix adds it)"
    bad spdx "see above"
fi
rm -f "${TMPDIR:-/tmp}/kt-spdx.$$"
# Generated files: each names its generator and is what that generator writes today
# (tests/regen.sh: the generators under scripts/gen/ run into a temporary folder, cmp against the
# committed bytes). The self-test first proves a one-byte change and a missing generator name fail.
if tests/regen.sh --self-test >"${TMPDIR:-/tmp}/kt-regen.$$" 2>&1 && tests/regen.sh; then
    ok regen
else
    grep -v ' 0 failed' "${TMPDIR:-/tmp}/kt-regen.$$" || true
    echo "lint: a generated file differs from its generator's output (above; tests/regen.sh)"
    bad regen "see above"
fi
rm -f "${TMPDIR:-/tmp}/kt-regen.$$"
# Shell: every shell script kt owns (*.sh and files with a sh/bash shebang).
shells=$({
    git ls-files '*.sh'
    git ls-files | grep -v '\.sh$' | while IFS= read -r f; do
        first=""
        [ -f "$f" ] && IFS= read -r -n 40 first <"$f"
        [[ $first =~ ^#!.*(/|env\ )(ba)?sh$ ]] && echo "$f"
    done
} | sort -u)
# Shell lint, -S warning (docs/development.md "Shell lint"): errors and warnings (unused or
# unset variables, unquoted splitting, `cd` without a check, ...), not info/style, whose 447 and
# 450 findings were mostly SC2317 (functions reached through traps and `check`), SC2015
# (`a && b || c` used on purpose) and SC1091 (sourced files) when the level was chosen. A false
# positive gets `# shellcheck disable=SCxxxx` with its reason on the line above. A snippet with
# a known warning first proves the check can fail.
if ! command -v shellcheck >/dev/null; then
    echo "lint: shellcheck missing (make deps installs it)"
    bad shellcheck "see above"
elif printf '#!/bin/bash\nunused=1\n' | shellcheck -S warning - >/dev/null 2>&1; then
    echo "lint: shellcheck -S warning passed a script with an unused variable"
    bad shellcheck "see above"
elif ! shellcheck -S warning $shells; then
    echo "lint: shellcheck -S warning (above)"
    bad shellcheck "see above"
else
    echo "lint: shellcheck -S warning: $(echo "$shells" | wc -l) scripts clean"
    ok shellcheck
fi
# Citations: code, tests and docs cite docs/ (docs/internals/ for the design and the upstream
# rules) or upstream's own files, never a document outside the repository (SPEC, DESIGN, STYLE,
# CLUSTER notes) nor an issue-tracker number a clone cannot read; CHANGELOG.md included. Upstream's
# trackers (kubeflow/trainer#NNNN) are public and allowed. Every docs/...md#anchor cited names an
# existing heading (tests/docs/check.py's slugs). Planted lines first prove both checks fail.
cite_re='\b(SPEC|DESIGN|STYLE|CLUSTER)\.md\b|\b(SPEC|DESIGN|STYLE)( rule| section)? ?§?[0-9]|\bDESIGN "|\bSTYLE rule\b|§[0-9]|\b[Ii]ssues? #?[0-9]{1,3}\b|\(#[0-9]{1,3}[),]'
cites() { # cites FILE... - the lines citing an outside document or a tracker number
    grep -snIE -d skip "$cite_re" -- "$@" | grep -vE 'RFC [0-9]+ §' || true
}
anchors_bad() { # anchors_bad ROOT FILE... - docs/*.md#anchor citations naming no heading
    python3 - "$@" <<'PY'
import os, re, sys
root = sys.argv[1]
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "docs"))
import check
cite = re.compile(r"\b(docs/[A-Za-z0-9_/.-]+\.md)#([A-Za-z0-9_-]+)")
for f in sys.argv[2:]:
    path = os.path.join(root, f)
    if not os.path.isfile(path) or os.path.islink(path):
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    for no, line in enumerate(text.split("\n"), 1):
        for m in cite.finditer(line):
            doc = os.path.join(root, m.group(1))
            if not os.path.exists(doc) or m.group(2) not in check.anchors(doc):
                print("%s:%d: %s#%s" % (f, no, m.group(1), m.group(2)))
PY
}
# Planted: one line to refuse, and beside it what must pass (an RFC section, an upstream tracker,
# an anchor that exists).
printf '/* the queue (DESIGN.md "Concurrency"; SPEC §3.3, issue 11) */\n/* RFC 7748 §6.1; kubeflow/trainer#4052 */\n' >"${TMPDIR:-/tmp}/kt-cite.$$.c"
printf 'see docs/internals/upstream.md#no-such-rule\nand docs/internals/upstream.md#torch\n' >"${TMPDIR:-/tmp}/kt-cite.$$.txt"
mapfile -t tracked < <(git ls-files | grep -v '^tests/lint\.sh$')
if [ "$(cites "${TMPDIR:-/tmp}/kt-cite.$$.c" | grep -c .)" -ne 1 ]; then
    echo "lint: the citation check passed a planted DESIGN.md/SPEC/issue citation"
    bad citations "see above"
elif [ "$(anchors_bad "$PWD" "${TMPDIR:-/tmp}/kt-cite.$$.txt" | grep -c 'no-such-rule$')" -ne 1 ] ||
    [ "$(anchors_bad "$PWD" "${TMPDIR:-/tmp}/kt-cite.$$.txt" | grep -c .)" -ne 1 ]; then
    echo "lint: the anchor check passed a planted citation of a missing anchor"
    bad citations "see above"
else
    hits=$(cites "${tracked[@]}")
    badanchors=$(anchors_bad "$PWD" "${tracked[@]}")
    if [ -n "$hits" ] || [ -n "$badanchors" ]; then
        [ -z "$hits" ] || printf 'lint: a citation of a document outside the repository or a tracker number (cite docs/):\n%s\n' "$hits"
        [ -z "$badanchors" ] || printf 'lint: a cited docs anchor does not exist:\n%s\n' "$badanchors"
        bad citations "see above"
    else
        ok citations
    fi
fi
rm -f "${TMPDIR:-/tmp}/kt-cite.$$.c" "${TMPDIR:-/tmp}/kt-cite.$$.txt"
# bash -n: every script parses (shellcheck skips a file it cannot parse only with an error, and
# bash is the parser that runs them). A planted script with a syntax error must fail first.
tmp=${TMPDIR:-/tmp}/kt-lint.$$
mkdir -p "$tmp"
printf 'if true; then\n' >"$tmp/bad.sh"
if bash -n "$tmp/bad.sh" 2>/dev/null; then
    echo "lint: bash -n passed a script with a syntax error"
    bad bash-n "see above"
else
    bad=""
    for f in $shells; do
        bash -n "$f" || bad="$bad $f"
    done
    if [ -n "$bad" ]; then
        echo "lint: bash -n:$bad"
        bad bash-n "see above"
    else
        echo "lint: bash -n: $(echo "$shells" | wc -l) scripts parse"
        ok bash-n
    fi
fi
# No pipe into a reader that stops early (`| grep -q`, `| grep -m`, `| head`): the writer dies
# of SIGPIPE and pipefail fails the pipeline at random (tests/shlint.py says what to write
# instead). No shell function name under tests/ or scripts/ with two different bodies. The self-test plants
# bad and good lines for both first.
if ! python3 tests/shlint.py --self-test >"$tmp/self.out" 2>&1; then
    cat "$tmp/self.out"
    echo "lint: tests/shlint.py --self-test"
    bad shlint-self-test "see above"
else
    if python3 tests/shlint.py sigpipe $shells; then
        echo "lint: no pipe into grep -q, grep -m or head in $(echo "$shells" | wc -l) scripts"
        ok sigpipe
    else
        echo "lint: a pipe into a reader that stops early (above; see tests/shlint.py)"
        bad sigpipe "see above"
    fi
    # shellcheck disable=SC2046 # one word per file name (git ls-files, no spaces in kt's paths)
    if python3 tests/shlint.py dupfuncs $(echo "$shells" | grep -E "^(tests|scripts)/") >"$tmp/dup.out"; then
        echo "lint: shell function names under tests/ and scripts/: $(grep -c . "$tmp/dup.out") known with two meanings, no new one"
        ok dupfuncs
    else
        cat "$tmp/dup.out"
        echo "lint: shell function names (above; see tests/shlint.py)"
        bad dupfuncs "see above"
    fi
fi
rm -rf "$tmp"
if command -v clang-format >/dev/null; then
    bad=""
    for f in $files; do
        if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
            bad="$bad $f"
        fi
    done
    if [ -n "$bad" ]; then
        echo "lint: not clang-formatted (run make format):$bad"
        bad clang-format "see above"
    else
        ok clang-format
    fi
fi
kt_finish
