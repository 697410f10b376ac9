#!/usr/bin/env bash
# Every test: set up, the native suite (cargo test on Vulkan; lavapipe without a GPU), then the
# page's kernel checks in headless Chromium. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh

echo "== native tests: cargo test --all-targets"
cargo test --all-targets

echo "== browser tests"
scripts/build-web.sh
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done
node web/test/checks.mjs "http://127.0.0.1:$port/"
echo "== all tests passed"
