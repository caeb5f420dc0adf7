#!/usr/bin/env bash
# Configures and builds Impulse. Environment: BUILD_DIR (default build), BUILD_TYPE (Release),
# JOBS (2), and any extra CMake arguments as script arguments.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
build_type="${BUILD_TYPE:-Release}"
jobs="${JOBS:-2}"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "$@"
cmake --build "$build_dir" -j "$jobs"
