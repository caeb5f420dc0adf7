#!/usr/bin/env bash
# Quick start, command 1: installs what is missing, builds Release and runs the ANYmal demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$root/build}" "$root/scripts/build.sh" -DIMPULSE_BUILD_TESTS=OFF
bin="${BUILD_DIR:-$root/build}/bin"
"$bin/impulse" inspect "$root/models/anymal/anymal.urdf"
echo
"$bin/impulse" bench dynamics --model "$root/models/anymal/anymal.urdf"
