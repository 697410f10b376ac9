#!/usr/bin/env bash
# Every test: set up, the native suite (cargo nextest or cargo test, on Vulkan; lavapipe without a GPU), the server's
# tests, the page's modules (no import circle; every engine call an export), then the page in
# headless Chromium, in this order: the kernel checks (WebGPU, and both wasm builds' CPU backend);
# the attention demos and the section 2 demos (WebGPU, then the CPU backend); the training page, the
# engine door and the benchmark card (WebGPU); the Device card's matmul kernel, the course model and
# the shipped synthesizer (both backends); the page without WebGPU; the training page on the CPU backend; the page as a
# student meets it (both); steps in parts and an evaluation split across two engines (CPU backend,
# isolated or not); the ViT card (both); axe-core's accessibility audit (both).
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
echo "== every engine call the page makes is an export (web/test/calls.mjs)"
node web/test/calls.mjs
echo "== the page's engine on Dawn in Node, SwiftShader without a GPU: self-checks, tiny steps, dev questions (web/test/dawn.mjs --quick)"
t0=$SECONDS
node web/test/dawn.mjs --quick
echo "   (the engine on Dawn: $((SECONDS - t0)) s)"
echo "== the static site (scripts/site.sh) under a sub-path, isolated by its service worker, offline (web/test/site.mjs)"
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
# One browser test, web/test/NAME.mjs on the page, with VAR=value settings before its name; `both`
# runs it on WebGPU, then on the CPU backend; `took LABEL` says how long the tests since the last
# `took` ran.
page_test() { env "${@:1:$#-1}" node "web/test/${!#}.mjs" "$url"; }
both() { page_test "$@"; page_test ATTNLAB_BACKEND=cpu "$@"; }
took() { echo "   ($1: $((SECONDS - t0)) s)"; t0=$SECONDS; }
t0=$SECONDS
# The CPU backend's kernels in both wasm builds: relaxed SIMD (Chromium offers it) and SIMD128.
both checks; page_test ATTNLAB_BACKEND=cpu ATTNLAB_QUERY=simd=128 checks; took 'kernel checks'
both demos; took 'demos, WebGPU then the CPU backend'
both ATTNLAB_FIXTURE="$fixture" section2; took 'section 2 demos, WebGPU then the CPU backend'
page_test ATTNLAB_FIXTURE="$fixture" page; took 'page'
page_test engine; took 'the engine door'
page_test bench; took 'benchmark card'
both matmul; took "the Device card's matmul kernel, both backends"
both course; took 'the course model, loaded and asked, WebGPU then the CPU backend'
both synth; took 'the shipped synthesizer, loaded from E9, asked and evaluated, WebGPU then the CPU backend'
page_test nogpu; took 'without WebGPU, CPU backend'
page_test ATTNLAB_BACKEND=cpu ask-view; took 'Ask where the eye is, first visit at 1280 and 390 px (CPU backend)'
page_test ATTNLAB_BACKEND=cpu ATTNLAB_FIXTURE="$fixture" page; took 'the training page again, on the CPU backend'
both student; took 'the page as a student meets it: presets, evaluations, two models; WebGPU then the CPU backend'
page_test ATTNLAB_FIXTURE="$fixture" workers; took 'steps in parts and two engines on the CPU backend, isolated or not'
page_test ATTNLAB_FIXTURE="$fixture" eval-workers; took 'an evaluation split across two engines, isolated or not, and a helper that does not start'
both vit; took 'the ViT card, WebGPU then the CPU backend'
both a11y; took 'accessibility, axe-core at 1280 and 390 px, WebGPU then the CPU backend'
echo "== all tests passed"
