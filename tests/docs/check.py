#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/docs/check.py [--root DIR] [--bin DIR] [--allow FILE] [--man DIR] - the docs checks (tests/docs/run.sh).

Reads README.md, docs/*.md and docs/internals/*.md under ROOT (default: the repo) and checks:
  links     every relative link resolves: the file (or folder), and for `#anchor` a heading of
            the target with that GitHub slug;
  help      `--help` of kt-webhook, kt-reconciler and each ktctl command exits 0, and SUBS
            below are the commands `ktctl --help` lists;
  documented  every flag a binary's --help prints appears in its reference page
            (kt-webhook, kt-reconciler: docs/configuration.md; ktctl: docs/ktctl.md);
  exist     every `--flag` the docs name for one of those binaries exists: flags after the
            binary in code blocks (one command: up to `|`, `;`, `&&`, `||`, ` #` or the next
            binary; `\\` and indented `[...]` lines continue it), in code spans that start with
            the binary, in "BINARY `--flag`" prose, and in table rows under a heading that names
            the binary;
  runnable  every fenced block whose info string is `sh runnable` runs with `bash -e -o pipefail`
            in ROOT and exits 0 (60 s each);
  examples  every fenced block whose first line is `$ ktctl ...` is a terminal transcript: each
            `$ ` line is a command, the lines after it (up to the next `$ ` line or the block's
            end) its output. Each `ktctl validate`/`ktctl render` command runs with `bash -c` in
            ROOT, the --bin DIR (default ROOT/bin) first on PATH, stdin empty, stdout and stderr into
            one pipe (ktctl's stdout is line-buffered, so the order is a terminal's), 60 s each;
            the output must equal the shown lines exactly, each ending in a newline: no
            normalisation (no trimming, no path or number rewriting). The exit status is not
            checked (the docs show none). `ktctl status` (needs a cluster) and `$ ` lines that
            are not ktctl are skipped with a `skip` line;
  man       with --man DIR (pages `make man` / docs/man/build.sh wrote): kt-webhook.8,
            kt-reconciler.8, ktctl.1 and ktctl-SUB.1 for each command `ktctl --help` lists are
            there, each names every flag (long and short) its binary's --help prints (a hand edit or a page from
            another --help fails), `groff -ww -z -man` renders it without a warning, and no
            help2man page sits in the source tree outside build/ (pages are built, not committed).
Exceptions come from ALLOW (default tests/docs/allow.txt): `link PATH` (a link target that may be
missing, relative to the repo root) and `flag BINARY --flag`, each line with a `# reason`.
Prints `ok NAME` / `FAIL NAME: why` and `N passed, N failed`; exits 1 on a failure.
"""
import argparse
import os
import re
import subprocess
import sys

BINS = ("kt-webhook", "kt-reconciler", "ktctl")
SUBS = ("validate", "render", "certs", "status")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SHORT = re.compile(r"(?<![\w./-])-[a-zA-Z](?![\w-])")  # -o, -q, -h: for the man check
BIN_RE = re.compile(r"(?<![\w.-])(?:[\w./-]*/)?(kt-webhook|kt-reconciler|ktctl)(?![\w.-])")
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SPAN = re.compile(r"(`+)(.+?)\1")

passed = 0
failed = 0


def ok(name):
    global passed
    passed += 1
    print("ok " + name)


def bad(name, why):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why))


