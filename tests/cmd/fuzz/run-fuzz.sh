#!/bin/sh
# Fuzz the dump reader, the allow-file parser or the backend descriptor parser for a bounded
# time.   run-fuzz.sh SECONDS [FUZZER | dump | allow | backend]
# FUZZER: run that libFuzzer binary (its target is told by its name: fuzz-dump, fuzz-allow or
# fuzz-backend); dump, allow or backend (default dump): build that target with clang in a temp
# dir first. Seeds are the hand-made dumps in tests/cmd/data and the inputs it once failed on
# (seeds/), a few allow files, or the built-in descriptors; new corpus entries go to a temp
# dir, crashes (if any) to ./fuzz-artifacts/.
set -eu
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fuzzer=${2:-dump}
target=$fuzzer
case "$fuzzer" in
    dump|allow|backend) ;;
    *allow*) target=allow ;;
    *backend*) target=backend ;;
    *) target=dump ;;
esac
src=$top/tools/fbcount
rules=$top/rules
flags="-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
if [ "$fuzzer" = dump ]; then
    fuzzer=$work/fuzz-dump
    # The reader, merger and renderers: the files tools/fbcount/meson.build builds them from,
    # and the backend rows compiled in as rules/meson.build does.
    core=$(sed "s|^|$src/|" "$src/core-sources.txt")
    python3 "$rules/backends/embed.py" "$work/backends.h" "$rules"/backends/*.backend
    # shellcheck disable=SC2086
    clang $flags -I"$src/census" -I"$src/render" -I"$src/base" -I"$rules" -I"$work" \
        "$here/fuzz_dump.c" $core "$rules/readfile.c" \
        "$rules/signals.c" "$rules/attrib.c" "$rules/backend.c" "$rules/contract.c" \
        "$rules/units.c" "$rules/grow.c" \
        $(pkg-config --cflags --libs jansson) -lstdc++ -lm -o "$fuzzer"
elif [ "$fuzzer" = allow ]; then
    fuzzer=$work/fuzz-allow
    clang $flags -I"$rules" "$here/fuzz_allow.c" "$rules/allow.c" "$rules/opname.c" "$rules/readfile.c" \
        -o "$fuzzer"
elif [ "$fuzzer" = backend ]; then
    fuzzer=$work/fuzz-backend
    python3 "$rules/backends/embed.py" "$work/backends.h" "$rules"/backends/*.backend
    clang $flags -I"$rules" -I"$work" "$here/fuzz_backend.c" "$rules/backend.c" "$rules/attrib.c" \
        -o "$fuzzer"
fi
mkdir -p "$work/corpus" "$work/seeds" fuzz-artifacts
if [ "$target" = dump ]; then
    find "$top/tests/cmd/data" -name '*.json' -exec cp {} "$work/seeds/" \;
    cp "$here"/seeds/dump-* "$work/seeds/"
    max=65536
elif [ "$target" = backend ]; then
    cp "$rules"/backends/*.backend "$work/seeds/"
    printf 'libmy.so:my_exit:op=my_\n' >"$work/seeds/spec"
    max=16384
else
    printf '# expected\nvkt_dot   # no f32 dot for odd shapes yet\nvkt_conv # 5-D\n' >"$work/seeds/a"
    printf 'vkt_sort\r\n  vkt_pow\t# why\n\n#\nvkt_sort # twice\n' >"$work/seeds/b"
    printf 'two words # bad\n' >"$work/seeds/c"
    max=8192
fi
# Not exec: the trap removes the work folder once the fuzzer is done.
status=0
"$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=$max -timeout=10 \
    -artifact_prefix=fuzz-artifacts/ -print_final_stats=1 "$work/corpus" "$work/seeds" || status=$?
exit "$status"
