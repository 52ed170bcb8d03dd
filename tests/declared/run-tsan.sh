#!/bin/sh
# Declared exits under ThreadSanitizer: builds libfbcount (its entries.S included), the odd
# libraries and the app with -fsanitize=thread in a temporary directory, and runs the app's
# threads mode (8 threads calling a declared exit while a module is loaded and unloaded 200
# times, each load redirected through the dlopen and dlsym entries) under FBCOUNT_EXIT, then
# test-redirect's writes and restores under 8 threads. A separate build because sanitizers
# are chosen per build.   usage: run-tsan.sh CC CXX BACKENDS_H
set -eu
cc=$1 cxx=$2
rows=$(dirname "$3")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-D_GNU_SOURCE -O1 -g -fsanitize=thread -fno-omit-frame-pointer -fno-optimize-sibling-calls"
inc="-I$top/interpose -I$top/interpose/hooks -I$top/interpose/readers -I$top/interpose/triggers \
 -I$top/interpose/dump -I$top/interpose/record -I$top/interpose/redirect -I$top/interpose/base \
 -I$top/interpose/adapters -I$top/rules -I$rows"
# shellcheck disable=SC2086
$cc -std=c11 $flags -fPIC -shared -fvisibility=hidden -DFBC_NO_SIGACTION_WRAPPER -DFBC_NO_THREAD_WRAPPER \
    -DFBC_NO_LOADER_EXPORTS $inc \
    "$top"/interpose/*/*.c "$top"/interpose/hooks/entries.S "$top"/rules/*.c \
    $(pkg-config --cflags --libs libunwind libdw) -ldl -lpthread -lm -o "$work/libfbcount.so"
# shellcheck disable=SC2086
$cc -std=c11 $flags -fPIC -shared "$here/odd.c" -o "$work/liboddlib.so"
# shellcheck disable=SC2086
$cxx -std=c++17 $flags -fPIC -shared "$here/oddthrow.cc" -o "$work/liboddthrow.so"
# shellcheck disable=SC2086
$cc -std=c11 $flags -fPIC -shared "$here/caller.c" -L"$work" -loddlib -Wl,-z,lazy -o "$work/libcaller.so"
# shellcheck disable=SC2086
$cc -std=c11 $flags -fPIC -shared -DCALLER_RUN=caller_run_now "$here/caller.c" -L"$work" \
    -loddlib -Wl,-z,relro,-z,now -o "$work/libcallernow.so"
# The app links the shim itself (TSan's runtime must come first, so no LD_PRELOAD): the
# shim is then not preloaded and redirects the built-in exits and the loader's functions too.
# shellcheck disable=SC2086
$cxx -std=c++17 $flags "$here/app.cc" -L"$work" -lfbcount -loddlib -loddthrow -ldl -lpthread \
    -Wl,-rpath,"$work" -o "$work/app"
# shellcheck disable=SC2086
$cc -std=c11 $flags $inc "$here/test_redirect.c" "$top/interpose/redirect/got.c" \
    "$top"/rules/*.c $(pkg-config --cflags --libs libdw) -L"$work" -loddlib -lcallernow -ldl \
    -lpthread -lm -Wl,-rpath,"$work" -o "$work/test-redirect"
mkdir "$work/dumps"
FBCOUNT=1 FBCOUNT_QUIET=1 FBCOUNT_OUTPUT="$work/dumps/d.json" FBCOUNT_EXIT=liboddlib.so:odd_ints \
    TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$here/tsan.supp" "$work/app" threads "$work/libcaller.so" 2000
if ! grep -Eq '"count": ?16600[,}]' "$work/dumps/d.json"; then
  echo "run-tsan: the census did not count 8 x 2000 + 600 calls of odd_ints" >&2
  exit 1
fi
TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$here/tsan.supp" \
    "$work/test-redirect" "$work/libcaller.so"
echo "run-tsan: declared exits and redirection ran clean under ThreadSanitizer"
