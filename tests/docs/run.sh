#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/docs/run.sh - the docs tier (a `make test` step after lint): README.md and docs/*.md
# checked by tests/docs/check.py against the repo and the built binaries (bin/): relative links
# and anchors, every flag of kt-webhook, kt-reconciler and ktctl documented and every flag the
# docs name existing, `--help` exiting 0, the fenced blocks marked `sh runnable` run, every
# `$ ktctl validate|render` transcript printing exactly the lines shown after it, and the
# man pages (docs/man/build.sh, as `make man`, into a scratch folder): each names every flag of
# its binary's --help and renders with `groff -ww` silently, none is committed.
# Then each check's negative test: on a copy of the docs (the rest of the repo linked in) with a
# planted fault, the checker must fail and name it. Prints `ok NAME` / `FAIL NAME: why` and
# "N passed, N failed"; exits 1 on a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT" || exit 1
. tests/lib.sh

if [ ! -x bin/ktctl ] || [ ! -x bin/kt-webhook ] || [ ! -x bin/kt-reconciler ]; then
    make -s -j"$(nproc)" all >"$T/build.log" 2>&1 || { cat "$T/build.log"; echo "docs: build failed" >&2; }
fi

# The man pages, written the way `make man` writes them (build/ is left alone).
if ! docs/man/build.sh bin "$T/man" >"$T/man.log" 2>&1; then
    bad "man: docs/man/build.sh" "$(tail -c 600 "$T/man.log")"
fi

# The checks on the real docs; their ok/FAIL lines count into this tier's total.
python3 "$here/check.py" --root "$ROOT" --man "$T/man" >"$T/real.out" 2>&1
grep -E '^(ok|FAIL|skip) ' "$T/real.out"
if [ "$(grep -cE '^[0-9]+ passed, [0-9]+ failed' "$T/real.out")" -eq 0 ]; then
    bad "docs/check.py" "no summary line: $(tail -c 600 "$T/real.out")"
else
    read -r p f < <(kt_count "$T/real.out")
    pass=$((pass + p))
    fail=$((fail + f))
fi

# copy_root DIR: DIR holds a copy of README.md and docs/, every other top-level entry linked.
copy_root() {
    local d=$1 e
    mkdir -p "$d"
    for e in "$ROOT"/* "$ROOT"/.[!.]*; do
        case ${e##*/} in README.md | docs | .git) continue ;; esac
        [ -e "$e" ] && ln -s "$e" "$d/${e##*/}"
    done
    cp README.md "$d/" && cp -R docs "$d/docs"
}
# passes NAME [ARGS]: the checker on $T/neg must pass (a control: what it must not flag).
passes() {
    if python3 "$here/check.py" --root "$T/neg" "${@:2}" >"$T/neg.out" 2>&1; then
        ok "$1"
    else
        bad "$1" "$(grep '^FAIL' "$T/neg.out" | { head -c 400; cat >/dev/null; })"
    fi
}
# planted NAME WANT [--bin DIR]: the checker on $T/neg must exit non-zero with a FAIL line
# matching WANT; the copy is restored afterwards.
planted() {
    local name=$1 want=$2
    shift 2
    if python3 "$here/check.py" --root "$T/neg" "$@" --bin "${NEG_BIN:-$ROOT/bin}" >"$T/neg.out" 2>&1; then
        bad "negative: $name" "the checker passed"
    elif grep -qE "^FAIL .*$want" "$T/neg.out"; then
        ok "negative: $name"
    else
        bad "negative: $name" "no FAIL line matching '$want': $(grep '^FAIL' "$T/neg.out" | { head -c 400; cat >/dev/null; })"
    fi
    rm -rf "$T/neg"
    copy_root "$T/neg"
    NEG_BIN=""
}
copy_root "$T/neg"
passes "negative control: the unmodified copy passes"

printf '\nSee [the index](no-such-page.md).\n' >>"$T/neg/docs/README.md"
planted "a link to a missing file fails" "links: docs/README.md: .*no-such-page.md: no such file"

printf '\nSee [install](install.md#no-such-heading).\n' >>"$T/neg/docs/operating.md"
planted "a link to a missing anchor fails" "links: docs/operating.md: .*no heading with the slug #no-such-heading"

