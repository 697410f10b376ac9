# Sourced by the other scripts: the paths that setup.sh installs into, and quiet Mesa.
export PATH="$HOME/.cargo/bin:$HOME/.local/share/attnlab/node/bin:$PATH"
# Mesa prints "XDG_RUNTIME_DIR is invalid or not set" on every run without it; harmless, but noisy.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
