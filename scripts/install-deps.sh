#!/usr/bin/env bash
# Installs the Debian packages Impulse needs, only those that are missing (sudo when not root).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config
          libeigen3-dev libfcl-dev liburdfdom-dev libtinyxml2-dev
          catch2 libcli11-dev nlohmann-json3-dev libassimp-dev libsdformat-dev libqhull-dev
          python3-dev python3-venv pybind11-dev python3-numpy python3-pytest python3-setuptools
          python3-torch libopenblas0-pthread python3-mpi4py openmpi-bin libopenmpi-dev
          libcpp-httplib-dev esbuild chromium ffmpeg python3-matplotlib
          clang)  # clang: libFuzzer targets (tests/fuzz, IMPULSE_BUILD_FUZZERS)
# the viewer's page is bundled from npm packages (viewer/package-lock.json): node and npm, unless
# some node (e.g. NodeSource's, which bundles npm) is already there
if ! command -v node > /dev/null; then packages+=(nodejs); fi
if ! command -v npm > /dev/null; then packages+=(npm); fi
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
