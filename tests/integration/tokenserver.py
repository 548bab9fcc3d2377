#!/usr/bin/env python3
"""A registry that wants a bearer token, as Harbor's, GitLab's and Docker Hub's do.

usage: tokenserver.py DIR PORTFILE USER:PASSWORD [REALM [LOG]]

Serves GET/HEAD of DIR's files under /v2/ only with "Authorization: Bearer T"; without it, 401
and "WWW-Authenticate: Bearer realm=REALM,service=...,scope=...", REALM being this server's own
/token unless given (another instance's, on another port: the token service of the hostile
case). GET /token hands out T to basic credentials USER:PASSWORD (401 to anyone else); T
depends on USER:PASSWORD alone, so two instances agree. The port is written to PORTFILE; each
/token request is appended to LOG as "token auth=basic" (credentials came) or "token auth=none".
"""
import base64
import hashlib
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORTFILE, CREDS = sys.argv[1:4]
REALM = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
LOG = sys.argv[5] if len(sys.argv) > 5 else None
TOKEN = hashlib.sha256(b"token " + CREDS.encode()).hexdigest()[:32]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        if self.path.startswith("/token"):
            if LOG:
                with open(LOG, "a") as f:
                    f.write("token auth=%s\n" % ("basic" if auth.startswith("Basic ") else "none"))
            ok = auth == "Basic " + base64.b64encode(CREDS.encode()).decode()
            return self.answer(200, b'{"token": "%s"}' % TOKEN.encode()) if ok else self.answer(401)
        if auth != "Bearer " + TOKEN:
            realm = REALM or "http://127.0.0.1:%d/token" % self.server.server_address[1]
            return self.answer(401, headers=[("WWW-Authenticate", 'Bearer realm="%s",'
                               'service="mkimage-test",scope="repository:mkimage/layers:pull"' % realm)])
        path = os.path.join(ROOT, self.path.split("?")[0].lstrip("/"))
        if ".." in self.path or not os.path.isfile(path):
            return self.answer(404)
        with open(path, "rb") as f:
            self.answer(200, f.read())

    do_HEAD = do_GET


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
