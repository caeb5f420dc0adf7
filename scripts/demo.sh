#!/usr/bin/env bash
# Quick start, command 1: installs what is missing, builds Release and runs the ANYmal trot demo
# (20 s simulated, Hwangbo 2018 sec. V; `impulse demo hang|drop|random|table2` are the others).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$root/build}" "$root/scripts/build.sh" -DIMPULSE_BUILD_TESTS=OFF
bin="${BUILD_DIR:-$root/build}/bin"
"$bin/impulse" demo trot --steps 20000
