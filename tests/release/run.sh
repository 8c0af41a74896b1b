#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/release/run.sh - `make release` (deploy/release/) end to end, into a temporary folder:
#  - every artefact is there, its name carrying the version, and nothing else is;
#  - SHA256SUMS verifies them all, and a corrupted copy fails;
#  - the source tarball: the same bytes when built again, other bytes for another commit; one
#    top folder with Makefile, common/, LICENSE and no build output; extracted, `make` builds
#    it without .git and its ktctl says the version;
#  - the binary tarball: binaries, man pages, LICENSE, README.binary naming the packages;
#  - the .deb: Depends names the package of every library the binaries link (found here
#    independently: objdump NEEDED -> dpkg -S), with shlibs' minimum versions, and no package
#    they do not link; lintian passes, and every tag it reports as overridden is explained in
#    deploy/release/debian/lintian-overrides; without the overrides file the same package
#    fails lintian (the gate is real);
#  - the chart: version = appVersion = VERSION, CRDs inside, helm template's image tag VERSION;
#  - the image: index tag VERSION, config labels version/revision/source/licenses/title/created;
#  - the SBOM: CycloneDX JSON, kt at VERSION (Apache-2.0), libjansson4 with its purl and its
#    licence, the packages of the image and nothing the image does not have;
#  - the .deb in a clean Debian bookworm root made by mmdebstrap (apt resolves its Depends):
#    ktctl validate accepts a shipped runtime (exit 0) and refuses a bad TrainJob (exit 1),
#    the three binaries' --version print VERSION, dpkg --verify is clean; with libjansson4
#    forced out of that root, ktctl cannot start (the installed libraries are what runs).
# Needs root (mmdebstrap --mode=root, chroot) and a Debian mirror; several minutes, so it is
# `make release-test`, not a step of `make test`. Prints `N passed, N failed`.
# Knob: KT_KEEP_RELEASE=DIR copies the artefacts there.
# shellcheck disable=SC2016 # jq and awk programs, in single quotes on purpose
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib.sh"

v=$(make -s -C "$root" print-version)
arch=$(dpkg --print-architecture)
out="$T/release"
export KT_SOURCE_URL=https://example.invalid/kt-release-test
t0=$SECONDS
if make -s -C "$root" release RELEASE_DIR="$out" >"$T/release.log" 2>&1; then
    ok release-builds
else
    bad release-builds "$(tail -n 30 "$T/release.log")"
    kt_finish
