#!/usr/bin/env bash
# Write the page as a self-contained static site to OUT, for any static host (GitHub Pages, a
# folder on a USB stick served by `python3 -m http.server`, a sub-path like /attnlab/):
#   scripts/site.sh OUT
# It builds what is missing first (the two wasm builds, KaTeX from web/package-lock.json), then
# copies index.html, the page's JS and CSS, both wasm builds, the shipped models, KaTeX's module,
# stylesheet and fonts, the web app manifest and icons, and the service worker (web/sw.js, at the
# site's root as sw.js, with every file's SHA-256 and the build's version written into it). Every
# URL is relative and nothing is fetched from another origin. OUT is replaced whole, and only when
# the new site is complete; a folder that is not an earlier site is refused, never overwritten.
set -euo pipefail
usage() { echo "usage: scripts/site.sh OUT   (OUT: a new folder, or a site this script wrote before)" >&2; exit 2; }
[ $# -eq 1 ] && [ -n "$1" ] || usage
case "$1" in -h|--help) usage ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "$1")"
case "$out/" in
  "$root/"|"$root/web/"*|"$root/src/"*|"$root/scripts/"*|/)
    echo "site.sh: $out is inside the sources; pick a folder of its own (e.g. /tmp/attnlab-site)" >&2; exit 2 ;;
esac
if [ -e "$out" ] && { [ ! -d "$out" ] || { [ -n "$(ls -A "$out")" ] && [ ! -f "$out/web/site.json" ]; }; }; then
  echo "site.sh: $out exists and is not a site this script wrote (no web/site.json);" \
    "remove it or pick another folder" >&2
  exit 2
fi
cd "$root"

# Build what is missing: the toolchain and KaTeX (setup.sh checks first and is cheap when all is
# there), then the two wasm builds (build-web.sh does nothing when they are up to date).
if [ "${SITE_SKIP_SETUP:-}" != 1 ]; then scripts/setup.sh >&2; fi
source scripts/env.sh
scripts/build-web.sh >&2
katex=web/node_modules/katex/dist
[ -f "$katex/katex.mjs" ] || { echo "site.sh: $katex/katex.mjs is missing (cd web && npm ci)" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
tmp="$(mktemp -d "$(dirname "$out")/.site.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
put() { mkdir -p "$tmp/$(dirname "$2")"; cp "$1" "$tmp/$2"; }

put index.html index.html
# The page learns it is a site build (and registers its service worker) from this tag; served by
# scripts/serve.py it has none and asks for nothing.
sed -i 's|<meta charset="utf-8">|<meta charset="utf-8">\n  <meta name="attnlab-site" content="static">|' \
  "$tmp/index.html"
grep -q 'name="attnlab-site"' "$tmp/index.html" || { echo "site.sh: index.html has lost its charset tag" >&2; exit 1; }
for f in web/*.js web/*.css web/page/*.js web/demos/*.js web/vit/*.js web/models/*; do
  case "$f" in web/sw.js) continue ;; esac
  put "$f" "$f"
done
for build in pkg pkg-relaxed; do
  for f in attnlab.js attnlab_bg.wasm; do put "web/$build/$f" "web/$build/$f"; done
done
put "$katex/katex.mjs" web/vendor/katex/katex.mjs
put "$katex/katex.min.css" web/vendor/katex/katex.min.css
for f in "$katex"/fonts/*.woff2; do put "$f" "web/vendor/katex/fonts/$(basename "$f")"; done
put web/manifest.webmanifest web/manifest.webmanifest
for f in web/icons/*; do put "$f" "$f"; done

# The files the page needs for its first answer are cached when the worker installs; the rest
# (the other wasm build, the models asked for later) when the page first uses them.
optional=(web/pkg/attnlab_bg.wasm web/pkg-relaxed/attnlab_bg.wasm web/models/course-vanilla.safetensors
          web/models/builtin-synthesizer.safetensors web/models/builtin-nopretrain.safetensors
          web/models/vit-digits.safetensors)
python3 scripts/site_manifest.py "$tmp" web/sw.js "${optional[@]}"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "wrote the site to $out (serve it with: cd $out && python3 -m http.server)"
