#!/usr/bin/env bash
# Installs the Debian packages Impulse needs, only those that are missing (sudo when not root).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config
          libeigen3-dev libfcl-dev liburdfdom-dev libtinyxml2-dev
          catch2 libcli11-dev nlohmann-json3-dev)
# optional, not installed here: libmujoco-dev (impulse_peers, cmake -DIMPULSE_BUILD_PEERS=ON)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
