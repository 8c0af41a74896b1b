#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/shlint.py [--self-test] sigpipe|dupfuncs FILE... - two shell checks of `make lint`.

sigpipe FILE...   fails (one line per hit) on a pipe into a reader that may stop before the
                  writer is done: `| grep` with -q/-m (--quiet, --silent, --max-count) and
                  `| head`. The writer then dies of SIGPIPE, and under `set -o pipefail` the
                  pipeline fails although the reader found what it wanted: a flake that depends
                  on timing. Read everything instead: `| grep -c PAT >/dev/null` (counting reads
                  all input), `| sed -n 1,Np`, `| { head -c N; cat >/dev/null; }`, or grep a
                  saved file. Comment lines and here-document bodies are not code and are
                  skipped; a line continued with `|` or `\\` is joined to the next.
dupfuncs FILE...  lists every shell function name defined with two or more different bodies
                  (whitespace ignored) as `name: file file ...`, and fails for each one not in
                  KNOWN below. It also fails for a KNOWN name that is no longer duplicated, so
                  the list only shrinks.
--self-test       runs both checks on planted files in a temporary directory and fails unless
                  each bad file is refused and each good one passes.
"""
import collections
import os
import re
import sys
import tempfile

# Function names that today still have different bodies in different files under tests/ and
# scripts/. Most are the per-tier assert and daemon vocabularies (ok/bad/check, start_rec, poll, cleanup, ...)
# that one shared test library would replace; until then this list records them, and a new
# name with two meanings is refused. Remove a name when its copies become one.
KNOWN = set("""
die kc log step
""".split())

PIPE_READER = re.compile(r"(?<![|\\])\|(?!\|)\s*(grep|head)\b([^|;&)]*)")
HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def code_lines(text):
    """(line number, logical line) pairs: heredoc bodies and comment lines dropped, lines
    ending in | or \\ joined with the next."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while re.search(r"(\||\\)\s*$", line) and i + 1 < len(lines):
            i += 1
            line = line.rstrip().rstrip("\\") + " " + lines[i].strip()
        i += 1
        if line.lstrip().startswith("#"):
            continue
        out.append((start + 1, line))
        for m in HEREDOC.finditer(line):
            if m.group(0).startswith("<<<"):
                continue
            end = m.group(3)
            while i < len(lines) and (lines[i].strip() if m.group(1) else lines[i]) != end:
                i += 1
            i += 1
    return out


def early_closer(cmd, args):
    if cmd == "head":
        return True
    for tok in args.split():
        if tok in ("--quiet", "--silent") or tok.startswith("--max-count"):
            return True
        if re.fullmatch(r"-[A-Za-z0-9]*[qm][A-Za-z0-9]*", tok):
            return True
        if tok.startswith(("'", '"')) or not tok.startswith("-"):
            break  # the pattern: options end here
    return False


def sigpipe(files):
    hits = []
    for f in files:
        with open(f, errors="replace") as fh:
            text = fh.read()
        for n, line in code_lines(text):
            for m in PIPE_READER.finditer(line):
                if early_closer(m.group(1), m.group(2)):
                    hits.append(f"{f}:{n}: | {m.group(1)}{m.group(2).rstrip()}")
    for h in hits:
        print(f"sigpipe: {h}")
    return 1 if hits else 0


FUNC = re.compile(r"^(\s*)(?:function\s+)?([A-Za-z_][A-Za-z0-9_:-]*)\s*\(\)\s*(.*)$")


