#!/usr/bin/env bash
# Build llama.cpp's own server (`llama-server`) and `llama-bench` from the sources vendored in
# the pinned llama-cpp-python, as llama.cpp's users build them: its defaults, GGML_NATIVE=ON
# (-march=native: every instruction this CPU has). The peer the benchmarks measure pedit
# against (pedit/bench/servers.py, scripts/measure_server_peers.py, scripts/measure_pass_sizes.py
# --llama-bench). Beside the binaries, `instructions.txt` names the instruction sets the
# compiler's -march=native enabled (what this build runs).
#   bash scripts/build_llama_server.sh      # -> ~/.cache/pedit/llama-server/{llama-server,llama-bench}
set -euo pipefail
version=$(sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
out="${XDG_CACHE_HOME:-$HOME/.cache}/pedit/llama-server"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download "llama-cpp-python==$version" --no-binary :all: --no-deps -d "$work" -q
tar xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
# llama.cpp's defaults, but no libcurl (no model downloads here), tests or examples.
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF > "$work/cmake.log"
cmake --build "$work/build" --target llama-server llama-bench -j "$(nproc)" > "$work/build.log"
mkdir -p "$out"
cp "$work/build/bin/llama-server" "$work/build/bin/llama-bench" "$out/"
python3 "$(dirname "$0")/../pedit/models/nativebuild.py" isa native > "$out/instructions.txt"
echo "$out/llama-server, $out/llama-bench (llama.cpp from llama-cpp-python $version, native: $(cat "$out/instructions.txt"))"
