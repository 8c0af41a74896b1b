#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""drain.py PORT HEALTH_PORT CA REVIEW_FILE PID - kt-webhook's drain on SIGTERM, seen by a client
holding keep-alive connections (docs/operating.md#shutdown).

Before the signal: two reviews on connection A and one on B are answered 200 without
`Connection: close` (keep-alive; the negative control); B then stays idle for IDLE_S (12 s:
past the 10 s first-request deadline, within the 120 s keep-alive idle limit, as the API
server's pooled connections do) and a second review on it is answered 200 (keepalive-idle);
A starts a third request whose headers the server has taken (it answered `100 Continue`) but
whose body is not sent. Then SIGTERM to PID, and once /readyz says 503 (the drain began):
  idle-closed        B, idle when the drain began, is closed by the server
  inflight-close     A's body is sent: its answer is 200 with `Connection: close`, then A closes
  fresh-served       a new connection C is still accepted and answered 200 with `Connection: close`
Prints `ok NAME` or `FAIL NAME: why` for each. The caller ends the drain (a second signal).
"""
import http.client
import os
import select
import signal
import socket
import ssl
import sys
import time

PATH = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
WAIT = 20.0  # seconds, for each bounded wait
IDLE_S = 12.0  # the idle time under test (kt-webhook closed idle connections at 10 s once)


class Conn:
    """One TLS connection read by hand, so that 100 Continue and the close are visible."""

    def __init__(self, port, ctx):
        raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        self.buf = b""

    def head(self, body, expect=False):
        h = (f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             f"Content-Length: {len(body)}\r\n")
        if expect:
            h += "Expect: 100-continue\r\n"
        self.s.sendall((h + "\r\n").encode())

    def read_until(self, pred):
        deadline = time.monotonic() + WAIT
        while not pred():
            if time.monotonic() > deadline:
                raise TimeoutError("no answer within %ds" % WAIT)
            try:
                chunk = self.s.recv(65536)
            except (ConnectionError, ssl.SSLError):
                chunk = b""
            if not chunk:
                return False
            self.buf += chunk
        return True

    def response(self):
        """(status, headers dict lower-case, body) of the next response; skips 100 Continue."""
        while True:
            if not self.read_until(lambda: b"\r\n\r\n" in self.buf):
                raise ConnectionError("closed before an answer")
            head, self.buf = self.buf.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            status = int(lines[0].split()[1])
            hdrs = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
            if status == 100:
                continue
            n = int(hdrs.get("content-length", "0"))
            self.read_until(lambda: len(self.buf) >= n)
            body, self.buf = self.buf[:n], self.buf[n:]
            return status, hdrs, body

    def continued(self):
        return self.read_until(lambda: b"100 Continue\r\n\r\n" in self.buf)

    def closed(self):
        """True when the server closes the connection within WAIT (EOF or reset)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.s], [], [], 0.2)
            if not r and self.s.pending() == 0:
                continue
            try:
                if not self.s.recv(65536):
                    return True
            except (ConnectionError, ssl.SSLError, OSError):
                return True
        return False


def review(c, body):
    c.head(body)
    c.s.sendall(body)
    return c.response()


def readyz(port):
    try:
        h = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        h.request("GET", "/readyz")
        r = h.getresponse()
        text = r.read().decode(errors="replace")
        h.close()
        return r.status, text
    except OSError as e:
        return 0, str(e)


def report(name, good, why):
    print(("ok %s" % name) if good else ("FAIL %s: %s" % (name, why)), flush=True)


def main():
    port, hport, ca, review_file, pid = sys.argv[1:6]
    body = open(review_file, "rb").read()
    ctx = ssl.create_default_context(cafile=ca)
    a, b = Conn(int(port), ctx), Conn(int(port), ctx)
    before = [review(a, body), review(a, body), review(b, body)]
    good = all(s == 200 and h.get("connection", "").lower() != "close" for s, h, _ in before)
    report("drain-keepalive-before", good, "answers before the signal: %s" %
           [(s, h.get("connection")) for s, h, _ in before])
    time.sleep(IDLE_S)  # the behaviour under test: a keep-alive connection left idle
    try:
        s, h, _ = review(b, body)
        good, why = s == 200, "status %s after %.0f s idle" % (s, IDLE_S)
    except (ConnectionError, TimeoutError, ssl.SSLError, OSError) as e:
        good, why = False, "closed after %.0f s idle: %s" % (IDLE_S, e)
    report("drain-keepalive-idle", good, why)
    a.head(body, expect=True)
    if not a.continued():
        report("drain-setup", False, "no 100 Continue for the request held open")
        return
    os.kill(int(pid), signal.SIGTERM)
    deadline = time.monotonic() + WAIT
    status, text = readyz(int(hport))
    while status != 503 and time.monotonic() < deadline:
        time.sleep(0.05)
        status, text = readyz(int(hport))
    report("drain-readyz-503", status == 503 and "shutting down" in text,
           "/readyz after SIGTERM: %s %s" % (status, text.strip()))
    report("drain-idle-closed", b.closed(), "an idle keep-alive connection stayed open")
    a.s.sendall(body)
    try:
        s, h, _ = a.response()
        good = s == 200 and h.get("connection", "").lower() == "close"
        why = "status %s, Connection: %s" % (s, h.get("connection"))
    except (ConnectionError, TimeoutError, ssl.SSLError) as e:
        good, why = False, "the request in flight got no answer: %s" % e
    report("drain-inflight-close", good and a.closed(), why + " (or the connection stayed open)")
    try:
        c = Conn(int(port), ctx)
        s, h, _ = review(c, body)
        good = s == 200 and h.get("connection", "").lower() == "close"
        why = "status %s, Connection: %s" % (s, h.get("connection"))
    except (ConnectionError, TimeoutError, ssl.SSLError, OSError) as e:
        good, why = False, "a new connection during the drain failed: %s" % e
    report("drain-fresh-served", good, why)


if __name__ == "__main__":
    main()