def functions(text):
    """(name, body with whitespace squeezed) for every function defined at a line start."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FUNC.match(lines[i])
        if not m or lines[i].lstrip().startswith("#"):
            i += 1
            continue
        indent, name, rest = m.groups()
        body = [rest]
        if not re.search(r"\}\s*(#.*)?$", rest) or rest.strip() in ("{", ""):
            i += 1
            while i < len(lines) and not re.match(re.escape(indent) + r"\}", lines[i]):
                body.append(lines[i])
                i += 1
        i += 1
        yield name, " ".join(" ".join(body).split())


def dupfuncs(files):
    seen = collections.defaultdict(lambda: collections.defaultdict(set))
    for f in files:
        with open(f, errors="replace") as fh:
            for name, body in functions(fh.read()):
                seen[name][body].add(f)
    dups = {n: b for n, b in seen.items() if len(b) > 1}
    rc = 0
    for name in sorted(dups):
        where = sorted({f for fs in dups[name].values() for f in fs})
        new = "" if name in KNOWN else "  (new: rename one so each name has one meaning)"
        print(f"dupfuncs: {name}: {' '.join(where)}{new}")
        if new:
            rc = 1
    for name in sorted(KNOWN - set(dups)):
        print(f"dupfuncs: {name} is no longer duplicated: remove it from KNOWN in tests/shlint.py")
        rc = 1
    return rc


def self_test():
    passed = failed = 0

    def expect(what, got, want):
        nonlocal passed, failed
        if got == want:
            passed += 1
        else:
            failed += 1
            print(f"FAIL self-test: {what}: exit {got}, want {want}")

    devnull = open(os.devnull, "w")
    with tempfile.TemporaryDirectory() as d:
        def plant(name, text):
            p = os.path.join(d, name)
            with open(p, "w") as fh:
                fh.write(text)
            return p

        saved = sys.stdout
        sys.stdout = devnull
        try:
            for i, bad in enumerate([
                    "cmd | grep -q x\n", "cmd | grep -qx yes\n", "cmd |\n    grep -q x\n",
                    "if cmd 2>&1 | grep -qF -- \"$x\"; then :; fi\n", "cmd | grep -E -m1 x\n",
                    "x=$(cmd | head -n 1)\n", "cmd | head\n", "cmd | grep --quiet x\n",
                    "check n bash -c \"cmd | grep -q yes\"\n"]):
                expect(f"sigpipe refuses {bad!r}", sigpipe([plant(f"bad{i}.sh", bad)]), 1)
            for i, good in enumerate([
                    "cmd | grep -c x >/dev/null\n", "cmd || grep -q x f\n", "grep -q x f\n",
                    "# cmd | grep -q x\n", "cat <<'EOF'\ncmd | head\nEOF\n",
                    "cmd | sed -n 1,5p\n", "cmd | { head -c 9; cat >/dev/null; }\n",
                    "grep -q x <<<\"$out\"\n", "cmd | grep -v q\n", "cmd | grep 'a -q'\n"]):
                expect(f"sigpipe passes {good!r}", sigpipe([plant(f"good{i}.sh", good)]), 0)
            a = plant("a.sh", "same() { echo 1; }\nwanted_x() {\n    echo a\n}\n")
            b = plant("b.sh", "same() {  echo 1;  }\nwanted_x() {\n    echo b\n}\n")
            c = plant("c.sh", "other_x() { echo c; }\n")
            known = set(KNOWN)
            KNOWN.clear()
            expect("dupfuncs refuses one name, two bodies", dupfuncs([a, b]), 1)
            expect("dupfuncs passes equal bodies and unique names", dupfuncs([a, c]), 0)
            KNOWN.add("wanted_x")
            expect("dupfuncs passes a KNOWN duplicate", dupfuncs([a, b]), 0)
            expect("dupfuncs refuses a KNOWN name no longer duplicated", dupfuncs([a, c]), 1)
            KNOWN.clear()
            KNOWN.update(known)
        finally:
            sys.stdout = saved
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv):
    if argv[:1] == ["--self-test"]:
        return self_test()
    if len(argv) >= 1 and argv[0] in ("sigpipe", "dupfuncs"):
        return {"sigpipe": sigpipe, "dupfuncs": dupfuncs}[argv[0]](argv[1:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
