#!/usr/bin/env bash
# other_torch.sh - tests/torch's cases and the torch cost benchmark against a PyTorch other
# than the one the build found (a pip wheel's torch 2.x beside Debian's libtorch 1.13): the
# toy device, the C++ driver and the torch adapter are compiled here against PYTHON's torch
# (its headers, libraries and C++ ABI, from torch.utils.cpp_extension), the adapter put
# beside the shim under the build id of that torch's libtorch_cpu, and the cases run on them.
#   usage: tests/torch/other_torch.sh PYTHON BUILD OUT [BENCH_ROUNDS]   (0: the cases alone)
# BUILD is a build tree holding at least tools/fbcount/fbcount, interpose/libfbcount.so and
# interpose/python (tests/device/backends.sh lays one out on the GPU machine); OUT receives the
# pytest report and the benchmark's rows. pytest comes from PYTHON, or from PYTEST_PATH.
# Exits 0 when every case passed, 1 when one failed, 2 when the pieces do not compile.
set -uo pipefail
py=$1
build=$(cd "$2" && pwd)
out=$3
rounds=${4:-9}
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
work=$build/other-torch
mkdir -p "$work" "$build/interpose/adapters"

read -r version abi libdir < <("$py" -c '
import torch, torch.utils.cpp_extension as e
print(torch.__version__, int(torch._C._GLIBCXX_USE_CXX11_ABI), e.library_paths()[0])')
inc=$("$py" -c 'import torch.utils.cpp_extension as e; print(" ".join("-isystem " + p for p in e.include_paths()))')
id=$("$py" "$top/interpose/adapters/buildid.py" "$libdir/libtorch_cpu.so")
echo "torch $version (C++11 ABI $abi) in $libdir, libtorch_cpu build id $id"
cxx="${CXX:-g++} -std=c++17 -fPIC -g -Wno-unused-parameter -D_GLIBCXX_USE_CXX11_ABI=$abi $inc"
libs="-L$libdir -Wl,-rpath,$libdir -ltorch_cpu -lc10"
# The build's flags: the adapter as meson builds it (libc10 alone; where this torch's headers
# reach more of libtorch_cpu, linked with it, and said so), the toy device and driver at -O1.
adapter="$build/interpose/adapters/torch-$id.so"
{ $cxx -O2 -shared -Wl,-z,defs -o "$adapter" -DFBCOUNT_TORCH_BUILD_ID="\"$id\"" \
    "$top/interpose/adapters/torch.cc" -L"$libdir" -Wl,-rpath,"$libdir" -lc10 ||
  { echo "other_torch: the adapter needs more than libc10 here: linked with libtorch_cpu"
    $cxx -O2 -shared -o "$adapter" -DFBCOUNT_TORCH_BUILD_ID="\"$id\"" \
        "$top/interpose/adapters/torch.cc" $libs; }; } >"$work/build-adapter.log" 2>&1 &
$cxx -O1 -shared -o "$work/libtoydev.so" "$top/tests/torch/toydev.cc" $libs \
    >"$work/build-toydev.log" 2>&1 &
wait
cat "$work/build-adapter.log" "$work/build-toydev.log" >"$out/build.log"
# The driver links libfbcount first, as tests/torch/meson.build does: its cpu_fallback is
# the one the toy device's calls reach.
for variant in torch-driver:"" torch-driver-static-runtime:-static-libstdc++; do
    $cxx -O1 -I"$top/interpose" -o "$work/${variant%%:*}" "$top/tests/torch/driver.cc" \
        -L"$build/interpose" -Wl,-rpath,"$build/interpose" -lfbcount \
        "$work/libtoydev.so" -Wl,-rpath,"$work" $libs ${variant#*:} >>"$out/build.log" 2>&1
done
for f in "$adapter" "$work/libtoydev.so" "$work/torch-driver" "$work/torch-driver-static-runtime"; do
    if [ ! -e "$f" ]; then
        echo "other_torch: $(basename "$f") did not compile against torch $version:"
        tail -n 40 "$out/build.log"
        exit 2
    fi
done

export FBCOUNT_TEST_FBCOUNT=$build/tools/fbcount/fbcount
export FBCOUNT_TEST_TORCH_DRIVER=$work/torch-driver
export FBCOUNT_TEST_TORCH_DRIVER_STATIC=$work/torch-driver-static-runtime
export FBCOUNT_TEST_TOYDEV=$work/libtoydev.so
export FBCOUNT_LIBRARY=$build/interpose/libfbcount.so
export PYTHONPATH=$build/interpose/python${PYTEST_PATH:+:$PYTEST_PATH}
export PYTHONDONTWRITEBYTECODE=1 FBCOUNT_OUTPUT=none FBCOUNT_QUIET=1
# libvkt's Python extension is built for the build's own Python: where PYTHON cannot import
# it, the one case that runs both backends in one process is left out, and said so.
export PYTHONPATH=$PYTHONPATH:$build/backend/python
skip=()
if ! "$py" -c 'import vkt' 2>/dev/null; then
    skip=(--deselect "test_torch.py::test_two_backends_one_census")
    echo "other_torch: $py cannot import vkt (built for another Python): test_two_backends_one_census left out"
fi
status=0
"$py" -m pytest -q -p no:cacheprovider -p no:fbcount.pytest_plugin --rootdir "$top/tests/torch" \
    --basetemp "$work/pytest" "${skip[@]}" "$top/tests/torch/test_torch.py" \
    2>&1 | tee "$out/torch-cases.log" || status=1
unset FBCOUNT_OUTPUT
[ "$rounds" = 0 ] && exit $status # the cases alone
"$py" "$top/tools/bench/torch/bench_torch.py" --shim "$build/interpose/libfbcount.so" \
    --toydev "$work/libtoydev.so" --python "$py" --rounds "$rounds" \
    --device "${BENCH_DEVICE:-$(uname -n)}, torch $version" --json "$out/torch-bench.json" \
    2>&1 | tee "$out/torch-bench.log" || status=1
exit $status