printf '\nThe README links [home](../README.md#two-commandz).\n' >>"$T/neg/docs/development.md"
planted "an anchor into README.md is checked too" "links: docs/development.md: .*#two-commandz"

printf '\n```sh\nkt-webhook --tls-cert-file a --tls-key-file b --no-such-flag\n```\n' >>"$T/neg/docs/install.md"
planted "an unknown kt-webhook flag in a code block fails" "exist: docs/install.md: .*kt-webhook --no-such-flag does not exist"

printf '\nRun `kt-reconciler --worker 8` for more.\n' >>"$T/neg/docs/operating.md"
planted "an unknown kt-reconciler flag in a code span fails" "exist: docs/operating.md: .*kt-reconciler --worker does not exist"

printf '\n```sh\nbin/ktctl certs --old x.yaml\n```\n' >>"$T/neg/docs/ktctl.md"
planted "a ktctl flag of another subcommand fails" "exist: docs/ktctl.md: .*ktctl certs --old does not exist"

printf '\nkubectl apply --server-side --no-such-kubectl-flag -k deploy/\n' >>"$T/neg/docs/install.md"
passes "negative: kubectl's flags are not kt's (a made-up kubectl flag passes)"
rm -rf "$T/neg"
copy_root "$T/neg"

sed -i 's/--max-inflight-body-bytes/--max-inflight-body/g' "$T/neg/docs/configuration.md"
planted "a kt-webhook flag missing from docs/configuration.md fails" "documented: kt-webhook: .*--max-inflight-body-bytes"

sed -i 's/--issued-at/--issued_at/g' "$T/neg/docs/ktctl.md"
planted "a ktctl flag missing from docs/ktctl.md fails" "documented: ktctl: .*--issued-at"

printf '\n```sh runnable\nbin/ktctl validate no-such-file.yaml\n```\n' >>"$T/neg/docs/ktctl.md"
planted "a failing runnable block fails" "runnable: docs/ktctl.md:"

printf '\n```sh\nfalse\n```\n' >>"$T/neg/docs/ktctl.md"
passes "negative: a block not marked runnable is not run"

# The examples (`$ ktctl ...` transcripts): the first validate example with one shown output
# line altered, then with its last output line dropped; each must fail, named by its `$` line.
ex=$(grep -n -m1 '^\$ ktctl validate ' "$T/neg/docs/ktctl.md" | cut -d: -f1)
if [ -z "$ex" ]; then
    bad "negative: examples" "docs/ktctl.md has no \`\$ ktctl validate\` example"
else
    sed -i "$((ex + 1))s/\$/ (altered)/" "$T/neg/docs/ktctl.md"
    planted "an example with a shown output line altered fails" \
        "example: docs/ktctl.md:$ex: output line 1: shown .*\(altered\)"
    last=$(awk -v s="$ex" 'NR > s && /^```/ { print NR - 1; exit }' "$T/neg/docs/ktctl.md")
    sed -i "${last}d" "$T/neg/docs/ktctl.md"
    planted "an example missing its last output line fails" "example: docs/ktctl.md:$ex: output line [0-9]+: shown '<end>'"
fi
printf '\n```\n$ ktctl status nope -n nowhere\nno such output\n```\n' >>"$T/neg/docs/ktctl.md"
passes "negative: a \`\$ ktctl status\` example is skipped (it needs a cluster)"
check "examples: ktctl status is skipped with a note" grep -q '^skip example: docs/ktctl.md:[0-9]*: .ktctl status nope -n nowhere.: needs a cluster' "$T/neg.out"
rm -rf "$T/neg"
copy_root "$T/neg"

mkdir -p "$T/fakebin"
cp bin/kt-webhook bin/ktctl "$T/fakebin/"
printf '#!/bin/sh\necho "bad flag $1" >&2\nexit 2\n' >"$T/fakebin/kt-reconciler"
chmod +x "$T/fakebin/kt-reconciler"
NEG_BIN=$T/fakebin
planted "a --help that exits non-zero fails" "help: kt-reconciler --help: exit 2"