fi
echo "time: make release $((SECONDS - t0)) s"
[ -n "${KT_KEEP_RELEASE:-}" ] && mkdir -p "$KT_KEEP_RELEASE" && cp "$out"/* "$KT_KEEP_RELEASE/"

# ---- the folder ----------------------------------------------------------------------------
src="kt-$v.tar.gz" bin="kt-$v-linux-$arch.tar.gz" deb="kt_$v-1_$arch.deb"
oci="kt-$v.oci.tar" sbom="kt-$v.sbom.cdx.json" chart="kt-$v.tgz"
for f in "$src" "$bin" "$deb" "$oci" "$sbom" "$chart" SHA256SUMS; do
    check "artefact $f" test -s "$out/$f"
done
(cd "$out" && ls) >"$T/ls"
check artefacts-nothing-else test "$(wc -l <"$T/ls")" -eq 7
for f in "$out"/*; do
    echo "size: $(basename "$f") $(stat -c %s "$f") bytes ($(du -h --apparent-size "$f" | cut -f1))"
done

# ---- SHA256SUMS ----------------------------------------------------------------------------
check sums-verify bash -c "cd '$out' && sha256sum --strict -c SHA256SUMS"
check sums-cover-all test "$(grep -c "  kt" "$out/SHA256SUMS")" -eq 6
cp -R "$out" "$T/corrupt"
printf 'X' >>"$T/corrupt/$deb" # one byte more (overwriting one could write the byte that is there)
check sums-corrupt-copy-fails bash -c "cd '$T/corrupt' && ! sha256sum --quiet -c SHA256SUMS"

# ---- source tarball ------------------------------------------------------------------------
check src-reproducible bash -c "'$root/deploy/release/dist.sh' '$T/src2' >/dev/null && cmp '$out/$src' '$T/src2/$src'"
check src-other-commit-differs bash -c "KT_DIST_REF=HEAD~1 '$root/deploy/release/dist.sh' '$T/src3' >/dev/null 2>&1 && ! cmp -s '$out/$src' '$T/src3'/kt-*.tar.gz"
tar -tzf "$out/$src" >"$T/src.list"
for f in Makefile LICENSE README.md common/base/version.h api/kustomization.yaml deploy/release/release.sh cli/main.c; do
    check "src-has $f" grep -qx "kt-$v/$f" "$T/src.list"
done
check src-one-top-folder test "$(grep -vc "^kt-$v/" "$T/src.list")" -eq 0
check src-no-build-output test "$(grep -cE "^kt-$v/(build|bin|dist)/|\.(o|a|d)$" "$T/src.list")" -eq 0
mkdir -p "$T/srcbuild"
tar -xzf "$out/$src" -C "$T/srcbuild"
t1=$SECONDS
check src-builds-with-make nice -n 10 make -s -C "$T/srcbuild/kt-$v" -j"$(nproc)" all
echo "time: source tarball build $((SECONDS - t1)) s"
check src-ktctl-version bash -c "'$T/srcbuild/kt-$v/bin/ktctl' --version | grep -cw '$v' >/dev/null"
rm -rf "$T/srcbuild"

# ---- binary tarball ------------------------------------------------------------------------
tar -tzf "$out/$bin" >"$T/bin.list"
n="kt-$v-linux-$arch"
for f in bin/ktctl bin/kt-webhook bin/kt-reconciler share/man/man1/ktctl.1 share/man/man8/kt-webhook.8 \
    share/doc/kt/LICENSE share/doc/kt/README.binary share/kt/deploy/runtimes/torch-distributed.yaml; do
    check "bin-has $f" grep -qx "$n/$f" "$T/bin.list"
done
if [ -f "$root/NOTICE" ]; then
    check bin-has-NOTICE grep -qx "$n/share/doc/kt/NOTICE" "$T/bin.list"
fi
tar -xzf "$out/$bin" -C "$T" "$n/share/doc/kt/README.binary"
check bin-readme-names-packages grep -qE '^    apt-get install .*libjansson4.*libmicrohttpd12' "$T/$n/share/doc/kt/README.binary"

# ---- Debian package ------------------------------------------------------------------------
dpkg-deb -f "$out/$deb" Depends >"$T/depends"
dpkg-deb -x "$out/$deb" "$T/debroot"
# independently of deb.sh: the package owning each library a binary links (NEEDED)
: >"$T/needed-pkgs"
for b in kt-webhook kt-reconciler ktctl; do
    objdump -p "$T/debroot/usr/bin/$b" | awk '$1 == "NEEDED" { print $2 }' | while read -r lib; do
        p=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')
        dpkg -S "$(readlink -f "$p")" 2>/dev/null || dpkg -S "$p" 2>/dev/null || dpkg -S "/usr$p" 2>/dev/null
    done | cut -d: -f1 >>"$T/needed-pkgs"
done
sort -u "$T/needed-pkgs" -o "$T/needed-pkgs"
check deb-needed-found test "$(wc -l <"$T/needed-pkgs")" -ge 5
while read -r p; do
    check "deb-depends-$p" grep -qE "(^|, )$p( \(|,|$)" "$T/depends"
done <"$T/needed-pkgs"
check deb-depends-only-linked bash -c "test \"\$(tr ',' '\n' <'$T/depends' | sed 's/^ *//; s/ .*//' | sort -u)\" = \"\$(cat '$T/needed-pkgs')\""
check deb-depends-shlibs-versions grep -qE 'libjansson4 \(>= [0-9]' "$T/depends"
check deb-depends-not-unlinked bash -c "! grep -qw -e libssl3 -e libsystemd0 '$T/depends'"
check deb-version test "$(dpkg-deb -f "$out/$deb" Version)" = "$v-1"
for f in usr/share/doc/kt/copyright usr/share/doc/kt/changelog.Debian.gz usr/share/man/man1/ktctl.1.gz \
    usr/share/man/man8/kt-webhook.8.gz usr/share/kt/deploy/runtimes/torch-distributed.yaml; do
    check "deb-has $f" test -s "$T/debroot/$f"