def parse(path):
    """-> (lines, blocks, prose) where blocks = [(info, first_line_no, [lines])] and prose =
    [(line_no, text)] outside fences."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, prose, cur = [], [], None
    for no, s in enumerate(lines, 1):
        m = re.match(r"^\s*(```+|~~~+)\s*(.*)$", s)
        if cur is None and m:
            cur = (m.group(1), m.group(2).strip(), no + 1, [])
            continue
        if cur is not None:
            if m and m.group(1).startswith(cur[0][0]) and len(m.group(1)) >= len(cur[0]) and not m.group(2):
                blocks.append((cur[1], cur[2], cur[3]))
                cur = None
            else:
                cur[3].append(s)
            continue
        prose.append((no, s))
    return lines, blocks, prose


def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        for _, s in parse(path)[2]:
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", s)
            if m:
                a = slug(m.group(1))
                n = seen.get(a, 0)
                seen[a] = n + 1
                out.add(a if n == 0 else "%s-%d" % (a, n))
        for _, s in parse(path)[2]:  # explicit <a name="x"> / id="x"
            for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', s):
                out.add(m.group(1))
        cache[path] = out
    return cache[path]


def check_links(root, files, allow_links):
    for f in files:
        path = os.path.join(root, f)
        problems, n = [], 0
        for no, s in parse(path)[2]:
            s = SPAN.sub("", s)
            for m in LINK.finditer(s):
                url = m.group(2)
                if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I):
                    continue
                n += 1
                target, _, frag = url.partition("#")
                tpath = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
                rel = os.path.relpath(tpath, root)
                if not os.path.exists(tpath):
                    if rel not in allow_links:
                        problems.append("%s:%d: %s: no such file" % (f, no, url))
                    continue
                if frag and tpath.endswith(".md") and frag not in anchors(tpath):
                    problems.append("%s:%d: %s: no heading with the slug #%s in %s" % (f, no, url, frag, rel))
        if problems:
            bad("links: " + f, "; ".join(problems[:5]) + (" (+%d more)" % (len(problems) - 5) if len(problems) > 5 else ""))
        else:
            ok("links: %s (%d relative links)" % (f, n))


def ktctl_commands(help_text):
    """The subcommands `ktctl --help` lists under "commands:"."""
    part = help_text.split("\ncommands:\n", 1)[-1].split("\n\n", 1)[0] if "\ncommands:\n" in help_text else ""
    return re.findall(r"^  ([a-z][a-z-]*) ", part, re.M)


def helps(bindir):
    """-> {key: set of flags} for kt-webhook, kt-reconciler, ktctl (global) and ktctl SUB."""
    out = {}
    cmds = [("kt-webhook", ["kt-webhook", "--help"]), ("kt-reconciler", ["kt-reconciler", "--help"]),
            ("ktctl", ["ktctl", "--help"])] + [("ktctl " + s, ["ktctl", s, "--help"]) for s in SUBS]
    for key, argv in cmds:
        exe = os.path.join(bindir, argv[0])
        try:
            p = subprocess.run([exe] + argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=30, text=True)
        except (OSError, subprocess.TimeoutExpired) as e:
            bad("help: %s --help" % key, str(e))
            out[key] = set()
            continue
        if p.returncode == 0 and p.stdout.strip():
            ok("help: %s --help exits 0 with its usage on stdout" % key)
        else:
            bad("help: %s --help" % key, "exit %d, stdout %d bytes: %s" % (p.returncode, len(p.stdout), p.stderr.strip()[:200]))
        out[key] = set(FLAG.findall(p.stdout + p.stderr)) | {"--help"}
    for s in SUBS:
        out["ktctl " + s] |= out["ktctl"] & {"--plugin", "--trainjob-status-plugin"}
    out["ktctl"] |= {"--version"}
    listed = ktctl_commands(run_help([os.path.join(bindir, "ktctl"), "--help"]))
    if sorted(listed) != sorted(SUBS):
        bad("help: ktctl's commands", "`ktctl --help` lists %s, check.py's SUBS %s" % (" ".join(sorted(listed)), " ".join(sorted(SUBS))))
    else:
        ok("help: check.py knows every ktctl command (%s)" % " ".join(SUBS))
    return out


def check_documented(root, accepted):
    pages = {"kt-webhook": "docs/configuration.md", "kt-reconciler": "docs/configuration.md",
             "ktctl": "docs/ktctl.md"}
    for b, page in pages.items():
        path = os.path.join(root, page)
        text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        have = set(FLAG.findall(text))
        flags = set()
        for k, v in accepted.items():
            if k.split()[0] == b:
                flags |= v
        missing = sorted(flags - have)
        if missing:
            bad("documented: " + b, "accepted but not in %s: %s" % (page, " ".join(missing)))
        else:
            ok("documented: %s (%d flags in %s)" % (b, len(flags), page))


def valid_for(accepted, binary, words):
    if binary != "ktctl":
        return accepted[binary], binary
    for w in words:
        if w in SUBS:
            return accepted["ktctl " + w], "ktctl " + w
    allf = set()
    for k, v in accepted.items():
        if k.startswith("ktctl"):
            allf |= v
    return allf, "ktctl"


def segments(text):
    """(binary, [words after it up to the end of its command]) for each binary named in text."""
    out = []
    ms = list(BIN_RE.finditer(text))
    for i, m in enumerate(ms):
        end = ms[i + 1].start() if i + 1 < len(ms) else len(text)
        seg = text[m.end():end]
        cut = re.search(r"\||;|&&|\s#|\$\(|\)", seg)
        if cut:
            seg = seg[:cut.start()]
        out.append((m.group(1), seg.split()))
    return out


def check_exist(root, files, accepted, allow_flags):
    for f in files:
        path = os.path.join(root, f)
        _, blocks, prose = parse(path)
        problems, n = [], 0

        def judge(binary, words, where):
            nonlocal n
            flags = [w for w in words for w in FLAG.findall(w) if w.startswith("--")]
            valid, key = valid_for(accepted, binary, words)
            for fl in flags:
                if not FLAG.fullmatch(fl):
                    continue
                n += 1
                if fl not in valid and (binary, fl) not in allow_flags:
                    problems.append("%s: %s %s does not exist" % (where, key, fl))

        for info, first, body in blocks:
            logical, start, cont = [], first, ""
            for i, s in enumerate(body):
                if cont and (cont.endswith("\\") or re.match(r"^\s+\[", s)):
                    cont = cont.rstrip("\\") + " " + s.strip()
                else:
                    if cont:
                        logical.append((start, cont))
                    cont, start = s, first + i
            if cont:
                logical.append((start, cont))
            for no, s in logical:
                for binary, words in segments(s):
                    judge(binary, words, "%s:%d" % (f, no))
        heading_bin = None
        table_ctx = None
        for no, s in prose:
            hm = re.match(r"^#{1,6}\s+(.*)$", s)
            if hm:
                names = set(BIN_RE.findall(hm.group(1)))
                heading_bin = names.pop() if len(names) == 1 else None
                continue
            if heading_bin and s.startswith("|") and not re.match(r"^\|[\s:|-]+\|?$", s):
                cells = [c.strip() for c in s.strip().strip("|").split("|")]
                sub = re.search(r"\b(" + "|".join(SUBS) + r")\b", cells[0]) if cells else None
                if cells and cells[0]:
                    table_ctx = sub.group(1) if sub else None
                words = ([table_ctx] if table_ctx else []) + " ".join(cells[:2]).replace("`", " ").split()
                judge(heading_bin, words, "%s:%d" % (f, no))
            for m in SPAN.finditer(s):
                span = m.group(2).strip()
                if BIN_RE.match(span) and BIN_RE.match(span).start() == 0:
                    for binary, words in segments(span):
                        judge(binary, words, "%s:%d" % (f, no))
            for m in re.finditer(r"(?<![\w.-])(kt-webhook|kt-reconciler|ktctl(?: " + "| ".join(SUBS) + r")?)(?:'s)?\s+`(--[a-z][a-z0-9-]*)", s):
                parts = m.group(1).split()
                judge(parts[0], parts[1:] + [m.group(2)], "%s:%d" % (f, no))
        if problems:
            bad("exist: " + f, "; ".join(problems[:5]) + (" (+%d more)" % (len(problems) - 5) if len(problems) > 5 else ""))
        else:
            ok("exist: %s (%d flags named for kt's binaries)" % (f, n))


def check_runnable(root, files):
    for f in files:
        for info, first, body in parse(os.path.join(root, f))[1]:
            if info.split() != ["sh", "runnable"]:
                continue
            name = "runnable: %s:%d" % (f, first)
            try:
                p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", "\n".join(body)], cwd=root,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, text=True)
            except subprocess.TimeoutExpired:
                bad(name, "still running after 60 s")
                continue
            if p.returncode == 0:
                ok(name)
            else:
                bad(name, "exit %d: %s" % (p.returncode, p.stdout.strip()[-400:]))


def check_examples(root, bindir, files):
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    for f in files:
        for info, first, body in parse(os.path.join(root, f))[1]:
            if info == "sh runnable" or not body or not body[0].startswith("$ ktctl "):
                continue
            cmds = [i for i, s in enumerate(body) if s.startswith("$ ")] + [len(body)]
            for i, j in zip(cmds, cmds[1:]):
                cmd, want = body[i][2:], body[i + 1:j]
                name = "example: %s:%d" % (f, first + i)
                words = cmd.split()
                if words[0] != "ktctl" or len(words) < 2 or words[1] not in ("validate", "render"):
                    print("skip %s: `%s`: %s" % (name, cmd[:60], "needs a cluster" if words[:2] == [
                        "ktctl", "status"] else "only ktctl validate and render are run"))
                    continue
                try:
                    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=root, env=env,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, timeout=60, text=True)
                except subprocess.TimeoutExpired:
                    bad(name, "still running after 60 s")
                    continue
                expect = "".join(s + "\n" for s in want)
                if p.stdout == expect:
                    ok("%s: %s (%d lines as shown)" % (name, " ".join(words[:2]), len(want)))
                    continue
                got = p.stdout.split("\n")
                if got[-1] == "":
                    got.pop()
                else:
                    got[-1] += "<no newline>"
                k = next((k for k in range(max(len(got), len(want)))
                          if k >= len(got) or k >= len(want) or got[k] != want[k]), len(want))
                bad(name, "output line %d: shown %r, printed %r (exit %d)" % (
                    k + 1, want[k] if k < len(want) else "<end>", got[k] if k < len(got) else "<end>",
                    p.returncode))


def roff_text(src):
    """The words of a roff page: font escapes dropped, \\- as -."""
    return re.sub(r"\\f(?:\(..|\[[^]]*\]|.)", "", src).replace("\\-", "-").replace("\\&", "")


def run_help(argv):
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30,
                              text=True).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def check_man(root, bindir, mandir):
    ktctl = os.path.join(bindir, "ktctl")
    subs = ktctl_commands(run_help([ktctl, "--help"]))
    pages = [("kt-webhook.8", [os.path.join(bindir, "kt-webhook"), "--help"]),
             ("kt-reconciler.8", [os.path.join(bindir, "kt-reconciler"), "--help"]),
             ("ktctl.1", [ktctl, "--help"])] + [("ktctl-%s.1" % c, [ktctl, c, "--help"]) for c in subs]
    for page, argv in pages:
        path = os.path.join(mandir, page)
        if not os.path.exists(path):
            bad("man: " + page, "missing in %s (make man)" % mandir)
            continue
        flags = lambda t: set(FLAG.findall(t)) | set(SHORT.findall(t))
        want = flags(run_help(argv))
        have = flags(roff_text(open(path, encoding="utf-8").read()))
        missing = sorted(want - have)
        if not want:
            bad("man: " + page, "%s printed no flags" % " ".join(os.path.basename(a) for a in argv))
        elif missing:
            bad("man: " + page, "flags of `%s` not in the page: %s" %
                (" ".join([os.path.basename(argv[0])] + argv[1:]), " ".join(missing)))
        else:
            ok("man: %s names the %d flags of its --help" % (page, len(want)))
        p = subprocess.run(["groff", "-ww", "-z", "-man", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or p.stdout.strip():
            bad("man: %s renders" % page, "groff: exit %d: %s" % (p.returncode, p.stdout.strip()[:300]))
        else:
            ok("man: %s renders with groff -ww, no warning" % page)
    committed = []
    for d, dirs, files in os.walk(root):
        if d == root:
            dirs[:] = [x for x in dirs if x not in ("build", "dist", "bin", ".git")]
        for f in files:
            if re.search(r"\.[1-8]$", f):
                with open(os.path.join(d, f), "rb") as fh:
                    if b"generated by help2man" in fh.read(200):
                        committed.append(os.path.relpath(os.path.join(d, f), root))
    if committed:
        bad("man: pages are build output", "help2man pages in the source tree: " + " ".join(sorted(committed)))
    else:
        ok("man: no help2man page in the source tree (build/ only)")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--bin")
    ap.add_argument("--allow", default=os.path.join(here, "allow.txt"))
    ap.add_argument("--man", help="the built man pages to check (make man: build/man)")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    bindir = os.path.abspath(a.bin or os.path.join(root, "bin"))
    allow_links, allow_flags = set(), set()
    for s in open(a.allow, encoding="utf-8") if os.path.exists(a.allow) else []:
        w = s.split("#", 1)[0].split()
        if len(w) == 2 and w[0] == "link":
            allow_links.add(os.path.normpath(w[1]))
        elif len(w) == 3 and w[0] == "flag":
            allow_flags.add((w[1], w[2]))
    files = ["README.md"] + sorted("docs/" + x for x in os.listdir(os.path.join(root, "docs")) if x.endswith(".md"))
    internals = os.path.join(root, "docs", "internals")
    if os.path.isdir(internals):
        files += sorted("docs/internals/" + x for x in os.listdir(internals) if x.endswith(".md"))
    check_links(root, files, allow_links)
    accepted = helps(bindir)
    check_documented(root, accepted)
    check_exist(root, files, accepted, allow_flags)
    check_runnable(root, files)
    check_examples(root, bindir, files)
    if a.man:
        check_man(root, bindir, os.path.abspath(a.man))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
