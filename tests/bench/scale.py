#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/bench/scale.py - the measuring half of tests/bench/scale.sh (stdlib only).

  gen N [--namespaces K]    the N TrainJobs both sides get (JSON list on stdout; fixed seed),
                            in namespace scale, or spread over scale-00 .. scale-(K-1)
  drive ARGS                watch JobSets and TrainJobs, create the inputs at a steady rate
                            (--rate, 0 = unpaced) over --conns keep-alive connections,
                            wait until every TrainJob is Complete or Failed; per-TrainJob times
  metrics BEFORE AFTER [OWN_BEFORE OWN_AFTER]
                            the API server's /metrics diff: apiserver_request_total by verb and
                            resource (all clients) and the admission webhooks' latency; with the
                            webhook server's own /metrics, its controller_runtime_webhook_latency
  audit WHO LOG...          the controller's own requests from the API server's audit log (and its rotated parts)
  status-writes WHO LOG...  what each TrainJob status patch of the controller set (needs the audit log at
                            level Request for trainjobs/status: scale.sh's SCALE_AUDIT_STATUS=1)
  report RESULT.json...     the side-by-side table and the growth chart (SVG, hand-written)
  calibrate --limits F R... the scale gate's limits from >= 5 results (tests/bench/gate.sh)
  gate LIMITS RESULT        ok/FAIL lines: RESULT within the limits
"""
import argparse
import datetime
import http.client
import json
import math
import os
import random
import re
import ssl
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

# The mix: runtime, weight, numNodes choices. torchtune has initializers (dataset and model,
# JobSet dependsOn) and claims a volume (one PersistentVolume per TrainJob is made for it).
MIX = [
    ("torch-distributed", 4, [1, 2, 3, 4]),
    ("deepspeed-distributed", 2, [1, 2, 3, 4]),  # MPI: launcher + nodes, SSH Secret, hostfile
    ("torchtune-llama3.2-1b", 1, [1]),  # initializers; single node
    ("jax-distributed", 1, [1, 2, 3, 4]),
    ("xgboost-distributed", 1, [1, 2, 3, 4]),
    ("mlx-distributed", 1, [1, 2]),  # MPI
]
NS = "scale"


def gen(n, namespaces=1):
    """N TrainJobs (fixed seed), spread round-robin over NAMESPACES namespaces: "scale" for one,
    else scale-00, scale-01, ... (several keep each namespace's pods and Services fewer, as
    teams' namespaces do: the Endpoints and EndpointSlice controllers match every pod change
    against the Services of its namespace, and JobSet makes one per JobSet)."""
    rng = random.Random(28)
    names = [r for r, w, _ in MIX for _ in range(w)]
    nodes = {r: c for r, _, c in MIX}
    out = []
    for i in range(n):
        rt = rng.choice(names)
        out.append({
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "tj-%05d" % i,
                         "namespace": NS if namespaces <= 1 else "%s-%02d" % (NS, i % namespaces)},
            "spec": {"runtimeRef": {"name": rt}, "trainer": {"numNodes": rng.choice(nodes[rt])}},
        })
    return out


# ---- a minimal Kubernetes client: client certificate, keep-alive, watches ----
class Client:
    def __init__(self, server, ca, cert, key):
        u = urllib.parse.urlparse(server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)

    def conn(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def get(self, path):
        c = self.conn()
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        c.close()
        if r.status != 200:
            raise RuntimeError("GET %s: %d %s" % (path, r.status, body[:200]))
        return json.loads(body)


class Watch(threading.Thread):
    """Watch PATH from a LIST's resourceVersion; call on_event(type, obj, t) for each event."""

    def __init__(self, client, path, on_event):
        super().__init__(daemon=True)
        self.client, self.path, self.on_event = client, path, on_event
        self.rv = client.get(path + "?limit=1")["metadata"]["resourceVersion"]
        self.stop = False
        self.bytes = 0
        self.ready = threading.Event()

    def run(self):
        while not self.stop:
            c = self.client.conn(timeout=None)
            c.request("GET", "%s?watch=1&allowWatchBookmarks=1&resourceVersion=%s&timeoutSeconds=600"
                      % (self.path, self.rv))
            r = c.getresponse()
            self.ready.set()
            while not self.stop:
                line = r.readline()
                if not line:
                    break
                t = time.time()
                self.bytes += len(line)
                ev = json.loads(line)
                obj = ev.get("object", {})
                if ev.get("type") == "ERROR":
                    raise RuntimeError("watch %s: %s" % (self.path, obj))
                self.rv = obj.get("metadata", {}).get("resourceVersion", self.rv)
                if ev.get("type") != "BOOKMARK":
                    self.on_event(ev["type"], obj, t)
            c.close()


def proc_stat(pid):
    """(command name, the fields after it: state first) of /proc/PID/stat; None when unreadable."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            st = f.read()
        return st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
    except (OSError, ValueError):
        return None


def alive(pid):
    """PID runs (a zombie, exited but not yet reaped by its parent, does not)."""
    st = proc_stat(pid)
    return bool(st and st[1] and st[1][0] != "Z")


def progress(jobs, lock, t0):
    """One line a minute on stderr for long runs: how far the creates and the chain got."""
    with lock:
        sent = sum(1 for j in jobs.values() if "t_send" in j)
        js = sum(1 for j in jobs.values() if "t_jobset" in j)
        term = sum(1 for j in jobs.values() if "terminal" in j)
    el = time.time() - t0
    print("drive: %4.0f s: %d created (%.1f/s), %d with a JobSet, %d terminal, %d in flight" % (
        el, sent, sent / el if el else 0, js, term, sent - term), file=sys.stderr, flush=True)


def drive(a):
    cl = Client(a.server, a.ca, a.cert, a.key)
    inputs = json.load(open(a.inputs))
    jobs = {j["metadata"]["name"]: {"ns": j["metadata"]["namespace"], "runtime": j["spec"]["runtimeRef"]["name"],
                                   "numNodes": j["spec"]["trainer"]["numNodes"],
                                   "jobset_added": 0, "jobset_deleted": 0} for j in inputs}
    lock = threading.Lock()
    done = threading.Event()
    left = [len(jobs)]

    def mine(obj):  # the input of that name and namespace, or None
        j = jobs.get(obj["metadata"]["name"])
        return j if j is not None and j["ns"] == obj["metadata"].get("namespace") else None

    def on_jobset(typ, obj, t):
        with lock:
            j = mine(obj)
            if j is None:
                return
            if typ == "ADDED":
                j["jobset_added"] += 1
                j.setdefault("t_jobset", t)
            elif typ == "DELETED":
                j["jobset_deleted"] += 1
            if (obj.get("status") or {}).get("terminalState"):
                j.setdefault("t_jobset_done", t)  # the JobSet's own end, as this watch saw it

    def on_trainjob(typ, obj, t):
        with lock:
            j = mine(obj)
            if j is None or "terminal" in j:
                return
            for c in obj.get("status", {}).get("conditions", []) or []:
                if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                    j["terminal"], j["t_terminal"] = c["type"], t
                    left[0] -= 1
                    if left[0] == 0:
                        done.set()
                    return

    # Watched and listed across namespaces; mine() keeps the inputs' objects.
    base = "/apis/%s/namespaces/%s/%s"
    all_js, all_tj = "/apis/jobset.x-k8s.io/v1alpha2/jobsets", "/apis/trainer.kubeflow.org/v1alpha1/trainjobs"
    wj = Watch(cl, all_js, on_jobset)
    wt = Watch(cl, all_tj, on_trainjob)
    for w in (wj, wt):
        w.start()
        w.ready.wait(30)
    # Creates on a.conns keep-alive connections, each its own thread: input i is due at t0 + i/rate
    # (rate 0: no pacing) and goes out on connection i % conns, so a slow answer delays only the
    # inputs behind it on the same connection.
    t0 = time.time()
    shown = [t0]

    def path(j):
        return base % ("trainer.kubeflow.org/v1alpha1", j["ns"], "trainjobs")

    def create(c, i, tj):
        due = t0 + i / a.rate if a.rate > 0 else t0
        now = time.time()
        if due > now:
            time.sleep(due - now)
        body = json.dumps(tj)
        j = jobs[tj["metadata"]["name"]]
        r = rb = None
        for attempt in range(2):
            try:
                j["t_send"] = time.time()
                c.request("POST", path(j), body, {"Content-Type": "application/json", "User-Agent": "kt-scale-driver"})
                r = c.getresponse()
                rb = r.read()
                break
            except (http.client.HTTPException, OSError) as e:
                c.close()
                c = cl.conn()
                rb = str(e).encode()
        j["t_resp"] = time.time()
        j["create_code"] = r.status if r is not None else 0
        if j["create_code"] == 201:
            m = json.loads(rb)["metadata"]
            j["uid"], j["creationTimestamp"] = m["uid"], m["creationTimestamp"]
        else:
            j["create_error"] = rb[:300].decode(errors="replace")
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    done.set()
        return c

    def sender(k):
        c = cl.conn()
        for i in range(k, len(inputs), a.conns):
            c = create(c, i, inputs[i])
        c.close()

    senders = [threading.Thread(target=sender, args=(k,), daemon=True) for k in range(a.conns)]
    for s_ in senders:
        s_.start()
    for s_ in senders:
        while s_.is_alive():
            s_.join(1)
            if time.time() - shown[0] >= 60:
                shown[0] = time.time()
                progress(jobs, lock, t0)
    t_created = time.time()
    deadline = t_created + a.timeout
    gone = False
    while not done.wait(max(0.1, min(5, deadline - time.time()))) and time.time() < deadline:
        if not any(alive(p) for p in a.pid or [os.getpid()]):
            gone = True  # nothing would finish the rest: say so now, not at the timeout
            print("drive: the controller (pid %s) exited; stopping" % ",".join(map(str, a.pid)), file=sys.stderr)
            break
        if time.time() - shown[0] >= 60:
            shown[0] = time.time()
            progress(jobs, lock, t0)
    t_end = time.time()
    wj.stop = wt.stop = True
    # What exists now: every JobSet and the TrainJob it belongs to (controller ownerReference).
    nss = {j["ns"] for j in jobs.values()}
    tjs = [t for t in cl.get(all_tj)["items"] if t["metadata"]["namespace"] in nss]
    jss = [x for x in cl.get(all_js)["items"] if x["metadata"]["namespace"] in nss]
    uid_name = {t["metadata"]["uid"]: t["metadata"]["name"] for t in tjs}
    owned = {}
    orphans = 0
    for js in jss:
        ow = [o["uid"] for o in js["metadata"].get("ownerReferences", []) if o.get("controller")]
        if ow and ow[0] in uid_name:
            owned[uid_name[ow[0]]] = owned.get(uid_name[ow[0]], 0) + 1
        else:
            orphans += 1
    for n, j in jobs.items():
        j["jobsets_owned"] = owned.get(n, 0)
    json.dump({"t0": t0, "t_created": t_created, "conns": a.conns, "t_end": t_end, "jobs": jobs,
               "trainjobs_listed": len(tjs), "jobsets_listed": len(jss), "jobsets_orphaned": orphans,
               "watch_bytes": {"jobsets": wj.bytes, "trainjobs": wt.bytes}},
              open(a.out, "w"), indent=1)
    ok = all(j.get("terminal") for j in jobs.values())
    if gone:
        return 1
    print("drive: %d TrainJobs created in %.1f s (%.1f/s over %d connections), %s after %.1f s" % (
        len(jobs), t_created - t0, len(jobs) / max(t_created - t0, 1e-9), a.conns,
        "all terminal" if ok else "NOT all terminal", t_end - t0))
    return 0


# ---- /metrics ----
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def prom(path):
    out = {}
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        labels = tuple(sorted(LABEL.findall(m.group(3) or "")))
        try:
            out[(m.group(1), labels)] = float(m.group(4))
        except ValueError:
            pass
    return out


def quantile(buckets, q):
    """buckets: [(le, cumulative count)] sorted; linear inside a bucket, like histogram_quantile."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if math.isinf(le):
                return prev_le
            return prev_le + (le - prev_le) * ((rank - prev_c) / (c - prev_c) if c > prev_c else 0)
        prev_le, prev_c = le, c
    return prev_le


def metrics(before, after, own_before=None, own_after=None):
    b, a = prom(before), prom(after)
    d = {k: v - b.get(k, 0.0) for k, v in a.items()}
    req = {}
    for (name, labels), v in d.items():
        if name == "apiserver_request_total" and v > 0:
            l = dict(labels)
            res = l.get("resource", "") + ("/" + l["subresource"] if l.get("subresource") else "")
            key = "%s %s" % (l.get("verb"), res)
            req[key] = req.get(key, 0) + v
    # Watch event bytes the API server sent, by resource (every watcher: no client label).
    wbytes = {}
    for (name, labels), v in d.items():
        if name == "apiserver_watch_events_sizes_sum" and v > 0:
            res = dict(labels).get("resource", "?")
            wbytes[res] = wbytes.get(res, 0) + v
    # Admission webhooks (trainer.kubeflow.org ones): latency histogram and rejections.
    hooks = {}
    for (name, labels), v in d.items():
        l = dict(labels)
        if not l.get("name", "").endswith("trainer.kubeflow.org"):
            continue
        if name == "apiserver_admission_webhook_admission_duration_seconds_bucket":
            h = hooks.setdefault(l["name"], {"b": {}, "rejected": 0, "errors": 0})
            le = float("inf") if l["le"] == "+Inf" else float(l["le"])
            h["b"][le] = h["b"].get(le, 0) + v
        elif name == "apiserver_admission_webhook_rejection_count":
            h = hooks.setdefault(l["name"], {"b": {}, "rejected": 0, "errors": 0})
            h["errors" if l.get("error_type") not in (None, "no_error") else "rejected"] += v
    wh = {}
    for n, h in hooks.items():
        bk = sorted(h["b"].items())
        if not bk or bk[-1][1] <= 0:
            continue
        wh[n] = {"count": bk[-1][1], "p50_ms": quantile(bk, 0.5) * 1000,
                 "p99_ms": quantile(bk, 0.99) * 1000, "rejected": h["rejected"], "errors": h["errors"]}
    json.dump({"requests_all_clients": req, "webhooks": wh, "watch_bytes": wbytes,
               "webhooks_own": own_latency(own_before, own_after)}, sys.stdout, indent=1)
    return 0


def own_latency(before, after):
    """The webhook server's own controller_runtime_webhook_latency_seconds, after - before, by
    path (only the trainer's validate paths); {} without the files."""
    if not before or not after or not os.path.exists(before) or not os.path.exists(after):
        return {}
    b, a = prom(before), prom(after)
    hooks = {}
    for (name, labels), v in a.items():
        l = dict(labels)
        if name != "controller_runtime_webhook_latency_seconds_bucket" or "trainer" not in l.get("webhook", ""):
            continue
        le = float("inf") if l["le"] == "+Inf" else float(l["le"])
        h = hooks.setdefault(l["webhook"], {})
        h[le] = h.get(le, 0) + v - b.get((name, labels), 0.0)
    out = {}
    for path, h in hooks.items():
        bk = sorted(h.items())
        if bk and bk[-1][1] > 0:
            out[path] = {"count": bk[-1][1], "p50_ms": quantile(bk, 0.5) * 1000, "p99_ms": quantile(bk, 0.99) * 1000}
    return out


# ---- the audit log: requests of the controller only ----
def controller_events(paths, who, since, keep_line=None):
    """(time, event) for each audit event of the controller (see audit) received at or after
    since; keep_line, when given, skips lines before they are parsed."""
    users = {w[5:] for w in who.split(",") if w.startswith("user:")}
    agents = tuple(w[6:] for w in who.split(",") if w.startswith("agent:"))
    for line in (ln for p in paths for ln in open(p, errors="replace")):
        if keep_line and not keep_line(line):
            continue
        try:
            e = json.loads(line)
            ts = e["requestReceivedTimestamp"].rstrip("Z")
            t = datetime.datetime.fromisoformat(ts).replace(tzinfo=datetime.timezone.utc).timestamp()
        except (ValueError, KeyError):
            continue
        if t < since:
            continue
        if e.get("user", {}).get("username") not in users and not (
                agents and e.get("userAgent", "").startswith(agents)):
            continue
        yield t, e


def audit(paths, who, since):
    """paths: the audit log and its rotated parts (the API server starts a new file every 100 MB:
    lumberjack's default, about 3,000 TrainJobs here). who: comma-separated 'user:NAME' (an exact identity) or 'agent:PREFIX' (the User-Agent's
    start); only requests the API server received at or after SINCE (epoch seconds: the first
    create)."""
    req = {}
    for _, e in controller_events(paths, who, since):
        o = e.get("objectRef") or {}
        res = o.get("resource", e.get("requestURI", "?").split("?")[0])
        if o.get("subresource"):
            res += "/" + o["subresource"]
        key = "%s %s" % (e.get("verb"), res)
        req[key] = req.get(key, 0) + 1
    json.dump(req, sys.stdout, indent=1)
    return 0


def patch_shape(body):
    """One TrainJob status patch's body -> a short name of what it sets: the status members in
    order of name, a condition as TYPE=STATUS/REASON, e.g.
    'conditions[Complete=True/JobSetCompleted],jobsStatus'."""
    st = (body or {}).get("status")
    if not isinstance(st, dict):
        return "(no status)"
    parts = []
    for k in sorted(st):
        if k == "conditions" and isinstance(st[k], list):
            cs = ["%s=%s/%s" % (c.get("type"), c.get("status"), c.get("reason")) for c in st[k]]
            parts.append("conditions[%s]" % " ".join(cs))
        else:
            parts.append(k)
    return ",".join(parts) or "(empty status)"


def status_writes(paths, who, since):
    """The controller's TrainJob status patches from an audit log at level Request for
    trainjobs/status: how many by what they set, and the sequences per TrainJob (most common
    first), with the API server's answer codes."""
    seq, shapes, codes = {}, {}, {}
    for t, e in controller_events(paths, who, since, lambda ln: '"trainjobs"' in ln and '"status"' in ln):
        o = e.get("objectRef") or {}
        if e.get("verb") != "patch" or o.get("subresource") != "status":
            continue
        code = (e.get("responseStatus") or {}).get("code", 0)
        shape = patch_shape(e.get("requestObject"))
        if code != 200:
            shape = "%s -> %d" % (shape, code)
        shapes[shape] = shapes.get(shape, 0) + 1
        codes[str(code)] = codes.get(str(code), 0) + 1
        seq.setdefault("%s/%s" % (o.get("namespace"), o.get("name")), []).append((t, shape))
    seqs = {}
    for writes in seq.values():
        writes.sort()
        k = " | ".join(s for _, s in writes)
        seqs[k] = seqs.get(k, 0) + 1
    json.dump({"trainjobs": len(seq), "patches": sum(shapes.values()), "codes": codes,
               "per_trainjob": {k: len(w) for k, w in seq.items()},
               "by_shape": dict(sorted(shapes.items(), key=lambda kv: -kv[1])),
               "sequences": dict(sorted(seqs.items(), key=lambda kv: -kv[1])[:20])},
              sys.stdout, indent=1)
    return 0


# ---- report ----
def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(math.ceil(q * len(xs))) - 1))]


