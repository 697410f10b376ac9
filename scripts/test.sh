#!/usr/bin/env bash
# Every test: set up, the native suite (cargo nextest or cargo test, on Vulkan; lavapipe without a GPU), the server's
# tests, the page's modules (no import circle; every engine call an export), then the page in
# headless Chromium (web/test/run.mjs: the kernel checks, demos, training page, engine door, cards,
# models, the page without WebGPU, as a student meets it, split work across engines, ViT, axe-core).
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh

echo "== format: cargo fmt --check (rustfmt.toml), prettier --check on web/ (web/.prettierrc.json)"
cargo fmt --check
(cd web && npx prettier --check --log-level warn '**/*.{js,mjs}')

# cargo-nextest where it is installed (it comes with this project's machines): each test in its own
# process, two at a time across the test binaries, where `cargo test` runs one binary after another
# (their run 397 s against 435-470 s with `cargo test` on 2 cores, TESTING.md); `cargo test` otherwise.
if cargo nextest --version >/dev/null 2>&1; then
  echo "== native tests: cargo nextest run --all-targets"
  t0=$SECONDS
  cargo nextest run --all-targets --no-fail-fast
else
  echo "== native tests: cargo test --all-targets (cargo-nextest is not installed)"
  t0=$SECONDS
  cargo test --all-targets
fi
echo "   (native tests, build included: $((SECONDS - t0)) s)"

echo "== server tests: scripts/test_serve.py"
python3 scripts/test_serve.py

echo "== the page's modules: no import circle (web/test/imports.mjs)"
node web/test/imports.mjs
echo "== the GitHub workflows parse and run scripts that exist (web/test/workflows.mjs)"
node web/test/workflows.mjs

echo "== browser tests"
t0=$SECONDS
scripts/build-web.sh
echo "   (the page's two wasm builds: $((SECONDS - t0)) s)"
echo "== the engine's client (web/engine.js) against the wasm Engine's types (tsc -p web/tsconfig.json)"
(cd web && npx tsc -p tsconfig.json)
echo "== every engine call in web/ names a method of the client (web/test/calls.mjs)"
node web/test/calls.mjs
echo "== the page's engine on Dawn in Node, SwiftShader without a GPU: self-checks, tiny steps, dev questions"
echo "   (web/test/dawn.mjs --quick)"
t0=$SECONDS
node web/test/dawn.mjs --quick
echo "   (the engine on Dawn: $((SECONDS - t0)) s)"
echo "== the static site (scripts/site.sh) under a sub-path, isolated by its service worker, offline"
echo "   (web/test/site.mjs)"
t0=$SECONDS
SITE_SKIP_SETUP=1 node web/test/site.mjs
echo "   (the static site: $((SECONDS - t0)) s)"
# The CLI that `cargo test` built for its tests above (a plain `cargo build` would compile the
# crate again, 2–3 minutes here: the dev-dependencies turn on other features of shared crates).
test -x target/debug/attnlab || { echo "target/debug/attnlab missing: cargo test builds it"; exit 1; }
fixture=$(mktemp -d)
export ATTNLAB_BIN="$PWD/target/debug/attnlab"
web/test/fixture.sh "$fixture"
# The device measurement a WebGPU page makes before its first run (about 50 s on SwiftShader), taken
# once and given to the later WebGPU tests' fresh browsers (web/test/browser.mjs says which).
export ATTNLAB_MEASURED="$fixture/measured"
mkdir -p "$ATTNLAB_MEASURED"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 scripts/serve.py --port "$port" --quiet --data "$fixture/data" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$fixture"' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done
url="http://127.0.0.1:$port/"
# The browser tests (web/test/run.mjs lists them): one shared Chromium, one test at a time (two
# at once did not pay on 2 cores); each test's seconds printed, the first failure named with its output.
t0=$SECONDS
ATTNLAB_FIXTURE="$fixture" node web/test/run.mjs "$url"
echo "   (the page in Chromium: $((SECONDS - t0)) s)"
echo "== all tests passed"
