#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/parity/oracle_cmp.py - the comparisons of the oracle tier (oracle.sh).

  oracle_cmp.py objects KT.json UP.json TRAINJOBS.json DELIBERATE OUT_DIR
      (a): the objects both reconcilers built (kubectl get -o json lists), normalised.
  oracle_cmp.py reviews REVIEWS.jsonl KT_URL KT_CA UP_URL UP_CA DELIBERATE OUT_DIR
      (b)(c)(d): every review POSTed to both webhook servers (TLS keep-alive), the answers
      compared: allowed, status code/message/reason, warnings, patchType and decoded patch.

A difference is one line "CLASS CASE WHERE: kt=... upstream=...". Lines matched by an ERE of
an `oracle-*` entry of DELIBERATE (tests/parity/deliberate.txt) are accepted; every other one
fails. Prints "parity: CLASS N/M identical" per class (identical: no difference at all, accepted
ones included) and, per class, "ok"/"FAIL" lines; the caller counts them.
"""
import base64
import http.client
import json
import re
import ssl
import sys
import urllib.parse

import yaml

OWNER_LABEL = "trainer.kubeflow.org/trainjob-name"


def deliberate(path):
    out = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        name, _, ere = line.rstrip("\n").partition("\t")
        if name.startswith("oracle-"):
            out.append((name, re.compile(ere)))
    return out


def short(v):
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= 4000 else s[:4000] + "..."


def dmlc_moved(a, b):
    """True when env lists a and b hold the same entries and differ only in where the XGBoost
    DMLC_* entries sit (same order among themselves and among the others)."""
    def split(env):
        d = [e for e in env if str(e.get("name", "")).startswith("DMLC_")]
        return d, [e for e in env if e not in d]
    da, ra = split(a)
    db, rb = split(b)
    return bool(da) and da == db and ra == rb


def diff(a, b, where, out):
    """Differences between JSON values a (kt) and b (upstream), one per leaf path."""
    if where.endswith(".env") and isinstance(a, list) and isinstance(b, list) and a != b \
            and dmlc_moved(a, b):
        out.append(f"{where}: the same entries, DMLC_* placed elsewhere")
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            diff(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{where}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]", out)
    elif a != b:
        out.append(f"{where}: kt={short(a)} upstream={short(b)}")


def report(cls, cases, accepted_re, outdir):
    """cases: name -> [difference lines]. Prints the counts; returns (pass, fail)."""
    same = sum(1 for d in cases.values() if not d)
    p = f = 0
    acc = {}
    with open(f"{outdir}/{cls}.diff", "w") as log:
        for name in sorted(cases):
            bad = []
            for d in cases[name]:
                line = f"{cls} {name} {d}"
                log.write(line + "\n")
                hit = next((n for n, r in accepted_re if r.search(line)), None)
                if hit:
                    acc[hit] = acc.get(hit, 0) + 1
                else:
                    bad.append(line)
            if bad:
                f += 1
                print(f"FAIL {cls} {name}: {len(bad)} undocumented difference(s)")
                for b in bad[:6]:
                    print("    " + b)
            else:
                p += 1
    print(f"parity: {cls} {same}/{len(cases)} identical, {p}/{len(cases)} once the accepted "
          "differences are set aside")
    for n in sorted(acc):
        print(f"parity: {cls}: {acc[n]} difference(s) accepted by {n}")
    return p, f


# ---- (a) objects ---------------------------------------------------------------------------

def norm_obj(o, side):
    md = o["metadata"]
    for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
              "selfLink"):
        md.pop(k, None)
    for r in md.get("ownerReferences", []):
        r.pop("uid", None)
    labels = md.get("labels", {})
    if side == "kt":
        labels.pop(OWNER_LABEL, None)
    if not labels:
        md.pop("labels", None)
    if o["kind"] == "Secret":
        # SSH keys are random per build: compare the keys only.
        o["data"] = {k: "<bytes>" for k in o.get("data", {})}
    if o["kind"] == "ConfigMap" and md["name"].endswith("-runtime-snapshot"):
        # The runtime as YAML: compared as data, without the runtime's own volatile metadata
        # (its uid, resourceVersion and timestamps), like the objects themselves.
        rt = yaml.safe_load(o["data"]["runtime"])
        for k in ("uid", "resourceVersion", "creationTimestamp", "generation"):
            rt.get("metadata", {}).pop(k, None)
        o["data"]["runtime"] = rt
    if o["kind"] == "TrainJob":
        # The TrainJob itself: its status (conditions without their transition times) and
        # its metadata (finalizers, labels the controller adds); the spec is the input both got.
        for c in o.get("status", {}).get("conditions", []):
            c.pop("lastTransitionTime", None)
        o.pop("spec", None)
        return o
    o.pop("status", None)
    return o


def key(o):
    return f"{o['kind']}/{o['metadata']['name']}"


def objects(kt_path, up_path, jobs_path, dpath, outdir):
    acc = deliberate(dpath)
    kt = {key(o): norm_obj(o, "kt") for o in json.load(open(kt_path))["items"]}
    up = {key(o): norm_obj(o, "up") for o in json.load(open(up_path))["items"]}
    # Group per TrainJob (the controller owner), so a case is one TrainJob.
    def owner(o):
        if o["kind"] == "TrainJob":
            return o["metadata"]["name"]
        for r in o["metadata"].get("ownerReferences", []):
            if r.get("kind") == "TrainJob":
                return r["name"]
        return "<no-owner>"
    names = [j["metadata"]["name"] for j in json.load(open(jobs_path))["items"]]
    cases = {n: [] for n in names}
    for k in sorted(set(kt) | set(up)):
        o = kt.get(k) or up.get(k)
        n = owner(o)
        cases.setdefault(n, [])
        if k not in up:
            cases[n].append(f"{k}: only kt built it")
        elif k not in kt:
            cases[n].append(f"{k}: only upstream built it")
        else:
            diff(kt[k], up[k], k, cases[n])
    print(f"parity: objects: {len(kt)} kt, {len(up)} upstream, {len(names)} TrainJobs")
    return report("objects", cases, acc, outdir)


# ---- (b)(c)(d) reviews ---------------------------------------------------------------------

class Client:
    def __init__(self, url, ca):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def post(self, path, body):
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                            timeout=30)
                self.conn.request("POST", path, body, {"Content-Type": "application/json"})
                r = self.conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                self.conn = None
                if attempt:
                    raise
        return None


def answer(status, body):
    if status != 200:
        return {"http": status, "body": body.decode(errors="replace")[:300]}
    resp = json.loads(body).get("response", {})
    st = resp.get("status") or {}
    out = {"allowed": resp.get("allowed"), "code": st.get("code"), "message": st.get("message"),
           "reason": st.get("reason"), "warnings": resp.get("warnings") or []}
    if resp.get("patch"):
        patch = json.loads(base64.b64decode(resp["patch"]))
        for op in patch:
            if op.get("path", "").endswith("/time") and "value" in op:
                op["value"] = "<now>"
            elif isinstance(op.get("value"), dict) and "time" in op["value"]:
                op["value"] = dict(op["value"], time="<now>")
        out["patchType"] = resp.get("patchType")
        # The /time operations first, then the rest by path.
        out["patch"] = sorted(patch, key=lambda o: (not o.get("path", "").endswith("/time"),
                                                    o.get("path", ""), o.get("op", "")))
    return out


def canonical_values(msg):
    """msg with every JSON object/array after "Invalid value: " re-encoded with sorted keys."""
    if not msg:
        return msg
    out, i, dec = [], 0, json.JSONDecoder()
    tag = "Invalid value: "
    while True:
        j = msg.find(tag, i)
        if j < 0:
            out.append(msg[i:])
            return "".join(out)
        j += len(tag)
        out.append(msg[i:j])
        i = j
        if msg[j:j + 1] in ("{", "["):
            try:
                v, end = dec.raw_decode(msg, j)
                out.append(json.dumps(v, sort_keys=True, separators=(",", ":")))
                i = end
            except ValueError:
                pass


def errors_of(msg):
    """The errors of an aggregated message "[e1, e2]" as a sorted list (each error starts with
    its field path); a single message as itself."""
    if not msg or not (msg.startswith("[") and msg.endswith("]")):
        return [msg]
    return sorted(re.split(r", (?=(?:spec|metadata)\.|<nil>|\[)", msg[1:-1]))


MISSING_TARGET = re.compile(r"^spec\.runtimePatches: Invalid value: .*: must not have "
                            r"(replicated job|container) that doesn't exist in the runtime job")


INITIALIZER_JOB = re.compile(r"^spec\.runtimeRef: Invalid value: .*: must have (dataset|model)-initializer "
                             r"job when trainJob is configured with input")


def verdict(a):
    return f"{a.get('allowed')} {a.get('code')} {a.get('reason')} {a.get('message')}"


def compare_answers(a, b):
    """Difference lines of two answers. A changed verdict is one line (allowed, code, reason,
    message together); the same errors in another order, or kt's extra runtimePatches
    missing-target errors next to upstream's same others, one line saying so."""
    d = []
    ea, eb = errors_of(a.get("message")), errors_of(b.get("message"))
    if a.get("allowed") != b.get("allowed") or a.get("code") != b.get("code"):
        d.append(f"response.verdict: kt={verdict(a)} upstream={verdict(b)}")
    elif a.get("message") != b.get("message"):
        ca = errors_of(canonical_values(a.get("message")))
        cb = errors_of(canonical_values(b.get("message")))
        extra = [e for e in ca if e not in cb]
        if ea == eb:
            d.append("response.message: same errors, another order")
        elif ca == cb:
            d.append("response.message: same errors, JSON keys of a value in another order")
        elif any(MISSING_TARGET.match(e) for e in extra) and all(
                MISSING_TARGET.match(e) or INITIALIZER_JOB.search(e) for e in extra) and all(
                e.startswith(("spec.runtimePatches:", "spec.runtimeRef:")) for e in cb if e not in ca):
            # kt judges the patch against the runtime; upstream, having merged the patch first,
            # checks the jobs/containers it created instead (other errors about them).
            d.append("response.message: kt adds runtimePatches missing-target errors")
        else:
            d.append(f"response.message: kt={short(a.get('message'))} upstream={short(b.get('message'))}")
    for k in ("allowed", "code", "reason", "message"):
        a, b = dict(a, **{k: None}), dict(b, **{k: None})
    diff(a, b, "response", d)
    return d