def summarize(r):
    d = r["drive"]
    jobs = d["jobs"].values()
    lat_js = [(j["t_jobset"] - j["t_send"]) * 1000 for j in jobs if "t_jobset" in j and "t_send" in j]
    lat_done = [(j["t_terminal"] - j["t_send"]) for j in jobs if "t_terminal" in j and "t_send" in j]
    js_life = [j["t_jobset_done"] - j["t_jobset"] for j in jobs if "t_jobset_done" in j and "t_jobset" in j]
    n = len(d["jobs"])
    complete = sum(1 for j in jobs if j.get("terminal") == "Complete")
    one = sum(1 for j in jobs if j.get("jobsets_owned") == 1 and j.get("jobset_added") == 1
              and j.get("jobset_deleted") == 0)
    last = max([j["t_terminal"] for j in jobs if "t_terminal" in j] or [d["t_end"]])
    s = {
        "n": n, "side": r["side"],
        "js_p50": pct(lat_js, .5), "js_p99": pct(lat_js, .99), "js_max": max(lat_js or [0]),
        "js_life_p50": pct(js_life, .5), "js_life_p99": pct(js_life, .99),
        "js_life_over_30": sum(1 for x in js_life if x > 30) / len(js_life) * 100 if js_life else None,
        "done_p50": pct(lat_done, .5), "done_p99": pct(lat_done, .99), "done_max": max(lat_done or [0]),
        "create_s": d["t_created"] - d["t0"], "drain_s": last - d["t0"],
        "create_rate": n / max(d["t_created"] - d["t0"], 1e-9), "conns": d.get("conns", 1),
        "complete": complete, "one_jobset": one, "orphans": d["jobsets_orphaned"],
        "jobsets_listed": d["jobsets_listed"],
        "watch_kb": sum(d["watch_bytes"].values()) / 1024,
    }
    s.update({k: r.get(k) for k in ("chain", "sim_engine", "cpu", "wh_cpu", "plane_nodes", "namespaces", "rate", "run_ms",
                                    "replicas")})
    fo, sb = r.get("failover"), r.get("standby")
    s["failover_s"] = fo["seconds"] if fo and fo.get("moved") else None
    s["failover_sig"] = fo["signal"] if fo else None
    s["standby_rss"] = (fo or {}).get("standby_rss", (sb or {}).get("rss"))
    s["standby_rss"] = s["standby_rss"] / 1024 if s["standby_rss"] is not None else None
    s["standby_cpu"] = (fo or {}).get("standby_cpu", (sb or {}).get("cpu"))
    for k in ("rss_idle", "rss_drain", "rss_steady", "hwm", "wh_hwm"):  # KB in, MB out
        s[k] = r[k] / 1024 if r.get(k) is not None else None
    if r.get("rss_steady") is not None and r.get("rss_idle") is not None:
        s["kb_per_tj"] = (r["rss_steady"] - r["rss_idle"]) / n
    s["ctl_req"] = r.get("audit", {})
    s["ctl_req_total"] = sum(s["ctl_req"].values())
    s["all_req_total"] = sum(r.get("metrics", {}).get("requests_all_clients", {}).values())
    s["webhooks"] = r.get("metrics", {}).get("webhooks", {})
    s["webhooks_own"] = r.get("metrics", {}).get("webhooks_own", {})
    wb = r.get("metrics", {}).get("watch_bytes", {})
    s["watch_kb_owned"] = sum(wb.get(k, 0) for k in ("trainjobs", "jobsets", "configmaps", "secrets")) / 1024 / n if wb else None
    s["cpu_ms_per"] = s["cpu"] * 1000 / n if s.get("cpu") is not None else None
    s["ok"] = complete == n and one == n and s["orphans"] == 0
    return s


