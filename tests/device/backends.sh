#!/usr/bin/env bash
# The backends on the GPU machine (an H100 or H200 with PyTorch 2.x and NVIDIA's Vulkan driver;
# no ../shared there, no libdw): PyTorch's CPU fallback with the toy device, the torch adapter
# and the drivers built there against its PyTorch (tests/torch/other_torch.sh: its cases and
# the torch cost benchmark), and ggml's CPU splits on its Vulkan driver.
#   here:  tests/device/backends.sh stage [BUILD_DIR]   copies what the run needs to .gpu-lead/
#   there: bash tests/device/backends.sh run            with .gpu-lead carried; results in $OUT
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
g="$root/.gpu-lead"

stage() {
    local build=${1:-build}
    cd "$root"
    rm -rf "$g" && mkdir -p "$g/bin" "$g/lib"
    cp -r ../shared/gpu/loader ../shared/gpu/extra "$g/"
    cp -L "$build/interpose/libfbcount.so" "$build/tools/fbcount/fbcount" \
        "$build/tests/ggml/ggml-driver" "$g/bin/"
    # The fbcount package with its dist-info (the pytest plugin's entry point).
    cp -rL "$build/interpose/python" "$g/python"
    # This machine's pytest (pure Python) for a Python that has none.
    mkdir -p "$g/pylib"
    for m in pytest _pytest pluggy iniconfig packaging attr py py.py; do
        cp -rL "/usr/lib/python3/dist-packages/$m" "$g/pylib/"
    done
    find "$g" -name __pycache__ -prune -exec rm -rf {} +
    for lib in libjansson.so.4 libprotobuf-c.so.1; do
        cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$g/lib/"
    done
    # ggml as tools/deps/ggml.sh lays it out, with the CPU variants a current x86 needs.
    local bins
    bins=$(bash tools/deps/ggml.sh)
    mkdir -p "$g/ggml/bins/linux-x64-vulkan"
    for f in libggml-base.so libggml-vulkan.so libggml-cpu-x64.so libggml-cpu-haswell.so \
             libggml-cpu-sapphirerapids.so libggml-cpu-zen4.so; do
        cp "$bins/$f" "$g/ggml/bins/linux-x64-vulkan/"
    done
    cp "$bins"/libggml.*.so "$g/ggml/bins/linux-x64-vulkan/"
    tar -C "$g" -cJf "$g/ggml.tar.xz" ggml && rm -rf "$g/ggml"
    { git log --oneline -1; git status --short | head -20; } > "$g/TREE"
    du -sh "$g"
}

run() {
    cd "$root"
    local out=${OUT:-/tmp/out}
    mkdir -p "$out"
    for f in "$g"/loader/*.deb; do dpkg -x "$f" /; done
    ldconfig
    mkdir -p /tmp/gl
    for f in "$g"/extra/*.deb; do dpkg -x "$f" /tmp/gl; done
    export LD_LIBRARY_PATH="/tmp/gl/usr/lib/x86_64-linux-gnu:$g/lib:${LD_LIBRARY_PATH:-}"
    [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
        export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    # A build tree's layout (what tests/torch/other_torch.sh takes): the shim, the command,
    # the fbcount package; the drivers in bin/.
    local b=/tmp/b
    mkdir -p "$b/interpose" "$b/tools/fbcount" "$b/bin"
    cp "$g/bin/libfbcount.so" "$b/interpose/"
    cp "$g/bin/fbcount" "$b/tools/fbcount/"
    cp -r "$g/python" "$b/interpose/python"
    cp "$g/bin/ggml-driver" "$b/bin/"
    export FBCOUNT_SHIM="$b/interpose/libfbcount.so" PYTHONDONTWRITEBYTECODE=1
    python3 - <<'PY' > "$out/versions.txt" 2>&1
import platform, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "host", platform.node())
PY
    cat "$out/versions.txt"
    # PyTorch: the adapter, the toy device and the C++ driver built against this PyTorch, the
    # cases of tests/torch and the torch cost benchmark on them.
    python3 -c 'import pytest' 2>/dev/null || export PYTEST_PATH=$g/pylib
    BENCH_DEVICE="$(uname -n), $(nproc) CPUs" bash tests/torch/other_torch.sh python3 "$b" "$out" \
        "${BENCH_ROUNDS:-7}" 2>&1 | tail -n 30
    local t=$b/other-torch
    (cd /tmp && "$b/tools/fbcount/fbcount" run -o torch-py -- python3 "$root/tests/torch/model.py" \
        "$t/libtoydev.so" 3 && "$b/tools/fbcount/fbcount" report --by site torch-py) \
        > "$out/torch-session.txt" 2>&1
    (cd /tmp && "$b/tools/fbcount/fbcount" run -o torch-cpp -- "$t/torch-driver" 3) \
        > "$out/torch-cpp-session.txt" 2>&1
    cp /tmp/torch-py/*.json "$out/torch-py-dump.json" 2>/dev/null
    # ggml: the same libraries on NVIDIA's Vulkan driver.
    mkdir -p /tmp/ggml && tar -C /tmp/ggml -xJf "$g/ggml.tar.xz"
    export GGML_VK_VISIBLE_DEVICES=0
    python3 tests/ggml/ggml_test.py "$b/tools/fbcount/fbcount" "$b/bin/ggml-driver" tests/ggml/driver.c \
        tools/deps/ggml.sh /tmp/ggml/ggml 2>&1 | tee "$out/ggml-test.txt" | tail -5
    (cd /tmp && "$b/tools/fbcount/fbcount" run -o ggml-run -- "$b/bin/ggml-driver" \
        /tmp/ggml/ggml/bins/linux-x64-vulkan 5) \
        > "$out/ggml-session.txt" 2>&1
    cp /tmp/ggml-run/*.json "$out/ggml-dump.json" 2>/dev/null
    tail -n 25 "$out/torch-session.txt" "$out/ggml-session.txt"
}

case "${1:-}" in
stage) shift; stage "$@" ;;
run) run ;;
*) echo "usage: backends.sh stage [BUILD_DIR] | run" >&2; exit 2 ;;
esac
