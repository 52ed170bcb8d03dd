#!/usr/bin/env bash
# Installs what building and testing fbcount needs on Debian 12 (as root, or
# through sudo). Packages already present are left alone.
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc binutils python3
      libvulkan-dev glslang-tools mesa-vulkan-drivers
      libunwind-dev uthash-dev libcriterion-dev libjansson-dev libdw-dev libelf-dev
      clang libclang-rt-14-dev)  # clang and its libFuzzer runtime: the dump reader's fuzz test
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