def fmt(v, f="%.1f"):
    return "-" if v is None else (f % v)


def report(a):
    rs = [json.load(open(p)) for p in a.results]
    ss = [summarize(r) for r in rs]
    sizes = sorted({s["n"] for s in ss})
    sides = []
    for s in ss:
        if s["side"] not in sides:
            sides.append(s["side"])
    cmd = {  # how each figure was produced
        "lat": "scale.py drive: watch event arrival (client clock) - the client's time just before its POST",
        "drain": "scale.py drive: first POST -> last TrainJob Complete/Failed seen on the watch",
        "rss": "/proc/PID/status VmRSS (idle: before the creates; steady: SCALE_SETTLE_S after the drain)",
        "hwm": "/proc/PID/status VmHWM at the end",
        "cpu": "/proc/PID/stat utime+stime (clock ticks / CLK_TCK) at the end, from process start",
        "req": "API server audit log (level Metadata), requests received from the first create on: kt by its two "
               "identities system:serviceaccount:kubeflow-system:kubeflow-trainer-{controller-manager,webhook}, "
               "upstream (controller and webhooks in one process, run as admin) by its User-Agent trainer-controller-manager/*",
        "all": "API server /metrics apiserver_request_total, after - before the creates, every client",
        "wh_own": "the webhook server's own /metrics controller_runtime_webhook_latency_seconds, after - before "
                  "(bucket-interpolated, each server's own bounds; kt's first is 0.1 ms)",
        "wh": "API server /metrics apiserver_admission_webhook_admission_duration_seconds, "
              "trainer.kubeflow.org webhooks, after - before (bucket-interpolated)",
    }
    for n in sizes:
        row = {s["side"]: s for s in ss if s["n"] == n}
        cols = [c for c in sides if c in row]
        lines = []

        def add(label, key, f="%.1f", src=""):
            lines.append([label] + [fmt(row[c].get(key), f) for c in cols] + [src])

        for c in cols:
            row[c]["ctl_per"] = row[c]["ctl_req_total"] / n if row[c]["ctl_req_total"] else None
            row[c]["all_per"] = row[c]["all_req_total"] / n if row[c]["all_req_total"] else None
        any_ = next(iter(row.values()))
        if any_.get("chain") == "sim":
            print("\nscale: N=%d TrainJobs in %s namespace(s), simulated chain (JobSet steps by %s), created at %s/s, "
                  "JobSets run %s ms" % (n, any_.get("namespaces") or 1, any_.get("sim_engine") or "kwok",
                                        any_.get("rate"), any_.get("run_ms")))
        else:
            print("\nscale: N=%d TrainJobs in %s namespace(s), %s KWOK nodes, created at %s/s, pods run %s ms" % (
                n, any_.get("namespaces") or 1, any_.get("plane_nodes"), any_.get("rate"), any_.get("run_ms")))
        add("create -> JobSet p50 (ms)", "js_p50", "%.0f", cmd["lat"])
        add("create -> JobSet p99 (ms)", "js_p99", "%.0f", "same")
        add("create -> JobSet max (ms)", "js_max", "%.0f", "same")
        add("create -> Complete p50 (s)", "done_p50", "%.2f", "same, TrainJob watch")
        add("create -> Complete p99 (s)", "done_p99", "%.2f", "same")
        add("create -> Complete max (s)", "done_max", "%.2f", "same")
        add("JobSet created -> terminal p50 (s)", "js_life_p50", "%.1f", "the JobSet watch: ADDED -> first terminalState")
        add("  p99", "js_life_p99", "%.1f", "same")
        add("  share over 30 s (%)", "js_life_over_30", "%.1f",
            "JobSets whose life as watched outlasts the status window (--status-batch-seconds 30)")
        add("creating took (s)", "create_s", "%.1f", "scale.py drive")
        add("creates per second reached", "create_rate", "%.1f", "N / creating took; SCALE_CONNS connections")
        add("total drain (s)", "drain_s", "%.1f", cmd["drain"])
        add("controller RSS idle (MB)", "rss_idle", "%.1f", cmd["rss"])
        add("controller RSS at drain (MB)", "rss_drain", "%.1f", "same")
        add("controller RSS steady (MB)", "rss_steady", "%.1f", "same, N finished TrainJobs kept")
        add("controller RSS peak (MB)", "hwm", "%.1f", cmd["hwm"])
        add("KB per TrainJob", "kb_per_tj", "%.1f", "(RSS steady - RSS idle) * 1024 / N")
        add("controller CPU (s)", "cpu", "%.2f", cmd["cpu"])
        add("controller CPU ms per TrainJob", "cpu_ms_per", "%.2f", "controller CPU / N")
        if any((row[c].get("replicas") or 1) > 1 for c in cols):
            add("reconciler replicas", "replicas", "%d", "SCALE_RECONCILERS (one Lease)")
            add("standby RSS (MB)", "standby_rss", "%.1f",
                "the replica not leading: VmRSS at the failover, else at the drain")
            add("standby CPU (s)", "standby_cpu", "%.2f", "same moment, utime+stime")
            sig = next((row[c]["failover_sig"] for c in cols if row[c].get("failover_sig")), None)
            if sig:
                add("failover: SIG%s leader -> Lease moved (s)" % sig, "failover_s", "%.2f",
                    "N/2 / rate seconds into the creates; controller CPU is then both replicas' sum")
        add("webhook RSS peak (MB)", "wh_hwm", "%.1f", "kt-webhook VmHWM (upstream: in its manager)")
        add("webhook CPU (s)", "wh_cpu", "%.2f", "kt-webhook utime+stime")
        add("trainer requests / TrainJob", "ctl_per", "%.2f", cmd["req"])
        add("all clients' requests / TrainJob", "all_per", "%.1f", cmd["all"])
        add("watch event KB / TrainJob, all watchers", "watch_kb_owned", "%.1f",
            "API server /metrics apiserver_watch_events_sizes_sum, after - before, trainjobs+jobsets+configmaps+secrets "
            "(every watcher of them: the controller, the JobSet controller, kcm, this driver)")
        add("watch bytes seen by the driver (KB)", "watch_kb", "%.0f", "scale.py's own JobSet+TrainJob watches")
        keys = sorted({k for c in cols for k in row[c]["ctl_req"]},
                      key=lambda k: -max(row[c]["ctl_req"].get(k, 0) for c in cols))
        for k in keys:
            lines.append(["  " + k] + ["%.2f" % (row[c]["ctl_req"].get(k, 0) / n) for c in cols] + ["per TrainJob"])
        for h in sorted({h for c in cols for h in row[c]["webhooks"]}):
            v = [row[c]["webhooks"].get(h) for c in cols]
            lines.append(["webhook %s p50/p99 (ms)" % h.replace(".trainer.kubeflow.org", "")] +
                         ["-" if x is None else "%.1f/%.1f (%d, %d denied, %d err)" % (
                             x["p50_ms"], x["p99_ms"], x["count"], x["rejected"], x["errors"]) for x in v]
                         + [cmd["wh"]])
        for h in sorted({h for c in cols for h in row[c]["webhooks_own"]}):
            v = [row[c]["webhooks_own"].get(h) for c in cols]
            lines.append(["  its own %s p50/p99 (ms)" % h] +
                         ["-" if x is None else "%.1f/%.1f (%d)" % (x["p50_ms"], x["p99_ms"], x["count"]) for x in v]
                         + [cmd["wh_own"]])
        lines.append(["correct: Complete / one JobSet / orphans"] +
                     ["%d/%d / %d/%d / %d" % (row[c]["complete"], n, row[c]["one_jobset"], n, row[c]["orphans"])
                      for c in cols] + ["every TrainJob Complete, exactly one JobSet (one ADDED, no DELETED, one owned)"])
        hdr = ["what"] + cols + ["how"]
        w = [max(len(str(l[i])) for l in lines + [hdr]) for i in range(len(hdr) - 1)]
        for l in [hdr] + lines:
            print("  " + "  ".join(str(x).ljust(w[i]) for i, x in enumerate(l[:-1])) + "  " + l[-1])
        for c in cols:
            print("scale: correctness N=%d %s: %s" % (n, c, "ok" if row[c]["ok"] else "FAIL"))
    if a.svg:
        chart(ss, sides, sizes, a.svg)
        ET.parse(a.svg)  # the chart must be well-formed XML
        print("scale: growth chart %s (valid XML)" % a.svg)
    return 0 if all(s["ok"] for s in ss) else 1


