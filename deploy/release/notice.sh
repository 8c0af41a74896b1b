#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/notice.sh [--check FILE] [BIN_DIR] - write NOTICE (to stdout): the third-party
# libraries of kt, read from this machine's Debian package database, never typed by hand.
#   - per binary (kt-webhook, kt-reconciler, ktctl in BIN_DIR, default build/plain/bin): the
#     shared libraries it loads (ldd), each mapped to its Debian package (dpkg -S);
#   - the OCI image (`make image`): the packages deploy/image/build.sh names in its `pkgs=` list
#     and everything they depend on (Pre-Depends and Depends of the installed packages,
#     dpkg-query; of alternatives the installed one);
#   - for every package named: the License: fields of /usr/share/doc/PKG/copyright when it is
#     machine-readable (DEP-5, a `Format:` first line), else the /usr/share/common-licenses/
#     files it refers to, marked as such.
# Sorted (LC_ALL=C) and free of versions, dates and paths of this build, so the same machine
# gives the same bytes. --check FILE: compare FILE with the output; exit 1 with a diff when they
# differ (the docs tier runs `--check NOTICE`). Regenerate: deploy/release/notice.sh >NOTICE
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
check=""
if [ "${1:-}" = --check ]; then
    [ $# -ge 2 ] || {
        echo "usage: $0 [--check FILE] [BIN_DIR]" >&2
        exit 2
    }
    check=$2
    shift 2
fi
bindir=${1:-$root/build/plain/bin}
bins="kt-webhook kt-reconciler ktctl"
for b in $bins; do
    [ -x "$bindir/$b" ] || {
        echo "notice: $bindir/$b not built (make)" >&2
        exit 1
    }
done
command -v dpkg-query >/dev/null || {
    echo "notice: needs dpkg-query (a Debian system)" >&2
    exit 1
}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# The binaries: every shared object ldd resolves to a file (not the vDSO), mapped to its package
# by one dpkg-query -S over all the names a file may be registered under: ldd says /lib/...
# where dpkg may know /usr/lib/... (merged /usr), or the symlink's target rather than the link.
for b in $bins; do
    ldd "$bindir/$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
        sort -u >"$w/$b.libs"
done
cat "$w"/*.libs | sort -u | while read -r l; do
    r=$(readlink -f "$l")
    for c in "$l" "$r" "${l#/usr}" "${r#/usr}" "/usr$l" "/usr$r"; do
        case $c in /usr/usr/*) ;; *) printf '%s\t%s\n' "$l" "$c" ;; esac
    done
done >"$w/cands"
cut -f2 "$w/cands" | sort -u | xargs dpkg-query -S 2>/dev/null | grep -v '^diversion ' |
    sed -E 's/^([^:,]+)[^ ]* (.*)$/\2\t\1/' >"$w/owners" || true
# lib -> package: of a library's names, in the order above, the first dpkg knows
awk -F '\t' 'NR == FNR { o[$1] = $2; next } !($1 in p) && ($2 in o) { p[$1] = o[$2] }
    END { for (l in p) print l "\t" p[l] }' "$w/owners" "$w/cands" >"$w/libpkg"
for b in $bins; do
    awk -F '\t' -v b="$b" 'NR == FNR { p[$1] = $2; next }
        !($1 in p) { print "notice: no Debian package owns " $1 " (of " b ")" >"/dev/stderr"; bad = 1 }
        { print p[$1] } END { exit bad }' "$w/libpkg" "$w/$b.libs" | sort -u >"$w/$b.pkgs"
done

# The image: deploy/image/build.sh's pkgs= list and the closure of its dependencies, from one
# dpkg-query -W of every package (name, status, Pre-Depends and Depends).
img=$(sed -n 's/^pkgs=//p' "$root/deploy/image/build.sh" | tr ',' ' ')
[ -n "$img" ] || {
    echo "notice: no pkgs= line in deploy/image/build.sh" >&2
    exit 1
}
dpkg-query -W -f '${Package}\t${db:Status-Abbrev}\t${Pre-Depends},${Depends}\n' |
    awk -F '\t' '$2 ~ /^ii/' >"$w/db"
: >"$w/image.pkgs"
todo=$img
while [ -n "$todo" ]; do
    read -r p todo <<<"$todo" || true
    [ -n "$p" ] || continue
    grep -qx "$p" "$w/image.pkgs" && continue
    deps=$(awk -F '\t' -v p="$p" '$1 == p { print $3; f = 1 } END { exit !f }' "$w/db") || {
        echo "notice: $p (the image's) is not installed here; its copyright file is needed" >&2
        exit 1
    }
    echo "$p" >>"$w/image.pkgs"
    # each dependency: the first installed of its alternatives
    todo="$todo $(tr ',' '\n' <<<"$deps" | sed -E 's/\([^)]*\)//g; s/:any//g' |
        awk -F '\t' 'NR == FNR { ok[$1] = 1; next } { for (i = 1; i <= NF; i++) if ($i != "|" && ($i in ok)) { print $i; break } }' \
            "$w/db" FS=' ' - | tr '\n' ' ')"
done
sort -u -o "$w/image.pkgs" "$w/image.pkgs"

# licences PKG - one line per licence of PKG's copyright file.
licences() {
    local f=/usr/share/doc/$1/copyright
    [ -f "$f" ] || {
        echo "notice: $f missing" >&2
        return 1
    }
    if head -n 1 "$f" | grep -c '^Format:' >/dev/null; then
        sed -n 's/^License:[[:space:]]*//p' "$f" | sed 's/[[:space:]]*$//' | grep -v '^$' | sort -u
    else
        grep -o 'common-licenses/[A-Za-z0-9._+-]*' "$f" | sed 's|^common-licenses/||; s/\.*$//' |
            sort -u | sed 's|^|/usr/share/common-licenses/|'
    fi
}

{
    cat <<EOF
kt
Copyright the kt authors. Licensed under the Apache License, Version 2.0 (LICENSE).

This file is generated by deploy/release/notice.sh from the Debian package database of the
machine that built kt ($(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release)); do not edit it by hand.
kt's binaries link these libraries dynamically; none is copied into kt's source. Each package's
full copyright and licence text is in /usr/share/doc/PACKAGE/copyright on a Debian system.

EOF
    for b in $bins; do
        echo "== $b: shared libraries (ldd), by Debian package"
        sed 's/^/  /' "$w/$b.pkgs"
        echo
    done
    echo "== OCI image (make image): kt's three binaries in /usr/local/bin and these Debian packages"
    echo "   (deploy/image/build.sh's list and their dependencies)"
    sed 's/^/  /' "$w/image.pkgs"
    echo
    echo "== Licences, by package"
    echo "   License: fields of a machine-readable (DEP-5) copyright file; otherwise the"
    echo "   common-licenses texts the file refers to, marked \"(not machine-readable)\"."
    cat "$w"/*.pkgs | sort -u | while read -r p; do
        echo
        if head -n 1 "/usr/share/doc/$p/copyright" | grep -c '^Format:' >/dev/null; then
            echo "$p"
        else
            echo "$p (not machine-readable)"
        fi
        licences "$p" | sed 's/^/  /'
    done
} >"$w/NOTICE"

if [ -n "$check" ]; then
    if diff -u "$check" "$w/NOTICE" >"$w/diff"; then
        echo "notice: $check is up to date"
    else
        echo "notice: $check differs from deploy/release/notice.sh's output (regenerate: deploy/release/notice.sh >NOTICE):" >&2
        cat "$w/diff" >&2
        exit 1
    fi
else
    cat "$w/NOTICE"
fi
