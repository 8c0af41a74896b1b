#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/install.sh install BUILD_DIR | uninstall - `make install` / `make uninstall`,
# with the GNU directory variables from the environment (the Makefile passes them):
#   PREFIX (/usr/local), BINDIR (PREFIX/bin), DATADIR (PREFIX/share), MANDIR (DATADIR/man),
#   DOCDIR (DATADIR/doc/kt); DESTDIR (empty) is put in front of every one of them (staged installs).
# install writes:
#   BINDIR/kt-webhook kt-reconciler ktctl (from BUILD_DIR/bin), BINDIR/kubectl-kt -> ktctl
#   MANDIR/man1/ktctl.1 ktctl-SUB.1, MANDIR/man8/kt-webhook.8 kt-reconciler.8 (docs/man/build.sh)
#   DATADIR/kt/api/        the CRDs and their kustomization
#   DATADIR/kt/deploy/     the install manifests and the Helm chart (no scripts, none of the
#                          image, release or pre-commit tooling)
#   DOCDIR/                LICENSE NOTICE README.md CHANGELOG.md docs/*.md
#   DATADIR/kt/installed-files: the manifest, every file, link and directory install made
# uninstall removes what the manifest lists (files and links, then the directories install made,
# when empty) and nothing else; it refuses without a manifest (a different PREFIX, DESTDIR or
# directory variable than the install's) and refuses a manifest entry outside those directories.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
usage() {
    echo "usage: $0 install BUILD_DIR | uninstall" >&2
    exit 2
}
die() {
    echo "$1: $2" >&2
    exit 1
}
[ $# -ge 1 ] || usage
mode=$1
case $mode in install) [ $# -eq 2 ] || usage ;; uninstall) [ $# -eq 1 ] || usage ;; *) usage ;; esac

PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/bin}
DATADIR=${DATADIR:-$PREFIX/share}
MANDIR=${MANDIR:-$DATADIR/man}
DOCDIR=${DOCDIR:-$DATADIR/doc/kt}
DESTDIR=${DESTDIR:-}
KTDIR=$DATADIR/kt
for v in PREFIX BINDIR DATADIR MANDIR DOCDIR; do
    case ${!v} in
    /*) ;;
    *) die "make $mode" "$v must be an absolute path (got '${!v}'); DESTDIR is where a staged install goes" ;;
    esac
    case ${!v} in */../* | */.. | */./* | */.) die "make $mode" "$v must not contain . or .. ('${!v}')" ;; esac