COLORS = {"kt": "#1f77b4", "upstream": "#d62728"}


def chain_name(ss):
    """The chain(s) the results ran on, for the chart's title."""
    names = sorted({"simulated chain (JobSet steps by %s)" % (s.get("sim_engine") or "kwok") if s.get("chain") == "sim"
                    else "full chain" for s in ss})
    return " and ".join(names)


def chart(ss, sides, sizes, path):
    panels = [("controller RSS peak (MB)", "hwm"), ("controller CPU (s)", "cpu"),
              ("create -> JobSet p99 (ms)", "js_p99"), ("create -> Complete p99 (s)", "done_p99")]
    W, H, pw, ph, m = 980, 620, 380, 220, 60
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" font-size="16" text-anchor="middle">kt vs upstream v2.3.0 on the %s, against N TrainJobs</text>' % (
               W // 2, esc(chain_name(ss)))]
    xmax = max(sizes)
    for p, (title, key) in enumerate(panels):
        ox, oy = m + (p % 2) * (pw + m + 20), 60 + (p // 2) * (ph + 80)
        vals = [s[key] for s in ss if s.get(key) is not None]
        ymax = max(vals or [1]) * 1.15 or 1
        out.append('<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>' % (ox + pw // 2, oy - 8, esc(title)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>' % (ox, oy, pw, ph))
        for t in range(5):
            y = oy + ph - ph * t / 4
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (ox, y, ox + pw, y))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (ox - 4, y + 4, "%.3g" % (ymax * t / 4)))
        for n in sizes:
            x = ox + pw * n / xmax
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x, oy + ph + 16, n))
        out.append('<text x="%d" y="%d" text-anchor="middle">N (TrainJobs)</text>' % (ox + pw // 2, oy + ph + 32))
        for side in sides:
            pts = sorted((s["n"], s[key]) for s in ss if s["side"] == side and s.get(key) is not None)
            xy = [(ox + pw * n / xmax, oy + ph - ph * v / ymax) for n, v in pts]
            col = COLORS.get(side, "#2ca02c")
            if len(xy) > 1:
                out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
                    col, " ".join("%.1f,%.1f" % q for q in xy)))
            for (x, y), (_, v) in zip(xy, pts):
                out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s %s</title></circle>' % (x, y, col, side, "%.3g" % v))
                out.append('<text x="%.1f" y="%.1f" text-anchor="end" fill="%s" font-size="11">%s</text>' % (x - 6, y - 6, col, "%.3g" % v))
    for i, side in enumerate(sides):
        col = COLORS.get(side, "#2ca02c")
        out.append('<rect x="%d" y="%d" width="14" height="4" fill="%s"/><text x="%d" y="%d">%s</text>' % (
            m + i * 140, H - 18, col, m + i * 140 + 20, H - 12, esc(side)))
    out.append("</svg>")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---- the scale gate (tests/bench/gate.sh): limits calibrated Kueue's way ----
