#!/usr/bin/env python3
"""A small HTTP/1.1 file server for tests that injects faults on request.

usage: faultserver.py DIR PORTFILE RULES LOG [PORT]

Serves DIR on 127.0.0.1 (PORT, default a free one; written to PORTFILE) with keep-alive, Range requests (206),
Last-Modified and If-Modified-Since (304). RULES is re-read on every request; each line is

    GLOB ACTION [ARG] [COUNT]

GLOB matches the request path (fnmatch). ACTION is one of
    status CODE     answer with HTTP CODE and an empty body
    reset BYTES     send the headers and BYTES bytes of the file, then reset the connection
    stall BYTES     send the headers and BYTES bytes, then send nothing more
    norange -       ignore Range headers (always send the whole file)
    delay MS        wait MS milliseconds, then serve normally
    file NAME       serve DIR/NAME instead (an older copy: a mirror mid-sync)
COUNT is how many matching requests get the fault (default: all), then files are served normally.
Counts start again whenever RULES changes.
Every request is appended to LOG as "METHOD PATH range=R status=S conn=PORT". Requests with an
absolute URI (as sent to a proxy) are served from DIR too, so the server doubles as a proxy.
"""
import email.utils
import fnmatch
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORTFILE, RULES, LOG = sys.argv[1:5]
lock = threading.Lock()
used = {}
last_rules = [None]


def rules():
    try:
        with open(RULES) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    if text != last_rules[0]:
        last_rules[0] = text
        used.clear()
    return [l.split() for l in text.splitlines() if l.strip() and not l.startswith("#")]


def fault_for(path):
    """The first rule matching path that still has uses left; counts the use."""
    with lock:
        for i, r in enumerate(rules()):
            if not fnmatch.fnmatch(path, r[0]):
                continue
            key = (i, " ".join(r))
            count = int(r[3]) if len(r) > 3 and r[3] != "*" else None
            if count is not None and used.get(key, 0) >= count:
                continue
            used[key] = used.get(key, 0) + 1
            return r[1], (r[2] if len(r) > 2 else None)
    return None, None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self, status):
        with lock, open(LOG, "a") as f:
            f.write("%s %s range=%s status=%s conn=%d\n" % (
                self.command, self.path, self.headers.get("Range", "-"), status,
                self.client_address[1]))

    def empty(self, code):
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.note(code)

    def do_HEAD(self):
        self.do_GET(head=True)

    def do_GET(self, head=False):
        path = self.path.split("?", 1)[0]
        if path.startswith("http://"):  # a proxy request: absolute URI
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
        path = urllib.parse.unquote(path)
        action, arg = fault_for(path)
        if action == "status":
            return self.empty(int(arg))
        if action == "delay":
            time.sleep(int(arg) / 1000.0)
        fs = os.path.normpath(os.path.join(ROOT, (arg if action == "file" else path).lstrip("/")))
        if not fs.startswith(os.path.abspath(ROOT)) or not os.path.isfile(fs):
            return self.empty(404)
        st = os.stat(fs)
        ims = self.headers.get("If-Modified-Since")
        if ims and action in (None, "file"):
            try:
                if int(st.st_mtime) <= email.utils.parsedate_to_datetime(ims).timestamp():
                    return self.empty(304)
            except (TypeError, ValueError):
                pass
        start, size = 0, st.st_size
        rng = self.headers.get("Range")
        if rng and action != "norange" and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= size:
                return self.empty(416)
        code = 206 if start else 200
        self.send_response(code)
        self.send_header("Content-Length", str(size - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
        self.end_headers()
        self.note(code if action not in ("reset", "stall") else "%d-%s" % (code, action))
        if head:
            return
        with open(fs, "rb") as f:
            f.seek(start)
            if action in ("reset", "stall"):
                self.wfile.write(f.read(int(arg)))
                self.wfile.flush()
                if action == "stall":
                    time.sleep(600)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            while True:
                chunk = f.read(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the default 5 drops parallel connects (1 s SYN retry)


srv = Server(("127.0.0.1", int(sys.argv[5]) if len(sys.argv) > 5 else 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
