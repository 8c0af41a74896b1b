#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""deploy/release/sbom.py - a CycloneDX 1.5 JSON SBOM of kt's image, read from what the image
is made of (deploy/image/build.sh calls it with KT_IMAGE_SBOM set, before it deletes the
documentation from the root filesystem):

  --debs DIR     the .deb files mmdebstrap unpacked into the image: name, version and
                 architecture from each one's control fields (dpkg-deb -f), because the image
                 is made with --variant=extract, which runs no dpkg and leaves no package
                 database (var/lib/dpkg/status) to read
  --rootfs DIR   the unpacked root filesystem: each package's usr/share/doc/NAME/copyright;
                 when it is machine-readable (DEP-5), the License: of its Files paragraphs
                 becomes the component's licences (Debian short names mapped to SPDX ids
                 where they are the same licence, kept as names otherwise)

plus kt itself (--version, --revision, --source; licence Apache-2.0). Every package is a
component with purl pkg:deb/debian/NAME@VERSION?arch=ARCH. The output is reproducible: the
timestamp is SOURCE_DATE_EPOCH and the serial number a UUID derived from the content."""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import urllib.parse
import uuid

# the Format: line of a machine-readable copyright file (older ones say http://)
DEP5 = re.compile(r"Format:\s*https?://www\.debian\.org/doc/packaging-manuals/copyright-format/1\.0/?\s*$", re.I | re.M)
# Debian short licence names (copyright-format 1.0, "License specification") whose SPDX id
# names the same licence; a name not here is reported as a name, not guessed.
SPDX = {
    "Apache-2.0": "Apache-2.0",
    "Artistic": "Artistic-1.0-Perl",
    "BSD-2-clause": "BSD-2-Clause",
    "BSD-3-clause": "BSD-3-Clause",
    "BSD-4-clause": "BSD-4-Clause",
    "CC0-1.0": "CC0-1.0",
    "Expat": "MIT",
    "GPL-2": "GPL-2.0-only",
    "GPL-2+": "GPL-2.0-or-later",
    "GPL-3": "GPL-3.0-only",
    "GPL-3+": "GPL-3.0-or-later",
    "ISC": "ISC",
    "LGPL-2": "LGPL-2.0-only",
    "LGPL-2+": "LGPL-2.0-or-later",
    "LGPL-2.1": "LGPL-2.1-only",
    "LGPL-2.1+": "LGPL-2.1-or-later",
    "LGPL-3": "LGPL-3.0-only",
    "LGPL-3+": "LGPL-3.0-or-later",
    "MIT": "MIT",
    "MPL-2.0": "MPL-2.0",
    "OpenSSL": "OpenSSL",
    "Zlib": "Zlib",
    "zlib": "Zlib",
    "curl": "curl",
}


def control_fields(deb):
    out = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Version", "Architecture", "Source",
                          "Homepage"], check=True, capture_output=True, text=True).stdout
    fields = {}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        fields[k.strip()] = v.strip()
    return fields


def in_root(rootfs, path):
    """path inside rootfs, following symbolic links as the image would (absolute targets are
    the image's, not this machine's)."""
    cur = rootfs
    for part in path.strip("/").split("/"):
        nxt = os.path.join(cur, part)
        for _ in range(40):
            if not os.path.islink(nxt):
                break
            t = os.readlink(nxt)
            nxt = os.path.join(rootfs, t.lstrip("/")) if t.startswith("/") else os.path.join(cur, t)
            nxt = os.path.normpath(nxt)
        cur = nxt
    return cur


def dep5_licences(text):
    """The distinct License: short names of the Files paragraphs, in order, or None when the
    file is not machine-readable."""
    paras = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    if not paras or not DEP5.search(paras[0]):
        return None
    names = []
    for p in paras[1:]:
        if not re.search(r"^Files:", p, re.M):
            continue
        m = re.search(r"^License:[ \t]*(\S.*)$", p, re.M)
        if m and m.group(1).strip() not in names:
            names.append(m.group(1).strip())
    return names


# a name that already is an SPDX id, in any case (some copyright files write BSD-3-Clause)
SPDX_LOWER = {k.lower(): v for k, v in SPDX.items()} | {v.lower(): v for v in SPDX.values()}


def licence_objects(names):
    objs = []
    for n in names:
        i = SPDX_LOWER.get(n.lower())
        o = {"license": {"id": i}} if i else {"license": {"name": n}}
        if o not in objs:
            objs.append(o)
    return objs


def purl(name, version, arch):
    v = urllib.parse.quote(version, safe="")
    return f"pkg:deb/debian/{name}@{v}?arch={arch}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--debs", required=True)
    ap.add_argument("--rootfs", required=True)
    ap.add_argument("--version", required=True, help="kt's release (the image tag)")
    ap.add_argument("--revision", default="", help="the git commit")
    ap.add_argument("--source", default="", help="where kt's source lives")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    debs = sorted(glob.glob(os.path.join(a.debs, "*.deb")))
    if not debs:
        sys.exit(f"sbom: no .deb files in {a.debs}")
    comps = []
    for deb in debs:
        f = control_fields(deb)
        name, version, arch = f["Package"], f["Version"], f["Architecture"]
        p = purl(name, version, arch)
        c = {"type": "library" if name.startswith("lib") else "application", "bom-ref": p,
             "name": name, "version": version, "purl": p}
        props = [{"name": "debian:architecture", "value": arch}]
        if f.get("Source"):
            # "Source: NAME (VERSION)" when the source version differs from the binary's
            props.append({"name": "debian:source", "value": f["Source"].split(" ")[0]})
        cpath = in_root(a.rootfs, f"usr/share/doc/{name}/copyright")
        names = None
        if os.path.isfile(cpath):
            with open(cpath, encoding="utf-8", errors="replace") as fh:
                names = dep5_licences(fh.read())
            if names is None:
                props.append({"name": "debian:copyright", "value": "not machine-readable (no DEP-5 Format:)"})
        else:
            props.append({"name": "debian:copyright", "value": "missing"})
        if names:
            c["licenses"] = licence_objects(names)
        if f.get("Homepage"):
            c["externalReferences"] = [{"type": "website", "url": f["Homepage"]}]
        c["properties"] = props
        comps.append(c)

    kt_purl = f"pkg:generic/kt@{urllib.parse.quote(a.version, safe='')}"
    kt = {"type": "application", "bom-ref": kt_purl, "name": "kt", "version": a.version,
          "purl": kt_purl, "licenses": [{"license": {"id": "Apache-2.0"}}],
          "description": "Kubeflow Trainer v2 control plane: kt-webhook, kt-reconciler, ktctl"}
    if a.revision:
        kt["properties"] = [{"name": "vcs:revision", "value": a.revision}]
    if a.source:
        kt["externalReferences"] = [{"type": "vcs", "url": a.source}]
    comps.insert(0, kt)

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    ts = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    image_ref = f"kt-image@{a.version}"
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "metadata": {
            "timestamp": ts,
            "tools": {"components": [{"type": "application", "name": "deploy/release/sbom.py",
                                       "version": a.version}]},
            "component": {"type": "container", "bom-ref": image_ref, "name": "kt",
                          "version": a.version},
        },
        "components": comps,
        "dependencies": [{"ref": image_ref, "dependsOn": [c["bom-ref"] for c in comps]}],
    }
    body = json.dumps(bom, sort_keys=True)
    bom["serialNumber"] = "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, body))
    with open(a.out + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(bom, fh, indent=2, sort_keys=False)
        fh.write("\n")
    os.replace(a.out + ".tmp", a.out)
    print(f"sbom: {a.out} ({len(comps)} components)", file=sys.stderr)


if __name__ == "__main__":
    main()
