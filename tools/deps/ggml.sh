#!/usr/bin/env bash
# Fetches ggml as llama.cpp builds it, with its Vulkan backend: the prebuilt libraries of the
# npm package node-llama-cpp ships (pinned; checked against its sha512), for the ggml tests.
# Prints the folder holding libggml-base.so and the backends. Kept in a cache folder, so a
# second call is free.   usage: tools/deps/ggml.sh [DEST]
set -euo pipefail
pkg=@node-llama-cpp/linux-x64-vulkan
version=3.22.1
sha512=6c1c6a53e24e701bb59dbe508f6cdc31c8be241c93d44f046a31ef62877235f5483e41215e1fbf1ccc11d7f053ef13f4f182b4864b3e90cf1f825111d0ff0912
dest=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/fbcount/ggml-$version}
bins="$dest/bins/linux-x64-vulkan"
if [ -f "$bins/libggml-base.so" ]; then
  echo "$bins"
  exit 0
fi
if ! command -v npm >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: npm" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq npm >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
tgz=("$tmp"/*.tgz)
if ! echo "$sha512  ${tgz[0]}" | sha512sum -c --status; then
  echo "ggml.sh: $pkg@$version does not match its pinned sha512" >&2
  exit 1
fi
# Unpacked beside dest and moved into place whole: two tests that fetch into one folder at
# once never see half of it.
mkdir -p "$(dirname "$dest")" "$tmp/unpacked"
tar xzf "${tgz[0]}" -C "$tmp/unpacked" --strip-components=1
mv -T "$tmp/unpacked" "$dest" 2>/dev/null || [ -f "$bins/libggml-base.so" ]
echo "$bins"
