#!/bin/sh
# Stages what the GPU machine runs under a repository's .gpu/ (git-ignored),
# as shared/gpu/README.md describes: the loader packages; vkt-bench, libvkt
# and the one library that machine may lack (jansson) under .gpu/bench;
# vkt-lenet in its build-tree layout under .gpu/lbuild; and the scripts that
# run there (with what they import) under .gpu/src, so they run as staged
# whatever checkout DEST_REPO (default: this one) holds. Then, with `.gpu`
# carried, from the root:
#   bash .gpu/src/tools/bench/vkt/gpu_sweep.sh; bash .gpu/src/tools/bench/lenet/gpu_lenet.sh
# usage: tools/bench/vkt/gpu_prepare.sh [BUILD_DIR] [DEST_REPO]
set -eu
build=${1:-build-bench}
root=$(git rev-parse --show-toplevel)
dest=${2:-$root}
cd "$root"
[ -x "$build/tools/bench/vkt/vkt-bench" ] || { echo "gpu_prepare: build $build first (ninja -C $build)" >&2; exit 2; }
g=$dest/.gpu
rm -rf "$g/bench" "$g/lbuild" "$g/src"
mkdir -p "$g/bench" "$g/lbuild/tools/lenet" "$g/lbuild/backend" "$g/src"
[ -d "$g/loader" ] || cp -r ../shared/gpu/loader "$g/"
[ -d "$g/extra" ] || cp -r ../shared/gpu/extra "$g/"
cp "$build/tools/bench/vkt/vkt-bench" "$g/bench/"
cp -L "$build/backend/libvkt.so.0" "$g/bench/"
jansson=$(ldd "$build/tools/bench/vkt/vkt-bench" | awk '/libjansson/ {print $3}')
cp -L "$jansson" "$g/bench/"
cp "$build/tools/lenet/vkt-lenet" "$g/lbuild/tools/lenet/"
cp -L "$build/backend/libvkt.so.0" "$g/lbuild/backend/"
for f in tests/gpu/run.sh tests/gpu/device-env.sh tools/bench/vkt/gpu_sweep.sh tools/bench/vkt/torch_anchor.py \
         tools/bench/vkt/ratio.py tools/bench/lenet/gpu_lenet.sh tools/bench/lenet/bench_lenet.py \
         tools/bench/lenet/torch_lenet.py tools/bench/results/results.py; do
    mkdir -p "$g/src/$(dirname "$f")"
    cp "$f" "$g/src/$f"
done
{ git log --oneline -1; git status --short; } > "$g/bench/TREE"
echo "gpu_prepare: staged $(ls "$g/bench" | tr '\n' ' ')and vkt-lenet, scripts under $g"
