#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/layers.py [--self-test] [ROOT] - the layering check of `make lint` (common/README.md).

Fails (exit 1, one line per problem) when
  - a file includes a project header of a layer its own layer may not use (MAY_INCLUDE), or
  - files form an include circle (module level: X.c, X.h and a private X_internal.h are one
    module; every other file is a module of its own), or
  - the public plugin ABI (api/kt_plugin.h) or an example plugin (tests/plugins/*.c) includes
    a project header other than api/kt_plugin.h.
Only quoted includes that name a file of the tree count; <system> headers are not checked.
--self-test runs the check on small trees in a temporary directory, one good and one bad for
each rule, and fails unless the good ones pass and each bad one fails with its message.
"""
import os
import re
import subprocess
import sys
import tempfile

# Each layer and the layers it may include besides its own (common/README.md). A layer is the
# first prefix that matches. The library's layers form a DAG, not a line: crypto, net and
# kube stand side by side on base; the framework does not see the network or the cluster.
LAYERS = [
    ("common/base/", "base"),
    ("api/", "api"),
    ("common/crypto/", "crypto"),
    ("common/net/", "net"),
    ("common/kube/", "kube"),
    ("common/config/", "config"),
    ("common/framework/", "framework"),
    ("common/plugins/", "plugins"),
    ("common/validate/", "validate"),
    ("common/authz/", "authz"),
    ("certs/", "certs"),
    ("webhook/", "programs"),
    ("reconciler/", "programs"),
    ("cli/", "programs"),
    ("tests/", "tests"),
]
LIBRARY = {"base", "api", "crypto", "net", "kube", "config", "framework", "plugins", "validate",
           "authz"}
MAY_INCLUDE = {
    "base": set(),
    "api": {"base"},
    "crypto": {"base"},
    "net": {"base"},
    "kube": {"base"},
    "config": {"base", "net"},
    "framework": {"base", "api", "crypto"},
    "plugins": {"base", "api", "crypto", "framework"},
    "validate": {"base", "api", "framework", "plugins"},
    "authz": {"base", "crypto", "net", "kube"},
    "certs": {"base", "api", "crypto", "net", "kube", "config"},
    "programs": LIBRARY | {"certs"},
    "tests": LIBRARY | {"certs", "programs"},
}
STANDALONE = ("api/kt_plugin.h",)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    for prefix, name in LAYERS:
        if path.startswith(prefix):
            return name
    return None


def module_of(path):
    stem = os.path.splitext(path)[0]
    return stem[: -len("_internal")] if stem.endswith("_internal") else stem


def resolve(root, src, name):
    for cand in (name, os.path.normpath(os.path.join(os.path.dirname(src), name))):
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def list_files(root):
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.c", "*.h"],
                             cwd=root, capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, _, names in os.walk(root):
            out += [os.path.relpath(os.path.join(d, n), root) for n in names
                    if n.endswith((".c", ".h"))]
    return sorted(f for f in out if not f.startswith("build/"))


def edges_of(root, files):
    edges = []
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            target = resolve(root, f, m.group(1))
            if target:
                edges.append((f, line, target))
    return edges


def layer_problems(edges):
    out = []
    for src, line, dst in edges:
        standalone = src in STANDALONE or (src.startswith("tests/plugins/") and src.endswith(".c"))
        if standalone and dst not in STANDALONE:
            out.append("%s:%d: includes %s: the plugin ABI stands alone (api/kt_plugin.h only)"
                       % (src, line, dst))
            continue
        ls, ld = layer_of(src), layer_of(dst)
        if ls and ld and ls != ld and ld not in MAY_INCLUDE[ls]:
            out.append("%s:%d: includes %s: layer %s may not include layer %s (only %s)"
                       % (src, line, dst, ls, ld, " ".join(sorted(MAY_INCLUDE[ls])) or "itself"))
    return out


def circles(edges):
    graph = {}
    for src, _, dst in edges:
        a, b = module_of(src), module_of(dst)
        graph.setdefault(a, set())
        graph.setdefault(b, set())
        if a != b:
            graph[a].add(b)
    # Tarjan's strongly connected components, iterative.
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
    return ["include circle: " + " <-> ".join(c) for c in sorted(comps)]


def check(root):
    edges = edges_of(root, list_files(root))
    return layer_problems(edges) + circles(edges)


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)


def self_test():
    good = {
        "common/base/a.h": "",
        "common/base/a.c": '#include "common/base/a.h"\n',
        "common/framework/f.h": '#include "common/base/a.h"\n',
        "common/framework/f.c": '#include "common/framework/f.h"\n#include "api/t.h"\n',
        "common/kube/k_internal.h": '#include "common/kube/k.h"\n',
        "common/kube/k.h": "",
        "common/kube/k.c": '#include "common/kube/k_internal.h"\n',
        "api/t.h": '#include "common/base/a.h"\n',
        "api/kt_plugin.h": "#include <stddef.h>\n",
        "tests/plugins/p.c": '#include "api/kt_plugin.h"\n',
        "webhook/main.c": '#include "common/framework/f.h"\n#include "x.h"\n',
        "webhook/x.h": "",
    }
    bad = [
        ({"common/base/b.c": '#include "common/framework/f.h"\n'},
         "common/base/b.c:1: includes common/framework/f.h: layer base may not include layer "
         "framework"),
        ({"api/u.h": '#include "common/kube/k.h"\n'},
         "api/u.h:1: includes common/kube/k.h: layer api may not include layer kube"),
        ({"common/framework/g.c": '#include "common/kube/k.h"\n'},
         "common/framework/g.c:1: includes common/kube/k.h: layer framework may not include "
         "layer kube"),
        ({"common/base/c.c": '#include "common/base/d.h"\n',
          "common/base/c.h": "", "common/base/d.h": "",
          "common/base/d.c": '#include "common/base/c.h"\n'},
         "include circle: common/base/c <-> common/base/d"),
        ({"tests/plugins/q.c": '#include "common/base/a.h"\n'},
         "tests/plugins/q.c:1: includes common/base/a.h: the plugin ABI stands alone"),
        ({"api/kt_plugin.h": '#include "common/base/a.h"\n'},
         "api/kt_plugin.h:1: includes common/base/a.h: the plugin ABI stands alone"),
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "good")
        write_tree(root, good)
        got = check(root)
        if got:
            print("layers self-test: the good tree fails: %s" % got)
            failed += 1
        for i, (extra, want) in enumerate(bad):
            root = os.path.join(tmp, "bad%d" % i)
            write_tree(root, dict(good, **extra))
            got = check(root)
            if not any(g.startswith(want) for g in got):
                print("layers self-test: want %r, got %r" % (want, got))
                failed += 1
    print("layers self-test: %d passed, %d failed" % (1 + len(bad) - failed, failed))
    return 1 if failed else 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print("layers: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
