#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/gen/gen_gotypes.py - writes common/base/gotypes.c, the table of Go JSON field facts
(key, order, omitempty/omitzero, nested type; each type's Go name as reflect prints it and an
integer's width) that kt_go_marshal (common/base/fielderr.c) uses to print a bad value the way
upstream's field.Error does (json.Marshal of the decoded Go struct) and kt_go_decode_error
(common/base/godecode.c) to give the decoder's error for a value that does not decode.

Reads the Go type declarations (not code) of the API packages upstream Kubeflow Trainer v2.3.0
builds against, from the Go module cache, at the versions its go.mod requires:
  github.com/kubeflow/trainer/v2 pkg/apis/trainer/v1alpha1, k8s.io/api core/v1 and batch/v1,
  k8s.io/apimachinery meta/v1, sigs.k8s.io/jobset api/jobset/v1alpha2, volcano scheduling,
walking every struct reachable from the roots below. encoding/json's rules applied here:
unexported and `json:"-"` fields dropped, a field without a tag named by its Go name, an
embedded struct without a tag name promoted (at its position), `omitempty`/`omitzero`
recorded; types with their own MarshalJSON must be in SPECIAL (else the script fails).

Usage: scripts/gen/gen_gotypes.py [--out FILE] [GOMODCACHE]
  GOMODCACHE defaults to `go env GOMODCACHE` (else ~/go/pkg/mod); --out writes FILE instead of
  common/base/gotypes.c (formatted with the repository's .clang-format all the same). Exits 3
  when an input module is not in the module cache (nothing downloaded here).
The build never runs this: the generated file is committed (tests/regen.sh, a step of
`make lint`, checks that it is what this script writes). Re-run it when upstream moves."""
import os
import re
import subprocess
import sys

TRAINER = "github.com/kubeflow/trainer/v2"
TRAINER_VERSION = "v2.3.0"
TRAINER_PKG = TRAINER + "/pkg/apis/trainer/v1alpha1"
OUT = "common/base/gotypes.c"

# Root types: (package, Go type name, exported C name).
ROOTS = [
    (TRAINER_PKG, "TrainJob", "kt_go_TrainJob"),
    (TRAINER_PKG, "TrainingRuntime", "kt_go_TrainingRuntime"),
    (TRAINER_PKG, "ClusterTrainingRuntime", "kt_go_ClusterTrainingRuntime"),
    (TRAINER_PKG, "TrainJobSpec", "kt_go_TrainJobSpec"),
    (TRAINER_PKG, "TrainingRuntimeSpec", "kt_go_TrainingRuntimeSpec"),
    (TRAINER_PKG, "RuntimeRef", "kt_go_RuntimeRef"),
    (TRAINER_PKG, "RuntimePatch", "kt_go_RuntimePatch"),
    (TRAINER_PKG, "EnvInjectionTarget", "kt_go_EnvInjectionTarget"),
    ("k8s.io/api/core/v1", "EnvVar", "kt_go_EnvVar"),
    ("k8s.io/api/core/v1", "ResourceRequirements", "kt_go_ResourceRequirements"),
    ("k8s.io/api/core/v1", "Container", "kt_go_Container"),
]

# Types with their own MarshalJSON: (package, name) -> kind.
SPECIAL = {
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "QUANTITY",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "INTORSTR",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Time"): "TIME",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "MicroTime"): "MICROTIME",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration"): "DURATION",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "FieldsV1"): "RAW",
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): "RAW",
}
# Basic Go types: name -> (kind, bits, unsigned); byte and rune are Go's aliases of uint8/int32.
BASIC = {
    "string": ("STRING", 0, 0), "bool": ("BOOL", 0, 0),
    "float32": ("FLOAT", 32, 0), "float64": ("FLOAT", 64, 0),
    "int": ("INT", 64, 0), "int8": ("INT", 8, 0), "int16": ("INT", 16, 0),
    "int32": ("INT", 32, 0), "int64": ("INT", 64, 0), "uint": ("INT", 64, 1),
    "uint8": ("INT", 8, 1), "uint16": ("INT", 16, 1), "uint32": ("INT", 32, 1),
    "uint64": ("INT", 64, 1), "uintptr": ("INT", 64, 1),
}
ALIAS = {"byte": "uint8", "rune": "int32"}


def die(msg, code=1):
    print(f"gen_gotypes: {msg}", file=sys.stderr)
    sys.exit(code)


def module_versions(modcache):
    gomod = os.path.join(modcache, f"{TRAINER}@{TRAINER_VERSION}", "go.mod")
    if not os.path.isfile(gomod):
        die(f"{gomod}: not in the module cache (go mod download {TRAINER}@{TRAINER_VERSION})", 3)
    vers = {TRAINER: TRAINER_VERSION}
    for m in re.finditer(r"^\s*(\S+)\s+(v\S+)", open(gomod).read(), re.M):
        vers[m.group(1)] = m.group(2)
    return vers


def pkg_dir(modcache, vers, path):
    for mod in sorted(vers, key=len, reverse=True):
        if path == mod or path.startswith(mod + "/"):
            d = os.path.join(modcache, f"{mod}@{vers[mod]}", path[len(mod) + 1:])
            if not os.path.isdir(d):
                die(f"{d}: not in the module cache (go mod download {mod}@{vers[mod]})", 3)
            return d
    die(f"{path}: no module in {TRAINER}'s go.mod")


def strip_comments(src):
    """src without // and /* */ comments; strings, raw strings and runes kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
        elif src.startswith("/*", i):
            i = src.find("*/", i) + 2
        elif c in "\"'`":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if c != "`" and src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block(src, i):
    """The text between the brace at src[i] and its match, and the index after it."""
    depth, j = 0, i
    while True:
        if src[j] == "{":
            depth += 1
        elif src[j] == "}":
            depth -= 1
            if depth == 0:
                return src[i + 1:j], j + 1
        j += 1


class Package:
    """The type declarations of one Go package directory (test files skipped)."""

    def __init__(self, path, directory):
        self.path, self.structs, self.named, self.marshalers = path, {}, {}, set()
        self.name = path.rsplit("/", 1)[-1]
        for f in sorted(os.listdir(directory)):
            if f.endswith(".go") and not f.endswith("_test.go"):
                self.parse(strip_comments(open(os.path.join(directory, f)).read()))

    def parse(self, src):
        imports = {}
        specs = re.findall(r"(?m)^import\s+([^(\n]+)$", src)
        for m in re.finditer(r"(?m)^import\s*\(([^)]*)\)", src):
            specs += m.group(1).split("\n")
        for spec in specs:
            m = re.match(r'\s*(\w+|\.)?\s*"([^"]+)"', spec)
            if m:
                imports[m.group(1) or m.group(2).rsplit("/", 1)[-1]] = m.group(2)
        for m in re.finditer(r"\bfunc\s*\(\s*\w*\s*\*?(\w+)\s*\)\s*MarshalJSON\b", src):
            self.marshalers.add(m.group(1))
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+struct\s*\{", src):
            body, _ = block(src, m.end() - 1)
            self.structs[m.group(1)] = (body, imports)
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+(=\s*)?([^\s{][^\n{]*)$", src):
            if not m.group(3).startswith(("struct", "interface", "func")):
                self.named[m.group(1)] = (m.group(3).strip(), imports, bool(m.group(2)))
        m = re.search(r"(?m)^package\s+(\w+)", src)
        if m:
            self.name = m.group(1)


class Gen:
    def __init__(self, modcache):
        self.modcache, self.vers = modcache, module_versions(modcache)
        self.pkgs, self.descs, self.order, self.done = {}, {}, [], set()
        self.gonames = {}  # descriptor -> (Go's reflect Type.String(), bits, unsigned)

    def pkg(self, path):
        if path not in self.pkgs:
            self.pkgs[path] = Package(path, pkg_dir(self.modcache, self.vers, path))
        return self.pkgs[path]

    def pkgs_modules(self):
        """The modules whose packages were read."""
        return {m for m in self.vers for p in self.pkgs if p == m or p.startswith(m + "/")}

    # ---- type expressions -> descriptor names ------------------------------------------------
    def resolve(self, expr, pkgpath, imports):
        """C name of the descriptor of Go type expression expr (seen in package pkgpath)."""
        expr = expr.strip()
        if expr.startswith("*"):
            return self.composite("PTR", self.resolve(expr[1:], pkgpath, imports))
        if expr.startswith("[]"):
            if expr[2:].strip() in ("byte", "uint8"):
                self.gonames["gt_bytes"] = ("[]uint8", 0, 0)
                return "gt_bytes"
            return self.composite("SLICE", self.resolve(expr[2:], pkgpath, imports))
        if expr.startswith("map["):
            depth, j = 0, 3
            while True:
                depth += {"[": 1, "]": -1}.get(expr[j], 0)
                if depth == 0:
                    break
                j += 1
            key = self.resolve(expr[4:j], pkgpath, imports)
            return self.composite("MAP", self.resolve(expr[j + 1:], pkgpath, imports), key)
        if expr in ("interface{}", "any") or expr.startswith("interface"):
            self.gonames["gt_any"] = ("interface {}", 0, 0)
            return "gt_any"
        expr = ALIAS.get(expr, expr)
        if expr in BASIC:
            kind, bits, uns = BASIC[expr]
            self.gonames["gt_" + expr] = (expr, bits, uns)
            self.descs.setdefault("gt_" + expr, (kind, None, None))
            return "gt_" + expr
        if "." in expr:
            alias, name = expr.split(".", 1)
            if alias not in imports:
                die(f"{pkgpath}: unknown import {alias} in {expr}")
            return self.named_type(imports[alias], name)
        return self.named_type(pkgpath, expr)

    def composite(self, kind, elem, key=None):
        keyed = key and key != "gt_string"
        name = f"gt_{kind.lower()}_{key[3:] + '_' if keyed else ''}{elem[3:]}"
        if name not in self.descs:
            self.descs[name] = (kind, elem, None)
            self.order.append(name)
            ego = self.gonames[elem][0]
            self.gonames[name] = ({"PTR": "*", "SLICE": "[]"}.get(kind) or
                                  f"map[{self.gonames[key][0]}]") + ego, 0, 0
        return name

    def named_type(self, pkgpath, name):
        if (pkgpath, name) in SPECIAL:
            kind = SPECIAL[(pkgpath, name)]
            cname = "gt_" + kind.lower() + ("_" + name if kind == "RAW" else "")
            self.descs.setdefault(cname, (kind, None, None))
            self.gonames[cname] = (pkgpath.rsplit("/", 1)[-1] + "." + name, 0, 0)
            return cname
        if pkgpath == "time" and name == "Duration":
            self.descs.setdefault("gt_time_Duration", ("INT", None, None))
            self.gonames["gt_time_Duration"] = ("time.Duration", 64, 0)
            return "gt_time_Duration"
        p = self.pkg(pkgpath)
        if name in p.marshalers:
            die(f"{pkgpath}.{name} has its own MarshalJSON: add it to SPECIAL")
        cname = f"gt_{short(pkgpath)}_{name}"
        if name in p.named:
            expr, imports, alias = p.named[name]
            under = self.resolve(expr, pkgpath, imports)
            if alias:
                return under
            if cname not in self.descs:
                kind, elem, fields = self.descs[under]
                self.descs[cname] = (kind, elem, fields)
                self.order.append(cname)
                self.gonames[cname] = (p.name + "." + name,) + self.gonames[under][1:]
            return cname
        if name not in p.structs:
            die(f"{pkgpath}.{name}: no such type")
        self.gonames[cname] = (p.name + "." + name, 0, 0)
        if cname not in self.done:
            self.done.add(cname)
            self.descs[cname] = ("STRUCT", None, self.fields(pkgpath, name))
            self.order.append(cname)
        return cname

    # ---- struct fields ------------------------------------------------------------------------
    def fields(self, pkgpath, name):
        """[(json key, descriptor, flags, embedded Go field names or None)] in encoding/json's
        order, embedded structs promoted."""
        body, imports = self.pkg(pkgpath).structs[name]
        out = []
        for line in body.split("\n"):
            line = line.strip().rstrip(";")
            if not line:
                continue
            m = re.match(r"^(?:(\w+(?:\s*,\s*\w+)*)\s+)?([^\s`]+)\s*(`[^`]*`)?$", line)
            if not m:
                die(f"{pkgpath}.{name}: cannot read field line {line!r}")
            names, texpr, tag = m.group(1), m.group(2), m.group(3) or ""
            jt = re.search(r'json:"([^"]*)"', tag)
            opts = jt.group(1).split(",") if jt else [""]
            if opts[0] == "-" and len(opts) == 1:
                continue
            flags = [f"KT_GF_{o.upper()}" for o in opts[1:] if o in ("omitempty", "omitzero")]
            if names is None:  # embedded
                base = texpr.lstrip("*").split(".")[-1]
                if not opts[0] and self.is_struct(texpr, pkgpath, imports):
                    if texpr.startswith("*"):
                        die(f"{pkgpath}.{name}: embedded pointer {texpr} not supported")
                    # The decoder's error path names the embedded field (its Go name).
                    out.extend((k, d, fl, base + ("." + via if via else ""))
                               for k, d, fl, via in self.promoted(texpr, pkgpath, imports))
                    continue
                names = base
            for n in (x.strip() for x in names.split(",")):
                if n[0].isupper():
                    out.append((opts[0] or n, self.resolve(texpr, pkgpath, imports), flags, None))
        keys = [f[0] for f in out]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            die(f"{pkgpath}.{name}: duplicate JSON keys {sorted(dup)} (Go's dominance rules)")
        return out

    def is_struct(self, texpr, pkgpath, imports):
        t = texpr.lstrip("*")
        if "." in t:
            pkgpath, t = imports[t.split(".")[0]], t.split(".")[1]
        return (pkgpath, t) not in SPECIAL and t in self.pkg(pkgpath).structs

    def promoted(self, texpr, pkgpath, imports):
        t = texpr.lstrip("*")
        if "." in t:
            pkgpath, t = imports[t.split(".")[0]], t.split(".")[1]
        return self.fields(pkgpath, t)


def short(pkgpath):
    parts = pkgpath.split("/")
    return {"meta": "meta", "trainer": "trainer", "jobset": "jobset"}.get(parts[-2], parts[-2]) \
        if parts[-1].startswith("v") else parts[-1]


def emit(gen, roots):
    o = ["/* SPDX-License-Identifier: Apache-2.0 */"]
    o.append("/* common/base/gotypes.c - GENERATED by scripts/gen/gen_gotypes.py from the Go API "
             "types of\n * upstream Kubeflow Trainer " + TRAINER_VERSION + " (" +
             ", ".join(f"{m}@{gen.vers[m]}" for m in sorted(gen.pkgs_modules())) +
             "). Do not edit: re-run\n * the script. Data only: Go's JSON field order, "
             "omitempty/omitzero and nested types\n * (common/base/gotypes.h). */")
    o.append('#include "common/base/gotypes.h"\n#include "common/base/mem.h"\n')
    o.append("#define N(a) KT_ARRAY_SIZE(a)\n")
    emitted = set()
    exported = {c: e for e, c in roots}
    # Only what a root reaches (a named type copies its underlying one, which may then be unused).
    used, todo = set(), list(exported)
    while todo:
        n = todo.pop()
        if n and n not in used:
            used.add(n)
            _, elem, fields = gen.descs.get(n, (None, None, None))
            todo += [elem] + [f[1] for f in fields or []]
    gen.order = [n for n in gen.order if n in used]
    leaves = sorted(n for n in used if n not in gen.order)
    for n in ("gt_any", "gt_bytes"):
        if n in used:
            gen.descs[n] = (n[3:].upper(), None, None)

    def tail(name):
        go, bits, uns = gen.gonames[name]
        return f'"{go}", {bits}, {uns}'
    for name in leaves:
        kind = gen.descs[name][0]
        o.append(f"static const struct kt_godesc {name} = {{KT_GK_{kind}, NULL, NULL, 0, "
                 f"{tail(name)}}};")
    for name in gen.order:
        o.append(f"{linkage(name, exported)}const struct kt_godesc {exported.get(name, name)};")
    for name in gen.order:
        kind, elem, fields = gen.descs[name]
        ref = lambda n: "&" + exported.get(n, n)
        if kind != "STRUCT":
            o.append(f"{linkage(name, exported)}const struct kt_godesc {exported.get(name, name)} = "
                     f"{{KT_GK_{kind}, {ref(elem) if elem else 'NULL'}, NULL, 0, {tail(name)}}};")
            continue
        if not fields:
            o.append(f"{linkage(name, exported)}const struct kt_godesc {exported.get(name, name)} = "
                     f"{{KT_GK_STRUCT, NULL, NULL, 0, {tail(name)}}};")
            continue
        fname = "f_" + name[3:]
        if fname not in emitted:
            emitted.add(fname)
            o.append(f"static const struct kt_gofield {fname}[] = {{")
            for key, desc, flags, via in fields:
                o.append(f'    {{"{key}", {ref(desc)}, {" | ".join(flags) or "0"}, '
                         f'{chr(34) + via + chr(34) if via else "NULL"}}},')
            o.append("};")
        o.append(f"{linkage(name, exported)}const struct kt_godesc {exported.get(name, name)} = "
                 f"{{KT_GK_STRUCT, NULL, {fname}, N({fname}), {tail(name)}}};")
    return "\n".join(o) + "\n"


def linkage(name, exported):
    return "" if name in exported else "static "


def main():
    args = sys.argv[1:]
    out = None
    if args[:1] == ["--out"] and len(args) >= 2:
        out, args = args[1], args[2:]
    modcache = args[0] if args else None
    if not modcache:
        try:
            modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True,
                                      text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            modcache = os.path.expanduser("~/go/pkg/mod")
    gen = Gen(modcache)
    roots = []
    for pkgpath, name, cname in ROOTS:
        roots.append((cname, gen.named_type(pkgpath, name)))
    for cname, desc in roots:
        for c2, d2 in roots:
            if d2 == desc and c2 != cname:
                die(f"{cname} and {c2} are the same type")
    text = emit(gen, roots)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    path = os.path.join(root, OUT)
    # Formatted as if it were the committed file, so the repository's .clang-format applies
    # wherever --out puts it.
    text = subprocess.run(["clang-format", "--assume-filename=" + os.path.abspath(path)],
                          input=text, capture_output=True, text=True, check=True).stdout
    with open(out or path, "w") as f:
        f.write(text)
    print(f"gen_gotypes: {out or OUT}: "
          f"{sum(1 for d in gen.descs.values() if d[0] == 'STRUCT')} structs, "
          f"{len(gen.descs)} descriptors")


if __name__ == "__main__":
    main()
