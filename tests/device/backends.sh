#!/usr/bin/env bash
# The backends on the GPU machine (an H200 with PyTorch 2.x and NVIDIA's Vulkan driver; no
# ../shared there, no libdw): PyTorch's CPU fallback with the toy device, the torch adapter and
# the drivers built there against its PyTorch, and ggml's CPU splits on its Vulkan driver.
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
    # The shim with its adapter beside it (fbcount/torch-<id>.so), the programs in bin/.
    local b=/tmp/b
    mkdir -p "$b/fbcount" "$b/bin"
    cp "$g/bin/libfbcount.so" "$b/"
    cp "$g/bin/fbcount" "$g/bin/ggml-driver" "$b/bin/"
    export FBCOUNT_SHIM="$b/libfbcount.so" PYTHONDONTWRITEBYTECODE=1
    python3 - <<'PY' > "$out/versions.txt" 2>&1
import platform, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "host", platform.node())
PY
    cat "$out/versions.txt"
    # PyTorch: the adapter, the toy device and the C++ driver built against this PyTorch.
    local t abi id cxx
    t=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
    abi=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
    id=$(python3 interpose/adapters/buildid.py "$t/lib/libtorch_cpu.so")
    cxx=(g++ -std=c++17 -O1 -g -fPIC "-D_GLIBCXX_USE_CXX11_ABI=$abi" -I"$t/include"
         -I"$t/include/torch/csrc/api/include" -Wno-unused-parameter)
    local start=$SECONDS
    "${cxx[@]}" -shared -Iinterpose/adapters "-DFBCOUNT_TORCH_BUILD_ID=\"$id\"" \
        interpose/adapters/torch.cc -o "$b/fbcount/torch-$id.so" -L"$t/lib" -ltorch_cpu -lc10 \
        > "$out/build-adapter.txt" 2>&1 &
    "${cxx[@]}" -shared -Itests/torch tests/torch/toydev.cc -o "$b/libtoydev.so" \
        -L"$t/lib" -ltorch_cpu -lc10 -Wl,-rpath,"$t/lib" > "$out/build-toydev.txt" 2>&1 &
    wait
    "${cxx[@]}" -Itests/torch -Iinterpose tests/torch/driver.cc -o "$b/torch-driver" \
        -L"$b" -lfbcount -ltoydev -L"$t/lib" -ltorch_cpu -lc10 \
        -Wl,-rpath,"$b:$t/lib" > "$out/build-driver.txt" 2>&1
    echo "torch builds: $((SECONDS - start)) s; adapter torch-$id.so"
    tail -n 3 "$out"/build-*.txt
    export FBCOUNT_TEST_FBCOUNT="$b/bin/fbcount" FBCOUNT_TEST_TORCH_DRIVER="$b/torch-driver" \
        FBCOUNT_TEST_TOYDEV="$b/libtoydev.so" FBCOUNT_LIBRARY="$b/libfbcount.so" \
        PYTHONPATH="$g/python"
    # libvkt's Python package is not built for this Python: the test of both backends stays here.
    python3 -m pytest -q -p no:cacheprovider -p no:fbcount -k "not two_backends" \
        tests/torch/test_torch.py 2>&1 | tee "$out/torch-tests.txt" | tail -15
    (cd /tmp && "$b/bin/fbcount" run -o torch-py -- python3 "$root/tests/torch/model.py" \
        "$b/libtoydev.so" 3 && "$b/bin/fbcount" report --by site torch-py) > "$out/torch-session.txt" 2>&1
    (cd /tmp && "$b/bin/fbcount" run -o torch-cpp -- "$b/torch-driver" 3) > "$out/torch-cpp-session.txt" 2>&1
    cp /tmp/torch-py/*.json "$out/torch-py-dump.json" 2>/dev/null
    # ggml: the same libraries on NVIDIA's Vulkan driver.
    mkdir -p /tmp/ggml && tar -C /tmp/ggml -xJf "$g/ggml.tar.xz"
    export GGML_VK_VISIBLE_DEVICES=0
    python3 tests/ggml/ggml_test.py "$b/bin/fbcount" "$b/bin/ggml-driver" tests/ggml/driver.c \
        tools/deps/ggml.sh /tmp/ggml/ggml 2>&1 | tee "$out/ggml-test.txt" | tail -5
    (cd /tmp && "$b/bin/fbcount" run -o ggml-run -- "$b/bin/ggml-driver" /tmp/ggml/ggml/bins/linux-x64-vulkan 5) \
        > "$out/ggml-session.txt" 2>&1
    cp /tmp/ggml-run/*.json "$out/ggml-dump.json" 2>/dev/null
    tail -n 25 "$out/torch-session.txt" "$out/ggml-session.txt"
}

case "${1:-}" in
stage) shift; stage "$@" ;;
run) run ;;
*) echo "usage: backends.sh stage [BUILD_DIR] | run" >&2; exit 2 ;;
esac