# Gated figures: the time, latency, memory and CPU ones get the mean of the calibration runs plus
# MARGIN; requests per TrainJob, by verb and resource, the largest of the runs plus REQ_SLACK
# (a few hundredths of a request per TrainJob: exact up to timing-driven Lease renewals).
GATED = [("drain_s", "total drain (s)"), ("js_p99", "create -> JobSet p99 (ms)"),
         ("rss_steady", "controller RSS steady (MB)"), ("hwm", "controller RSS peak (MB)"),
         ("cpu", "controller CPU (s)")]
MARGIN = 0.20
REQ_SLACK = 0.05


def gate_figures(r):
    """The gated figures of one scale.sh result: {key: value}, requests as 'req:VERB RESOURCE'."""
    s = summarize(r)
    out = {k: s.get(k) for k, _ in GATED}
    for k, v in s["ctl_req"].items():
        out["req:" + k] = v / s["n"]
    return s, out


def calibrate(a):
    """Limits from K >= 5 runs; a limit may only go up with --loosen WHY (kept in the file's notes)."""
    old = json.load(open(a.limits)) if os.path.exists(a.limits) else {}
    runs = []
    for p in a.results:
        s, f = gate_figures(json.load(open(p)))
        if not s["ok"]:
            print("calibrate: %s is not a correct run (Complete / one JobSet / orphans)" % p, file=sys.stderr)
            return 1
        runs.append({"figures": f, "n": s["n"], "create_rate": s["create_rate"], "load": None})
    for r, load in zip(runs, a.load.split(";")):  # each run's load average at its start
        r["load"] = load
    if len(runs) < 5:
        print("calibrate: %d runs; at least 5" % len(runs), file=sys.stderr)
        return 1
    keys = sorted({k for r in runs for k in r["figures"]})
    limits = {}
    for k in keys:
        xs = [r["figures"].get(k) or 0 for r in runs]
        mean = sum(xs) / len(xs)
        lim = max(xs) + REQ_SLACK if k.startswith("req:") else mean * (1 + MARGIN)
        limits[k] = {"limit": round(lim, 3), "mean": round(mean, 3), "min": round(min(xs), 3), "max": round(max(xs), 3)}
    for k, v in (old.get("overrides") or {}).items():  # set by hand, each with its note
        limits[k] = dict(limits.get(k, {}), limit=v["limit"], why=v["why"])
    raised = [k for k in keys if k in old.get("limits", {}) and limits[k]["limit"] > old["limits"][k]["limit"]]
    notes = list(old.get("notes") or [])
    if raised and not a.loosen:
        for k in raised:
            print("calibrate: %s would go from %s to %s: say why with --loosen" % (
                k, old["limits"][k]["limit"], limits[k]["limit"]), file=sys.stderr)
        return 1
    if raised:
        notes.append({"date": datetime.date.today().isoformat(), "loosened": raised, "why": a.loosen})
    out = {"scenario": old.get("scenario") or a.scenario, "margin": MARGIN, "req_slack": REQ_SLACK,
           "calibrated": datetime.date.today().isoformat(), "commit": a.commit, "limits": limits,
           "overrides": old.get("overrides") or {}, "notes": notes, "runs": runs}
    json.dump(out, open(a.limits, "w"), indent=1, sort_keys=True)
    print("calibrate: %d limits from %d runs written to %s" % (len(limits), len(runs), a.limits))
    return 0