done
check deb-copyright-dep5 grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$T/debroot/usr/share/doc/kt/copyright"
check deb-copyright-apache grep -qx 'License: Apache-2.0' "$T/debroot/usr/share/doc/kt/copyright"
check deb-lintian-clean lintian --fail-on error,warning "$out/$deb"
# (--show-overrides makes lintian exit 2 for the overridden warnings, so a second run lists them)
lintian --show-overrides "$out/$deb" >"$T/lintian" 2>&1
# every overridden tag is in the overrides file, under a comment that says why
grep -E '^O: ' "$T/lintian" | awk '{ print $3 }' | sort -u >"$T/overridden"
while read -r tag; do
    check "deb-lintian-override-explained $tag" awk -v t="$tag" '
        /^#/ { c = 1; next } /^$/ { c = 0; next } $2 == t && c { found = 1 } END { exit !found }' \
        "$root/deploy/release/debian/lintian-overrides"
done <"$T/overridden"
dpkg-deb -R "$out/$deb" "$T/noover"
rm -f "$T/noover/usr/share/lintian/overrides/kt"
sed -i '\|usr/share/lintian/overrides/kt|d' "$T/noover/DEBIAN/md5sums"
dpkg-deb --root-owner-group --build "$T/noover" "$T/noover.deb" >/dev/null
check deb-lintian-gate-is-real bash -c "! lintian --fail-on error,warning '$T/noover.deb'"

# ---- Helm chart ----------------------------------------------------------------------------
tar -xzf "$out/$chart" -C "$T" kt/Chart.yaml
check chart-version grep -qx "version: $v" "$T/kt/Chart.yaml"
check chart-appversion grep -qxE "appVersion: \"?$v\"?" "$T/kt/Chart.yaml"
check chart-has-crds bash -c "tar -tzf '$out/$chart' | grep -cx 'kt/crds/trainer.kubeflow.org_trainjobs.yaml' >/dev/null"
helm=${KT_HELM:-$("$root/tests/helm/build-helm.sh" | tail -n 1)}
"$helm" template kt "$out/$chart" -n kubeflow-system >"$T/chart.yaml" 2>/dev/null
check chart-image-tag-is-version test "$(grep -cE "image: \"?kt:$v\"?$" "$T/chart.yaml")" -ge 2
check chart-no-other-tag test "$(grep -E 'image: ' "$T/chart.yaml" | grep -cv ":$v")" -eq 0

# ---- OCI image -----------------------------------------------------------------------------
mkdir -p "$T/oci"
tar -xf "$out/$oci" -C "$T/oci"
check image-tag jq -e --arg v "$v" '.manifests | length == 1 and .[0].annotations["org.opencontainers.image.ref.name"] == $v' "$T/oci/index.json"
m=$(jq -r '.manifests[0].digest' "$T/oci/index.json")
c=$(jq -r '.config.digest' "$T/oci/blobs/sha256/${m#sha256:}")
cfg="$T/oci/blobs/sha256/${c#sha256:}"
rev=$(git -C "$root" rev-parse HEAD)
L='.config.Labels["org.opencontainers.image'
check image-label-version jq -e --arg v "$v" "$L.version\"] == \$v" "$cfg"
check image-label-revision jq -e --arg v "$rev" "$L.revision\"] == \$v" "$cfg"
check image-label-source jq -e --arg v "$KT_SOURCE_URL" "$L.source\"] == \$v" "$cfg"
check image-label-licenses jq -e "$L.licenses\"] == \"Apache-2.0\"" "$cfg"
check image-label-title jq -e "$L.title\"] == \"kt\"" "$cfg"
check image-label-created jq -e "($L.created\"] | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\$\")) and $L.created\"] == .created" "$cfg"

