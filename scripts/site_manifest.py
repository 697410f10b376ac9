#!/usr/bin/env python3
"""Seal a static site folder (scripts/site.sh): hash every file, write web/site.json (the build's
version: a hash of every path and its SHA-256) and the service worker sw.js at the site's root,
made from web/sw.js with the version, every file's hash and the optional files written in.

    scripts/site_manifest.py SITE WORKER_SOURCE [OPTIONAL_PATH ...]

Run again after a file of SITE changed, it gives a new version, so the browsers that kept the old
build replace it once on their next visit."""
import hashlib
import json
import os
import sys

MARKER = "/* SITE */ { version: 'dev', files: {}, optional: [] }"
GENERATED = ("sw.js", "web/site.json")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def seal(site, source, optional):
    hashes = {}
    for d, _, names in os.walk(site):
        for n in names:
            p = os.path.relpath(os.path.join(d, n), site).replace(os.sep, "/")
            if p not in GENERATED:
                hashes[p] = digest(os.path.join(site, p))
    hashes = dict(sorted(hashes.items()))
    missing = [p for p in optional if p not in hashes]
    if missing:
        sys.exit(f"site_manifest.py: optional files missing from {site}: {', '.join(missing)}")
    version = hashlib.sha256("".join(f"{p} {h}\n" for p, h in hashes.items()).encode()).hexdigest()[:12]
    size = sum(os.path.getsize(os.path.join(site, p)) for p in hashes)
    with open(os.path.join(site, "web", "site.json"), "w") as f:
        json.dump({"version": version, "files": len(hashes) + 1, "bytes": size}, f)
        f.write("\n")
    hashes["web/site.json"] = digest(os.path.join(site, "web", "site.json"))
    with open(source) as f:
        worker = f.read()
    if MARKER not in worker:
        sys.exit(f"site_manifest.py: {source} has lost its SITE marker ({MARKER})")
    site_js = json.dumps({"version": version, "files": hashes, "optional": optional}, indent=1)
    with open(os.path.join(site, "sw.js"), "w") as f:
        f.write(worker.replace(MARKER, site_js))
    print(f"site {version}: {len(hashes) + 1} files, {size / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    seal(sys.argv[1], sys.argv[2], sys.argv[3:])