done
case $DESTDIR in '' | /*) ;; *) die "make $mode" "DESTDIR must be an absolute path (got '$DESTDIR')" ;; esac
D=${DESTDIR%/}
manifest=$KTDIR/installed-files

# under KIND PATH - PATH is inside one of the directories kt installs into (a directory, KIND d,
# may also be one of their parents: install made it when it was missing)
under() {
    local d
    for d in "$BINDIR" "$MANDIR" "$KTDIR" "$DOCDIR"; do
        case $2 in "$d" | "$d"/*) return 0 ;; esac
        [ "$1" = d ] && case $d in "$2"/*) return 0 ;; esac
    done
    return 1
}

if [ "$mode" = uninstall ]; then
    [ -f "$D$manifest" ] ||
        die "make uninstall" "no $D$manifest: kt is not installed there (use the PREFIX, DESTDIR and directory variables of the install)"
    mapfile -t lines <"$D$manifest"
    for l in "${lines[@]}"; do
        case $l in "f "* | "d "*) ;; *) die "make uninstall" "$D$manifest: bad line '$l'; nothing removed" ;; esac
        under "${l%% *}" "${l#? }" || die "make uninstall" "$D$manifest lists '${l#? }', outside kt's directories; nothing removed"
    done
    n=0
    for l in "${lines[@]}"; do
        case $l in "f "*) ;; *) continue ;; esac
        if [ -e "$D${l#f }" ] || [ -L "$D${l#f }" ]; then
            rm -f "$D${l#f }"
            n=$((n + 1))
        fi
    done
    # the directories install made, deepest first; one that holds something else stays
    kept=""
    while IFS= read -r d; do
        [ -d "$D$d" ] || continue
        rmdir "$D$d" 2>/dev/null || kept="$kept $D$d"
    done < <(printf '%s\n' "${lines[@]}" | sed -n 's/^d //p' | LC_ALL=C sort -r)
    echo "uninstall: removed $n files from $D$PREFIX${kept:+; kept, not empty:$kept}"
    exit 0
fi

b=$2
case $b in /*) ;; *) b="$root/$b" ;; esac
for f in kt-webhook kt-reconciler ktctl; do
    [ -x "$b/bin/$f" ] || die "make install" "$b/bin/$f not built (make)"
done

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
# Writable? The nearest existing ancestor of each directory must be writable by us.
for d in "$BINDIR" "$MANDIR" "$KTDIR" "$DOCDIR"; do
    a=$D$d
    while [ ! -e "$a" ]; do a=$(dirname "$a"); done
    [ -d "$a" ] || die "make install" "$a is not a directory (installing into $D$d)"
    [ -w "$a" ] || die "make install" "cannot write to $a (installing into $D$d): run as a user who may, or stage it with DESTDIR=/some/dir"
done

"$root/docs/man/build.sh" "$b/bin" "$w/man" >/dev/null 2>"$w/man.log" || {
    cat "$w/man.log" >&2
    die "make install" "docs/man/build.sh failed"
}

: >"$w/list"
# mkd DIR - mkdir -p $D/DIR, recording each directory it makes
mkd() {
    local a=$1 new=()
    while [ "$a" != / ] && [ ! -d "$D$a" ]; do
        new+=("$a")
        a=$(dirname "$a")
    done
    [ ${#new[@]} -eq 0 ] && return 0
    mkdir -p "$D$1"
    printf 'd %s\n' "${new[@]}" >>"$w/list"
}
# put MODE SRC DEST - install a file
put() {
    mkd "$(dirname "$3")"
    install -m "$1" "$2" "$D$3"
    echo "f $3" >>"$w/list"
}
# link TARGET DEST - a symbolic link
link() {
    mkd "$(dirname "$2")"
    ln -sfn "$1" "$D$2"
    echo "f $2" >>"$w/list"
}
cd "$root"
for f in kt-webhook kt-reconciler ktctl; do put 0755 "$b/bin/$f" "$BINDIR/$f"; done
link ktctl "$BINDIR/kubectl-kt"
for m in "$w"/man/*.1; do put 0644 "$m" "$MANDIR/man1/${m##*/}"; done
for m in "$w"/man/*.8; do put 0644 "$m" "$MANDIR/man8/${m##*/}"; done
for f in api/*.yaml; do put 0644 "$f" "$KTDIR/$f"; done
while IFS= read -r f; do
    if [ -L "$f" ]; then link "$(readlink "$f")" "$KTDIR/$f"; else put 0644 "$f" "$KTDIR/$f"; fi
done < <(find deploy \( -path deploy/image -o -path deploy/release -o -path deploy/pre-commit \) -prune -o \
    \( -type f -o -type l \) ! -name '*.sh' -print | LC_ALL=C sort)
for f in LICENSE NOTICE README.md CHANGELOG.md; do put 0644 "$f" "$DOCDIR/$f"; done
for f in docs/*.md; do put 0644 "$f" "$DOCDIR/$f"; done

# The manifest: what an earlier install recorded stays listed (its directories too), plus this one's.
mkd "$KTDIR"
[ -f "$D$manifest" ] && cat "$D$manifest" >>"$w/list"
echo "f $manifest" >>"$w/list"
LC_ALL=C sort -u "$w/list" >"$D$manifest"
chmod 0644 "$D$manifest"
echo "install: $(grep -c '^f ' "$D$manifest") files under ${D:-}$PREFIX (manifest: $D$manifest; make uninstall removes them)"
