#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""webhook_apiserver.py SERVER CA CERT KEY N RATE CONNS TAG [NAME:PID[:PORT] ...] - N suspended
TrainJob creates (namespace default, runtime torch-distributed) at RATE/s over CONNS keep-alive
client connections to the API server, for tests/bench/webhook_apiserver.sh
(docs/benchmarks.md#the-webhook-as-the-api-server-sees-it). Prints, for this round:
  - the client's create latency (p50/p90/p99) and rate;
  - per admission webhook, the API server's apiserver_admission_webhook_admission_duration_seconds
    for CREATE, after - before: count, p50/p99 (bucket-interpolated, buckets 5, 25, 100 ms...),
    mean (from _sum) and the share within 5 ms;
  - per NAME:PID, the process's CPU time and its threads' wait for a CPU after being woken
    (/proc/PID/task/*/schedstat: run, run-queue wait, timeslices), after - before;
  - per NAME:PID:PORT, how many TCP connections to PORT were seen established during the round
    (`ss`, polled every 0.1 s): 1 when every call reused one keep-alive connection.
Asserts nothing; exits 1 only when a create fails."""
import glob
import http.client
import json
import math
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
HIST = "apiserver_admission_webhook_admission_duration_seconds"


def scrape(conn):
    c = conn()
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m and m.group(1).startswith(HIST):
            out[(m.group(1), tuple(sorted(LABEL.findall(m.group(3) or ""))))] = float(m.group(4))
    return out


def quantile(bk, q):
    total = bk[-1][1]
    rank, pl, pc = q * total, 0.0, 0.0
    for le, c in bk:
        if c >= rank:
            return pl if math.isinf(le) else pl + (le - pl) * ((rank - pc) / (c - pc) if c > pc else 0)
        pl, pc = le, c
    return pl


def schedstat(pid):
    r = w = n = 0
    for f in glob.glob("/proc/%s/task/*/schedstat" % pid):
        try:
            a, b, c = map(int, open(f).read().split())
        except (OSError, ValueError):
            continue
        r, w, n = r + a, w + b, n + c
    return r, w, n


def main():
    server, ca, cert, key, n, rate, conns, tag = sys.argv[1:9]
    n, rate, conns = int(n), float(rate), int(conns)
    procs = [p.split(":") for p in sys.argv[9:]]
    u = urllib.parse.urlparse(server)
    ctx = ssl.create_default_context(cafile=ca)
    ctx.load_cert_chain(cert, key)

    def conn():
        return http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=60)

    ports = {p[2]: set() for p in procs if len(p) > 2}
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            out = subprocess.run(["ss", "-tanH", "state", "established"], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 4 and f[-2].rsplit(":", 1)[-1] in ports:
                    ports[f[-2].rsplit(":", 1)[-1]].add(f[-1])
            stop.wait(0.1)

    lat, errs, lock, nxt = [], [], threading.Lock(), [0]
    t0 = time.perf_counter()

    def worker():
        c = conn()
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= n:
                break
            body = json.dumps({
                "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "%s-%d" % (tag, i), "namespace": "default"},
                "spec": {"runtimeRef": {"name": "torch-distributed"}, "suspend": True,
                         "trainer": {"numNodes": 1}}})
            d = t0 + i / rate - time.perf_counter()
            if d > 0:
                time.sleep(d)
            a = time.perf_counter()
            c.request("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs",
                      body, {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            with lock:
                lat.append(time.perf_counter() - a)
                if r.status != 201:
                    errs.append("%s: HTTP %d %s" % (tag, r.status, data[:300]))
        c.close()

    pt = threading.Thread(target=poll)
    pt.start()
    s0 = {p[0]: schedstat(p[1]) for p in procs}
    before = scrape(conn)
    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker) for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    after = scrape(conn)
    s1 = {p[0]: schedstat(p[1]) for p in procs}
    stop.set()
    pt.join()
    lat.sort()
    pc = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
    print("round %s: %d creates over %d connection(s) at %.1f/s; create p50/p90/p99 %.1f/%.1f/%.1f ms"
          % (tag, len(lat), conns, len(lat) / wall, pc(.5), pc(.9), pc(.99)))
    hooks = {}
    for (name, labels), v in after.items():
        lab = dict(labels)
        if lab.get("operation") != "CREATE" or "trainer.kubeflow.org" not in lab.get("name", ""):
            continue
        h = hooks.setdefault(lab["name"], {"b": {}, "sum": 0.0})
        d = v - before.get((name, labels), 0.0)
        if name == HIST + "_bucket":
            le = float("inf") if lab["le"] == "+Inf" else float(lab["le"])
            h["b"][le] = h["b"].get(le, 0) + d
        elif name == HIST + "_sum":
            h["sum"] += d
    for name in sorted(hooks):
        bk = sorted(hooks[name]["b"].items())
        if not bk or bk[-1][1] <= 0:
            continue
        total = bk[-1][1]
        print("  webhook %-46s n=%d  p50 %5.1f ms  p99 %6.1f ms  mean %5.1f ms  within 5 ms %3.0f%%"
              % (name, total, quantile(bk, .5) * 1e3, quantile(bk, .99) * 1e3,
                 hooks[name]["sum"] / total * 1e3, 100 * dict(bk).get(0.005, 0) / total))
    for p in procs:
        r, w, k = (s1[p[0]][i] - s0[p[0]][i] for i in range(3))
        extra = ""
        if len(p) > 2:
            extra = "; connections to :%s seen: %d" % (p[2], len(ports[p[2]]))
        print("  process %-10s CPU %7.1f ms; wait for a CPU after wake-ups %7.1f ms over %d "
              "(%.2f ms each)%s" % (p[0], r / 1e6, w / 1e6, k, w / 1e6 / max(k, 1), extra))
    for e in errs[:3]:
        print("  create failed: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