def reviews(path, kt_url, kt_ca, up_url, up_ca, dpath, outdir):
    acc = deliberate(dpath)
    kt, up = Client(kt_url, kt_ca), Client(up_url, up_ca)
    by_class = {}
    verdicts = {}
    with open(f"{outdir}/answers.jsonl", "w") as log:
        for line in open(path):
            rv = json.loads(line)
            body = json.dumps(rv["review"]).encode()
            a = answer(*kt.post(rv["path"], body))
            b = answer(*up.post(rv["path"], body))
            log.write(json.dumps({"name": rv["name"], "kt": a, "upstream": b}) + "\n")
            d = compare_answers(a, b)
            by_class.setdefault(rv["class"], {})[rv["name"]] = d
            v = verdicts.setdefault(rv["class"], [0, 0])
            v[0] += a.get("allowed") == b.get("allowed")
            v[1] += 1
    p = f = 0
    for cls in sorted(by_class):
        print(f"parity: {cls} verdicts {verdicts[cls][0]}/{verdicts[cls][1]} agree")
        x, y = report(cls, by_class[cls], acc, outdir)
        p, f = p + x, f + y
    return p, f


def api_defaults(path, kubeconfig, out_path):
    """Each review's object and oldObject as the API server would send them: created with
    ?dryRun=All on the plane (CRD defaults applied, uid and timestamps set). Reviews of objects
    the API server refuses (CRD schema) are dropped: no webhook would ever see them."""
    import os
    import tempfile
    kc = yaml.safe_load(open(kubeconfig))
    cluster, user = kc["clusters"][0]["cluster"], kc["users"][0]["user"]
    tmp = tempfile.mkdtemp()
    files = {}
    for k, n in (("certificate-authority-data", "ca"), ("client-certificate-data", "crt"),
                 ("client-key-data", "key")):
        files[n] = os.path.join(tmp, n)
        src = cluster if n == "ca" else user
        open(files[n], "wb").write(base64.b64decode(src[k]))
    c = Client(cluster["server"], files["ca"])
    c.ctx.load_cert_chain(files["crt"], files["key"])
    plural = {"TrainJob": "trainjobs", "TrainingRuntime": "trainingruntimes",
              "ClusterTrainingRuntime": "clustertrainingruntimes"}

    def default(o):
        ns = o["metadata"].get("namespace")
        url = "/apis/trainer.kubeflow.org/v1alpha1/" + (f"namespaces/{ns}/" if ns else "")
        status, body = c.post(url + plural[o["kind"]] + "?dryRun=All", json.dumps(o).encode())
        if status != 201:
            return None, json.loads(body).get("message", "")
        return json.loads(body), None

    kept = dropped = 0
    with open(out_path, "w") as out, open(out_path + ".dropped", "w") as drop:
        for line in open(path):
            rv = json.loads(line)
            req = rv["review"]["request"]
            if rv["class"] == "decode":  # as they are: objects the schema would refuse
                out.write(json.dumps(rv) + "\n")
                kept += 1
                continue
            ok = True
            for k in ("object", "oldObject"):
                if req.get(k) is not None:
                    req[k], err = default(req[k])
                    if err is not None:
                        drop.write(f"{rv['name']}: {err}\n")
                        ok = False
                        break
            if ok:
                out.write(json.dumps(rv) + "\n")
                kept += 1
            else:
                dropped += 1
    for f in files.values():
        os.unlink(f)
    os.rmdir(tmp)
    print(f"parity: {kept} reviews with API-server defaults, {dropped} refused by the CRD schema")


