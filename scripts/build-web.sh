#!/usr/bin/env bash
# Build the page's wasm module twice: release wasm32 builds, then wasm-bindgen's ES-module glue:
# web/pkg/ with SIMD128 (every WebAssembly-SIMD browser), web/pkg-relaxed/ with relaxed SIMD too
# (its fused multiply-add in the CPU backend's matmul; web/engine-worker.js picks the build).
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything the two builds are made from: the sources, the shaders they include, the manifests,
# the toolchain, the flags and this script. When web/pkg*/ were built from exactly that, there is
# nothing to do (the two builds share one output path, so cargo alone would compile the crate twice
# again: see below).
inputs() {
  {
    rustc -V; cargo -V; wasm-bindgen --version; echo "RUSTFLAGS=${RUSTFLAGS:-}"
    find src shaders -type f -print0 | sort -z | xargs -0 sha256sum
    sha256sum Cargo.toml Cargo.lock .cargo/config.toml scripts/build-web.sh
  } | sha256sum | cut -d' ' -f1
}
want="$(inputs)"
stamp=.built-from
if [ "$(cat web/pkg/$stamp 2>/dev/null)" = "$want" ] && [ "$(cat web/pkg-relaxed/$stamp 2>/dev/null)" = "$want" ]; then
  echo "web/pkg/ and web/pkg-relaxed/ are up to date (built from these sources)"
  exit 0
fi
rm -f web/pkg/$stamp web/pkg-relaxed/$stamp

cargo build --release --target wasm32-unknown-unknown --lib
wasm-bindgen --target web --out-dir web/pkg target/wasm32-unknown-unknown/release/attnlab.wasm
echo "built web/pkg/ ($(du -h web/pkg/attnlab_bg.wasm | cut -f1) of wasm)"
# The relaxed-SIMD build: this crate alone compiled again with relaxed SIMD (`cargo rustc` passes
# the flag to it only), linked against the dependencies built above. None of them has relaxed-SIMD
# code switched on (pulp's `relaxed-simd` feature is off), so they are the same code either way,
# and a clean build compiles them once instead of twice. The two builds share one output path, so
# each is bound (wasm-bindgen) before the next replaces it.
cargo rustc --release --target wasm32-unknown-unknown --lib -- -C target-feature=+relaxed-simd
wasm-bindgen --target web --out-dir web/pkg-relaxed target/wasm32-unknown-unknown/release/attnlab.wasm
echo "built web/pkg-relaxed/ ($(du -h web/pkg-relaxed/attnlab_bg.wasm | cut -f1) of wasm)"
echo "$want" >web/pkg/$stamp
echo "$want" >web/pkg-relaxed/$stamp