def gate(a):
    """ok/FAIL lines, one per gated figure, for tests/lib.sh's kt_relay."""
    lim = json.load(open(a.limits))
    s, f = gate_figures(json.load(open(a.result)))
    n = s["n"]
    name = "scale-gate/"
    sc = lim.get("scenario") or {}
    if sc.get("n") not in (None, n):
        print("FAIL %sscenario: N=%d, the limits are for N=%s" % (name, n, sc.get("n")))
    for what, got in (("complete", s["complete"]), ("one-jobset", s["one_jobset"])):
        print(("ok %s%s %d/%d" if got == n else "FAIL %s%s: %d of %d") % (name, what, got, n))
    print(("ok %sno-orphans" if s["orphans"] == 0 else "FAIL %sno-orphans: %d orphaned JobSets") % (
        (name,) if s["orphans"] == 0 else (name, s["orphans"])))
    for k, v in sorted(f.items()):
        L = lim["limits"].get(k)
        label = dict(GATED).get(k, k[4:] + " per TrainJob" if k.startswith("req:") else k)
        if L is None:  # a request the calibration runs never sent
            if v <= REQ_SLACK:
                print("ok %s%s: %.3f (new, within the slack %.2f)" % (name, k, v, REQ_SLACK))
            else:
                print("FAIL %s%s: %.3f per TrainJob, a request the calibration runs never sent" % (name, k, v))
            continue
        how = L.get("why") or ("largest of the runs + %.2f" % REQ_SLACK if k.startswith("req:")
                               else "mean %.3f + %d%%" % (L["mean"], MARGIN * 100))
        if v is None:
            print("FAIL %s%s: not measured" % (name, k))
        elif v <= L["limit"]:
            print("ok %s%s: %.3f <= %.3f (%s)" % (name, k, v, L["limit"], label))
        else:
            print("FAIL %s%s: %.3f > %.3f (%s; %s)" % (name, k, v, L["limit"], label, how))
    print("scale-gate: %d TrainJobs created at %.1f/s, drained in %.1f s" % (n, s["create_rate"], s["drain_s"]),
          file=sys.stderr)
    return 0


