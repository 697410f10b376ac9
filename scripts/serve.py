#!/usr/bin/env python3
"""Serve the attnlab page, and nothing else.

    python3 scripts/serve.py [--port 8080] [--host 127.0.0.1] [--data DIR] [--no-isolation]

What it serves:
  /                      index.html
  /index.html, /web/...  the app (web/node_modules and web/test are not part of it)
  /data/manifest.json    which course files DIR holds, e.g. {"files": ["wiki.txt", ...]}; empty without --data
  /data/<name>           with --data: wiki.txt, birth_places_train.tsv, birth_dev.tsv, birth_test.tsv,
                         birth_test_inputs.tsv (the course's test questions, without answers)
  /web/vendor/katex/...  KaTeX's module, stylesheet and woff2 fonts from the npm package
                         (web/node_modules/katex/dist, installed by scripts/setup.sh): the page's
                         formulas, served from this origin so nothing is fetched from elsewhere
Everything else is 404, including any path that climbs out of those folders ('..', encoded or not,
or a symlink pointing elsewhere). Only GET and HEAD are answered (any other method, known or not, gets
405 with Allow). Every response, errors included, carries a Content-Security-Policy that allows the
app's own files, WebAssembly compilation and nothing remote, and the headers that make the page
cross-origin isolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy:
require-corp; every file is same-origin, so all of them load under it), which lets the page's
engines share memory (SharedArrayBuffer) when a run trains on several; --no-isolation leaves COEP
out, as a static host that cannot set headers would (the page then copies between its engines). A
request whose Host header is not this server (localhost, an IP address, or the --host name, with its
port) gets 421, so a web page on another site cannot reach it by DNS rebinding; a connection idle
for --timeout seconds is closed, and so is one whose request line and headers take more than
--header-timeout seconds in all from their first byte (a client sending a header line every few
seconds would otherwise hold a thread for ever).
It listens on 127.0.0.1 unless --host says otherwise (and then it warns: the data folder is readable
by anyone who can reach that address).
"""

import argparse
import http.server
import ipaddress
import json
import os
import posixpath
import re
import socket
import socketserver
import sys
import threading
import urllib.parse

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The course files the page knows how to use; --data serves these names and no others.
DATA_FILES = ("wiki.txt", "birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv", "birth_test_inputs.tsv")

# npm packages the page uses at run time, served from web/node_modules under /web/vendor/<name>/:
# only their built files of these kinds (the rest of node_modules stays unserved).
VENDOR = {"katex": ("katex/dist", (".mjs", ".css", ".woff2"))}

# Folders under web/ that belong to development, not to the app.
WEB_EXCLUDED = ("node_modules", "test")

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'wasm-unsafe-eval'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "worker-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".tsv": "text/tab-separated-values; charset=utf-8",
    ".ts": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}


def host_allowed(header, listen_host, port):
    """Whether a request's Host header names this server, with its port (none only for port 80):
    localhost, a loopback address, or the --host it listens on (any IP address when that is a
    wildcard; DNS rebinding needs a name, which is then still refused)."""
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(?::([0-9]+))?", header or "")
    if not m:
        return False
    host, p = m.group(1).lower(), m.group(2)
    if (p or "80") != str(port):
        return False
    if host in ("localhost", listen_host.lower()):
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    if ip.is_loopback or listen_host in ("0.0.0.0", "::", ""):
        return True
    try:
        return ip == ipaddress.ip_address(listen_host.strip("[]"))
    except ValueError:
        return False


def inside(path, folder):
    """True when `path` (already resolved) is `folder` itself or lies below it."""
    return path == folder or path.startswith(folder + os.sep)