mkdir -p "$T/fakebin2"
cp bin/kt-webhook bin/kt-reconciler "$T/fakebin2/"
# a ktctl whose --help lists one more command than check.py knows
printf '#!/bin/sh\nif [ "$1" = --help ]; then "%s" --help | sed "/^commands:\$/a\\  frob [-x] NAME"; else exec "%s" "$@"; fi\n' \
    "$ROOT/bin/ktctl" "$ROOT/bin/ktctl" >"$T/fakebin2/ktctl"
chmod +x "$T/fakebin2/ktctl"
NEG_BIN=$T/fakebin2
planted "a ktctl command check.py does not know fails" "help: ktctl's commands: .*lists certs frob render status validate"

# The man pages: the real ones pass on the copy; then one fault each, planted in a copy of them.
passes "negative control: the pages docs/man/build.sh wrote pass" --man "$T/man"
# manfault: a fresh copy of the real pages in $T/negman
manfault() { rm -rf "$T/negman" && cp -R "$T/man" "$T/negman"; }
mkdir -p "$T/stubbin"
cp bin/kt-webhook bin/ktctl "$T/stubbin/"
r="$ROOT/bin/kt-reconciler"
# a kt-reconciler whose --help lacks the --namespaces line
printf '#!/bin/sh\nif [ "$1" = --help ]; then "%s" --help | grep -v -- --namespaces; else exec "%s" "$@"; fi\n' \
    "$r" "$r" >"$T/stubbin/kt-reconciler"
chmod +x "$T/stubbin/kt-reconciler"
if docs/man/build.sh "$T/stubbin" "$T/stubman" >"$T/man.log" 2>&1; then
    planted "a page generated from a --help without a flag fails" "man: kt-reconciler.8: .*--namespaces" \
        --man "$T/stubman"
else
    bad "negative: a page generated from a --help without a flag fails" "$(tail -c 400 "$T/man.log")"
fi

manfault
sed -i 's/renew\\-server/renew/g' "$T/negman/ktctl-certs.1"
planted "a hand-edited page without a flag fails" "man: ktctl-certs.1: .*--renew-server" --man "$T/negman"

manfault
sed -i -e 's/\\fB\\-q\\fR/\\fBquiet\\fR/' -e 's/\[\\-q\]/[quiet]/' "$T/negman/ktctl-certs.1"
planted "a page without a short flag fails" "man: ktctl-certs.1: .* -q" --man "$T/negman"

manfault
printf '.XY\n' >>"$T/negman/ktctl.1"
planted "a page groff warns about fails" "man: ktctl.1 renders: .*macro 'XY' not defined" --man "$T/negman"

manfault
rm "$T/negman/ktctl-status.1"
planted "a missing subcommand page fails" "man: ktctl-status.1: missing" --man "$T/negman"

cp "$T/man/ktctl.1" "$T/neg/docs/ktctl.1"
planted "a generated page in the source tree fails" "man: pages are build output: .*docs/ktctl.1" --man "$T/man"

# NOTICE is deploy/release/notice.sh's output on this machine (ldd of bin/, dpkg, the copyright
# files), byte for byte; then a tampered copy (a licence changed, a package dropped) must fail.
if deploy/release/notice.sh --check NOTICE bin >"$T/notice.out" 2>&1; then
    ok "NOTICE is deploy/release/notice.sh's output"
else
    bad "NOTICE is deploy/release/notice.sh's output" "$(tail -c 600 "$T/notice.out")"
fi
# notice_tampered NAME SED WANT: NOTICE edited by SED must fail --check with a diff line matching WANT
notice_tampered() {
    sed "$2" NOTICE >"$T/NOTICE.bad"
    if deploy/release/notice.sh --check "$T/NOTICE.bad" bin >"$T/notice.out" 2>&1; then
        bad "negative: $1" "--check passed"
    elif grep -qE -- "$3" "$T/notice.out"; then
        ok "negative: $1"
    else
        bad "negative: $1" "no diff line matching '$3': $(tail -c 400 "$T/notice.out")"
    fi
}
notice_tampered "a NOTICE with a licence changed fails" '0,/^  Expat$/s//  MIT/' '^\+  Expat$'
notice_tampered "a NOTICE without a library of kt-webhook fails" '0,/^  libjansson4$/{//d}' '^\+  libjansson4$'

