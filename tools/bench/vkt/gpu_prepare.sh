#!/bin/sh
# Stages a built vkt-bench for the GPU machine under .gpu/ (git-ignored), as
# shared/gpu/README.md describes: the loader packages, libvkt and the one
# library that machine may lack (jansson). Then run gpu_sweep.sh there with
# `.gpu` carried.   usage: tools/bench/vkt/gpu_prepare.sh [BUILD_DIR]
set -eu
build=${1:-build-bench}
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -x "$build/tools/bench/vkt/vkt-bench" ] || { echo "gpu_prepare: build $build first (ninja -C $build)" >&2; exit 2; }
mkdir -p .gpu/bench
[ -d .gpu/loader ] || cp -r ../shared/gpu/loader .gpu/
[ -d .gpu/extra ] || cp -r ../shared/gpu/extra .gpu/
cp "$build/tools/bench/vkt/vkt-bench" .gpu/bench/
cp -L "$build/backend/libvkt.so.0" .gpu/bench/
jansson=$(ldd "$build/tools/bench/vkt/vkt-bench" | awk '/libjansson/ {print $3}')
cp -L "$jansson" .gpu/bench/
{ git log --oneline -1; git status --short; } > .gpu/bench/TREE
echo "gpu_prepare: staged $(ls .gpu/bench | tr '\n' ' ')"
