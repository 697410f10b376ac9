#!/usr/bin/env bash
# Build the page's wasm module: release wasm32 build, then wasm-bindgen's ES-module glue into web/pkg/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --target wasm32-unknown-unknown --lib
wasm-bindgen --target web --out-dir web/pkg target/wasm32-unknown-unknown/release/attnlab.wasm
echo "built web/pkg/ ($(du -h web/pkg/attnlab_bg.wasm | cut -f1) of wasm)"
