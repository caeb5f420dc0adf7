#!/usr/bin/env bash
# Quick start, command 2: installs what is missing, builds with tests and runs the whole suite.
# SANITIZE=1 builds Debug (at -O1, see CMakeLists.txt) with AddressSanitizer +
# UndefinedBehaviorSanitizer in build-asan/, with clang++ when it is there (unless CXX says
# otherwise): it compiles this Debug build about 2.8x faster than g++ (a heavy test file: 22 s
# against 62 s), which keeps CI closer to its time budget.
# With clang the same build also makes the libFuzzer targets (build-asan/bin/fuzz_*, run by .ci/run),
# so CI compiles the library once for the tests and the fuzzers.
# Both builds are unity builds (CMAKE_UNITY_BUILD: CMake compiles the sources of each target in
# batches of up to 8 per compiler run), which saves a quarter to a half of the compile time of a
# build file by file (.ci/run has the figures); sources with flags of their own compile alone, and
# so do files that define the same file-local names (the SKIP_UNITY_BUILD_INCLUSION lists in
# CMakeLists.txt, tests/ and apps/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${SANITIZE:-0}" = 1 ]; then
  export BUILD_DIR="${BUILD_DIR:-$root/build-asan}" BUILD_TYPE=Debug
  if [ -z "${CXX:-}" ] && command -v clang++ > /dev/null; then export CXX=clang++; fi
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  fuzzers=OFF
  case "$(basename "${CXX:-c++}")" in *clang*) fuzzers=ON ;; esac
  "$root/scripts/build.sh" -DIMPULSE_BUILD_TESTS=ON -DIMPULSE_SANITIZE=ON -DIMPULSE_BUILD_PYTHON=OFF \
    -DIMPULSE_BUILD_SHARED=OFF -DIMPULSE_BUILD_FUZZERS="$fuzzers" -DCMAKE_UNITY_BUILD=ON
else
  export BUILD_DIR="${BUILD_DIR:-$root/build}"
  "$root/scripts/build.sh" -DIMPULSE_BUILD_TESTS=ON -DIMPULSE_SANITIZE=OFF -DIMPULSE_BUILD_PYTHON=ON \
    -DCMAKE_UNITY_BUILD=ON
fi
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-2}"

# the Python package (build tree) with pytest: API, envs, and the 2-rank MPI training run.
# Not under the sanitizers (an ASan runtime cannot be loaded into a plain python3).
if [ "${SANITIZE:-0}" != 1 ] && [ -d "$BUILD_DIR/python/impulse" ]; then
  echo "== pytest (python/tests) =="
  PYTHONPATH="$BUILD_DIR/python" /usr/bin/python3 -m pytest -q "$root/python/tests"
fi
