#!/usr/bin/env bash
# The image's build steps where no Docker engine runs (CI here), then a pod's start from what they
# leave. What deploy/docker/Dockerfile does, in its order:
#   1. a regular (non-editable) install of the project (here: its wheel, into a folder of its own);
#   2. the runtime stage's numba settings, read from the Dockerfile itself (NUMBA_CPU_NAME; the
#      cache is a fresh folder standing for NUMBA_CACHE_DIR=/var/cache/bloomspan/numba);
#   3. `bloomspan --version`, then `bloomspan warmup --progress lines`, as the build runs them.
# Then `bloomspan serve` starts from that install and that cache, as the image's CMD does, and the
# script checks what a new pod needs: /readyz answers 200, and the start-up warm-up compiled no
# kernel (`bloomspan_kernel_warmup_compiled_kernels 0.0` in /metrics: every kernel came from the
# build's cache). It prints the seconds from start to ready (the issue's goal is 3 s; a figure,
# not a check: this machine is shared).
#
#   deploy/docker/build_steps.sh UPSTREAM_URL [PORT]
#
# PORT: where serve listens (default: a free one). PYTHON: the interpreter whose site-packages hold
# the dependencies (default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/../.."
upstream="${1:?usage: deploy/docker/build_steps.sh UPSTREAM_URL [PORT]}"
python="${PYTHON:-.venv/bin/python}"
port="${2:-$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
dockerfile=deploy/docker/Dockerfile

cpu_name="$(sed -n 's/^[[:space:]]*NUMBA_CPU_NAME=\([^[:space:]\\]*\).*/\1/p' "$dockerfile" | tail -n 1)"
[ -n "$cpu_name" ] || { echo "build_steps: $dockerfile sets no NUMBA_CPU_NAME" >&2; exit 1; }

work="$(mktemp -d)"
serve_pid=""
finish() {
    if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap finish EXIT

echo "== build step 1: regular install (wheel)"
"$python" -m pip wheel -q --no-deps -w "$work/wheel" .
"$python" -m pip install -q --no-deps --target "$work/site" "$work"/wheel/*.whl
# The console script of that install: the same entry point pyproject declares.
entry='from bloomspan.sidecar.cli.main import main; main()'
bloomspan() { PYTHONPATH="$work/site" "$python" -c "$entry" "$@"; }
export NUMBA_CACHE_DIR="$work/numba-cache" NUMBA_CPU_NAME="$cpu_name"
echo "== build step 2: NUMBA_CPU_NAME=$NUMBA_CPU_NAME, cache $NUMBA_CACHE_DIR"
installed="$(PYTHONPATH="$work/site" "$python" -c 'import bloomspan.engine as e; print(e.__file__)')"
case "$installed" in "$work/site/"*) ;; *) echo "build_steps: bloomspan imports from $installed, not the install" >&2; exit 1 ;; esac

echo "== build step 3: bloomspan --version; bloomspan warmup"
bloomspan --version
bloomspan warmup --progress lines
echo "== cache: $(find "$NUMBA_CACHE_DIR" -name '*.nbi' | wc -l) kernel index files"

echo "== a new pod: bloomspan serve from the install and the build's cache"
t0="$(date +%s%N)"
# A simple command, not the function: a function in the background is a subshell, and $! would
# be its pid, not serve's (stopping it would leave serve running).
PYTHONPATH="$work/site" "$python" -c "$entry" serve --host 127.0.0.1 --port "$port" --upstream-url "$upstream" \
    >"$work/serve.log" 2>&1 &
serve_pid=$!
ready=""
for _ in $(seq 1 600); do
    if ! kill -0 "$serve_pid" 2>/dev/null; then
        echo "build_steps: serve exited before it was ready:" >&2; cat "$work/serve.log" >&2; exit 1
    fi
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; then ready=yes; break; fi
    sleep 0.1
done
[ -n "$ready" ] || { echo "build_steps: serve not ready after 60 s:" >&2; cat "$work/serve.log" >&2; exit 1; }
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
metrics="$(curl -fsS "http://127.0.0.1:$port/metrics")"
compiled="$(printf '%s\n' "$metrics" | sed -n 's/^bloomspan_kernel_warmup_compiled_kernels \(.*\)$/\1/p')"
load="$(printf '%s\n' "$metrics" | sed -n 's/^bloomspan_kernel_warmup_seconds \(.*\)$/\1/p')"
printf '== serve ready in %d.%03d s from start (kernel load %s s, kernels compiled: %s)\n' $((ms / 1000)) $((ms % 1000)) "$load" "$compiled"
if [ "$compiled" != "0.0" ]; then
    echo "build_steps: serve compiled $compiled kernels at start: the build's warm-up cache did not cover them" >&2
    cat "$work/serve.log" >&2
    exit 1
fi
echo "== build steps OK"