def cpu_ticks():
    """{pid: (name, utime + stime in clock ticks)} of every process readable now."""
    out = {}
    for d in os.listdir("/proc"):
        st = proc_stat(d) if d.isdigit() else None
        if st:
            out[int(d)] = (st[0], int(st[1][11]) + int(st[1][12]))
    return out


def busy(seconds, floor):
    """Print the processes that used more than FLOOR percent of one CPU over SECONDS: what else ran
    beside a measurement (the gate's CPU figure is the controller's own, but a busy machine moves
    it). Information only."""
    t0 = cpu_ticks()
    time.sleep(seconds)
    t1 = cpu_ticks()
    hz = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    used = []
    for pid, (name, ticks) in t1.items():
        if pid == me or pid not in t0:
            continue
        pct = 100.0 * (ticks - t0[pid][1]) / hz / seconds
        if pct > floor:
            used.append((pct, name, pid))
    used.sort(reverse=True)
    print(", ".join("%s[%d] %.0f%%" % (n, p, c) for c, n, p in used[:6]) or "none above %g%% of a CPU" % floor)
    return 0


def main():
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest="cmd", required=True)
    g = sp.add_parser("gen")
    g.add_argument("n", type=int)
    g.add_argument("--namespaces", type=int, default=1)
    d = sp.add_parser("drive")
    for k in ("server", "ca", "cert", "key", "inputs", "out"):
        d.add_argument("--" + k, required=True)
    d.add_argument("--rate", type=float, default=20)
    d.add_argument("--conns", type=int, default=4)
    d.add_argument("--pid", type=int, action="append", help="the controller's process(es): stop when none runs")
    d.add_argument("--timeout", type=float, default=600)
    m = sp.add_parser("metrics")
    m.add_argument("before")
    m.add_argument("after")
    m.add_argument("own_before", nargs="?")
    m.add_argument("own_after", nargs="?")
    au = sp.add_parser("audit")
    au.add_argument("who")
    au.add_argument("logs", nargs="+")
    au.add_argument("--since", type=float, default=0)
    sw = sp.add_parser("status-writes")
    sw.add_argument("who")
    sw.add_argument("logs", nargs="+")
    sw.add_argument("--since", type=float, default=0)
    c = sp.add_parser("calibrate")
    c.add_argument("--limits", required=True)
    c.add_argument("--loosen", default="")
    c.add_argument("--commit", default="")
    c.add_argument("--load", default="")
    c.add_argument("--scenario", type=json.loads, default={})
    c.add_argument("results", nargs="+")
    gt = sp.add_parser("gate")
    gt.add_argument("limits")
    gt.add_argument("result")
    b = sp.add_parser("busy")
    b.add_argument("--seconds", type=float, default=1.0)
    b.add_argument("--floor", type=float, default=5.0)
    r = sp.add_parser("report")
    r.add_argument("--svg")
    r.add_argument("results", nargs="+")
    a = p.parse_args()
    if a.cmd == "gen":
        json.dump(gen(a.n, a.namespaces), sys.stdout)
        return 0
    if a.cmd == "drive":
        return drive(a)
    if a.cmd == "metrics":
        return metrics(a.before, a.after, a.own_before, a.own_after)
    if a.cmd == "audit":
        return audit(a.logs, a.who, a.since)
    if a.cmd == "status-writes":
        return status_writes(a.logs, a.who, a.since)
    if a.cmd == "calibrate":
        return calibrate(a)
    if a.cmd == "gate":
        return gate(a)
    if a.cmd == "busy":
        return busy(a.seconds, a.floor)
    return report(a)


if __name__ == "__main__":
    sys.exit(main())