# CHANGELOG.md (tests/docs/changelog.sh): its form, the newest release = version.h = chart =
# deploy's tag, and that it moved when code moved; then each rule broken in a scratch git repo.
tests/docs/changelog.sh "$ROOT" >"$T/cl.out" 2>&1
cl_rc=$?
grep -E '^(ok|FAIL|skip) ' "$T/cl.out"
read -r p f < <(kt_count "$T/cl.out")
pass=$((pass + p))
fail=$((fail + f))
[ $cl_rc -eq 0 ] || [ "$(grep -c '^FAIL ' "$T/cl.out")" -gt 0 ] || bad "changelog.sh" "exit $cl_rc"
G=$T/clrepo
g() { git -C "$G" -c user.name=kt-test -c user.email=kt-test@localhost -c commit.gpgsign=false "$@" >/dev/null 2>&1; }
rm -rf "$G" && mkdir -p "$G/common/base" "$G/deploy/helm/kt" "$G/docs"
cp CHANGELOG.md "$G/" && cp common/base/version.h "$G/common/base/" && cp deploy/kustomization.yaml "$G/deploy/"
cp deploy/helm/kt/Chart.yaml deploy/helm/kt/values.yaml "$G/deploy/helm/kt/" && echo 'int x;' >"$G/common/base/x.c"
g init -q -b main && g add -A && g commit -q -m "first"
# changelog_case NAME WANT: the checker on $G; WANT "pass", or a FAIL text it must print
changelog_case() {
    if tests/docs/changelog.sh "$G" >"$T/cln.out" 2>&1; then
        if [ "$2" = pass ]; then ok "$1"; else bad "$1" "the check passed"; fi
    elif [ "$2" != pass ] && grep -qE "^FAIL .*$2" "$T/cln.out"; then
        ok "$1"
    else
        bad "$1" "$(grep '^FAIL' "$T/cln.out" | { head -c 400; cat >/dev/null; })"
    fi
}
changelog_case "changelog: a repo whose last commit adds code and changelog passes" pass
echo 'int y;' >>"$G/common/base/x.c" && g commit -qam "code, no changelog"
changelog_case "negative: changelog: code moved, the changelog did not" "moved when code moved: 1 commit"
printf -- '- y.\n' >>"$G/CHANGELOG.md" && g commit -qam "changelog"
changelog_case "changelog: a later changelog commit covers the code commit" pass
echo 'int z;' >>"$G/common/base/x.c" && g commit -qam "reformat" -m "Changelog: none"
changelog_case "changelog: a code commit with the trailer 'Changelog: none' passes" pass
echo "notes" >>"$G/docs/notes.md" && g add -A && g commit -qm "docs only"
changelog_case "changelog: a commit outside the product folders needs no changelog" pass
g checkout -qb side && echo 'int v;' >>"$G/common/base/x.c" && g commit -qam "side: code"
g checkout -q main && printf -- '- w.\n' >>"$G/CHANGELOG.md" && g commit -qam "main: changelog"
g merge -q --no-edit side
changelog_case "negative: changelog: a merged branch's code, the changelog changed only on the other side" "moved when code moved: 1 commit.*side: code"
sed -i 's/KT_RELEASE "[^"]*"/KT_RELEASE "9.9.9"/' "$G/common/base/version.h"
changelog_case "negative: changelog: version.h differs from the newest release" "CHANGELOG.md newest release is '[0-9.]*', common/base/version.h says '9.9.9'"
git -C "$G" checkout -q -- . && sed -i '0,/^## \[Unreleased\]$/s//## Unreleased/' "$G/CHANGELOG.md"
changelog_case "negative: changelog: [Unreleased] missing at the top" "Unreleased\] comes first"
git -C "$G" checkout -q -- . && rm -rf "$G/.git" && printf -- '- v.\n' >>"$G/CHANGELOG.md"
tests/docs/changelog.sh "$G" >"$T/cln.out" 2>&1
check "changelog: a tarball (no .git) skips the history rule with a note" \
    grep -q '^skip changelog: moved when code moved: not a git checkout' "$T/cln.out"

kt_finish