class Site:
    """Maps a request path to a file on disk, or None (→ 404)."""

    def __init__(self, root, data_dir):
        self.root = os.path.realpath(root)
        self.web = os.path.join(self.root, "web")
        self.data = os.path.realpath(data_dir) if data_dir else None

    def manifest(self):
        # Without --data the list is empty (not a 404, which browsers log as an error). Only files
        # that are served: a symlink to a file outside the folder is left out, as it would be 404.
        present = [f for f in DATA_FILES if self.data and self.data_file(f)]
        return json.dumps({"files": present}).encode()

    def resolve(self, raw_path):
        """Returns ("file", path), ("bytes", content) or None."""
        path = urllib.parse.urlsplit(raw_path).path
        path = urllib.parse.unquote(path, errors="strict")
        if "\x00" in path or "\\" in path or not path.startswith("/"):
            return None
        parts = path.split("/")[1:]
        if any(p in ("..", ".") or p.startswith(".") for p in parts if p):
            return None
        if path in ("/", "/index.html"):
            return ("file", os.path.join(self.root, "index.html"))
        if parts[0] == "web" and len(parts) > 3 and parts[1] == "vendor" and parts[2] in VENDOR:
            sub, kinds = VENDOR[parts[2]]
            base = os.path.realpath(os.path.join(self.web, "node_modules", sub))
            full = os.path.realpath(os.path.join(base, *parts[3:]))
            if inside(full, base) and full.endswith(kinds) and os.path.isfile(full):
                return ("file", full)
            return None
        if parts[0] == "web" and len(parts) > 1:
            if parts[1] in WEB_EXCLUDED:
                return None
            full = os.path.realpath(os.path.join(self.web, *parts[1:]))
            if not inside(full, self.web) or any(inside(full, os.path.join(self.web, x)) for x in WEB_EXCLUDED):
                return None
            return ("file", full) if os.path.isfile(full) else None
        if parts[0] == "data" and len(parts) == 2:
            if parts[1] == "manifest.json":
                return ("bytes", self.manifest())
            if self.data is not None and parts[1] in DATA_FILES:
                full = self.data_file(parts[1])
                if full:
                    return ("file", full)
        return None

    def data_file(self, name):
        """The real path of data file `name` when it is a file inside the data folder, else None."""
        full = os.path.realpath(os.path.join(self.data, name))
        return full if inside(full, self.data) and os.path.isfile(full) else None


def make_handler(site, quiet, listen_host="127.0.0.1", timeout=20, isolate=True, header_timeout=10):
    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "attnlab"
        sys_version = ""
        # StreamRequestHandler sets it on the connection: a silent client is dropped.
        timeout = None

        def setup(self):
            self.timeout = timeout
            super().setup()

        def handle_one_request(self):
            # The header deadline runs from the request's first byte (an idle keep-alive connection
            # is --timeout's): past it the connection is answered 408 and shut, which ends the read.
            try:
                if not self.rfile.peek(1):
                    self.close_connection = True
                    return
            except OSError:
                self.close_connection = True
                return
            self.headers_done = threading.Event()
            timer = threading.Timer(header_timeout, self.headers_too_slow)
            timer.daemon = True
            timer.start()
            try:
                super().handle_one_request()
            finally:
                timer.cancel()

        def headers_too_slow(self):
            if self.headers_done.is_set():
                return
            body = b"408 the request's headers took too long\n"
            try:
                self.connection.sendall(
                    b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                    + b"Content-Security-Policy: " + CSP.encode() + b"\r\n"
                    + b"Content-Type: text/plain; charset=utf-8\r\n"
                    + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def headers_common(self, ctype, length):
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(length))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            if isolate:
                self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()

        def refuse(self, code, message):
            body = f"{code} {message}\n".encode()
            self.send_response(code)
            if code == 405:
                self.send_header("Allow", "GET, HEAD")
            if code >= 400 and code != 404 and code != 405:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.headers_common("text/plain; charset=utf-8", len(body))
            if self.command != "HEAD":
                self.wfile.write(body)

        def send_error(self, code, message=None, explain=None):
            # http.server's own errors (a malformed request line, a URI or header too long, an
            # unsupported version, a method without a do_ handler) in our form: with the CSP, and
            # 405 + Allow for any method but GET and HEAD.
            if code == 501:
                code, message = 405, "method not allowed"
            # A request line it could not parse leaves HTTP/0.9, which has no status line or
            # headers: answer in HTTP/1.0 so the status and the CSP are sent.
            if self.request_version == "HTTP/0.9":
                self.request_version = "HTTP/1.0"
            try:
                short = self.responses[code][0]
            except KeyError:
                short = "error"
            self.refuse(code, message or short)

        def parse_request(self):
            ok = super().parse_request()
            self.headers_done.set()
            if not ok:
                return False
            port = self.server.server_address[1]
            if not host_allowed(self.headers.get("Host", ""), listen_host, port):
                self.refuse(421, "misdirected request: the Host header does not name this server")
                return False
            return True

        def answer(self, with_body):
            try:
                found = site.resolve(self.path)
            except (UnicodeDecodeError, ValueError):
                found = None
            if found is None:
                return self.refuse(404, "not found (this server only serves the attnlab page and its data folder)")
            kind, what = found
            if kind == "bytes":
                body, ctype = what, TYPES[".json"]
            else:
                try:
                    with open(what, "rb") as f:
                        body = f.read()
                except OSError:
                    return self.refuse(404, "not found")
                ctype = TYPES.get(os.path.splitext(what)[1].lower(), "application/octet-stream")
            self.send_response(200)
            self.headers_common(ctype, len(body))
            if with_body:
                self.wfile.write(body)

        def do_GET(self):
            self.answer(True)

        def do_HEAD(self):
            self.answer(False)

        def do_POST(self):
            self.refuse(405, "method not allowed")

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_POST

        def log_message(self, fmt, *args):
            if not quiet:
                sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The listen backlog: the default 5 made a burst of a page's parallel requests wait for the
    # kernel's SYN retry (seconds) once the queue was full.
    request_queue_size = 128


