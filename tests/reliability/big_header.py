#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""big_header.py HOST PORT PATH CA HEADER_BYTES BODY_FILE OUT - one HTTPS POST with an
oversized header, read while it is still being written.

A server that refuses a header it will not buffer (kt-webhook through libmicrohttpd: 431)
answers and closes while the client is still sending; the close with unread input draws a
TCP reset. curl stops at its first failed send ("Send failure: Broken pipe") and never reads
the answer that arrived before the reset, so whether it saw 431 depended on timing. This
client writes and reads in one non-blocking loop and, once a send fails, keeps reading: the
kernel hands over the bytes queued before the reset, so the answer is always seen.
Prints the status code (000 when no answer came) and writes the answer's body to OUT.
"""
import select
import socket
import ssl
import sys
import time


def request(path, host, header_bytes, body):
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
        "Content-Type: application/json\r\n"
        f"X-Big: {'a' * header_bytes}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def exchange(sock, out, deadline):
    """Send OUT while reading; return every byte read before EOF or a reset."""
    got = bytearray()
    sending = True
    while time.monotonic() < deadline:
        want_w = [sock] if sending and out else []
        r, w, _ = select.select([sock], want_w, [], 0.2)
        if w:
            try:
                n = sock.send(out[:16384])
                out = out[n:]
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                pass
            except OSError:
                sending = False  # refused mid-send: what was answered is still queued
        if r or sock.pending() or not sending:
            try:
                chunk = sock.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                continue
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return bytes(got)


def main():
    host, port, path, ca, size, body_file, out_file = sys.argv[1:8]
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = False
    raw = socket.create_connection((host, int(port)), timeout=30)
    sock = ctx.wrap_socket(raw, server_hostname=host)
    sock.setblocking(False)
    with open(body_file, "rb") as f:
        body = f.read()
    got = exchange(sock, request(path, host, int(size), body), time.monotonic() + 30)
    head, _, rest = got.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    code = parts[1].decode() if len(parts) > 1 and parts[0].startswith(b"HTTP/") else "000"
    with open(out_file, "wb") as f:
        f.write(rest)
    print(code)


if __name__ == "__main__":
    main()
