#!/usr/bin/env bash
# Installs what vramplan needs to build and test on Debian 12 (run as root). Idempotent: when
# everything is present it only checks and returns in well under a second.
set -euo pipefail
packages=(g++ cmake ninja-build nlohmann-json3-dev libboost-program-options-dev libeigen3-dev
          googletest libgtest-dev libbenchmark-dev python3-venv python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "tools/setup.sh: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
