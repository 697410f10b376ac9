#!/usr/bin/env bash
# Set up, build the wasm module, and serve the page on http://127.0.0.1:8080.
#   scripts/serve.sh [--port P] [--data DIR] [--host H]
# --data DIR offers DIR's wiki.txt and birth_*.tsv in the page; PORT=... also picks the port.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
scripts/build-web.sh
port="${PORT:-8080}"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ "${args[$i]}" == --port ]] && port="${args[$((i + 1))]:-$port}"
  [[ "${args[$i]}" == --port=* ]] && port="${args[$i]#--port=}"
done
cat <<MSG

  attnlab page: http://127.0.0.1:$port/        (kernel checks straight away: http://127.0.0.1:$port/?checks=1)
  Any current browser runs it: without WebGPU everything runs on the CPU backend (Web Workers).
  For the GPU: Chrome/Edge 113+, Firefox 141+ on Windows, Safari 26+; on Linux start Chrome with
  google-chrome --enable-unsafe-webgpu --enable-features=Vulkan
  (Ctrl-C stops the server.)

MSG
exec python3 scripts/serve.py --port "$port" "$@"
