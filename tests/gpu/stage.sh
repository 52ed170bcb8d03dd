#!/bin/sh
# Stages libvkt's test suites for the GPU machine under .gpu/t (git-ignored, see
# shared/gpu/README.md): the test binaries in their build-tree layout (their
# RUNPATHs are relative), libvkt, libfbcount, and the libraries that machine
# lacks (Criterion and what it links). Then, on the device, with .gpu carried:
#   bash tests/gpu/run.sh
# DEST_REPO stages into another checkout's .gpu, when the GPU machine's copy of
# the repository is taken from that one (default: this checkout).
# usage: tests/gpu/stage.sh [BUILD_DIR] [DEST_REPO]
set -eu
build=${1:-build}
root=$(git rev-parse --show-toplevel)
g=${2:-$root}/.gpu
cd "$root"
[ -x "$build/tests/vkt/test_vkt_elementwise" ] || { echo "stage: build $build first (ninja -C $build)" >&2; exit 2; }
rm -rf "$g/t" "$g/tlib"
mkdir -p "$g/t/backend" "$g/t/interpose" "$g/t/tests/vkt" "$g/t/tests/lenet" "$g/tlib"
[ -d "$g/loader" ] || cp -r ../shared/gpu/loader "$g/"
[ -d "$g/extra" ] || cp -r ../shared/gpu/extra "$g/"
cp -L "$build/backend/libvkt.so.0" "$g/t/backend/"
cp -L "$build/interpose/libfbcount.so" "$g/t/interpose/"
for f in "$build"/tests/vkt/test_vkt_* "$build/tests/vkt/libvkt_interposer.so"; do
    [ -f "$f" ] && cp "$f" "$g/t/tests/vkt/"
done
cp "$build/tests/lenet/test_lenet" "$g/t/tests/lenet/"
# Everything they link but glibc, the Vulkan loader (.gpu/loader has it) and
# libraries whose newer versions that machine has (zlib, xz, bzip2, resolv).
ldd "$build/tests/vkt/test_vkt_elementwise" "$build/tests/lenet/test_lenet" | awk '/=>/ {print $3}' | sort -u |
while read -r lib; do
    case $(basename "$lib") in
    libc.so* | libm.so* | libpthread* | libdl* | libresolv* | libz.so* | liblzma* | libbz2* | libvulkan* | libvkt* | libfbcount*) ;;
    *) cp -L "$lib" "$g/tlib/" ;;
    esac
done
{ git log --oneline -1; git status --short; } > "$g/t/TREE"
echo "stage: $(ls "$g/t/tests/vkt" | wc -l) vkt files, lenet, $(ls "$g/tlib" | wc -l) libraries under $g"
