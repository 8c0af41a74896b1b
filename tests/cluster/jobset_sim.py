#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/cluster/jobset_sim.py - the simulated chain's JobSet statuses without KWOK (stdlib only).

`up.sh --sim` with KT_SIM_ENGINE=jobsim runs this instead of KWOK's JobSet Stages
(tests/cluster/kwok/jobset-stages.yaml): the same four steps, written the same way, from the
same markers, for chains of many thousand JobSets. Why it exists (docs/benchmarks.md, "Simulated
chain"): KWOK v0.8.0 watches a custom resource from resourceVersion 0 every time its watch ends,
so each re-watch replays every JobSet there is; at 10,000 TrainJobs its watches ended about every
30 s, each shard replayed all of them, and the KWOK shards took more CPU than the API server
while the JobSets' steps fell minutes behind. This keeps one watch that resumes from the last
resourceVersion (bookmarks on; a new LIST only on 410 Gone) and a timer heap.

Each JobSet not being deleted goes through, one merge PATCH of its status subresource each:
  created  (not suspended, no replicatedJobsStatus; after --step-ms) every count 0
  active   (not suspended, not terminal, active 0; --step-ms) active = replicas
  ready    (not terminal, active > 0, ready 0; --step-ms) ready = active = replicas
  complete (not terminal, ready > 0; its run time) Completed=True AllJobsCompleted, terminalState
           Completed, succeeded = replicas; or, when a container of a replicatedJob sets
           KT_SIM_EXIT_CODE, Failed=True FailedJobs, terminalState Failed, that one's failed = 1.
A JobSet's run time is its annotation kt.kubeflow.org/sim-run or else a container's KT_SIM_RUN (a
Go duration: "90s", "1m30s"), otherwise a random time between --run-ms and --jitter-ms (KWOK's
delay and jitter). The state is read from the object every time (level-triggered, as KWOK's
selectors are); --conns worker threads send the PATCHes over their own keep-alive connections.
GET /healthz on 127.0.0.1:--port answers 200 once the first watch is open. SIGTERM prints what
was sent and exits.
"""
import argparse
import heapq
import http.client
import http.server
import json
import random
import re
import signal
import ssl
import sys
import threading
import time
import urllib.parse

API = "/apis/jobset.x-k8s.io/v1alpha2"
RUN_ANNOTATION = "kt.kubeflow.org/sim-run"
DUR = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(s):
    """Seconds of a Go duration ("90s", "1m30s", "500ms"); None when s is not one."""
    s = (s or "").strip()
    if not s or DUR.sub("", s) != "":
        return None
    return sum(float(n) * UNIT[u] for n, u in DUR.findall(s))


def containers(js):
    for rj in (js.get("spec") or {}).get("replicatedJobs") or []:
        spec = ((((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {})
        for c in spec.get("containers") or []:
            yield rj, c


def env_value(js, name):
    for _, c in containers(js):
        for e in c.get("env") or []:
            if e.get("name") == name:
                return e.get("value", "")
    return None


def failing_jobs(js):
    """Names of the replicatedJobs a container of which sets KT_SIM_EXIT_CODE."""
    return {rj.get("name") for rj, c in containers(js)
            if any(e.get("name") == "KT_SIM_EXIT_CODE" for e in c.get("env") or [])}


def step_of(js):
    """The step this JobSet's current state calls for, or None."""
    meta, spec, st = js.get("metadata") or {}, js.get("spec") or {}, js.get("status") or {}
    if meta.get("deletionTimestamp"):
        return None
    suspended = spec.get("suspend") is True
    rjs = st.get("replicatedJobsStatus")
    if rjs is None:
        return None if suspended else "created"
    if st.get("terminalState"):
        return None
    active = sum(int(r.get("active") or 0) for r in rjs)
    ready = sum(int(r.get("ready") or 0) for r in rjs)
    if active == 0:
        return None if suspended else "active"
    if ready == 0:
        return "ready"
    return "complete"


def delay_of(js, step, step_s, run_s, jitter_s, rng):
    """Seconds before STEP: step_s, or for the last step the JobSet's own run time, else a random
    time between run_s and jitter_s (KWOK's delay and jitter)."""
    if step != "complete":
        return step_s
    own = go_duration((js.get("metadata") or {}).get("annotations", {}).get(RUN_ANNOTATION))
    if own is None:
        own = go_duration(env_value(js, "KT_SIM_RUN"))
    return own if own is not None else rng.uniform(run_s, jitter_s)


def now_text():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status_of(js, step):
    """The merge patch's status for STEP."""
    bad = failing_jobs(js) if step == "complete" else set()
    out = []
    for rj in (js.get("spec") or {}).get("replicatedJobs") or []:
        n = rj.get("replicas") or 1
        c = {"name": rj.get("name"), "ready": 0, "active": 0, "succeeded": 0, "failed": 0, "suspended": 0}
        if step == "active":
            c["active"] = n
        elif step == "ready":
            c["ready"] = c["active"] = n
        elif step == "complete" and bad:
            c["failed"] = 1 if rj.get("name") in bad else 0
        elif step == "complete":
            c["succeeded"] = n
        out.append(c)
    st = {"replicatedJobsStatus": out}
    if step == "complete":
        kind, reason, msg = (("Failed", "FailedJobs", "jobset failed due to one or more job failures") if bad
                             else ("Completed", "AllJobsCompleted", "jobset completed successfully"))
        st["terminalState"] = kind
        st["conditions"] = [{"type": kind, "status": "True", "reason": reason, "message": msg,
                             "lastTransitionTime": now_text()}]
    return st


class Sim:
    def __init__(self, a):
        u = urllib.parse.urlparse(a.server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=a.ca)
        self.ctx.load_cert_chain(a.cert, a.key)
        self.step_s, self.run_s = a.step_ms / 1000.0, a.run_ms / 1000.0
        self.jitter_s = max(a.jitter_ms / 1000.0, self.run_s)
        self.objs = {}  # uid -> latest JobSet
        self.due = {}  # uid -> (step, when) scheduled
        self.heap = []
        self.cv = threading.Condition()
        self.ready = threading.Event()
        self.sent, self.failed, self.seq = 0, 0, 0
        self.rng = random.Random(1)

    def conn(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def delay(self, js, step):
        return delay_of(js, step, self.step_s, self.run_s, self.jitter_s, self.rng)

    def schedule(self, uid, step, delay_s):
        """STEP for UID in DELAY_S seconds, replacing what it had (caller holds cv)."""
        when = time.monotonic() + delay_s
        self.due[uid] = (step, when)
        self.seq += 1
        heapq.heappush(self.heap, (when, self.seq, uid, step))
        self.cv.notify()

    def observe(self, js):
        """Keep the newest JobSet and schedule the step it calls for (caller holds cv)."""
        meta = js.get("metadata") or {}
        uid = meta.get("uid")
        old = self.objs.get(uid)
        if old is not None and int(old["metadata"].get("resourceVersion") or 0) > int(meta.get("resourceVersion") or 0):
            return  # an event older than a PATCH response already seen
        self.objs[uid] = js
        step = step_of(js)
        have = self.due.get(uid)
        if step is None:
            self.due.pop(uid, None)
        elif have is None or have[0] != step:
            self.schedule(uid, step, self.delay(js, step))

    def forget(self, js):
        uid = (js.get("metadata") or {}).get("uid")
        self.objs.pop(uid, None)
        self.due.pop(uid, None)

    # ---- the watch: LIST once, then resume from the last resourceVersion ----
    def list_all(self):
        rv, cont = None, ""
        with self.cv:
            self.objs.clear()
            self.due.clear()
        while True:
            c = self.conn()
            c.request("GET", "%s/jobsets?limit=500%s" % (API, "&continue=" + urllib.parse.quote(cont) if cont else ""))
            r = c.getresponse()
            body = r.read()
            c.close()
            if r.status != 200:
                raise RuntimeError("LIST jobsets: %d %s" % (r.status, body[:200]))
            page = json.loads(body)
            with self.cv:
                for js in page.get("items") or []:
                    self.observe(js)
            rv = rv or page["metadata"]["resourceVersion"]  # the first page's: the list's snapshot
            cont = page["metadata"].get("continue") or ""
            if not cont:
                return rv

    def watch(self):
        rv = self.list_all()
        while True:
            c = self.conn(timeout=None)
            c.request("GET", "%s/jobsets?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=600"
                      % (API, rv))
            r = c.getresponse()
            if r.status == 410:
                c.close()
                rv = self.list_all()
                continue
            if r.status != 200:
                raise RuntimeError("WATCH jobsets: %d %s" % (r.status, r.read()[:200]))
            self.ready.set()
            gone = False
            while True:
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                obj, kind = ev.get("object") or {}, ev.get("type")
                if kind == "ERROR":
                    gone = obj.get("code") == 410
                    break
                rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                with self.cv:
                    if kind == "DELETED":
                        self.forget(obj)
                    elif kind in ("ADDED", "MODIFIED"):
                        self.observe(obj)
            c.close()
            if gone:
                rv = self.list_all()

    # ---- the workers: one keep-alive connection each ----
    def next_due(self):
        with self.cv:
            while True:
                while not self.heap:
                    self.cv.wait()
                when, _, uid, step = self.heap[0]
                left = when - time.monotonic()
                if left > 0:
                    self.cv.wait(timeout=left)
                    continue
                heapq.heappop(self.heap)
                js = self.objs.get(uid)
                if self.due.get(uid, (None,))[0] != step or js is None or step_of(js) != step:
                    continue  # replaced, or the object moved on
                del self.due[uid]
                return uid, step, js

    def work(self):
        c = self.conn()
        while True:
            uid, step, js = self.next_due()
            meta = js["metadata"]
            body = json.dumps({"status": status_of(js, step)})
            path = "%s/namespaces/%s/jobsets/%s/status" % (API, meta["namespace"], meta["name"])
            try:
                c.request("PATCH", path, body=body, headers={"Content-Type": "application/merge-patch+json"})
                r = c.getresponse()
                resp = r.read()
            except (OSError, http.client.HTTPException):
                c.close()
                c = self.conn()
                with self.cv:
                    self.retry(js, step)
                continue
            try:
                got = json.loads(resp) if r.status == 200 else None
            except ValueError:  # an answer cut short: the watch brings the object anyway
                got = None
            with self.cv:
                if r.status == 200:
                    self.sent += 1
                    if isinstance(got, dict) and got.get("metadata"):
                        self.observe(got)
                elif r.status == 404:
                    self.forget(js)
                else:
                    self.failed += 1
                    print("jobset_sim: PATCH %s (%s): %d %s" % (path, step, r.status, resp[:200]),
                          file=sys.stderr, flush=True)
                    self.retry(js, step)

    def retry(self, js, step):
        """Try STEP again in a second unless the object's next event scheduled another (caller
        holds cv)."""
        uid = js["metadata"]["uid"]
        if uid in self.objs and uid not in self.due:
            self.schedule(uid, step, 1.0)


def health(sim, port):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            code = 200 if self.path == "/healthz" and sim.ready.is_set() else 503
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--port", type=int, required=True, help="GET /healthz on 127.0.0.1")
    p.add_argument("--step-ms", type=int, default=100)
    p.add_argument("--run-ms", type=int, default=3000)
    p.add_argument("--jitter-ms", type=int, default=0)
    p.add_argument("--conns", type=int, default=4)
    a = p.parse_args()
    sim = Sim(a)

    def bye(*_):
        print("jobset_sim: %d status PATCHes sent, %d refused" % (sim.sent, sim.failed), file=sys.stderr, flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, bye)
    health(sim, a.port)
    for _ in range(a.conns):
        threading.Thread(target=sim.work, daemon=True).start()
    while True:  # the watch; a failure (the API server restarting, a refused LIST) starts over
        try:
            sim.watch()
        except (OSError, RuntimeError, ValueError, http.client.HTTPException) as e:
            print("jobset_sim: watch: %s; listing again in 1 s" % e, file=sys.stderr, flush=True)
            time.sleep(1)


if __name__ == "__main__":
    main()
