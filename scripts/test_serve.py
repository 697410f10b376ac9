#!/usr/bin/env python3
"""Tests for scripts/serve.py: what it serves, what it refuses, which address it binds, which headers it sends.

    python3 scripts/test_serve.py        (run by scripts/test.sh)

Starts the real server in a subprocess on a free port and talks raw HTTP to it (http.client sends the
path exactly as written, so '..' and %2e%2e reach the server un-normalised).
"""

import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE = os.path.join(HERE, "serve.py")
ROOT = os.path.realpath(os.path.join(HERE, ".."))


def start(*args):
    proc = subprocess.Popen(
        [sys.executable, SERVE, "--port", "0", "--quiet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if not line.startswith("serving attnlab on http://"):
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r} {proc.stderr.read()!r}")
    hostport = line.split("http://", 1)[1].split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    return proc, host, int(port)


def get(port, path, method="GET", host="127.0.0.1", host_header=None):
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.putrequest(method, path, skip_host=host_header is not None, skip_accept_encoding=True)
    if host_header is not None:
        c.putheader("Host", host_header)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict(r.getheaders()), body


class ServeTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        os.mkdir(cls.data)
        with open(os.path.join(cls.data, "wiki.txt"), "w") as f:
            f.write("Ada was born in Paris.\n")
        with open(os.path.join(cls.data, "birth_dev.tsv"), "w") as f:
            f.write("Where was Ada born?\tParis\n")
        with open(os.path.join(cls.data, "birth_test_inputs.tsv"), "w") as f:
            f.write("Where was Ada born?\n")
        with open(os.path.join(cls.tmp.name, "secret.txt"), "w") as f:
            f.write("not for the page\n")
        # A symlink inside the data folder that points outside it must not be followed.
        os.symlink(os.path.join(cls.tmp.name, "secret.txt"), os.path.join(cls.data, "birth_test.tsv"))
        cls.plain, cls.plain_host, cls.plain_port = start()
        cls.with_data, _, cls.data_port = start("--data", cls.data)

    @classmethod
    def tearDownClass(cls):
        for p in (cls.plain, cls.with_data):
            p.kill()
            p.wait()
        cls.tmp.cleanup()

    def test_binds_loopback_by_default(self):
        self.assertEqual(self.plain_host, "127.0.0.1")

    def test_serves_the_app(self):
        for path in ("/", "/index.html", "/web/app.js", "/web/style.css"):
            status, headers, body = get(self.plain_port, path)
            self.assertEqual(status, 200, path)
            self.assertTrue(body, path)
        status, headers, _ = get(self.plain_port, "/web/app.js")
        self.assertTrue(headers["Content-Type"].startswith("text/javascript"))
        self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
        # The engine's module worker: a script like any other, under the same policy (a worker's
        # own response sets its CSP, so it may compile the wasm module too).
        status, headers, _ = get(self.plain_port, "/web/engine-worker.js")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/javascript"))
        self.assertIn("'wasm-unsafe-eval'", headers["Content-Security-Policy"])

    def test_cross_origin_isolation_headers(self):
        # Every response, errors included, makes the page cross-origin isolated (its engines
        # share memory); --no-isolation leaves COEP out.
        for path in ("/", "/web/engine-worker.js", "/web/pkg/attnlab_bg.wasm", "/nope"):
            _, headers, _ = get(self.plain_port, path)
            self.assertEqual(headers.get("Cross-Origin-Opener-Policy"), "same-origin", path)
            self.assertEqual(headers.get("Cross-Origin-Embedder-Policy"), "require-corp", path)
        proc, _, port = start("--no-isolation")
        try:
            _, headers, _ = get(port, "/")
            self.assertNotIn("Cross-Origin-Embedder-Policy", headers)
        finally:
            proc.kill()
            proc.wait()

    def test_csp_allows_only_self_and_wasm(self):
        _, headers, _ = get(self.plain_port, "/")
        csp = headers["Content-Security-Policy"]
        directives = dict((d.split(" ", 1) + [""])[:2] for d in (x.strip() for x in csp.split(";")))
        self.assertEqual(directives["default-src"], "'self'")
        self.assertEqual(directives["script-src"], "'self' 'wasm-unsafe-eval'")
        self.assertEqual(directives["connect-src"], "'self'")
        self.assertEqual(directives["worker-src"], "'self'")
        self.assertEqual(directives["object-src"], "'none'")
        self.assertNotIn("http", csp)  # no remote origin anywhere
        self.assertNotIn("unsafe-inline", csp)
        self.assertNotIn("'unsafe-eval'", csp)
        # Errors carry it too.
        _, headers, _ = get(self.plain_port, "/nope")
        self.assertEqual(headers["Content-Security-Policy"], csp)

    def test_refuses_everything_else(self):
        refused = [
            "/Cargo.toml",
            "/src/lib.rs",
            "/README.md",
            "/.git/config",
            "/../Cargo.toml",
            "/web/../Cargo.toml",
            "/web/%2e%2e/Cargo.toml",
            "/web/%2E%2E/%2E%2E/etc/passwd",
            "/web/..%2fCargo.toml",
            "/web/..%5cCargo.toml",
            "/web/node_modules/playwright-core/package.json",
            "/web/test/checks.mjs",
            "/web/./app.js",
            "/web/%00app.js",
            "/web/.hidden",
            "//etc/passwd",
            "/data/wiki.txt",
            "/web/%ff",
        ]
        for path in refused:
            status, _, body = get(self.plain_port, path)
            self.assertEqual(status, 404, f"{path} -> {status} {body[:80]!r}")
            self.assertNotIn(b"[package]", body)

    def test_vendor_katex_only_its_built_files(self):
        # KaTeX (an npm dependency, web/package.json) renders the demos' formulas from this origin.
        for path, ctype in (
            ("/web/vendor/katex/katex.mjs", "text/javascript"),
            ("/web/vendor/katex/katex.min.css", "text/css"),
            ("/web/vendor/katex/fonts/KaTeX_Main-Regular.woff2", "font/woff2"),
        ):
            status, headers, body = get(self.plain_port, path)
            self.assertEqual(status, 200, path)
            self.assertTrue(headers["Content-Type"].startswith(ctype), path)
            self.assertIn("Content-Security-Policy", headers)
        for path in (
            "/web/vendor/katex/README.md",
            "/web/vendor/katex/katex.js",
            "/web/vendor/katex/../package.json",
            "/web/vendor/katex/%2e%2e/%2e%2e/playwright-core/package.json",
            "/web/vendor/katex/fonts/KaTeX_Main-Regular.ttf",
            "/web/vendor/playwright-core/index.mjs",
            "/web/vendor/katex/",
            "/web/node_modules/katex/dist/katex.mjs",
        ):
            status, _, _ = get(self.plain_port, path)
            self.assertEqual(status, 404, path)

    def test_only_get_and_head(self):
        status, headers, _ = get(self.plain_port, "/", method="POST")
        self.assertEqual(status, 405)
        self.assertEqual(headers["Allow"], "GET, HEAD")
        status, _, body = get(self.plain_port, "/", method="HEAD")
        self.assertEqual((status, body), (200, b""))

    def test_every_other_method_is_405_with_allow_and_csp(self):
        # http.server answers methods without a do_ handler with a bare 501; they are ours too.
        for method in ("TRACE", "CONNECT", "PROPFIND", "BREW", "get", "head", "OPTIONS", "DELETE"):
            status, headers, body = get(self.plain_port, "/", method=method)
            self.assertEqual(status, 405, method)
            self.assertEqual(headers.get("Allow"), "GET, HEAD", method)
            self.assertIn("Content-Security-Policy", headers, method)
            self.assertNotIn(b"<html", body.lower(), method)

    def raw(self, request, port=None):
        import socket
        with socket.create_connection(("127.0.0.1", port or self.plain_port), timeout=10) as s:
            s.sendall(request)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        headers = dict(h.split(": ", 1) for h in head[1:] if ": " in h)
        return status, headers

    def test_protocol_errors_carry_the_csp(self):
        host = f"Host: 127.0.0.1:{self.plain_port}\r\n".encode()
        for request, code in (
            (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
            (b"GET / HTTP/1.1\r\n" + host + b"X: " + b"a" * 70000 + b"\r\n\r\n", 431),
            (b"GET / HTTP/1.1 extra\r\n\r\n", 400),
            (b"GET / HTTP/3.0\r\n" + host + b"\r\n", 505),
        ):
            status, headers = self.raw(request)
            self.assertEqual(status, code, request[:40])
            self.assertIn("Content-Security-Policy", headers, code)

    def test_host_must_name_this_server(self):
        p = self.plain_port
        for ok in (f"127.0.0.1:{p}", f"localhost:{p}", f"[::1]:{p}", f"LOCALHOST:{p}"):
            status, _, _ = get(p, "/", host_header=ok)
            self.assertEqual(status, 200, ok)
        for bad in (f"evil.example:{p}", "127.0.0.1:1", "127.0.0.1", f"10.0.0.1:{p}", "", f"localhost.evil:{p}"):
            status, headers, _ = get(p, "/", host_header=bad)
            self.assertEqual(status, 421, bad)
            self.assertIn("Content-Security-Policy", headers, bad)

    def test_an_idle_connection_is_closed(self):
        import socket
        proc, _, port = start("--timeout", "1")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"GET / HTTP/1.1\r\n")  # and never the rest
                t0 = time.monotonic()
                self.assertEqual(s.recv(100), b"")
                self.assertLess(time.monotonic() - t0, 8)
        finally:
            proc.kill()
            proc.wait()

    def test_slow_headers_are_cut_off(self):
        # Slowloris: a header line every 4 s keeps a connection under the 20 s idle --timeout; the
        # 10 s header deadline (from the request's first byte) closes it, with a 408.
        import socket
        with socket.create_connection(("127.0.0.1", self.plain_port), timeout=30) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            t0 = time.monotonic()
            got = b""
            while time.monotonic() - t0 < 16:
                s.settimeout(4)
                try:
                    chunk = s.recv(200)
                except socket.timeout:
                    try:
                        s.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        break
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
            took = time.monotonic() - t0
        self.assertTrue(got.startswith(b"HTTP/1.1 408"), got)
        self.assertLess(took, 14)
        self.assertGreater(took, 8)

    def test_listen_backlog_holds_a_burst(self):
        sys.path.insert(0, HERE)
        try:
            import serve
        finally:
            sys.path.pop(0)
        self.assertGreaterEqual(serve.Server.request_queue_size, 128)

    def test_manifest_without_data(self):
        status, _, body = get(self.plain_port, "/data/manifest.json")
        self.assertEqual((status, json.loads(body)), (200, {"files": []}))

    def test_data_folder(self):
        status, _, body = get(self.data_port, "/data/manifest.json")
        self.assertEqual(status, 200)
        # birth_test.tsv is a symlink out of the folder: never served, so not listed (the page would
        # offer a file that then 404s).
        self.assertEqual(json.loads(body)["files"], ["wiki.txt", "birth_dev.tsv", "birth_test_inputs.tsv"])
        # The course's test questions come without answers, as birth_test_inputs.tsv.
        status, _, body = get(self.data_port, "/data/birth_test_inputs.tsv")
        self.assertEqual((status, body), (200, b"Where was Ada born?\n"))
        status, headers, body = get(self.data_port, "/data/wiki.txt")
        self.assertEqual((status, body), (200, b"Ada was born in Paris.\n"))
        status, _, body = get(self.data_port, "/data/birth_dev.tsv")
        self.assertEqual(status, 200)
        for path in ("/data/birth_test.tsv", "/data/../secret.txt", "/data/%2e%2e/secret.txt",
                     "/data/secret.txt", "/data/birth_places_train.tsv", "/data/", "/data/x/wiki.txt"):
            status, _, body = get(self.data_port, path)
            self.assertEqual(status, 404, path)
            self.assertNotIn(b"not for the page", body)

    def test_bad_data_folder_is_an_error(self):
        r = subprocess.run([sys.executable, SERVE, "--port", "0", "--data", os.path.join(self.tmp.name, "missing")],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not a folder", r.stderr)
        empty = tempfile.mkdtemp(dir=self.tmp.name)
        r = subprocess.run([sys.executable, SERVE, "--port", "0", "--data", empty],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("none of wiki.txt", r.stderr)

    def test_port_in_use_is_an_error(self):
        r = subprocess.run([sys.executable, SERVE, "--port", str(self.plain_port)],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot listen", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
