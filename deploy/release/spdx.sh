#!/usr/bin/env bash
# deploy/release/spdx.sh [--check | --fix | --list | --self-test] [ROOT] - the line
# `SPDX-License-Identifier: Apache-2.0` at the top of every source file kt owns (docs/releasing.md):
#   C (*.c, *.h)                     line 1: /* SPDX-License-Identifier: Apache-2.0 */
#   shell, Python, Makefile          line 1, or line 2 after a #! line: # SPDX-License-Identifier: ...
#   Go (*.go)                        line 1: // SPDX-License-Identifier: ..., then a blank line
#   YAML under api/ and deploy/      line 1: # SPDX-License-Identifier: ...
#   Helm templates (deploy/helm/*/templates/*.yaml, *.tpl)
#                                    line 1: {{- /* SPDX-License-Identifier: ... */ -}} (renders nothing)
# Files are the tracked ones (git ls-files) of ROOT (default: this checkout). Not stamped: test
# data (YAML, JSON and golden files outside api/ and deploy/), tests/cluster/images/ (every byte
# there is part of a cached image's key), tests/plugins/minimal.c (docs/plugins.md shows it
# verbatim, as the example a plugin author copies), dot-files and dot-folders, symbolic links. The
# generated files (api/*.yaml, common/validate/crd_schemas.c, common/base/gotypes.c) carry the line
# because their generators write it, in the same place as here.
#   --check      list the files without the line in their first 5 lines; exit 1 if any (make lint)
#   --fix        add the line where it is missing (idempotent)
#   --list       the files this covers, with their kind
#   --self-test  --check and --fix on a scratch git repository; "N passed, N failed"
set -euo pipefail
export LC_ALL=C
ID="SPDX-License-Identifier: Apache-2.0"
mode=--check
case ${1:-} in --check | --fix | --list | --self-test)
    mode=$1
    shift
    ;;
esac
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}

# list - "KIND PATH" of every covered file (KIND: c hash go helm)
list() {
    local f
    git -C "$root" ls-files | sort | while IFS= read -r f; do
        if [ ! -f "$root/$f" ] || [ ! -s "$root/$f" ] || [ -L "$root/$f" ]; then continue; fi
        case $f in .* | */.* | tests/cluster/images/* | tests/plugins/minimal.c) continue ;; esac
        case $f in
        *.c | *.h) echo "c $f" ;;
        *.sh | *.py | Makefile | */Makefile) echo "hash $f" ;;
        *.go) echo "go $f" ;;
        deploy/helm/*/templates/*.yaml | deploy/helm/*/templates/*.tpl) echo "helm $f" ;;
        api/*.yaml | api/*.yml | deploy/*.yaml | deploy/*.yml) echo "hash $f" ;;
        esac
    done
}

# missing - the covered files without the line in their first 5 lines
missing() {
    list | cut -d' ' -f2- >"$w/files"
    [ -s "$w/files" ] || return 0
    # shellcheck disable=SC2016 # awk's $0
    (cd "$root" && tr '\n' '\0' <"$w/files" | xargs -0 awk -v id="$ID" '
        FNR == 1 { if (f != "" && !ok) print f; f = FILENAME; ok = 0 }
        FNR <= 5 && index($0, id) { ok = 1 }
        END { if (f != "" && !ok) print f }')
}

# stamp KIND FILE - add the line to FILE
stamp() {
    local kind=$1 f=$root/$2
    case $kind in
    c) { echo "/* $ID */" && cat "$f"; } >"$w/new" ;;
    go) { printf '// %s\n\n' "$ID" && cat "$f"; } >"$w/new" ;;
    helm) { echo "{{- /* $ID */ -}}" && cat "$f"; } >"$w/new" ;;
    hash)
        if head -n 1 "$f" | grep -c '^#!' >/dev/null; then
            { head -n 1 "$f" && echo "# $ID" && tail -n +2 "$f"; } >"$w/new"
        else
            { echo "# $ID" && cat "$f"; } >"$w/new"
        fi
        ;;
    esac
    cat "$w/new" >"$f" # keeps the file's mode
}

self_test() {
    local g=$w/repo pass=0 fail=0 out
    t() { if "$@" >/dev/null 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)) && echo "FAIL self-test: $*"; fi; }
    mkdir -p "$g/common" "$g/deploy/helm/x/templates" "$g/tests/data" "$g/tests/cluster/images/i" "$g/api"
    printf 'int a;\n' >"$g/common/a.c"
    printf '/* %s */\nint b;\n' "$ID" >"$g/common/b.c"
    printf '#!/bin/sh\necho hi\n' >"$g/common/s.sh"
    printf 'all:\n\ttrue\n' >"$g/Makefile"
    printf 'kind: X\n' >"$g/deploy/x.yaml"
    printf 'kind: {{ .Values.k }}\n' >"$g/deploy/helm/x/templates/t.yaml"
    printf 'package main\n' >"$g/deploy/m.go"
    printf 'kind: Data\n' >"$g/tests/data/in.yaml"
    printf '#!/bin/sh\n' >"$g/tests/cluster/images/i/run.sh"
    printf 'int c;\n' >"$g/.hidden.c"
    ln -s ../deploy/x.yaml "$g/api/link.yaml"
    chmod 0755 "$g/common/s.sh"
    git -C "$g" init -q && git -C "$g" add -A
    out=$("$0" --check "$g" 2>/dev/null) || true
    t test "$(echo "$out" | sort | tr '\n' ' ')" = "Makefile common/a.c common/s.sh deploy/helm/x/templates/t.yaml deploy/m.go deploy/x.yaml "
    t test "$("$0" --check "$g" >/dev/null 2>&1; echo $?)" = 1
    cp -R "$g/tests" "$w/tests.before"
    t "$0" --fix "$g"
    t "$0" --check "$g"
    t test "$(head -n 1 "$g/common/a.c")" = "/* $ID */"
    t test "$(head -n 2 "$g/common/s.sh" | tr '\n' '|')" = "#!/bin/sh|# $ID|"
    t test -x "$g/common/s.sh"
    t test "$(head -n 1 "$g/Makefile")" = "# $ID"
    t test "$(head -n 1 "$g/deploy/helm/x/templates/t.yaml")" = "{{- /* $ID */ -}}"
    t test "$(head -n 2 "$g/deploy/m.go" | tr '\n' '|')" = "// $ID||"
    t test "$(grep -c SPDX "$g/common/b.c")" = 1
    t diff -r "$w/tests.before" "$g/tests"
    t test "$(cat "$g/.hidden.c")" = "int c;"
    t test -L "$g/api/link.yaml"
    tar -C "$g" --exclude=.git -cf "$w/once.tar" .
    t "$0" --fix "$g"
    tar -C "$g" --exclude=.git -cf "$w/twice.tar" .
    t cmp "$w/once.tar" "$w/twice.tar"
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
case $mode in
--list) list ;;
--self-test) self_test ;;
--check)
    missing >"$w/missing"
    if [ -s "$w/missing" ]; then
        cat "$w/missing"
        echo "spdx: $(wc -l <"$w/missing") files without '$ID' in their first 5 lines (deploy/release/spdx.sh --fix adds it)" >&2
        exit 1
    fi
    ;;
--fix)
    missing >"$w/missing"
    list >"$w/list"
    n=0
    while IFS= read -r f; do
        stamp "$(grep -F " $f" "$w/list" | awk -v f="$f" '$2 == f { print $1 }')" "$f"
        n=$((n + 1))
    done <"$w/missing"
    echo "spdx: added '$ID' to $n files"
    ;;
esac
