#!/usr/bin/env bash
# BUILD CHECK: compiles rocprof's rocprofiler-sdk backend (cpp/capture/rocprofiler_sdk/: PC
# sampling and the device counting service's GPU metrics) against a rocprofiler-sdk header set,
# strictly (-Wall -Wextra -Werror on its sources), builds rocprof with it into a private build
# folder, runs its C++ tests there, then its end-to-end tests (rocprof run on the test-only
# stand-ins of tests/amd_standin) in a private copy of the checkout holding those libraries. No
# AMD GPU is needed or used. CI here has no rocprofiler-sdk headers, so the default build leaves
# the backend out: this is the check.
#
#   tests/amd_standin/sdk_compile_check.sh INCLUDE_DIR [BUILD_DIR]     (or: make sdk-compile-check
#                                                                      SDK_INCLUDE=INCLUDE_DIR)
# INCLUDE_DIR: a ROCm include folder (/opt/rocm/include on ROCm 6.4+) or one made from the public
# sources by tests/amd_standin/rocprofiler_sdk_headers.sh PREFIX (then PREFIX/include).
set -euo pipefail
inc=${1:?usage: $0 INCLUDE_DIR [BUILD_DIR]}
build=${2:-${TMPDIR:-/tmp}/rocprof-sdk-compile-check}
root=$(cd "$(dirname "$0")/../.." && pwd)
cmake=${CMAKE:-cmake}
python=${PYTHON:-python3}
[ -f "$inc/rocprofiler-sdk/device_counting_service.h" ] ||
  { echo "$0: $inc has no rocprofiler-sdk/device_counting_service.h (rocprofiler-sdk 0.6+)" >&2; exit 2; }
cd "$root"

echo "== strict compile of the backend's sources against $inc"
for f in cpp/capture/rocprofiler_sdk/*.cpp; do
  defs=(-D__HIP_PLATFORM_AMD__ -DROCPROF_SDK_DEVICE_COUNTING=1)
  "${CXX:-c++}" -std=c++17 -fsyntax-only -Wall -Wextra -Werror "${defs[@]}" \
    -I"$inc" -Icpp -Icpp/include "$f"
  echo "ok $f"
done

echo "== build in $build"
"$cmake" -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROCPROF_INPLACE=OFF \
  -DROCPROF_BUILD_TESTS=ON -DROCPROF_ROCPROFILER_SDK_INCLUDE_DIR="$inc" \
  -DPython_EXECUTABLE="$(command -v "$python")" \
  -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" | grep "rocprofiler-sdk" || true
grep -q "^ROCPROF_ROCPROFILER_SDK_DEVICE_COUNTING:INTERNAL=1" "$build/CMakeCache.txt" ||
  { echo "$0: CMake did not compile the device counting service against $inc" >&2; exit 1; }
"$cmake" --build "$build"

echo "== the backend's C++ tests (test-only stand-ins; never run on AMD hardware)"
"$build/cpp/tests/rocprof_core_tests" --gtest_filter='DeviceCounting*:Sdk*'

echo "== end to end on the stand-ins, in a copy of the checkout with these libraries ($build/tree)"
tree="$build/tree"
rm -rf "$tree" && mkdir -p "$tree/python/rocprof/include"
git ls-files -co --exclude-standard | grep -v '^python/rocprof/.*\.so' |
  while IFS= read -r f; do if [ -e "$f" ]; then printf '%s\n' "$f"; fi; done |
  tar -cf - -T - | tar -xf - -C "$tree"
find "$build/cpp" -maxdepth 3 -name '*.so' -exec cp {} "$tree/python/rocprof/" \;
cp cpp/roctx/include/roctx.h "$tree/python/rocprof/include/"
cd "$tree"
PYTHONPATH="$tree/python:$tree" "$python" -m pytest -q -p no:cacheprovider \
  tests/integration/test_amd_gpu_metrics.py tests/integration/test_amd_pc_sampling.py