def selftest(kt_path, up_path, jobs_path, dpath, outdir):
    """Negative cases: the comparison must catch a planted difference in a built object and in
    an answer, and accept nothing beyond its entries."""
    import os
    items = json.load(open(kt_path))
    js = next(o for o in items["items"] if o["kind"] == "JobSet")
    c = js["spec"]["replicatedJobs"][-1]["template"]["spec"]["template"]["spec"]["containers"][0]
    c["image"] = "planted/difference:1"
    planted = os.path.join(outdir, "planted.json")
    json.dump(items, open(planted, "w"))
    sys.stdout = open(os.devnull, "w")
    try:
        _, f = objects(planted, up_path, jobs_path, dpath, outdir)
    finally:
        sys.stdout = sys.__stdout__
    res = [("planted object difference fails", f == 1)]
    acc = deliberate(dpath)
    a = {"allowed": False, "code": 403, "message": "spec.x: Invalid value: 1: kt", "reason": "Forbidden",
         "warnings": []}
    b = dict(a, message="spec.x: Invalid value: 1: upstream")
    res.append(("planted message difference is not accepted",
                not any(r.search(f"trainjob-create c {d}") for d in compare_answers(a, b) for _, r in acc)))
    b = dict(a, allowed=True, code=200, message=None, reason=None)
    res.append(("planted verdict difference is not accepted",
                not any(r.search(f"trainjob-create c {d}") for d in compare_answers(a, b) for _, r in acc)))
    res.append(("identical answers give no difference", compare_answers(a, dict(a)) == []))
    p = f = 0
    for name, good in res:
        print(("ok " if good else "FAIL ") + "selftest: " + name)
        p, f = p + good, f + (not good)
    return p, f


def main():
    mode = sys.argv[1]
    if mode == "selftest":
        p, f = selftest(*sys.argv[2:7])
        print(f"{p} passed, {f} failed")
        sys.exit(1 if f else 0)
    if mode == "defaults":
        api_defaults(*sys.argv[2:5])
        return
    if mode == "objects":
        p, f = objects(*sys.argv[2:7])
    else:
        p, f = reviews(*sys.argv[2:9])
    print(f"{p} passed, {f} failed")
    sys.exit(1 if f else 0)


if __name__ == "__main__":
    main()