# ---- SBOM ----------------------------------------------------------------------------------
s="$out/$sbom"
check sbom-json jq -e '.bomFormat == "CycloneDX" and .specVersion == "1.5" and (.serialNumber | startswith("urn:uuid:"))' "$s"
check sbom-kt jq -e --arg v "$v" '[.components[] | select(.name == "kt" and .version == $v and .licenses[0].license.id == "Apache-2.0")] | length == 1' "$s"
check sbom-libjansson4 jq -e '[.components[] | select(.name == "libjansson4" and (.purl | test("^pkg:deb/debian/libjansson4@[^?]+\\?arch=amd64$")) and .licenses[0].license.id == "MIT")] | length == 1' "$s"
for p in libmicrohttpd12 libgnutls30 libcurl3-gnutls libyaml-0-2 libc6; do
    check "sbom-lists $p" jq -e --arg p "$p" '[.components[] | select(.name == $p and .version != "")] | length == 1' "$s"
done
check sbom-not-in-image jq -e '[.components[] | select(.name == "bash" or .name == "dpkg" or .name == "apt")] | length == 0' "$s"
check sbom-purls-unique jq -e '[.components[].purl] | length == (unique | length)' "$s"

# ---- the .deb in a clean Debian root -------------------------------------------------------
sed 's/name: EPOCHS$/name: PET_NNODES/' "$root/scripts/demo/example-trainjob.yaml" >"$T/bad.yaml"
t2=$SECONDS
r="$T/debian"
if mmdebstrap --quiet --mode=root --variant=apt --format=directory \
    --customize-hook="copy-in $out/$deb /tmp" \
    --customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /tmp/$deb" \
    bookworm "$r" ${KT_DEBIAN_MIRROR:+"$KT_DEBIAN_MIRROR"} >"$T/mmdebstrap.log" 2>&1; then
    ok deb-installs-in-clean-bookworm
else
    bad deb-installs-in-clean-bookworm "$(tail -n 20 "$T/mmdebstrap.log")"
    kt_finish
fi
echo "time: clean root + apt-get install $((SECONDS - t2)) s"
cp "$T/bad.yaml" "$r/srv/bad.yaml" # mmdebstrap empties /tmp at its end
in_root() { chroot "$r" "$@"; }
check root-kt-installed bash -c "chroot '$r' dpkg-query -W -f '\${Status} \${Version}' kt | grep -cx 'install ok installed $v-1' >/dev/null"
check root-depends-installed bash -c "chroot '$r' dpkg-query -W -f '\${Status}\n' libjansson4 libmicrohttpd12 | grep -c 'install ok installed' | grep -cx 2 >/dev/null"
check root-dpkg-verify in_root dpkg --verify kt
check root-ktctl-version bash -c "chroot '$r' ktctl --version | grep -cw '$v' >/dev/null"
check root-webhook-version bash -c "chroot '$r' kt-webhook --version | grep -cw '$v' >/dev/null"
check root-reconciler-version bash -c "chroot '$r' kt-reconciler --version | grep -cw '$v' >/dev/null"
check root-ktctl-validate-runtime in_root ktctl validate /usr/share/kt/deploy/runtimes/torch-distributed.yaml
in_root ktctl validate /srv/bad.yaml /usr/share/kt/deploy/runtimes/torch-distributed.yaml >"$T/badout" 2>&1
rc=$?
check root-ktctl-validate-bad-exit-1 test "$rc" -eq 1
check root-ktctl-validate-bad-says-why grep -q 'must not have reserved envs' "$T/badout"
in_root dpkg --remove --force-depends libjansson4 >/dev/null 2>&1
check root-without-libjansson-ktctl-fails bash -c "! chroot '$r' ktctl --version"
kt_finish
