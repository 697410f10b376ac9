#!/usr/bin/env bash
# Build the page's wasm module twice: release wasm32 builds, then wasm-bindgen's ES-module glue:
# web/pkg/ with SIMD128 (every WebAssembly-SIMD browser), web/pkg-relaxed/ with relaxed SIMD too
# (its fused multiply-add in the CPU backend's matmul; web/engine-worker.js picks the build).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --target wasm32-unknown-unknown --lib
wasm-bindgen --target web --out-dir web/pkg target/wasm32-unknown-unknown/release/attnlab.wasm
echo "built web/pkg/ ($(du -h web/pkg/attnlab_bg.wasm | cut -f1) of wasm)"
# Its own target folder, so the two builds do not rebuild each other's dependencies.
RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" \
  cargo build --release --target wasm32-unknown-unknown --lib --target-dir target/relaxed
wasm-bindgen --target web --out-dir web/pkg-relaxed target/relaxed/wasm32-unknown-unknown/release/attnlab.wasm
echo "built web/pkg-relaxed/ ($(du -h web/pkg-relaxed/attnlab_bg.wasm | cut -f1) of wasm)"
