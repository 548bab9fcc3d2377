#!/usr/bin/env python3
"""A registry that wants a bearer token, as Harbor's, GitLab's and Docker Hub's do.

usage: tokenserver.py DIR PORTFILE USER:PASSWORD

Serves GET/HEAD of DIR's files under /v2/ only with "Authorization: Bearer T"; without it, 401
and "WWW-Authenticate: Bearer realm=.../token,service=...,scope=...". GET /token hands out T
to basic credentials USER:PASSWORD (401 to anyone else). The port is written to PORTFILE.
"""
import base64
import os
import secrets
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORTFILE, CREDS = sys.argv[1:4]
TOKEN = secrets.token_hex(16)


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
            ok = auth == "Basic " + base64.b64encode(CREDS.encode()).decode()
            return self.answer(200, b'{"token": "%s"}' % TOKEN.encode()) if ok else self.answer(401)
        if auth != "Bearer " + TOKEN:
            realm = "http://127.0.0.1:%d/token" % self.server.server_address[1]
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
