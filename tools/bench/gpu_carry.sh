#!/usr/bin/env bash
# Gathers what the decode benchmark needs on the GPU machine into one folder the device tool
# carries (it sends only the session's checkout: name this folder, under it and ignored, in
# `carry`): the loader and extra packages of ../shared/gpu, the pinned ggml and llama.cpp
# libraries (the base, Vulkan and two CPU variants), this build's fbcount, shim and
# llama-driver, the libraries fbcount links that the machine lacks, and the scripts. (The
# torch cases and benchmark go there with tests/device/backends.sh.)
#   usage: tools/bench/gpu_carry.sh DEST [BUILD]
# Then, there: cd DEST && the command of tools/bench/decode/RESULTS.md.
set -euo pipefail
dest=$1
build=${2:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
bins=$(bash "$here/tools/deps/ggml.sh" "$build/tests/ggml/ggml")
rm -rf "$dest"
mkdir -p "$dest"/{bins,lib,build/tools/fbcount,build/interpose,tools/bench/decode,tools/bench/results,tests/llama}
cp -r "$here/../shared/gpu/loader" "$here/../shared/gpu/extra" "$dest/"
for f in libggml-base.so libggml.vulkan.v0.5.0.so libllama.vulkan.v0.5.0.so libggml-vulkan.so \
         libggml-cpu-x64.so libggml-cpu-haswell.so libggml-cpu-icelake.so; do
  cp "$bins/$f" "$dest/bins/"
done
cp "$build/tools/fbcount/fbcount" "$dest/build/tools/fbcount/"
cp "$build/interpose/libfbcount.so" "$dest/build/interpose/"
cp "$build/tests/llama/llama-driver" "$dest/build/"
cp /usr/lib/x86_64-linux-gnu/libjansson.so.4* /usr/lib/x86_64-linux-gnu/libprotobuf-c.so.1* "$dest/lib/"
cp "$here/tools/bench/decode/bench_decode.py" "$dest/tools/bench/decode/"
cp "$here/tools/bench/results/results.py" "$dest/tools/bench/results/"
cp "$here/tests/llama/make_gguf.py" "$dest/tests/llama/"
du -sh "$dest"
