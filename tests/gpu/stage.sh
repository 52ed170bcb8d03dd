#!/bin/sh
# Stages libvkt's test suites for the GPU machine under .gpu/t (git-ignored, see
# shared/gpu/README.md): the test binaries in their build-tree layout (their
# RUNPATHs are relative), libvkt, libfbcount, and the libraries that machine
# lacks (Criterion and what it links). Then, on the device, with .gpu carried:
#   bash tests/gpu/run.sh
# usage: tests/gpu/stage.sh [BUILD_DIR]
set -eu
build=${1:-build}
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -x "$build/tests/vkt/test_vkt_elementwise" ] || { echo "stage: build $build first (ninja -C $build)" >&2; exit 2; }
rm -rf .gpu/t .gpu/tlib
mkdir -p .gpu/t/backend .gpu/t/interpose .gpu/t/tests/vkt .gpu/t/tests/lenet .gpu/tlib
[ -d .gpu/loader ] || cp -r ../shared/gpu/loader .gpu/
[ -d .gpu/extra ] || cp -r ../shared/gpu/extra .gpu/
cp -L "$build/backend/libvkt.so.0" .gpu/t/backend/
cp -L "$build/interpose/libfbcount.so" .gpu/t/interpose/
for f in "$build"/tests/vkt/test_vkt_* "$build/tests/vkt/libvkt_interposer.so"; do
    [ -f "$f" ] && cp "$f" .gpu/t/tests/vkt/
done
cp "$build/tests/lenet/test_lenet" .gpu/t/tests/lenet/
# Everything they link but glibc, the Vulkan loader (.gpu/loader has it) and
# libraries whose newer versions that machine has (zlib, xz, bzip2, resolv).
ldd "$build/tests/vkt/test_vkt_elementwise" "$build/tests/lenet/test_lenet" | awk '/=>/ {print $3}' | sort -u |
while read -r lib; do
    case $(basename "$lib") in
    libc.so* | libm.so* | libpthread* | libdl* | libresolv* | libz.so* | liblzma* | libbz2* | libvulkan* | libvkt* | libfbcount*) ;;
    *) cp -L "$lib" .gpu/tlib/ ;;
    esac
done
{ git log --oneline -1; git status --short; } > .gpu/t/TREE
echo "stage: $(ls .gpu/t/tests/vkt | wc -l) vkt files, lenet, $(ls .gpu/tlib | wc -l) libraries under .gpu"
