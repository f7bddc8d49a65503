#!/usr/bin/env bash
# Build llama.cpp's own server (`llama-server`) from the sources vendored in the pinned
# llama-cpp-python, for scripts/measure_server_peers.py: the same llama.cpp as pedit's
# backend, with the Makefile's AVX2 flags (not -march=native: see the Makefile).
#   bash scripts/build_llama_server.sh      # -> ~/.cache/pedit/llama-server/llama-server
set -euo pipefail
version=$(sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
out="${XDG_CACHE_HOME:-$HOME/.cache}/pedit/llama-server"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download "llama-cpp-python==$version" --no-binary :all: --no-deps -d "$work" -q
tar xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON \
  -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF > "$work/cmake.log"
cmake --build "$work/build" --target llama-server -j "$(nproc)" > "$work/build.log"
mkdir -p "$out"
cp "$work/build/bin/llama-server" "$out/llama-server"
echo "$out/llama-server (llama.cpp from llama-cpp-python $version)"
