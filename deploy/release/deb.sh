#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/release/deb.sh BUILD_DIR OUTDIR - `make deb`: the Debian package
# OUTDIR/kt_VERSION-1_ARCH.deb of the binaries in BUILD_DIR/bin, made with the Debian tools:
#   dpkg-shlibdeps   Depends: from the libraries the binaries really link (their shlibs/symbols
#                    files), never a hand list
#   dpkg-gencontrol  DEBIAN/control from deploy/release/debian/control, the substvars and a
#                    debian/changelog written here (version VERSION-1, the last commit's date)
#   dpkg-deb         the .deb, files owned by root
#   lintian          run on the result; any error or warning not overridden (with its reason)
#                    in deploy/release/debian/lintian-overrides fails the build
# Contents: /usr/bin/{kt-webhook,kt-reconciler,ktctl} (stripped), their man pages (help2man,
# docs/man/build.sh), /usr/share/kt/api (CRDs) and /usr/share/kt/deploy (the kustomize install
# and the runtimes: `ktctl validate /usr/share/kt/deploy/runtimes`), /usr/share/doc/kt/
# copyright (DEP-5, Apache-2.0), changelog.Debian.gz, changelog.gz (CHANGELOG.md) and NOTICE
# when the repository has them. Debian tools missing here are installed with apt-get.
# Knobs: KT_MAINTAINER ("Name <email>", default: the last commit's author), KT_SOURCE_URL (the
# copyright file's Source:, default: the origin remote), KT_LINTIAN=0 skips lintian.
set -euo pipefail
# shellcheck source=deploy/release/lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -eq 2 ] || {
    echo "usage: $0 BUILD_DIR OUTDIR" >&2
    exit 2
}
b=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
rel_check_bins "$b"
rel_need dpkg-shlibdeps:dpkg-dev dpkg-gencontrol:dpkg-dev dpkg-deb:dpkg help2man:help2man
[ "${KT_LINTIAN:-1}" = 0 ] || rel_need lintian:lintian
here="$rel_root/deploy/release/debian"
version="$rel_version-1"
arch=$(dpkg --print-architecture)
maint=${KT_MAINTAINER:-$(git -C "$rel_root" log -1 --format='%an <%ae>')}
source=$(rel_source_url)

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
s="$w/src" # dpkg-shlibdeps and dpkg-gencontrol work in a source tree: debian/control there
p="$s/debian/kt"
mkdir -p "$s/debian" "$p/DEBIAN" "$p/usr/bin" "$p/usr/share/man/man1" "$p/usr/share/man/man8" \
    "$p/usr/share/doc/kt" "$p/usr/share/kt/api" "$p/usr/share/lintian/overrides"
cp "$here/control" "$s/debian/control"
date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
cat >"$s/debian/changelog" <<EOF
kt ($version) unstable; urgency=medium

  * kt $rel_version: the upstream changes are in /usr/share/doc/kt/changelog.gz
    (CHANGELOG.md of the source).

 -- $maint  $date
EOF

for f in kt-webhook kt-reconciler ktctl; do
    install -m 0755 "$b/bin/$f" "$p/usr/bin/$f"
    # what dh_strip does: no debug sections, no .comment/.note (lintian: unstripped-binary-or-object)
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$p/usr/bin/$f"
done
"$rel_root/docs/man/build.sh" "$b/bin" "$w/man" >/dev/null
for m in "$w"/man/*.1 "$w"/man/*.8; do
    sec=${m##*.}
    gzip -n -9 -c "$m" >"$p/usr/share/man/man$sec/$(basename "$m").gz"
done
cd "$rel_root"
install -m 0644 api/*.yaml "$p/usr/share/kt/api/"
cp -R deploy "$p/usr/share/kt/deploy"
rm -rf "$p/usr/share/kt/deploy/helm" "$p/usr/share/kt/deploy/image" "$p/usr/share/kt/deploy/release" \
    "$p/usr/share/kt/deploy/pre-commit"
# the years of the history (first commit .. last); without .git (a source tarball) the last commit's
first=$(git -C "$rel_root" log --reverse --format=%cd --date=format:%Y 2>/dev/null | sed -n 1p) || true
last=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
years=${first:-$last}
[ "$years" = "$last" ] || years="$years-$last"
sed -e "s|@MAINTAINER@|$maint|" -e "s|@SOURCE@|$source|" -e "s|@YEARS@|$years|" \
    -e '/^Source: $/d' "$here/copyright" >"$p/usr/share/doc/kt/copyright"
gzip -n -9 -c "$s/debian/changelog" >"$p/usr/share/doc/kt/changelog.Debian.gz"
[ -f CHANGELOG.md ] && gzip -n -9 -c CHANGELOG.md >"$p/usr/share/doc/kt/changelog.gz"
# Apache-2.0 section 4(d): a NOTICE file travels with the work.
[ -f NOTICE ] && install -m 0644 NOTICE "$p/usr/share/doc/kt/NOTICE"
install -m 0644 "$here/lintian-overrides" "$p/usr/share/lintian/overrides/kt"
find "$p" -type d -exec chmod 0755 {} +
find "$p/usr/share" -type f -exec chmod 0644 {} +

cd "$s"
# Depends: the packages (with minimum versions) whose shared libraries the binaries need.
dpkg-shlibdeps -Tdebian/kt.substvars -e debian/kt/usr/bin/kt-webhook -e debian/kt/usr/bin/kt-reconciler \
    -e debian/kt/usr/bin/ktctl 2>"$w/shlibdeps.log" || {
    cat "$w/shlibdeps.log" >&2
    exit 1
}
echo "misc:Depends=" >>debian/kt.substvars
extra=()
[ -n "$source" ] && [ "${source#http}" != "$source" ] && extra+=(-DHomepage="$source")
dpkg-gencontrol -pkt -Tdebian/kt.substvars -Pdebian/kt -DMaintainer="$maint" "${extra[@]}"
# what dh_md5sums does: DEBIAN/md5sums for debsums and dpkg --verify
(cd "$p" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
chmod 0644 "$p/DEBIAN/md5sums"
find "$p" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
deb="$out/kt_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$p" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
echo "deb: $deb ($(du -k "$deb" | cut -f1) KiB), Depends: $(dpkg-deb -f "$deb" Depends)"
if [ "${KT_LINTIAN:-1}" != 0 ]; then
    # errors and warnings fail; informational tags are printed (see debian/lintian-overrides)
    rc=0
    lintian --fail-on error,warning --display-info "$deb" >"$w/lintian.log" 2>&1 || rc=$?
    sed -i '/running with root privileges/d' "$w/lintian.log"
    [ "$rc" -eq 0 ] || {
        cat "$w/lintian.log" >&2
        echo "deb: lintian found errors or warnings (above)" >&2
        exit 1
    }
    sed 's/^/deb: lintian: /' "$w/lintian.log"
fi