def main(argv=None):
    ap = argparse.ArgumentParser(description="Serve the attnlab page (and optionally a folder of course data).")
    ap.add_argument(
        "--port", type=int, default=int(os.environ.get("PORT", "8080")), help="port (default 8080, or $PORT)"
    )
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    ap.add_argument(
        "--data", metavar="DIR", help="a folder with wiki.txt and the birth_*.tsv files for the page to offer"
    )
    ap.add_argument("--quiet", action="store_true", help="do not log requests")
    ap.add_argument("--timeout", type=float, default=20, help="close a connection idle this many seconds (default 20)")
    ap.add_argument("--header-timeout", type=float, default=10,
                    help="close a connection whose request line and headers take longer than this in all (default 10)")
    ap.add_argument("--no-isolation", action="store_true",
                    help="do not send Cross-Origin-Embedder-Policy (the page is then not cross-origin isolated: "
                    "its engines copy weights and gradients instead of sharing memory; for tests)")
    args = ap.parse_args(argv)

    if args.data is not None:
        if not os.path.isdir(args.data):
            ap.error(f"--data {args.data}: not a folder; give the folder that holds wiki.txt and the birth_*.tsv files")
        found = [f for f in DATA_FILES if os.path.isfile(os.path.join(args.data, f))]
        if not found:
            ap.error(f"--data {args.data}: none of {', '.join(DATA_FILES)} is in that folder")
    if not os.path.isfile(os.path.join(ROOT, "web", "pkg", "attnlab_bg.wasm")):
        print(
            "warning: web/pkg is not built yet; run scripts/build-web.sh (scripts/serve.sh does it for you)",
            file=sys.stderr,
        )
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {args.host}: anyone who can reach it can load the page"
              + (" and read the data folder" if args.data else ""), file=sys.stderr)

    site = Site(ROOT, args.data)
    try:
        handler = make_handler(
            site, args.quiet, args.host, args.timeout, not args.no_isolation, args.header_timeout
        )
        httpd = Server((args.host, args.port), handler)
    except OSError as e:
        print(
            f"error: cannot listen on {args.host}:{args.port}: {e.strerror}; pick another with --port",
            file=sys.stderr,
        )
        return 1
    print(f"serving attnlab on http://{args.host}:{httpd.server_address[1]}/"
          + (f" with data from {os.path.realpath(args.data)} ({', '.join(found)})" if args.data else ""), flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
