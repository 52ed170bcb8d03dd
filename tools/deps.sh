#!/usr/bin/env bash
# Installs what fbcount needs on Debian 12 (as root, or through sudo), from the package lists
# in tools/deps/: every list for building and running, and with --test the test-*.txt lists
# too. Packages already present are left alone.
set -euo pipefail
here="$(dirname "$0")/deps"
lists=()
for f in "$here"/*.txt; do
  case "$(basename "$f")" in
    test-*) [ "${1:-}" = "--test" ] && lists+=("$f") ;;
    *) lists+=("$f") ;;
  esac
done
mapfile -t pkgs < <(sed 's/#.*//' "${lists[@]}" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
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
